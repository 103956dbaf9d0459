"""Checks for the exercises of notebook 11 (fine-tuning: verse or prose)."""
from __future__ import annotations

import torch

from ...finetune import PROSE, VERSE, verse_or_prose
from ._common import ExerciseError, _call, _ok, _tensor

_SPEECHES = [
    "HAMLET:\nTo be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer",
    "SIR TOBY BELCH:\nWhat a plague means my niece, to take the death of\nher brother thus? I am sure care's an enemy to life.",
    "MARIA:\nAy, he.",
    "THESEUS:\nGo, Philostrate,\nStir up the Athenian youth to merriments;\nAwake the pert and nimble spirit of mirth;",
    "MARIA:\nBy my troth, Sir Toby, you must come in earlier o'\nnights: your cousin, my lady, takes great\nexceptions to your ill hours.",
    "CLOWN:\nwhy, sir, I am the fool\nAnd so it goes\nno further",
    # prose whose *last* line starts with a capital: one lower-case start anywhere is enough
    "CLOWN:\nNay, I am for all waters;\nbut I will tell you\nSo much as this.",
    "LEAR:\nNo, no, no, no! Come, let's away to prison:\nWe two alone will sing like birds i' the cage:",
    "PAGE:\n'tis a letter, sir,\nwith seals upon it",
    "ROMEO:\nand every cat and dog\nAnd little mouse, every unworthy thing,\nLive here in heaven",
    "DUKE SENIOR:\nNow, my co-mates and brothers in exile,\n'Tis not so sweet now as it was before.\nHath not old "
    "custom made this life more sweet\n[Aside] Than that of painted pomp?",
    # segments with no speaker's line: a speech that a stage direction or a blank line broke goes on without it
    "and so, sir, farewell;\nwhat say you to that?\nI say nothing.",
    "Hippolyta, I woo'd thee with my sword,\nAnd won thy love, doing thee injuries;\nBut I will wed thee",
    # two lines after the name, but the second starts with a bracket: nothing to tell
    "KING LEAR:\nCome, sir, away.\n[Exeunt]",
    # a speaker's name not in capitals (the edition has 'Fairy:'): the line ends with ':', so it is the name
    "First Fairy:\nOver hill, over dale,\nThorough bush, thorough brier,",
    "Fairy:\nAnd here my mistress.",
    # a first line with a ':' inside it is not a speaker's line: only one that *ends* with ':' is
    "What say you: will you go?\nand so, farewell,\nSweet lady.",
    # no speaker's line and a single line (the corpus has such segments): that line is the speech's first, skipped
    "Hast thou the flower there? Welcome, wanderer.",
]


# a speech whose skipped lines, read, would make it prose: tells an answer that reads one of them
_SKIPS_BOTH = "MARIA:\nand so on.\nAy, he."

# edges the corpus never holds, though the rule covers them: a blank line inside a speech, and nothing at all
_INDENTED = "HAMLET:\nTo be, or not\n  to be"  # a line indented with spaces: its first letter comes after them
_EDGES = ["HAMLET:\nTo be\n\nOr not", "HAMLET:\n\nand so\nOr not", "HAMLET:\n  \nand so\nOr not",
          "HAMLET: \nto be\nOr not\nAnd so", _INDENTED, ""]  # blank lines (spaces only too) are no lines; spaces are stripped


def _speech_hint(err, speech: str = ""):
    """Advice for an IndexError, aimed at the speech that raised it: a blank line or nothing at all, or simply
    fewer lines than the function reads."""
    if not isinstance(err, IndexError):
        return None
    if not speech.strip() or any(not line.strip() for line in speech.strip().splitlines()):
        return ("this speech has a blank line or no line at all: a blank line has no first character to test (skip "
                "it), and with no line left the answer is None.")
    return ("this speech has fewer lines than your function reads: once the speaker's line and the speech's first "
            "line are skipped, no line may be left (then the answer is None). Look at how many lines are left before "
            "reading one.")


def _labels_swapped(fn) -> bool:
    """Whether `fn` gives every speech of the check the other label (None where None is due)."""
    for speech in _SPEECHES + _EDGES:
        want = verse_or_prose(speech)
        try:
            got = _call(fn, speech)
        except ExerciseError:
            return False
        if got != (None if want is None else 1 - want) or isinstance(got, bool):
            return False
    return True


