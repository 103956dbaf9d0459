"""What a model must beat: guesses that use no context at all, and one that counts its neighbours.

Taught in notebook 01 (data and tokens), §6 (the unigram loss); notebook 07 draws the shown-token line on
its curves; the count model is the bar that notebooks 05 and 06 hold the trained model against; the n-gram
naive Bayes classifier is the bar of the fine-tuning task in notebook 11.

Three levels, on Shakespeare's held-out text under BERT's masking:
* uniform, ln V (4.43 nats): knows nothing;
* unigram (3.29 nats, 15% right): always the training frequencies, whatever the input;
* shown token (3.04 nats, 23% right): uses the input at the blank's own position and nothing else. A
  selected position shows `[MASK]` 80% of the time (then guess by frequency), the true token 10% of the
  time and a random one 10% of the time; the best bet given only what is shown is computed exactly here.
A loss below 3.29 therefore does not yet prove that a model reads context; below 3.04 it does. Training
curves pause near 3.04 (the "plateau" of notebook 07) before the model learns to use its neighbours.
"""
from __future__ import annotations

import math
from collections import Counter

import torch

from .masking import BERT_MASKING, EVAL_SEED, IGNORE_INDEX, MaskingConfig, mask_tokens


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


def shown_token_baseline(train_ids: torch.Tensor, val_ids: torch.Tensor, tokenizer,
                         masking: MaskingConfig = BERT_MASKING, *, seed: int = EVAL_SEED) -> dict:
    """Loss and accuracy of the best guess that looks only at the token shown at the blank's own position.

    Bayes' rule with the training frequencies p(y) as the prior: the chance of being shown x when the
    original is y is mask_prob for x = [MASK], unchanged_prob for x = y, and random_prob / (size of the
    random pool) for any x the random draw can produce. The guess is p(y) * P(x | y), normalised; it is
    scored on the held-out text masked exactly as `evaluate` masks it (same seed).
    """
    V = tokenizer.vocab_size
    counts = torch.bincount(train_ids, minlength=V).double() + 1.0
    counts[tokenizer.special_ids] = 0.0                                   # never an answer: never selected
    prior = counts / counts.sum()
    special = set(tokenizer.special_ids) if masking.random_from == "ordinary" else set()
    pool = torch.tensor([i not in special for i in range(V)], dtype=torch.double)
    inputs, labels = mask_tokens(val_ids, tokenizer, masking, generator=torch.Generator().manual_seed(seed))
    chosen = labels != IGNORE_INDEX
    shown, target = inputs[chosen], labels[chosen]
    likelihood = (masking.unchanged_prob * (shown[:, None] == torch.arange(V)).double()
                  + masking.random_prob / pool.sum() * pool[shown][:, None])  # row: what is shown; column: y
    likelihood[shown == tokenizer.mask_id] = masking.mask_prob
    posterior = prior * likelihood
    posterior = posterior / posterior.sum(-1, keepdim=True)
    rows = torch.arange(len(target))
    return {"loss": -posterior[rows, target].log().mean().item(),
            "accuracy": (posterior.argmax(-1) == target).double().mean().item(), "predictions": len(target)}


