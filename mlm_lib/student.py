"""Write student copies of the notebooks: solutions removed, outputs cleared.

    python -m mlm_lib.student notebooks student     (or: make student)

In a teaching notebook, an exercise's solution sits between two marker lines in a code cell:

    def my_function(x):
        ### BEGIN SOLUTION
        return x + 1
        ### END SOLUTION

The student copy keeps the cell but replaces the marked lines with `raise NotImplementedError(...)`, at
the same indentation, so the check cell below it explains that the exercise is still to do.
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
STUB = 'raise NotImplementedError("Exercise: write your answer here")'


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


def student_notebook(nb):
    """A copy of `nb` with solutions stubbed and every output and execution count cleared."""
    nb = nbformat.from_dict(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.source = strip_solutions(cell.source)
            cell.outputs, cell.execution_count = [], None
    nb.metadata.pop("widgets", None)
    return nb


def main(src: str = "notebooks", dst: str = "student") -> list[Path]:
    written = []
    Path(dst).mkdir(parents=True, exist_ok=True)
    for path in sorted(Path(src).glob("*.ipynb")):
        target = Path(dst) / path.name
        nbformat.write(student_notebook(nbformat.read(path, as_version=4)), target)
        written.append(target)
    print(f"wrote {len(written)} student notebooks to {dst}/")
    return written


if __name__ == "__main__":
    main(*sys.argv[1:3])
