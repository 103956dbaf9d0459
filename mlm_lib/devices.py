"""Where a model computes, and in what precision: one rule for the whole course.

Used from notebook 05 (training) on: its hand-written loop in §3 moves each batch to `device` itself, and `train`
in §4 does it for you. Every notebook that trains or evaluates a model takes a `device` parameter (default "auto")
and every command a `--device` option, both read through `resolve_device`.

The rule:
* `"auto"` is an NVIDIA (or AMD) GPU if PyTorch sees one (`cuda`), else an Apple GPU (`mps`) where PyTorch's MPS
  backend is trusted for this model (`mps_trusted`), else the CPU. A name ("cpu", "cuda", "cuda:1", "mps") is
  taken as asked, and refused with what this machine has when it is not there.
* Everything that trains or evaluates runs where the model is: `training.train` moves each batch to the model's
  device (under torchrun, to the process's own GPU), `predict_masked` and the widgets likewise.
* The precision follows the device (`precision_for`): bfloat16 autocast on a GPU that has it (same range as
  float32, so nothing overflows), float16 autocast with a gradient scaler on one that has not (T4-class GPUs, as
  in Colab: float16's range is small, so the loss is scaled up before backward and the gradients down again
  before the step), float32 on the CPU and on MPS. The weights and the optimiser stay float32 throughout.
  Commands record the device's real name and the precision in their logs (`describe`).

On the CPU nothing changes from the course's earlier versions: float32, no autocast, bit for bit the results
it shipped (`python -m mlm_lib.experiments.reproduce` checks it).

Why MPS needs a version check: another course saw training stuck or wrong losses on Apple's MPS backend
(rasbt/LLMs-from-scratch issue 635, 2025-04; issue 791, torch 2.8.0: a loss of 19.9 where the CPU gave 3.8), and
found training stable on MPS with torch 2.9 (its pull request 900, 2025-11-01). So "auto" picks MPS only from
torch 2.9 on. The course itself has not been run on a Mac yet: asked for by name on an older torch, MPS is used with
a warning, and on any torch a learner should compare a few steps' losses with the CPU's before trusting it.
"""
from __future__ import annotations

import os
import platform
import warnings

import torch

AUTO = "auto"
MPS_TRUSTED_FROM = (2, 9)  # torch release from which "auto" picks Apple's MPS backend
PRECISIONS = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}  # the autocast dtype of each


def _torch_version() -> tuple[int, int]:
    major, minor = torch.__version__.split("+")[0].split(".")[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


def mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def mps_trusted() -> bool:
    """Whether "auto" may pick Apple's MPS backend: it is there, and this torch is one the course trusts on it."""
    return mps_available() and _torch_version() >= MPS_TRUSTED_FROM


def found() -> str:
    """What this machine offers, in words, for error messages: 'cpu; cuda: 1 GPU (NVIDIA T4)'."""
    parts = ["cpu"]
    if torch.cuda.is_available():
        names = sorted({torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())})
        parts.append(f"cuda: {torch.cuda.device_count()} GPU(s) ({', '.join(names)})")
    if mps_available():
        parts.append("mps" + ("" if mps_trusted() else f" (torch {torch.__version__} < 2.9: not picked by 'auto')"))
    if len(parts) == 1:
        parts.append(f"no GPU (torch {torch.__version__}, "
                     f"{'built without CUDA' if torch.version.cuda is None else 'CUDA build, no GPU found'})")
    return "; ".join(parts)


def resolve_device(name: str | torch.device | None = AUTO) -> torch.device:
    """The device `name` stands for on this machine ("auto": CUDA, else trusted MPS, else CPU); a ValueError
    naming what this machine has when it is not there or not a device the course computes on."""
    if name is None or (isinstance(name, str) and name.strip().lower() == AUTO):
        if torch.cuda.is_available():
            return torch.device("cuda", torch.cuda.current_device())
        return torch.device("mps") if mps_trusted() else torch.device("cpu")
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError):
        raise ValueError(f"device {name!r} is not a device name: use auto, cpu, cuda, cuda:N or mps "
                         f"(this machine has {found()}).") from None
    if device.type == "cpu":
        return torch.device("cpu")
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ValueError(f"device {name!r}: CUDA is not available here (this machine has {found()}); "
                             "use device='auto' or 'cpu'.")
        index = torch.cuda.current_device() if device.index is None else device.index
        if index >= count:
            raise ValueError(f"device {name!r}: this machine has {count} GPU(s), numbered 0..{count - 1}.")
        return torch.device("cuda", index)
    if device.type == "mps":
        if not mps_available():
            raise ValueError(f"device {name!r}: Apple's MPS backend is not available here (this machine has "
                             f"{found()}); use device='auto' or 'cpu'.")
        if not mps_trusted():
            warnings.warn(f"torch {torch.__version__} on MPS: other courses saw wrong losses before torch 2.9; "
                          "compare a few training steps with device='cpu' before trusting it.", stacklevel=2)
        return torch.device("mps")
    raise ValueError(f"device {name!r}: the course trains and evaluates on cpu, cuda or mps, not {device.type!r} "
                     f"(this machine has {found()}).")


def model_device(model: torch.nn.Module) -> torch.device:
    """The device of a model's weights: where its batches must go."""
    for parameter in model.parameters():
        return parameter.device
    return torch.device("cpu")


