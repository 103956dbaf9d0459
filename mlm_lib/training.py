"""The masked-LM loss, one training step, and the training loop around it.

Taught in notebook 05 (training): the loss in §1-§2, the optimiser and learning-rate schedule in §3, the
loop written out by hand in §3 and this module's `train` in §4, resuming in §6.

The loss is cross-entropy at the selected positions only: the other 85% carry their own token as
input, so predicting them would teach nothing but copying. Optimisation follows BERT: AdamW with
weight decay, a linear warm-up of the learning rate (Adam's early steps are noisy while its moment
estimates are still empty), then a linear decay to zero, and gradient clipping.

`train_step` is what one batch goes through (what the benchmark times and what a faster recipe or a
distributed run changes); `train` is the loop around it: batches, evaluation, checkpoints, history.
"""
from __future__ import annotations

import numbers
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

import torch
import torch.nn.functional as F

from . import distributed
from .checkpoints import load_checkpoint, save_checkpoint
from .curriculum import LengthSchedule
from .data import random_windows
from .masking import BERT_MASKING, EVAL_SEED, IGNORE_INDEX, MaskingConfig, first_piece, mask_tokens, mask_whole_words
from .model import BertForMLM


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


@dataclass
class TrainConfig:
    steps: int = 1000
    tokens_per_batch: int = 4096          # batch size = tokens_per_batch // window length
    schedule: LengthSchedule = field(default_factory=lambda: LengthSchedule("fixed", 64, 64))
    lr: float = 1e-3
    warmup_steps: int = 100
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    masking: MaskingConfig = BERT_MASKING
    eval_every: int = 100
    eval_windows: int = 256               # held-out windows per evaluation, at the schedule's final length
    eval_seed: int = EVAL_SEED
    seed: int = 0
    whole_word: bool = False              # mask whole words (notebook 09); needs the word ids of the text

    def __post_init__(self):
        if isinstance(self.masking, dict):
            self.masking = MaskingConfig(**self.masking)
        if isinstance(self.schedule, dict):
            self.schedule = LengthSchedule(**self.schedule)
        for name, smallest in (("steps", 1), ("tokens_per_batch", 1), ("warmup_steps", 0), ("eval_every", 1),
                               ("eval_windows", 1)):
            _whole(name, getattr(self, name), smallest)
        if self.tokens_per_batch < self.schedule.long:
            raise ValueError(f"tokens_per_batch={self.tokens_per_batch} does not hold one window of the schedule's "
                             f"longest length ({self.schedule.long}): raise tokens_per_batch or shorten the windows.")
        if self.masking.select_prob == 0:
            raise ValueError("masking.select_prob is 0: no position would be predicted, so nothing can be learnt.")
        if not isinstance(self.whole_word, bool):
            raise ValueError(f"TrainConfig.whole_word must be True or False, got {self.whole_word!r}.")
        for name in ("lr", "grad_clip"):
            value = getattr(self, name)
            if not isinstance(value, numbers.Real) or not value > 0:
                raise ValueError(f"TrainConfig.{name} must be a positive number, got {value!r}.")

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


def lr_factor(step: int, warmup_steps: int, total_steps: int) -> float:
    """Multiplier of the base learning rate: linear warm-up to 1, then linear decay to 0."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))


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
    whole word is selected (whole-word masking: the mates are hidden too)."""
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


