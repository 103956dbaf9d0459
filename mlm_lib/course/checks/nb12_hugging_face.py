"""Checks for the exercises of notebook 12 (the model in Hugging Face)."""
from __future__ import annotations

from ...model import _name_map
from ._common import ExerciseError, ParameterError, _call, _ok, _source


def _uses_replace(fn) -> bool:
    """Does the answer rename with str.replace? Only then is a chain of replaces the likely cause of a doubled part
    (a dict or a table can hold one too, and its hint should not blame a replace the learner never wrote)."""
    return ".replace(" in (_source(fn) or "")  # no source to read: say nothing of str.replace


def check_hf_name(fn) -> None:
    """fn(our_name) -> Hugging Face's name of the same parameter in `BertForMaskedLM`, for the encoder layers'
    parameters (`layers.N.<part>.<weight|bias>`)."""
    names = _name_map(12)  # BERT-base's 12 layers: layer numbers of two digits too
    cases = [n for n in names if n.startswith(("layers.0.", "layers.1.", "layers.2.", "layers.11."))]
    for ours in cases:
        want = names[ours]
        two_digits = len(ours.split(".")[1]) > 1
        got = _call(fn, ours, hint=lambda err: (f"the check tried {ours!r}: a layer's number can have two digits, so "
                                                "split the name at its dots rather than at fixed places.")
                    if two_digits else None)
        if two_digits and isinstance(got, str) and got != want and f".{ours.split('.')[1]}." not in got:
            raise ExerciseError(f"{ours}: expected {want!r}, got {got!r}: a layer's number can have two digits, so "
                                "split the name at its dots rather than at fixed places.")
        if got == want:
            continue
        if isinstance(got, str) and got.replace("bert.", "", 1) == want.replace("bert.", "", 1):
            raise ExerciseError(f"{ours}: close — Hugging Face keeps the encoder inside `bert.`: expected {want!r}, "
                                f"got {got!r}.")
        if isinstance(got, str) and ".layers." in got:
            raise ExerciseError(f"{ours}: Hugging Face calls the stack `encoder.layer` (singular): expected {want!r}, "
                                f"got {got!r}.")
        if not isinstance(got, str):
            raise ExerciseError(f"Return the name as a string, e.g. {want!r}; for {ours!r} you returned "
                                f"{type(got).__name__}.")
        module, kind = want.rsplit(".", 1)
        if got == module:
            raise ExerciseError(f"{ours}: expected {want!r}, got {got!r}: the module is right, but the name must end "
                                f"with the parameter's own name too, {kind!r}, as ours does.")
        number = ours.split(".")[1]
        if got.split(".")[3:4] != [number] and got.split(".", 4)[4:] == want.split(".", 4)[4:]:
            raise ExerciseError(f"{ours}: expected {want!r}, got {got!r}: the layer's number is off. Hugging Face "
                                f"numbers its layers as we do, from 0: layer {number} stays {number}.")
        if got.rsplit(".", 1)[0] == module:
            last = got.rsplit(".", 1)[-1]
            raise ExerciseError(f"{ours}: the module is right, {module!r}, but the parameter's own name is not: it "
                                f"keeps ours, {kind!r} (got {last!r}"
                                + ("; 'gamma' and 'beta' are TensorFlow's names for a LayerNorm's weight and bias)."
                                   if last in ("gamma", "beta") else ")."))
        if got.lower().replace("_", "") == want.lower().replace("_", ""):
            raise ExerciseError(f"{ours}: expected {want!r}, got {got!r}: the right module, spelled another way. Names "
                                "must match exactly: Hugging Face writes `LayerNorm`, one word with two capitals.")
        parts, wanted = got.split("."), want.split(".")
        extra = [p for i, p in enumerate(parts) if parts[:i] + parts[i + 1:] == wanted]
        if extra:
            why = ("Renaming in steps (one str.replace after another) lets a later step rewrite what an earlier one "
                   "wrote: rename each part of our name once." if _uses_replace(fn) else
                   "Compare what your function writes for this part with the table above.")
            raise ExerciseError(f"{ours}: expected {want!r}, got {got!r}: one part too many, {extra[0]!r}. {why}")
        raise ExerciseError(f"{ours} should map to {want!r}, got {got!r}. Look at the table above: which of their "
                            "modules holds this part?")
    _ok(f"All {len(cases)} parameter names the check tried (layers 0, 1, 2 and 11 of a 12-layer encoder) map to "
        "Hugging Face's.")


