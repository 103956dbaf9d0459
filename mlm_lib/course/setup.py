"""The setup cell every notebook opens with: seed everything, set the threads and figure size, print the versions.

Threads: PyTorch starts one thread per core it sees, which on a shared machine (a lab's JupyterHub, a
laptop busy with other work) can be slower than fewer. On the course's 2-core machine, idle, 2 threads ran the
course model's training step 1.73x as fast as 1 (`scaling-2core.json`, 2026-11-28; docs/results-part1.md); with
one other busy process, a measurement made while this module was written and not shipped (torch 2.13.0, notebook
05's sizes, median of 15) gave 218 ms a step with 2 threads against 88 ms with 1. So the default here is the
number of CPUs this process may really use (its CPU affinity and its container's CPU quota, which
PyTorch does not read), and a busy machine gets a warning that says to set `threads = 1`. The setting
is not changed behind the learner's back: results computed with another thread count can differ in the
last digits.
"""
from __future__ import annotations

import os
import platform
import random
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import torch

from .checks._common import ParameterError, show_exercise_errors  # noqa: F401 (ParameterError: for the notebooks)


def usable_cpus() -> int:
    """CPUs this process may run on: its affinity, capped by a cgroup v2 CPU quota (containers) if any."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cpus = min(cpus, max(1, int(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return cpus


def _busy_ticks() -> tuple[int, int]:
    """(CPU ticks spent busy by the whole machine, by this process and its children), from Linux's /proc."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    machine = sum(fields) - fields[3] - (fields[4] if len(fields) > 4 else 0)  # all but idle and iowait
    own = [int(x) for x in Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[11:15]]
    return machine, sum(own)


def busy_cpus(interval: float = 0.5) -> float:
    """How many CPUs *other* work keeps busy right now: measured over `interval` seconds from /proc on Linux (the
    machine's busy time less this process's own), else the 1-minute load average (which also counts work that
    has just ended, such as the notebook run before this one)."""
    try:
        start, t0 = _busy_ticks(), time.monotonic()
        time.sleep(interval)
        end, t1 = _busy_ticks(), time.monotonic()
        ticks = os.sysconf("SC_CLK_TCK")
        return max(0.0, ((end[0] - start[0]) - (end[1] - start[1])) / ticks / (t1 - t0))
    except (OSError, ValueError, IndexError, AttributeError):
        try:
            return os.getloadavg()[0]
        except (AttributeError, OSError):
            return 0.0


@contextmanager
def about_parameter(name: str):
    """Inside it, a ValueError (a value the library refuses, with its reason) becomes a ParameterError that names
    the parameters cell's `name`: printed as its message alone, like the checks' hints, for a learner who only
    edited that cell. Notebooks wrap in it the calls that read a parameter."""
    try:
        yield
    except ParameterError:
        raise
    except (ValueError, FileNotFoundError) as err:  # a refused value, or a path with no file behind it
        raise ParameterError(f"{name}, in the parameters cell: {err}") from None


def setup_notebook(seed: int = 0, *, threads: int | None = None, dpi: int = 80, device: str | None = None):
    """Seed Python's and torch's random numbers, set torch's threads (`threads`, or the usable CPUs), make
    figures small enough for a stored notebook, and print what this notebook runs on (versions, threads)
    so a learner can compare with the stored run.

    With `device` (the notebook's parameter: "auto", "cpu", "cuda", "mps"), also resolve it by the course's one
    rule (`mlm_lib.devices`), print where models will train and in what precision, and return the
    `torch.device` for the notebook's cells to move their models to."""
    import mlm_lib
    from mlm_lib.devices import describe, resolve_device

    show_exercise_errors()  # first, so that a bad parameter below is printed as its message alone
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ParameterError(f"threads must be a whole number >= 1 (or None for the usable CPUs), got {threads!r}: "
                             "change it in the parameters cell.")
    try:
        where = None if device is None else resolve_device(device)  # a device this machine lacks: refused by name
    except ValueError as err:
        raise ParameterError(f"{err} (the parameters cell's `device`)") from None
    cpus = usable_cpus()
    torch.set_num_threads(threads or cpus)
    random.seed(seed)
    torch.manual_seed(seed)
    plt.rcParams["figure.dpi"] = dpi
    print(f"Python {platform.python_version()} | torch {torch.__version__} | matplotlib {matplotlib.__version__} "
          f"| mlm_lib {mlm_lib.__version__} | {torch.get_num_threads()} CPU thread{'s' * (torch.get_num_threads() != 1)} ({cpus} usable)")
    if where is not None:
        print(f"models train and evaluate on: {describe(where)}")
    load = busy_cpus()
    if torch.get_num_threads() > 1 and load > 0.5 * cpus:
        warnings.warn(f"This machine is busy (load {load:.1f} on {cpus} CPUs). Training cells can then run several "
                      "times slower with more than one thread: set `threads = 1` in the parameters cell and run "
                      "the notebook again. The time estimates assume an idle machine.", stacklevel=2)
    return where
