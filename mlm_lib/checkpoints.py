"""Saving and loading a model with its tokenizer (and, to resume training, the optimiser and the loop's state).

Taught in notebook 05 (training), §6. One file holds everything a later session needs: the weights, the
model's configuration, the tokenizer, and optionally the optimiser and training state. Only tensors,
numbers, strings, lists and dicts go in, so it loads with `torch.load(..., weights_only=True)`, which
refuses pickled objects. That greatly reduces the risk of opening a file from elsewhere, but does not
remove it (CVE-2025-32434 ran code through `weights_only=True` in torch <= 2.5.1): load only files you trust.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import torch

from .data import CharTokenizer
from .model import BertConfig, BertEncoder, BertForMLM, BertForPreTraining, BertForSequenceClassification
from .wordpiece import WordPieceTokenizer

CHECKPOINT_FORMAT = "mlm_lib-checkpoint-1"
_TIED = "head.word_embedding.weight"  # the decoder *is* the word embedding: stored once


@dataclass
class Checkpoint:
    model: BertEncoder
    tokenizer: CharTokenizer | WordPieceTokenizer
    optimizer_state: dict | None
    train_state: dict | None


def atomic_save(obj, path) -> None:
    """`torch.save` to a temporary file beside `path`, then rename: a crash never leaves half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        torch.save(obj, tmp)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


# The model classes a checkpoint can rebuild, by name. Classes built later in the course join it with
# `register_model` where they are defined (ELECTRA's two halves, in `mlm_lib.electra`), so this module, read in
# notebook 05, needs to know nothing of them.
MODEL_CLASSES = {"BertForMLM": BertForMLM, "BertForPreTraining": BertForPreTraining,
                 "BertForSequenceClassification": BertForSequenceClassification}


def register_model(cls: type) -> type:
    """Let checkpoints save and rebuild `cls` (a subclass of `BertEncoder` built from a `BertConfig`)."""
    if not (isinstance(cls, type) and issubclass(cls, BertEncoder)):
        raise TypeError(f"Checkpoints hold the course's encoders (BertEncoder subclasses), not {cls!r}.")
    MODEL_CLASSES[cls.__name__] = cls
    return cls
TOKENIZERS = {"CharTokenizer": CharTokenizer, "WordPieceTokenizer": WordPieceTokenizer}


def tokenizer_from_dict(data: dict):
    """Rebuild the tokenizer a checkpoint stores, whichever of the course's two it is."""
    kind = TOKENIZERS.get(data.get("type") if isinstance(data, dict) else None)
    if kind is None:
        raise ValueError(f"Unknown tokenizer in this checkpoint; expected one of {sorted(TOKENIZERS)}.")
    return kind.from_dict(data)


def save_checkpoint(path, model: BertEncoder, tokenizer, optimizer=None, train_state=None) -> None:
    """Write weights, model config, tokenizer and (optionally) optimiser and training state to one file."""
    if tokenizer.vocab_size != model.config.vocab_size:
        raise ValueError(f"Tokenizer has {tokenizer.vocab_size} tokens but the model {model.config.vocab_size}: "
                         "they do not belong together.")
    weights = {k: v for k, v in model.state_dict().items() if k != _TIED}
    if type(model).__name__ not in MODEL_CLASSES:
        raise TypeError(f"save_checkpoint saves the course's models ({', '.join(MODEL_CLASSES)}), got {type(model).__name__}.")
    payload = {"format": CHECKPOINT_FORMAT, "model_class": type(model).__name__,
               "model_config": model.config.to_dict(), "tokenizer": tokenizer.to_dict(),
               "model_options": model.options() if hasattr(model, "options") else {},
               "model": weights, "optimizer": optimizer.state_dict() if optimizer is not None else None,
               "train_state": train_state}
    atomic_save(payload, path)


def load_checkpoint(path, *, model: BertEncoder | None = None, tokenizer=None) -> Checkpoint:
    """Read a checkpoint written by `save_checkpoint` (with `weights_only=True`).

    Without `model`/`tokenizer`, both are rebuilt from the file. Given, they must match it: a checkpoint
    made for another vocabulary or model shape is refused with a message saying what differs.
    """
    path = Path(path)
    if path.is_dir():
        inside = ", ".join(p.name for p in sorted(path.glob("*.pt"))) or "no .pt file"
        raise FileNotFoundError(f"{path} is a folder ({inside}): give the checkpoint file in it, e.g. "
                                f"{path / 'model.pt'} (a run folder's weights; resume.pt holds the training state).")
    if not path.is_file():
        raise FileNotFoundError(f"No checkpoint at {path}.")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # unpickling refused, or not a torch file at all
        raise ValueError(f"{path} is not a checkpoint this course can load safely: it holds objects other than "
                         f"tensors and plain data, or is damaged ({type(err).__name__}). Only load checkpoints "
                         "written by mlm_lib.save_checkpoint.") from None
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path} was not written by mlm_lib.save_checkpoint (format {CHECKPOINT_FORMAT}).")
    saved_tokenizer = tokenizer_from_dict(payload["tokenizer"])
    if tokenizer is not None and tokenizer != saved_tokenizer:
        extra = sorted(set(tokenizer.tokens) ^ set(saved_tokenizer.tokens))[:10]
        raise ValueError(f"{path} was trained with a different vocabulary ({saved_tokenizer.vocab_size} tokens, "
                         f"yours has {tokenizer.vocab_size}; differing: {extra}). Use the tokenizer stored in the "
                         "checkpoint: load_checkpoint(path).tokenizer.")
    config = BertConfig(**payload["model_config"])
    kind = MODEL_CLASSES.get(payload.get("model_class", "BertForMLM"))  # files from before pretraining heads: MLM
    if kind is None:
        raise ValueError(f"{path} holds a {payload.get('model_class')!r}, not one of {sorted(MODEL_CLASSES)}.")
    options = payload.get("model_options") or {}
    if model is None:
        model = kind(config, **options)
    elif type(model) is not kind:
        raise ValueError(f"{path} holds a {kind.__name__}, not a {type(model).__name__}: build the model from the "
                         "checkpoint: load_checkpoint(path).model.")
    elif model.config.to_dict() != config.to_dict():
        diff = {k: (v, getattr(model.config, k)) for k, v in config.to_dict().items() if getattr(model.config, k) != v}
        raise ValueError(f"{path} holds a model with another configuration (checkpoint vs yours: {diff}). "
                         "Build the model from the checkpoint: load_checkpoint(path).model.")
    elif options and model.options() != options:
        raise ValueError(f"{path} holds a classifier with {options}, yours has {model.options()}: build the model "
                         "from the checkpoint: load_checkpoint(path).model.")
    result = model.load_state_dict(payload["model"], strict=False)
    if result.unexpected_keys or result.missing_keys != ([_TIED] if hasattr(model, "head") else []):
        raise ValueError(f"{path} does not hold this model's weights (missing {result.missing_keys}, "
                         f"unexpected {result.unexpected_keys}).")
    return Checkpoint(model, saved_tokenizer, payload["optimizer"], payload["train_state"])
