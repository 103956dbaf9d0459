"""Student copies of the notebooks, and the cell metadata that lets nbgrader grade them.

    python -m mlm_lib.course.student notebooks student     (or: make student)

In a teaching notebook, an exercise's solution sits between two marker lines in a code cell:

    def my_function(x):
        ### BEGIN SOLUTION
        return x + 1
        ### END SOLUTION

and the next code cell calls a check from `mlm_lib.course.checks`. The student copy keeps the cell but
replaces the marked lines with `raise NotImplementedError(...)`, at the same indentation, so the check
below explains that the exercise is still to do. The markers are nbgrader's own, and every solution cell
and check cell carries nbgrader's metadata (`mark_for_nbgrader`), so instructors can also run
`nbgrader generate_assignment` and `nbgrader autograde` on the notebooks as they are (README, "For
instructors").
"""
from __future__ import annotations

import argparse
import copy
import re
from pathlib import Path

import nbformat

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
STUB = 'raise NotImplementedError("Exercise: write your answer here")'
POINTS = 1  # per exercise


def strip_solutions(source: str) -> str:
    out, inside = [], False
    for line in source.splitlines():
        marker = line.strip()
        if marker == BEGIN:
            if inside:
                raise ValueError("Nested '### BEGIN SOLUTION' markers.")
            inside = True
            out.append(line[: len(line) - len(line.lstrip())] + STUB)
        elif marker == END:
            if not inside:
                raise ValueError("'### END SOLUTION' without a BEGIN.")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError("'### BEGIN SOLUTION' without an END.")
    return "\n".join(out)


def exercises(nb) -> list[tuple[int, int]]:
    """(solution cell, check cell) indices: each code cell with a solution and the code cell after it."""
    cells, pairs = nb["cells"], []
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "code" and BEGIN in "".join(cell["source"]):
            check = next((j for j in range(i + 1, len(cells)) if cells[j]["cell_type"] == "code"), None)
            if check is None or "check_" not in "".join(cells[check]["source"]):
                raise ValueError(f"The solution in cell {i} has no check cell after it (a code cell calling a "
                                 "check from mlm_lib.course.checks).")
            pairs.append((i, check))
    return pairs


def nbgrader_metadata(kind: str, grade_id: str) -> dict:
    """nbgrader's cell metadata (schema 3) for a 'solution' cell or an autograded 'check' cell."""
    meta = {"grade": kind == "check", "grade_id": grade_id, "locked": kind == "check", "schema_version": 3,
            "solution": kind == "solution", "task": False}
    if kind == "check":
        meta["points"] = POINTS
    return meta


SOLUTION_MARKER = "*Solution (click to expand) — try your own answer first.*"
FOLD_TAG = "hide-input"  # the book (MyST) folds a cell with this tag; JupyterLab reads `jupyter.source_hidden`


def _is_marker(cell) -> bool:
    return cell["cell_type"] == "markdown" and "".join(cell["source"]).strip() == SOLUTION_MARKER


def _marker_cell(number: int) -> dict:
    return {"cell_type": "markdown", "id": f"solution-{number}", "metadata": {}, "source": [SOLUTION_MARKER]}


def mark_for_nbgrader(nb, prefix: str):
    """A copy of `nb` ready for both kinds of learners: every solution cell and check cell carries nbgrader
    metadata (ids `PREFIX-exN-...`), and every solution is folded (JupyterLab's hidden-source metadata, the
    book's `hide-input` tag) under a one-line "Solution (click to expand)" marker, so that someone studying
    alone meets the exercise before its answer. nbval, nbgrader and papermill run folded cells as usual."""
    nb = copy.deepcopy(nb)
    found = exercises(nb)
    for n, (solution, _) in reversed(list(enumerate(found, start=1))):  # from the end: indices stay valid
        if solution == 0 or not _is_marker(nb["cells"][solution - 1]):
            nb["cells"].insert(solution, _marker_cell(n))
    for n, (solution, check) in enumerate(exercises(nb), start=1):
        cell = nb["cells"][solution]
        cell["metadata"]["nbgrader"] = nbgrader_metadata("solution", f"{prefix}-ex{n}-solution")
        cell["metadata"].setdefault("jupyter", {})["source_hidden"] = True
        tags = cell["metadata"].setdefault("tags", [])
        if FOLD_TAG not in tags:
            tags.append(FOLD_TAG)
        nb["cells"][check]["metadata"]["nbgrader"] = nbgrader_metadata("check", f"{prefix}-ex{n}-check")
        nb["cells"][solution - 1]["id"] = f"solution-{n}"
    return nb


