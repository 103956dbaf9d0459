"""Re-execute the stored notebooks as one release: every notebook once, in reading order, each in a fresh kernel,
on a quiet machine, with the package version the repository holds.

    python -m mlm_lib.course.release notebooks            (or: make release-notebooks)
    python -m mlm_lib.course.release notebooks --only 05 07

The notebooks are stored executed (readers on GitHub and in the book see their outputs; nbval re-runs them and
compares), so their outputs are what a learner meets first. A release run makes them one consistent set:

* it refuses to start while other work keeps the CPUs busy (the time estimates and the training cells assume an
  idle machine; a busy one would also make each notebook's setup cell store its "machine is busy" warning),
  and waits for the machine to be quiet again before each notebook;
* it runs each notebook top to bottom in a new kernel, in the notebook's own folder, stores the outputs and the
  widgets' state, and writes the file only when every cell ran (atomically: a crash leaves the old file);
* it refuses to store a notebook that printed to stderr (a warning, a progress bar): a warning that belongs to
  the lesson is shown as text by the notebook itself;
* it prints each notebook's run time, the table README's time estimates come from.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from .setup import busy_cpus, usable_cpus
from .student import notebooks_in

QUIET = 0.25  # CPUs other work may keep busy (a measured share of the whole machine) for a release to run


def wait_for_quiet(cpus: int, patience: float, poll: float = 2.0) -> float:
    """Seconds waited until other work keeps at most QUIET CPUs busy; raises when `patience` runs out (a patience
    that is not a finite number of seconds >= 0 is refused: nan would compare False for ever, and wait for ever)."""
    for name, value in (("patience", patience), ("poll", poll)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
            raise ValueError(f"{name} must be a finite number of seconds >= 0, got {value!r}.")
    start = time.monotonic()
    while (load := busy_cpus()) > QUIET:
        if time.monotonic() - start > patience:
            raise RuntimeError(f"The machine is busy: other work keeps {load:.1f} of its {cpus} CPUs busy. A release "
                               "run stores every notebook's outputs and timings, so it needs a quiet machine: stop the "
                               "other work (or wait) and run it again.")
        time.sleep(poll)
    return time.monotonic() - start


def stderr_of(nb) -> list[str]:
    """The stderr text every code cell of `nb` stored (what a release must not store)."""
    found = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                found.append(f"cell {i}: {''.join(out.get('text', ''))[:300].strip()}")
    return found


def execute(path: Path, timeout: int) -> float:
    """Run one notebook in a fresh kernel, in its folder; store it if it ran clean. Returns the seconds it took."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as err:
        failed = next((i for i, cell in enumerate(nb.cells) if cell.cell_type == "code" and any(
            out.get("output_type") == "error" for out in cell.get("outputs", []))), None)
        where = f"cell {failed}" if failed is not None else "a cell"
        error = f"{err.ename}: {err.evalue}" if getattr(err, "ename", None) else str(err).strip().splitlines()[-1]
        raise RuntimeError(f"{path.name}, {where} failed: {error}. The notebook was not changed: fix the cell and "
                           "release it again.") from None
    seconds = time.perf_counter() - start
    noise = stderr_of(nb)
    if noise:
        raise RuntimeError(f"{path.name} wrote to stderr, which a release does not store:\n  " + "\n  ".join(noise))
    fd, tmp = tempfile.mkstemp(suffix=".ipynb", dir=path.parent)
    os.close(fd)
    try:
        nbformat.write(nb, tmp)
        Path(tmp).replace(path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return seconds


def _seconds(text: str) -> float:
    """An argparse type: a finite number of seconds >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds >= 0, got {text}")
    return value


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("folder", nargs="?", default="notebooks", help="the teaching notebooks' folder")
    parser.add_argument("--only", nargs="+", metavar="NN", help="release these notebooks only (by number)")
    parser.add_argument("--patience", type=_seconds, default=120.0,
                        help="seconds to wait for a quiet machine before each notebook (default 120)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds a cell may take (default 600; 0 or less: "
                        "no limit)")
    args = parser.parse_args(argv)
    import mlm_lib

    try:
        notebooks = notebooks_in(args.folder)
    except FileNotFoundError as err:
        parser.error(str(err))
    if args.only:
        notebooks = [p for p in notebooks if p.name[:2] in args.only]
        if not notebooks:
            parser.error(f"no notebook numbered {' '.join(args.only)} in {args.folder}")
    cpus = usable_cpus()
    try:
        wait_for_quiet(cpus, patience=0)
    except RuntimeError as err:
        parser.exit(2, f"release: {err}\n")
    print(f"releasing {len(notebooks)} notebooks with mlm_lib {mlm_lib.__version__} on {cpus} CPUs", flush=True)
    times = {}
    for path in notebooks:
        try:
            waited = wait_for_quiet(cpus, args.patience)
            times[path.name[:2]] = execute(path, args.timeout)
        except RuntimeError as err:  # a busy machine, a failing cell or stray stderr: named, the file unchanged
            parser.exit(1, f"release: {err}\n")
        print(f"  {path.name}: {times[path.name[:2]]:.0f} s" + (f" (waited {waited:.0f} s for quiet)" if waited > 1
                                                               else ""), flush=True)
    total = sum(times.values())
    print("| " + " | ".join(times) + " | all |\n|" + "---|" * (len(times) + 1) + "\n| "
          + " | ".join(f"{t:.0f} s" for t in times.values()) + f" | **{total / 60:.1f} min** |")
    return times


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
