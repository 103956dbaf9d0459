"""Saving and loading a model with its tokenizer (and, to resume training, the optimiser and the loop's state).

Taught in notebook 05 (training), §6. One file holds everything a later session needs: the weights, the
model's configuration, the tokenizer, and optionally the optimiser and training state. Only tensors,
numbers, strings, lists and dicts go in, so it loads with `torch.load(..., weights_only=True)`, which
refuses pickled objects. That greatly reduces the risk of opening a file from elsewhere, but does not
remove it (CVE-2025-32434 ran code through `weights_only=True` in torch <= 2.5.1): load only files you trust.

A file also carries a checksum (sha256) of what it holds, checked on loading: a few flipped bytes on a disk or
in a copy would otherwise load as a model with some wrong weights, silently. Files of format 1 (before the
checksum) still load; `python -m mlm_lib.experiments.upgrade FILE` re-saves one in this format, tensors bit for
bit. Every write goes through a temporary file and a rename (`atomic_write`), so a crash, a full disk or a lost
permission never leaves half a file, nor harms the copy that was there.
"""
from __future__ import annotations

import hashlib
import os
from contextlib import suppress
from dataclasses import dataclass, fields
from pathlib import Path

import torch

from .data import CharTokenizer
from .model import BertConfig, BertEncoder, BertForMLM, BertForPreTraining, BertForSequenceClassification
from .wordpiece import WordPieceTokenizer

CHECKPOINT_FORMAT = "mlm_lib-checkpoint-2"  # 2: with a checksum; 1 (before it) still loads
_FORMATS = {"mlm_lib-checkpoint-1": 1, "mlm_lib-checkpoint-2": 2}
_REQUIRED = ("model_config", "tokenizer", "model")  # and model_class, which the first files lack: BertForMLM
_TIED = "head.word_embedding.weight"  # the decoder *is* the word embedding: stored once
MASKED_LM = ("BertForMLM", "BertForPreTraining")  # what `expect=MASKED_LM` accepts: a model that fills blanks
# how a refusal names what a file holds instead
KINDS = {"BertForMLM": "a masked LM", "BertForPreTraining": "a masked LM with a sentence head",
         "BertForSequenceClassification": "a classifier", "ElectraDiscriminator": "ELECTRA's discriminator",
         "ElectraGenerator": "ELECTRA's generator"}


@dataclass
class Checkpoint:
    model: BertEncoder
    tokenizer: CharTokenizer | WordPieceTokenizer
    optimizer_state: dict | None
    train_state: dict | None


class WriteError(OSError):
    """A file could not be written (a full disk, a lost permission): `filename` names it; what was there is intact."""


def atomic_write(path, write) -> Path:
    """Write a file whole or not at all: `write(f)` fills a temporary file beside it, which is flushed to the disk
    and then renamed over it. A crash leaves the old file, and so does an `OSError` (a full disk, a lost
    permission), which is raised with the file's name and the copy there untouched. A symbolic link is written
    through: its target is replaced (or created, for a link that points nowhere yet) and the link stays a link."""
    target = Path(os.path.realpath(path))
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        tmp.replace(target)
    except OSError as err:
        raise WriteError(err.errno, err.strerror or str(err), str(target)) from None
    finally:
        with suppress(OSError):
            tmp.unlink(missing_ok=True)
    return target


def atomic_save(obj, path) -> None:
    """`torch.save` through `atomic_write`: a crash never leaves half a file."""
    atomic_write(path, lambda f: torch.save(obj, f))


def checksum(payload: dict) -> str:
    """sha256 of everything a checkpoint holds but its checksum: every tensor's dtype, shape and bytes, and the
    plain data (configuration, tokenizer, training state), in a fixed order."""
    digest = hashlib.sha256()

    def feed(value):
        if isinstance(value, torch.Tensor):
            t = value.detach().cpu().contiguous()
            digest.update(f"<{t.dtype} {tuple(t.shape)}>".encode())
            digest.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
        elif isinstance(value, dict):
            digest.update(b"{")
            for key in sorted(value, key=repr):
                feed(key)
                feed(value[key])
            digest.update(b"}")
        elif isinstance(value, (list, tuple)) and not all(isinstance(v, (int, float, str, type(None))) for v in value):
            digest.update(b"[")
            for item in value:
                feed(item)
            digest.update(b"]")
        else:  # numbers, strings, and lists of them (a long history) at once
            digest.update(repr(list(value) if isinstance(value, tuple) else value).encode() + b";")

    feed({k: v for k, v in payload.items() if k != "checksum"})
    return digest.hexdigest()


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
    """Write weights, model config, tokenizer and (optionally) optimiser and training state to one file, with the
    checksum `load_checkpoint` verifies."""
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
    payload["checksum"] = checksum(payload)
    atomic_save(payload, path)


