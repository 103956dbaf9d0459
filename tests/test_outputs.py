"""The commands' one output rule (`mlm_lib.experiments._run`, issue 49): one --out per run, from which every other
path is derived; an existing output never replaced by accident; a lock while a run writes; --resume only with the
same settings, every difference named; writes whole or not at all, through a symbolic link to its target; a signal
or a failed write ends in one line, never a traceback. Each refusal comes before any work, and leaves the files as
they were. (The probe cases of 2026-11-26 these rules answer are named by their ids; test_probe.py has the rest.)"""
import json
import os
import signal

import pytest
from filelock import FileLock

import mlm_lib
from mlm_lib.checkpoints import WriteError
from mlm_lib.experiments import (_run, bench, curriculum, electra, electra_grid, finetune, lengths, mlm_vs_ltr,
                                 pretrain, reproduce, roberta, scaling, sentence_head, speedrun, whole_word)

KEPT = '{"results": "a run that took an hour"}'
SHIPPED = "mlm_lib/course/assets/checkpoints/shakespeare-char.pt"

# every command that writes, with arguments that would write FILE (pretrain: the folder holding it)
WRITERS = {
    "pretrain": (pretrain.main, ["--config", "smoke", "--out", "{dir}"]),
    "speedrun": (speedrun.main, ["--preset", "smoke", "--minutes", "0.01", "--out", "{file}"]),
    "electra": (electra.main, ["--preset", "smoke", "--characters", "4096", "--out", "{file}"]),
    "electra_grid": (electra_grid.main, ["--preset", "smoke", "--out", "{file}"]),
    "curriculum": (curriculum.main, ["--preset", "smoke", "--out", "{file}"]),
    "whole_word": (whole_word.main, ["--preset", "smoke", "--out", "{file}"]),
    "roberta": (roberta.main, ["nsp", "--preset", "smoke", "--out", "{file}"]),
    "sentence_head": (sentence_head.main, ["--preset", "smoke", "--out", "{file}"]),
    "mlm_vs_ltr": (mlm_vs_ltr.main, ["--preset", "smoke", "--out", "{file}"]),
    "finetune": (finetune.main, ["curve", "--preset", "smoke", "--out", "{file}"]),
    "scaling": (scaling.main, ["--config", "smoke", "--out", "{file}"]),
    "lengths": (lengths.main, [SHIPPED, "--lengths", "16", "--out", "{file}"]),
    "bench": (bench.main, ["--steps", "1", "--out", "{file}"]),
    "reproduce": (reproduce.main, ["{tmp}/a.json", "{tmp}/a.json", "--out", "{file}"]),
}
RESUMABLE = [name for name in WRITERS if name not in ("lengths", "bench", "reproduce")]
# what each command does when the work starts: stopped there, a test sees what the command recorded before it
WORK = {"pretrain": (pretrain, "train"), "speedrun": (speedrun, "run_jobs"), "electra": (electra, "run_jobs"),
        "electra_grid": (electra_grid, "run_jobs"), "curriculum": (curriculum, "run_schedule"),
        "whole_word": (whole_word, "run"), "roberta": (roberta, "run"), "sentence_head": (sentence_head, "run"),
        "mlm_vs_ltr": (mlm_vs_ltr, "pretrain"), "finetune": (finetune, "run"), "scaling": (scaling, "run_once")}


def argv_for(name, tmp_path, *extra):
    main, argv = WRITERS[name]
    (tmp_path / "a.json").write_text(json.dumps({"runs": [{"label": "x", "seed": 0, "history": {"loss": [1.0]}}]}))
    target = {"file": str(tmp_path / "out.json"), "dir": str(tmp_path / "run"), "tmp": str(tmp_path)}
    return main, [a.format(**target) for a in argv] + ["--threads", "1"] * (name not in ("scaling", "reproduce")) \
        + list(extra)


def record_path(name, tmp_path):
    return tmp_path / "run" / "log.json" if name == "pretrain" else tmp_path / "out.json"


