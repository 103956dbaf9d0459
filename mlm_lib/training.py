"""The masked-LM loss, one training step, and the one training loop of the course.

Taught in notebook 05 (training): the loss in §1-§2, the optimiser and learning-rate schedule in §3, the
loop written out by hand in §3 and this module's `train` in §4, resuming in §6.

The loss is cross-entropy at the selected positions only: the other 85% carry their own token as
input, so predicting them would teach nothing but copying. Optimisation follows BERT: AdamW with
weight decay, a linear warm-up of the learning rate (Adam's early steps are noisy while its moment
estimates are still empty), then a linear decay to zero, and gradient clipping.

`train_step` is what one batch goes through (what the benchmark times and what a faster recipe or a
distributed run changes); `train` is the loop around it: batches, evaluation, checkpoints, history. It is the
only pretraining loop of the course: every objective comes to it as an object with a batch source, a step and
a held-out evaluation — `MaskedLM` here (the default), `pairs.MaskedPairs` (MLM + NSP / SOP, notebook 10),
`ltr.NextToken` (left-to-right, notebook 13), `electra.ReplacedTokenDetection` (ELECTRA, notebook 15) — and
its budget is a number of steps or, for the speedruns (notebooks 14 and 16), seconds on the clock.
(Fine-tuning a classifier, notebook 11, keeps a loop of its own: `finetune.fine_tune` says why.)
"""
from __future__ import annotations

import math
import numbers
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F

from . import devices, distributed
from .checkpoints import load_checkpoint, save_checkpoint
from .data import VAL_FRACTION, random_windows
from .masking import BERT_MASKING, EVAL_SEED, IGNORE_INDEX, MaskingConfig, first_piece, mask_tokens, mask_whole_words
from .model import BertForMLM
from .schedules import LengthSchedule, lr_factor


def _check_full_logits(logits: torch.Tensor, labels: torch.Tensor) -> None:
    if logits.shape[:-1] != labels.shape:
        raise ValueError(f"Expected logits for every position, shape {tuple(labels.shape)} + (vocab,), got "
                         f"{tuple(logits.shape)}. For logits at the selected positions only (model.logits_at), "
                         "compare with labels[labels != -100] directly.")


