"""The notebooks run under papermill with other parameters, on your own corpus and from another folder, and their
student versions behave. What each run of a notebook is for: docs/testing.md.

(nbval re-runs the stored notebooks as written: `make test` passes `notebooks --nbval`.)
"""
import json
import re
from pathlib import Path

import nbformat
import papermill
import pytest

from mlm_lib.course.student import BEGIN, END, STUB, mark_for_nbgrader, strip_solutions, student_notebook
from notebook_params import CELL_TIMEOUT, KOREAN, KOREAN_TEXT, NOTEBOOKS, SMALL, at_once


def _ids(paths):
    return [p.stem for p in paths]


def test_every_notebook_is_covered():
    assert NOTEBOOKS, "no notebooks found"
    assert {p.stem for p in NOTEBOOKS} <= set(SMALL), "give each new notebook small papermill parameters in SMALL"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_structure(path):
    nb = json.loads(path.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged `parameters`"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert [c["execution_count"] for c in code] == list(range(1, len(code) + 1)), "store it executed, top to bottom"
    assert not any(o.get("output_type") == "error" for c in code for o in c["outputs"])
    solutions = ["".join(c["source"]).count(BEGIN) for c in code]
    assert sum(solutions) >= 2, "at least two exercises"
    assert "## Summary" in "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    # test-tool directives live in cell tags, out of the learner's way
    assert not any("NBVAL" in "".join(c["source"]) for c in code)
    # every exercise is gradable by nbgrader as stored: solution cell + locked, graded check cell
    assert nb == mark_for_nbgrader(nb, f"nb{path.stem[:2]}"), "run mark_for_nbgrader on this notebook"
    # one place and one wording for where a learner writes an answer, said before the first exercise
    markdown = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    where = "Write your answer in a new cell right above the check cell"
    first = next(i for i, text in enumerate(markdown) if "**Exercise 1" in text)
    said = [i for i, text in enumerate(markdown) if where in text]
    assert said and said[0] <= first and (said[0] < first or markdown[first].index(where) < markdown[first].index(
        "**Exercise 1")), "say where answers go (the wording of the other notebooks) before the first exercise"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_papermill_sees_every_parameter(path):
    """papermill reads the parameters cell line by line; a line it cannot parse is reported as an unknown
    parameter when set (and `//` in a comment is enough), which would teach users to ignore its warnings."""
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
    assigned = {line.split("=")[0].strip() for line in "".join(cell["source"]).splitlines()
                if "=" in line and not line.startswith((" ", "#"))}
    assert set(papermill.inspect_notebook(str(path))) == assigned
    assert set(SMALL[path.stem]) <= assigned, "the tests pass a parameter this notebook does not have"


@pytest.fixture(scope="module")
def korean_run(tmp_path_factory):
    """A Korean corpus and a small model pretrained on it by the pretrain command (seconds)."""
    from mlm_lib.experiments import pretrain

    folder = tmp_path_factory.mktemp("korean")
    (folder / "corpus.txt").write_text(KOREAN_TEXT, encoding="utf-8")
    pretrain.main(["--config", "smoke", "--out", str(folder / "run"), "--corpus", str(folder / "corpus.txt"),
                   "--no-progress"])
    return folder


PAPERMILL_RUN = """
import json, sys
import papermill
path, out, cwd, timeout = sys.argv[1:5]
papermill.execute_notebook(path, out, parameters=json.loads(sys.stdin.read()), kernel_name="python3", cwd=cwd,
                           progress_bar=False, execution_timeout=int(timeout))
"""


@pytest.fixture(scope="module")
def papermill_runs(request, korean_run, tmp_path_factory):
    """The papermill runs of the notebooks this session selected, one per usable core (at_once) with one torch thread each (the
    course's 2-core machine: one after the other they took twice as long; `threads` is a parameter of every
    notebook). Each notebook's test reads its own run: the output notebook, or papermill's error."""
    import subprocess
    import sys
    from concurrent.futures import ThreadPoolExecutor

    test = "test_notebook_runs_under_papermill_on_your_corpus_from_another_folder"
    selected = [item.callspec.params["path"] for item in request.session.items
                if getattr(item, "originalname", "") == test]
    root = tmp_path_factory.mktemp("papermill")

    def run(path):
        params = {**SMALL[path.stem], **KOREAN.get(path.stem, {}), "threads": 1}
        known = papermill.inspect_notebook(str(path))
        params.update({k: v for k, v in (("corpus", str(korean_run / "corpus.txt")),
                                         ("model_path", str(korean_run / "run" / "model.pt"))) if k in known})
        elsewhere = root / path.stem / "elsewhere"
        elsewhere.mkdir(parents=True)
        out = root / path.stem / path.name
        done = subprocess.run([sys.executable, "-c", PAPERMILL_RUN, str(path), str(out), str(elsewhere),
                               str(CELL_TIMEOUT)], input=json.dumps(params), capture_output=True, text=True,
                              timeout=3600)
        return path.stem, {"params": params, "out": out, "elsewhere": elsewhere, "returncode": done.returncode,
                           "stderr": done.stderr[-4000:]}

    with ThreadPoolExecutor(max_workers=at_once()) as pool:  # one per core this test may use
        return dict(pool.map(run, selected))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_runs_under_papermill_on_your_corpus_from_another_folder(path, papermill_runs):
    """One papermill run checks three things nbval cannot: other parameters (small sizes, seed 1), your own corpus
    or model (a Korean text, and a model pretrained on it), and a working directory that is not the notebook's
    (an unrelated temporary folder, as in Colab or a CI job; the lab-environment test runs from the repository
    root): a notebook must find its files from the package, never from the working directory."""
    run = papermill_runs[path.stem]
    assert "corpus" in run["params"] or "model_path" in run["params"], "every notebook takes your own corpus or model"
    assert run["returncode"] == 0, run["stderr"]
    out, elsewhere = run["out"], run["elsewhere"]
    nb = nbformat.read(out, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1
    exercises = sum(BEGIN in c.source for c in nb.cells if c.cell_type == "code")
    outputs = [json.dumps(c.get("outputs", []), ensure_ascii=False) for c in nb.cells if c.cell_type == "code"]
    passed = ("✓ Correct", "✓ The course's answer passes")  # a learner's answer, or the folded one's
    assert sum(any(p in o for p in passed) for o in outputs) == exercises  # every exercise's check ran and passed
    # 04 and 07 show shapes and curves, no text; 11 fine-tunes your model on Shakespeare's verse-or-prose task
    # (and says how much of that text its vocabulary lacks); 14 trains on your text and shows accuracies
    if path.stem not in ("04_encoder", "07_curriculum", "11_fine_tuning", "14_how_fast"):
        assert any("\uac00" <= ch <= "\ud7a3" for ch in "".join(outputs)), "the outputs should show the Korean text"
    assert not any(elsewhere.iterdir()), "the notebook wrote into the working directory"


def test_strip_solutions_keeps_indentation_and_rejects_bad_markers():
    source = f"def f(x):\n    {BEGIN}\n    return x + 1\n    {END}\n\nprint(1)"
    assert strip_solutions(source) == f"def f(x):\n    {STUB}\n\nprint(1)"
    with pytest.raises(ValueError, match="without an END"):
        strip_solutions(f"{BEGIN}\nx = 1")
    with pytest.raises(ValueError, match="without a BEGIN"):
        strip_solutions(f"x = 1\n{END}")


def test_student_copies_blank_every_solution_and_keep_everything_else():
    """The student copy is the teaching notebook less its solutions and outputs: every other cell is the one nbval
    ran, so only the copy itself needs checking here; the lab-environment test runs each copy to its first
    exercise, where the check must reject the blank answer."""
    for path in NOTEBOOKS:
        original = nbformat.read(path, as_version=4)
        student = student_notebook(original)
        assert BEGIN not in json.dumps(student.cells)
        assert all(not c.get("outputs") for c in student.cells if c.cell_type == "code")
        mine = [c.source for c in student.cells if c.cell_type == "code"]
        theirs = [c.source for c in original.cells if c.cell_type == "code"]
        assert len(mine) == len(theirs), path.name
        for copy, teaching in zip(mine, theirs):
            if BEGIN in teaching:
                assert STUB in copy and copy != teaching, path.name
            else:
                assert copy == teaching, path.name  # what nbval ran, unchanged


def readme_times() -> dict[str, str]:
    """README's table of measured run times: notebook number -> '6 s'."""
    lines = (Path(__file__).resolve().parents[1] / "README.md").read_text().splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("| 00 | 01 |"))
    names = [c.strip() for c in lines[head].strip("|").split("|")]
    values = [c.strip() for c in lines[head + 2].strip("|").split("|")]
    return dict(zip(names, values))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_time_estimate_is_the_measured_one(path):
    header = "".join(json.loads(path.read_text())["cells"][0]["source"])
    found = re.search(r"running every cell takes about (\d+ s) on an idle 2-core CPU \(the machine of README's table\)",
                      header)
    assert found, "the header states the measured run time, on an idle machine"
    assert found.group(1) == readme_times()[path.stem[:2]], "README's table is the one source: copy its figure"


@pytest.mark.slow
def test_a_learner_sees_the_check_message_not_its_frames():
    """In a kernel, a failing check shows one line: the message (with the line of the learner's code and a
    hint when their function crashed inside torch), not the check's frames or the expected values."""
    import nbclient

    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}})
    nb.cells = [nbformat.v4.new_code_cell("from mlm_lib.course.setup import setup_notebook\nsetup_notebook(0)"),
                nbformat.v4.new_code_cell("import torch\nfrom mlm_lib.course.checks import check_masked_loss\n\n"
                                          "def masked_loss(logits, labels):\n"
                                          "    return torch.nn.functional.cross_entropy(logits, labels)\n\n"
                                          "check_masked_loss(masked_loss)")]
    nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, allow_errors=True).execute()
    error = next(o for o in nb.cells[1].outputs if o.output_type == "error")
    assert error.ename == "ExerciseError" and len(error.traceback) == 1
    shown = error.traceback[0]
    assert "in your code, line 5: return torch.nn.functional.cross_entropy(logits, labels)" in shown
    assert "Hint: F.cross_entropy takes logits of shape (N, V)" in shown
    assert "site-packages" not in shown and "expected =" not in shown


