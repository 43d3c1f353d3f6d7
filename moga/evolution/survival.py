"""NSGA-II's survival on arrays (pymoo's ``RankAndCrowding``, draw for draw)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pymoo.operators.survival.rank_and_crowding.metrics import get_crowding_function
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting
from pymoo.util.randomized_argsort import randomized_argsort

__all__ = ["Population", "survive"]


@dataclass
class Population:
    """A population as arrays: chromosomes ``X`` (n, n_var), objectives ``F`` (n, m),
    NSGA-II ``rank`` and ``crowding`` (n,), and the chromosomes' row ``hashes`` (n,)."""

    X: np.ndarray
    F: np.ndarray
    rank: np.ndarray
    crowding: np.ndarray
    hashes: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.X)


_NDS = NonDominatedSorting()
_CROWDING = get_crowding_function("cd")


def survive(X, F, n_survive: int, random_state, hashes=None) -> Population:
    """NSGA-II's survival (pymoo's ``RankAndCrowding``) of the rows of ``X``, ``F``.

    Whole fronts are kept in order of rank; the front that does not fit is
    cut by crowding distance, ties broken by ``random_state`` exactly as
    pymoo breaks them. Survivors come in pymoo's order (by front, the cut
    front by decreasing crowding distance). ``hashes`` (of the rows of ``X``)
    go with their rows.
    """
    F = np.asarray(F, dtype=float)
    n_survive = min(int(n_survive), len(F))
    survivors, ranks, crowds = [], [], []
    n_kept = 0
    for k, front in enumerate(_NDS.do(F, n_stop_if_ranked=n_survive)):
        if n_kept + len(front) > n_survive:
            n_remove = n_kept + len(front) - n_survive
            crowding = _CROWDING.do(F[front, :], n_remove=n_remove)
            keep = randomized_argsort(crowding, order="descending", method="numpy",
                                      random_state=random_state)[:-n_remove]
        else:
            crowding = _CROWDING.do(F[front, :], n_remove=0)
            keep = np.arange(len(front))
        survivors.append(front[keep])
        ranks.append(np.full(len(keep), k))
        crowds.append(crowding[keep])
        n_kept += len(keep)
    idx = np.concatenate(survivors)
    return Population(X[idx], F[idx], np.concatenate(ranks), np.concatenate(crowds),
                      None if hashes is None else hashes[idx])
