"""Rotary position embeddings (RoPE): position enters attention by rotating queries and keys, not by a table.

Taught in notebook 16 (the modern encoder), §1. Used by the model when `BertConfig(position="rope")`.

BERT adds a learned vector for each position to the token's embedding, so it has one row per position it was
trained on and nothing past them (notebook 06 makes the model refuse longer input). RoPE (Su et al., RoFormer,
2021) adds nothing to the embeddings. Inside every attention layer it splits each query and key of a head into
pairs of numbers and turns pair number i by the angle `position x frequency_i`, a different speed for every
pair: `frequency_i = theta ** (-2i / d_head)`, from one radian a position for the first pair down to almost
nothing for the last. A rotation keeps lengths and turns dot products into functions of the *difference* of the
two angles: the score of query position m against key position n depends on m - n only, so the model sees
relative positions, and there is no table with a last row.

Which numbers pair up is a convention. RoFormer pairs neighbours (0, 1), (2, 3), ...; GPT-NeoX, Llama and
Hugging Face's ModernBERT pair each number with the one half a head away, (0, d/2), (1, d/2 + 1), ... (their
`rotate_half`). The two differ only by the order of a head's numbers, which the learned projections absorb;
the course uses the second, so that its model equals `ModernBertForMaskedLM` weight for weight.
"""
from __future__ import annotations

import torch


def rope_frequencies(d_head: int, theta: float = 10_000.0) -> torch.Tensor:
    """The d_head / 2 angular speeds, radians per position: theta ** (-2i / d_head) for i = 0 .. d_head/2 - 1."""
    if isinstance(d_head, bool) or not isinstance(d_head, int) or d_head < 2 or d_head % 2:
        raise ValueError(f"RoPE turns pairs of numbers: the head size must be an even whole number, 2 or more, got "
                         f"{d_head!r}.")
    return 1.0 / theta ** (torch.arange(0, d_head, 2, dtype=torch.float32) / d_head)


def rope_angles(length: int, d_head: int, theta: float = 10_000.0, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """(cos, sin) of every position's angle for every pair, each (length, d_head): the d_head / 2 angles written
    twice, once for each half of a head, as `apply_rope` reads them."""
    angles = torch.arange(length, dtype=torch.float32, device=device)[:, None] * rope_frequencies(d_head, theta).to(device)
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos(), angles.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(x1, x2) -> (-x2, x1) on the two halves of the last dimension: a quarter turn of every pair."""
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Turn every pair of `x` (..., length, d_head) by its position's angle: x cos + rotate_half(x) sin.

    Computed in float32 and returned in x's dtype, as Hugging Face's ModernBERT does.
    """
    return (x.float() * cos + rotate_half(x.float()) * sin).to(x.dtype)
