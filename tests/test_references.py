"""Every "notebook NN" and "§K" written in the library, the notebooks and the docs points at something that exists.

As d2l's labels do for its book: a reference is resolved against the notebooks themselves — NN must be a notebook
of the course, and §K a numbered heading ("## K. ...") of the notebook it points at. A bare §K (or "section K" in
a notebook) points at the notebook named last before it in the same paragraph, else at the notebook it is
written in. Sections of papers ("BERT §C.1", "§5.3") are not the course's and are skipped.
"""
import json
import re
from pathlib import Path

import pytest
from mlm_lib.course.student import course_notebooks

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = course_notebooks(ROOT / "notebooks")
PAPERS = ("BERT", "RoBERTa", "ELECTRA", "ModernBERT", "paper", "Table", "Devlin", "Clark", "Warner", "Liu", "Xiong",
          "Cramming", "Wettig", "Google", "appendix")


def title(path: Path) -> str:
    """The notebook's file name and first heading, lower case: what a "notebook NN (topic)" must match."""
    first = "".join(json.loads(path.read_text())["cells"][0]["source"]).splitlines()[0]
    return f"{path.stem.replace('_', ' ')} {first}".lower()


def sections(path: Path) -> set[int]:
    found = set()
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] == "markdown":
            found |= {int(m) for m in re.findall(r"^#{2,3} (\d+)\.", "".join(cell["source"]), re.M)}
    return found


SECTIONS = {int(p.name[:2]): sections(p) for p in NOTEBOOKS}
TITLES = {int(p.name[:2]): title(p) for p in NOTEBOOKS}
STEMS = {p.stem for p in NOTEBOOKS}
TOPIC = re.compile(r"\b[Nn]otebook\s+(\d{2})\s+\(([^)`\n]{3,60})\)")
STEM = re.compile(r"(?<![\w/.-])(\d{2}_[a-z][a-z0-9_]*[a-z])(?![\w-])")
STOP = {"with", "from", "that", "this", "what", "which", "built", "taught", "the"}
NUMBER = r"\d{2}(?!\d)"
LIST = rf"{NUMBER}(?:(?:\s*,\s*|\s+and\s+|\s*[-–]\s*|\s+to\s+){NUMBER})*"
MENTION = re.compile(rf"\b[Nn]otebooks?\s+({LIST})")
SECTION = re.compile(r"(?:§\s?|\bsection\s+|\bsections\s+)(\d+[.\w]*)(?:\s*[-–]\s*§?\s?(\d+))?")


def paragraphs(text: str):
    yield from re.split(r"\n\s*\n", text)


def problems_in(text: str, home: int | None, where: str) -> list[str]:
    out = []
    for m in TOPIC.finditer(text):  # "notebook 13 (masked against left-to-right)": the topic must be that notebook's
        words = [w for w in re.findall(r"[a-z][a-z-]{3,}", m.group(2).lower()) if w not in STOP]
        number = int(m.group(1))
        if len(m.group(2).split()) > 5:  # a remark in brackets, not the notebook's topic
            continue
        if words and number in TITLES and not any(w in TITLES[number] for w in words):
            out.append(f"{where}: '{m.group(0)}' does not match notebook {number:02d}, '{TITLES[number]}'")
    for m in STEM.finditer(text):
        if m.group(1) not in STEMS:
            out.append(f"{where}: '{m.group(1)}' is no notebook of the course")
    for paragraph in paragraphs(text):
        events = [(m.start(), "mention", m) for m in MENTION.finditer(paragraph)]
        events += [(m.start(), "section", m) for m in SECTION.finditer(paragraph)]
        current = home
        for start, kind, m in sorted(events, key=lambda e: e[0]):
            if kind == "mention":
                numbers = [int(n) for n in re.findall(NUMBER, m.group(1))]
                missing = [n for n in numbers if n not in SECTIONS]
                if missing:
                    out.append(f"{where}: '{m.group(0)}' names no notebook of the course ({missing})")
                current = numbers[-1] if len(numbers) == 1 or not missing else current
                if len(numbers) > 1:
                    current = None  # "notebooks 05-09, §3" would be ambiguous: a section after a list is not checked
                continue
            first, last = m.group(1), m.group(2)
            before = paragraph[max(0, start - 24):start]
            if not first.isdigit() or any(p in before for p in PAPERS) or current is None:
                continue
            if m.group(0).startswith("section") and home is None and current is None:
                continue
            for k in {int(first), int(last or first)}:
                if k not in SECTIONS.get(current, set()):
                    out.append(f"{where}: '{m.group(0).strip()}' points at notebook {current:02d}, which has no "
                               f"section {k} (it has {sorted(SECTIONS.get(current, set()))})")
    return out


def library_texts():
    for path in sorted((ROOT / "mlm_lib").rglob("*.py")):
        yield path.relative_to(ROOT), path.read_text(), None
    for path in sorted((ROOT / "mlm_lib").rglob("*.md")):
        yield path.relative_to(ROOT), path.read_text(), None
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        if path.exists():
            yield path.relative_to(ROOT), path.read_text(), None


def notebook_texts():
    for path in NOTEBOOKS:
        home = int(path.name[:2])
        for i, cell in enumerate(json.loads(path.read_text())["cells"]):
            yield f"{path.name} cell {i}", "".join(cell["source"]), home


def test_the_course_has_numbered_sections():
    assert len(SECTIONS) >= 15 and all(SECTIONS[n] for n in SECTIONS), SECTIONS


def test_the_resolver_catches_a_stale_reference():
    assert problems_in("taught in notebook 99", None, "x") and problems_in("notebook 05, §42", None, "x")
    assert problems_in("see §42 below", 5, "x") and not problems_in("see §1 below", 5, "x")
    assert not problems_in("BERT §C.1 and §5.3 of the paper", None, "x")
    assert not problems_in("notebooks 05-09 and notebook 03, §3", None, "x")
    assert problems_in("the causal mask is taught in notebook 12 (masked against left-to-right)", None, "x")
    assert not problems_in("taught in notebook 13 (masked against left-to-right)", None, "x")
    assert problems_in("prerequisites: `04_encoders`", None, "x") and not problems_in("`04_encoder`", None, "x")


TEXTS = list(library_texts()) + list(notebook_texts())


@pytest.mark.parametrize("where, text, home", TEXTS, ids=[str(where) for where, _, _ in TEXTS])
def test_every_reference_resolves(where, text, home):
    assert not problems_in(text, home, str(where))