def training_batch(train_ids: torch.Tensor, tokenizer, config: TrainConfig, step: int,
                   generator: torch.Generator, word_ids: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The masked batch of `step`: random windows at the schedule's length, masked by `config.masking`.

    A batch in which no position happens to be selected (possible with tiny batches) is masked again, so a
    step always has something to predict.
    """
    progress = step / config.steps
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


def train_step(model: BertForMLM, optimizer: torch.optim.Optimizer, inputs: torch.Tensor, labels: torch.Tensor,
               *, grad_clip: float | None = 1.0, selected: int | None = None, world_size: int = 1,
               autocast_dtype: torch.dtype | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """One optimisation step on one masked batch; returns the batch's (loss, accuracy) as 0-d tensors.

    Forward at the selected positions only, cross-entropy there, backward, clip the gradient's norm,
    update. The learning-rate schedule is the caller's (it steps once per call of this function).

    In a distributed run (notebook 05, §7; `mlm_lib.distributed`) `model` is wrapped in DDP, `inputs` and
    `labels` are this process's share of the global batch and `selected` the number of selected positions
    in the whole of it. The share's loss is then its *sum* over `selected`, times `world_size` (DDP divides
    the summed gradients by it), so the gradient is the whole batch's mean, whatever the share; the loss
    and accuracy returned are this share's parts of the whole batch's, to be summed over the ranks.
    `autocast_dtype` (torch.bfloat16 on a GPU) runs the forward pass in that precision.
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
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if grad_clip:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    return report.detach(), (logits.detach().argmax(-1) == targets).sum() * share


PRECISIONS = {"fp32": None, "bf16": torch.bfloat16}  # the dtype of the forward pass's autocast, if any

HISTORY_KEYS = ("step", "tokens", "length", "loss", "accuracy", "lr", "seconds",
                "eval_step", "eval_tokens", "eval_seconds", "val_loss", "val_accuracy")


def _resume(path, model, tokenizer, config, optimizer, scheduler, generator) -> dict:
    """Load a resume checkpoint into the optimiser, schedule and random state; return its history."""
    ckpt = load_checkpoint(path, model=model, tokenizer=tokenizer)
    state = ckpt.train_state
    if state is None or ckpt.optimizer_state is None:
        raise ValueError(f"{path} holds weights only, no training state: it cannot be resumed.")
    if TrainConfig.from_dict(state["config"]).to_dict() != config.to_dict():
        raise ValueError("This checkpoint was trained with a different TrainConfig; resume with "
                         "TrainConfig.from_dict(load_checkpoint(path).train_state['config']).")
    optimizer.load_state_dict(ckpt.optimizer_state)
    scheduler.load_state_dict(state["scheduler"])
    generator.set_state(state["generator"])
    torch.set_rng_state(state["torch_rng"])
    return state["history"]


@contextmanager
def _stop_between_steps(active: bool):
    """While active, Ctrl-C (or a notebook's stop button) sets a flag that the loop reads after a whole step,
    so the state it saves is consistent; a second Ctrl-C stops at once."""
    flag: list[bool] = []
    if not active or threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handler(signum, frame):
        if flag:
            raise KeyboardInterrupt
        flag.append(True)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)