def mlm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy (in nats) over the positions whose label is not -100.

    `logits` covers every position: (..., vocab), with `labels` shaped (...).
    """
    _check_full_logits(logits, labels)
    chosen = labels != IGNORE_INDEX
    return F.cross_entropy(logits[chosen], labels[chosen])


def masked_accuracy(logits: torch.Tensor, labels: torch.Tensor) -> float:
    """Share of selected positions where the highest-scoring token is the original one."""
    _check_full_logits(logits, labels)
    chosen = labels != IGNORE_INDEX
    return (logits[chosen].argmax(-1) == labels[chosen]).float().mean().item() if chosen.any() else float("nan")


def _whole(name: str, value, smallest: int) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < smallest:
        raise ValueError(f"TrainConfig.{name} must be a whole number >= {smallest}, got {value!r}.")


def _seconds(name: str, value, smallest: float = 0.0) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not smallest <= value < math.inf:
        raise ValueError(f"TrainConfig.{name} must be a finite number of seconds >= {smallest:g}, got {value!r}.")


DEFAULT_STEPS = 1000
SEED_LIMIT = 2 ** 63 - 1  # torch.manual_seed's largest
BYTES_PER_TOKEN = 24  # a batch's ids, inputs and labels (int64): what a step needs at the very least, per token
DEFAULT_WARMUP_STEPS = 100
CLOCK_RESOLUTION = 1000  # a clock budget counts its "steps" in milliseconds (see `TrainConfig.lr_factor_at`)


@dataclass
class TrainConfig:
    """Everything that decides a training run but the model and the data, in one object a checkpoint stores.

    The budget is `steps` or `seconds` (training time on the clock, evaluations not counted: the speedrun of
    notebook 14), never both; each has its own warm-up and evaluation interval. Every schedule — the learning
    rate's warm-up and decay, the window length — is a function of the share of the budget spent.
    """
    steps: int | None = None              # the budget in steps (1,000 when neither budget is given)...
    seconds: float | None = None          # ...or in seconds of training, on the clock
    tokens_per_batch: int = 4096          # batch size = tokens_per_batch // window length
    schedule: LengthSchedule = field(default_factory=lambda: LengthSchedule("fixed", 64, 64))
    lr: float = 1e-3
    warmup_steps: int | None = None       # linear warm-up of a step budget (default 100, or the budget if shorter)...
    warmup_seconds: float = 0.0           # ...or of a clock budget
    decay: bool = True                    # False: hold the peak after the warm-up (continuing a pretraining)
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    masking: MaskingConfig = BERT_MASKING  # the training masking; held-out evaluation is always BERT's
    eval_every: int = 100                 # held-out evaluation every this many steps...
    eval_seconds: float = 30.0            # ...or seconds of training, with a clock budget
    eval_windows: int = 256               # held-out windows per evaluation, at the schedule's final length
    eval_seed: int = EVAL_SEED
    seed: int = 0
    whole_word: bool = False              # mask whole words (notebook 09); needs the word ids of the text

    def __post_init__(self):
        if isinstance(self.masking, dict):
            self.masking = MaskingConfig(**self.masking)
        if isinstance(self.schedule, dict):
            self.schedule = LengthSchedule(**self.schedule)
        if self.steps is not None and self.seconds is not None:
            raise ValueError(f"Give one budget: steps={self.steps} or seconds={self.seconds}, not both.")
        if self.seconds is None:
            self.steps = DEFAULT_STEPS if self.steps is None else self.steps
            _whole("steps", self.steps, 1)
        else:
            _seconds("seconds", self.seconds)
            if not self.seconds > 0:
                raise ValueError("TrainConfig.seconds must be a positive number of seconds, got 0.")
        if self.warmup_steps is None:  # the default never outlasts the budget
            self.warmup_steps = DEFAULT_WARMUP_STEPS if self.steps is None else min(DEFAULT_WARMUP_STEPS, self.steps)
        for name, smallest in (("tokens_per_batch", 1), ("warmup_steps", 0), ("eval_every", 1), ("eval_windows", 1),
                               ("seed", 0)):
            _whole(name, getattr(self, name), smallest)
        if self.seed > SEED_LIMIT:
            raise ValueError(f"TrainConfig.seed must be at most 2**63 - 1 (torch's largest seed), got {self.seed}.")
        memory = devices.physical_memory()
        if memory and self.tokens_per_batch * BYTES_PER_TOKEN > memory:  # a lower bound: the batch's ids alone
            raise ValueError(f"TrainConfig.tokens_per_batch={self.tokens_per_batch:,} would need more than "
                             f"{self.tokens_per_batch * BYTES_PER_TOKEN / 2**30:,.0f} GiB for one batch, more than this "
                             f"machine's {memory / 2**30:,.1f} GiB: give a smaller tokens_per_batch (the course's is 4,096).")
        _seconds("warmup_seconds", self.warmup_seconds)
        if self.steps is not None and self.seconds is None and self.warmup_steps > self.steps:
            raise ValueError(f"warmup_steps={self.warmup_steps} is longer than the whole run (steps={self.steps}): "
                             f"the learning rate would never reach its peak lr={self.lr!r}. Give warmup_steps <= "
                             f"steps (the course warms up over a tenth or less: {max(1, self.steps // 10)}).")
        if self.seconds is not None and self.warmup_seconds > self.seconds:
            raise ValueError(f"warmup_seconds={self.warmup_seconds} is longer than the whole run (seconds="
                             f"{self.seconds}): the learning rate would never reach its peak. Give warmup_seconds "
                             f"<= seconds (the speedrun warms up over 4% of them: {0.04 * self.seconds:g}).")
        _seconds("eval_seconds", self.eval_seconds, 1e-3)
        if self.tokens_per_batch < self.schedule.long:
            raise ValueError(f"tokens_per_batch={self.tokens_per_batch} does not hold one window of the schedule's "
                             f"longest length ({self.schedule.long}): raise tokens_per_batch or shorten the windows.")
        if self.masking.select_prob == 0:
            raise ValueError("masking.select_prob is 0: no position would be predicted, so nothing can be learnt.")
        for name in ("whole_word", "decay"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"TrainConfig.{name} must be True or False, got {getattr(self, name)!r}.")
        for name in ("lr", "grad_clip"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < math.inf:
                raise ValueError(f"TrainConfig.{name} must be a positive, finite number, got {value!r}.")
        wd = self.weight_decay
        if isinstance(wd, bool) or not isinstance(wd, numbers.Real) or not 0 <= wd < math.inf:
            raise ValueError(f"TrainConfig.weight_decay must be a finite number >= 0 (BERT: 0.01), got {wd!r}: a "
                             "negative decay pushes the weights away from zero.")

    @property
    def on_the_clock(self) -> bool:
        return self.seconds is not None

    def progress(self, step: int, seconds: float) -> float:
        """Share of the budget spent before this step: 0 at the start, 1 at the end."""
        return seconds / self.seconds if self.on_the_clock else step / self.steps

    def lr_factor_at(self, step: int, seconds: float) -> float:
        """The learning-rate multiplier for this step: `lr_factor` of the budget, warm-up and decay (or hold).

        A clock budget goes through the same function, counting milliseconds as steps."""
        if self.on_the_clock:
            done, warmup, total = (int(x * CLOCK_RESOLUTION) for x in (seconds, self.warmup_seconds, self.seconds))
        else:
            done, warmup, total = step, self.warmup_steps, self.steps
        return lr_factor(done, warmup, total) if self.decay or done < warmup else 1.0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        """Also reads the older flat form, with select_prob / mask_prob / random_prob at the top level."""
        d = dict(d)
        flat = {k: d.pop(k) for k in ("select_prob", "mask_prob", "random_prob") if k in d}
        if flat:
            d["masking"] = MaskingConfig(**flat).to_dict()
        return cls(**d)


def make_optimizer(model: BertForMLM, config: TrainConfig) -> torch.optim.AdamW:
    """AdamW; as in BERT, biases and LayerNorm weights get no weight decay (decaying them only hurts)."""
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return adamw(groups, lr=config.lr, betas=(0.9, 0.999), eps=1e-6)


def adamw(params, **kwargs) -> torch.optim.AdamW:
    """AdamW with its fused kernel where this PyTorch has one (one pass over all parameters instead of a
    dozen small operations per tensor; on CPU since torch 2.4), else the plain version."""
    try:
        return torch.optim.AdamW(params, fused=True, **kwargs)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.AdamW(params, **kwargs)


def _windows_of(ids: torch.Tensor, word_ids: torch.Tensor | None, starts: torch.Tensor, length: int):
    index = starts[:, None] + torch.arange(length)
    return ids[index], (None if word_ids is None else word_ids[index])


def _check_word_ids_for(ids: torch.Tensor, word_ids, whole_word: bool, what: str) -> None:
    if whole_word and word_ids is None:
        raise ValueError(f"Whole-word masking needs the words of the {what} text: pass its word ids, e.g. "
                         "ids, word_ids = tokenizer.encode(text, return_word_ids=True).")
    if word_ids is not None and (not isinstance(word_ids, torch.Tensor) or word_ids.shape != ids.shape):
        raise ValueError(f"The {what} word ids must be a tensor shaped like the {what} ids ({tuple(ids.shape)}).")


def mask_batch(batch: torch.Tensor, words: torch.Tensor | None, tokenizer, masking: MaskingConfig,
               generator: torch.Generator, whole_word: bool = False):
    """Mask a batch of windows token by token, or word by word when `whole_word` (then `words` is needed)."""
    if whole_word:
        return mask_whole_words(batch, words, tokenizer, masking, generator=generator)
    return mask_tokens(batch, tokenizer, masking, generator=generator)


def _predict(model, inputs, labels, batch_size):
    """Run the model over masked windows in batches: (summed loss, a bool tensor: right at each position)."""
    device = next(model.parameters()).device
    loss_sum = 0.0
    right = torch.zeros_like(labels, dtype=torch.bool)
    for i in range(0, len(inputs), batch_size):
        x, y = inputs[i:i + batch_size].to(device), labels[i:i + batch_size].to(device)
        chosen = y != IGNORE_INDEX
        logits = model.logits_at(x, chosen)
        targets = y[chosen]
        loss_sum += F.cross_entropy(logits, targets, reduction="sum").item()
        hit = torch.zeros_like(chosen)
        hit[chosen] = logits.argmax(-1) == targets
        right[i:i + batch_size] = hit.cpu()
    return loss_sum, right


def _word_keys(words: torch.Tensor) -> torch.Tensor:
    """One number per (window, word) for every position of a (windows, length) batch of word ids."""
    return torch.arange(len(words))[:, None] * words.size(-1) + first_piece(words)


@torch.no_grad()
def evaluate(model, tokenizer, ids: torch.Tensor, *, length: int, windows: int = 256, seed: int = EVAL_SEED,
             batch_size: int = 64, masking: MaskingConfig = BERT_MASKING, word_ids: torch.Tensor | None = None,
             whole_word: bool = False) -> dict:
    """Masked loss and accuracy on held-out text, with a fixed masking seed so runs are comparable.

    With `whole_word=True` (and the text's `word_ids`) whole words are masked, and `word_accuracy` is the
    share of masked words whose every piece was predicted right.
    """
    _check_word_ids_for(ids, word_ids, whole_word, "held-out")
    was_training = model.training
    model.eval()
    batch, words = _windows_of(ids, word_ids if whole_word else None, _eval_starts(ids, length, windows), length)
    inputs, labels = mask_batch(batch, words, tokenizer, masking, torch.Generator().manual_seed(seed), whole_word)
    if not (labels != IGNORE_INDEX).any():
        raise ValueError(f"No held-out position was selected (select_prob={masking.select_prob}, {windows} windows "
                         f"of {length}): evaluate on more windows or with a higher select_prob.")
    loss_sum, right = _predict(model, inputs, labels, batch_size)
    count = int((labels != IGNORE_INDEX).sum())
    model.train(was_training)
    chosen = labels != IGNORE_INDEX
    result = {"loss": loss_sum / count, "accuracy": int(right[chosen].sum()) / count, "predictions": count}
    if whole_word:
        # a word is right when all of its pieces are: find each piece's word (row, first piece) and take the minimum
        key = _word_keys(words)[chosen]
        per_word = torch.ones(len(labels) * length, dtype=torch.long).scatter_reduce(
            0, key, right[chosen].long(), reduce="amin")
        result["word_accuracy"] = per_word[key.unique()].float().mean().item()
        result["words"] = int(key.unique().numel())
    return result


@torch.no_grad()
def word_mates_accuracy(model, tokenizer, ids: torch.Tensor, word_ids: torch.Tensor, *, length: int,
                        windows: int = 256, seed: int = EVAL_SEED, batch_size: int = 64,
                        masking: MaskingConfig = BERT_MASKING) -> dict:
    """Why whole-word masking (notebook 09, §1): accuracy on pieces of words of two or more pieces, when the
    piece is the only one of its word selected (token masking: its word-mates are visible) and when the
    whole word is selected (whole-word masking: the mates are hidden too). The two come from two maskings of the
    same windows, so each is measured on its own pieces (counted in `mates_visible_pieces`, `mates_masked_pieces`):
    compare models on one key, not the two keys of one model as a same-piece contrast."""
    _check_word_ids_for(ids, word_ids, True, "held-out")
    was_training = model.training
    model.eval()
    batch, words = _windows_of(ids, word_ids, _eval_starts(ids, length, windows), length)
    keys = _word_keys(words)
    size = torch.bincount(keys.flatten(), minlength=keys.numel())[keys]  # pieces in each position's word
    result = {}
    for name, whole in (("mates_visible", False), ("mates_masked", True)):
        inputs, labels = mask_batch(batch, words, tokenizer, masking, torch.Generator().manual_seed(seed), whole)
        chosen = labels != IGNORE_INDEX
        picked = torch.bincount(keys[chosen], minlength=keys.numel())[keys]  # selected pieces in the word
        keep = chosen & (size >= 2) & ((picked == 1) if not whole else (picked == size))
        _, right = _predict(model, inputs, labels, batch_size)
        result[name] = right[keep].float().mean().item() if keep.any() else float("nan")
        result[f"{name}_pieces"] = int(keep.sum())
    model.train(was_training)
    return result


def _eval_starts(ids: torch.Tensor, length: int, count: int) -> torch.Tensor:
    _whole("eval_windows", count, 1)
    if len(ids) < length:
        raise ValueError(f"The held-out text has {len(ids)} tokens, fewer than one window of {length}.")
    return torch.linspace(0, len(ids) - length, count).long()


def eval_windows(ids: torch.Tensor, length: int, count: int) -> torch.Tensor:
    """`count` windows spread evenly over the held-out ids: the same text at every evaluation."""
    return _windows_of(ids, None, _eval_starts(ids, length, count), length)[0]


def training_batch(train_ids: torch.Tensor, tokenizer, config: TrainConfig, progress: float,
                   generator: torch.Generator, word_ids: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The masked batch at `progress` (the share of the budget spent, `config.progress(step, seconds)`): random
    windows at the schedule's length, masked by `config.masking`.

    A batch in which no position happens to be selected (possible with tiny batches) is masked again, so a
    step always has something to predict.
    """
    length = config.schedule.length_at(progress)
    batch_size = config.schedule.batch_size_at(progress, config.tokens_per_batch)
    if config.whole_word:  # the same random windows of the ids and of their word ids
        _check_word_ids_for(train_ids, word_ids, True, "training")
        if len(train_ids) < length:
            raise ValueError(f"The text has {len(train_ids)} tokens, fewer than one window of {length}.")
        starts = torch.randint(0, len(train_ids) - length + 1, (batch_size,), generator=generator)
        batch, words = _windows_of(train_ids, word_ids, starts, length)
    else:
        batch, words = random_windows(train_ids, batch_size, length, generator), None
    while True:
        inputs, labels = mask_batch(batch, words, tokenizer, config.masking, generator, config.whole_word)
        if (labels != IGNORE_INDEX).any():
            return inputs, labels


def backward_and_step(loss: torch.Tensor, model, optimizer, grad_clip: float | None = 1.0, scaler=None) -> None:
    """Backward, clip the gradient's global norm, update: the end of every objective's step. With a gradient
    scaler (float16 on a GPU, `mlm_lib.devices`), the loss is scaled up before backward and the gradients
    unscaled before clipping; a step whose gradients overflowed is skipped and the scale lowered."""
    optimizer.zero_grad(set_to_none=True)
    if scaler is None:
        loss.backward()
        if grad_clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        return
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    if grad_clip:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()


def train_step(model: BertForMLM, optimizer: torch.optim.Optimizer, inputs: torch.Tensor, labels: torch.Tensor,
               *, grad_clip: float | None = 1.0, selected: int | None = None, world_size: int = 1,
               autocast_dtype: torch.dtype | None = None, scaler=None) -> tuple[torch.Tensor, torch.Tensor]:
    """One optimisation step on one masked batch; returns the batch's (loss, accuracy) as 0-d tensors.

    Forward at the selected positions only, cross-entropy there, backward, clip the gradient's norm,
    update. The learning-rate schedule is the caller's (it steps once per call of this function).

    In a distributed run (notebook 05, §7; `mlm_lib.distributed`) `model` is wrapped in DDP, `inputs` and
    `labels` are this process's share of the global batch and `selected` the number of selected positions
    in the whole of it. The share's loss is then its *sum* over `selected`, times `world_size` (DDP divides
    the summed gradients by it), so the gradient is the whole batch's mean, whatever the share; the loss
    and accuracy returned are this share's parts of the whole batch's, to be summed over the ranks.
    `autocast_dtype` (torch.bfloat16 or float16 on a GPU) runs the forward pass in that precision, and `scaler`
    (float16's gradient scaler) scales the loss for backward (`backward_and_step`).
    """
    chosen = labels != IGNORE_INDEX
    with torch.autocast(inputs.device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None):
        logits = model(inputs, positions=chosen)
    logits = logits.float()
    targets = labels[chosen]
    if selected is None:
        loss = F.cross_entropy(logits, targets)
        report, share = loss, 1.0 / max(1, targets.numel())
    else:
        report = F.cross_entropy(logits, targets, reduction="sum") / selected
        loss, share = report * world_size, 1.0 / selected
    backward_and_step(loss, model, optimizer, grad_clip, scaler)
    return report.detach(), (logits.detach().argmax(-1) == targets).sum() * share


PRECISIONS = devices.PRECISIONS  # the dtype of the forward pass's autocast, if any, by name


class MaskedLM:
    """BERT's objective, as `train` runs it (notebook 05): random windows of a text, masked; the loss at the
    selected positions; held out, masked loss and accuracy at BERT's 15% and 80/10/10, whatever the training
    masking (a run that selects 40% is measured with the same yardstick as one that selects 15%).

    `train_data` and `val_data` are the two texts' ids. With `TrainConfig(whole_word=True)` whole words are
    masked, in training and in the evaluations, which needs each text's word ids here.

    Every objective of the course has this shape: `check` refuses data it cannot train on, before anything
    starts; `batch` draws the step's batch (a dict of tensors) at a share of the budget; `step` trains on it
    and returns its figures ("loss" and "accuracy" at least); `evaluate` measures the model on held-out data;
    `tokens` counts what a batch read. `distributed` says whether `step` can run under torchrun.
    (Here `step` also returns "predictions": how many positions of the batch carried a loss.)
    """

    distributed = True

    def __init__(self, train_word_ids: torch.Tensor | None = None, val_word_ids: torch.Tensor | None = None):
        self.train_word_ids, self.val_word_ids = train_word_ids, val_word_ids

    def check(self, tokenizer, train_data, val_data, config: TrainConfig) -> None:
        for what, ids in (("train_data", train_data), ("val_data", val_data)):
            if not isinstance(ids, torch.Tensor):
                raise ValueError(f"{what} must be a 1-D torch.long tensor of token ids, e.g. tokenizer.encode(text); "
                                 f"got a {type(ids).__name__}.")
        _check_word_ids_for(train_data, self.train_word_ids, config.whole_word, "training")
        _check_word_ids_for(val_data, self.val_word_ids, config.whole_word, "held-out")
        length = config.schedule.length_at(1.0)  # before any step: a short text must not fail at the first evaluation
        for what, ids in (("training", train_data), ("held-out", val_data)):
            if len(ids) < length:
                raise ValueError(f"The {what} text has {len(ids):,} tokens, fewer than one window of {length}: give a "
                                 f"longer text (the held-out part is the last {VAL_FRACTION:.0%} of a corpus, so a "
                                 f"corpus needs at least {int(length / VAL_FRACTION) + 1:,} tokens) or train on "
                                 "shorter windows.")

    def batch(self, tokenizer, train_data, config: TrainConfig, progress: float, generator) -> dict:
        inputs, labels = training_batch(train_data, tokenizer, config, progress, generator, self.train_word_ids)
        return {"inputs": inputs, "labels": labels}

    def step(self, model, optimizer, batch: dict, config: TrainConfig, *, world, autocast_dtype=None,
             scaler=None) -> dict:
        inputs, labels, device = batch["inputs"], batch["labels"], world.device
        selected = int((labels != IGNORE_INDEX).sum())
        if world.size == 1:
            loss, accuracy = train_step(model, optimizer, inputs.to(device), labels.to(device),
                                        grad_clip=config.grad_clip, autocast_dtype=autocast_dtype, scaler=scaler)
        else:  # this rank's share of the global batch (every rank drew the same one; notebook 05, §7)
            loss, accuracy = train_step(model, optimizer, distributed.share(inputs, world).to(device),
                                        distributed.share(labels, world).to(device), grad_clip=config.grad_clip,
                                        selected=selected, world_size=world.size, autocast_dtype=autocast_dtype,
                                        scaler=scaler)
            loss, accuracy = distributed.sum_over_ranks(loss, accuracy)
        return {"loss": loss, "accuracy": accuracy, "predictions": selected}

    def evaluate(self, model, tokenizer, val_data, config: TrainConfig) -> dict:
        return evaluate(model, tokenizer, val_data, length=config.schedule.length_at(1.0), windows=config.eval_windows,
                        seed=config.eval_seed, masking=BERT_MASKING, word_ids=self.val_word_ids,
                        whole_word=config.whole_word)

    def tokens(self, batch: dict) -> int:
        return batch["inputs"].numel()


# The loop's history: one entry per step for the first keys (and for any other figure the objective's step
# returns, e.g. nsp_loss), one per evaluation for the eval_ keys and for val_<key> of every key the objective's
# evaluation returns (val_loss, val_accuracy, ...; they appear at the first evaluation). "seconds" is training
# time: evaluations and callbacks are not counted. "lr" is the learning rate the step used (the first group's).
HISTORY_KEYS = ("step", "tokens", "seconds", "length", "lr", "loss", "accuracy", "eval_step", "eval_tokens",
                "eval_seconds")


def _append(history: dict, values: dict) -> None:
    for key, value in values.items():
        history.setdefault(key, []).append(value.item() if isinstance(value, torch.Tensor) else value)


def _resume(path, model, tokenizer, config, optimizer, generator) -> dict:
    """Load a resume checkpoint into the model, the optimiser and the random state; return its history."""
    ckpt = load_checkpoint(path, model=model, tokenizer=tokenizer)
    state = ckpt.train_state
    if state is None or ckpt.optimizer_state is None:
        raise ValueError(f"{path} holds weights only, no training state: it cannot be resumed.")
    saved, now = TrainConfig.from_dict(state["config"]).to_dict(), config.to_dict()
    if saved != now:
        differ = ", ".join(f"{k} {saved[k]!r} (now {now[k]!r})" for k in saved if saved[k] != now.get(k))
        raise ValueError(f"{path} was trained with other settings: {differ}. Resume with the settings it was made "
                         "with (the same command line, or TrainConfig.from_dict(load_checkpoint(path)."
                         "train_state['config'])), or start a new run.")
    optimizer.load_state_dict(ckpt.optimizer_state)
    generator.set_state(state["generator"])
    torch.set_rng_state(state["torch_rng"])
    return state["history"]


@contextmanager
def _stop_between_steps(active: bool):
    """While active, Ctrl-C (or a notebook's stop button) and SIGTERM (a job scheduler, `kill`) set a flag that the
    loop reads after a whole step, so the state it saves is consistent; a second signal stops at once."""
    flag: list[bool] = []
    if not active or threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handler(signum, frame):
        if flag:
            stop = KeyboardInterrupt()
            stop.signal = signum  # which signal: a command exits with 128 + its number (130 for Ctrl-C)
            raise stop
        flag.append(signum)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield flag
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def train(model, tokenizer, train_data, val_data, config: TrainConfig, *, objective=None, optimizer=None,
          callback=None, checkpoint_path=None, resume_from=None, stop_at: int | None = None, progress: bool = True,
          train_word_ids: torch.Tensor | None = None, val_word_ids: torch.Tensor | None = None,
          precision: str = "auto") -> dict:
    """Train `model` for `config`'s budget (steps or seconds) on `objective`; return the history (lists, ready
    to plot; `HISTORY_KEYS` says what they hold).

    The objective (default `MaskedLM`: BERT's, on windows of `train_data`, the training text's ids) draws each
    batch and takes each step; every `config.eval_every` steps (or `eval_seconds` of training) and at the end,
    it is evaluated on `val_data`. With `config.whole_word`, the masked LM masks whole words, which needs each
    text's word ids: `ids, word_ids = tokenizer.encode(text, return_word_ids=True)`.

    `optimizer`: default AdamW (`make_optimizer`); any optimiser works (notebook 14 passes Muon), its groups'
    learning rates being the peaks the schedule scales. `callback(history)` runs after each evaluation (for live
    plots; its time is not counted). `checkpoint_path` saves everything needed to continue at every evaluation,
    at the end, and when the run is interrupted (Ctrl-C ends it after the step under way); `resume_from`
    continues from such a file, exactly as if never stopped. `stop_at` ends early at that step (the schedules
    still plan for the whole budget), which is how a run is split in two.

    Under torchrun (after `mlm_lib.distributed.init`), every process runs this same function: each draws the
    same global batch, trains on its share through DistributedDataParallel, and only rank 0 evaluates,
    shows progress, calls `callback` and writes checkpoints (notebook 05, §7).

    Where: the run computes where `model` is (move it first: `model.to(mlm_lib.devices.resolve_device("auto"))`);
    each batch is drawn on the CPU, as the course's random generator is, and moved there. `precision` ("auto":
    bf16 on a GPU that has it, fp16 with a gradient scaler on one that has not, fp32 on the CPU and MPS; see
    `mlm_lib.devices`) is the forward pass's; the weights and the optimiser stay float32.
    """
    from tqdm.auto import tqdm

    if objective is None:
        objective = MaskedLM(train_word_ids, val_word_ids)
    elif train_word_ids is not None or val_word_ids is not None:
        raise ValueError("Word ids belong to the masked-LM objective: pass objective=MaskedLM(train_word_ids, "
                         "val_word_ids) instead of both.")
    world = distributed.current()
    if world.size == 1:  # alone, the batches follow the model, wherever it is (under torchrun: the rank's GPU)
        world = distributed.World(device=devices.model_device(model))
    if world.device.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"The model is on {world.device}: the course trains on cpu, cuda or mps; move it there first, "
                         "e.g. model.to(mlm_lib.devices.resolve_device('auto')).")
    precision = devices.precision_for(world.device, precision)
    autocast_dtype, scaler = PRECISIONS[precision], devices.grad_scaler(precision, world.device)
    if world.size > 1 and not objective.distributed:
        raise ValueError(f"{type(objective).__name__} trains in one process only: run it without torchrun.")
    objective.check(tokenizer, train_data, val_data, config)
    max_len = getattr(getattr(model, "config", None), "max_len", None)
    if isinstance(train_data, torch.Tensor) and max_len is not None and config.schedule.long > max_len:
        raise ValueError(f"TrainConfig.schedule reaches windows of {config.schedule.long} tokens, longer than the "
                         f"model's max_len={max_len}: end the schedule at {max_len} or less (e.g. "
                         f"schedule=linear(16, {max_len})), or build the model with max_len >= {config.schedule.long}.")
    if checkpoint_path is not None and Path(checkpoint_path).is_dir():
        raise ValueError(f"checkpoint_path={checkpoint_path} is a folder: give a file name in it, e.g. "
                         f"{Path(checkpoint_path) / 'resume.pt'}.")
    if optimizer is None:
        optimizer = make_optimizer(model, config)
    peaks = [group["lr"] for group in optimizer.param_groups]
    generator = torch.Generator().manual_seed(config.seed)
    history = {k: [] for k in HISTORY_KEYS}
    if resume_from is not None:
        history = _resume(resume_from, model, tokenizer, config, optimizer, generator)
    step = history["step"][-1] if history["step"] else 0
    tokens = history["tokens"][-1] if history["tokens"] else 0
    spent = history["seconds"][-1] if history["seconds"] else 0.0
    next_eval = (len(history["eval_step"]) + 1) * config.eval_seconds
    last = float("inf") if stop_at is None else stop_at

    def save():
        if checkpoint_path is not None and history["step"] and world.main:
            state = {"config": config.to_dict(), "step": history["step"][-1], "generator": generator.get_state(),
                     "torch_rng": torch.get_rng_state(), "history": history}
            save_checkpoint(checkpoint_path, model, tokenizer, optimizer=optimizer, train_state=state)

    def budget_spent() -> bool:
        return spent >= config.seconds if config.on_the_clock else step >= config.steps

    model.train()
    stepper = distributed.wrap(model, world)  # the model itself, in a run of one process
    clock = config.on_the_clock
    bar = tqdm(total=config.seconds if clock else config.steps, initial=spent if clock else step,
               disable=not (progress and world.main), desc="training", unit="s" if clock else "step",
               bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} s [{elapsed}<{remaining}{postfix}]" if clock else None)
    with _stop_between_steps(checkpoint_path is not None and world.size == 1) as interrupted:
        while not budget_spent() and step < last:
            factor = config.lr_factor_at(step, spent)
            for group, peak in zip(optimizer.param_groups, peaks):
                group["lr"] = peak * factor
            started = time.perf_counter()
            batch = objective.batch(tokenizer, train_data, config, config.progress(step, spent), generator)
            figures = objective.step(stepper, optimizer, batch, config, world=world, autocast_dtype=autocast_dtype,
                                     scaler=scaler)
            figures = {k: v.item() if isinstance(v, torch.Tensor) else v for k, v in figures.items()}
            if not math.isfinite(figures["loss"]):  # nothing after this can be trusted: stop, keep the last good state
                bar.close()
                kept = (f"; the last good state (step {history['eval_step'][-1]}) is in {checkpoint_path}"
                        if checkpoint_path is not None and history["eval_step"] else "")
                raise FloatingPointError(
                    f"The training loss became {figures['loss']} at step {step + 1}: the run diverged. Lower the "
                    f"learning rate (lr={config.lr:g}), keep gradient clipping on (grad_clip={config.grad_clip:g}), or "
                    f"lengthen the warm-up{kept}.")
            elapsed = time.perf_counter() - started
            spent, step, tokens = spent + elapsed, step + 1, tokens + objective.tokens(batch)
            _append(history, {"step": step, "tokens": tokens, "seconds": spent, "length": batch["inputs"].size(1),
                              "lr": peaks[0] * factor, **figures})
            bar.update(elapsed if clock else 1)
            due = spent >= next_eval if clock else step % config.eval_every == 0
            if (due or budget_spent()) and world.main:
                result = objective.evaluate(model, tokenizer, val_data, config)
                _append(history, {"eval_step": step, "eval_tokens": tokens, "eval_seconds": spent,
                                  **{f"val_{k}": v for k, v in result.items()}})
                if isinstance(result.get("loss"), float):
                    bar.set_postfix(val_loss=f"{result['loss']:.3f}", val_acc=f"{result['accuracy']:.1%}")
                save()
                if callback is not None:
                    callback(history)
            while clock and next_eval <= spent:
                next_eval += config.eval_seconds
            if interrupted:
                save()
                bar.close()
                stop = KeyboardInterrupt(f"stopped after step {step}; resume_from={checkpoint_path} continues")
                stop.signal = interrupted[0]
                raise stop
    bar.close()
    if hasattr(objective, "finish"):
        objective.finish(history, train_data)
    if history["step"] and history["step"][-1] != (history["eval_step"] or [None])[-1]:
        save()  # stopped between evaluations: keep the latest state too
    return history
