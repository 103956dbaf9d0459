"""Muon for the encoder's weight matrices, AdamW for the rest: the optimiser of the speedrun's muon recipes.
Taught in notebook 14 ("How fast can a laptop pretrain BERT?"), §3.

AdamW scales each weight's step by that weight's own gradient history, one number at a time. Muon (Keller
Jordan, 2024; the optimiser of the modded-nanoGPT speedruns) treats a weight matrix as a matrix: it keeps a
momentum of the gradient, as SGD does, and replaces that momentum matrix by an approximation of the nearest
(semi-)orthogonal one, so that the update moves its directions by more nearly the same amount instead of mostly the
few with the largest gradients (five iterations bring singular values within about 0.5 to 1.5 of each other's
scale when they are not too spread out; a gradient's very weakest directions stay small). The orthogonal matrix is approximated by five Newton-Schulz iterations,
matmuls only: about 2.5 GFLOP a step for the course model's 24 matrices, next to about 20 for the forward and
backward pass of one batch of 4,096 characters (notebook 14 measures what it costs in steps per minute).

`newton_schulz` writes the iteration out (notebook 14 builds it and compares it with PyTorch's). Training uses
`Muon`: PyTorch's own `torch.optim.Muon` (its momentum, Nesterov step, learning-rate adjustment and state), with
the iteration run in float32 by `newton_schulz` instead of PyTorch's bfloat16 -- on a CPU without bfloat16
instructions (the course's, 2026-11-25) PyTorch's iteration took 1.0 s a step for the course model's 24 matrices
and float32 0.036 s; on a GPU or a CPU with bfloat16 the two cost about the same. The two agree to bfloat16's
precision (`tests/test_training.py` checks that with the iteration in bfloat16 they are equal). Only matrices that multiply a
hidden vector get Muon; embedding tables are looked up row by row (a row's gradient is not a direction of a
map), and biases and LayerNorm weights are vectors, so they keep AdamW, as in the speedruns.
"""
from __future__ import annotations

import math

import torch

from .training import adamw

# PyTorch's defaults (torch/optim/_muon.py), from Keller Jordan's Muon: a quintic iteration tuned to push every
# singular value towards 1 in five steps (they end between about 0.7 and 1.2, not exactly at 1)
NS_COEFFICIENTS = (3.4445, -4.775, 2.0315)


