"""Time one AccaSim simulation (run by bench_baselines.py in a separate environment).

AccaSim is not a dependency of moga: install it in its own virtual environment
(``python3 -m venv acc && acc/bin/pip install accasim``) and pass that
interpreter to ``bench_baselines.py --accasim-python acc/bin/python``.

Usage: python _accasim_runner.py {fifo|easy} WORKLOAD.swf SYSTEM.json RESULTS_DIR
Prints ``seconds <wall time of start_simulation>``.
"""

import collections
import collections.abc
import sys
import time

# AccaSim 1.1 predates Python 3.10, where collections.Mapping moved to collections.abc.
collections.Mapping = collections.abc.Mapping

from accasim.base.allocator_class import FirstFit  # noqa: E402
from accasim.base.scheduler_class import EASYBackfilling, FirstInFirstOut  # noqa: E402
from accasim.base.simulator_class import Simulator  # noqa: E402


def main():
    name, workload, system, results = sys.argv[1:5]
    allocator = FirstFit()
    dispatcher = EASYBackfilling(allocator) if name == "easy" else FirstInFirstOut(allocator)
    sim = Simulator(workload, system, dispatcher, RESULTS_FOLDER_PATH=results,
                    scheduling_output=False, statistics_output=False, show_statistics=False)
    t0 = time.perf_counter()
    sim.start_simulation()
    print("seconds", time.perf_counter() - t0)


if __name__ == "__main__":
    main()