def student_notebook(nb):
    """A copy of `nb` with solutions stubbed (and unfolded, without their markers) and every output and
    execution count cleared. A cell whose markers do not pair is refused, by its index in `nb`."""
    nb = nbformat.from_dict(copy.deepcopy(nb))
    cells = []
    for index, cell in enumerate(nb.cells):
        if _is_marker(cell):
            continue
        if cell.cell_type == "code":
            if BEGIN in cell.source:
                cell.metadata.get("jupyter", {}).pop("source_hidden", None)
                if FOLD_TAG in cell.metadata.get("tags", []):
                    cell.metadata["tags"].remove(FOLD_TAG)
            try:
                cell.source = strip_solutions(cell.source)
            except ValueError as err:
                raise ValueError(f"cell {index}: {err}") from None
            cell.outputs, cell.execution_count = [], None
        cells.append(cell)
    nb.cells = cells
    nb.metadata.pop("widgets", None)
    return nb


# A course notebook's name: two digits, then lower-case words (`05_training.ipynb`). JupyterLab's "Duplicate"
# (`05_training-Copy1.ipynb`) is not one: the tests, the course map and the book leave such copies out.
NOTEBOOK_NAME = re.compile(r"[0-9][0-9]_[a-z0-9_]+\.ipynb")


def course_notebooks(folder) -> list[Path]:
    """The course's notebooks in `folder` (the course's `notebooks/`): NN_name.ipynb in a part's folder, in order."""
    return [p for p in sorted(Path(folder).glob("*/[0-9][0-9]_*.ipynb")) if NOTEBOOK_NAME.fullmatch(p.name)]


def notebooks_in(folder) -> list[Path]:
    """The course's notebooks under `folder` (one level of part folders, or flat), in reading order."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"No folder {folder}: pass the folder that holds the teaching notebooks "
                                "(e.g. `notebooks`).")
    found = sorted(folder.glob("*.ipynb")) + sorted(folder.glob("*/*.ipynb"))
    found = [p for p in found if ".ipynb_checkpoints" not in p.parts]
    if not found:
        raise FileNotFoundError(f"No notebooks in {folder} or its sub-folders.")
    return found


def main(argv=None) -> list[Path]:
    """Write the student copies. A copy that is already there is never overwritten: the same as a fresh one, it is
    left as it is; different (a learner's answers in it), it is kept and named, and deleting it gets a fresh one.
    Every notebook is read and stripped before anything is written, so a damaged one (named, with the cell whose
    markers do not pair) stops the command with nothing half done."""
    parser = argparse.ArgumentParser(description="Write student copies of the notebooks (solutions removed).")
    parser.add_argument("src", nargs="?", default="notebooks", help="the teaching notebooks' folder")
    parser.add_argument("dst", nargs="?", default="student", help="where the student copies go (a folder; copies "
                        "already there are kept)")
    args = parser.parse_args(argv)
    src, dst = Path(args.src).resolve(), Path(args.dst).resolve()
    if dst == src or src in dst.parents or dst in src.parents:
        parser.error(f"the student copies must go to a folder apart from the teaching notebooks ({args.src}): "
                     "writing them there would strip the solutions from the originals. Choose e.g. `student`.")
    if dst.exists() and not dst.is_dir():
        parser.error(f"{args.dst} is a file: give a folder for the student copies (e.g. student)")
    blocked = next((p for p in dst.parents if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        parser.error(f"{args.dst}: {blocked} is a file, not a folder: give a folder for the student copies")
    try:
        notebooks = notebooks_in(src)
    except FileNotFoundError as err:
        parser.error(str(err))
    copies = []
    for path in notebooks:
        try:
            nb = nbformat.read(path, as_version=4)
        except Exception as err:  # not JSON, not a notebook, not readable
            reason = str(err).strip().splitlines()[0][:120] if str(err).strip() else type(err).__name__
            parser.error(f"{path} is not a readable notebook ({type(err).__name__}: {reason}): restore it (e.g. "
                         f"git checkout -- {path}) and run this again (nothing was written)")
        try:
            copies.append((path, nbformat.writes(student_notebook(nb)) + "\n"))
        except ValueError as err:
            parser.error(f"{path}, {err} (nothing was written)")
    written, same, kept = [], [], []
    for path, text in copies:
        target = dst / path.relative_to(src)
        if target.exists():
            try:
                current = target.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                current = None
            (same if current == text else kept).append(target)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)
        written.append(target)
    print(f"wrote {len(written)} student notebooks to {args.dst}/" + (f" ({len(same)} already there, unchanged)"
                                                                      if same else ""))
    for target in kept:
        print(f"kept your copy of {target.relative_to(dst)}: it differs from a fresh one (your answers are in it); "
              "delete it to get a fresh one")
    return written


if __name__ == "__main__":
    main()