def check_verse_or_prose(fn) -> None:
    """fn(speech) -> VERSE (0), PROSE (1) or None, by the capitals rule of notebook 11, §1."""
    for speech in _SPEECHES + _EDGES:
        want = verse_or_prose(speech)
        got = _call(fn, speech, hint=lambda err, speech=speech: _speech_hint(err, speech))
        if isinstance(got, torch.Tensor):
            got = got.item() if got.numel() == 1 else f"a tensor of shape {tuple(got.shape)}"
        if isinstance(got, bool):
            raise ExerciseError(f"For {speech!r} you returned {got!r}: return the labels themselves, 0 (verse) or 1 "
                                "(prose), or None; True and False are another type, which the labels' list would "
                                "then mix in.")
        if speech == _INDENTED and got != want and got in (VERSE, None):
            raise ExerciseError(f"For {speech!r} expected PROSE (1), got {got!r}: its last line is indented, so its first "
                                "character is a space, not a letter. Strip each line before reading its first "
                                "character, as the task says.")
        if got is None and want is not None:
            raise ExerciseError(f"{speech!r} should be {'VERSE (0)' if want == VERSE else 'PROSE (1)'}, got None. If "
                                "your function prints its answer, let it return it instead; otherwise: is the speaker's "
                                "line left out, the speech's first line skipped, and a later line found?")
        if got == want and (got is None) == (want is None):
            continue
        if got not in (VERSE, PROSE, None) or isinstance(got, float):
            raise ExerciseError(f"Return 0 (verse), 1 (prose) or None, the labels the model learns; for {speech!r} "
                                f"you returned {got!r}.")
        if want is not None and got == 1 - want and _labels_swapped(fn):
            raise ExerciseError(f"{speech!r} should be {'VERSE (0)' if want == VERSE else 'PROSE (1)'}, got {got!r}, "
                                "and every speech of the check came back with the other label: verse is 0 and prose "
                                "1, the other way round from yours.")
        lines = speech.splitlines()
        if "\n  \n" in speech and verse_or_prose(speech.replace("\n  \n", "\nX\n", 1)) == got:
            raise ExerciseError(f"For {speech!r} your function counted the line of spaces as a line of the speech: a "
                                "line holding only spaces is blank too. Strip each line, and leave blank ones out.")
        if speech.startswith("HAMLET: \n") and verse_or_prose(speech.replace("HAMLET: \n", "X\n", 1)) == got:
            raise ExerciseError(f"In {speech!r} the speaker's line ends with ': ' (a space after the colon), and your "
                                "function did not take it for the speaker's name: strip each line before looking at "
                                "its end.")
        if "\n\n" in speech.strip() and verse_or_prose(speech.replace("\n\n", "\nX\n", 1)) == got:
            raise ExerciseError(f"For {speech!r} your function counted the blank line as a line of the speech (here "
                                "as its first line, the one that is skipped): a blank line is no line at all. Leave "
                                "blank lines out before anything else.")
        named = lines[0].strip().endswith(":")
        name = {VERSE: "VERSE (0)", PROSE: "PROSE (1)", None: "None"}
        body = lines[1:] if named else lines
        starts = [line[0] for line in body[1:] if line[:1].isalpha()]
        if named and not lines[0].isupper() and verse_or_prose("X:\n" + speech) == got:
            raise ExerciseError(f"In {speech!r} the first line is the speaker's name though not in capitals (the "
                                "edition writes some, such as 'Fairy:', so): a line that ends with ':' is the name.")
        if not named and ":" in lines[0] and verse_or_prose(lines[0].replace(":", ";") + "\n" + "\n".join(
                lines[1:])) != got and verse_or_prose("\n".join(lines[1:])) == got:
            raise ExerciseError(f"{speech!r} has no speaker's line: its first line has a ':' inside it, but the "
                                "speaker's line is the one that *ends* with ':'.")
        if named and want == PROSE and got == VERSE and starts and starts[-1].isupper():
            raise ExerciseError(f"{speech!r} is prose: a line after the first starts in lower case, and one such line "
                                "anywhere is enough, not only the last one.")
        if not named and verse_or_prose(lines[0] + ":\n" + "\n".join(lines[1:])) == got:
            raise ExerciseError(f"{speech!r} has no speaker's line (a speech that a stage direction or a blank line "
                                "broke goes on without one): skip the first line only when it ends with ':'.")
        if want is None and not named and len(body) == 1 and body[0].strip():
            raise ExerciseError(f"{speech!r} has no speaker's line and a single line: that line is still the speech's "
                                "first (a segment without a name may begin mid-verse too), so it is skipped and nothing "
                                f"is left to tell its form: return None (got {got!r}). Skip the first line of every "
                                "speech, named or not.")
        if want is None and len(body) > 1:
            raise ExerciseError(f"In {speech!r} no line after the speech's first starts with a letter, so its form "
                                f"cannot be told: return None (got {got!r}).")
        if want is None:
            skipped = _SKIPS_BOTH
            try:
                counted = _call(fn, skipped) != verse_or_prose(skipped)
            except ExerciseError:
                counted = False
            if counted:  # the answer reads a line that is skipped: the speaker's, or the speech's first
                raise ExerciseError(f"{speech!r} has a single line after the speaker's name, and your function gave "
                                    f"it a form ({got!r}): it reads a line that is skipped. Both the speaker's line and "
                                    "the speech's first line are skipped (a speech may start in the middle of a verse "
                                    f"line): {skipped!r} is verse, read from 'Ay, he.' alone.")
            raise ExerciseError(f"{speech!r} has a single line after the speaker's name: that line is the speech's "
                                "first, which is skipped (a speech may start in the middle of a verse line), so "
                                f"nothing is left to tell its form: return None (got {got!r}).")
        if body[0][:1].islower() and want == VERSE:
            raise ExerciseError(f"In {speech!r} only the first line starts in lower case, and a speech may begin "
                                "anywhere: look at the lines *after* the first one.")
        if want == VERSE and any(not line[:1].isalpha() for line in body[1:]):
            raise ExerciseError(f"{speech!r} is verse: a line that starts with a quote or a bracket ('Tis, [Aside]) "
                                "says nothing about capitals, so only the lines that start with a letter count.")
        raise ExerciseError(f"{speech!r} should be {name[want]}, got {got!r}. Check in turn: the speaker's line left "
                            "out, the first line of the speech left out, only lines that start with a letter, and one "
                            "lower-case start anywhere after the first line means prose.")
    _ok("Verse starts every line with a capital; prose runs on wherever the page ended.")


