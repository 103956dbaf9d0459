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
]


def check_verse_or_prose(fn) -> None:
    """fn(speech) -> VERSE (0), PROSE (1) or None, by the capitals rule of notebook 11, §1."""
    for speech in _SPEECHES:
        want = verse_or_prose(speech)
        got = _call(fn, speech)
        if isinstance(got, torch.Tensor):
            got = got.item() if got.numel() == 1 else f"a tensor of shape {tuple(got.shape)}"
        if got == want and (got is None) == (want is None):
            continue
        if got not in (VERSE, PROSE, None) or isinstance(got, float):
            raise ExerciseError(f"Return 0 (verse), 1 (prose) or None, the labels the model learns; for {speech!r} "
                                f"you returned {got!r}.")
        lines = speech.splitlines()
        named = lines[0].strip().endswith(":")
        name = {VERSE: "VERSE (0)", PROSE: "PROSE (1)", None: "None"}
        if not named and verse_or_prose(lines[0] + ":\n" + "\n".join(lines[1:])) == got:
            raise ExerciseError(f"{speech!r} has no speaker's line (a speech that a stage direction or a blank line "
                                "broke goes on without one): skip the first line only when it ends with ':'.")
        body = lines[1:] if named else lines
        if want is None and len(body) > 1:
            raise ExerciseError(f"In {speech!r} no line after the speech's first starts with a letter, so its form "
                                f"cannot be told: return None (got {got!r}).")
        if want is None:
            raise ExerciseError(f"{speech!r} has a single line after the speaker's name: its form cannot be told, so "
                                f"return None (got {got!r}).")
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
        return ("the mask is (batch, length) and the hidden vectors (batch, length, width): give the mask a last axis "
                "of size 1 so that it stretches over the width.")
    return None


def check_mean_pool(fn) -> None:
    """fn(hidden, attention_mask) -> (batch, d): the mean of each row's vectors over its real positions."""
    g = torch.Generator().manual_seed(0)
    hidden = torch.randn(3, 6, 4, generator=g)
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0]])
    got = _tensor(_call(fn, hidden.clone(), mask.clone(), hint=_pool_hint), "the pooled vectors")
    want = torch.stack([hidden[i, : int(mask[i].sum())].mean(0) for i in range(3)])
    if got.shape != want.shape:
        raise ExerciseError(f"One vector per row: expected shape {tuple(want.shape)}, got {tuple(got.shape)}. Average "
                            "over the positions (dimension 1).")
    if torch.allclose(got, hidden.mean(1), atol=1e-5):
        raise ExerciseError("That is the mean over every position, padding included: padding's vectors are not part "
                            "of the text: leave them out of the sum and out of the count.")
    if torch.allclose(got, want, atol=1e-5):
        _ok("Padding is left out of the mean, so the same text pooled alone or in a padded batch gives the same "
            "vector.")
        return
    real = mask[..., None].float()
    if torch.isnan(got).any() or torch.isinf(got).any():
        raise ExerciseError("Your vectors hold NaN or inf: a row was divided by a count of 0. Count each row's *real* "
                            "positions, where attention_mask is 1 (the first row has no padding at all).")
    if torch.allclose(got, (hidden * real).sum(1) / real.sum(), atol=1e-5):
        raise ExerciseError("Each row has its own number of real positions (6, 3 and 1 here); you divided every row by "
                            "the count of the whole batch.")
    if torch.allclose(got, (hidden * real).sum(1), atol=1e-5):
        raise ExerciseError("That is the sum over the real positions: divide each row by its number of real positions.")
    raise ExerciseError("Not the mean of the real positions yet. Check in turn: which positions the mask marks as "
                        "real (1), that padding adds nothing to the sum, and that each row is divided by its own count.")
