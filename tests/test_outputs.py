"""The commands' one output rule: a file that exists is never replaced by accident (the newcomer probe of
2026-11-25 lost a run's results to `curriculum --out` and `whole_word --out`). Each case is refused with a usage
error that names the fix, before any work, and the file is left as it was."""
import pytest

from mlm_lib.experiments import bench, curriculum, lengths, reproduce, scaling, speedrun, whole_word

KEPT = '{"results": "a run that took an hour"}'

CASES = {
    "curriculum --out": (curriculum.main, ["--preset", "smoke", "--out", "{file}"]),
    "whole_word --out": (whole_word.main, ["--preset", "smoke", "--out", "{file}"]),
    "whole_word --save-best": (whole_word.main, ["--preset", "smoke", "--save-best", "{file}"]),
    "reproduce --out": (reproduce.main, ["{file}", "{file}", "--out", "{file}"]),
    "bench --json": (bench.main, ["--steps", "1", "--json", "{file}"]),
    "lengths --out": (lengths.main, ["{file}", "--out", "{file}"]),
    "lengths --save": (lengths.main, ["{file}", "--keep", "16", "--save", "{file}"]),
    "scaling --out": (scaling.main, ["--out", "{file}"]),
    "speedrun --save": (speedrun.main, ["--preset", "smoke", "--out", "{tmp}/new.json", "--save", "{file}"]),
}


@pytest.mark.parametrize("case", CASES)
def test_an_existing_output_is_refused_and_kept(case, tmp_path, capsys):
    main, argv = CASES[case]
    existing = tmp_path / "existing.json"
    existing.write_text(KEPT)
    with pytest.raises(SystemExit) as stop:
        main([a.format(file=existing, tmp=tmp_path) for a in argv])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "already exists: pass --overwrite" in err and "Traceback" not in err
    assert existing.read_text() == KEPT and sorted(p.name for p in tmp_path.iterdir()) == ["existing.json"]