def refused(capsys, main, argv, code=2) -> str:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def stop_at_work(monkeypatch, name, signum=signal.SIGINT):
    module, attribute = WORK[name]

    def stopped(*args, **kwargs):
        raise _run.Interrupted(signum)
    monkeypatch.setattr(module, attribute, stopped)


@pytest.mark.parametrize("name", WRITERS)
def test_an_existing_output_is_refused_and_kept(name, tmp_path, capsys):
    """B34d, B35 (probe of 2026-11-25), for every command: an existing record is never replaced by accident."""
    main, argv = argv_for(name, tmp_path)
    existing = record_path(name, tmp_path)
    existing.parent.mkdir(exist_ok=True)
    existing.write_text(KEPT)
    before = sorted(p.name for p in existing.parent.iterdir())
    err = refused(capsys, main, argv)
    assert ("already holds a run (log.json)" if name == "pretrain" else "already exists") in err and "--overwrite" in err
    assert ("--resume" in err) == (name in RESUMABLE)
    assert existing.read_text() == KEPT and sorted(p.name for p in existing.parent.iterdir()) == before


@pytest.mark.parametrize("name", RESUMABLE)
def test_resume_and_overwrite_together_are_refused_by_name(name, tmp_path, capsys):
    """N17: --resume --overwrite was taken as --resume; the conflict is named."""
    main, argv = argv_for(name, tmp_path, "--resume", "--overwrite")
    err = refused(capsys, main, argv)
    assert "--resume" in err and "--overwrite" in err and "give one of them" in err


@pytest.mark.parametrize("flag, command", [
    (["--save", "m.pt"], "speedrun"), (["--save-dir", "d"], "speedrun"), (["--save-dir", "d"], "electra"),
    (["--finetune-saved"], "electra"), (["--save-best", "b.pt"], "whole_word"), (["--save", "k.pt"], "lengths"),
    (["--json", "b.json"], "bench")])
def test_no_option_names_a_second_output_file(flag, command, tmp_path, capsys):
    """N27, N28, N39, N54, N61: the second outputs are gone; models go in the folder named after --out."""
    main, argv = argv_for(command, tmp_path, *flag)
    err = refused(capsys, main, argv)
    assert "unrecognized arguments" in err and flag[0] in err


@pytest.mark.parametrize("name", RESUMABLE)
def test_a_second_run_on_the_same_out_is_refused_at_once(name, tmp_path, capsys):
    """N08, N09: two runs on one --out both reported success and the second replaced the first; the lock refuses it."""
    main, argv = argv_for(name, tmp_path)
    record = record_path(name, tmp_path)
    lock = record.parent / ".lock" if name == "pretrain" else record.with_name(f".{record.name}.lock")
    lock.parent.mkdir(exist_ok=True)
    with FileLock(lock, timeout=0):
        err = refused(capsys, main, argv)
    assert "is being written by another run" in err
    assert not record.exists()


@pytest.mark.parametrize("name", RESUMABLE)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_a_signal_keeps_the_record_unfinished_and_prints_one_line_that_continues_it(name, signum, tmp_path, capsys,
                                                                                    monkeypatch):
    """N02, N04-N06: a signal anywhere ends in one line with the command that continues, exit 130 or 143."""
    stop_at_work(monkeypatch, name, signum)
    main, argv = argv_for(name, tmp_path)
    err = refused(capsys, main, argv, code=128 + signum)
    lines = err.strip().splitlines()  # before it, the command's own progress lines
    assert sum("stopped by" in line for line in lines) == 1 and "stopped by" in lines[-1], err
    assert lines[-1].endswith("--resume") and f"python -m mlm_lib.experiments.{name} " in lines[-1]
    record = json.loads(record_path(name, tmp_path).read_text())
    assert (record["kind"], record["status"], record["version"]) == (name, "unfinished", mlm_lib.__version__)
    assert "options" in record


