"""Instructors can grade the notebooks with nbgrader as they are: generate, release, autograde.

In a temporary course folder: `nbgrader generate_assignment` on every part's notebooks must give release copies
without solutions (every notebook, checked cell by cell); `nbgrader autograde` must give the teaching notebooks (the
solutions) full marks and the blank release copies zero. Autograding executes each submission, so it runs on one
part (AUTOGRADED, small parameters): that the grading machinery reads the course's cell metadata. For every other
notebook what autograding would add is checked where the notebook already runs or statically: its solutions pass
their checks under nbval, every check rejects a blank answer (tests/test_widgets_and_checks.py), and its cells carry
exactly the nbgrader metadata `mark_for_nbgrader` writes (tests/test_notebooks.py) — the metadata the autograded
part proves nbgrader grades correctly. (Until 2026-11-25 every part was autograded: about 12 of CI's minutes.)
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlm_lib.course.student import BEGIN, POINTS, exercises
from notebook_params import CELL_TIMEOUT, NOTEBOOKS, with_small_parameters

pytest.importorskip("nbgrader")
pytestmark = pytest.mark.slow

PARTS = sorted({p.parent.name for p in NOTEBOOKS})
AUTOGRADED = "part4_speed"  # one notebook, with exercises of both kinds (a function, a predicate)
AUTOGRADED_NOTEBOOKS = [p for p in NOTEBOOKS if p.parent.name == AUTOGRADED]


def _nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    # nbgrader runs the `alembic` command for its database: find it beside this Python even outside a venv's PATH
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--force"], cwd=course, capture_output=True,
                            text=True, timeout=3600, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    (root / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        "c.CourseDirectory.course_id = 'mlm-course'\n"
        f"c.CourseDirectory.db_url = 'sqlite:///{root / 'gradebook.db'}'\n"
        f"c.Execute.timeout = {CELL_TIMEOUT}  # nbgrader's default, 30 s a cell, is too short for training cells\n"
    )
    for path in NOTEBOOKS:
        (root / "source" / path.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, root / "source" / path.parent.name / path.name)
    for part in PARTS:
        _nbgrader(root, "generate_assignment", part)
    for path in AUTOGRADED_NOTEBOOKS:
        with_small_parameters(path, root / "submitted" / "solved" / AUTOGRADED / path.name)
        with_small_parameters(root / "release" / AUTOGRADED / path.name, root / "submitted" / "blank" / AUTOGRADED / path.name)
    _nbgrader(root, "autograde", AUTOGRADED)
    return root


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_release_copy_holds_no_solution(course, path):
    original = json.loads(path.read_text())
    release = json.loads((course / "release" / path.parent.name / path.name).read_text())
    assert BEGIN not in json.dumps(release)
    for solution, check in exercises(original):
        answer = "".join(original["cells"][solution]["source"]).split(BEGIN)[1].split("### END SOLUTION")[0]
        released = "".join(release["cells"][solution]["source"])
        assert answer.strip() not in released and "raise NotImplementedError" in released
        assert release["cells"][check]["source"] == original["cells"][check]["source"]  # checks stay as written


@pytest.mark.parametrize("path", AUTOGRADED_NOTEBOOKS, ids=[p.stem for p in AUTOGRADED_NOTEBOOKS])
def test_autograde_gives_solutions_full_marks_and_blanks_zero(course, path):
    from nbgrader.api import Gradebook

    part, name = path.parent.name, path.stem
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        solved = gradebook.find_submission_notebook(name, part, "solved")
        blank = gradebook.find_submission_notebook(name, part, "blank")
        full = POINTS * len(exercises(json.loads(path.read_text())))
        assert solved.max_score == full and solved.score == full, [(g.name, g.score) for g in solved.grades]
        assert blank.score == 0, [(g.name, g.score) for g in blank.grades]
