"""BERT's masking rule, done exactly.

Each ordinary position is *selected* with probability `select_prob` (15% in BERT) and the model is
asked to predict the original token there. A selected position is shown to the model as

* `[MASK]` with probability `mask_prob` (80%),
* a random ordinary token with probability `random_prob` (10%),
* itself, unchanged, otherwise (10%).

The three outcomes are mutually exclusive: one uniform number per selected position decides which,
so the shares really are 80/10/10. Special tokens (`[PAD]`, `[CLS]`, ...) are never selected, and random
replacements are drawn from ordinary tokens only, because the model must never be taught to predict
padding or to see a `[MASK]` that it is not asked about.

Like Hugging Face's collator (and unlike Google's data script, which picks a fixed count per sequence),
every position gets its own coin flip: the mean is the same, the count per sequence varies a little more,
and it works on any batch shape without loops.
"""
from __future__ import annotations

import torch

IGNORE_INDEX = -100  # what `torch.nn.functional.cross_entropy` skips by default

# Outcome codes, one per position: what `mask_outcomes` decided.
NOT_SELECTED, MASKED, RANDOM, UNCHANGED = 0, 1, 2, 3
OUTCOME_NAMES = {NOT_SELECTED: "not selected", MASKED: "[MASK]", RANDOM: "random", UNCHANGED: "unchanged"}


def check_probabilities(select_prob: float, mask_prob: float, random_prob: float) -> None:
    """Raise a ValueError that says what to change when the three probabilities make no sense."""
    for name, p in (("select_prob", select_prob), ("mask_prob", mask_prob), ("random_prob", random_prob)):
        if not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise ValueError(f"{name} must be a probability between 0 and 1, got {p!r} (BERT uses 0.15 / 0.8 / 0.1).")
    if mask_prob + random_prob > 1.0 + 1e-9:
        raise ValueError(
            f"mask_prob + random_prob = {mask_prob + random_prob:g} > 1: they share the selected positions, "
            "and what is left (1 - mask_prob - random_prob) stays unchanged. Lower one of them."
        )


def mask_outcomes(ids: torch.Tensor, special_ids, *, select_prob: float = 0.15, mask_prob: float = 0.8,
                  random_prob: float = 0.1, generator: torch.Generator | None = None) -> torch.Tensor:
    """Decide, for every position, NOT_SELECTED / MASKED / RANDOM / UNCHANGED (a tensor of codes).

    Two uniform draws per position: the first selects, the second picks the outcome by falling into
    [0, mask_prob), [mask_prob, mask_prob + random_prob) or the rest.
    """
    check_probabilities(select_prob, mask_prob, random_prob)
    selectable = ~torch.isin(ids, torch.as_tensor(list(special_ids), dtype=ids.dtype))
    selected = (torch.rand(ids.shape, generator=generator) < select_prob) & selectable
    which = torch.rand(ids.shape, generator=generator)
    outcome = torch.full_like(ids, UNCHANGED)
    outcome[which < mask_prob + random_prob] = RANDOM
    outcome[which < mask_prob] = MASKED
    outcome[~selected] = NOT_SELECTED
    return outcome


def apply_outcomes(ids: torch.Tensor, outcome: torch.Tensor, tokenizer, generator: torch.Generator | None = None):
    """Build the model's inputs and the labels from the outcome codes; `ids` itself is not modified.

    Labels hold the original token where a prediction is asked for and IGNORE_INDEX elsewhere, so the
    loss only counts selected positions.
    """
    special = set(tokenizer.special_ids)
    ordinary = torch.tensor([i for i in range(tokenizer.vocab_size) if i not in special], dtype=ids.dtype)
    inputs = ids.clone()
    inputs[outcome == MASKED] = tokenizer.mask_id
    is_random = outcome == RANDOM
    picks = torch.randint(len(ordinary), (int(is_random.sum()),), generator=generator)
    inputs[is_random] = ordinary[picks]
    labels = torch.where(outcome == NOT_SELECTED, torch.full_like(ids, IGNORE_INDEX), ids)
    return inputs, labels


def mask_tokens(ids: torch.Tensor, tokenizer, *, select_prob: float = 0.15, mask_prob: float = 0.8,
                random_prob: float = 0.1, generator: torch.Generator | None = None,
                return_outcome: bool = False):
    """BERT's masking of a batch of token ids (any shape): returns `(inputs, labels)`.

    `inputs` is a new tensor to feed the model; `labels` is the original id at selected positions and
    -100 elsewhere. With `return_outcome=True` the outcome codes come third (for plots and widgets).
    Pass a seeded `torch.Generator` to get the same masking every time.
    """
    if not isinstance(ids, torch.Tensor) or ids.dtype != torch.long:
        raise TypeError("mask_tokens expects a torch.long tensor of token ids, e.g. tokenizer.encode(text).")
    outcome = mask_outcomes(ids, tokenizer.special_ids, select_prob=select_prob, mask_prob=mask_prob,
                            random_prob=random_prob, generator=generator)
    inputs, labels = apply_outcomes(ids, outcome, tokenizer, generator)
    return (inputs, labels, outcome) if return_outcome else (inputs, labels)