def read_payload(path) -> dict:
    """The checked contents of a checkpoint file: loaded with `weights_only=True`, of a format this version reads,
    with every part a checkpoint has, and (format 2) equal to its checksum. Each way a file can fail is refused
    with a ValueError (FileNotFoundError for no file) that says what the file is and what to do."""
    path = Path(path)
    if path.is_dir():
        inside = ", ".join(p.name for p in sorted(path.glob("*.pt"))) or "no .pt file"
        raise FileNotFoundError(f"{path} is a folder ({inside}): give the checkpoint file in it, e.g. "
                                f"{path / 'model.pt'} (a run folder's weights; resume.pt holds the training state).")
    if not path.is_file():
        raise FileNotFoundError(f"No checkpoint at {path}.")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except PermissionError:
        raise ValueError(f"{path} cannot be read (no permission): give a checkpoint you can read.") from None
    except Exception as err:  # unpickling refused, or not a torch file at all
        raise ValueError(f"{path} is not a checkpoint this course can load safely: it holds objects other than "
                         f"tensors and plain data, or is damaged ({type(err).__name__}). Only load checkpoints "
                         "written by mlm_lib.save_checkpoint.") from None
    version = payload.get("format") if isinstance(payload, dict) else None
    if isinstance(version, str) and version.startswith("mlm_lib-checkpoint-") and version not in _FORMATS:
        raise ValueError(f"{path} was written by a newer mlm_lib (checkpoint format {version!r}; this version reads "
                         f"up to {CHECKPOINT_FORMAT!r}): upgrade mlm_lib to load it.")
    missing = [key for key in _REQUIRED if not isinstance(payload, dict) or key not in payload]
    if version not in _FORMATS or missing:
        lacks = f" (it lacks {', '.join(missing)})" if version in _FORMATS else ""
        raise ValueError(f"{path} is not a checkpoint of this course{lacks}: load files written by "
                         "mlm_lib.save_checkpoint (a run's model.pt or resume.pt).")
    if _FORMATS[version] >= 2 and payload.get("checksum") != checksum(payload):
        raise ValueError(f"{path} is damaged: its weights (or the data stored with them) do not match their "
                         "checksum. Use another copy of it, or train it again.")
    known = {f.name for f in fields(BertConfig)}
    unknown = sorted(set(payload["model_config"]) - known) if isinstance(payload["model_config"], dict) else []
    if unknown:
        raise ValueError(f"{path} holds a model with settings this version of mlm_lib does not know "
                         f"({', '.join(unknown)}): it was written by a newer mlm_lib; upgrade mlm_lib to load it.")
    return payload


def describe(model_class: str) -> str:
    """What a checkpoint's model class is, in words: 'a classifier', "ELECTRA's discriminator"..."""
    return f"{KINDS.get(model_class, 'a')} ({model_class})" if model_class in KINDS else f"a {model_class}"


def load_checkpoint(path, *, model: BertEncoder | None = None, tokenizer=None, expect=None,
                    map_location="cpu") -> Checkpoint:
    """Read a checkpoint written by `save_checkpoint` (with `weights_only=True`), checked as `read_payload` says.

    Without `model`/`tokenizer`, both are rebuilt from the file, and the model is moved to `map_location` (a
    device, default the CPU). Given, they must match it: a checkpoint made for another vocabulary or model shape
    is refused with a message saying what differs. `expect`: the model classes the caller can use, by name
    (`MASKED_LM` where blanks are filled); a file holding another kind (a classifier, an ELECTRA half) is refused.
    """
    payload = read_payload(path)
    path = Path(path)
    name = payload.get("model_class", "BertForMLM")  # files from before pretraining heads: MLM
    if expect is not None and name not in expect:
        wanted = " or ".join(describe(e) for e in expect)
        raise ValueError(f"{path} holds {describe(name)}, not {wanted}: give a model of that kind (for a masked LM: "
                         "the model.pt of `pretrain`, or a model kept by `speedrun --keep-models`).")
    saved_tokenizer = tokenizer_from_dict(payload["tokenizer"])
    if tokenizer is not None and tokenizer != saved_tokenizer:
        extra = sorted(set(tokenizer.tokens) ^ set(saved_tokenizer.tokens))[:10]
        raise ValueError(f"{path} was trained with a different vocabulary ({saved_tokenizer.vocab_size} tokens, "
                         f"yours has {tokenizer.vocab_size}; differing: {extra}). Use the tokenizer stored in the "
                         "checkpoint: load_checkpoint(path).tokenizer.")
    config = BertConfig(**payload["model_config"])
    kind = MODEL_CLASSES.get(name)
    if kind is None:
        raise ValueError(f"{path} holds a {name!r}, not one of {sorted(MODEL_CLASSES)}.")
    options = payload.get("model_options") or {}
    built = model is None
    if built:
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
    own = model.state_dict()
    for key, tensor in payload["model"].items():  # a file assembled from two models fails here, not in torch
        if key in own and (not isinstance(tensor, torch.Tensor) or tensor.shape != own[key].shape):
            shape = tuple(tensor.shape) if isinstance(tensor, torch.Tensor) else type(tensor).__name__
            raise ValueError(f"{path} does not hold the weights of the model it describes ({key}: {shape} in the "
                             f"file, {tuple(own[key].shape)} for its model_config): it is damaged, or made from "
                             "two files.")
    result = model.load_state_dict(payload["model"], strict=False)
    if result.unexpected_keys or result.missing_keys != ([_TIED] if hasattr(model, "head") else []):
        raise ValueError(f"{path} does not hold this model's weights (missing {result.missing_keys}, "
                         f"unexpected {result.unexpected_keys}).")
    if built:
        model = model.to(map_location)
    return Checkpoint(model, saved_tokenizer, payload.get("optimizer"), payload.get("train_state"))


def upgrade(path) -> str:
    """Re-save a checkpoint in this version's format, with its checksum; every tensor stays bit for bit what it
    was (only the format name and the checksum are added). Returns what was done, in words."""
    payload = read_payload(path)
    if payload["format"] == CHECKPOINT_FORMAT:
        return f"{path}: already {CHECKPOINT_FORMAT}, checksum verified"
    load_checkpoint(path)  # it must load as it is: nothing unreadable gets a checksum that vouches for it
    payload = dict(payload, format=CHECKPOINT_FORMAT)
    payload["checksum"] = checksum(payload)
    atomic_save(payload, path)
    return f"{path}: upgraded to {CHECKPOINT_FORMAT} (checksum {payload['checksum'][:12]}...)"