def train(model: BertForMLM, tokenizer, train_ids: torch.Tensor, val_ids: torch.Tensor,
          config: TrainConfig, *, callback=None, checkpoint_path=None, resume_from=None, stop_at: int | None = None,
          progress: bool = True, train_word_ids: torch.Tensor | None = None,
          val_word_ids: torch.Tensor | None = None, precision: str = "fp32") -> dict:
    """Train `model` on random windows of `train_ids`; return the history (lists, ready to plot).

    With `config.whole_word`, whole words are masked (in training and in the evaluations), which needs each
    text's word ids: `ids, word_ids = tokenizer.encode(text, return_word_ids=True)`.

    `callback(history)` runs after each evaluation (for live plots). `checkpoint_path` saves everything
    needed to continue at every evaluation, at the end, and when the run is interrupted (Ctrl-C ends it
    after the step under way); `resume_from` continues from such a file, exactly as if never stopped. `stop_at` ends early at that
    step (the schedule still plans for `config.steps`), which is how a run is split in two.

    Under torchrun (after `mlm_lib.distributed.init`), every process runs this same function: each draws the
    same global batch, trains on its share through DistributedDataParallel, and only rank 0 evaluates,
    shows progress, calls `callback` and writes checkpoints (notebook 05, §7). `precision="bf16"` runs the
    forward pass under bfloat16 autocast (for GPUs; the weights and the optimiser stay float32).
    """
    from tqdm.auto import tqdm

    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {sorted(PRECISIONS)}, got {precision!r}.")
    world = distributed.current()
    _check_word_ids_for(train_ids, train_word_ids, config.whole_word, "training")
    _check_word_ids_for(val_ids, val_word_ids, config.whole_word, "held-out")
    optimizer = make_optimizer(model, config)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: lr_factor(s, config.warmup_steps, config.steps))
    generator = torch.Generator().manual_seed(config.seed)
    history = {k: [] for k in HISTORY_KEYS}
    if resume_from is not None:
        history = _resume(resume_from, model, tokenizer, config, optimizer, scheduler, generator)
    start = history["step"][-1] if history["step"] else 0
    tokens = history["tokens"][-1] if history["tokens"] else 0
    final_length = config.schedule.length_at(1.0)
    device = next(model.parameters()).device
    end = config.steps if stop_at is None else min(stop_at, config.steps)

    def save():
        if checkpoint_path is not None and history["step"] and world.main:
            state = {"config": config.to_dict(), "step": history["step"][-1], "scheduler": scheduler.state_dict(),
                     "generator": generator.get_state(), "torch_rng": torch.get_rng_state(), "history": history}
            save_checkpoint(checkpoint_path, model, tokenizer, optimizer=optimizer, train_state=state)

    model.train()
    stepper = distributed.wrap(model, world)  # the model itself, in a run of one process
    bar = tqdm(range(start, end), total=config.steps, initial=start, disable=not (progress and world.main),
               desc="training")
    t0 = time.perf_counter() - (history["seconds"][-1] if history["seconds"] else 0.0)
    with _stop_between_steps(checkpoint_path is not None and world.size == 1) as interrupted:
        for step in bar:
            inputs, labels = training_batch(train_ids, tokenizer, config, step, generator, train_word_ids)
            if world.size == 1:
                loss, accuracy = train_step(model, optimizer, inputs.to(device), labels.to(device),
                                            grad_clip=config.grad_clip, autocast_dtype=PRECISIONS[precision])
            else:  # this rank's share of the global batch (every rank drew the same one)
                selected = int((labels != IGNORE_INDEX).sum())
                loss, accuracy = train_step(stepper, optimizer, distributed.share(inputs, world).to(device),
                                            distributed.share(labels, world).to(device), grad_clip=config.grad_clip,
                                            selected=selected, world_size=world.size,
                                            autocast_dtype=PRECISIONS[precision])
                loss, accuracy = distributed.sum_over_ranks(loss, accuracy)
            scheduler.step()
            tokens += inputs.numel()
            for key, value in (("step", step + 1), ("tokens", tokens), ("length", inputs.size(1)),
                               ("loss", loss.item()), ("accuracy", accuracy.item()),
                               ("lr", scheduler.get_last_lr()[0]), ("seconds", time.perf_counter() - t0)):
                history[key].append(value)
            if ((step + 1) % config.eval_every == 0 or step + 1 == config.steps) and world.main:
                result = evaluate(model, tokenizer, val_ids, length=final_length, windows=config.eval_windows,
                                  seed=config.eval_seed, masking=config.masking, word_ids=val_word_ids,
                                  whole_word=config.whole_word)
                for key, value in (("eval_step", step + 1), ("eval_tokens", tokens),
                                   ("eval_seconds", time.perf_counter() - t0), ("val_loss", result["loss"]),
                                   ("val_accuracy", result["accuracy"])):
                    history[key].append(value)
                bar.set_postfix(val_loss=f"{result['loss']:.3f}", val_acc=f"{result['accuracy']:.1%}")
                save()
                if callback is not None:
                    callback(history)
            if interrupted:
                save()
                bar.close()
                raise KeyboardInterrupt(f"stopped after step {step + 1}; resume_from={checkpoint_path} continues")
    bar.close()
    if history["step"] and history["step"][-1] != (history["eval_step"] or [None])[-1]:
        save()  # stopped between evaluations: keep the latest state too
    return history
