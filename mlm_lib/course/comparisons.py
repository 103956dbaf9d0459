"""Every comparison the course concludes from its own runs, and the word `mlm_lib.verdict` gives it.

The notebooks print their conclusions with `show(...)` from the shipped results (and, where a notebook makes runs of
its own, `mlm_lib.verdict.verdict` on them); the prose around a printed verdict never uses a stronger word. `STATED`
lists each conclusion the notebooks, the docs and the README state in words -- where, which comparison, which word --
and `tests/test_verdicts.py` holds every one against the verdict computed from the shipped file, so that no sentence
outlives its numbers.

A comparison names a shipped results file, the records in it (`records`: a list such as "runs"), how to find each
arm's records (`a`, `b`: fields they must have), the number to compare (`value`: a dotted path inside a record) and
the field that pairs the arms (`seed`). Records of one arm that share a seed (fine-tuning seeds of one pretraining)
are averaged first, so the verdict's seeds are the ones that made independent models.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..verdict import Verdict, verdict
from .assets import load_json_results

# notebook 15's comparison ran as two processes on the course's two cores: seeds 0 and 2, and seed 1
STAGE2 = ("electra-stage2", "electra-stage2-s1")
ACCURACY = dict(scale=100.0, unit="points")
LOSS = dict(scale=1.0, unit="nats", higher_is_better=False)


def load_together(*names: str) -> dict:
    """One shipped results file, or several made by one command with the same settings (runs of one experiment
    split between two processes, on two halves of the seeds), their lists of records ("runs", "pretrained",
    "finetuned") taken together; the first file's record for the rest."""
    files = [load_json_results(name) for name in names]
    for name, other in zip(names[1:], files[1:]):
        if other.get("kind", "") != files[0].get("kind", "") or other.get("settings") != files[0].get("settings") \
                or other.get("options", {}).get("--characters") != files[0].get("options", {}).get("--characters"):
            raise ValueError(f"{name} was made with other settings than {names[0]}: its runs are not comparable.")
    together = dict(files[0])
    for key, value in files[0].items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            together[key] = [r for f in files for r in f.get(key, [])]
    together["files"] = list(names)
    return together


def _get(record: dict, path: str):
    value = record
    for key in path.split("."):
        value = value[key]
    return value


@dataclass(frozen=True)
class Comparison:
    """Arm `a` against arm `b` of one shipped results file (positive differences favour `a`)."""
    results: str | tuple[str, ...]
    a: dict
    b: dict
    value: str
    metric: str
    records: str = "runs"
    seed: str = "seed"
    higher_is_better: bool = True
    scale: float = 100.0
    unit: str = "points"
    where: dict = field(default_factory=dict)  # fields every record of both arms must have (e.g. a label budget)

    def arm(self, result: dict, fields: dict) -> dict:
        """{seed: value} for the records with `fields` (and `where`), averaged over records sharing a seed."""
        chosen: dict = {}
        for record in result[self.records]:
            if all(record.get(k) == v for k, v in {**self.where, **fields}.items()) and not record.get("sweep"):
                chosen.setdefault(record[self.seed], []).append(float(_get(record, self.value)))
        if not chosen:
            raise ValueError(f"No record in {self.results} has {fields | self.where}.")
        return {seed: sum(values) / len(values) for seed, values in sorted(chosen.items())}

    def load(self) -> dict:
        names = (self.results,) if isinstance(self.results, str) else tuple(self.results)
        return load_together(*names)

    def verdict(self, result: dict | None = None) -> Verdict:
        result = self.load() if result is None else result
        return verdict(self.arm(result, self.a), self.arm(result, self.b), higher_is_better=self.higher_is_better,
                       scale=self.scale, unit=self.unit)


def _name(fields: dict) -> str:
    return ", ".join(str(v) for v in fields.values())


def _ablation(recipe: str, baseline: str) -> Comparison:
    return Comparison("ablation", {"recipe": recipe}, {"recipe": baseline}, "final_accuracy",
                      "held-out accuracy at 128 after 4 million characters")