def newton_schulz(matrix: torch.Tensor, steps: int = 5, coefficients=NS_COEFFICIENTS,
                  eps: float = 1e-7, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The (approximately) orthogonal matrix nearest to `matrix`: same singular vectors, singular values about 0.5-1.5.

    Divide by the Frobenius norm (so every singular value is at most 1), then repeat X <- aX + b(XXᵀ)X +
    c(XXᵀ)²X, which maps each singular value s to as + bs³ + cs⁵ and leaves the singular vectors alone. Works
    on the wide orientation (fewer rows than columns), as PyTorch's does, so XXᵀ is the small Gram matrix.
    `dtype` is the precision of the iteration (PyTorch's own Muon: bfloat16).
    """
    if matrix.dim() != 2:
        raise ValueError(f"newton_schulz orthogonalises a matrix (2 dimensions), got shape {tuple(matrix.shape)}.")
    a, b, c = coefficients
    tall = matrix.size(0) > matrix.size(1)
    x = matrix.to(dtype).T if tall else matrix.to(dtype)
    x = x / x.norm().clamp(min=eps)
    for _ in range(steps):
        gram = x @ x.T
        x = torch.addmm(x, torch.addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)  # a x + (b G + c G G) x
    return x.T if tall else x


def hidden_matrices(model: torch.nn.Module) -> list[str]:
    """Names of the parameters Muon takes: the weight matrices inside the encoder layers (Q, K, V, the
    attention output, both feed-forward matrices); everything else stays with AdamW."""
    return [n for n, p in model.named_parameters() if n.startswith("layers.") and p.dim() == 2]


class Muon(torch.optim.Muon):
    """`torch.optim.Muon`, with the Newton-Schulz iteration in `ns_dtype` (float32 unless told otherwise) by
    `newton_schulz`: the same update, step for step, as PyTorch's `_single_tensor_muon` -- momentum buffer
    `lerp`, the Nesterov look-ahead, decoupled weight decay, and the "original" learning-rate adjustment
    sqrt(max(1, rows / columns)) -- but affordable on a CPU without bfloat16 instructions."""

    def __init__(self, params, *, ns_dtype: torch.dtype = torch.float32, **kwargs):
        kwargs.setdefault("adjust_lr_fn", "original")
        if kwargs["adjust_lr_fn"] != "original":
            raise ValueError("The course's Muon adjusts the learning rate the original way (Keller Jordan's), only.")
        super().__init__(params, **kwargs)
        self.ns_dtype = ns_dtype

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, momentum = group["lr"], group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.zeros_like(p.grad, memory_format=torch.preserve_format)
                buf = state["momentum_buffer"]
                buf.lerp_(p.grad, 1 - momentum)
                update = p.grad.lerp(buf, momentum) if group["nesterov"] else buf
                update = newton_schulz(update, group["ns_steps"], group["ns_coefficients"], group["eps"],
                                       dtype=self.ns_dtype)
                p.mul_(1 - lr * group["weight_decay"])
                p.add_(update, alpha=-lr * math.sqrt(max(1, p.size(0) / p.size(1))))
        return loss


class MuonAndAdamW:
    """Two optimisers that look like one to `train_step` and to a schedule (`zero_grad`, `step`,
    `param_groups`): `Muon` (PyTorch's, iterating in float32) on `hidden_matrices(model)` at `muon_lr`, AdamW on
    the rest at `lr`.

    Muon's learning rate is on its own scale: PyTorch's "original" adjustment multiplies it by
    sqrt(max(1, rows / columns)) per matrix, as Keller Jordan's code does; 0.02 is the speedrun's, and the
    course measured 0.05 to diverge (mlm_lib/course/assets/results/README.md). A schedule that multiplies each
    group's peak rate by one factor keeps the two in proportion. No weight decay on the Muon matrices.
    """

    def __init__(self, model: torch.nn.Module, *, lr: float, muon_lr: float, weight_decay: float = 0.01):
        names = set(hidden_matrices(model))
        if not names:
            raise ValueError("MuonAndAdamW found no encoder weight matrices (parameters named layers.*): "
                             "it is meant for the course's BertForMLM and its relatives.")
        hidden = [p for n, p in model.named_parameters() if n in names]
        rest = [p for n, p in model.named_parameters() if n not in names]
        groups = [{"params": [p for p in rest if p.dim() >= 2], "weight_decay": weight_decay},
                  {"params": [p for p in rest if p.dim() < 2], "weight_decay": 0.0}]
        self.optimizers = [Muon(hidden, lr=muon_lr, weight_decay=0.0),
                           adamw(groups, lr=lr, betas=(0.9, 0.999), eps=1e-6)]  # make_optimizer's AdamW
        self.param_groups = [g for o in self.optimizers for g in o.param_groups]

    def zero_grad(self, set_to_none: bool = True) -> None:
        for optimizer in self.optimizers:
            optimizer.zero_grad(set_to_none=set_to_none)

    def step(self) -> None:
        for optimizer in self.optimizers:
            optimizer.step()

    def state_dict(self) -> dict:
        """Both optimisers' states, so that a run with Muon can be saved and resumed like any other (`train`'s
        `checkpoint_path` and `resume_from`)."""
        return {"optimizers": [optimizer.state_dict() for optimizer in self.optimizers]}

    def load_state_dict(self, state: dict) -> None:
        for optimizer, saved in zip(self.optimizers, state["optimizers"]):
            optimizer.load_state_dict(saved)
        self.param_groups = [g for o in self.optimizers for g in o.param_groups]  # loading made new group dicts
