"""BERT's masking rule: which positions the model must predict, and what it sees there.

Taught in notebook 02 (masking): the rule built by hand in §2-§3, checked against this module in §4.
Whole-word masking (`mask_whole_words`, for WordPiece input) is taught in notebook 09.

Each ordinary position is *selected* with probability `select_prob` (15% in BERT) and the model is
asked to predict the original token there. A selected position is shown to the model as

* `[MASK]` with probability `mask_prob` (80%),
* a random token with probability `random_prob` (10%),
* itself, unchanged, otherwise (10%).

The three outcomes are mutually exclusive: one uniform number per selected position decides which,
so the shares really are 80/10/10. Special tokens (`[PAD]`, `[CLS]`, ...) are never selected.

Where this differs from the original, on purpose: Google's `create_pretraining_data.py` picks a fixed
number of positions per sequence and draws a random replacement from the *whole* vocabulary (specials
and `[unused]` entries included); Hugging Face's collator flips a coin per position and also draws from
the whole vocabulary. By default this module draws replacements from ordinary tokens only, so the model
is never shown a `[MASK]` or `[PAD]` it is not asked about: the course's improvement, not BERT's rule.
`MaskingConfig(random_from="vocabulary")` gives the original draw. Like Hugging Face, every position gets
its own coin flip: the mean is the same as Google's, the count per sequence varies a little more, and it
works on any batch shape without loops.
"""
from __future__ import annotations

import numbers
from dataclasses import asdict, dataclass, replace

import torch

IGNORE_INDEX = -100  # what `torch.nn.functional.cross_entropy` skips by default
EVAL_SEED = 1234     # the fixed masking of held-out text, so that every evaluation of every run compares

# Outcome codes, one per position: what `mask_outcomes` decided.
NOT_SELECTED, MASKED, RANDOM, UNCHANGED = 0, 1, 2, 3
OUTCOME_NAMES = {NOT_SELECTED: "not selected", MASKED: "[MASK]", RANDOM: "random", UNCHANGED: "unchanged"}
RANDOM_FROM = ("ordinary", "vocabulary")


def _probability(name: str, p) -> float:
    """`p` as a float in [0, 1]; numpy scalars and 0-d tensors are fine, anything else is refused clearly."""
    if isinstance(p, torch.Tensor) and p.numel() == 1:
        p = p.item()
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"{name} must be a probability between 0 and 1, got {p!r} (BERT uses 0.15 / 0.8 / 0.1).")
    return float(p)


@dataclass(frozen=True)
class MaskingConfig:
    """The masking rule's numbers, in one place: BERT's by default.

    select_prob: share of ordinary positions to predict. mask_prob / random_prob: shares of the selected
    positions shown as `[MASK]` / as a random token (the rest stay unchanged). random_from: "ordinary"
    (the course's default: never a special token) or "vocabulary" (Google's and Hugging Face's draw).
    """

    select_prob: float = 0.15
    mask_prob: float = 0.8
    random_prob: float = 0.1
    random_from: str = "ordinary"

    def __post_init__(self):
        for name in ("select_prob", "mask_prob", "random_prob"):
            object.__setattr__(self, name, _probability(name, getattr(self, name)))
        if self.mask_prob + self.random_prob > 1.0 + 1e-9:
            raise ValueError(
                f"mask_prob + random_prob = {self.mask_prob + self.random_prob:g} > 1: they share the selected "
                "positions, and what is left (1 - mask_prob - random_prob) stays unchanged. Lower one of them."
            )
        if self.random_from not in RANDOM_FROM:
            raise ValueError(f"random_from must be one of {RANDOM_FROM}, got {self.random_from!r}.")

    @property
    def unchanged_prob(self) -> float:
        return 1.0 - self.mask_prob - self.random_prob

    def to_dict(self) -> dict:
        return asdict(self)


BERT_MASKING = MaskingConfig()


def masking_config(masking: MaskingConfig | None = None, **overrides) -> MaskingConfig:
    """`masking` (BERT's by default) with some numbers changed: `masking_config(select_prob=0.4)`."""
    if masking is not None and not isinstance(masking, MaskingConfig):
        raise TypeError(f"masking must be a MaskingConfig, got {type(masking).__name__}.")
    given = {k: v for k, v in overrides.items() if v is not None}
    return replace(masking or BERT_MASKING, **given) if given else (masking or BERT_MASKING)