# (command, the first run's options, the resumed run's, what the refusal must name): N15, N32, N33, N52, N62, N64,
# N65 and the probe's kept-aside ELECTRA recipe -- --resume compares every option, not a few
DIFFERENT = [
    ("pretrain", [], ["--steps", "12"], "--steps 30, now 12"),
    ("pretrain", [], ["--config", "shakespeare-char"], "--config smoke, now shakespeare-char"),
    ("pretrain", [], ["--corpus", "{corpus}"], "--corpus sha256"),
    ("speedrun", ["--eval-seconds", "1"], ["--eval-seconds", "0.5"], "--eval-seconds 1.0, now 0.5"),
    ("speedrun", [], ["--keep-models"], "--keep-models no, now yes"),
    ("speedrun", [], ["--preset", "full"], "--preset smoke, now full"),
    ("electra", [], ["--characters", "8192"], "--characters 4096, now 8192"),
    ("electra", [], ["--evals", "3"], "--evals 8, now 3"),
    ("electra_grid", ["--characters", "3000"], ["--characters", "4000"], "--characters 3000, now 4000"),
    ("curriculum", [], ["--corpus", "{corpus}"], "--corpus sha256"),
    ("whole_word", [], ["--corpus", "{corpus}"], "--corpus sha256"),
    ("roberta", [], ["--preset", "full", "--steps", "6"], "--preset smoke, now full"),
    ("roberta", [], ["--corpus", "{corpus}"], "--corpus sha256"),
    ("sentence_head", [], ["--steps", "6"], "--steps 4, now 6"),
    ("finetune", [], ["--model", "{model}"], "--model sha256"),
    ("scaling", ["--steps", "6"], ["--steps", "8"], "--steps 6, now 8"),
]


@pytest.mark.parametrize("name, first, then, named", DIFFERENT, ids=[f"{c[0]} {c[2][0]}" for c in DIFFERENT])
def test_resume_refuses_every_other_setting_by_name(name, first, then, named, tmp_path, capsys, monkeypatch):
    corpus = tmp_path / "plays.txt"
    corpus.write_text(("To be, or not to be, that is the question.\n\n\n" * 300 + "Whether 'tis nobler.\n") * 2)
    fill = {"corpus": str(corpus), "model": str(tmp_path / "run2" / "model.pt")}
    if name == "finetune":
        pretrain.main(["--config", "smoke", "--steps", "2", "--out", str(tmp_path / "run2"), "--no-progress",
                       "--threads", "1"])
    stop_at_work(monkeypatch, name)
    main, argv = argv_for(name, tmp_path, *first)
    refused(capsys, main, argv, code=130)
    record = record_path(name, tmp_path)
    before = record.read_text()
    # an option given twice takes its last value (argparse's rule): the resumed run's
    main, argv = argv_for(name, tmp_path, *first, *[a.format(**fill) for a in then], "--resume")
    err = refused(capsys, main, argv)
    assert "--resume:" in err and named in err and "resume with the same settings" in err, err
    assert record.read_text() == before


def test_resume_refuses_a_record_of_another_version(tmp_path, capsys, monkeypatch):
    stop_at_work(monkeypatch, "speedrun")
    main, argv = argv_for("speedrun", tmp_path)
    refused(capsys, main, argv, code=130)
    record = json.loads((tmp_path / "out.json").read_text())
    (tmp_path / "out.json").write_text(json.dumps(record | {"version": "0.4.0"}))
    err = refused(capsys, main, argv + ["--resume"])
    assert f"mlm_lib 0.4.0, now {mlm_lib.__version__}" in err


# N30, N31, N37: what --resume finds instead of a record of its own command
NOT_A_RECORD = {
    "empty": ("", "is empty, not a results file"),
    "not JSON": ("{runs: [", "is not JSON"),
    "a list": ("[]", "holds a JSON list, not a results file"),
    "another command's": (json.dumps({"command": "python -m mlm_lib.experiments.pretrain --config smoke",
                                      "history": {}}), "is a results file of `pretrain`, not of"),
    "no command's": (json.dumps({"runs": []}), "not a results file of any command of this course"),
}