@pytest.mark.slow
@pytest.mark.parametrize("copy", ["teaching", "student"])
def test_the_learners_answer_is_what_the_check_grades(copy, tmp_path):
    """Notebook 00 tells a learner to write an answer in a new cell right above the check cell. There, in the
    teaching notebook (below the folded solution) and in a student copy (below the `raise NotImplementedError`
    stub), a wrong answer must be what the check sees and rejects: an off-by-one `blank_positions` once got
    "✓ Correct" because the folded solution, run after the learner's cell, redefined it."""
    import nbclient

    path = next(p for p in NOTEBOOKS if p.stem == "00_overview")
    nb = nbformat.read(path, as_version=4)
    if copy == "student":
        nb = student_notebook(nb)
    solution = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "def blank_positions" in c.source)
    check = next(i for i, c in enumerate(nb.cells) if i > solution and c.cell_type == "code")
    assert "check_blank_positions" in nb.cells[check].source
    wrong = nbformat.v4.new_code_cell("def blank_positions(text):\n"
                                      "    return [i + 1 for i, c in enumerate(text) if c == '_']  # off by one")
    nb.cells = nb.cells[:check] + [wrong, nb.cells[check]]
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    with pytest.raises(nbclient.exceptions.CellExecutionError) as failure:
        client.execute()
    assert failure.value.ename == "ExerciseError" and "Correct" not in failure.value.evalue


