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

# notebook 15's comparison ran as one process per seed, side by side on the course's two cores
STAGE2 = ("electra-stage2", "electra-stage2-s1", "electra-stage2-s2")
ACCURACY = dict(scale=100.0, unit="points")
LOSS = dict(scale=1.0, unit="nats", higher_is_better=False)


def _but(settings, key: str = "seeds"):
    """A file's settings without the seeds it ran: files that differ only there hold seeds of one experiment."""
    return {k: v for k, v in settings.items() if k != key} if isinstance(settings, dict) else settings


def _one_experiment(names, files, but: str = "seeds") -> None:
    """Refuse files that are not one experiment: each made by the first one's command, preset and budget, with
    its settings apart from `but` (the seeds it ran). A file from before the output rule may name no command
    (`kind`), and RoBERTa's name their experiment (`experiment`): what both files name must agree."""
    first = files[0]
    for name, other in zip(names[1:], files[1:]):
        characters = [f.get("options", {}).get("--characters") for f in (first, other) if "options" in f]
        named = [key for key in ("kind", "experiment") if first.get(key) and other.get(key)]
        if any(first[key] != other[key] for key in named) or _but(other.get("settings"), but) != _but(first.get("settings"), but) \
                or other.get("preset") != first.get("preset") or len(set(characters)) > 1:
            raise ValueError(f"{name} was made with other settings than {names[0]}: its runs are not comparable.")


def load_together(*names: str) -> dict:
    """One shipped results file, or several made by one command with the same settings (runs of one experiment
    split between processes, or a seed added on a later day), their lists of records ("runs", "pretrained",
    "finetuned") taken together; the first file's record for the rest, and each file's machine and date in
    `machines`. At a budget of characters or steps the machine changes only the rounding of the runs, not the work
    they did, so files of two machines add up to one experiment (the course names each one where it shows them)."""
    files = [load_json_results(name) for name in names]
    settings = files[0].get("settings")
    # a command of one seed a file (electra_grid's --seed) records `seed`, one of several `seeds`
    _one_experiment(names, files, but="seed" if isinstance(settings, dict) and "seed" in settings else "seeds")
    together = dict(files[0])
    for key, value in files[0].items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            together[key] = [r for f in files for r in f.get(key, [])]
    if isinstance(files[0].get("settings"), dict) and "seeds" in files[0]["settings"]:  # every file's seeds
        together["settings"] = {**files[0]["settings"],
                                "seeds": sorted({s for f in files for s in f["settings"].get("seeds", [])})}
    together["files"] = list(names)
    together["machines"] = [{"file": name, "machine": f.get("machine"), "date": f.get("date"), "commands": f.get("commands", [])}
                            for name, f in zip(names, files)]
    return together


# The files that hold one experiment's seeds, together (`shipped`): a seed added on a later day went into a file of its
# own, by the same command with the same settings (the output rule never rewrites a shipped file).
TOGETHER: dict[str, tuple[str, ...]] = {
    "ablation": ('ablation', 'ablation-pre-ln-s1', 'ablation-pre-ln-s2'),
    "sentence_head": ('sentence_head', 'sentence_head-s2', 'sentence_head-lr-s0', 'sentence_head-lr-s1', 'sentence_head-lr-s2'),
    "finetune_curve": ('finetune_curve', 'finetune_curve-s1', 'finetune_curve-s2'),
    "whole_word": ('whole_word-s0', 'whole_word-s1', 'whole_word-s2'),
    "roberta_nsp": ('roberta_nsp', 'roberta_nsp-s2'),
    "roberta_masking": ('roberta_masking', 'roberta_masking-s2'),
    "roberta_rate": ('roberta_rate', 'roberta_rate-s2'),
    "electra-grid": ('electra-grid', 'electra-grid-s1', 'electra-grid-s2'),  # one file a seed (electra_grid --seed N)
}


# the command whose `summary(runs)` (means over seeds) a file of several seeds is summarised with again
_SUMMARISED_BY = {"finetune_curve": "finetune", "roberta_nsp": "roberta", "roberta_masking": "roberta",
                  "roberta_rate": "roberta", "sentence_head": "sentence_head", "whole_word": "whole_word"}


