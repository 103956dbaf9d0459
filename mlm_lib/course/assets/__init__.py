"""What the course ships: the reference model (checkpoints/) and full experiment results (results/).

Each file here was made by a command in `mlm_lib.experiments`; the README beside it gives the command, the
machine and the time. These loaders read them from the installed package, so notebooks find them from
any folder.
"""
from __future__ import annotations

import json
from importlib.resources import files

from ...checkpoints import Checkpoint, load_checkpoint
from ...curriculum import summarize

_HERE = files(__name__)


def reference_checkpoint(name: str = "shakespeare-char") -> Checkpoint:
    """The pretrained model shipped with the course (`checkpoints/NAME.pt`), loaded safely.

    Made by `python -m mlm_lib.experiments.pretrain --config NAME`; see checkpoints/README.md.
    """
    path = _HERE / "checkpoints" / f"{name}.pt"
    if not path.is_file():
        raise FileNotFoundError(f"No shipped checkpoint {name!r}. Train one: "
                                f"python -m mlm_lib.experiments.pretrain --config {name}")
    return load_checkpoint(path)


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
