"""Compare a shipped results file with a fresh run of the command that made it: is every number reproduced?

    python -m mlm_lib.experiments.reproduce SHIPPED.json RERUN.json [SHIPPED2.json RERUN2.json ...] --out report.json

Runs are matched by their name (label, variant, recipe or objective) and seed. Every number of a run's history
and of the file's summary is compared, except wall-clock times, which no two runs share: a run is reproduced
"bit for bit" when every one of them is identical (training is deterministic on one machine for a seed and a
thread count), and otherwise the report gives how many differ and the largest difference. The course used this
after its six training loops became one (`mlm_lib.training.train`): the results shipped before were made by the
old loops, and the report says which numbers the new loop reproduces (`assets/results/README.md`).
"""
from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

from ._args import machine, today
from ._run import command, kind_of, open_run, read_results

# keys that measure the clock or describe the run rather than what it computed
SKIPPED = ("seconds", "date", "machine", "command")
NAME_KEYS = ("label", "variant", "recipe", "objective", "method")
# history entries a run writes when it ends, not step by step (the passes over the pairs a run began): a
# run stopped early has its own
WHOLE_RUN_FIGURES = ("epochs",)


def _without(history: dict, keys) -> dict:
    return {k: v for k, v in history.items() if k not in keys}


def numbers(value, path: str = ""):
    """Yield (path, number) for every number inside `value` (dicts and lists walked), skipping clock keys."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, (int, float)):
        yield path, float(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if not any(word in str(key) for word in SKIPPED):
                yield from numbers(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from numbers(item, f"{path}[{i}]")


def family(path: str) -> str:
    """The figure a number belongs to: its path without list positions ("history.loss[12]" -> "history.loss")."""
    return re.sub(r"\[\d+\]", "", path)


def compare(shipped, rerun) -> dict:
    """How far the numbers of `rerun` are from those of `shipped`, over the paths both have: how many are
    identical, and for each figure with differences, how many and the largest relative difference."""
    old, new = dict(numbers(shipped)), dict(numbers(rerun))
    common = [p for p in old if p in new]
    same = 0
    differing: dict[str, dict] = {}
    for p in common:
        a, b = old[p], new[p]
        if a == b or (math.isnan(a) and math.isnan(b)):
            same += 1
            continue
        entry = differing.setdefault(family(p), {"count": 0, "largest_relative": 0.0, "at": p})
        entry["count"] += 1
        relative = abs(a - b) / max(abs(a), abs(b))
        if relative > entry["largest_relative"]:
            entry["largest_relative"], entry["at"] = relative, p
    return {"compared": len(common), "identical": same, "only_shipped": len(old) - len(common),
            "only_rerun": len([p for p in new if p not in old]), "differing": differing}


def run_name(run: dict) -> str:
    """What names a run: its label, variant, recipe, objective or learner (`method`, with its label budget); a
    cell of a grid by its learning rate and batch."""
    name = next((str(run[k]) for k in NAME_KEYS if k in run), None)
    if name is None and "lr" in run:
        name = f"lr {run['lr']:g}" + (f", {run['batch']} a step" if "batch" in run else "")
    if name is not None and "budget" in run:  # a fine-tuning's learner runs at several label budgets (and rates)
        name += f" @ {run['budget']}" + (f" lr {run['lr']:g}" if run.get("sweep") else "")
    return name or "run"


def runs_of(results: dict) -> list:
    """A file's runs: its `runs`, or an ELECTRA experiment's pretrainings (its fine-tunings are compared as the
    rest of the file, record to record)."""
    return results.get("runs") or results.get("pretrained") or []


def keyed(records: list) -> dict:
    """A list of records (mlm_vs_ltr's and electra's fine-tunings) as a dict keyed by what names them, so that a re-run that
    wrote them in another order, or only some of them, still compares record to record."""
    return {"/".join(f"{k}={r[k]}" for k in ("objective", "pretraining_steps", "pretrain_seed", "learner", "budget",
                                              "lr", "seed") if k in r): r
            for r in records}


def lr_one_step_later(shipped: dict, rerun: dict) -> bool | None:
    """Whether the shipped history's "lr" is the re-run's one step later (None where either has none).

    The loops before `training.train` became one logged the rate after the scheduler's step, i.e. the rate the
    *next* step would use; the one loop logs the rate the step used. The steps are the same: this tells the
    two apart from a change in what was computed."""
    a, b = shipped.get("lr"), rerun.get("lr")
    if not a or not b:
        return None
    n = min(len(a), len(b)) - 1
    return n > 0 and a[:n] == b[1:n + 1]


def compare_files(shipped: dict, rerun: dict) -> dict:
    """Run by run (matched on name and seed) and the rest of the file; runs the rerun lacks are listed.

    A re-run made with `--stop-at` (its file says `stop_at`) holds the first steps only: then only the
    histories are compared, over the steps both have, and the summaries and final evaluations are not; a re-run
    of some of the runs (`--seeds 0`) compares those runs whole, and not the summary over all of them."""
    partial = rerun.get("stop_at") is not None
    fresh = {(run_name(r), r.get("seed")): r for r in runs_of(rerun)}
    runs, missing = [], []
    for r in runs_of(shipped):
        key = (run_name(r), r.get("seed"))
        if key not in fresh:
            missing.append(list(key))
            continue
        ours, theirs = r.get("history", {}), fresh[key].get("history", {})  # (a grid's cells keep a "curve")
        pair = ((_without(ours, WHOLE_RUN_FIGURES), _without(theirs, WHOLE_RUN_FIGURES)) if partial
                else (r, fresh[key]))
        runs.append({"name": key[0], "seed": key[1], **compare(*pair),
                     "lr_one_step_later": lr_one_step_later(ours, theirs)})
    # files without runs (mlm_vs_ltr) keep their curves and results at the top level; a summary averages
    # over runs, so it compares only when the re-run has them all, each to its end
    whole = not partial and not missing
    rest = [{k: keyed(v) if k == "finetuned" else v for k, v in f.items()
             if k not in ("runs", "pretrained", "settings", "preset", "stop_at", "options")
             and (whole or k != "summary")}
            for f in (shipped, rerun)]
    return {"runs": runs, "missing": missing, "rest": compare(*rest), "stop_at": rerun.get("stop_at"),
            "summary_compared": whole and "summary" in shipped,
            "settings_equal": shipped.get("settings") == rerun.get("settings")}


def table(report: dict) -> str:
    """The Markdown table the results README shows (a test keeps them equal): per shipped file, how many of its
    numbers the re-run computed again, how many are identical, and which figures differ (count, largest
    relative difference), summed over runs."""
    lines = ["| shipped file | runs re-run | numbers compared | identical | figures that differ |",
             "|---|---|---|---|---|"]
    for entry in report["files"]:
        c = entry["comparison"]
        parts = c["runs"] + ([c["rest"]] if c["rest"]["compared"] else [])
        compared = sum(p["compared"] for p in parts)
        same = sum(p["identical"] for p in parts)
        differing: dict[str, list] = {}
        for p in parts:
            for name, d in p["differing"].items():
                name = name.split(".")[-1]
                total = differing.setdefault(name, [0, 0.0])
                total[0] += d["count"]
                total[1] = max(total[1], d["largest_relative"])
        where = "; ".join(f"`{name}`: {n:,} (at most {rel:.1e} relative)" for name, (n, rel) in differing.items())
        runs = f"{len(c['runs'])} of {len(c['runs']) + len(c['missing'])}" if c["runs"] or c["missing"] else "—"
        if c["stop_at"]:
            runs = (f"{runs}, first" if c["runs"] or c["missing"] else "first") + f" {c['stop_at']:,} steps"
        lines.append(f"| `{entry['shipped']}` | {runs} | {compared:,} | {same:,} | {where or 'none'} |")
    return "\n".join(lines)


def refusal(shipped_path, rerun_path, shipped: dict, rerun: dict, comparison: dict) -> str | None:
    """Why two files cannot be compared, or None: they were written by different commands, or they share no run
    (no run of the same name and seed) or, for files without runs, no figure. "None differ" must mean reproduced."""
    kinds = kind_of(shipped), kind_of(rerun)
    if None not in kinds and kinds[0] != kinds[1]:
        return (f"{shipped_path} is a results file of `{kinds[0]}` and {rerun_path} of `{kinds[1]}`: nothing to "
                "compare (give a shipped file and a re-run of the same command)")
    if runs_of(shipped) and runs_of(rerun) and not comparison["runs"]:
        names = ", ".join(f"{n} seed {s}" for n, s in comparison["missing"][:4])
        return (f"{rerun_path} has no run of {shipped_path} ({names}...): nothing to compare (re-run some of "
                "the same runs: the same recipes or variants and seeds)")
    if not comparison["runs"] and not comparison["rest"]["compared"]:
        return (f"{rerun_path} holds nothing that matches {shipped_path} (no run of the same name and seed, no "
                "shared figure): nothing to compare. Are they results of the same command?")
    return None


@command
def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pairs", nargs="+", metavar="FILE",
                        help="shipped file, then its re-run, for as many pairs as you like")
    parser.add_argument("--out", help="the results file for the report")
    parser.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    args = parser.parse_args(argv)
    if len(args.pairs) % 2:
        parser.error("give the files in pairs: SHIPPED.json RERUN.json [SHIPPED.json RERUN.json ...]")
    out = open_run(parser, "reproduce", args.out, options={"files": args.pairs}, overwrite=args.overwrite,
                   resumable=False, argv=argv)
    files = []
    for shipped_path, rerun_path in zip(args.pairs[::2], args.pairs[1::2]):
        loaded = []
        for path in (shipped_path, rerun_path):
            try:
                loaded.append(read_results(path, option="file"))
            except ValueError as err:
                parser.error(f"{err}: give a results file a command wrote")
        rerun_meta = {k: loaded[1].get(k) for k in ("command", "commands", "date", "machine", "seconds",
                                                      "wall_seconds") if k in loaded[1]}
        comparison = compare_files(*loaded)
        why = refusal(shipped_path, rerun_path, *loaded, comparison)
        if why:
            parser.error(why)
        files.append({"shipped": Path(shipped_path).name, "rerun": str(rerun_path), "rerun_meta": rerun_meta,
                      "comparison": comparison})
    report = {"command": "python -m mlm_lib.experiments.reproduce " + " ".join(args.pairs)
              + (f" --out {args.out}" if args.out else ""),
              "date": today(), "machine": machine(),
              "files": files}
    print(table(report))
    if out is not None:
        out.record = report
        out.finish()
    return report


if __name__ == "__main__":
    main()
