"""The masked-LM loss, the training loop and checkpoints.

The loss is cross-entropy at the selected positions only: the other 85% carry their own token as
input, so predicting them would teach nothing but copying. Optimisation follows BERT: AdamW with
weight decay, a linear warm-up of the learning rate (Adam's early steps are noisy while its moment
estimates are still empty), then a linear decay to zero, and gradient clipping.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F

from .curriculum import LengthSchedule
from .data import CharTokenizer, random_windows
from .masking import IGNORE_INDEX, mask_tokens
from .model import BertConfig, BertForMLM

CHECKPOINT_FORMAT = "mlm_lib-checkpoint-1"


def _selected(logits, labels):
    """Logits and targets at the selected positions, whether `logits` covers every position or only those."""
    chosen = labels != IGNORE_INDEX
    if logits.shape[:-1] == labels.shape:
        logits = logits[chosen]
    return logits, labels[chosen]


def mlm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy (in nats) over the positions whose label is not -100.

    `logits` may be (..., vocab) for every position or (n_selected, vocab) from `model(ids, positions=...)`.
    """
    logits, targets = _selected(logits, labels)
    return F.cross_entropy(logits, targets)


def masked_accuracy(logits: torch.Tensor, labels: torch.Tensor) -> float:
    """Share of selected positions where the highest-scoring token is the original one."""
    logits, targets = _selected(logits, labels)
    return (logits.argmax(-1) == targets).float().mean().item() if len(targets) else float("nan")


@dataclass
class TrainConfig:
    steps: int = 1000
    tokens_per_batch: int = 4096          # batch size = tokens_per_batch // window length
    schedule: LengthSchedule = field(default_factory=lambda: LengthSchedule("fixed", 64, 64))
    lr: float = 1e-3
    warmup_steps: int = 100
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    select_prob: float = 0.15
    mask_prob: float = 0.8
    random_prob: float = 0.1
    eval_every: int = 100
    eval_windows: int = 256               # held-out windows per evaluation, at the schedule's final length
    eval_seed: int = 1234                 # fixed masking of the held-out text, so evaluations compare
    seed: int = 0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        return cls(**{**d, "schedule": LengthSchedule(**d["schedule"])})


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


def eval_windows(ids: torch.Tensor, length: int, count: int) -> torch.Tensor:
    """`count` windows spread evenly over the held-out ids: the same text at every evaluation."""
    if len(ids) < length:
        raise ValueError(f"The held-out text has {len(ids)} tokens, fewer than one window of {length}.")
    starts = torch.linspace(0, len(ids) - length, count).long()
    return ids[starts[:, None] + torch.arange(length)]


@torch.no_grad()
def evaluate(model, tokenizer, ids: torch.Tensor, *, length: int, windows: int = 256, seed: int = 1234,
             batch_size: int = 64, select_prob=0.15, mask_prob=0.8, random_prob=0.1) -> dict:
    """Masked loss and accuracy on held-out text, with a fixed masking seed so runs are comparable."""
    was_training = model.training
    model.eval()
    batch = eval_windows(ids, length, windows)
    inputs, labels = mask_tokens(batch, tokenizer, select_prob=select_prob, mask_prob=mask_prob,
                                 random_prob=random_prob, generator=torch.Generator().manual_seed(seed))
    device = next(model.parameters()).device
    loss_sum, correct, count = 0.0, 0, 0
    for i in range(0, windows, batch_size):
        x, y = inputs[i:i + batch_size].to(device), labels[i:i + batch_size].to(device)
        logits = model(x, positions=y != IGNORE_INDEX)
        targets = y[y != IGNORE_INDEX]
        loss_sum += F.cross_entropy(logits, targets, reduction="sum").item()
        correct += (logits.argmax(-1) == targets).sum().item()
        count += len(targets)
    model.train(was_training)
    return {"loss": loss_sum / count, "accuracy": correct / count, "predictions": count}


def _new_history() -> dict:
    keys = ("step", "tokens", "length", "loss", "accuracy", "lr", "seconds",
            "eval_step", "eval_tokens", "eval_seconds", "val_loss", "val_accuracy")
    return {k: [] for k in keys}