def check_with_mask(fn) -> None:
    """fn(text, position, mask_token) -> the text with the character at `position` replaced by `mask_token`."""
    cases = (("To be, or not to be", 3, "[MASK]"), ("abc", 0, "[MASK]"), ("abc", 2, "[MASK]"), ("a b", 1, "[MASK]"),
             ("To be, or not to be", 16, "[MASK]"), ("banana", 5, "<mask>"))
    for text, position, mask_token in cases:
        want = text[:position] + mask_token + text[position + 1:]
        got = _call(fn, text, position, mask_token)
        if got == want:
            continue
        if mask_token != "[MASK]" and isinstance(got, str) and "[MASK]" in got:
            raise ExerciseError(f"With mask_token={mask_token!r} your text reads {got!r}: use the mask_token you are "
                                "given (a RoBERTa tokenizer's is '<mask>'), not '[MASK]' written in.")
        if not isinstance(got, str):
            raise ExerciseError(f"Return the text as one string; for {text!r} at {position} you returned "
                                f"{type(got).__name__}.")
        if position > 0 and got == text[:position - 1] + mask_token + text[position:]:
            raise ExerciseError(f"For {text!r} at {position} the mask replaced the character before it, "
                                f"{text[position - 1]!r}, not {text[position]!r}: positions count from 0, as in "
                                "Python's indexing.")
        if got == text[:position + 1] + mask_token + text[position + 2:]:
            raise ExerciseError(f"For {text!r} at {position} the mask replaced the character after it, "
                                f"{text[position + 1]!r}, not {text[position]!r}: the position is already the "
                                "character's index in the text (no [CLS] in it to shift past), so text[position] is "
                                "the one to replace.")
        if got == text.replace(text[position], mask_token, 1):
            raise ExerciseError(f"For {text!r} at {position} the mask landed at {got.index(mask_token)}: str.replace "
                                f"changes the first place where {text[position]!r} occurs, not the position asked for. "
                                "Cut the text at the position instead.")
        if got == text[:position] + mask_token + text[position:]:
            raise ExerciseError(f"For {text!r} at {position}: the mask was inserted before the character; it must "
                                f"*replace* it, or the model sees the answer right beside the blank. Expected {want!r}.")
        raise ExerciseError(f"For {text!r} at {position}: expected {want!r}, got {got!r}.")
    _ok("One character out, one [MASK] in: the pipeline's tokenizer reads [MASK] as a single token.")


def check_text_parameter(text: str, max_len: int) -> None:
    """Section 4 of notebook 12 compares our predictions with the pipeline's on the parameters cell's `text`, with a
    blank at every 9th character from 3: a `text` it cannot use is refused here, with what to change, before the
    pipeline would fail inside the model (past its position table) or compare nothing."""
    if len(text) > max_len:
        raise ParameterError(f"text has {len(text)} characters; the model reads at most {max_len}: shorten text in "
                             "the parameters cell.")
    if len(text) < 4:
        raise ParameterError(f"text has {len(text)} characters; this comparison needs at least 4: lengthen text in "
                             "the parameters cell.")
    if "[MASK]" in text:  # the cell chooses the blanks itself; the model would read '[MASK]' as six characters
        raise ParameterError("text holds '[MASK]': this cell puts the blanks in itself (every 9th character), so "
                             "write plain text in the parameters cell.")


def check_one_mask(masked, mask_token: str) -> None:
    """What `with_mask` gave, before the pipeline reads it: one string holding the mask token once (an answer that
    Exercise 2's check refused may give anything else)."""
    if not isinstance(masked, str) or masked.count(mask_token) != 1:
        raise ExerciseError(f"with_mask gave {masked!r}: the pipeline needs a string with one mask token. Run "
                            "Exercise 2's check, which says what to fix, then this cell again.")