COMPARISONS: dict[str, Comparison] = {
    # notebook 14: the speedrun's changes at equal work (ablation.json: 4 million training characters a run)
    "40% against 15% selected": _ablation("bert-40%", "bert"),
    "Muon against AdamW, at 40%": _ablation("muon-40%", "bert-40%"),
    # notebook 16: ModernBERT's changes, each alone on top of bert-40%, then all together
    **{f"{change} against bert-40%": _ablation(recipe, "bert-40%") for change, recipe in (
        ("RoPE", "40%+rope"), ("GeGLU", "40%+geglu"), ("no biases", "40%+no-bias"), ("pre-LN", "40%+pre-ln"),
        ("local attention", "40%+local"), ("all of ModernBERT's changes", "modern"))},
    # notebook 15: ELECTRA's second stage against the other way to spend the same characters, both from the shipped
    # masked LM (electra-stage2.json: 2 million characters each), judged by notebook 11's task with few labels
    **{f"{a_name} against {b_name}, {learner_name}, {labels} labels": Comparison(
        STAGE2, {"objective": a}, {"objective": b}, "test.accuracy",
        f"verse-or-prose test accuracy, {labels} labels, {learner_name}", records="finetuned", seed="pretrain_seed",
        where={"learner": learner, "budget": labels})
       for a_name, a, b_name, b in (("ELECTRA", "electra, two-stage, 40%", "the masked LM", "mlm, continued"),
                                    ("ELECTRA", "electra, two-stage, 40%", "a random encoder", "scratch"),
                                    ("the masked LM", "mlm, continued", "a random encoder", "scratch"))
       for learner_name, learner in (("fine-tuned whole", "pretrained, mean"), ("frozen", "frozen, mean"))
       for labels in (50, 200)},
}


def describe(name: str, result: dict | None = None) -> str:
    """One comparison as a learner reads it: each arm's value per seed, then the verdict line."""
    c = COMPARISONS[name]
    result = c.load() if result is None else result
    a, b = c.arm(result, c.a), c.arm(result, c.b)
    seeds = sorted(set(a) & set(b))
    per_seed = "  ".join(f"seed {s}: {a[s] * c.scale:.2f} vs {b[s] * c.scale:.2f}" for s in seeds)
    v = c.verdict(result)
    note = ""
    if v.word in ("ahead", "behind") and v.seeds < 3 and c.unit == "points" and abs(v.mean_difference * c.scale) < 3:
        note = "\n  (under three points on fewer than three seeds: the course states nothing until a third seed)"
    return f"{name}\n  {c.metric}, {_name(c.a)} vs {_name(c.b)}; {per_seed}\n  {v}{note}"


def show(*names: str) -> None:
    """Print each named comparison with its verdict, computed now from the shipped results."""
    print("\n".join(describe(name) for name in names))


def verdict_table(*names: str) -> str:
    """Markdown: one row per named comparison -- each seed's difference, the mean with its 90% interval, the
    verdict -- computed now from the shipped results (docs/ quote these tables; a test keeps them equal)."""
    lines = ["| comparison | per-seed differences | mean (90% interval) | verdict |", "|---|---|---|---|"]
    for name in names:
        c = COMPARISONS[name]
        v = c.verdict()
        per_seed = ", ".join(f"{d * c.scale:+.1f}" for d in v.differences)
        mean = (f"{v.mean_difference * c.scale:+.1f}" if v.seeds == 1 else
                f"{v.mean_difference * c.scale:+.1f} ({v.interval[0] * c.scale:+.1f} to {v.interval[1] * c.scale:+.1f})")
        lines.append(f"| {name} | {per_seed} | {mean} {c.unit} | **{v.word}** |")
    return "\n".join(lines)


# where a comparison's conclusion is stated in words: (file, a phrase of the sentence that states it, comparison,
# the word it uses). tests/test_verdicts.py checks the phrase is in the file, contains the word, and that the word
# is the one the verdict rule gives today.
NB14, NB16 = "notebooks/part4_speed/14_how_fast.ipynb", "notebooks/part5_after_bert/16_modern_encoder.ipynb"
STATED: list[tuple[str, str, str, str]] = [
    (NB14, "40% against 15%: ahead, in all three seeds", "40% against 15% selected", "ahead"),
    (NB14, "Muon on top of 40%: ahead, in both of its seeds", "Muon against AdamW, at 40%", "ahead"),
    (NB16, "RoPE: ahead, in both seeds", "RoPE against bert-40%", "ahead"),
    (NB16, "RoPE is ahead in both seeds", "RoPE against bert-40%", "ahead"),
    (NB16, "have one run each here: one seed", "no biases against bert-40%", "one seed"),
    (NB16, "have one run each here: one seed", "pre-LN against bert-40%", "one seed"),
    (NB16, "have one run each here: one seed", "local attention against bert-40%", "one seed"),
    (NB16, "have one run each here: one seed", "all of ModernBERT's changes against bert-40%", "one seed"),
    ("docs/results-part4.md", "| 40% against 15% selected | +3.1, +4.6, +4.2 | +4.0 (+2.6 to +5.3) points | **ahead** |",
     "40% against 15% selected", "ahead"),
]


__all__ = ["COMPARISONS", "STAGE2", "STATED", "Comparison", "describe", "load_together", "show", "verdict_table"]

# parts 2-3 (notebooks 09-13): their comparisons and stated conclusions are added below
