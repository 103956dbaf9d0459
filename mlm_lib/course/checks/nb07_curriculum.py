"""Checks for the exercises of notebook 07 (curriculum)."""
from __future__ import annotations

import numbers

from ...curriculum import linear
from ._common import ExerciseError, _call, _none_message, _ok


def _refuse_swapped(fn, schedule, short, long, until, multiple) -> None:
    """The last two arguments read the other way round: right everywhere once they are swapped back."""
    points = (0.0, 0.1, until / 2, until * 0.99, until, 0.9, 1.0)
    try:
        swapped = [fn(p, short, long, multiple, until) for p in points]
    except Exception:  # noqa: BLE001 -- not that mistake, then
        return
    if swapped == [schedule.length_at(p) for p in points]:
        raise ExerciseError("Your function gives the right lengths when its last two arguments are swapped: the check, "
                            "like the notebook, calls linear_length(progress, short, long, until, multiple), "
                            "`until` before `multiple`.")


def check_linear_length(fn) -> None:
    """fn(progress, short, long, until, multiple) -> the linear schedule's window length (an int)."""
    as_float = None
    for short, long, until, multiple in ((16, 128, 0.5, 8), (8, 64, 0.25, 4), (10, 50, 0.5, 4)):
        schedule = linear(short, long, until=until, multiple=multiple)
        for progress in (0.0, 0.1, until / 2, until * 0.99, until, 0.9, 1.0):
            expected = schedule.length_at(progress)
            got = _call(fn, progress, short, long, until, multiple)
            if got is None:
                raise ExerciseError(_none_message("the length"))
            if isinstance(got, bool) or not isinstance(got, numbers.Real):
                raise ExerciseError(f"Return a whole number (int), not {type(got).__name__} {got!r}: a length counts "
                                    "characters.")
            if got == expected:
                if not isinstance(got, numbers.Integral):  # the right value as a float: named after the values
                    as_float = as_float or (expected, got)
                continue
            _refuse_swapped(fn, schedule, short, long, until, multiple)
            if progress >= until:
                if progress == until and _call(fn, min(1.0, until * 1.01 + 1e-9), short, long, until, multiple) == long:
                    raise ExerciseError(f"At progress {until} = until the growth is over and the length is `long` "
                                        f"({long}); yours gives {got} there and `long` only after it: the test is "
                                        "progress >= until, not >.")
                if got == long // multiple * multiple:
                    raise ExerciseError(f"From progress {until} on the length is `long` itself ({long}), not "
                                        "rounded: rounding applies only while the length grows.")
                raise ExerciseError(f"After progress {until} the length stays at `long` ({long}); got {got} at "
                                    f"{progress}.")
            if got < short:
                raise ExerciseError(f"Never below `short`: with short={short} and multiple={multiple}, rounding down "
                                    f"gives {got}; take max(short, ...).")
            if got % multiple:
                raise ExerciseError(f"At progress {progress} ({short}->{long} by {until}) you returned {got}, which is not "
                                    f"a multiple of {multiple}: while it grows, the length is rounded *down* to one.")
            # the growth itself off, the rounding right: told from "one multiple too low" by every progress point
            def _rounded(value, short=short, multiple=multiple):
                return max(short, int(value // multiple * multiple))
            grown_wrong = {
                "the length grows over the whole run here, not by `until`: it reaches `long` at progress until, so "
                "the share grown is progress / until": lambda q: _rounded(short + (long - short) * q),
                "the length grows from 0 here, not from `short`: start from short and add the share of (long - "
                "short) grown": lambda q: _rounded(long * q / until)}
            growing = [q for q in (0.1, until / 2, until * 0.99) if q < until]
            answers = [_call(fn, q, short, long, until, multiple) for q in growing]
            for why, slip in grown_wrong.items():
                if answers == [slip(q) for q in growing]:
                    raise ExerciseError(f"At progress {progress} ({short}->{long} by {until}) expected {expected}, got "
                                        f"{got}: {why}.")
            typed = {m for m in (8, 4) if m != multiple and got == max(short, min(long, int(
                short + (long - short) * progress / until) // m * m))}
            if typed and multiple != 8:
                raise ExerciseError(f"At progress {progress} ({short}->{long} by {until}, multiple {multiple}) expected "
                                    f"{expected}, got {got}: that is rounded to a multiple of {typed.pop()}, not of the "
                                    f"`multiple` your function was given ({multiple}). Use the argument.")
            if got == expected - multiple and got >= short:
                raise ExerciseError(f"At progress {progress} ({short}->{long} by {until}) expected {expected}, got "
                                    f"{got}: one multiple of {multiple} too low. Rounding down keeps the multiple at "
                                    "or below the grown length; nothing more is taken off.")
            if got == expected + multiple:
                raise ExerciseError(f"At progress {progress} ({short}->{long} by {until}) expected {expected}, got "
                                    f"{got}: that is rounded up (or to the nearest multiple); the length is rounded "
                                    f"*down* to a multiple of {multiple}.")
            raise ExerciseError(f"At progress {progress} ({short}->{long} by {until}) expected {expected}, got {got!r}. "
                                "short + (long - short) * progress / until, rounded down to a multiple.")
    if as_float:
        raise ExerciseError(f"The right lengths, but as floats ({as_float[1]!r} for {as_float[0]}): return whole "
                            "numbers (int(...)), since a length counts characters.")
    # the notebook's own schedules (section 3's, section 5's), at every thousandth of the run: a slip that the points
    # above miss shows here. (Not other schedules: an answer that divides first, progress / until, is a hair short of
    # a multiple at a few points of some, such as 8->128 by 0.75, and is right on all of these.)
    for short, long, until, multiple in ((16, 64, 0.5, 8), (16, 128, 0.5, 8), (8, 128, 0.5, 8), (32, 128, 0.5, 8),
                                         (16, 128, 0.25, 8), (16, 128, 0.75, 8)):
        schedule = linear(short, long, until=until, multiple=multiple)
        for step in range(1001):
            progress = step / 1000
            expected, got = schedule.length_at(progress), _call(fn, progress, short, long, until, multiple)
            if got == expected:
                continue
            grown = short + (long - short) * progress / until
            message = (f"At progress {progress} ({short}->{long} by {until}) expected {expected}, got {got!r}: the "
                       f"grown length there is {grown:.2f}, and rounded *down* to a multiple of {multiple} it is "
                       f"{expected}.")
            if got == max(short, min(long, round(grown) // multiple * multiple)):
                message += (" You rounded to the nearest whole number first, which can carry it past a multiple: "
                            "round only once, and down.")
            raise ExerciseError(message)
    # the library allows until=0: the length is `long` from the start, with nothing to divide by
    got = _call(fn, 0.0, 16, 128, 0.0, 8, hint=lambda err: (
        "the check also tries until=0 (no growth: the length is `long` from the start, as "
        "mlm_lib.curriculum.linear allows). Test progress >= until before dividing by until."
        if isinstance(err, ZeroDivisionError) else None))
    if got != 128:
        raise ExerciseError(f"With until=0 there is no growth: the length is `long` (128) from the start; got {got!r}.")
    _ok("The same lengths as mlm_lib.curriculum.linear on every schedule of this notebook.")


def _reaching_hint(err):
    if isinstance(err, StopIteration):
        return ("next(...) ran out: the check also tries a target the loss never reaches, and then the answer is "
                "None. A next() with nothing left to give stops with StopIteration unless it is told what to "
                "give instead.")
    if isinstance(err, IndexError) or (isinstance(err, ValueError) and "empty" in str(err)):
        return ("the check also tries a target no evaluation reaches, a single evaluation and empty lists: where "
                "nothing reaches the target the answer is None (the call above shows which case stopped yours).")
    return None


def check_first_reaching(fn) -> None:
    """fn(tokens: list, losses: list, target) -> tokens at the first evaluation with loss <= target, or None."""
    falling = ([100, 200, 300, 400, 500], [3.2, 3.0, 2.6, 2.7, 2.4])
    rising = ([100, 200, 300, 400, 500, 600], [3.19, 3.09, 3.05, 3.07, 2.83, 2.76])  # like the step schedule's
    cases = [(falling, 3.0, 200), (falling, 2.65, 300), (falling, 2.45, 500), (falling, 2.0, None),
             (falling, 5.0, 100), (rising, 3.06, 300), (rising, 2.9, 500), (([700], [2.5]), 2.5, 700),
             (([], []), 3.0, None)]
    for (tokens, losses), target, expected in cases:
        got = _call(fn, list(tokens), list(losses), target, hint=_reaching_hint)
        where = f"tokens {tokens} with losses {losses}" if tokens else "empty lists (no evaluation at all)"
        if expected is not None and got is not None and (isinstance(got, bool) or not isinstance(got, numbers.Integral)):
            if isinstance(got, numbers.Real) and got in losses:
                raise ExerciseError(f"For {where} and target {target} you returned {got!r}, a loss: return the tokens "
                                    "of the first evaluation that reaches the target, the number of training tokens "
                                    "it took.")
            if isinstance(got, numbers.Real) and got not in tokens:
                raise ExerciseError(f"For {where} and target {target} you returned {got!r}, which is not one of the "
                                    "evaluations' tokens: return the tokens value of an evaluation as it is (no "
                                    "interpolation between two; mlm_lib.curriculum.tokens_to_reach does that, after).")
            raise ExerciseError(f"Return a number from `tokens` as it is (an int) or None, not {type(got).__name__} "
                                f"{got!r}: the notebook prints and divides these values. (If your value is computed, "
                                "e.g. between two evaluations, return the evaluation's own tokens instead.)")
        if got == expected and (got is None) == (expected is None):
            continue
        strict = next((t for t, loss in zip(tokens, losses) if loss < target), None)
        if got == strict and expected != strict:
            try:  # '<' or one evaluation late? a curve where the two answers differ tells them apart
                late = _call(fn, [100, 200, 300, 400], [3.0, 2.5, 2.5, 2.4], 2.5, hint=_reaching_hint)
            except ExerciseError:
                late = None
            if late == 300:
                raise ExerciseError(f"For {where} and target {target} expected {expected}, got {got!r}: one "
                                    "evaluation late. Return the tokens of the evaluation whose loss reached the "
                                    "target (tokens[i]), not of the one after it.")
            raise ExerciseError(f"For {where} and target {target} expected {expected}, got {got!r}: a loss equal to "
                                "the target reaches it too ('at or below': <=, not <).")
        if expected is None:
            if not tokens:
                raise ExerciseError(f"With empty lists (no evaluation at all) return None, not {got!r}.")
            raise ExerciseError(f"For {where} and target {target}, no evaluation gets that low: return None, "
                                f"not {got!r} (None says 'never reached', which no number can).")
        if tokens is rising[0] and target == 3.06 and got == 500:
            raise ExerciseError(f"For {where} and target {target} expected 300, got 500. A loss can rise again (the "
                                "step schedule's does, at the switch): your answer finds the first evaluation only when "
                                "the losses fall all the way, as a binary search assumes. Look at them in order.")
        try:  # the arguments read in another order: the notebook calls first_reaching(tokens, losses, target)
            swapped = fn(list(losses), list(tokens), target) if tokens else None
        except Exception:
            swapped = None
        if tokens and expected is not None and swapped == expected:
            raise ExerciseError(f"For {where} and target {target} expected {expected}, got {got!r}. Your function "
                                "gives the right answer when its first two arguments are swapped: the check, like the "
                                "notebook's cell below, calls first_reaching(tokens, losses, target), tokens first.")
        if got == 400 and target == 2.65:
            raise ExerciseError("The first evaluation at or below the target counts, even if the loss goes up again.")
        first = next(i for i, loss in enumerate(losses) if loss <= target)
        if got == first and tokens[first] != first:
            raise ExerciseError(f"For {where} and target {target} expected {expected}, got {got!r}: that is the "
                                f"evaluation's place in the lists (its index), not its tokens. Return the tokens "
                                "value at that place.")
        raise ExerciseError(f"For {where} and target {target} expected {expected}, got {got!r}: walk through the "
                            "evaluations in order and return the tokens of the first whose loss <= target.")
    _ok("A lower number means fewer training tokens to the same quality.")