def train(model: BertForMLM, tokenizer: CharTokenizer, train_ids: torch.Tensor, val_ids: torch.Tensor,
          config: TrainConfig, *, callback=None, checkpoint_path=None, resume_from=None, stop_at: int | None = None,
          progress: bool = True) -> dict:
    """Train `model` on random windows of `train_ids`; return the history (lists, ready to plot).

    `callback(history)` runs after each evaluation (for live plots). `checkpoint_path` saves everything
    needed to continue at every evaluation and at the end; `resume_from` continues from such a file,
    exactly as if never stopped. `stop_at` ends early at that step (the schedule still plans for
    `config.steps`), which is how a run is split in two.
    """
    from tqdm.auto import tqdm

    optimizer = make_optimizer(model, config)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: lr_factor(s, config.warmup_steps, config.steps))
    generator = torch.Generator().manual_seed(config.seed)
    history, start, elapsed = _new_history(), 0, 0.0
    if resume_from is not None:
        ckpt = load_checkpoint(resume_from, model=model, tokenizer=tokenizer)
        state = ckpt.train_state
        if state is None or ckpt.optimizer_state is None:
            raise ValueError(f"{resume_from} holds weights only, no training state: it cannot be resumed.")
        if state["config"] != config.to_dict():
            raise ValueError("This checkpoint was trained with a different TrainConfig; resume with "
                             "TrainConfig.from_dict(load_checkpoint(path).train_state['config']).")
        optimizer.load_state_dict(ckpt.optimizer_state)
        scheduler.load_state_dict(state["scheduler"])
        generator.set_state(state["generator"])
        torch.set_rng_state(state["torch_rng"])
        history, start = state["history"], state["step"]
        elapsed = history["seconds"][-1] if history["seconds"] else 0.0
    final_length = config.schedule.length_at(1.0)
    device = next(model.parameters()).device
    end = config.steps if stop_at is None else min(stop_at, config.steps)
    tokens = history["tokens"][-1] if history["tokens"] else 0

    def save():
        if checkpoint_path is not None:
            state = {"config": config.to_dict(), "step": step + 1, "scheduler": scheduler.state_dict(),
                     "generator": generator.get_state(), "torch_rng": torch.get_rng_state(), "history": history}
            save_checkpoint(checkpoint_path, model, tokenizer, optimizer=optimizer, train_state=state)

    model.train()
    bar = tqdm(range(start, end), total=config.steps, initial=start, disable=not progress, desc="training")
    t0 = time.perf_counter() - elapsed
    step = start - 1
    for step in bar:
        progress_now = step / config.steps
        length = config.schedule.length_at(progress_now)
        batch = random_windows(train_ids, config.schedule.batch_size_at(progress_now, config.tokens_per_batch),
                               length, generator)
        inputs, labels = mask_tokens(batch, tokenizer, select_prob=config.select_prob, mask_prob=config.mask_prob,
                                     random_prob=config.random_prob, generator=generator)
        inputs, labels = inputs.to(device), labels.to(device)
        chosen = labels != IGNORE_INDEX
        logits = model(inputs, positions=chosen)
        loss = F.cross_entropy(logits, labels[chosen])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
        optimizer.step()
        scheduler.step()
        tokens += batch.numel()
        history["step"].append(step + 1)
        history["tokens"].append(tokens)
        history["length"].append(length)
        history["loss"].append(loss.item())
        history["accuracy"].append((logits.argmax(-1) == labels[chosen]).float().mean().item())
        history["lr"].append(scheduler.get_last_lr()[0])
        history["seconds"].append(time.perf_counter() - t0)
        if (step + 1) % config.eval_every == 0 or step + 1 == config.steps:
            result = evaluate(model, tokenizer, val_ids, length=final_length, windows=config.eval_windows,
                              seed=config.eval_seed, select_prob=config.select_prob, mask_prob=config.mask_prob,
                              random_prob=config.random_prob)
            history["eval_step"].append(step + 1)
            history["eval_tokens"].append(tokens)
            history["eval_seconds"].append(time.perf_counter() - t0)
            history["val_loss"].append(result["loss"])
            history["val_accuracy"].append(result["accuracy"])
            bar.set_postfix(val_loss=f"{result['loss']:.3f}", val_acc=f"{result['accuracy']:.1%}")
            save()
            if callback is not None:
                callback(history)
    bar.close()
    if history["step"] and history["step"][-1] != (history["eval_step"] or [None])[-1]:
        save()  # stopped between evaluations: keep the latest state too
    return history


