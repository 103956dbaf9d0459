"""Training on several processes, or GPUs, with PyTorch's own DistributedDataParallel (DDP).

Taught in notebook 05 (training), §7. The same `training.train` runs alone or under `torchrun`:

    torchrun --standalone --nproc_per_node=2 -m mlm_lib.experiments.pretrain --config smoke --out runs/ddp

Each process is one *rank* of a *world*. `torchrun` starts them and tells each its rank through environment
variables (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/PORT); `init` joins them into one process group, over
gloo on CPUs or NCCL on NVIDIA GPUs. DDP then averages the gradients of all ranks during `backward`, so
every rank takes the same optimiser step and the copies of the model never drift apart.

The course's choice, which DDP leaves to the user: every rank draws the **same global batch** from the
same random generator, as one process would, and keeps its own share of the rows (`share`). The loss of a
share is its sum over the masked positions of the *whole* batch (`train_step`'s `selected`), so the
averaged gradient is exactly one process's gradient on the whole batch: the loss curve of 2 processes
equals that of 1 to float rounding (tested), and a run can be resumed with any number of processes.
Only rank 0 (`is_main`) prints, evaluates and writes files.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class World:
    """Where this process stands: its rank, how many there are, and the device it computes on."""
    rank: int = 0
    size: int = 1
    device: torch.device = torch.device("cpu")

    @property
    def main(self) -> bool:
        return self.rank == 0


def launched_by_torchrun() -> bool:
    """Whether torchrun (or another launcher) started this process as one of several."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def init(device: str = "cpu") -> World:
    """Join the process group when launched by torchrun (gloo for CPUs, NCCL for GPUs); alone, do nothing.

    With `device="cuda"`, rank r of a machine takes GPU number LOCAL_RANK, so one command line serves every
    process.
    """
    kind = torch.device(device).type
    if not launched_by_torchrun():
        return World(device=torch.device(device))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if kind == "cuda":
        if local_rank >= torch.cuda.device_count():
            raise RuntimeError(f"Process {local_rank} of this machine has no GPU of its own ({torch.cuda.device_count()} "
                               "found): start at most that many processes per machine (torchrun --nproc_per_node).")
        where = torch.device("cuda", local_rank)
        torch.cuda.set_device(where)
    elif kind == "cpu":
        where = torch.device("cpu")
    else:
        raise ValueError(f"Distributed training runs on cpu or cuda, not {device!r}.")
    if not dist.is_initialized():
        dist.init_process_group("nccl" if kind == "cuda" else "gloo")
    return World(dist.get_rank(), dist.get_world_size(), where)


def current() -> World:
    """The world of an already joined process group, or a world of one (on the CPU) without one."""
    if dist.is_available() and dist.is_initialized():
        gpu = dist.get_backend() == "nccl"
        where = torch.device("cuda", torch.cuda.current_device()) if gpu else torch.device("cpu")
        return World(dist.get_rank(), dist.get_world_size(), where)
    return World()


def is_main() -> bool:
    """True in a run of one process, and in rank 0 of several: the one that prints and writes."""
    return current().main


def share(tensor: torch.Tensor, world: World) -> torch.Tensor:
    """This rank's rows of a global batch: rows split into `world.size` nearly equal consecutive parts."""
    if len(tensor) < world.size:
        raise ValueError(f"A batch of {len(tensor)} rows cannot be shared by {world.size} processes: raise "
                         "tokens_per_batch or start fewer processes.")
    return tensor.tensor_split(world.size)[world.rank]


def sum_over_ranks(*values: torch.Tensor) -> list[torch.Tensor]:
    """Each value summed over all ranks (one all-reduce for all of them); unchanged in a run of one."""
    if current().size == 1:
        return list(values)
    stacked = torch.stack([v.detach().float() for v in values])
    dist.all_reduce(stacked)
    return list(stacked.unbind())


def wrap(model: torch.nn.Module, world: World) -> torch.nn.Module:
    """The model in DistributedDataParallel when there are several ranks (which averages gradients in
    `backward`); the model itself otherwise."""
    if world.size == 1:
        return model
    from torch.nn.parallel import DistributedDataParallel

    ids = [world.device.index] if world.device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=ids)


def finish() -> None:
    """Leave the process group (at the end of a distributed command)."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


__all__ = ["World", "current", "finish", "init", "is_main", "launched_by_torchrun", "share", "sum_over_ranks", "wrap"]