@pytest.mark.parametrize("content", NOT_A_RECORD)
@pytest.mark.parametrize("name", ["speedrun", "electra", "electra_grid", "curriculum", "roberta", "finetune", "pretrain"])
def test_resume_names_what_it_found_instead_of_a_record(name, content, tmp_path, capsys):
    text, message = NOT_A_RECORD[content]
    if name == "pretrain" and content == "another command's":
        text, message = text.replace("pretrain", "speedrun"), "is a results file of `speedrun`, not of `pretrain`"
    path = record_path(name, tmp_path)
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    main, argv = argv_for(name, tmp_path, "--resume")
    err = refused(capsys, main, argv)
    assert "--resume:" in err and message in err, err
    assert path.read_text() == text


def test_a_new_run_does_not_take_up_the_files_of_an_earlier_one(tmp_path, capsys):
    """The folder named after --out belongs to its record: files there without one are not mixed in."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "bert-s0.pt").write_bytes(b"an earlier model")
    main, argv = argv_for("speedrun", tmp_path)
    err = refused(capsys, main, argv)
    assert "holds files of a run with no record (bert-s0.pt)" in err and "--overwrite" in err
    assert (tmp_path / "out" / "bert-s0.pt").read_bytes() == b"an earlier model"


@pytest.mark.parametrize("out, message", [("results", "give a results file ending in .json"),
                                          ("folder.json/", "is a folder")])
def test_out_is_a_results_file(out, message, tmp_path, capsys):
    (tmp_path / "folder.json").mkdir()
    err = refused(capsys, speedrun.main, ["--preset", "smoke", "--minutes", "1", "--out", str(tmp_path / out)])
    assert message in err


def test_writes_go_through_a_symbolic_link_to_its_target(tmp_path, capsys):
    """N20 and the probe's kept-aside resume case: the link stays a link, its target (made if missing) is written."""
    (tmp_path / "a.json").write_text(json.dumps({"runs": [{"label": "x", "seed": 0, "history": {"loss": [1.0]}}]}))
    (tmp_path / "target").mkdir()
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "target" / "report.json")  # dangling: the target does not exist yet
    reproduce.main([str(tmp_path / "a.json"), str(tmp_path / "a.json"), "--out", str(link)])
    assert link.is_symlink() and json.loads((tmp_path / "target" / "report.json").read_text())["kind"] == "reproduce"
    _run.write_json(link, {"again": 1})
    assert link.is_symlink() and json.loads(link.read_text()) == {"again": 1}


def test_a_write_that_fails_keeps_the_last_good_copy_and_says_where(tmp_path, capsys, monkeypatch):
    """N07: a full disk (or a lost permission) at a save: the resume state of the evaluation before is intact, the
    message names it and the command that continues, and no traceback. (Simulated: fsync fails at the second save.)"""
    from mlm_lib import checkpoints, load_checkpoint

    real, calls = os.fsync, []

    def full_disk(fd):
        calls.append(fd)
        if len(calls) == 3:  # the record, the first resume state, then the disk is full
            raise OSError(28, "No space left on device")
        real(fd)
    monkeypatch.setattr(checkpoints.os, "fsync", full_disk)
    out = tmp_path / "run"
    err = refused(capsys, pretrain.main, ["--config", "smoke", "--steps", "20", "--eval-every", "5", "--out", str(out),
                                          "--no-progress", "--threads", "1"], code=1)
    assert f"cannot write {out.resolve() / 'resume.pt'} (No space left on device)" in err
    assert "the last good copy of it is where it was" in err and "--resume" in err
    assert load_checkpoint(out / "resume.pt").train_state["step"] == 5
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_write_error_names_the_file():
    with pytest.raises(WriteError) as failed:
        _run.write_json("/proc/no-such-folder/x.json", {})
    assert failed.value.filename == "/proc/no-such-folder/x.json"
