"""Dropout with a cheaper random mask, for training on a CPU.

Used by the model (notebook 04); why it exists is docs/performance.md (measured by
`python -m mlm_lib.experiments.bench`).

Dropout zeroes each activation with probability p during training (and scales the rest by 1/(1-p), so
the expected value is unchanged); it keeps units from co-adapting. PyTorch's CPU kernel draws one
random number per element through a Bernoulli sampler, and at this course's sizes that costs more than
a quarter of a training step (measured with torch.profiler: 26% at the reference configuration).

Here one 64-bit random word gives four independent 16-bit uniform numbers, and an element is kept when
its number is above p's share of the 16-bit range: the same distribution (p exact to 1/65536), cheaper
to draw. How much cheaper depends on the CPU: `python -m mlm_lib.experiments.bench` measures it
(interleaved with PyTorch's own, median of repeats). On the course's 2-core x86-64 machine with torch
2.13.0 (2026-11-23, median of 30 repeats; benchmarks/bench-2core.json) the mask took 1.27 ms instead of 4.86 ms
for hidden states of (64, 64, 128) (3.8x) and 3.39 ms instead of 14.66 ms for attention weights of (64, 8, 64, 64)
(4.3x); the whole dropout, forward and backward, was 2.2x faster at both shapes. A reviewer measured only 1.25x
on the mask on another machine of the same kind: read these as "faster here", not as a constant. The result is an ordinary tensor expression, so autograd handles the
backward pass (the gradient flows only through kept elements, scaled by 1/(1-p)). Off the CPU, or when
not training, it defers to `torch.nn.functional.dropout`.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

_LOW, _RANGE = -(2 ** 15), 2 ** 16


def drop_mask(shape, p: float, device=None) -> torch.Tensor:
    """A boolean tensor, True (drop) with probability p, drawn from the global torch generator."""
    n = 1
    for size in shape:
        n *= size
    words = torch.empty((n + 3) // 4, dtype=torch.int64, device=device).random_(-(2 ** 63), 2 ** 63 - 1)
    return (words.view(torch.int16)[:n] < _LOW + round(p * _RANGE)).view(shape)


USE_FAST_MASK = True  # the benchmark switches it off to time a textbook model with PyTorch's own dropout


def dropout(x: torch.Tensor, p: float, training: bool = True) -> torch.Tensor:
    if not training or p == 0.0:
        return x
    if x.device.type != "cpu" or p >= 1.0 or not USE_FAST_MASK:
        return F.dropout(x, p, training)
    # one multiplication by a 0 / (1/(1-p)) tensor: a single pass forward, and a single pass backward
    scale = torch.where(drop_mask(x.shape, p, x.device), 0.0, 1.0 / (1.0 - p)).to(x.dtype)
    return x * scale


class Dropout(nn.Dropout):
    """Drop-in for `nn.Dropout` using the faster mask above (same `p`, same train/eval behaviour)."""

    def forward(self, x):
        return dropout(x, self.p, self.training)
