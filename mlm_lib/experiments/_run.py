"""The one output rule every command follows: one --out, one record, a lock, resume by the same settings only, and
faults that end in one line instead of a traceback.

The rule copies what the tools people already trust do. Hugging Face's `Trainer` derives every path from one
`output_dir` and resumes from it; Lightning saves the hyperparameters with the weights and never writes one run
over another; nanoGPT rebuilds a resumed model from the settings stored with it, not from the command line. Here:

* **One output.** `--out` is a results file (`runs/x.json`), whose models and resume states go in the folder
  named after it (`runs/x/`), under fixed names; `pretrain` takes a folder (`runs/smoke/`: log.json, model.pt,
  resume.pt). No option names a second output file, so no two outputs can land on one path.
* **One record.** The results file is the run's record: the command's name (`kind`), the course's version, every
  option that changes results (`options`, with the sha256 of the corpus and of any model read), and whether the
  run is `finished` or `unfinished` (stopped by --stop-at, by a signal, or a screen whose fine-tuning is still
  to do). It is written when the run starts and after every piece of work, atomically.
* **A lock** (`filelock`, beside the record) while a run writes: a second run on the same --out is refused at
  once. An existing record is replaced only with --overwrite, and continued only with --resume, which compares
  every recorded option and the version and refuses any difference by name.
* **One fault rule** (`command`, the wrapper of every command's `main`): Ctrl-C (SIGINT) or SIGTERM ends the
  training step under way, keeps what is done (the record, the running training's resume state) and prints one
  line that continues it, exit status 130 or 143; a file that cannot be written (a full disk, a lost permission)
  leaves the last good copy where it was and says so; bad input is a usage error. No traceback, except for a bug.
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import json
import math
import multiprocessing
import os
import shlex
import signal
import sys
import tempfile
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path

import torch
from filelock import FileLock, Timeout

import mlm_lib

from ..checkpoints import WriteError, atomic_write
from ..data import load_corpus
from ..devices import physical_memory

# ---- argument types ---------------------------------------------------------------------------------------

SEED_LIMIT = 2 ** 63 - 1  # torch.manual_seed's largest


def whole_number(minimum: int = 1, maximum: int | None = None):
    """An argparse type: a whole number in [minimum, maximum], refused with the reason otherwise."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum or (maximum is not None and value > maximum):
            upper = f" and <= {maximum:,}" if maximum is not None else ""
            raise argparse.ArgumentTypeError(f"must be a whole number >= {minimum}{upper}, got {value}")
        return value
    return parse


seed_number = whole_number(0, SEED_LIMIT)  # a seed: what torch.manual_seed takes


