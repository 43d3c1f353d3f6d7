"""Benchmark sweeps (trace x job-set x algorithm x seed) on Dask, with a resumable store.

* :mod:`.config`: the TOML form and its validation;
* :mod:`.store`: the results store and its guarantees (no loss, no
  collisions, no silent mixing);
* :mod:`.driver`: one run and the Dask driver.
"""
from .config import RunSpec, SweepConfig, TraceSpec, config_from_dict, load_config
from .driver import run_one, run_sweep
from .store import ROW_FIELDS, StoreError, finished_runs, load_results

__all__ = ["ROW_FIELDS", "RunSpec", "StoreError", "SweepConfig", "TraceSpec", "config_from_dict",
           "finished_runs", "load_config", "load_results", "run_one", "run_sweep"]
