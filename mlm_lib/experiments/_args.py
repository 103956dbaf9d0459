"""What the commands share: argument types that refuse impossible values, output paths checked before any
work starts, and writes that never leave half a file."""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import torch

from ..course.setup import busy_cpus, usable_cpus
from ..devices import PRECISIONS, machine_record, precision_for, resolve_device


def whole_number(minimum: int = 1):
    """An argparse type: a whole number >= minimum, refused with the reason otherwise."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {minimum}, got {value}")
        return value
    return parse


def _writable_folder(folder: Path) -> bool:
    """Whether `folder` (or the nearest existing folder above it, where it would be made) takes new files: tried
    by making (and at once removing) a file there, since permission bits say yes to root even where no file can
    be made (/proc, a read-only mount)."""
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        return False
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def output_file(parser: argparse.ArgumentParser, option: str, path, *, existing_ok: bool = False) -> Path | None:
    """Check before the work that `path` can be written as a file; stop with a usage error otherwise.

    The commands' one output rule: an existing file is never replaced by accident. It is refused unless
    `existing_ok` (the command was given --overwrite, or --resume and reads the file to continue it)."""
    if path is None:
        return None
    path = Path(path)
    if path.is_dir():
        parser.error(f"{option} {path} is a folder: give a file name, e.g. {path / 'results.json'}")
    if path.exists() and not existing_ok:
        parser.error(f"{option} {path} already exists: pass --overwrite to replace it, or give another path "
                     "(nothing was written)")
    if not _writable_folder(path.parent):
        parser.error(f"{option} {path}: cannot write in {path.parent} (not a folder, or no permission)")
    return path


def output_folder(parser: argparse.ArgumentParser, option: str, path) -> Path:
    """Check before the work that `path` is, or can become, a folder this process can write in."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        parser.error(f"{option} {path} is a file: give a folder for the outputs")
    if not _writable_folder(path):
        parser.error(f"{option} {path}: cannot write there (no permission)")
    return path


@contextmanager
def refusals(parser: argparse.ArgumentParser, option: str | None = None):
    """Input the library refuses (a corpus that is empty, not UTF-8 or too short; a damaged checkpoint; a missing
    folder) raises a ValueError or FileNotFoundError whose message names the fix: a command shows that message as a
    usage error, without the traceback in front of it."""
    try:
        yield
    except (ValueError, FileNotFoundError) as err:
        parser.error(f"{option}: {err}" if option else str(err))


def add_device_options(parser: argparse.ArgumentParser) -> None:
    """--device, --precision and --threads, the same for every command that trains or evaluates a model."""
    parser.add_argument("--device", default="auto",
                        help="where to compute: auto (default: an NVIDIA GPU if torch sees one, else Apple's MPS from "
                             "torch 2.9 on, else the CPU), cpu, cuda, cuda:N or mps")
    parser.add_argument("--precision", choices=("auto", *PRECISIONS), default="auto",
                        help="the forward pass's precision (default auto: bf16 on a GPU that has it, fp16 with a "
                             "gradient scaler on one that has not, fp32 on the CPU and MPS)")
    parser.add_argument("--threads", type=whole_number(1), default=None,
                        help="CPU threads for torch (default: torch's choice, every core; on a busy machine 1 can be "
                             "many times faster)")


def where(parser: argparse.ArgumentParser, args) -> tuple[torch.device, str]:
    """The device and precision `add_device_options` asked for, checked on this machine (a usage error naming
    what it has otherwise); sets the thread count, and TF32 matmuls on an NVIDIA GPU."""
    try:
        device = resolve_device(args.device)
        precision = precision_for(device, args.precision)
    except ValueError as err:
        parser.error(f"--device/--precision: {err}")
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    elif device.type == "cpu" and torch.get_num_threads() > 1:  # the notebooks' busy-machine warning (course.setup)
        load, cpus = busy_cpus(), usable_cpus()
        if load > 0.5 * cpus:
            print(f"warning: this machine is busy (other work keeps {load:.1f} of {cpus} CPUs busy): with "
                  f"{torch.get_num_threads()} threads each step can be many times slower; pass --threads 1",
                  file=sys.stderr, flush=True)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True  # float32 matmuls on tensor cores, where they remain
    return device, precision


def write_json(path, data, **dump_args) -> None:
    """Write JSON through a temporary file and a rename, so a crash never leaves a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(data, **dump_args))
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def machine() -> dict:
    """The machine a results file records (`devices.machine_record`): CPU model and flags, cores, threads, torch."""
    return machine_record()


def today() -> str:
    return time.strftime("%Y-%m-%d")


def _in_worker(threads: int, function, kwargs: dict):
    torch.set_num_threads(threads)
    return function(**kwargs)


def run_jobs(function, jobs: list[dict], at_once: int, threads: int):
    """Yield `function(**job)` for every job as it finishes, `at_once` of them at a time, each in its own process
    with `threads` torch threads (two one-thread runs on a two-core machine finish sooner than two two-thread runs
    one after the other). With `at_once` 1, in this process, one after the other."""
    if at_once == 1:
        for job in jobs:
            yield function(**job)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=at_once, mp_context=multiprocessing.get_context("spawn")) as pool:
        for future in as_completed([pool.submit(_in_worker, threads, function, job) for job in jobs]):
            yield future.result()
