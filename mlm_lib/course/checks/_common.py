"""What every exercise check shares: the error a learner sees, and calling their function safely.

A check never shows the learner a traceback from inside torch or from the check itself: an error raised in
their function becomes an `ExerciseError` naming the line of *their* code that failed (with a hint where
the mistake is a common one), and the notebooks' setup cell makes IPython print an `ExerciseError` as its
message alone (`show_exercise_errors`).
"""
from __future__ import annotations

import difflib
import os
import re
import signal
import sysconfig
import threading
import traceback
from contextlib import contextmanager

import torch
import torch.nn as nn


class ExerciseError(AssertionError):
    """The answer is not right yet; the message says what to look at."""


class ParameterError(ValueError):
    """A value of a notebook's parameters cell that the notebook cannot use. Like an ExerciseError, the setup cell
    makes IPython print it as its message alone, which names the parameter and the fix: the frames of the cell
    would tell a learner who only edited the parameters cell nothing more."""


# Where a learner writes an answer, in the words every notebook's exercises use (notebook 00 explains it).
NOT_WRITTEN = ("Not written yet: the function still holds the placeholder. Write your answer in a new cell right "
               "above this check cell, run it, then run this check: the check grades the last definition that ran.")


_LIBRARY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # .../mlm_lib


_STDLIB = sysconfig.get_paths()["stdlib"]  # Python's own modules are no learner's code


def _learner_line(err: BaseException, graded: str | None = None) -> str:
    """`line N: <code>` of the last frame of the learner's own code in `err`'s traceback, or ''. Where that frame
    is another function of the notebook's (one the learner's function called), it is named, so that nobody looks
    for its line in the answer's own cell."""
    frames = [f for f in traceback.extract_tb(err.__traceback__)
              if not f.filename.startswith(_LIBRARY) and "site-packages" not in f.filename
              and "/torch/" not in f.filename and f.filename != "<string>"  # <string>: a dataclass's own __init__
              and not f.filename.startswith(_STDLIB)]
    if not frames:
        return ""
    frame = frames[-1]
    where = f"line {frame.lineno}: {frame.line}" if frame.line else f"line {frame.lineno}"
    if graded and frame.name not in (graded, "<lambda>", "<module>", "<listcomp>", "<genexpr>", "<dictcomp>"):
        where = f"in {frame.name}, which your function called, {where}"
    return where


_SOLUTION = "### BEGIN SOLUTION"  # the marker of the course's solutions (mlm_lib.course.student)
_graded: list = [None]  # the function the running check calls (`_call`), for `_ok`'s note


def _source(fn) -> str | None:
    """The answer's source code, or None where there is none to read (a lambda typed at a prompt, a built-in): the
    checks read it to tell the course's solution from a learner's, and to word a hint after what the answer wrote."""
    import inspect

    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return None


def _is_course_solution(fn) -> bool:
    """Whether `fn` is the course's own solution, defined in the folded cell (its source holds the marker)."""
    return _SOLUTION in (_source(fn) or "")


@contextmanager
def _time_limit(seconds: float | None, what: str):
    """Stop the learner's function after `seconds` with an ExerciseError (a loop that never ends would otherwise
    hang the check). On Unix, in the kernel's main thread only, where a timer signal can interrupt Python code;
    elsewhere the call runs unlimited."""
    if not seconds or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise ExerciseError(f"Your function ran for more than {seconds:g} s on {what}, which takes the course's "
                            "answer a moment: a loop that never ends? Check that every pass of each loop moves "
                            "forward, also when nothing matches.")
    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _call(fn, *args, hint=None, seconds: float | None = None, what: str = "the check's input"):
    """Call the learner's function; translate what can go wrong into an ExerciseError that says why.

    `hint(err) -> str | None` adds advice for errors a common mistake produces; `seconds` stops a function that
    runs longer (`_time_limit`).
    """
    if not callable(fn):
        shown, kind = repr(fn), type(fn).__name__
        article = "an" if kind[0] in "aeiou" else "a"
        raise ExerciseError(f"The check needs a function, and what you passed is {article} {kind}"
                            + (f", {shown}" if len(shown) <= 60 else "") + ". Define the function with `def name(...):`, "
                            "let it return the answer, and pass the function itself (e.g. check(my_function)).")
    _graded[0] = fn
    try:
        with _time_limit(seconds, what):
            return fn(*args)
    except NotImplementedError:
        raise ExerciseError(NOT_WRITTEN) from None
    except ExerciseError:
        raise
    except Exception as err:  # a wrong answer that crashed: say where, in the learner's code, and why
        lines = [line.strip() for line in str(err).strip().splitlines() if line.strip()] or [""]
        first = lines[0]
        if first.endswith(":") and len(lines) > 1:  # "... but expected one of:": the lines after it are the message
            first += " " + " | ".join(lines[1:4])
        first = first[:300]
        message = f"Your function stopped with {type(err).__name__}" + (f": {first}" if first else "")
        called = ", ".join(repr(a) for a in args)
        if len(called) <= 80 and not any(isinstance(a, torch.Tensor) for a in args):  # an input short enough to read
            message += f"\n  called with: {called}"
        where = _learner_line(err, getattr(fn, "__name__", None))
        if where:
            message += f"\n  in your code, {where}"
        advice = (hint(err) if hint is not None else None) or _general_hint(err, fn)
        if advice:
            message += f"\nHint: {advice}"
        raise ExerciseError(message) from None


