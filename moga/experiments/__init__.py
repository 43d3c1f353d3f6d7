"""Experiments: benchmark sweeps on Dask (:mod:`.sweep`), their report (:mod:`.report`) and GA
parameter tuning with Optuna (:mod:`.tuning`)."""
