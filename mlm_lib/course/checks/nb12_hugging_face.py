"""Checks for the exercises of notebook 12 (the model in Hugging Face)."""
from __future__ import annotations

from ...model import _name_map
from ._common import ExerciseError, _call, _ok


def check_hf_name(fn) -> None:
    """fn(our_name) -> Hugging Face's name of the same parameter in `BertForMaskedLM`, for the encoder layers'
    parameters (`layers.N.<part>.<weight|bias>`)."""
    names = _name_map(3)
    cases = [n for n in names if n.startswith("layers.")]
    for ours in cases:
        want = names[ours]
        got = _call(fn, ours)
        if got == want:
            continue
        if isinstance(got, str) and got.replace("bert.", "", 1) == want.replace("bert.", "", 1):
            raise ExerciseError(f"{ours}: close — Hugging Face keeps the encoder inside `bert.`: expected {want!r}, "
                                f"got {got!r}.")
        if isinstance(got, str) and ".layers." in got:
            raise ExerciseError(f"{ours}: Hugging Face calls the stack `encoder.layer` (singular): expected {want!r}, "
                                f"got {got!r}.")
        raise ExerciseError(f"{ours} should map to {want!r}, got {got!r}. Look at the table above: which of their "
                            "modules holds this part?")
    _ok(f"All {len(cases)} parameter names of a 3-layer encoder map to Hugging Face's.")


def check_with_mask(fn) -> None:
    """fn(text, position, mask_token) -> the text with the character at `position` replaced by `mask_token`."""
    for text, position in (("To be, or not to be", 3), ("abc", 0), ("abc", 2), ("a b", 1)):
        want = text[:position] + "[MASK]" + text[position + 1:]
        got = _call(fn, text, position, "[MASK]")
        if got == want:
            continue
        if got == text[:position] + "[MASK]" + text[position:]:
            raise ExerciseError(f"For {text!r} at {position}: the mask was inserted before the character; it must "
                                f"*replace* it, or the model sees the answer right beside the blank. Expected {want!r}.")
        raise ExerciseError(f"For {text!r} at {position}: expected {want!r}, got {got!r}.")
    _ok("One character out, one [MASK] in: the pipeline's tokenizer reads [MASK] as a single token.")
