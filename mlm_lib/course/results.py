"""The shipped experiment results as the tables the notebooks and docs/ show, one function per experiment.

Each results file (`mlm_lib/course/assets/results/`, made by a command of `mlm_lib.experiments`, which prints
the same table when it ends) has its table here, so that a notebook shows it without importing a command, and
the tests keep every table written in docs/ equal to what its file gives.
"""
from __future__ import annotations

from ..electra import COLLAPSED_SPREAD
from ..finetune import LEARNING_RATES

# roberta_table's columns per experiment: (held-out set, figure, header)
ROBERTA_COLUMNS = {
    "nsp": [("pairs", "loss", "masked loss, pairs"), ("segments", "loss", "masked loss, single windows"),
            ("pairs", "nsp_accuracy", "sentence head on NSP pairs"),
            ("sop_pairs", "nsp_accuracy", "sentence head on SOP pairs")],
    "masking": [("segments", "loss", "masked loss"), ("segments", "accuracy", "masked accuracy")],
    "rate": [("segments", "loss", "masked loss at 15%"), ("segments", "accuracy", "masked accuracy at 15%")],
}


def curriculum_report(result: dict) -> str:
    """A plain-text table of the summary, as printed by the command. Training time in whole seconds: a column of
    tenths of a minute made runs of 15.2 s and 14.9 s read 0.3 and 0.2, a gap that was the rounding's."""
    summary = result["summary"]
    header = (f"{'schedule':>24} {'seeds':>5} {'mid loss':>9} {'final loss':>10} {'final acc':>9} "
              f"{'train s':>7} {'tokens to reach':>16}")
    lines = [header]
    for label, e in summary["schedules"].items():
        reach = (f"{e['token_ratio']:.2f}x of {summary['baseline']}" if e["token_ratio"] is not None
                 else ("-" if label == summary["baseline"] else "never"))
        lines.append(f"{label:>24} {len(e['seeds']):>5} {e['mid_loss']:>9.3f} {e['final_loss']:>10.3f} "
                     f"{e['final_accuracy']:>9.1%} {e['seconds']:>7.0f} {reach:>16}")
    return "\n".join(lines)


def whole_word_report(result: dict) -> str:
    """A plain-text table of the whole-word experiment's summary, as printed by the command."""
    lines = [f"{'objective':>12} {'seeds':>5} {'pieces: acc':>11} {'words: acc':>10} {'words: word acc':>15} "
             f"{'mates visible':>13} {'mates masked':>12}"]
    for objective, e in result["summary"].items():
        lines.append(f"{objective:>12} {e['seeds']:>5} {e['pieces_masked_accuracy']:>11.1%} "
                     f"{e['words_masked_accuracy']:>10.1%} {e['words_masked_word_accuracy']:>15.1%} "
                     f"{e['mates_visible']:>13.1%} {e['mates_masked']:>12.1%}")
    return "\n".join(lines)


