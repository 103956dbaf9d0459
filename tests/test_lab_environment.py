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

from notebook_params import NOTEBOOKS, at_once

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


STUDENT_RUN = """
import json, sys
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

nb = nbformat.read(sys.argv[1], as_version=4)
for cell in nb.cells:  # one torch thread: two copies run at once on the course's 2-core machine
    if "parameters" in cell.metadata.get("tags", []):
        cell.source += "\\nthreads = 1"
client = NotebookClient(nb, timeout=int(sys.argv[2]), kernel_name="python3")
stopped = {"index": None}
with client.setup_kernel():
    for index, cell in enumerate(nb.cells):
        try:
            client.execute_cell(cell, index)
        except CellExecutionError as error:
            stopped = {"index": index, "ename": error.ename, "evalue": error.evalue}
            break
print(json.dumps(stopped))
"""


@pytest.mark.slow
def test_student_copies_run_where_make_lab_installs(tmp_path):
    """A student's situation, end to end: the environment exactly as `make lab` builds it (its own Makefile target,
    no test extra), the student copies `python -m mlm_lib.course.student` writes, each run with that
    environment's own kernel from the repository root (not the notebook's folder) up to its first exercise,
    where the check must reject the blank answer, naming it. (The teaching notebooks themselves are run by
    nbval, papermill and nbgrader in the test environment; every import they make is checked against what
    `make lab` installs by the test above.)"""
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    import nbformat
    import torch

    from mlm_lib.course.student import STUB
    from notebook_params import CELL_TIMEOUT

    venv = tmp_path / "lab"
    python = venv / "bin" / "python"

    def run(*command, **kwargs):
        result = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=1800, **kwargs)
        assert result.returncode == 0, f"{command}:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
        return result

    run(sys.executable, "-m", "venv", venv)
    # as .ci/run does (and the README's CPU advice): the CPU build first, so the project's range is met
    run(python, "-m", "pip", "install", "--quiet", f"torch=={torch.__version__}")
    run("make", "--no-print-directory", f"{venv}/.lab-installed", f"VENV={venv}", cwd=ROOT)  # make lab's install
    probe = subprocess.run([str(python), "-c", "import papermill"], capture_output=True)
    assert probe.returncode != 0, "the test tools must not be in the lab environment, or this proves nothing"
    students = tmp_path / "student"
    run(python, "-m", "mlm_lib.course.student", ROOT / "notebooks", students, cwd=tmp_path)
    script = tmp_path / "run_student.py"
    script.write_text(STUDENT_RUN)
    copies = sorted(students.glob("*/[0-9][0-9]_*.ipynb"))
    assert [p.name for p in copies] == [p.name for p in NOTEBOOKS]

    def first_stop(copy):
        return json.loads(run(python, script, copy, CELL_TIMEOUT, cwd=ROOT).stdout.strip().splitlines()[-1])

    with ThreadPoolExecutor(max_workers=at_once()) as pool:  # one per core this test may use, one thread each
        stops = list(pool.map(first_stop, copies))
    for copy, stopped in zip(copies, stops):
        cells = nbformat.read(copy, as_version=4).cells
        first_solution = next(i for i, c in enumerate(cells) if c.cell_type == "code" and STUB in c.source)
        first_check = next(i for i, c in enumerate(cells) if i > first_solution and c.cell_type == "code")
        assert stopped["index"] == first_check, (copy.name, stopped)  # everything before the first exercise ran
        assert stopped["ename"] == "ExerciseError" and "Not written yet" in stopped["evalue"], (copy.name, stopped)
