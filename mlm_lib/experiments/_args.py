"""What the commands share: argument types that refuse impossible values, output paths checked before any
work starts, and writes that never leave half a file."""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import torch


def whole_number(minimum: int = 1):
    """An argparse type: a whole number >= minimum, refused with the reason otherwise."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {minimum}, got {value}")
        return value
    return parse


def _writable_folder(folder: Path) -> bool:
    """Whether `folder` (or the nearest existing folder above it, where it would be made) takes new files."""
    while not folder.exists():
        folder = folder.parent
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def output_file(parser: argparse.ArgumentParser, option: str, path) -> Path | None:
    """Check before the work that `path` can be written as a file; stop with a usage error otherwise."""
    if path is None:
        return None
    path = Path(path)
    if path.is_dir():
        parser.error(f"{option} {path} is a folder: give a file name, e.g. {path / 'results.json'}")
    if not _writable_folder(path.parent):
        parser.error(f"{option} {path}: cannot write in {path.parent} (not a folder, or no permission)")
    return path


def output_folder(parser: argparse.ArgumentParser, option: str, path) -> Path:
    """Check before the work that `path` is, or can become, a folder this process can write in."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        parser.error(f"{option} {path} is a file: give a folder for the outputs")
    if not _writable_folder(path):
        parser.error(f"{option} {path}: cannot write there (no permission)")
    return path


def device(parser: argparse.ArgumentParser, name: str) -> str:
    """`name` if torch can compute on it here; a usage error that says what to use otherwise."""
    try:
        kind = torch.device(name).type
    except RuntimeError:
        parser.error(f"--device {name!r} is not a device torch knows: use cpu, cuda or cuda:N")
    if kind == "cuda" and not torch.cuda.is_available():
        parser.error(f"--device {name}: CUDA is not available here (torch {torch.__version__}, "
                     f"{'built without CUDA' if torch.version.cuda is None else 'no GPU found'}); use --device cpu")
    return name


def write_json(path, data, **dump_args) -> None:
    """Write JSON through a temporary file and a rename, so a crash never leaves a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(data, **dump_args))
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def machine() -> str:
    return f"{platform.machine()}, {torch.get_num_threads()} threads, torch {torch.__version__}"


def today() -> str:
    return time.strftime("%Y-%m-%d")
