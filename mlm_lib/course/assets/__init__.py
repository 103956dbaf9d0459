"""What the course ships: the reference model (checkpoints/) and full experiment results (results/).

Each file here was made by a command in `mlm_lib.experiments`; the README beside it gives the command, the
machine and the time. These loaders read them from the installed package, so notebooks find them from
any folder.
"""
from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

from ...checkpoints import Checkpoint, load_checkpoint
from ...curriculum import summarize

_HERE = files(__name__)


def reference_checkpoint(name: str = "shakespeare-char") -> Checkpoint:
    """The pretrained model shipped with the course (`checkpoints/NAME.pt`), loaded safely.

    "shakespeare-char": the reference model (notebooks 00, 06, 12, 14), trained through length 128 in 15 minutes
    by the speedrun command; "shakespeare-char-64": the first one (50 minutes, through 64), with which the
    fine-tuning results of notebook 11 were measured; "shakespeare-wordpiece": notebook 09's. The commands that
    made each are in checkpoints/README.md.
    """
    path = _HERE / "checkpoints" / f"{name}.pt"
    if not path.is_file():
        raise FileNotFoundError(f"No shipped checkpoint {name!r}. Train one: "
                                f"python -m mlm_lib.experiments.pretrain --config {name}")
    return load_checkpoint(path)


def reference_checkpoint_path(name: str = "shakespeare-char") -> Path:
    """Where the shipped checkpoint `name` is, as a file path (for a command that takes a model file)."""
    return Path(str(_HERE / "checkpoints" / f"{name}.pt"))


def reference_log(name: str = "shakespeare-char") -> dict:
    """The training log written beside the shipped checkpoint (command, wall time, history, evaluation)."""
    return json.loads((_HERE / "checkpoints" / f"{name}.json").read_text())


def load_results(name: str = "curriculum-full") -> dict:
    """Shipped experiment results (`results/NAME.json`, see the README there), with the summary recomputed
    from the runs by this version of `mlm_lib.curriculum.summarize`."""
    path = _HERE / "results" / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(f"No shipped results {name!r} in {_HERE / 'results'}.")
    result = json.loads(path.read_text())
    result["summary"] = summarize(result["runs"])
    return result


def load_json_results(name: str) -> dict:
    """Shipped experiment results as the command wrote them (`results/NAME.json`, e.g. "whole_word")."""
    path = _HERE / "results" / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(f"No shipped results {name!r} in {_HERE / 'results'}.")
    return json.loads(path.read_text())


def load_model(path=None, *, name: str = "shakespeare-char") -> Checkpoint:
    """The model a notebook explores: the shipped one called `name` when `path` is None, else a `model.pt`
    written by `python -m mlm_lib.experiments.pretrain` (for a model of your own corpus). A `path` that holds no
    readable model is a ParameterError: the notebooks take it from their `model_path` parameter."""
    if path is None:
        return reference_checkpoint(name)
    try:
        return load_checkpoint(path)
    except (FileNotFoundError, ValueError) as err:  # no file, a folder, a damaged or foreign file: say what to set
        from ..checks._common import ParameterError
        raise ParameterError(f"model_path: {err} Set model_path in the parameters cell to a model.pt written by "
                             "python -m mlm_lib.experiments.pretrain, or to None for the shipped model.") from None


def load_model_log(path=None) -> dict:
    """The training log of that model: the shipped one, or the log a command wrote beside `path` (`NAME.json` for a
    model kept by `speedrun --keep-models` as NAME.pt, `log.json` beside pretrain's model.pt)."""
    if path is None:
        return reference_log()
    for log in (Path(path).with_suffix(".json"), Path(path).parent / "log.json"):
        if log.is_file():
            return json.loads(log.read_text())
    raise FileNotFoundError(f"No log beside {path}: the pretrain command writes log.json with model.pt "
                            "(python -m mlm_lib.experiments.pretrain --out FOLDER), and speedrun --keep-models "
                            "NAME.json with NAME.pt.")
