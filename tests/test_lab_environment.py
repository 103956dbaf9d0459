"""`make lab` installs everything the notebooks import.

`make lab` runs `pip install -e .` (no extras): the notebooks must need nothing from the `test` extra. This
reads every import of every notebook and of `mlm_lib` itself, finds the installed distribution that
provides it, and checks that the distribution is in what `pip install .` pulls in: the project's own
requirements without extras, followed through their requirements. (A notebook importing `transformers`
while it sat only in the test extra is exactly what a user met in JupyterLab: ModuleNotFoundError.)
"""
import ast
import importlib.metadata as md
import json
import re
import sys
from pathlib import Path

import pytest

from notebook_params import NOTEBOOKS, with_small_parameters

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;(]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def base_install() -> set[str]:
    """Distributions `pip install .` installs: the requirements without an `extra ==` marker, recursively."""
    seen, todo = set(), ["mlm-course"]
    while todo:
        dist = todo.pop()
        for requirement in md.requires(dist) or []:
            if "extra ==" in requirement.replace('"', "").replace("'", ""):
                continue
            if ";" in requirement:  # an environment marker: keep it only where it holds here
                from packaging.requirements import Requirement
                if not Requirement(requirement).marker.evaluate({"extra": ""}):
                    continue
            name = _name(requirement)
            if name not in seen:
                seen.add(name)
                try:
                    md.distribution(name)
                except md.PackageNotFoundError:
                    continue
                todo.append(name)
    return seen


def imports_of(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


def third_party(modules: set[str]) -> dict[str, set[str]]:
    """module -> the distributions providing it, for modules outside the standard library and this project."""
    providers = md.packages_distributions()
    return {m: {d.lower().replace("_", "-") for d in providers.get(m, [])} for m in modules
            if m not in sys.stdlib_module_names and m not in ("mlm_lib", "__future__")}


def notebook_imports() -> set[str]:
    names = set()
    for path in NOTEBOOKS:
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                names |= imports_of("".join(cell["source"]))
    return names


def library_imports() -> set[str]:
    return set().union(*(imports_of(p.read_text()) for p in (ROOT / "mlm_lib").rglob("*.py")))


@pytest.mark.parametrize("where, modules", [("notebooks", notebook_imports), ("mlm_lib", library_imports)])
def test_make_lab_installs_every_import(where, modules):
    installed = base_install()
    missing = {m: dists for m, dists in third_party(modules()).items() if not dists & installed}
    assert not missing, f"{where} import {missing}, which `make lab` (pip install -e .) does not install: " \
                        "add them to [project] dependencies in pyproject.toml and to environment.yml"


def test_the_check_sees_a_test_only_package():
    assert "papermill" in third_party({"papermill"}) and not third_party({"papermill"})["papermill"] & base_install()
    assert "transformers" in base_install() and "ipywidgets" in base_install()


@pytest.mark.slow
def test_every_notebook_runs_where_make_lab_installs(tmp_path):
    """Build the environment exactly as `make lab` does (its own Makefile target, no test extra), then run
    every notebook there with the small parameters, with that environment's own Jupyter and kernel."""
    import subprocess

    import torch

    venv = tmp_path / "lab"
    python = venv / "bin" / "python"

    def run(*command, **kwargs):
        result = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=1800, **kwargs)
        assert result.returncode == 0, f"{command}:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
        return result

    run(sys.executable, "-m", "venv", venv)
    # as .ci/run does (and TORCH_INDEX on a Linux laptop): the CPU build first, so the project's range is met
    run(python, "-m", "pip", "install", "--quiet", f"torch=={torch.__version__}")
    run("make", "--no-print-directory", f"{venv}/.lab-installed", f"VENV={venv}", cwd=ROOT)  # make lab's install
    probe = subprocess.run([str(python), "-c", "import papermill"], capture_output=True)
    assert probe.returncode != 0, "the test tools must not be in the lab environment, or this proves nothing"
    for path in NOTEBOOKS:
        copy = tmp_path / path.parent.name / path.name
        with_small_parameters(path, copy)
        run(venv / "bin" / "jupyter", "nbconvert", "--to", "notebook", "--execute", "--inplace",
            "--ExecutePreprocessor.timeout=300", "--ExecutePreprocessor.kernel_name=python3", copy,
            cwd=copy.parent)