def shipped(name: str) -> dict:
    """A shipped experiment with all its seeds: `load_together` over the files `TOGETHER` names for it, its
    `summary` (each file's holds that file's seeds) computed again over them all."""
    import importlib

    names = TOGETHER.get(name, (name,))
    result = load_together(*names)
    if len(names) > 1 and name in _SUMMARISED_BY:
        result["summary"] = importlib.import_module(f"mlm_lib.experiments.{_SUMMARISED_BY[name]}").summary(result["runs"])
    return result


def _get(record: dict, path: str):
    """`record`'s value at a dotted path; a number in it indexes a list ("history.val_accuracy.-1": the last)."""
    value = record
    for key in path.split("."):
        value = value[int(key)] if isinstance(value, list) else value[key]
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
        names = TOGETHER.get(self.results, (self.results,)) if isinstance(self.results, str) else tuple(self.results)
        return load_together(*names)

    def verdict(self, result: dict | None = None) -> Verdict:
        result = self.load() if result is None else result
        return verdict(self.arm(result, self.a), self.arm(result, self.b), higher_is_better=self.higher_is_better,
                       scale=self.scale, unit=self.unit)


# notebook 11's learners as its tables name them (the results files' names leave [CLS] pooling unsaid)
LEARNER_NAMES = {"pretrained": "pretrained ([CLS])", "pretrained, mean": "pretrained (mean)",
                 "frozen": "frozen ([CLS])", "frozen, mean": "frozen (mean)"}


def _name(fields: dict, results: str | tuple = "") -> str:
    names = LEARNER_NAMES if results == "finetune_curve" else {}
    return ", ".join(names.get(v, str(v)) if isinstance(v, str) else str(v) for v in fields.values())


def _ablation(recipe: str, baseline: str) -> Comparison:
    return Comparison("ablation", {"recipe": recipe}, {"recipe": baseline}, "final_accuracy",
                      "held-out accuracy at 128 after 4 million characters")