def check_ids(ids, vocab_size: int | None = None, what: str = "ids") -> None:
    """Refuse what is not a tensor of token ids, or holds ids outside the vocabulary."""
    if not isinstance(ids, torch.Tensor) or ids.dtype != torch.long:
        raise TypeError(f"{what} must be a torch.long tensor of token ids, e.g. tokenizer.encode(text).")
    if vocab_size is not None and ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise ValueError(f"{what} hold ids outside the vocabulary [0, {vocab_size}): were they encoded with this "
                         "tokenizer?")


def _outcome_codes(selected: torch.Tensor, masking: MaskingConfig, generator) -> torch.Tensor:
    """The second draw: each selected position falls into [MASK], random or unchanged by one uniform number."""
    which = torch.rand(selected.shape, generator=generator)
    outcome = torch.full(selected.shape, UNCHANGED, dtype=torch.long)
    outcome[which < masking.mask_prob + masking.random_prob] = RANDOM
    outcome[which < masking.mask_prob] = MASKED
    outcome[~selected] = NOT_SELECTED
    return outcome


def mask_outcomes(ids: torch.Tensor, special_ids, masking: MaskingConfig = BERT_MASKING, *,
                  generator: torch.Generator | None = None) -> torch.Tensor:
    """Decide, for every position, NOT_SELECTED / MASKED / RANDOM / UNCHANGED (a tensor of codes).

    Two uniform draws per position: the first selects, the second picks the outcome by falling into
    [0, mask_prob), [mask_prob, mask_prob + random_prob) or the rest.
    """
    selectable = ~torch.isin(ids, torch.as_tensor(list(special_ids), dtype=ids.dtype))
    selected = (torch.rand(ids.shape, generator=generator) < masking.select_prob) & selectable
    return _outcome_codes(selected, masking, generator)


def apply_outcomes(ids: torch.Tensor, outcome: torch.Tensor, tokenizer, generator: torch.Generator | None = None,
                   random_from: str = "ordinary"):
    """Build the model's inputs and the labels from the outcome codes; `ids` itself is not modified.

    Labels hold the original token where a prediction is asked for and IGNORE_INDEX elsewhere, so the
    loss only counts selected positions.
    """
    special = set(tokenizer.special_ids) if random_from == "ordinary" else set()
    pool = torch.tensor([i for i in range(tokenizer.vocab_size) if i not in special], dtype=ids.dtype)
    inputs = ids.clone()
    inputs[outcome == MASKED] = tokenizer.mask_id
    is_random = outcome == RANDOM
    picks = torch.randint(len(pool), (int(is_random.sum()),), generator=generator)
    inputs[is_random] = pool[picks]
    labels = torch.where(outcome == NOT_SELECTED, torch.full_like(ids, IGNORE_INDEX), ids)
    return inputs, labels


def mask_tokens(ids: torch.Tensor, tokenizer, masking: MaskingConfig | None = None, *,
                select_prob: float | None = None, mask_prob: float | None = None, random_prob: float | None = None,
                generator: torch.Generator | None = None, return_outcome: bool = False):
    """BERT's masking of a batch of token ids (any shape): returns `(inputs, labels)`.

    `inputs` is a new tensor to feed the model; `labels` is the original id at selected positions and
    -100 elsewhere. The numbers come from `masking` (BERT's by default); `select_prob=...` and the other
    keywords change one of them for this call. With `return_outcome=True` the outcome codes come third
    (for plots and widgets). Pass a seeded `torch.Generator` to get the same masking every time.
    """
    check_ids(ids, tokenizer.vocab_size)
    masking = masking_config(masking, select_prob=select_prob, mask_prob=mask_prob, random_prob=random_prob)
    outcome = mask_outcomes(ids, tokenizer.special_ids, masking, generator=generator)
    inputs, labels = apply_outcomes(ids, outcome, tokenizer, generator, masking.random_from)
    return (inputs, labels, outcome) if return_outcome else (inputs, labels)


# ---- whole-word masking (notebook 09) -------------------------------------------------------------------

