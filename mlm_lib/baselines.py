"""What a model must beat: guesses that use no context at all.

A uniform guess over V tokens costs ln V nats. The unigram guess (always the same distribution, the
character frequencies of the training text) is the best possible without looking at any neighbour:
about 3.3 nats and 15% accuracy (a space) on Shakespeare. A model below that loss has learnt to use context.
"""
from __future__ import annotations

import math

import torch


def unigram_baseline(train_ids: torch.Tensor, val_ids: torch.Tensor, vocab_size: int) -> dict:
    """Loss (nats) and accuracy on `val_ids` of predicting every token from training-set frequencies.

    Masked positions are a uniform random sample of the text, so the expected masked loss is simply the
    cross-entropy of the held-out text under the training frequencies (add-one smoothed, so an unseen
    character costs a finite amount).
    """
    counts = torch.bincount(train_ids, minlength=vocab_size).double() + 1.0
    log_probs = (counts / counts.sum()).log()
    loss = -log_probs[val_ids].mean().item()
    best = int(counts.argmax())
    return {"loss": loss, "accuracy": (val_ids == best).double().mean().item(), "guess": best,
            "uniform_loss": math.log(vocab_size)}
