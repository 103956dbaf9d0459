"""Scaled dot-product attention, written out, and multi-head attention built on it.

Taught in notebook 03 (attention): the weights in §1-§3, padding in §4, several heads in §5, what trained
heads look at in §6. The causal mask of a left-to-right model is taught in notebook 13 (masked against
left-to-right), the local (sliding-window) mask and rotary positions of ModernBERT in notebook 16.

Every position asks a question (query), every position offers an answer key and a value; a position's
output is the average of all values, weighted by how well its query matches each key. Dividing the dot
products by sqrt(d) keeps their spread near 1 whatever the head size, so the softmax does not saturate
into a one-hot choice with vanishing gradients.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .dropout import dropout
from .rope import apply_rope


def padding_bias(attention_mask: torch.Tensor | None, dtype=torch.float32) -> torch.Tensor | None:
    """Turn a (batch, length) mask of 1 = real token / 0 = padding into an additive (batch, 1, 1, length) bias.

    Padding keys get a huge negative score, so after the softmax no query attends to them. The most
    negative float (as Hugging Face does) rather than -inf keeps an all-padding row finite.
    """
    if attention_mask is None:
        return None
    keep = attention_mask.to(torch.bool)[:, None, None, :]
    return torch.zeros(keep.shape, dtype=dtype, device=keep.device).masked_fill(~keep, torch.finfo(dtype).min)


def causal_bias(length: int, dtype=torch.float32, device=None) -> torch.Tensor:
    """A (1, 1, length, length) additive bias that hides every later position: query i sees keys 0..i only.

    This one mask turns BERT's encoder into a left-to-right language model (notebook 13): the network, its
    weights and its cost stay the same; only what each position may read changes.
    """
    hidden = torch.ones(length, length, dtype=torch.bool, device=device).triu(1)
    return torch.zeros(1, 1, length, length, dtype=dtype, device=device).masked_fill(hidden, torch.finfo(dtype).min)


def sliding_window_bias(length: int, window: int, dtype=torch.float32, device=None) -> torch.Tensor:
    """A (1, 1, length, length) additive bias for local attention: query i sees key j only when
    |i - j| <= window // 2 (Hugging Face's ModernBERT: a window of 128 is 64 positions either side).

    Notebook 16: ModernBERT's local layers. A mask like this restricts what a layer reads; it saves no work on
    its own (the scores are still computed, then hidden): kernels that skip the hidden blocks are what make
    local attention cheap on long sequences.
    """
    position = torch.arange(length, device=device)
    far = (position[:, None] - position[None, :]).abs() > window // 2
    return torch.zeros(1, 1, length, length, dtype=dtype, device=device).masked_fill(far, torch.finfo(dtype).min)


def scaled_dot_product_attention(q, k, v, bias=None, dropout_p: float = 0.0, training: bool = False):
    """softmax(q kᵀ / sqrt(d) + bias) v, the textbook way. Returns (output, attention weights).

    q, k, v: (..., length, d). bias: broadcastable to (..., length, length), e.g. from `padding_bias`.
    """
    scores = (q / math.sqrt(q.size(-1))) @ k.transpose(-2, -1)  # scaling q is cheaper than scaling the scores
    if bias is not None:
        scores = scores + bias
    weights = scores.softmax(dim=-1)
    return dropout(weights, dropout_p, training) @ v, weights


class MultiHeadAttention(nn.Module):
    """Several attention heads side by side, each looking at its own d_model / n_heads slice.

    `fused=True` calls `torch.nn.functional.scaled_dot_product_attention` (one optimised kernel);
    `fused=False` uses the written-out version above. Both give the same numbers; only the explicit one
    can hand back the attention weights, so `return_weights=True` always takes that path. While training
    with attention dropout the written-out version is used too: on a CPU the fused kernel then falls back
    to a slower path, and our dropout mask (mlm_lib.dropout) is cheaper to draw.
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, fused: bool = True, *,
                 fused_qkv: bool = False, linear_bias: bool = True):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads}).")
        self.n_heads, self.d_head, self.dropout, self.fused = n_heads, d_model // n_heads, dropout, fused
        if fused_qkv:  # one matrix multiplication for all three (ModernBERT's Wqkv; notebook 16)
            self.qkv = nn.Linear(d_model, 3 * d_model, bias=linear_bias)
        else:
            self.query = nn.Linear(d_model, d_model, bias=linear_bias)
            self.key = nn.Linear(d_model, d_model, bias=linear_bias)
            self.value = nn.Linear(d_model, d_model, bias=linear_bias)
        self.output = nn.Linear(d_model, d_model, bias=linear_bias)

    def _split(self, x):  # (batch, length, d_model) -> (batch, heads, length, d_head)
        return x.view(x.size(0), x.size(1), self.n_heads, self.d_head).transpose(1, 2)

    def forward(self, x, bias=None, return_weights: bool = False, rope=None):
        """`bias`: an additive attention bias (padding, causal or local mask); `rope`: (cos, sin) from
        `mlm_lib.rope.rope_angles` to turn the queries and keys by their positions (notebook 16)."""
        if hasattr(self, "qkv"):
            q, k, v = (self._split(t) for t in self.qkv(x).chunk(3, dim=-1))
        else:
            q, k, v = self._split(self.query(x)), self._split(self.key(x)), self._split(self.value(x))
        if rope is not None:
            q, k = apply_rope(q, *rope), apply_rope(k, *rope)
        p = self.dropout if self.training else 0.0
        weights = None
        if self.fused and not return_weights and (p == 0.0 or x.device.type != "cpu"):
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=p)
        else:
            out, weights = scaled_dot_product_attention(q, k, v, bias, p, self.training)
        out = self.output(out.transpose(1, 2).reshape(x.shape))
        return (out, weights) if return_weights else out


def softmax_entropy(scores: torch.Tensor) -> torch.Tensor:
    """Entropy (nats) of softmax(scores) along the last dimension: low = peaked, ln n = uniform.

    Notebook 03 uses it to show why attention scores are divided by sqrt(d).
    """
    p = F.softmax(scores, -1)
    return -(p * p.clamp_min(1e-12).log()).sum(-1)
