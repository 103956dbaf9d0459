"""A left-to-right language model: the same network as BERT with a causal mask, predicting the next token.

Taught in notebook 13 (masked against left-to-right): the two objectives side by side in §1, the causal mask in
§2, what each learns per step and what each is worth after fine-tuning in §3.

The difference from masked-LM pretraining is small to write and large in effect:
* the input is a window as it is, nothing masked; the label of position i is the token at i + 1;
* a causal mask (`BertConfig(causal=True)`, `attention.causal_bias`) lets position i attend to 0..i only, so it
  cannot read the answer;
* every position carries a loss (against 15% under MLM), but every prediction sees only its left context.
BERT's §C.1 (Figure 5) measured what that buys: the left-to-right model's pretraining converges faster, the
masked model's fine-tuned accuracy overtakes it almost at once. Notebook 13 measures the same at this scale, with
`NextToken`, the objective `training.train` runs for it.
"""
from __future__ import annotations

import numbers

import torch
import torch.nn.functional as F

from .data import random_windows
from .training import train_step


def next_token_batch(ids: torch.Tensor, batch_size: int, length: int, generator: torch.Generator | None = None):
    """Random windows of `length + 1` tokens, split into (inputs, labels): labels are the inputs shifted by one,
    so position i is trained to predict token i + 1 from tokens 0..i."""
    if isinstance(length, bool) or not isinstance(length, numbers.Integral) or length < 1:
        raise ValueError(f"length must be a whole number >= 1, got {length!r}.")
    windows = random_windows(ids, batch_size, length + 1, generator)
    return windows[:, :-1], windows[:, 1:]


def _check_causal(model) -> None:
    if not getattr(model.config, "causal", False):
        raise ValueError("This model attends both ways: predicting the next token it could simply read it. Build a "
                         "left-to-right model with BertConfig(..., causal=True).")


@torch.no_grad()
def evaluate_next_token(model, ids: torch.Tensor, *, length: int, windows: int = 256, batch_size: int = 64) -> dict:
    """Next-token loss (nats) and accuracy on `windows` windows spread evenly over held-out `ids`."""
    _check_causal(model)
    if len(ids) < length + 1:
        raise ValueError(f"The held-out text has {len(ids)} tokens, fewer than one window of {length} + 1.")
    starts = torch.linspace(0, len(ids) - length - 1, windows).long()
    batch = ids[starts[:, None] + torch.arange(length + 1)]
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    loss, right = 0.0, 0
    for i in range(0, windows, batch_size):
        x, y = batch[i:i + batch_size, :-1].to(device), batch[i:i + batch_size, 1:].to(device)
        logits = model(x)
        loss += F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="sum").item()
        right += int((logits.argmax(-1) == y).sum())
    model.train(was_training)
    count = windows * length
    return {"loss": loss / count, "accuracy": right / count, "predictions": count}


class NextToken:
    """The left-to-right objective, as `training.train` runs it (notebook 13): random windows of the training
    ids (`train_data`), each position trained to predict the next token; held out, next-token loss and accuracy
    on `config.eval_windows` windows of the schedule's final length spread over `val_data`. The model must be
    causal (`BertConfig(causal=True)`): one that attends both ways could read the answer."""

    distributed = False

    def check(self, tokenizer, train_data, val_data, config) -> None:
        for what, ids in (("training", train_data), ("held-out", val_data)):
            if not isinstance(ids, torch.Tensor) or ids.dim() != 1:
                raise ValueError(f"The {what} data of NextToken must be a 1-D tensor of token ids.")

    def batch(self, tokenizer, train_data, config, progress: float, generator) -> dict:
        inputs, labels = next_token_batch(train_data, config.schedule.batch_size_at(progress, config.tokens_per_batch),
                                          config.schedule.length_at(progress), generator)
        return {"inputs": inputs, "labels": labels}

    def step(self, model, optimizer, batch: dict, config, *, world, autocast_dtype=None, scaler=None) -> dict:
        _check_causal(model)  # the same step as the masked LM's: here every position is a prediction
        loss, accuracy = train_step(model, optimizer, batch["inputs"].to(world.device), batch["labels"].to(world.device),
                                    grad_clip=config.grad_clip, autocast_dtype=autocast_dtype, scaler=scaler)
        return {"loss": loss, "accuracy": accuracy, "predictions": batch["labels"].numel()}

    def evaluate(self, model, tokenizer, val_data, config) -> dict:
        return evaluate_next_token(model, val_data, length=config.schedule.length_at(1.0), windows=config.eval_windows)

    def tokens(self, batch: dict) -> int:
        return batch["inputs"].numel()