class NeighbourCountModel:
    """Guess a hidden character from the two characters on each side, by counting, with back-off.

    Training counts every (left2, left1, right1, right2) -> centre occurrence in clean text. To guess, look
    up the context in the input the model is given; if that exact context never occurred (for instance
    because a neighbour is itself `[MASK]`), fall back to one neighbour on each side, then to the unigram.
    It is a simple baseline that needs no learning (one lookup table of near context, not the best possible one),
    and under BERT's masking it suffers exactly where a neural MLM must cope: the neighbours are themselves hidden
    15% of the time.
    """

    def __init__(self, train_ids: torch.Tensor, vocab_size: int):
        self.V = vocab_size
        ids = train_ids.long()
        centre = ids[2:-2]
        self.wide = self._table(self._key(ids[:-4], ids[1:-3], ids[3:-1], ids[4:]), centre)
        self.narrow = self._table(self._key(ids[1:-3], ids[3:-1]), centre)
        self.unigram = int(torch.bincount(ids, minlength=vocab_size).argmax())

    def _key(self, *parts) -> torch.Tensor:
        key = torch.zeros_like(parts[0])
        for p in parts:
            key = key * self.V + p
        return key

    def _table(self, context: torch.Tensor, centre: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Sorted context keys and, for each, the most frequent centre character."""
        pair = context * self.V + centre
        pairs, counts = torch.unique(pair, return_counts=True)
        ctx, ch = pairs // self.V, pairs % self.V
        order = torch.argsort(ctx * (counts.max() + 1) + counts)      # by context, then by count
        ctx, ch = ctx[order], ch[order]
        last = torch.ones_like(ctx, dtype=torch.bool)
        last[:-1] = ctx[1:] != ctx[:-1]                                # the most frequent is last per context
        return ctx[last], ch[last]

    @staticmethod
    def _lookup(table, keys):
        ctx, best = table
        idx = torch.searchsorted(ctx, keys).clamp(max=len(ctx) - 1)
        found = ctx[idx] == keys
        return torch.where(found, best[idx], torch.full_like(keys, -1)), found

    def predict(self, inputs: torch.Tensor) -> torch.Tensor:
        """A guess for every position of a 1-D input (the first and last two positions use the unigram)."""
        guess = torch.full_like(inputs, self.unigram)
        x = inputs.long()
        wide, ok_wide = self._lookup(self.wide, self._key(x[:-4], x[1:-3], x[3:-1], x[4:]))
        narrow, ok_narrow = self._lookup(self.narrow, self._key(x[1:-3], x[3:-1]))
        inner = torch.where(ok_wide, wide, torch.where(ok_narrow, narrow, guess[2:-2]))
        guess[2:-2] = inner
        return guess


def count_model_baseline(train_ids: torch.Tensor, val_ids: torch.Tensor, tokenizer, *, seed: int = EVAL_SEED) -> dict:
    """Masked-character accuracy of `NeighbourCountModel` on held-out text, with and without masking its context.

    "masked": the context is the masked input, as the MLM sees it (BERT's 15% / 80-10-10, fixed seed).
    "clean": the same selected positions, but the neighbours are the true characters.
    """
    model = NeighbourCountModel(train_ids, tokenizer.vocab_size)
    inputs, labels = mask_tokens(val_ids, tokenizer, generator=torch.Generator().manual_seed(seed))
    chosen = labels != IGNORE_INDEX
    masked = (model.predict(inputs)[chosen] == labels[chosen]).double().mean().item()
    clean = (model.predict(val_ids)[chosen] == labels[chosen]).double().mean().item()
    return {"masked_accuracy": masked, "clean_accuracy": clean, "predictions": int(chosen.sum())}


class NgramNaiveBayes:
    """A text classifier that counts: naive Bayes over the character n-grams of each text (notebook 11, §4).

    For each label, how often every n-gram (n = 1 to 4 by default) occurs in its training texts, add-one
    smoothed; a new text goes to the label under which its n-grams are likeliest (equal priors: the course's
    splits are balanced). No network and no pretraining: the bar a fine-tuned model must clear, and a strong
    one when labels are plentiful.
    """

    def __init__(self, orders=(1, 2, 3, 4)):
        self.orders = tuple(orders)
        if not self.orders or any(not isinstance(n, int) or n < 1 for n in self.orders):
            raise ValueError(f"orders must be whole numbers >= 1, got {orders!r}.")
        self.counts: dict[int, Counter] = {}

    def _grams(self, text: str) -> Counter:
        return Counter(text[i:i + n] for n in self.orders for i in range(len(text) - n + 1))

    def fit(self, texts, labels) -> "NgramNaiveBayes":
        texts, labels = list(texts), [int(y) for y in labels]
        if not texts or len(texts) != len(labels):
            raise ValueError(f"fit needs as many labels as texts (got {len(texts)} texts, {len(labels)} labels).")
        self.counts = {}
        for text, y in zip(texts, labels):
            self.counts.setdefault(y, Counter()).update(self._grams(text))
        if len(self.counts) < 2:
            raise ValueError("fit needs examples of at least two labels.")
        self._vocab = len(set().union(*self.counts.values()))
        self._totals = {y: sum(c.values()) for y, c in self.counts.items()}
        return self

    def predict(self, texts) -> list[int]:
        if not self.counts:
            raise ValueError("Call fit(texts, labels) first.")
        out = []
        for text in texts:
            grams = self._grams(text)
            score = {y: sum(k * math.log((c[g] + 1) / (self._totals[y] + self._vocab)) for g, k in grams.items())
                     for y, c in self.counts.items()}
            out.append(max(sorted(score), key=score.get))
        return out

    def accuracy(self, texts, labels) -> float:
        labels = [int(y) for y in labels]
        return sum(p == y for p, y in zip(self.predict(texts), labels)) / len(labels)