def test_notebook_16_scores_stop_a_rotate_the_check_refused_with_what_to_do():
    """Section 1's score cell, run after a `rotate` the check refused (a learner may run on): each wrong answer,
    those right for one vector only included, stops with the course's one-line message, never a torch traceback
    and never scores that look right; the library's own turn prints its scores."""
    import json as _json

    import torch

    from mlm_lib.course.checks import ExerciseError
    from mlm_lib.rope import apply_rope, rope_angles

    path = next(p for p in NOTEBOOKS if p.name == "16_modern_encoder.ipynb")
    cells = _json.loads(path.read_text())["cells"]
    source = next("".join(c["source"]) for c in cells if c["cell_type"] == "code" and "turned_by(" in "".join(c["source"]))
    cos, sin = rope_angles(64, 16)
    q, k = torch.randn(16), torch.randn(16)
    wrong = [
        lambda x, c, s: x[..., :8] * c[..., :8] - x[..., 8:] * s[..., :8],  # half the width
        lambda x, c, s: x.tolist(),  # not a tensor
        lambda x, c, s: x * c + x * s,  # nothing turned
        lambda x, c, s: x * c + torch.cat((-x[..., 8:], x[..., :8]), -1) * s,  # right for 16 numbers only
        lambda x, c, s: x * c + torch.cat((-x[len(x) // 2:], x[:len(x) // 2]), 0) * s,  # right for one vector only
    ]
    for rotate in wrong:
        with pytest.raises(ExerciseError, match="otherwise than the library's apply_rope"):
            exec(source, {"torch": torch, "q": q, "k": k, "cos": cos, "sin": sin, "rotate": rotate})
    exec(source, {"torch": torch, "q": q, "k": k, "cos": cos, "sin": sin, "rotate": apply_rope})  # right: no stop
