"""The stored notebooks are one release (`make release-notebooks`): every setup line shows this package's version
and the same versions everywhere, and nothing was stored from stderr (a warning, a progress bar)."""
import json
import re

import pytest

import mlm_lib
from mlm_lib.course.release import stderr_of
from notebook_params import NOTEBOOKS

SETUP_LINE = re.compile(r"Python [\d.]+ \| torch \S+ \| matplotlib \S+ \| mlm_lib (\S+) \| \d+ CPU threads?")
WARNINGS = re.compile(r"\b\w*Warning\b: ")


def stored_text(nb) -> list[str]:
    out = []
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream":
                out.append("".join(o["text"]))
            elif "data" in o and "text/plain" in o["data"]:
                out.append("".join(o["data"]["text/plain"]))
    return out


def setup_line(nb) -> str:
    found = [m.group(0) for text in stored_text(nb) for m in [SETUP_LINE.search(text)] if m]
    assert found, "the setup cell's stored output is missing"
    return found[0]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_outputs_are_one_clean_release(path):
    import nbformat

    nb = json.loads(path.read_text())
    line = setup_line(nb)
    assert SETUP_LINE.search(line).group(1) == mlm_lib.__version__, (
        f"{path.name} was stored by mlm_lib {SETUP_LINE.search(line).group(1)}: run make release-notebooks")
    assert not stderr_of(nbformat.from_dict(nb)), f"{path.name} stored stderr: {stderr_of(nbformat.from_dict(nb))}"
    assert not [t for t in stored_text(nb) if WARNINGS.search(t)], f"{path.name} stored a warning"


def test_every_notebook_was_stored_by_the_same_release():
    lines = {path.name: setup_line(json.loads(path.read_text())).rsplit("|", 1)[0] for path in NOTEBOOKS}
    assert len(set(lines.values())) == 1, lines


def test_the_release_refuses_a_busy_machine(monkeypatch):
    from mlm_lib.course import release

    monkeypatch.setattr(release, "busy_cpus", lambda: 1.5)
    with pytest.raises(RuntimeError, match="busy"):
        release.wait_for_quiet(2, patience=0)
    with pytest.raises(SystemExit):
        release.main(["notebooks", "--only", "00"])


def test_busy_cpus_measures_other_work_not_this_process():
    import time

    from mlm_lib.course.setup import busy_cpus

    start = time.perf_counter()
    load = busy_cpus(0.2)
    assert 0.15 < time.perf_counter() - start < 2 and load >= 0.0
