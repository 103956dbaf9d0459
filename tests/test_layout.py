"""The library's three roles stay apart: imports go one way only, and every concept points to its lesson.

concepts (mlm_lib/*.py)  ->  course (mlm_lib/course/)  ->  experiments (mlm_lib/experiments/)
A concept never imports `course` or `experiments`; a course aid never imports `experiments`. Read from the
source with `ast`, so an import hidden inside a function counts too.
"""
import ast
from pathlib import Path

import pytest

import mlm_lib
from mlm_lib.course.student import course_notebooks

PACKAGE = Path(mlm_lib.__file__).parent
CONCEPTS = sorted(p for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
COURSE = sorted((PACKAGE / "course").rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Absolute names of everything `path` imports, relative imports resolved."""
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found.add(module)
            found |= {f"{module}.{alias.name}" for alias in node.names}  # `from . import course`
    return found


def forbidden(path: Path, prefixes: tuple[str, ...]) -> list[str]:
    return sorted(m for m in imported_modules(path) if m.startswith(prefixes))


def test_the_reader_resolves_relative_imports():
    course_checks = PACKAGE / "course" / "checks" / "nb04_encoder.py"
    assert "mlm_lib.model" in imported_modules(course_checks)  # written `from ...model import ...`
    assert "mlm_lib.course.checks._common" in imported_modules(course_checks)


def declared_order() -> list[str]:
    """The concepts' order, as the package docstring writes it once: `data -> wordpiece -> ... -> hf`."""
    doc = ast.get_docstring(ast.parse((PACKAGE / "__init__.py").read_text()))
    block = doc.split("at the top of its file", 1)[1].split("\n\n")[1]
    return [name.strip() for name in block.replace("\n", " ").split("->")]


def package_imports(path: Path) -> list[tuple[str, int, bool]]:
    """(concept imported, line, at the top of the file?) for every import of another `mlm_lib` concept in
    `path`, at any depth (an import inside a function is read too)."""
    found = []
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module] if node.module else [alias.name for alias in node.names]  # `from . import x`
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mlm_lib."):
            names = [node.module.split(".")[1]]
        elif isinstance(node, ast.Import):
            names = [a.name.split(".")[1] for a in node.names if a.name.startswith("mlm_lib.")]
        found += [(name.split(".")[0], node.lineno, id(node) in top) for name in names]
    return found


def test_the_order_names_every_concept_once():
    order = declared_order()
    assert sorted(order) == sorted(p.stem for p in CONCEPTS), "the package docstring's order lists each concept once"


def test_the_order_reader_sees_imports_inside_functions():
    hidden = ast.parse("def f():\n    from .training import train\n")
    assert isinstance(hidden.body[0].body[0], ast.ImportFrom)  # what package_imports walks into


@pytest.mark.parametrize("path", CONCEPTS, ids=lambda p: p.stem)
def test_concepts_import_only_earlier_concepts_at_the_top(path):
    """A learner who opens a concept module meets only what the course built before it: every import of another
    concept points up the declared order (so there is no cycle) and stands at the top of the file (none hidden
    inside a function to dodge a cycle)."""
    order = declared_order()
    here = order.index(path.stem)
    for name, line, at_top in package_imports(path):
        assert name in order, f"{path.name}:{line} imports mlm_lib.{name}, which is not a concept in the order"
        assert order.index(name) < here, (f"{path.name}:{line} imports {name}, which comes after {path.stem} in the "
                                          f"declared order: move what it needs down, or dispatch from the top")
        assert at_top, f"{path.name}:{line} imports {name} inside a function: import it at the top of the file"


@pytest.mark.parametrize("path", CONCEPTS, ids=lambda p: p.stem)
def test_concepts_import_no_course_aid_and_no_command(path):
    assert not forbidden(path, ("mlm_lib.course", "mlm_lib.experiments")), \
        f"{path.name} is a concept module: move what it needs from course/experiments into a concept module"


@pytest.mark.parametrize("path", COURSE, ids=lambda p: module_name(p))
def test_course_aids_import_no_command(path):
    assert not forbidden(path, ("mlm_lib.experiments",)), f"{path} is a course aid: it must not import a command"


def test_package_root_imports_concepts_only():
    assert not forbidden(PACKAGE / "__init__.py", ("mlm_lib.course", "mlm_lib.experiments"))


@pytest.mark.parametrize("path", CONCEPTS, ids=lambda p: p.stem)
def test_every_concept_says_where_the_course_teaches_it(path):
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    assert "notebook" in doc.lower() or "README" in doc, f"{path.name}: say where the course teaches it"


def test_public_api_is_reexported():
    for name in mlm_lib.__all__:
        assert getattr(mlm_lib, name) is not None
    from mlm_lib import masking, model, training
    assert (mlm_lib.BertForMLM, mlm_lib.MaskingConfig, mlm_lib.mask_tokens, mlm_lib.train, mlm_lib.train_step) == (
        model.BertForMLM, masking.MaskingConfig, masking.mask_tokens, training.train, training.train_step)


TRAINING_CALLS = {"backward", "train_step", "pair_train_step"}
# the one pretraining loop, and fine-tuning's (finetune.py says why it keeps its own); the benchmark times one
# step over and over (it trains nothing); Muon's `step` loops over its two optimisers (one step, not a loop)
LOOPS_ALLOWED = {"training.py", "finetune.py", "experiments/bench.py", "muon.py"}


def loops_that_train(path: Path) -> list[int]:
    """Line numbers of for/while loops in `path` whose body backpropagates or takes a training step."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.For, ast.While)):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Call):
                    name = getattr(inner.func, "attr", None) or getattr(inner.func, "id", None)
                    owner = getattr(getattr(inner.func, "value", None), "id", "")
                    if name in TRAINING_CALLS or (name == "step" and owner in ("optimizer", "objective")):
                        found.append(node.lineno)
                        break
    return found


def test_the_loop_reader_finds_a_training_loop():
    assert loops_that_train(PACKAGE / "training.py")  # train's `while` calls objective.step


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: module_name(p))
def test_only_training_runs_a_training_loop(path):
    if str(path.relative_to(PACKAGE)) in LOOPS_ALLOWED:
        return
    assert not loops_that_train(path), (f"{path} runs a training loop (lines {loops_that_train(path)}): call "
                                        "mlm_lib.training.train with an objective instead")


NOTEBOOKS = course_notebooks(PACKAGE.parent / "notebooks")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_import_no_command(path):
    import json

    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.startswith("mlm_lib.experiments") for n in names), \
                f"{path.name} imports a command ({names}): import what it needs from a concept module or mlm_lib.course"


def test_readme_stays_within_16000_characters():
    """README is the course's front page: the details live in docs/ (issue 51 set the bound)."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert len(readme) <= 16_000, f"README.md has {len(readme):,} characters: move detail to docs/"


def test_the_slowest_files_start_first_under_xdist():
    """`make test` keeps collection order (`--no-loadscope-reorder`), and conftest moves the slowest files, each
    whole and in its own order, to the front; every file it names exists, so a rename cannot silently drop one."""
    from types import SimpleNamespace

    import conftest

    ROOT = PACKAGE.parent
    assert "--no-loadscope-reorder" in (ROOT / "Makefile").read_text()
    for path in conftest.HEAVY_FIRST:
        assert (ROOT / path).is_file(), path
    ids = ["tests/test_a.py::x", "tests/test_gpu.py::one", "tests/test_a.py::y", "tests/test_gpu.py::two",
           "tests/test_lab_environment.py::z"]
    items = [SimpleNamespace(nodeid=i) for i in ids]
    conftest.pytest_collection_modifyitems(None, items)
    assert [i.nodeid for i in items] == ["tests/test_lab_environment.py::z", "tests/test_gpu.py::one",
                                         "tests/test_gpu.py::two", "tests/test_a.py::x", "tests/test_a.py::y"]