def word_starts(word_ids: torch.Tensor) -> torch.Tensor:
    """True where a new word begins: the first piece of each word (and every special, word id -1)."""
    start = torch.ones_like(word_ids, dtype=torch.bool)
    start[..., 1:] = (word_ids[..., 1:] != word_ids[..., :-1]) | (word_ids[..., 1:] < 0)
    return start


def first_piece(word_ids: torch.Tensor) -> torch.Tensor:
    """For every position, the position of its word's first piece (along the last dimension)."""
    position = torch.arange(word_ids.size(-1)).expand_as(word_ids)
    return torch.cummax(torch.where(word_starts(word_ids), position, torch.zeros_like(position)), dim=-1).values


def whole_word_outcomes(ids: torch.Tensor, word_ids: torch.Tensor, special_ids,
                        masking: MaskingConfig = BERT_MASKING, *,
                        generator: torch.Generator | None = None) -> torch.Tensor:
    """Like `mask_outcomes`, but a *word* is selected (with probability select_prob), and then every piece of
    it; each selected piece still gets its own [MASK] / random / unchanged draw.

    Along the last dimension, consecutive pieces with the same word id (>= 0) form one word. One uniform
    number is drawn per position and each piece reads the one of its word's first piece, so a word is
    selected as a whole, and the expected share of selected pieces is still select_prob.
    """
    draw = torch.rand(ids.shape, generator=generator)
    selectable = (word_ids >= 0) & ~torch.isin(ids, torch.as_tensor(list(special_ids), dtype=ids.dtype))
    selected = (draw.gather(-1, first_piece(word_ids)) < masking.select_prob) & selectable
    return _outcome_codes(selected, masking, generator)


def check_word_ids(ids: torch.Tensor, word_ids) -> None:
    """Word ids must be integers shaped like the ids they describe."""
    if not isinstance(word_ids, torch.Tensor) or word_ids.dtype not in (torch.long, torch.int32, torch.int16):
        raise TypeError("word_ids must be an integer tensor (torch.long), one word index per token, -1 for "
                        "specials: tokenizer.encode(text, return_word_ids=True) gives it.")
    if word_ids.shape != ids.shape:
        raise ValueError(f"word_ids has shape {tuple(word_ids.shape)} but ids {tuple(ids.shape)}: they must "
                         "describe the same tokens, one word index per token.")
    if ids.dim() == 0:
        raise ValueError("Expected at least one dimension of tokens, got a single number.")


def mask_whole_words(ids: torch.Tensor, word_ids: torch.Tensor, tokenizer, masking: MaskingConfig | None = None, *,
                     select_prob: float | None = None, mask_prob: float | None = None,
                     random_prob: float | None = None, generator: torch.Generator | None = None,
                     return_outcome: bool = False):
    """Whole-word masking (Google's BERT, May 2019): returns `(inputs, labels)` like `mask_tokens`.

    `word_ids` gives each token its word's index (-1 for specials), as `WordPieceTokenizer.encode(text,
    return_word_ids=True)` returns it; any batch shape, the last dimension being the sequence. Each word is
    selected with probability select_prob and then all of its pieces; each selected piece becomes [MASK] /
    random / unchanged at mask_prob / random_prob / the rest, as in Google's script. (Hugging Face's
    transformers 5 masks whole words with `DataCollatorForLanguageModeling(whole_word_mask=True)`, which shows
    every selected piece as [MASK] -- here `mask_prob=1, random_prob=0` -- and takes a word to be a run of pieces
    with no gap in their character offsets, so punctuation stuck to a word (`night;`, `don't`) is masked with it,
    where this course's words, like Google's, make each punctuation character a word of its own (notebook 09, §4);
    its 4.x `DataCollatorForWholeWordMask` did 80/10/10.)
    """
    check_ids(ids, tokenizer.vocab_size)
    check_word_ids(ids, word_ids)
    masking = masking_config(masking, select_prob=select_prob, mask_prob=mask_prob, random_prob=random_prob)
    outcome = whole_word_outcomes(ids, word_ids.long(), tokenizer.special_ids, masking, generator=generator)
    inputs, labels = apply_outcomes(ids, outcome, tokenizer, generator, masking.random_from)
    return (inputs, labels, outcome) if return_outcome else (inputs, labels)