# ---- checkpoints -------------------------------------------------------------------------------------

@dataclass
class Checkpoint:
    model: BertForMLM
    tokenizer: CharTokenizer
    optimizer_state: dict | None
    train_state: dict | None


def save_checkpoint(path, model: BertForMLM, tokenizer: CharTokenizer, optimizer=None, train_state=None) -> None:
    """Write weights, model config, tokenizer and (optionally) optimiser and training state to one file.

    Only tensors, numbers, strings, lists and dicts go in, so it loads with `weights_only=True`: a
    checkpoint can never run code on the machine that opens it.
    """
    if tokenizer.vocab_size != model.config.vocab_size:
        raise ValueError(f"Tokenizer has {tokenizer.vocab_size} tokens but the model {model.config.vocab_size}: "
                         "they do not belong together.")
    weights = {k: v for k, v in model.state_dict().items() if k != "head.word_embedding.weight"}  # tied
    payload = {"format": CHECKPOINT_FORMAT, "model_config": model.config.to_dict(), "tokenizer": tokenizer.to_dict(),
               "model": weights, "optimizer": optimizer.state_dict() if optimizer is not None else None,
               "train_state": train_state}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(payload, tmp)
    tmp.replace(path)  # never leave a half-written checkpoint behind


def load_checkpoint(path, *, model: BertForMLM | None = None, tokenizer: CharTokenizer | None = None) -> Checkpoint:
    """Read a checkpoint written by `save_checkpoint` (with `weights_only=True`).

    Without `model`/`tokenizer`, both are rebuilt from the file. Given, they must match it: a checkpoint
    made for another vocabulary or model shape is refused with a message saying what differs.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No checkpoint at {path}.")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # unpickling refused, or not a torch file at all
        raise ValueError(f"{path} is not a checkpoint this course can load safely: it holds objects other than "
                         f"tensors and plain data, or is damaged ({type(err).__name__}). Only load checkpoints "
                         "written by mlm_lib.training.save_checkpoint.") from None
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path} was not written by mlm_lib.training.save_checkpoint (format {CHECKPOINT_FORMAT}).")
    saved_tokenizer = CharTokenizer.from_dict(payload["tokenizer"])
    if tokenizer is not None and tokenizer != saved_tokenizer:
        extra = sorted(set(tokenizer.tokens) ^ set(saved_tokenizer.tokens))[:10]
        raise ValueError(f"{path} was trained with a different vocabulary ({saved_tokenizer.vocab_size} tokens, "
                         f"yours has {tokenizer.vocab_size}; differing: {extra}). Use the tokenizer stored in the "
                         "checkpoint: load_checkpoint(path).tokenizer.")
    config = BertConfig(**payload["model_config"])
    if model is None:
        model = BertForMLM(config)
    elif model.config.to_dict() != config.to_dict():
        diff = {k: (v, getattr(model.config, k)) for k, v in config.to_dict().items() if getattr(model.config, k) != v}
        raise ValueError(f"{path} holds a model with another configuration (checkpoint vs yours: {diff}). "
                         "Build the model from the checkpoint: load_checkpoint(path).model.")
    result = model.load_state_dict(payload["model"], strict=False)
    if result.unexpected_keys or result.missing_keys != ["head.word_embedding.weight"]:  # tied to the embedding
        raise ValueError(f"{path} does not hold this model's weights (missing {result.missing_keys}, "
                         f"unexpected {result.unexpected_keys}).")
    return Checkpoint(model, saved_tokenizer, payload["optimizer"], payload["train_state"])