def finite(minimum: float = 0.0, *, above: bool = True):
    """An argparse type: a finite number > minimum (or >= with above=False); nan and inf are refused by name."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or value < minimum or (above and value == minimum):
            raise argparse.ArgumentTypeError(f"must be a finite number {'>' if above else '>='} {minimum:g}, got {text}")
        return value
    return parse


def fits_in_memory(parser: argparse.ArgumentParser, option: str, needed: float, what: str) -> None:
    """Refuse, naming `option`, a setting whose tensors alone would need more than this machine's memory (a
    cautious estimate, `needed` bytes): it would otherwise fail deep inside torch, or make a shared machine swap."""
    memory = physical_memory()
    if memory and needed > memory:
        parser.error(f"{option}: {what} would need about {needed / 2**30:,.1f} GiB, more than this machine's "
                     f"{memory / 2**30:,.1f} GiB: give a smaller {option}")


def training_bytes(tokens: int, sizes: dict) -> float:
    """A cautious estimate of the memory one training step of `tokens` tokens needs with a model of `sizes`
    (BertConfig's fields): the batch's ids, and each layer's activations kept for the backward pass."""
    width, layers = sizes.get("d_model", 128), sizes.get("n_layers", 4)
    return tokens * (24 + 4 * layers * (8 * width + 2 * sizes.get("d_ff", 4 * width)))


# ---- inputs: hashes, results files -------------------------------------------------------------------------

def sha256_file(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def corpus_sha256(corpus=None) -> str:
    """sha256 of the corpus text a command trains on (the installed Shakespeare when `corpus` is None), as the
    record keeps it: a resumed run must read the same text."""
    if corpus is None:
        return _shakespeare_sha256()
    return hashlib.sha256(load_corpus(corpus).encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=1)
def _shakespeare_sha256() -> str:
    return hashlib.sha256(load_corpus().encode("utf-8")).hexdigest()


def kind_of(data) -> str | None:
    """Which command wrote a results file: its `kind`, or, for files written before records had one, the
    command line it keeps (`python -m mlm_lib.experiments.NAME ...`)."""
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("kind"), str):
        return data["kind"]
    line = data.get("command") or (data.get("commands") or [None])[0]
    words = line.split() if isinstance(line, str) else []
    if len(words) >= 3 and words[:2] == ["python", "-m"] and words[2].startswith("mlm_lib."):
        name = words[2].rsplit(".", 1)[-1]
        if "--save" in words and name == "speedrun" and "runs" not in data:
            return "model log"  # the log a saved model kept beside it
        return {"curriculum_experiment": "curriculum"}.get(name, name)
    return None


def read_results(path, kind: str | None = None, *, option: str = "--out") -> dict:
    """A results file, checked: it exists, is readable, holds a JSON object, and (with `kind`) was written by that
    command. Each failure is a ValueError that names the file and what it is instead."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{option} {path} is a folder: give a results file (.json)")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{option} {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"{option} {path} cannot be read ({getattr(err, 'strerror', None) or err}): give a results "
                         "file a command wrote") from None
    if not text.strip():
        raise ValueError(f"{option} {path} is empty, not a results file: give another --out, or --overwrite to "
                         "replace it")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{option} {path} is not JSON ({err.msg} at line {err.lineno}), so not a results file: give "
                         "another --out, or --overwrite to replace it") from None
    if not isinstance(data, dict):
        raise ValueError(f"{option} {path} holds a JSON {type(data).__name__}, not a results file (a JSON object "
                         "written by a command)")
    found = kind_of(data)
    if kind is not None and found != kind:
        what = f"a results file of `{found}`" if found else "not a results file of any command of this course"
        raise ValueError(f"{option} {path} is {what}, not of `{kind}`: give a file `{kind}` wrote"
                         + (", or another --out" if option == "--out" else ""))
    return data


# ---- the run: one output, its record, its lock -------------------------------------------------------------

_open_runs: list["Run"] = []  # the runs this process holds, released by `command` when it ends


def _shown(value) -> str:
    if isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value):
        return value[:12] + ".."  # a sha256
    return str(value) if not isinstance(value, bool) else ("yes" if value else "no")


def writable_folder(folder: Path) -> bool:
    """Whether `folder` (or the nearest existing folder above it, where it would be made) takes new files: tried
    by making (and at once removing) a file there, since permission bits say yes to root even where no file can
    be made (/proc, a read-only mount)."""
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        return False
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


class Run:
    """One invocation's outputs. `record` is the results file (a dict, written with `save`), `folder` the
    folder its models and resume states go in; `resuming` says whether an existing record is being continued.
    Made by `open_run`, which checks everything before any work."""

    def __init__(self, kind: str, record_path: Path, folder: Path, shown: str, options: dict, resuming: bool,
                 record: dict, lock: FileLock | None, command_line: str, resumable: bool = True):
        self.kind, self.record_path, self.folder, self.shown = kind, record_path, folder, shown
        self.options, self.resuming, self.record, self.lock = options, resuming, record, lock
        self.command_line, self.resumable = command_line, resumable

    def path(self, name: str) -> Path:
        """A file of this run, in its folder (made when first needed)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        return self.folder / name

    def state(self, job: str) -> Path:
        """Where the training of `job` (e.g. "bert-s0") keeps its resume state while it runs."""
        return self.path(f"{slug(job)}.resume.pt")

    def resume_from(self, job: str) -> Path | None:
        """The resume state `job` continues from: its state file, when this run is resumed and one was kept."""
        state = self.folder / f"{slug(job)}.resume.pt"
        return state if self.resuming and state.is_file() else None

    def save(self, status: str = "unfinished") -> None:
        """Write the record (atomically), with the run's kind, version, status and options first."""
        head = {"kind": self.kind, "version": mlm_lib.__version__, "status": status, "options": self.options}
        body = {k: v for k, v in self.record.items() if k not in head}
        self.record = head | body
        write_json(self.record_path, self.record, indent=1)

    def finish(self, finished: bool = True) -> None:
        """Record the run as finished (or not); its folder goes if nothing is left in it (no model kept)."""
        self.save("finished" if finished else "unfinished")
        if self.folder != self.record_path.parent and self.folder.is_dir() and not any(self.folder.iterdir()):
            self.folder.rmdir()

    def close(self) -> None:
        if self.lock is not None and self.lock.is_locked:
            self.lock.release()
        if self in _open_runs:
            _open_runs.remove(self)


def slug(name: str) -> str:
    """A job's name as a file name: "whole words" -> "whole-words", "MLM + NSP, lr 1e-3" -> "MLM-+-NSP,-lr-1e-3"."""
    return "".join(c if c.isalnum() or c in "+-.,=%_" else "-" for c in name.replace(" ", "-")).strip("-") or "run"


def _differences(old: dict, new: dict, version) -> list[str]:
    out = [] if version == mlm_lib.__version__ else [f"mlm_lib {version}, now {mlm_lib.__version__}"]
    for key in dict.fromkeys([*old, *new]):
        if old.get(key) != new.get(key):
            out.append(f"{key} {_shown(old.get(key, '(not given)'))}, now {_shown(new.get(key, '(not given)'))}")
    return out


def open_run(parser: argparse.ArgumentParser, kind: str, out, *, options: dict, resume: bool = False,
             overwrite: bool = False, folder_mode: bool = False, owned=(), record_name: str = "log.json",
             resumable: bool = True, argv=None) -> Run | None:
    """Check --out, lock it, and return the run (None when `out` is None: the command writes nothing).

    `out` is a results file (its models go in the folder of the same name without .json) or, with
    `folder_mode`, a folder whose record is `record_name` and whose files `owned` belong to the run. An existing
    record is replaced only with `overwrite` and continued only with `resume`, when its kind, version and every
    option in `options` are the same; each refusal is a usage error that names the fix, before any work.
    A command that is not `resumable` (it writes its output once, at the end) gets the same checks and lock."""
    if resume and overwrite:
        parser.error("--resume continues the run in --out and --overwrite replaces it: give one of them")
    if out is None:
        if resume:
            parser.error("--resume continues the run in --out: give --out")
        return None
    given = Path(out)
    if folder_mode:
        if given.exists() and not given.is_dir():
            parser.error(f"--out {given} is a file: give a folder for the outputs")
    else:
        if given.is_dir():
            parser.error(f"--out {given} is a folder: give a results file, e.g. {given / 'results.json'}")
        if given.suffix != ".json":
            parser.error(f"--out {given}: give a results file ending in .json (its models go in the folder "
                         f"{given.with_suffix('')}/)")
    target = Path(os.path.realpath(given))  # through a symbolic link: the link's target is the run's
    folder = target if folder_mode else target.with_suffix("")
    record_path = folder / record_name if folder_mode else target
    if not writable_folder(folder if folder_mode else target.parent):
        parser.error(f"--out {given}: cannot write there (not a folder, or no permission)")
    if not folder_mode and folder.exists() and not folder.is_dir():
        parser.error(f"--out {given} keeps its models in {folder}/, which is a file: move it, or give another --out")

    def leftovers() -> list[str]:  # files of an earlier run in the run's folder, which a new run must not take up
        if not folder.is_dir():
            return []
        names = [p.name for p in sorted(folder.iterdir()) if p.is_file() and not p.name.startswith(".")]
        return [n for n in names if n in owned] if folder_mode else names

    def check() -> tuple[bool, dict]:
        present = record_path.exists()
        if present and not (resume or overwrite):
            choices = "pass --resume to continue it, --overwrite to replace it," if resumable else \
                "pass --overwrite to replace it,"
            what = f"already holds a run ({record_name})" if folder_mode else "already exists"
            parser.error(f"--out {given} {what}: {choices} or give another path (nothing was written)")
        if not present and leftovers() and not overwrite:
            parser.error(f"--out {given}: {folder} holds files of a run with no record ({', '.join(leftovers())}): "
                         "move them, pass --overwrite to replace them, or give another --out (nothing was written)")
        if not (present and resume):
            return False, {}
        try:
            old = read_results(record_path, kind)
        except ValueError as err:
            parser.error(f"--resume: {err}")
        if not isinstance(old.get("options"), dict):
            parser.error(f"--resume: {given} was made by an mlm_lib that did not record its settings, so it cannot be "
                         "continued safely: write to another --out")
        differ = _differences(old["options"], options, old.get("version"))
        if differ:
            parser.error(f"--resume: {given} was made with " + "; ".join(differ)
                         + ": resume with the same settings, or write to another --out (nothing was written)")
        return True, old

    check()  # before the lock: a refusal leaves no lock file behind
    lock_path = folder / ".lock" if folder_mode else target.with_name(f".{target.name}.lock")
    lock = FileLock(lock_path, timeout=0)
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except Timeout:
        parser.error(f"--out {given} is being written by another run (it holds the lock {lock_path}): wait for it to "
                     "end, or give another --out (nothing was written)")
    except OSError as err:
        parser.error(f"--out {given}: cannot write there ({err.strerror})")
    try:
        resuming, record = check()  # again under the lock: the other run may have written it meanwhile
    except SystemExit:
        lock.release()
        raise
    if resume and not resuming:
        print(f"--resume: there is no {given} yet: starting the run", file=sys.stderr, flush=True)
    if not resuming:  # a new run: what an earlier one left (resume states, models) must not pass for its own
        for name in leftovers():
            (folder / name).unlink()
    line = command_line(kind, argv, resume=resumable)
    run = Run(kind, record_path, folder, str(given), options, resuming, record, lock, line, resumable)
    _open_runs.append(run)
    return run


def write_json(path, data, **dump_args) -> None:
    """Write JSON whole or not at all (`checkpoints.atomic_write`: a temporary file, then a rename; through a
    symbolic link to its target)."""
    text = json.dumps(data, **dump_args).encode("utf-8")
    atomic_write(path, lambda f: f.write(text))


# ---- faults: one line, never a traceback ------------------------------------------------------------------

class Interrupted(KeyboardInterrupt):
    """SIGINT (Ctrl-C) or SIGTERM, received where no training was under way to stop it between steps."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signal.Signals(signum).name)
        self.signal = int(signum)

    def __reduce__(self):  # a worker's stop travels back to the pool by pickle: rebuilt from its number, not its name
        return type(self), (self.signal,)


_deferred: list[int] = []   # signals received while a pool of jobs is running (`deferred_signals`)
_deferring = [False]


def _on_signal(signum, frame):
    if _deferring[0]:
        _deferred.append(signum)
        return
    raise Interrupted(signum)


@contextmanager
def deferred_signals():
    """While a pool of jobs runs, SIGINT and SIGTERM are noted, not raised: the pool tells its workers to stop and
    collects what they finished first (`run_jobs`)."""
    before = _deferring[0]
    _deferring[0] = True
    try:
        yield _deferred
    finally:
        _deferring[0] = before
        if not before:
            _deferred.clear()


def command_line(kind: str, argv, resume: bool = True) -> str:
    """The command line that continues a run: the same one, with --resume (and without --overwrite)."""
    words = [w for w in (sys.argv[1:] if argv is None else list(argv)) if w != "--overwrite"]
    if resume and "--resume" not in words:
        words.append("--resume")
    return recorded_command(kind, words)


def recorded_command(kind: str, argv) -> str:
    """The command line a results file records, quoted as a shell reads it (an arm such as 'mlm, continued' stays one
    word when the line is pasted back)."""
    return f"python -m mlm_lib.experiments.{kind} " + shlex.join(sys.argv[1:] if argv is None else list(argv))


def _stopped_line(signum: int, run: Run | None, kind: str, argv) -> str:
    name = "Ctrl-C (SIGINT)" if signum == signal.SIGINT else signal.Signals(signum).name
    if run is None or not run.resumable:
        return f"{kind}: stopped by {name} before anything was written: run the same command again."
    return (f"{kind}: stopped by {name}; what is done is kept in {run.shown} (recorded as unfinished). Continue with: "
            f"{run.command_line}")


def command(main):
    """The wrapper of every command's `main`: the fault rule in one place (see the module's docstring)."""
    spec = main.__globals__.get("__spec__")  # run as `python -m`, the module is __main__: its spec has the name
    kind = (spec.name if spec is not None else main.__module__).rsplit(".", 1)[-1]

    @functools.wraps(main)
    def wrapper(argv=None):
        handlers = {}
        if multiprocessing.current_process().name == "MainProcess":
            try:
                handlers = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
            except ValueError:  # not the main thread: leave the signals alone
                handlers = {}
        first = len(_open_runs)
        try:
            return main(argv)
        except KeyboardInterrupt as stop:
            run = _open_runs[-1] if len(_open_runs) > first else None
            signum = getattr(stop, "signal", signal.SIGINT)
            if os.environ.get("RANK", "0") == "0":
                print(_stopped_line(signum, run, kind, argv), file=sys.stderr, flush=True)
            raise SystemExit(128 + signum) from None
        except WriteError as err:
            run = _open_runs[-1] if len(_open_runs) > first else None
            kept = (f"the last good copy of it is where it was" if Path(err.filename).exists()
                    else "there was no earlier copy of it")
            again = (f" Then continue with: {run.command_line}" if run is not None and run.resumable
                     else " Then run the command again.")
            print(f"{kind}: error: cannot write {err.filename} ({err.strerror}). Nothing was replaced: {kept}. Free some "
                  f"space or restore the permission.{again}", file=sys.stderr, flush=True)
            raise SystemExit(1) from None
        except FloatingPointError as err:  # a run that diverged: its message names the fix
            print(f"{kind}: error: {err}", file=sys.stderr, flush=True)
            raise SystemExit(1) from None
        except (ValueError, FileNotFoundError) as err:  # input the library refuses, with a message naming the fix
            print(f"{kind}: error: {err}", file=sys.stderr, flush=True)
            raise SystemExit(2) from None
        finally:
            _deferring[0] = False
            while len(_open_runs) > first:
                _open_runs[-1].close()
            for s, old in handlers.items():
                signal.signal(s, old)

    return wrapper


# ---- jobs in processes of their own -----------------------------------------------------------------------

_in_task = [False]
_told: list[int] = []  # a signal that came between tasks (or while the worker was starting): the next task stops


def _worker_signal(signum, frame):
    if _in_task[0]:
        raise Interrupted(signum)
    _told.append(signum)


_STOPS = {signal.SIGINT, signal.SIGTERM}


def _worker_start() -> None:
    """A worker's first act: a process group of its own, so that Ctrl-C reaches it once, from its parent (which
    forwards the signal), and signals between tasks are ignored. The worker was started with the two signals
    blocked (`run_jobs`), so that none could strike while Python and torch were still being imported; they are
    let through only now."""
    os.setpgrp()
    for s in _STOPS:
        signal.signal(s, _worker_signal)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)


def _in_worker(threads: int, function, kwargs: dict):
    if _told:
        raise Interrupted(_told[0])
    torch.set_num_threads(threads)
    _in_task[0] = True
    try:
        return function(**kwargs)
    finally:
        _in_task[0] = False


def run_jobs(function, jobs: list[dict], at_once: int, threads: int):
    """Yield `function(**job)` for every job as it finishes, `at_once` of them at a time, each in its own process
    with `threads` torch threads (two one-thread runs on a two-core machine finish sooner than two two-thread runs
    one after the other). With `at_once` 1, in this process, one after the other.

    A signal (or a job's error) stops them all the same way: the jobs not started are dropped, the running ones
    are told to stop (a training ends its step and keeps its resume state), whatever finished is still yielded,
    and then the signal (or the error) is raised here: no worker is left behind, none prints a traceback."""
    if at_once == 1:
        for job in jobs:
            yield function(**job)
        return
    context = multiprocessing.get_context("spawn")
    with deferred_signals() as signals, ProcessPoolExecutor(max_workers=at_once, mp_context=context,
                                                            initializer=_worker_start) as pool:
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)  # the workers start with them blocked: none is
        try:                                                           # lost here, it waits until this unblocks
            running = {pool.submit(_in_worker, threads, function, job) for job in jobs}
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        failure, told = None, False

        def stop_all(signum: int) -> None:  # drop the jobs not started, ask the running ones to stop
            for future in running:
                future.cancel()
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                if process.is_alive():
                    os.kill(process.pid, signum)

        try:
            while running:
                done, running = wait(running, timeout=0.2, return_when=FIRST_COMPLETED)
                for future in done:
                    if future.cancelled():
                        continue
                    try:
                        result = future.result()
                    except KeyboardInterrupt as stop:
                        failure = failure or Interrupted(getattr(stop, "signal", signal.SIGINT))
                        continue
                    except BaseException as err:  # noqa: BLE001 - raised below, once the others have stopped
                        if signals and isinstance(err, BrokenProcessPool):  # a worker the signal ended first
                            err = Interrupted(signals[0])
                        failure = failure or err
                        continue
                    yield result
                if (signals or failure is not None) and not told:
                    told = True
                    failure = failure or Interrupted(signals[0])
                    stop_all(getattr(failure, "signal", signal.SIGINT))
        finally:
            if running and not told:  # the caller stopped early (its own error): the workers stop too
                stop_all(signal.SIGINT)
        if failure is not None:
            raise failure
