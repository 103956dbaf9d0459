"""Every comparative conclusion the course states in words agrees with the verdict computed from its shipped file.

`mlm_lib.course.comparisons.STATED` lists where each conclusion is written (a notebook, a docs page, README), a
phrase of the sentence, the comparison and the word the sentence uses. Here each is held against
`mlm_lib.verdict` on today's shipped results: a re-run that changes a verdict fails this test until the sentence
is rewritten.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from mlm_lib.course.comparisons import COMPARISONS, STATED, verdict_table
from mlm_lib.verdict import WORDS, verdict

ROOT = Path(__file__).resolve().parents[1]
STRONG = ("ahead", "behind")


def prose(path: Path) -> str:
    """The text a reader reads: a notebook's markdown cells and printed outputs, or the whole file."""
    if path.suffix != ".ipynb":
        return path.read_text(encoding="utf-8")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def test_every_comparison_computes_from_its_shipped_file():
    for name, comparison in COMPARISONS.items():
        v = comparison.verdict()
        assert v.word in WORDS and math.isfinite(v.mean_difference), name
        assert v.seeds == len(v.differences) >= 1, name


def test_there_are_stated_conclusions_and_each_names_a_known_comparison():
    assert len(STATED) >= 5
    for where, phrase, name, word in STATED:
        assert name in COMPARISONS, f"{where}: no comparison named {name!r}"
        assert word in WORDS, f"{where}: {word!r} is not one of the rule's words"
        assert word in phrase, f"{where}: the phrase {phrase!r} does not use the word {word!r}"


@pytest.mark.parametrize("where, phrase, name, word", STATED, ids=[f"{s[0]}: {s[2]}" for s in STATED])
def test_each_stated_conclusion_is_the_verdict_of_its_numbers(where, phrase, name, word):
    text = " ".join(prose(ROOT / where).split())
    assert " ".join(phrase.split()) in text, f"{where} no longer says {phrase!r}: update STATED with the sentence"
    v = COMPARISONS[name].verdict()
    assert v.word == word, f"{where} says {word!r} of {name!r}; its shipped runs now give {v}"
    c = COMPARISONS[name]
    if word in STRONG and abs(v.mean_difference * c.scale) < 3 and c.unit == "points":
        assert v.seeds >= 3, f"{name}: a difference under three points needs at least three seeds ({v})"


def test_docs_tables_of_verdicts_are_todays():
    """A verdict table written into docs/ is the one `verdict_table` computes now."""
    for page in sorted((ROOT / "docs").glob("results-part*.md")):
        text = page.read_text(encoding="utf-8")
        for block in text.split("\n\n"):
            if block.startswith("| comparison | per-seed differences |"):
                names = [line.split(" | ")[0].lstrip("| ") for line in block.splitlines()[2:]]
                assert block == verdict_table(*names), f"{page.name}: a verdict table is stale"


def test_the_rule_in_its_three_cases():
    """The words the notebooks print, on numbers small enough to check by hand."""
    assert verdict({0: 0.60, 1: 0.62, 2: 0.61}, {0: 0.50, 1: 0.51, 2: 0.52}).word == "ahead"
    assert verdict({0: 0.50, 1: 0.51, 2: 0.52}, {0: 0.60, 1: 0.62, 2: 0.61}).word == "behind"
    assert verdict({0: 0.51, 1: 0.49, 2: 0.52}, {0: 0.50, 1: 0.50, 2: 0.50}).word == "within noise"
    assert verdict({0: 0.52, 1: 0.50}, {0: 0.50, 1: 0.51}).word == "too few seeds"
    assert verdict({0: 0.9}, {0: 0.1}).word == "one seed"
    # every seed ahead is not enough when the seeds disagree on how much: +0.1, +0.2 and +9 points
    assert verdict([0.501, 0.502, 0.59], [0.5, 0.5, 0.5]).word == "within noise"


def test_under_three_points_two_seeds_are_too_few_even_when_they_agree():
    """The course's minimum of three seeds for a small difference is part of the rule, so the printed word is the
    one the prose may use: +2.8 and +2.4 points agree, yet two seeds of so small a difference say nothing."""
    assert verdict({0: 0.528, 1: 0.524}, {0: 0.50, 1: 0.50}).word == "too few seeds"
    assert verdict({0: 0.528, 1: 0.524, 2: 0.532}, {0: 0.50, 1: 0.50, 2: 0.50}).word == "ahead"
    assert verdict({0: 0.63, 1: 0.64}, {0: 0.50, 1: 0.50}).word == "ahead"  # 13.5 points: two seeds can tell
    assert verdict({0: 1.70, 1: 1.71}, {0: 1.80, 1: 1.80}, higher_is_better=False, scale=1.0,
                   unit="nats").word == "ahead"  # a loss in nats: the three points are a rule for accuracy
