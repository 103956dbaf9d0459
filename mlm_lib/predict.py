"""Ask a trained model to fill in blanks: the top-k candidates for masked positions of any text.

Taught in notebook 06 (predictions), §1-§3; notebook 00 uses it to fill in a sentence you type.

Each blank is predicted from a window of `window` characters (the length the model was trained on) in
which it sits near the middle: positions the model never saw during training would only add noise, and
windows make texts of any length work. All windows go through the model in one batch.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import torch

from .data import CharTokenizer
from .devices import model_device
from .masking import BERT_MASKING


@dataclass
class Prediction:
    position: int                        # index in the text
    original: str                        # the character that was there
    candidates: list[tuple[str, float]]  # top-k (token, probability), best first

    @property
    def correct(self) -> bool:
        return self.candidates[0][0] == self.original


def masked_positions(text: str, positions=None, *, select_prob: float = BERT_MASKING.select_prob,
                     seed: int = 0) -> list[int]:
    """Check the positions to mask, or draw them, each with probability `select_prob` (with a seed), when none
    are given."""
    if not text:
        raise ValueError("Type some text first: there is nothing to fill in.")
    if positions is None:
        g = torch.Generator().manual_seed(seed)
        chosen = (torch.rand(len(text), generator=g) < select_prob).nonzero().flatten().tolist()
        return chosen or [int(torch.randint(len(text), (1,), generator=g))]
    if hasattr(positions, "tolist") and not isinstance(positions, (str, bytes)):  # a tensor or a NumPy array
        positions = positions.tolist()
        positions = [positions] if isinstance(positions, (int, float)) else positions
    try:
        given = list(positions)
    except TypeError:
        raise ValueError(f"positions must be whole numbers (indices into the text), got {positions!r}.") from None
    odd = [p for p in given if isinstance(p, bool) or not isinstance(p, numbers.Integral)]
    if odd:  # int(1.7) would be 1 and int(True) 1: a blank where none was meant, silently
        raise ValueError(f"positions must be whole numbers (indices into the text), got {odd[0]!r} in {positions!r}.")
    positions = sorted(set(int(p) for p in given))
    if not positions:
        raise ValueError("There is no position to fill in: give at least one, or positions=None to mask at random.")
    bad = [p for p in positions if not 0 <= p < len(text)]
    if bad:
        raise ValueError(f"Positions {bad} are outside the text (0..{len(text) - 1}).")
    return positions


@torch.no_grad()
def predict_masked(model, tokenizer, text: str, positions=None, *, k: int = 5, window: int = 64,
                   select_prob: float = BERT_MASKING.select_prob, seed: int = 0) -> list[Prediction]:
    """Replace the characters at `positions` by [MASK] (all of them at once) and return the model's top-k
    guesses for each. Without positions, mask each character with probability `select_prob`
    (`seed` draws them)."""
    for name, value in (("k", k), ("window", window)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {value!r}.")
    if isinstance(select_prob, bool) or not isinstance(select_prob, (int, float)) or not 0 < select_prob <= 1:
        raise ValueError(f"select_prob is the chance of masking each character, in (0, 1]; got {select_prob!r}.")
    if not hasattr(model, "logits_at"):  # ELECTRA's discriminator, a classifier: they say other things than tokens
        raise ValueError(f"predict_masked asks a masked LM for the missing characters; this is a "
                         f"{type(model).__name__}, which has no masked-LM head: give a BertForMLM (e.g. "
                         "mlm_lib.course.assets.reference_checkpoint().model, or ELECTRA's generator).")
    if not isinstance(tokenizer, CharTokenizer):
        raise ValueError(f"predict_masked fills in characters, one blank a character, with a character model; this "
                         f"model's tokenizer is a {type(tokenizer).__name__}, which reads words in pieces: use a "
                         "character model (e.g. reference_checkpoint('shakespeare-char')), or mask whole pieces with "
                         "mlm_lib.mask_tokens.")
    if "[MASK]" in text:  # Hugging Face's fill-mask reads it as the blank; this model reads characters
        raise ValueError("The text holds a literal '[MASK]': this model reads characters, so that would be six "
                         "ordinary ones. Put any character where the blank goes and give its index in `positions`, "
                         f"e.g. positions=[{text.index('[MASK]')}] for the first.")
    ids = tokenizer.encode(text)
    if len(ids) != len(text) or (ids == tokenizer.unk_id).any():
        unknown = sorted({c for c, i in zip(text, ids.tolist()) if i == tokenizer.unk_id}) if len(ids) == len(text) else []
        raise ValueError(f"predict_masked reads the text character by character with the model's tokenizer, which "
                         f"cannot read {', '.join(map(repr, unknown)) or 'it piece by piece'} (it would see [UNK] and "
                         "guess from nothing): use characters of the text the model was trained on.")
    positions = masked_positions(text, positions, select_prob=select_prob, seed=seed)
    masked = ids.clone()
    masked[positions] = tokenizer.mask_id
    window = min(window, len(ids), model.config.max_len)
    # windows every half window; each blank is predicted in the window where it sits most centrally,
    # so a long text costs a few windows, not one per blank
    stride = max(1, window // 2)
    starts = list(range(0, len(ids) - window + 1, stride))
    if starts[-1] != len(ids) - window:
        starts.append(len(ids) - window)
    best = [min((w for w in range(len(starts)) if starts[w] <= p < starts[w] + window),  # the windows holding p
                key=lambda w: abs(p - starts[w] - window / 2)) for p in positions]
    used = sorted(set(best))
    batch = torch.stack([masked[starts[w]:starts[w] + window] for w in used])
    chosen = torch.zeros_like(batch, dtype=torch.bool)
    for p, w in zip(positions, best):
        chosen[used.index(w), p - starts[w]] = True
    model.eval()
    # one row per blank in (window, offset) order, which is the order of `positions`: positions are sorted
    # and the best window of a later position never comes before that of an earlier one
    device = model_device(model)  # wherever the model is (notebook 05, §4); the answer comes back to the CPU
    probs = model.logits_at(batch.to(device), chosen.to(device)).float().softmax(-1).cpu()
    probs[:, tokenizer.special_ids] = 0.0                       # never offer [PAD], [MASK]...
    top = probs.topk(min(k, probs.size(-1)), dim=-1)
    return [Prediction(p, text[p], [(tokenizer.tokens[i], float(v)) for v, i in zip(vals, idx)])
            for p, vals, idx in zip(positions, top.values.tolist(), top.indices.tolist())]
