"""Checks for the exercises of notebook 00 (overview)."""
from __future__ import annotations

import re

from ._common import ExerciseError, _call, _none_message, _ok


def check_blank_positions(fn) -> None:
    """fn(text: str) -> the indices of the underscores in `text`, in order (a list)."""
    other = None  # a tuple, tensor or array where a list was asked for: accepted, and said so
    for text in ("To b_ or n_t", "___", "no blanks here", "_a_", "", "  well-a-d_y", "- _"):
        expected = [i for i, c in enumerate(text) if c == "_"]
        got = _call(fn, text)
        if got is None and not expected:
            raise ExerciseError(f"{text!r} has no blank: return an empty list, [] (None would say that nothing came "
                                "back; an empty list says there are no positions).")
        if got is None:
            raise ExerciseError(_none_message("the positions"))
        if type(got).__module__.startswith("torch") and hasattr(got, "dim") and got.dim() == 1:
            raise ExerciseError("You returned a tensor: return a plain list, as the task asks (positions.tolist() "
                                "makes one). A tensor's items are tensors too, and a tensor used as a dictionary key "
                                "does not match the int it holds, so a right answer to the next exercise could "
                                "silently find no blank.")
        if hasattr(got, "tolist") and not isinstance(got, (int, float)):  # a NumPy array or a tensor of positions
            other = other or type(got).__name__
            got = got.tolist()
        if isinstance(got, (int, float)):
            raise ExerciseError(f"For {text!r} you returned one number, {got!r}: return every position, in a list "
                                "(e.g. [4, 10]), not how many there are or where one is.")
        if isinstance(got, (set, frozenset)):
            raise ExerciseError("Return the positions in a list, not a set: a set has no order, and the positions "
                                "must come in the order of the text.")
        if hasattr(got, "__next__"):
            raise ExerciseError(f"Return the positions in a list, not a {type(got).__name__}: the next cells read "
                                "them more than once, and a generator or an iterator is used up after one pass.")
        if not isinstance(got, (list, tuple)):
            raise ExerciseError(f"Return the positions in a list, not a {type(got).__name__}.")
        other = other or ("tuple" if isinstance(got, tuple) else None)
        if any(isinstance(i, bool) for i in got) and len(got) == len(text):
            raise ExerciseError(f"For {text!r} you returned a True/False for every character: return the positions "
                                "where it is True, the numbers themselves (e.g. [4, 10]).")
        if any(isinstance(i, str) for i in got) and all(isinstance(i, str) and i.strip().isdigit() for i in got):
            raise ExerciseError(f"For {text!r} you returned {list(got)!r}: strings of digits. Positions are whole "
                                "numbers (ints), which is what predict_masked reads: leave out str().")
        if any(isinstance(i, float) for i in got):
            raise ExerciseError(f"For {text!r} you returned {list(got)!r}: floats. Positions are whole numbers "
                                "(ints), which is what predict_masked reads.")
        try:
            got = [int(i) for i in got]
        except (TypeError, ValueError):
            raise ExerciseError(f"For {text!r} you returned {list(got)!r}: return a flat list of whole-number "
                                "positions (one number per blank, not the characters, a pair or a nested list).") from None
        if got == expected:
            continue
        if -1 in got:
            raise ExerciseError(f"For {text!r} expected {expected}, got {got}: -1 is what str.find returns when it "
                                "finds nothing, not a position. Stop (or skip) when find gives -1.")
        extra = [i for i in got if i not in expected]
        if set(expected) <= set(got) and extra and all(0 <= i < len(text) for i in extra):
            shown = ", ".join(f"{i} ({text[i]!r})" for i in extra[:4])
            raise ExerciseError(f"For {text!r} expected {expected}, got {got}: every blank is there, and more: "
                                f"{shown} {'is' if len(extra) == 1 else 'are'} not '_'. Keep only the positions whose "
                                "character is '_' itself.")
        if sorted(got) == expected:
            raise ExerciseError(f"For {text!r} expected {expected}, got {got}: the right positions in another order. "
                                "Return them in the order of the text, first blank first.")
        if expected and expected[-1] == len(text) - 1 and got == expected[:-1]:
            raise ExerciseError(f"For {text!r} expected {expected}, got {got}: the last character was left out. "
                                "Positions run up to len(text) - 1 included, and range(len(text)) already stops there.")
        stripped = text.strip()
        if stripped != text and got == [i for i, c in enumerate(stripped) if c == "_"]:
            raise ExerciseError(f"For {text!r} expected {expected}, got {got}: those are positions in the text with "
                                "its outer spaces stripped. Positions count in the text as given, the spaces at its "
                                "start included: leave the text as it is.")
        runs = [m.start() for m in re.finditer("_+", text)]
        if got == runs and runs != expected:
            raise ExerciseError(f"For {text!r} expected {expected}, got {got}: a run of blanks next to each other was "
                                "counted as one. Every `_` is a blank of its own, with its own position.")
        if got == [i + 1 for i in expected]:
            raise ExerciseError("Off by one: Python counts positions from 0, so the first character is 0.")
        if len(expected) > 1 and got == expected[:1]:
            raise ExerciseError(f"Only the first blank: {text!r} has {len(expected)} blanks, and you returned one "
                                "position. Every `_` needs its own.")
        if len(expected) > 1 and got == expected[:1] * len(expected):
            raise ExerciseError(f"For {text!r} expected {expected}, got {got}: every blank got the position of the "
                                "first one. A search for '_' (str.index, str.find) always finds the first match.")
        if got and max(got) >= len(text) and _probe(fn, "_") == got:
            raise ExerciseError(f"For {text!r} expected {expected}, got {got}, and the same for '_': your function "
                                "does not read its argument. Look for the blanks in `text`, the text it is given, "
                                "not in the notebook's sentence.")
        if len(got) == len(expected) and got == [p - i for i, p in enumerate(expected)]:
            raise ExerciseError(f"For {text!r} expected {expected}, got {got}: the blanks themselves were not "
                                "counted. Every character counts towards a position, each `_` too.")
        missed = [i for i in expected if i not in got]
        if 0 in missed and set(got) <= set(expected):
            raise ExerciseError(f"For {text!r} expected {expected}, got {got}: the blank at position 0 was missed. 0 "
                                "is a position like any other, though Python reads it as False in a condition "
                                "(`while pos:`, `if pos:`); str.find says 'not found' with -1.")
        if got and set(got) < set(expected):
            raise ExerciseError(f"For {text!r} expected {expected}, got {got}: the positions you found are right, "
                                f"but {missed} {'is' if len(missed) == 1 else 'are'} missing. "
                                + ("A blank right after another one was skipped: look at every character, each "
                                   "one after the last you looked at." if any(i - 1 in expected for i in missed)
                                   else "Every `_` needs its own position."))
        raise ExerciseError(f"For {text!r} expected {expected}, got {got}: positions count every character from "
                            "the start of the text, the first one being 0.")
    _ok("Those are the positions the model will see as [MASK]."
        + (f" (You returned {'an' if other[0] in 'aeiou' or other == 'ndarray' else 'a'} {other}; a list was asked for, and "
           f"{'an' if other[0] in 'aeiou' or other == 'ndarray' else 'a'} {other} works just as well here.)" if other else ""))