def roberta_table(result: dict) -> str:
    """The Markdown table of a results file that docs/ and results/README.md show (a test keeps them equal):
    per variant, the final held-out figures, mean over seeds with each seed's in brackets."""
    columns = ROBERTA_COLUMNS[result["experiment"]]
    lines = ["| variant | seeds | " + " | ".join(c[2] for c in columns) + " |", "|" + "---|" * (len(columns) + 2)]
    for name in result["summary"]:
        runs = [r for r in result["runs"] if r["variant"] == name]
        cells = []
        for set_name, key, _ in columns:
            each = [r["history"][f"val_{set_name}"][-1].get(key) for r in runs]
            if any(v is None for v in each):
                cells.append("—")
                continue
            fmt = (lambda v: f"{v:.3f}") if key == "loss" else (lambda v: f"{v:.1%}")
            mean = sum(each) / len(each)
            cells.append(fmt(mean) + (f" ({' / '.join(fmt(v) for v in each)})" if len(each) > 1 else ""))
        lines.append(f"| {name} | {len(runs)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def sentence_head_table(result: dict) -> str:
    """The Markdown table docs/ and results/README.md show (a test keeps them equal to the file): the sentence
    head's final accuracy on each set, mean over seeds with each seed's in brackets."""
    names = [k[4:] for k in result["runs"][0]["history"] if k.startswith("val_")]  # the held-out sets, in order
    lines = ["| variant | seeds | " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 2)]
    for variant in result["summary"]:
        runs = [r for r in result["runs"] if r["variant"] == variant]
        cells = []
        for set_name in names:
            each = [r["history"][f"val_{set_name}"][-1]["nsp_accuracy"] for r in runs]
            cells.append(f"{sum(each) / len(each):.1%}" + (f" ({' / '.join(f'{v:.1%}' for v in each)})"
                                                            if len(each) > 1 else ""))
        lines.append(f"| {variant} | {len(runs)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def finetune_table(result: dict) -> str:
    """The Markdown table docs/ and results/README.md show (a test keeps them equal): test accuracy per learner
    (rows) and label budget (columns), mean over seeds with each seed's in brackets."""
    runs = result["runs"]
    learners = list(dict.fromkeys(r["method"] for r in runs))
    budgets = list(dict.fromkeys(r["examples"] for r in runs))
    lines = ["| learner | " + " | ".join(f"{n:,} labels" for n in budgets) + " |", "|" + "---|" * (len(budgets) + 1)]
    for m in learners:
        cells = []
        for n in budgets:
            each = [r["test"]["accuracy"] for r in runs if r["method"] == m and r["examples"] == n]
            cells.append(f"{sum(each) / len(each):.1%}" + (f" ({' / '.join(f'{a:.1%}' for a in each)})" if len(each) > 1 else ""))
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def sweep_means(result: dict) -> dict:
    """A learning-rate sweep's (finetune_lr*.json) mean validation accuracy over its budgets:
    {learner: {rate: mean}}, the learners and rates in the file's order (notebook 11, section 4)."""
    means: dict = {}
    for method, rates in result["learning_rates"].items():
        for lr in rates:
            each = [r["validation"]["accuracy"] for r in result["runs"] if r["method"] == method and r["lr"] == lr]
            if each:
                means.setdefault(method, {})[lr] = sum(each) / len(each)
    return means


def finetune_sweep_table(result: dict) -> str:
    """The learning-rate experiment as Markdown: mean validation accuracy (over its budgets) per learner and rate;
    the chosen rate in bold."""
    rates = sorted({r["lr"] for r in result["runs"]})
    means = sweep_means(result)
    lines = ["| learner | " + " | ".join(f"{lr:g}" for lr in rates) + " |", "|" + "---|" * (len(rates) + 1)]
    for method in result["learning_rates"]:
        cells = []
        for lr in rates:
            mean = means.get(method, {}).get(lr)
            cell = "" if mean is None else f"{mean:.1%}"
            cells.append(f"**{cell}**" if mean is not None and LEARNING_RATES[method] == lr else cell)
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def mlm_vs_ltr_table(result: dict) -> str:
    """The Markdown table docs/ and results/README.md show (a test keeps them equal): fine-tuned test accuracy by
    pretraining steps. With one pretraining (one file): the mean over fine-tuning seeds, each seed's in brackets;
    with several (the files read together, records tagged "pretraining seed"): the mean over the pretrainings, each
    pretraining's own (the mean of its fine-tunings) in brackets."""
    records = result["finetuned"]
    steps = list(dict.fromkeys(r["pretraining_steps"] for r in records))
    lines = ["| pretrained with | " + " | ".join(f"{s:,} steps" for s in steps) + " |", "|" + "---|" * (len(steps) + 1)]
    for objective in dict.fromkeys(r["objective"] for r in records):
        cells = []
        for s in steps:
            mine = [r for r in records if r["objective"] == objective and r["pretraining_steps"] == s]
            if "pretraining seed" in (mine[0] if mine else {}):
                groups = {}
                for r in mine:
                    groups.setdefault(r["pretraining seed"], []).append(r["accuracy"])
                each = [sum(g) / len(g) for _, g in sorted(groups.items())]
            else:
                each = [r["accuracy"] for r in mine]
            cells.append(f"{sum(each) / len(each):.1%} ({' / '.join(f'{a:.1%}' for a in each)})" if each else "—")
        lines.append(f"| {objective} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def scaling_table(result: dict) -> str:
    """The Markdown table of a results file that docs/results-part1.md and notebook 05 show (a test keeps them equal)."""
    lines = ["| processes x threads | tokens/s (median of rounds) | vs 1 process x 1 thread |", "|---|---|---|"]
    for s in result["summary"]:
        ratio = f"{s['vs_one_thread']:.2f}x" if s["vs_one_thread"] else "—"
        lines.append(f"| {s['processes']} x {s['threads']} | {s['tokens_per_s']:,.0f} | {ratio} |")
    return "\n".join(lines)


def speedrun_table(result: dict) -> str:
    """Markdown: per recipe and seed, when the run first reached 70% and 75% held-out at length 128 (minutes on a
    budget of minutes, millions of characters on a budget of characters), and the final accuracy; a recipe's seeds
    together (recipes in the order the file first holds them), whatever order the runs were made in."""
    on_clock = all(r.get("minutes") is not None for r in result["runs"])
    unit, key, scale = ("minutes", "seconds", 60) if on_clock else ("million characters", "characters", 1e6)
    lines = [f"| recipe | seed | {unit} to 70% | {unit} to 75% | accuracy at the end of the budget |",
             "|---|---|---|---|---|"]
    fmt = lambda s: "not reached" if s is None else f"{s / scale:.1f}"  # noqa: E731
    order = list(dict.fromkeys(r["recipe"] for r in result["runs"]))
    for r in sorted(result["runs"], key=lambda r: (order.index(r["recipe"]), r["seed"])):
        lines.append(f"| {r['recipe']} | {r['seed']} | {fmt(r[f'{key}_to_70'])} | {fmt(r[f'{key}_to_75'])} | "
                     f"{r['final_accuracy']:.1%} |")
    return "\n".join(lines)


def electra_pretraining_table(result: dict) -> str:
    """Markdown: each pretraining of an `electra` result (notebook 15) on its own objective's held-out figures at
    the end of its budget of characters. ELECTRA's discriminator: AUC (0.5 is chance), and the share of the
    replaced positions it finds when it flags as many positions as were replaced (`recall at share`; chance
    finds the replaced share itself, printed beside it); its generator's masked accuracy. A masked LM: its masked
    accuracy at BERT's 15%."""
    lines = ["| pretraining | seed | steps | characters a step | held-out figures at the end |", "|---|---|---|---|---|"]
    for r in result["pretrained"]:
        f = r["final"]
        if r["objective"] in ("scratch", "shipped"):
            continue  # nothing trained here: the fine-tuning's floor and the starting point
        if "auc" in f:
            figures = (f"AUC {f['auc']:.3f}; finds {f['replaced_recall_at_share']:.1%} of the replaced positions "
                       f"(chance: {f['replaced']:.1%}); generator {f['generator_accuracy']:.1%}; "
                       f"spread {f['spread']:.3g}")
        else:
            figures = f"masked accuracy {f['accuracy']:.1%} (loss {f['loss']:.3f})"
        lines.append(f"| {r['objective']} | {r['seed']} | {r['steps']:,} | {r['tokens_per_batch']:,} | {figures} |")
    return "\n".join(lines)


def grid_state(record: dict) -> str:
    """One grid run's state at its end: collapsed (hidden-state spread under `electra.COLLAPSED_SPREAD`, 0.01), else
    learning if its final AUC reaches 0.6 (the AUC half of the threshold notebook 15 holds every discriminator to),
    else near chance."""
    f = record["final"]
    return "collapsed" if f["spread"] < COLLAPSED_SPREAD else "learning" if f["auc"] >= 0.6 else "near chance"


def grid_cells(grid: dict) -> dict:
    """{(learning rate, characters a step): that cell's runs, by seed}, the cells in the file's order."""
    cells: dict = {}
    for r in grid["runs"]:
        cells.setdefault((r["lr"], r["batch"]), []).append(r)
    return {key: sorted(runs, key=lambda r: r["seed"]) for key, runs in cells.items()}


def _states(runs: list) -> str:
    """The cell's states over its seeds: "collapsed" when every seed's is, else each state with its count."""
    states = [grid_state(r) for r in runs]
    if len(set(states)) == 1:
        return states[0] if len(runs) == 1 else f"{states[0]}, {len(runs)} of {len(runs)}"
    return ", ".join(f"{s} {states.count(s)} of {len(runs)}" for s in dict.fromkeys(states))


def _span(values, form: str) -> str:
    low, high = format(min(values), form), format(max(values), form)
    return low if low == high else f"{low}–{high}"


def electra_grid_table(grid: dict, brief: bool = False) -> str:
    """Markdown: notebook 15's grid, one row per learning rate and characters a step, at one budget of training
    characters. The full table (docs/results-part5.md) gives each figure seed by seed (s0/s1/...): steps, the
    discriminator's highest AUC over its evaluations (the notebook plots them all) and its final one, and at the end
    its accuracy (lowest–highest over seeds), recall on the replaced positions, and hidden-state spread across
    positions (`electra.hidden_spread`; below `electra.COLLAPSED_SPREAD`, 0.01: collapsed), the states over the seeds
    (`grid_state`), and the generator's accuracy on its blanks (lowest–highest).

    `brief` (the notebook's table) keeps what its section reads: the final AUC as the mean of the seeds, each seed's
    spread, how many seeds ended collapsed, the accuracy and the generator's."""
    seeds = sorted({r["seed"] for r in grid["runs"]})
    each = "/".join(f"s{s}" for s in seeds)
    if brief:
        head = ["learning rate", "characters a step", "steps", "final AUC, mean of the seeds", f"spread ({each})",
                "collapsed", "accuracy", "generator"]
    else:
        head = ["learning rate", "characters a step", "steps", f"highest AUC ({each})", f"final AUC ({each})",
                "accuracy", f"flagged, logit > 0 ({each})", f"spread ({each})", "state", "generator"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (lr, batch), runs in grid_cells(grid).items():
        finals = [r["final"] for r in runs]
        spread = "/".join(f"{f['spread']:.2g}" for f in finals)
        accuracy, generator = (_span([f[k] for f in finals], ".1%") for k in ("accuracy", "generator_accuracy"))
        if brief:
            down = sum(grid_state(r) == "collapsed" for r in runs)
            cells = (f"{lr:g}", f"{batch:,}", _span([r["steps"] for r in runs], ","),
                     f"{sum(f['auc'] for f in finals) / len(finals):.3f}", spread, f"{down} of {len(runs)}", accuracy,
                     generator)
        else:
            cells = (f"{lr:g}", f"{batch:,}", _span([r["steps"] for r in runs], ","),
                     "/".join(f"{max(r['curve']['val_auc']):.3f}" for r in runs),
                     "/".join(f"{r['curve']['val_auc'][-1]:.3f}" for r in runs), accuracy,
                     "/".join(f"{f['replaced_recall']:.1%}" for f in finals), spread, _states(runs), generator)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def grid_findings(grid: dict) -> str:
    """What notebook 15's section 4 says of its grid, printed from the runs so that the words follow the numbers:
    per learning rate, how many runs ended collapsed and how many were under the line at some evaluation; the
    highest final AUC of any run, and how many reach 0.6 (the AUC half of notebook 15's threshold for a
    discriminator that learns); and the range of the accuracy."""
    seeds = sorted({r["seed"] for r in grid["runs"]})
    out = [f"{len(grid['runs'])} runs ({len(seeds)} seeds a cell), each {grid['settings']['characters']:,} training "
           f"characters; collapsed: spread under {COLLAPSED_SPREAD:g}"]
    for lr in dict.fromkeys(r["lr"] for r in grid["runs"]):
        runs = [r for r in grid["runs"] if r["lr"] == lr]
        down = sum(grid_state(r) == "collapsed" for r in runs)
        dipped = sum(min(r["curve"]["val_spread"]) < COLLAPSED_SPREAD for r in runs)
        out.append(f"  lr {lr:g}: {down} of {len(runs)} runs ended collapsed; {dipped} of {len(runs)} were collapsed "
                   "at some evaluation")
    best = max(grid["runs"], key=lambda r: r["final"]["auc"])
    out.append(f"highest final AUC of any run: {best['final']['auc']:.3f} (lr {best['lr']:g}, {best['batch']:,} a step, "
               f"seed {best['seed']}); runs ending at an AUC of 0.6 or more: "
               f"{sum(r['final']['auc'] >= 0.6 for r in grid['runs'])} of {len(grid['runs'])}")
    out.append(f"accuracy: {_span([r['final']['accuracy'] for r in grid['runs']], '.1%')} in every run, collapsed or not")
    return "\n".join(out)


def _finetune_summary(result: dict) -> dict:
    """The electra command's summary of its fine-tunings: per objective, learner and label budget, the mean test
    accuracy over every run, its standard error, and each pretraining seed's mean (objectives in the records'
    order)."""
    import statistics

    groups: dict = {}
    for r in result["finetuned"]:
        if not r.get("sweep"):
            groups.setdefault((r["objective"], r["learner"], r["budget"]), []).append(r)
    objectives = list(dict.fromkeys(r["objective"] for r in result["pretrained"]))
    out = {}
    learners = list(dict.fromkeys(learner for _, learner, _ in groups))  # in the order the runs were made
    for (objective, learner, budget), runs in sorted(groups.items(), key=lambda kv: (
            objectives.index(kv[0][0]) if kv[0][0] in objectives else len(objectives), learners.index(kv[0][1]),
            kv[0][2])):
        accs = [r["test"]["accuracy"] for r in runs]
        out[f"{objective} | {learner} | {budget}"] = {
            "runs": len(accs), "test_accuracy": statistics.mean(accs),
            "standard_error": statistics.stdev(accs) / len(accs) ** 0.5 if len(accs) > 1 else None,
            "by_pretraining_seed": {s: statistics.mean(r["test"]["accuracy"] for r in runs if r["pretrain_seed"] == s)
                                    for s in sorted({r["pretrain_seed"] for r in runs})}}
    return out


def electra_finetune_table(result: dict) -> str:
    """Markdown: fine-tuned test accuracy per learner and label budget, the masked LM's encoder against ELECTRA's
    discriminator: mean over every pretraining and fine-tuning seed ± its standard error, the pretraining seeds'
    means in brackets."""
    summary = _finetune_summary(result)  # computed here: `result` may be two files taken together
    budgets = sorted({int(k.rsplit(" | ", 1)[1]) for k in summary})
    learners = list(dict.fromkeys(k.split(" | ")[1] for k in summary))
    lines = ["| learner | labels | " + " | ".join(dict.fromkeys(k.split(" | ")[0] for k in summary)) + " |"]
    objectives = list(dict.fromkeys(k.split(" | ")[0] for k in summary))
    lines.append("|" + "---|" * (len(objectives) + 2))
    for learner in learners:
        for budget in budgets:
            cells = []
            for objective in objectives:
                e = summary.get(f"{objective} | {learner} | {budget}")
                if e is None:
                    cells.append("—")
                    continue
                se = f" ± {e['standard_error']:.1%}" if e["standard_error"] is not None else ""
                seeds = " / ".join(f"{v:.1%}" for v in e["by_pretraining_seed"].values())
                cells.append(f"{e['test_accuracy']:.1%}{se} ({seeds})")
            shown = {"pretrained, mean": "fine-tuned whole, mean"}.get(learner, learner)  # what it does to the column's encoder
            lines.append(f"| {shown} | {budget} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def lengths_table(results: dict) -> str:
    """Markdown: held-out masked accuracy by window length (the lengths command), one column per model
    (`results`: {column name: the command's result}); a length the model refuses reads "refused"."""
    lengths = sorted({int(k) for r in results.values() for k in r["by_length"]})
    lines = ["| length | " + " | ".join(results) + " |", "|" + "---|" * (len(results) + 1)]
    for length in lengths:
        cells = []
        for r in results.values():
            figures = r["by_length"].get(str(length))
            cells.append("—" if figures is None else "refused" if "refused" in figures
                         else f"{figures['accuracy']:.1%}")
        lines.append(f"| {length} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def electra_bench_table(result: dict) -> str:
    """Markdown: `bench --electra`'s steps (notebook 15, section 8): median step time, the ratio to the masked LM's
    step on the same characters, operator calls of one step, parameters trained."""
    e = result["electra"]
    lines = ["| step | median ms | × the masked LM's | operator calls | parameters trained |", "|---|---|---|---|---|"]
    for name, p in e["peers"].items():
        lines.append(f"| {name} | {p['median_step_ms']:.0f} | {p['vs_masked_lm']:.2f} | {p['operator_calls']:,} | "
                     f"{p['parameters_trained']:,} |")
    return "\n".join(lines)
