"""environment.yml (conda) and pyproject.toml (pip) must ask for the same packages."""
import re
import tomllib
from pathlib import Path

import yaml  # comes with papermill

ROOT = Path(__file__).resolve().parents[1]
CONDA_TO_PIP = {"pytorch": "torch"}


def names(specs):
    return {re.split(r"[<>=!~\[ ;]", s.strip(), maxsplit=1)[0].lower() for s in specs}


def test_conda_and_pip_name_the_same_packages():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pip = names(project["dependencies"]) | names(sum(project["optional-dependencies"].values(), []))
    deps = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    conda = names(d for d in deps if isinstance(d, str))
    conda |= names(sum((d["pip"] for d in deps if isinstance(d, dict)), []))
    conda = {CONDA_TO_PIP.get(n, n) for n in conda} - {"python", "pip"}
    assert conda == pip, f"only in environment.yml: {conda - pip}; only in pyproject.toml: {pip - conda}"