def precision_for(device: torch.device | str, requested: str | None = None) -> str:
    """The precision a run on `device` uses: `requested` if given (and possible there), else bf16 on a GPU that
    supports it, fp16 (with a gradient scaler) on one that does not, fp32 on the CPU and on MPS."""
    device = torch.device(device)
    if requested is not None and requested != AUTO:
        if requested not in PRECISIONS:
            raise ValueError(f"precision must be one of auto, {', '.join(PRECISIONS)}; got {requested!r}.")
        if requested == "fp16" and device.type == "cpu":
            raise ValueError("precision 'fp16' is for GPUs: on the CPU use 'fp32' (or 'bf16').")
        if requested == "bf16" and device.type == "cuda" and not torch.cuda.is_bf16_supported():
            raise ValueError(f"precision 'bf16': {torch.cuda.get_device_name(device)} has no bfloat16; use 'fp16'.")
        return requested
    if device.type == "cuda":
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return "fp32"


def grad_scaler(precision: str, device: torch.device | str):
    """A gradient scaler for float16 (its small range would flush small gradients to zero); None otherwise."""
    if precision != "fp16":
        return None
    return torch.amp.GradScaler(torch.device(device).type)


def device_name(device: torch.device | str) -> str:
    """The device's real name: the GPU's model, or the CPU's architecture (`describe` adds the thread count)."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    if device.type == "mps":
        return f"Apple GPU (MPS), {platform.machine()}"
    return f"{platform.machine() or 'unknown'} CPU"


def same_weights(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    """Whether two models hold the same weights, bit for bit, wherever each of them is: tensors on two devices (a
    model on a GPU, its copy loaded on the CPU) cannot be compared directly (`torch.equal` refuses), so each pair is
    compared on the CPU. Notebook 05, section 6, checks a saved-and-loaded model with it."""
    mine, theirs = a.state_dict(), b.state_dict()
    return mine.keys() == theirs.keys() and all(
        mine[k].shape == theirs[k].shape and torch.equal(mine[k].detach().cpu(), theirs[k].detach().cpu()) for k in mine)


# the CPU features that change how fast (or whether) a lower precision runs: AVX-512 and its bfloat16 instructions,
# Intel's AMX tiles (`cpu_record` lists those this CPU has)
CPU_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")


def _cpuinfo() -> tuple[str, set[str]]:
    """The CPU's model name and flags from /proc/cpuinfo (Linux); elsewhere the platform's processor string."""
    try:
        text = open("/proc/cpuinfo", encoding="utf-8", errors="replace").read()
    except OSError:
        return platform.processor() or platform.machine() or "unknown", set()
    model = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")),
                 platform.machine() or "unknown")
    flags = next((set(line.split(":", 1)[1].split()) for line in text.splitlines() if line.startswith("flags")), set())
    return model, flags


def physical_memory() -> int:
    """This machine's memory in bytes (`os.sysconf`), or 0 where it cannot be read: what a batch or a set of
    windows is checked against before it is allocated, so that an impossible size is refused by name instead of
    failing deep inside torch (or making a shared machine swap)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 0


def machine_record() -> dict:
    """What a results file says about the machine that made it (docs and notebooks name the machine from here):
    the CPU's model and the features of `CPU_FLAGS` it has, its cores, torch's threads, the torch build, and the
    GPU's name where there is one. Two files whose records differ ran on two machines, and their timings are not
    comparable (a budget of characters makes their other numbers comparable all the same)."""
    model, flags = _cpuinfo()
    record = {"cpu": model, "cpu_flags": [f for f in CPU_FLAGS if f in flags], "cores": os.cpu_count(),
              "threads": torch.get_num_threads(), "torch": torch.__version__, "platform": platform.platform()}
    if torch.cuda.is_available():
        record["gpu"] = torch.cuda.get_device_name(0)
    return record


def machine_summary(record: dict | str) -> str:
    """One line for a machine record. Files made before 2026-11-26 recorded the machine as a line without the CPU's
    model (the course's 2-core machine was an AMD EPYC on some days and an Intel Xeon on others), so their line says
    so: `reproduce` gives such a file's numbers bit for bit only on the CPU that made it, which no one can name."""
    if isinstance(record, str):
        return f"{record} (CPU model not recorded)"
    flags = ", ".join(record.get("cpu_flags", [])) or "no AVX2"
    gpu = f", GPU {record['gpu']}" if record.get("gpu") else ""
    return f"{record['cpu']} ({flags}), {record['cores']} cores, {record['threads']} thread{'s' * (record['threads'] != 1)}, torch {record['torch']}{gpu}"


def describe(device: torch.device | str, precision: str | None = None) -> str:
    """One line for a setup cell or a log: 'cuda (NVIDIA T4), fp16' / 'cpu (x86_64 CPU, 2 threads), fp32'."""
    device = torch.device(device)
    precision = precision or precision_for(device)
    n = torch.get_num_threads()
    threads = f", {n} thread{'s' * (n != 1)}" if device.type == "cpu" else ""
    return f"{device.type} ({device_name(device)}{threads}), {precision}"


def record(device: torch.device | str, precision: str | None = None) -> dict:
    """What a command writes into its results about where it ran."""
    device = torch.device(device)
    return {"device": str(device), "device_name": device_name(device), "precision": precision or precision_for(device)}


__all__ = ["AUTO", "MPS_TRUSTED_FROM", "PRECISIONS", "describe", "device_name", "found", "grad_scaler", "machine_record", "same_weights", "machine_summary", "model_device",
           "mps_available", "mps_trusted", "precision_for", "record", "resolve_device"]