def _general_hint(err: Exception, fn=None) -> str | None:
    """Advice for a crash any exercise can meet, where the check's own hint has none."""
    text = str(err)
    if isinstance(err, TypeError) and "'str' object does not support item assignment" in text:
        return ("a Python string cannot be changed in place, one character at a time: build a new string from the "
                "old one and return that.")
    own = list(getattr(getattr(fn, "__code__", None), "co_varnames", ()))  # the function's parameters and names
    close = difflib.get_close_matches(getattr(err, "name", None) or "", own, n=1, cutoff=0.75)
    if isinstance(err, NameError) and close:
        return f"nothing called {err.name} exists where your function runs: did you mean {close[0]}, a name of yours?"
    modules = {"F": "import torch.nn.functional as F", "torch": "import torch", "math": "import math",
               "np": "import numpy as np", "nn": "import torch.nn as nn"}
    if isinstance(err, NameError) and getattr(err, "name", None) in modules:  # a module's usual short name
        return (f"nothing called {err.name} exists where your function runs: it is a module the notebook imports in "
                f"a cell you have not run in this kernel. Import it in your own cell ({modules[err.name]}), or run "
                "the cells above first.")
    if isinstance(err, NameError) and getattr(err, "name", None):
        return (f"nothing called {err.name} exists where your function runs. If it is a helper of your own, write it "
                "(or compute it inline); if it is a library function, call it by its full name as the notebook does "
                "(e.g. torch.cat, F.gelu).")
    takes = re.match(r"[\w<>.]+\(\) (?:takes|missing) .*(?:positional argument|were given)", text)
    if isinstance(err, TypeError) and takes and fn is not None and err.__traceback__ is not None \
            and err.__traceback__.tb_next is None:  # raised by the call itself, not inside the function
        import inspect
        try:
            yours = ", ".join(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            yours = "?"
        return (f"the check calls your function with the task's arguments, and yours takes ({yours}): define it "
                "with the arguments the task names, in its order.")
    module = re.search(r"operand type\(s\) for .*'(\w+)' and|'(\w+)' object is not subscriptable", text)
    name = module and (module[1] or module[2])
    if isinstance(err, TypeError) and name and isinstance(getattr(nn, name, None), type) and issubclass(
            getattr(nn, name), nn.Module):
        return (f"nn.{name}(...) builds a layer (a module) rather than computing anything: call the layer it returns "
                f"on a tensor, or use the function form from torch.nn.functional.")
    return None


def _ok(message: str) -> None:
    """The check passed. Where what it graded is the course's solution (a learner ran the notebook top to bottom, or
    their own definition had another name or did not run), it says so: a ✓ for the folded answer is not theirs."""
    fn, _graded[0] = _graded[0], None
    if fn is not None and _is_course_solution(fn):  # said first, so that no one reads the ✓ as theirs
        print(f"✓ The course's answer passes: this graded {getattr(fn, '__name__', 'the function')} from the folded "
              "solution cell above, not yet yours (unless you typed yours into that cell). " + message)
        print("  To grade yours, define a function of that name in a new cell right above this check, run it, then "
              "this check again.")
    else:
        print("✓ Correct. " + message)


def _carries_gradient(loss: torch.Tensor) -> None:
    """A loss that training can use: `loss.backward()` needs the path back to the logits the check gave (with
    requires_grad). A value copied out (.item(), .detach(), torch.no_grad()) and wrapped again has none."""
    if loss.grad_fn is None:
        raise ExerciseError("Your loss carries no gradient: something on its way cut the path back to the logits "
                            "(argmax or a comparison such as ==, a .detach(), .item() turned back into a tensor, or "
                            "torch.no_grad()), and training calls loss.backward(), which needs that path.")


IN_PLACE_ON_LOGITS = ("your function writes into the logits it was given, in place: they are the model's output, "
                      "which the caller (and backward) still need as they were. Select the positions with a mask or "
                      "index instead of assigning into the tensor.")


def _none_message(what: str) -> str:
    return (f"Your function returned None, so nothing came back: only `return` hands {what} back to the caller "
            f"(a function with no `return`, or one that prints its answer, returns None).")


def _tensor(x, what: str) -> torch.Tensor:
    if x is None:
        raise ExerciseError(_none_message(what))
    if not isinstance(x, torch.Tensor):
        raise ExerciseError(f"Return a torch tensor for {what}, not {type(x).__name__}.")
    return x


NAME_HINT = ("Hint: nothing of that name exists in this kernel yet. Check its spelling, and run the cell that "
             "defines it first: your answer's cell (or the folded solution cell above), or Run > Run All Above "
             "Selected Cell; after a kernel restart every cell above must run again. If a cell above stopped with "
             "an error, the names it would have made are missing: fix that error first.")


def _exercise_error_only(shell, etype, value, tb, tb_offset=None):
    """IPython custom-exception handler: an ExerciseError shows as its message, without the frames of the
    check (which would show the expected answer and distract from the learner's own code); a NameError (a check
    run before the cell defining its function, often after a restart) keeps its traceback and gains a line saying
    how names come to exist."""
    if issubclass(etype, (ExerciseError, ParameterError)):
        stb = [f"\x1b[1;31m{etype.__name__}\x1b[0m: {value}"]
    else:
        stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset) + [NAME_HINT]
    shell._showtraceback(etype, value, stb)  # IPython leaves the showing to the handler
    return stb


def show_exercise_errors() -> None:
    """In IPython (Jupyter), print ExerciseError and ParameterError as their message alone, and a NameError with a hint; the cell still
    fails, as it should."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.set_custom_exc((ExerciseError, ParameterError, NameError), _exercise_error_only)