def _probe(fn, *args):
    """The answer's result on another input, to tell two mistakes apart; None where it fails there."""
    try:
        return _call(fn, *args)
    except ExerciseError:
        return None


def check_fill_in(fn) -> None:
    """fn(text, positions, guesses) -> text with guesses[i] written at positions[i]."""
    cases = [("To b_ or n_t", [4, 10], ["e", "o"], "To be or not"), ("_a_", [0, 2], ["b", "t"], "bat"),
             ("same", [], [], "same"), ("abcdef", [3, 0], ["Y", "X"], "XbcYef"),
             ("banana", [5], ["o"], "banano"), ("To b_ or n_t", [10, 4], ["o", "e"], "To be or not")]
    for text, positions, guesses, expected in cases:
        given_positions, given_guesses = list(positions), list(guesses)
        got = _call(fn, text, given_positions, given_guesses)
        if (given_positions, given_guesses) != (positions, guesses):
            changed = "positions" if given_positions != positions else "guesses"
            shown = given_positions if changed == "positions" else given_guesses
            raise ExerciseError(f"Your function changed the lists it was given ({changed} became {shown}): "
                                "list.sort(), list.pop() and similar methods change the caller's list in place, and "
                                "the caller may still need it. sorted(...) or a copy, list(positions), make a new one.")
        if got == expected:
            continue
        if got is None and not positions:
            raise ExerciseError(f"fill_in({text!r}, [], []) returned None: with nothing to fill in, return the text "
                                "as it is.")
        if got is None:
            raise ExerciseError(_none_message("the new text"))
        chars = list(text)
        for p, g in zip(positions, guesses):
            chars[p] = g
        if isinstance(got, str) and got in (" ".join(chars), ", ".join(chars)):
            raise ExerciseError(f"fill_in({text!r}, {positions}, {guesses}) gave {got!r}: the characters were joined "
                                "with a separator between them. Join them with nothing between: ''.join(chars).")
        if isinstance(got, str) and got == str(chars):
            raise ExerciseError(f"fill_in({text!r}, {positions}, {guesses}) gave {got!r}: str() of a list writes the "
                                "list as Python shows it, brackets and quotes included. Join the characters into "
                                "one string: ''.join(chars).")
        if len(positions) > 1 and got == text[:positions[0]] + guesses[0] + text[positions[0] + 1:]:
            if _probe(fn, "abcd", [0, 1, 2], ["x", "y", "z"]) == "xycd":  # three positions tell the two slips apart
                raise ExerciseError(f"fill_in({text!r}, {positions}, {guesses}) gave {got!r}, and "
                                    "fill_in('abcd', [0, 1, 2], ['x', 'y', 'z']) gave 'xycd': every guess but the "
                                    "last is written. Does the loop stop one short? It must visit every position.")
            raise ExerciseError(f"fill_in({text!r}, {positions}, {guesses}) gave {got!r}: only the first guess was "
                                "written. Is the `return` inside the loop, or is there no loop over the positions? "
                                "Every position needs its guess, and the return comes after the loop ends.")
        if isinstance(got, str) and len(got) == len(text) and len(positions) > 1 and got == text[:positions[0]] + \
                guesses[0] + text[positions[0] + 1:positions[1]] + guesses[0] + text[positions[1] + 1:]:
            raise ExerciseError(f"fill_in({text!r}, {positions}, {guesses}) gave {got!r}: the first guess was written "
                                "at every position. guesses[i] belongs at positions[i]: pair them (zip) or index "
                                "guesses with the same counter as positions.")
        untouched = _probe(fn, "xyz", [], [])  # nothing to fill in: the text itself comes back
        if isinstance(got, str) and isinstance(untouched, str) and untouched != "xyz" and len(untouched) == len(got):
            raise ExerciseError(f"fill_in({text!r}, {positions}, {guesses}) gave {got!r}, and fill_in('xyz', [], []) "
                                f"gave {untouched!r}: fill in the function's own argument, text, not the notebook's "
                                "sentence.")
        if positions != sorted(positions):
            pairs = sorted(zip(positions, guesses))
            if _probe(fn, text, [p for p, _ in pairs], [g for _, g in pairs]) == expected:
                raise ExerciseError(f"fill_in({text!r}, {positions}, {guesses}) gave {got!r}, though with the same "
                                    "positions in increasing order it is right: positions may come in any order "
                                    "(guesses[i] still belongs at positions[i]), so do not assume each comes after "
                                    "the one before.")
        if isinstance(got, str) and len(got) == len(text) and any(text.replace(text[p], g, 1) == got
                                                                   for p, g in zip(positions, guesses)):
            raise ExerciseError(f"fill_in({text!r}, {positions}, {guesses}) gave {got!r}: str.replace changes the "
                                "first place where that character occurs, which need not be the position you meant. "
                                "Write at the position itself.")
        if isinstance(got, list):
            raise ExerciseError("Return a string, not a list of characters: join them back together into one string.")
        left = list(text)
        for p, g in zip(positions, guesses):
            left[p - 1] = g
        if positions and all(p >= 1 for p in positions) and got == "".join(left):
            raise ExerciseError(f"fill_in({text!r}, {positions}, {guesses}) gave {got!r}: each guess landed one "
                                "place to the left of its position. Positions count from 0, like Python's indices: "
                                "write at positions[i] itself, not positions[i] - 1.")
        if isinstance(got, str) and positions and max(positions) < len(text) - 1 and got == expected[:max(positions) + 1]:
            raise ExerciseError(f"fill_in({text!r}, {positions}, {guesses}) gave {got!r}: everything up to the last "
                                f"blank is right, but the text after it, {text[max(positions) + 1:]!r}, is missing. "
                                "After the loop, add what follows the last blank.")
        if isinstance(got, str) and len(got) != len(text):
            raise ExerciseError(f"fill_in({text!r}, {positions}, {guesses}) gave {got!r}, {len(got)} characters "
                                f"instead of {len(text)}: each guess replaces one character, so the text keeps its "
                                "length.")
        if "_" not in text:
            raise ExerciseError(f"fill_in({text!r}, {positions}, {guesses}) should give {expected!r}, got {got!r}: "
                                "write guesses[i] at positions[i], whatever character is there and in whatever "
                                "order the positions come (do not look for '_').")
        raise ExerciseError(f"fill_in({text!r}, {positions}, {guesses}) should give {expected!r}, got {got!r}.")
    _ok("Strings are immutable, so the answer is a new string, built from the old one.")
