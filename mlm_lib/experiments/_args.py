"""What the commands share besides the output rule (`_run`): the device options, the machine a record names, and
input the library refuses shown as a usage error."""
from __future__ import annotations

import argparse
import sys
import time
from contextlib import contextmanager

import torch

from ..course.setup import busy_cpus, usable_cpus
from ..devices import PRECISIONS, machine_record, precision_for, resolve_device
from ._run import whole_number


MAX_THREADS = 1024  # more than any machine the course runs on has cores; torch fails deep inside on absurd counts


@contextmanager
def refusals(parser: argparse.ArgumentParser, option: str | None = None):
    """Input the library refuses (a corpus that is empty, not UTF-8 or too short; a damaged checkpoint; a missing
    folder) raises a ValueError or FileNotFoundError whose message names the fix: a command shows that message as a
    usage error, without the traceback in front of it."""
    try:
        yield
    except (ValueError, FileNotFoundError) as err:
        parser.error(f"{option}: {err}" if option and not str(err).startswith(option) else str(err))


def add_device_options(parser: argparse.ArgumentParser) -> None:
    """--device, --precision and --threads, the same for every command that trains or evaluates a model."""
    parser.add_argument("--device", default="auto",
                        help="where to compute: auto (default: an NVIDIA GPU if torch sees one, else Apple's MPS from "
                             "torch 2.9 on, else the CPU), cpu, cuda, cuda:N or mps")
    parser.add_argument("--precision", choices=("auto", *PRECISIONS), default="auto",
                        help="the forward pass's precision (default auto: bf16 on a GPU that has it, fp16 with a "
                             "gradient scaler on one that has not, fp32 on the CPU and MPS)")
    parser.add_argument("--threads", type=whole_number(1, MAX_THREADS), default=None,
                        help="CPU threads for torch (default: torch's choice, every core; on a busy machine 1 can be "
                             "many times faster)")


def where(parser: argparse.ArgumentParser, args) -> tuple[torch.device, str]:
    """The device and precision `add_device_options` asked for, checked on this machine (a usage error naming
    what it has otherwise); sets the thread count, and on an NVIDIA GPU TF32
    matmuls (off with --precision fp32)."""
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
    if device.type == "cuda":  # float32 matmuls on tensor cores (TF32) with the autocast, full float32 with fp32
        torch.backends.cuda.matmul.allow_tf32 = precision != "fp32"
    return device, precision


def machine() -> dict:
    """The machine a results file records (`devices.machine_record`): CPU model and flags, cores, threads, torch."""
    return machine_record()


def today() -> str:
    return time.strftime("%Y-%m-%d")