def _pool_hint(err):
    if "must match the size" in str(err):
        return ("the mask is (batch, length) and the hidden vectors (batch, length, width): what multiplies or "
                "divides them needs a last axis of size 1 to stretch over the width, and two things meet them: "
                "the mask in the sum, and each row's count.")
    return None


def check_mean_pool(fn) -> None:
    """fn(hidden, attention_mask) -> (batch, d): the mean of each row's vectors over its real positions."""
    g = torch.Generator().manual_seed(0)
    hidden = torch.randn(3, 6, 4, generator=g)
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0]])
    given, given_mask = hidden.clone(), mask.clone()
    got = _tensor(_call(fn, given, given_mask, hint=_pool_hint), "the pooled vectors")
    if not torch.equal(given_mask, mask):
        raise ExerciseError("Your function changed the attention_mask it was given (a method ending in _, such as "
                            "unsqueeze_): the batch still needs it, and the encoder's next call would read the changed "
                            "one. Build a new tensor instead, e.g. attention_mask.unsqueeze(-1).")
    if not torch.equal(given, hidden):
        raise ExerciseError("Your function changed the hidden vectors it was given (an assignment into hidden[...] or "
                            "a method ending in _): in the model they are the encoder's output, which the backward "
                            "pass still needs. Build a new tensor instead, e.g. hidden * mask.")
    want = torch.stack([hidden[i, : int(mask[i].sum())].mean(0) for i in range(3)])
    if got.is_floating_point() and got.dtype != want.dtype:
        got = got.to(want.dtype)  # a float64 answer is graded on its values (the model's vectors are float32)
    if got.shape != want.shape and got.dim() == 3 and got.shape[1] == 1 and got.squeeze(1).shape == want.shape:
        raise ExerciseError(f"One vector per row: expected shape {tuple(want.shape)}, got {tuple(got.shape)}: the "
                            "averaged axis is still there, with size 1 (keepdim=True on the sum of the vectors keeps "
                            "it). Only the count needs to keep it, so that it divides each row.")
    if got.shape == want.shape[1:]:  # one vector for the whole batch: the rows were pooled together
        raise ExerciseError(f"One vector per row: expected shape {tuple(want.shape)}, got {tuple(got.shape)}, one vector "
                            "for the whole batch: the rows' positions were put together (a boolean index, "
                            "hidden[mask], flattens the rows into one list of vectors; so does a mean over dimensions "
                            "0 and 1). Keep the rows apart: sum and count over dimension 1 only.")
    if got.shape != want.shape:
        raise ExerciseError(f"One vector per row: expected shape {tuple(want.shape)}, got {tuple(got.shape)}. Average "
                            "over the positions (dimension 1).")
    if torch.allclose(got, hidden.mean(1), atol=1e-5):
        raise ExerciseError("That is the mean over every position, padding included: padding's vectors are not part "
                            "of the text: leave them out of the sum and out of the count.")
    if torch.allclose(got, want, atol=1e-5):
        try:  # in training the hidden vectors carry a gradient back to the encoder: the pooling must keep it
            pooled = fn(hidden.clone().requires_grad_(True), mask.clone())
            kept = isinstance(pooled, torch.Tensor) and pooled.grad_fn is not None
        except Exception:  # noqa: BLE001 -- e.g. .numpy() on a tensor that requires grad
            kept = False
        if not kept:
            raise ExerciseError("Right values, but not on a tensor that carries a gradient: in fine-tuning the hidden "
                                "vectors require grad, and a round trip through numpy (or .detach()) either fails there "
                                "or cuts the path back to the encoder. Stay in torch: sum, multiply and divide tensors.")
        _ok("Padding is left out of the mean, so the same text pooled alone or in a padded batch gives the same "
            "vector.")
        return
    real = mask[..., None].float()
    inner = real.clone()  # every real position but the first ([CLS]) and the last ([SEP]) of its row
    inner[:, 0] = 0
    inner[torch.arange(3), mask.sum(1) - 1] = 0
    without_specials = (hidden * inner).sum(1) / inner.sum(1)
    inner_columns = real.clone()
    inner_columns[:, [0, -1]] = 0  # the first and last *columns* dropped: [CLS], and [SEP] only in a full row
    others = [(inner_columns * hidden).sum(1) / inner_columns.sum(1)]
    rows = torch.isfinite(got).all(-1) & (inner.sum((1, 2)) > 0)  # the rows that keep something to average
    if rows.any() and any(torch.allclose(got[rows], other[rows], atol=1e-5)
                          for other in [without_specials, *others] if torch.isfinite(other[rows]).all()):
        raise ExerciseError("[CLS] and [SEP] were left out: the mean runs over every real position, the two special "
                            "tokens included, as the course's pooling does (a row whose only real position is [CLS] "
                            "then has nothing left to average).")
    if torch.isnan(got).any() or torch.isinf(got).any():
        later = real[:, 1:]
        without_first = (hidden[:, 1:] * later).sum(1) / later.sum(1)  # position 0, [CLS], left out
        finite = torch.isfinite(got).all(-1)
        if finite.any() and torch.allclose(got[finite], without_first[finite], atol=1e-5):
            raise ExerciseError("Position 0 ([CLS]) was left out: the mean runs over every real position, [CLS] and "
                                "[SEP] included, as the course's pooling does (the last row, whose only real position "
                                "is the first, then had nothing left to average).")
        raise ExerciseError("Your vectors hold NaN or inf: a row was divided by a count of 0. Count each row's *real* "
                            "positions, where attention_mask is 1 (the first row has no padding at all).")
    if torch.allclose(got, (hidden * real).sum(1) / real.sum(), atol=1e-5):
        raise ExerciseError("Each row has its own number of real positions (6, 3 and 1 here); you divided every row by "
                            "the count of the whole batch.")
    if torch.allclose(got, (hidden * real).sum(1), atol=1e-5):
        raise ExerciseError("That is the sum over the real positions: divide each row by its number of real positions.")
    if torch.allclose(got, torch.div((hidden * real).sum(1), real.sum(1), rounding_mode="floor"), atol=1e-5):
        raise ExerciseError("Each mean was rounded down to a whole number: // is floor division. Divide with /.")
    raise ExerciseError("Not the mean of the real positions yet. Check in turn: which positions the mask marks as "
                        "real (1), that padding adds nothing to the sum, and that each row is divided by its own count.")