COMPARISONS: dict[str, Comparison] = {
    # notebook 07: length curricula against a fixed length of 128 (curriculum-full.json: 600 steps of 4,096
    # characters a run, three seeds each), judged at the last evaluation on the same held-out windows of 128
    **{f"{a} against {b}": Comparison(
        "curriculum-full", {"label": a}, {"label": b}, "history.val_accuracy.-1",
        "held-out masked-character accuracy at 128 after 600 steps (2.5 million characters)")
       for a, b in (("linear 16->128 by 50%", "fixed 128"), ("step 16->128 at 50%", "fixed 128"),
                    ("linear 16->128 by 50%", "step 16->128 at 50%"))},
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
    return f"{name}\n  {c.metric}, {_name(c.a, c.results)} vs {_name(c.b, c.results)}; {per_seed}\n  {v}"


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
NB14, NB15, NB16 = ("notebooks/part4_speed/14_how_fast.ipynb", "notebooks/part5_after_bert/15_electra.ipynb",
                    "notebooks/part5_after_bert/16_modern_encoder.ipynb")
NB07 = "notebooks/part1_mlm_from_scratch/07_curriculum.ipynb"
_STEP, _LINEAR = "step 16->128 at 50% against fixed 128", "linear 16->128 by 50% against fixed 128"
_LINEAR_STEP = "linear 16->128 by 50% against step 16->128 at 50%"
STATED: list[tuple[str, str, str, str]] = [
    (NB07, "**ahead** by the rule, every seed agreeing", _STEP, "ahead"),
    (NB07, "rule finds it **within noise** against fixed 128", _LINEAR, "within noise"),
    (NB07, "against the step schedule **within noise** too", _LINEAR_STEP, "within noise"),
    (NB07, "left it in every seed (**ahead** of fixed 128)", _STEP, "ahead"),
    (NB07, "(**within noise** against fixed 128 and against the step schedule)", _LINEAR, "within noise"),
    (NB07, "(**within noise** against fixed 128 and against the step schedule)", _LINEAR_STEP, "within noise"),
    ("notebooks/part1_mlm_from_scratch/05_training.ipynb", "(notebook 07, section 5, explains it) calls **within noise** against fixed\nwindows", _LINEAR, "within noise"),
    ("docs/results-part1.md", "the step schedule is ahead of fixed 128", _STEP, "ahead"),
    ("docs/results-part1.md", "the linear one within noise against both", _LINEAR, "within noise"),
    ("docs/results-part1.md", "the linear one within noise against both", _LINEAR_STEP, "within noise"),
    (NB14, "40% against 15%: ahead, in all three seeds", "40% against 15% selected", "ahead"),
    (NB14, "Muon on top of 40%: ahead, in both of its seeds", "Muon against AdamW, at 40%", "ahead"),
    ("notebooks/part1_mlm_from_scratch/00_overview.ipynb", "the word its rule for comparisons gives is\n  *ahead*",
     "40% against 15% selected", "ahead"),
    (NB16, "RoPE: ahead, in both seeds", "RoPE against bert-40%", "ahead"),
    (NB16, "RoPE is ahead in both seeds", "RoPE against bert-40%", "ahead"),
    (NB16, "GeGLU: ahead", "GeGLU against bert-40%", "ahead"),
    (NB16, "No biases: within noise", "no biases against bert-40%", "within noise"),
    (NB16, "Pre-LN: within noise", "pre-LN against bert-40%", "within noise"),
    (NB16, "have one run each here: one seed", "local attention against bert-40%", "one seed"),
    (NB16, "have one run each here: one seed", "all of ModernBERT's changes against bert-40%", "one seed"),
    ("docs/results-part4.md", "| 40% against 15% selected | +3.1, +4.6, +4.2 | +4.0 (+2.6 to +5.3) points | **ahead** |",
     "40% against 15% selected", "ahead"),
    (NB15, "Fine-tuned whole with 50 labels, ELECTRA's encoder is behind the masked LM's",
     "ELECTRA against the masked LM, fine-tuned whole, 50 labels", "behind"),
    (NB15, "200 labels the verdict is within noise", "ELECTRA against the masked LM, fine-tuned whole, 200 labels",
     "within noise"),
    (NB15, "With the encoder frozen it is behind at both label counts", "ELECTRA against the masked LM, frozen, 50 labels",
     "behind"),
    (NB15, "With the encoder frozen it is behind at both label counts", "ELECTRA against the masked LM, frozen, 200 labels",
     "behind"),
    *[(where, "the masked LM is ahead of it fine-tuned whole at both label counts (by 21.4 and 18.1 points) and frozen "
              "with 200 labels", f"the masked LM against a random encoder, {how}, {n} labels", "ahead")
      for where in (NB15, "docs/results-part5.md")
      for how, n in (("fine-tuned whole", 50), ("fine-tuned whole", 200), ("frozen", 200))],
    *[(where, "encoder against the floor is within noise everywhere", f"ELECTRA against a random encoder, {how}, {n} labels",
       "within noise") for where in (NB15, "docs/results-part5.md") for how in ("fine-tuned whole", "frozen")
      for n in (50, 200)],
    *[(where, "frozen with 50 labels, within noise", "the masked LM against a random encoder, frozen, 50 labels",
       "within noise") for where in (NB15, "docs/results-part5.md")],
    (NB15, "encoder fine-tuned whole with 50 labels is behind", "ELECTRA against the masked LM, fine-tuned whole, 50 labels",
     "behind"),
    ("docs/results-part5.md", "Fine-tuned whole with 50 labels, ELECTRA's encoder is behind the masked LM's",
     "ELECTRA against the masked LM, fine-tuned whole, 50 labels", "behind"),
    ("docs/results-part5.md", "RoPE against bert-40% | +12.3, +10.8 | +11.5 (+7.0 to +16.1) points | **ahead**",
     "RoPE against bert-40%", "ahead"),
]


__all__ = ["COMPARISONS", "STAGE2", "STATED", "TOGETHER", "Comparison", "describe", "load_together", "show", "shipped",
           "verdict_table"]

# parts 2-3 (notebooks 09-13): their comparisons and stated conclusions are added below


@dataclass(frozen=True)
class _PerPretraining(Comparison):
    """Files of one command that differ only in the pretraining seed (`settings.seed`: mlm_vs_ltr.json is seed 0,
    mlm_vs_ltr-s1.json seed 1, ...), each holding several fine-tunings of its pretraining. The verdict's seed is the
    pretraining's: its fine-tuning seeds are averaged, so one file is one seed, however many fine-tunings it has."""
    seed: str = "pretraining seed"

    def load(self) -> dict:
        names = (self.results,) if isinstance(self.results, str) else tuple(self.results)
        files = [load_json_results(name) for name in names]
        _one_experiment(names, files, but="seed")
        tagged = [{**r, self.seed: f["settings"]["seed"]} for f in files for r in f[self.records]]
        return files[0] | {self.records: tagged}


_LABELS = {50: "50 labels", 200: "200 labels", 1000: "1,000 labels", "all": "all 9,340 labels"}


def _finetune(a: dict, b: dict, budget, metric: str = "") -> Comparison:
    """Notebook 11's learners (finetune_curve.json): the seeds are fine-tunings of one pretrained model (and, for
    scratch, its initial weights), tested on 420 speeches."""
    return Comparison("finetune_curve", a, b, "test.accuracy",
                      f"verse-or-prose test accuracy, {_LABELS[budget]}{metric}", where={"budget": budget})


COMPARISONS.update({
    # notebook 09 §1 and §5: the WordPiece model trained with pieces or whole words masked (whole_word-s0, -s1, -s2)
    **{f"whole words against pieces, {measure}": Comparison(
        "whole_word", {"objective": "whole words"}, {"objective": "pieces"}, f"final.{path}",
        f"held-out accuracy, {measure}")
       for measure, path in (("held-out text masked piece by piece", "pieces_masked.accuracy"),
                             ("words masked (per piece)", "words_masked.accuracy"),
                             ("words masked (whole words right)", "words_masked.word_accuracy"),
                             ("word-mates visible", "word_mates.mates_visible"),
                             ("word-mates masked", "word_mates.mates_masked"))},
    # notebook 10 §3: the sentence heads on the shipped WordPiece model (sentence_head.json), after 2,000 steps
    **{f"the {a} head against the {b} head, {name}": Comparison(
        "sentence_head", {"variant": f"MLM + {a}"}, {"variant": f"MLM + {b}"},
        f"history.val_{test_set}.-1.nsp_accuracy", f"sentence-head accuracy, {name}")
       for a, b, name, test_set in (("NSP", "SOP", "new NSP pairs of the training plays", "training plays, new NSP"),
                                    ("NSP", "SOP", "NSP pairs of the held-out plays", "held-out NSP"),
                                    ("SOP", "NSP", "SOP pairs of the held-out plays", "held-out SOP"),
                                    ("SOP", "NSP", "held-out SOP pairs of equal halves",
                                     "held-out SOP, equal halves"))},
    "NSP at 1e-3 against 3e-4, new NSP pairs of the training plays": Comparison(
        "sentence_head", {"variant": "MLM + NSP, lr 1e-3"}, {"variant": "MLM + NSP"},
        "history.val_training plays, new NSP.-1.nsp_accuracy",
        "sentence-head accuracy, new NSP pairs of the training plays"),
    # notebook 10 §4: RoBERTa's questions on characters, 600 steps (roberta_nsp, roberta_masking, roberta_rate.json)
    "MLM + NSP against MLM alone, held-out pairs": Comparison(
        "roberta_nsp", {"variant": "MLM + NSP"}, {"variant": "MLM alone"}, "history.val_pairs.-1.loss",
        "held-out masked loss on pairs", **LOSS),
    "MLM alone against MLM + NSP, held-out single windows": Comparison(
        "roberta_nsp", {"variant": "MLM alone"}, {"variant": "MLM + NSP"}, "history.val_segments.-1.loss",
        "held-out masked loss on single windows", **LOSS),
    **{f"dynamic masks against static, {copies}": Comparison(
        "roberta_masking", {"variant": "dynamic"}, {"variant": f"static, {copies}"}, "history.val_segments.-1.loss",
        "held-out masked loss, one play read 14 to 15 times", **LOSS) for copies in ("3 copies", "1 copy")},
    **{f"masking {a} against {b}": Comparison(
        "roberta_rate", {"variant": a}, {"variant": b}, "history.val_segments.-1.loss",
        "held-out masked loss, 15% selected", **LOSS)
       for a, b in (("25%", "15%"), ("40%", "15%"), ("60%", "15%"), ("80%", "15%"), ("80%", "40%"))},
    # notebook 11 §4: the learning curve (finetune_curve.json)
    **{f"pretrained (mean) against scratch, {_LABELS[n]}": _finetune(
        {"method": "pretrained, mean"}, {"method": "scratch"}, n) for n in _LABELS},
    # the same pooling on both sides: the pretraining alone (the scratch network pools [CLS])
    **{f"pretrained ([CLS]) against scratch, {_LABELS[n]}": _finetune(
        {"method": "pretrained"}, {"method": "scratch"}, n) for n in _LABELS},
    **{f"pretrained (mean) against naive Bayes, {_LABELS[n]}": _finetune(
        {"method": "pretrained, mean"}, {"method": "naive Bayes"}, n) for n in _LABELS},
    **{f"fine-tuned against frozen, mean pooling, {_LABELS[n]}": _finetune(
        {"method": "pretrained, mean"}, {"method": "frozen, mean"}, n) for n in _LABELS},
    **{f"the mean against [CLS], frozen, {_LABELS[n]}": _finetune(
        {"method": "frozen, mean"}, {"method": "frozen"}, n) for n in _LABELS},
    **{f"the mean against [CLS], fine-tuned, {_LABELS[n]}": _finetune(
        {"method": "pretrained, mean"}, {"method": "pretrained"}, n) for n in _LABELS},
    "naive Bayes against scratch, all 9,340 labels": _finetune({"method": "naive Bayes"}, {"method": "scratch"}, "all"),
    "pretrained (mean) with 200 labels against scratch with all 9,340": Comparison(
        "finetune_curve", {"method": "pretrained, mean", "budget": 200}, {"method": "scratch", "budget": "all"},
        "test.accuracy", "verse-or-prose test accuracy, 200 labels against all 9,340"),
    # notebook 13 §4: masked against left-to-right, one pretraining per objective and file (mlm_vs_ltr.json: seed 0,
    # -s1 and -s2 the same command with --seed 1 and 2)
    **{f"masked against left-to-right, {step:,} pretraining steps": _PerPretraining(
        ('mlm_vs_ltr', 'mlm_vs_ltr-s1', 'mlm_vs_ltr-s2'), {"objective": "masked"}, {"objective": "left-to-right"}, "accuracy",
        f"verse-or-prose test accuracy after {step:,} pretraining steps, 200 labels, mean of 2 fine-tunings",
        records="finetuned",
        where={"pretraining_steps": step})
       for step in (150, 300, 600, 1200)},
    # notebook 13 §4: the masked model against itself, 1,200 against 600 pretraining steps (the same files)
    "the masked model after 1,200 against 600 pretraining steps": _PerPretraining(
        ('mlm_vs_ltr', 'mlm_vs_ltr-s1', 'mlm_vs_ltr-s2'), {"objective": "masked", "pretraining_steps": 1200},
        {"objective": "masked", "pretraining_steps": 600}, "accuracy",
        "verse-or-prose test accuracy of the masked model, 200 labels, mean of 2 fine-tunings", records="finetuned"),
})

_09 = "notebooks/part2_real_bert_input/09_whole_word_masking.ipynb"
_WW = "whole words against pieces, {}"
STATED += [
    (_09, "in every seed, by about three points each time: **ahead**", _WW.format("word-mates masked"), "ahead"),
    (_09, "the piece-trained one 5.5 points higher in seed 2): **within noise**", _WW.format("word-mates visible"),
     "within noise"),
    (_09, "got more of the masked pieces right in every seed, **ahead** by the rule",
     _WW.format("words masked (per piece)"), "ahead"),
    (_09, "by amounts so unequal that the interval reaches\nzero: **within noise**",
     _WW.format("words masked (whole words right)"), "within noise"),
    (_09, "seed 2 pieces, by a hair (0.07 points): **within noise**", _WW.format("held-out text masked piece by piece"),
     "within noise"),
    (_09, "lower in seeds 0 and 1 (by 0.5 and 1.4): **within noise**", _WW.format("word-mates visible"),
     "within noise"),
    (_09, "(**within noise**\n  by the rule: the seeds disagree even on the direction)", _WW.format("word-mates visible"),
     "within noise"),
    (_09, "was right more often (**ahead**, every seed agreeing)", _WW.format("word-mates masked"), "ahead"),
]

_10 = "notebooks/part2_real_bert_input/10_sentence_pairs_and_nsp.ipynb"
STATED += [
    (_10, "call the NSP head **ahead** on the training plays",
     "the NSP head against the SOP head, new NSP pairs of the training plays", "ahead"),
    (_10, "find it **within noise** on the held-out plays",
     "the NSP head against the SOP head, NSP pairs of the held-out plays", "within noise"),
    (_10, "against the NSP\n  head there the SOP head is **ahead** by the rule",
     "the SOP head against the NSP head, SOP pairs of the held-out plays", "ahead"),
    (_10, "it is\n  **ahead** by the rule too",
     "the SOP head against the NSP head, held-out SOP pairs of equal halves", "ahead"),
    (_10, "NSP at 1e-3 against 3e-4, on the training plays:\n  **within noise**", "NSP at 1e-3 against 3e-4, new NSP pairs of the training plays",
     "within noise"),
    (_10, "call MLM alone **ahead** on single windows", "MLM alone against MLM + NSP, held-out single windows",
     "ahead"),
    (_10, "and MLM + NSP **ahead** on pairs", "MLM + NSP against MLM alone, held-out pairs", "ahead"),
    (_10, "MLM alone and MLM + NSP are each\n  **ahead** on the format it trained on", "MLM + NSP against MLM alone, held-out pairs", "ahead"),
    (_10, "MLM alone and MLM + NSP are each\n  **ahead** on the format it trained on", "MLM alone against MLM + NSP, held-out single windows",
     "ahead"),
    (_10, "static masks seen about 5 times are **within noise** of dynamic ones", "dynamic masks against static, 3 copies",
     "within noise"),
    (_10, "and dynamic\n  masks **ahead** of static ones seen about 14 times", "dynamic masks against static, 1 copy", "ahead"),
    (_10, "dynamic lower in two seeds and static in the third (the lines above give\n  each): **within noise** by the rule", "dynamic masks against static, 3 copies",
     "within noise"),
    (_10, "dynamic masks end **ahead** of it by the rule", "dynamic masks against static, 1 copy", "ahead"),
    (_10, "By the rule, 40% is **ahead** of 15%", "masking 40% against 15%", "ahead"),
    (_10, "and 80% **behind**\n  it", "masking 80% against 15%", "behind"),
    *[(_10, "25% and 60% are **within noise**", f"masking {rate} against 15%", "within noise") for rate in ("25%", "60%")],
    (_10, "It also calls 80% **behind** 40%", "masking 80% against 40%", "behind"),
    (_10, "against 15%, masking 40% is **ahead**", "masking 40% against 15%", "ahead"),
    (_10, "80% **behind**, 25% and 60% **within noise**", "masking 80% against 15%", "behind"),
    *[(_10, "80% **behind**, 25% and 60% **within noise**", f"masking {rate} against 15%", "within noise")
      for rate in ("25%", "60%")],
]

_11 = "notebooks/part3_why_pretrain/11_fine_tuning.ipynb"
_ALL_BUDGETS = ("50 labels", "200 labels", "1,000 labels", "all 9,340 labels")
STATED += [
    *[(_11, "**ahead** of both by the rule with 50 and with 200 labels", f"pretrained (mean) against {other}, {n}",
       "ahead") for other in ("scratch", "naive Bayes") for n in ("50 labels", "200 labels")],
    *[(_11, "the rule finds\n  pretraining **within noise** with 50 and with 200 labels", f"pretrained ([CLS]) against scratch, {n}",
       "within noise") for n in ("50 labels", "200 labels")],
    (_11, "**ahead** with 1,000 (by 4.1\n  points)", "pretrained ([CLS]) against scratch, 1,000 labels", "ahead"),
    (_11, "points) and **within noise** with all 9,340", "pretrained ([CLS]) against scratch, all 9,340 labels",
     "within noise"),
    (_11, "the rule calls pretraining **ahead** with 1,000 labels only", "pretrained ([CLS]) against scratch, 1,000 labels",
     "ahead"),
    (_11, "with 1,000 labels it starts at +0.51, so the lead is **ahead**", "pretrained (mean) against scratch, 1,000 labels",
     "ahead"),
    (_11, "the scratch network's 4.3 points behind are **within noise**", "pretrained (mean) against scratch, all 9,340 labels",
     "within noise"),
    (_11, "5.1 points behind with all of them, **ahead** by the rule",
     "pretrained (mean) against naive Bayes, all 9,340 labels", "ahead"),
    (_11, "(**ahead** by the rule, by 4.2 points)", "pretrained (mean) with 200 labels against scratch with all 9,340",
     "ahead"),
    (_11, "the rule calls the mean **ahead** of `[CLS]` with 50 labels only",
     "the mean against [CLS], fine-tuned, 50 labels", "ahead"),
    *[(_11, "**within noise** from 200 labels on", f"the mean against [CLS], fine-tuned, {n}", "within noise")
      for n in _ALL_BUDGETS[1:]],
    *[(_11, "**ahead** by the rule at every label budget, every seed agreeing",
       f"fine-tuned against frozen, mean pooling, {n}", "ahead") for n in _ALL_BUDGETS],
    *[(_11, "(**ahead** by the rule with 200 and 9,340\n  labels", f"the mean against [CLS], frozen, {n}", "ahead")
      for n in ("200 labels", "all 9,340 labels")],
    *[(_11, "**within noise** with 50 and 1,000)", f"the mean against [CLS], frozen, {n}", "within noise")
      for n in ("50 labels", "1,000 labels")],
    (_11, "the two are **within noise** of each other", "naive Bayes against scratch, all 9,340 labels",
     "within noise"),
    *[(_11, "with 50 and 200 labels, the pretrained model pooled by its mean\n  is **ahead**",
       f"pretrained (mean) against {other}, {n}", "ahead")
      for other in ("scratch", "naive Bayes") for n in ("50 labels", "200 labels")],
    (_11, "trained on all 9,340 (**ahead** by the rule)", "pretrained (mean) with 200 labels against scratch with all 9,340",
     "ahead"),
]

STATED += [
    (_11, "Fine-tuned, the mean was **ahead** of `[CLS]` with 50", "the mean against [CLS], fine-tuned, 50 labels", "ahead"),
    *[(_11, "Fine-tuning all of it is\n  ahead of a head on frozen vectors at every budget",
       f"fine-tuned against frozen, mean pooling, {n}", "ahead") for n in _ALL_BUDGETS],
    (NB16, "GeGLU ahead in all three seeds by 2.8 points", "GeGLU against bert-40%", "ahead"),
    (NB16, "no biases within noise over three seeds", "no biases against bert-40%", "within noise"),
    (NB16, "pre-LN within noise over three seeds", "pre-LN against bert-40%", "within noise"),
    *[(_11, "and **within noise** with 200, 1,000 and 9,340", f"the mean against [CLS], fine-tuned, {n}", "within noise")
      for n in ("200 labels", "1,000 labels", "all 9,340 labels")],
]

_13 = "notebooks/part3_why_pretrain/13_mlm_vs_ltr.ipynb"
_LTR = "masked against left-to-right, {:,} pretraining steps"
STATED += [
    (_13, "by 6.7 points on average (+3.5, +10.2 and +6.4),\n  **ahead** by the rule", _LTR.format(300), "ahead"),
    (_13, "the interval reaches zero: **within noise**", _LTR.format(150), "within noise"),
    (_13, "(+3.1 on average: **within noise**)", _LTR.format(600), "within noise"),
    (_13, "by 3.2 points on\n  average, also **within noise**", _LTR.format(1200), "within noise"),
    (_13, "better at 300 steps (**ahead** by the course's rule)", _LTR.format(300), "ahead"),
    *[(_13, "by 600 and 1,200 steps the two\n  were **within noise**", _LTR.format(step), "within noise")
      for step in (600, 1200)],
    (_13, "found the masked model ahead at 300 steps only", _LTR.format(300), "ahead"),
    *[(_13, "By 600 and 1,200 steps the difference is within noise", _LTR.format(step), "within noise")
      for step in (600, 1200)],
    (_13, "higher in every seed, by amounts the rule finds **within noise**", _LTR.format(150), "within noise"),
    *[(_13, "ahead at 300 steps only, within noise at\n150, 600 and 1,200", _LTR.format(step), "within noise")
      for step in (150, 600, 1200)],
    (_13, "by amounts so unequal that the rule finds the change **within noise**",
     "the masked model after 1,200 against 600 pretraining steps", "within noise"),
]

_PART2, _PART3 = "docs/results-part2.md", "docs/results-part3.md"
STATED += [
    (_PART2, "calls it ahead on new pairs of the training plays",
     "the NSP head against the SOP head, new NSP pairs of the training plays", "ahead"),
    (_PART2, "finds it\nwithin noise on the held-out plays",
     "the NSP head against the SOP head, NSP pairs of the held-out plays", "within noise"),
    (_PART2, "the SOP head is ahead of the NSP head on held-out SOP pairs",
     "the SOP head against the NSP head, SOP pairs of the held-out plays", "ahead"),
    (_PART2, "the SOP head is ahead of the NSP head on held-out SOP pairs",
     "the SOP head against the NSP head, held-out SOP pairs of equal halves", "ahead"),
    (_PART2, "the course's rule calls both ahead: MLM alone on single windows",
     "MLM alone against MLM + NSP, held-out single windows", "ahead"),
    (_PART2, "the course's rule calls both ahead: MLM alone on single windows, MLM + NSP on pairs",
     "MLM + NSP against MLM alone, held-out pairs", "ahead"),
    (_PART2, "dynamic lower in two seeds, static in the third: within noise by the rule",
     "dynamic masks against static, 3 copies", "within noise"),
    (_PART2, "dynamic masks are ahead of it by the rule", "dynamic masks against static, 1 copy", "ahead"),
    (_PART2, "By the course's rule 40% is ahead of 15%", "masking 40% against 15%", "ahead"),
    *[(_PART2, "25% and 60% are within noise of it", f"masking {rate} against 15%", "within noise")
      for rate in ("25%", "60%")],
    (_PART2, "80% is behind it", "masking 80% against 15%", "behind"),
    (_PART2, "80% is behind 40% by the rule", "masking 80% against 40%", "behind"),
    (_PART2, "NSP at 1e-3 against 3e-4, on new pairs of the training plays: within noise by the rule",
     "NSP at 1e-3 against 3e-4, new NSP pairs of the training plays", "within noise"),
    *[(_PART3, "ahead of\nboth by the rule with 50 and 200 labels", f"pretrained (mean) against {other}, {n}", "ahead")
      for other in ("scratch", "naive Bayes") for n in ("50 labels", "200 labels")],
    (_PART3, "comes within 4.4 points (still\nahead by the rule)", "pretrained (mean) against scratch, 1,000 labels", "ahead"),
    *[(_PART3, "pretraining is within noise with 50 and 200 labels", f"pretrained ([CLS]) against scratch, {n}",
       "within noise") for n in ("50 labels", "200 labels")],
    (_PART3, "ahead with 1,000 (by 4.1 points)", "pretrained ([CLS]) against scratch, 1,000 labels", "ahead"),
    (_PART3, "within noise with all 9,340. Pooling", "pretrained ([CLS]) against scratch, all 9,340 labels",
     "within noise"),
    (_PART3, "with all of them within 4.3 (within noise)", "pretrained (mean) against scratch, all 9,340 labels",
     "within noise"),
    (_PART3, "stays 5.1 points behind with all\nof them (ahead by the rule)",
     "pretrained (mean) against naive Bayes, all 9,340 labels", "ahead"),
    *[(_PART3, "ahead by the rule\nat every budget", f"fine-tuned against frozen, mean pooling, {n}", "ahead")
      for n in _ALL_BUDGETS],
    (_PART3, "The masked model is ahead at 300 steps in all three pretrainings", _LTR.format(300), "ahead"),
    *[(_PART3, "by 600\nand 1,200 steps the difference is within noise", _LTR.format(step), "within noise")
      for step in (600, 1200)],
]
