"""Checks for the exercises of notebook 02 (masking)."""
from __future__ import annotations

import math

import torch

from ._common import ExerciseError, _call, _learner_line, _none_message, _ok, _tensor


def check_expected_counts(fn) -> None:
    """fn(n_tokens, select_prob, mask_prob, random_prob) -> (n_mask, n_random, n_unchanged) expected,
    counted by what was decided for each selected position."""
    for args in ((1000, 0.15, 0.8, 0.1), (5000, 0.3, 0.5, 0.3), (333, 0.15, 0.8, 0.1), (10, 1.0, 1.0, 0.0),
                 (0, 0.15, 0.8, 0.1)):
        n, s, m, r = args
        expected = (n * s * m, n * s * r, n * s * (1 - m - r))
        got = _call(fn, *args)
        if got is None:
            raise ExerciseError(_none_message("the three counts"))
        if isinstance(got, dict):
            raise ExerciseError("You returned a dict; return the three numbers themselves, in the order "
                                "(n_mask, n_random, n_unchanged), e.g. `return a, b, c`.")
        try:
            got = tuple(float(x) for x in got)
        except (TypeError, ValueError):
            raise ExerciseError(f"Return three numbers, (n_mask, n_random, n_unchanged); got {got!r}.") from None
        if len(got) == 3 and all(math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9) for a, b in zip(got, expected)):
            continue
        shown = tuple(round(x, 3) for x in got)
        if len(got) == 3 and all(math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
                                 for a, b in zip(sorted(got), sorted(expected))):
            raise ExerciseError(f"For {args} the right three numbers in another order, {shown}: return them as "
                                "(n_mask, n_random, n_unchanged).")
        if len(got) == 3 and all(math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9) for a, b in zip(got, (
                n * s * (m + r) * (1 - r), n * s * r, n * s * (1 - m - r) * (1 - r)))):
            raise ExerciseError(f"For {args} you gave {shown}: the independent-draws shortcut of section 7, where the "
                                "random draw overwrites some [MASK] and unchanged positions. Each selected position "
                                "gets exactly one outcome, with the shares mask_prob, random_prob and the rest.")
        if (len(got) == 3 and math.isclose(got[0], expected[0], rel_tol=1e-6) and
                math.isclose(got[1], (n * s - expected[0]) * r, rel_tol=1e-6) and r not in (0, 1 - m)):
            raise ExerciseError(f"For {args} the random count is off ({got[1]:g}, expected {expected[1]:g}): "
                                "random_prob is a share of all the selected positions, not of those [MASK] left.")
        if (len(got) == 3 and math.isclose(got[0], expected[0], rel_tol=1e-6)
                and expected[1] * 0.9 < got[1] < expected[1]
                and math.isclose(got[1] + got[2], expected[1] + expected[2], rel_tol=1e-6)):
            raise ExerciseError(f"For {args} the random and unchanged counts are off (you gave {shown}), though together they "
                                "are right: a random draw that happens to hit the original token still counts as "
                                "random. Count by what was decided for each position, not by what it shows.")
        if len(got) == 3 and m != 0.8 and all(math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
                                              for a, b in zip(got, (n * s * 0.8, n * s * 0.1, n * s * 0.1))):
            raise ExerciseError(f"For {args} you gave {shown}: BERT's 80/10/10 shares, typed in. The function is "
                                "given its shares: use mask_prob and random_prob (the rest is unchanged).")
        if len(got) == 3 and math.isclose(got[0], n * m, rel_tol=1e-6):
            raise ExerciseError("Only selected positions are replaced: how many of the n_tokens are selected, on "
                                "average, before the three shares split them?")
        if len(got) == 3 and all(abs(a - b) < 1 and a == int(a) for a, b in zip(got, expected)):
            raise ExerciseError(f"For {args} you gave whole numbers {tuple(int(a) for a in got)}; the expected "
                                f"counts are {tuple(round(x, 3) for x in expected)}. An expectation is an average over many "
                                "draws, so it need not be a whole number: do not round it.")
        if len(got) != 3:
            raise ExerciseError(f"Return three numbers (n_mask, n_random, n_unchanged), got {len(got)}.")
        wrong = [name for name, a, b in zip(("[MASK]", "random", "unchanged"), got, expected)
                 if not math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)]
        if wrong == ["unchanged"]:
            raise ExerciseError(f"For {args} the unchanged count is off ({got[2]:g}, expected {expected[2]:g}): the "
                                "unchanged share is what [MASK] and random leave of the selected positions.")
        raise ExerciseError(f"For {args} expected {tuple(round(x, 3) for x in expected)}, got {shown}: the "
                            f"{' and '.join(wrong)} count{'s are' if len(wrong) > 1 else ' is'} off. How many "
                            "positions are selected on average, and what share of those gets each outcome?")
    _ok("Of 1,000 tokens BERT masks 120, randomises 15 and keeps 15, on average.")


OUTCOME_WORDS = {1: "shown [MASK] (outcome 1)", 2: "shown a random token (outcome 2)", 3: "left unchanged (outcome 3)"}


def _labels_hint(err):
    line = _learner_line(err)
    if "Boolean value of Tensor with more than one value" in str(err) and ("|" in line or "&" in line) \
            and "==" in line:
        return ("| and & bind more tightly than ==, so `a == 1 | a == 3` reads as `a == (1 | a) == 3`, a chained "
                "comparison that needs one True/False. Put brackets around each comparison: (a == 1) | (a == 3).")
    if "Boolean value of Tensor with more than one value" in str(err):
        return ("ids and outcome can be a batch (windows x length), as the check's first case is: an `if` on one "
                "element reads a whole row there. Compare whole tensors instead (outcome == 0 is a tensor of "
                "True/False) and pick with it, e.g. torch.where or masked_fill, which work on any shape.")
    if "must match the size" in str(err) or "does not match the shape" in str(err):
        return ("a tensor of another size than ids met it: use only the function's arguments, ids and outcome, "
                "not the notebook's own variables.")
    return None


def _right_once_a_tensor(fn, ids, outcome) -> bool:
    """Are the batch's labels right but handed back as a list (a .tolist() at the end)? Then the type is the only
    slip, and a hint about loops over .tolist() would blame a mistake the answer did not make."""
    try:
        got = torch.as_tensor(fn(ids.clone(), outcome.clone()))
    except Exception:  # a learner's function: whatever it raises, the answer is not merely a list
        return False
    return got.shape == ids.shape and torch.equal(got, torch.where(outcome != 0, ids, torch.full_like(ids, -100)))


def _labels_case(fn, ids, outcome):
    """Grade one (ids, outcome) pair; raise ExerciseError on a wrong answer."""
    before = ids.clone()
    got = _tensor(_call(fn, ids, outcome.clone(), hint=_labels_hint), "the labels")
    if not torch.equal(ids, before):
        raise ExerciseError("Your function changed `ids` in place: the labels must be a new tensor, and `ids` must "
                            "stay as it was (write into a copy, or build a new tensor).")
    selected = outcome != 0
    expected = torch.where(selected, ids, torch.full_like(ids, -100))
    if got.shape != ids.shape:
        flat = " (as many values: flattened, and never given the shape of ids back)" if got.numel() == ids.numel() \
            else ""
        raise ExerciseError(f"Labels have the shape of ids, {tuple(ids.shape)}; got {tuple(got.shape)}{flat}.")
    if got.dtype != torch.long:
        raise ExerciseError(f"Labels must be whole token ids (torch.long, the dtype of ids), not {got.dtype}: "
                            "cross_entropy takes class indices only as torch.long (int64), and stops on other types.")
    if torch.equal(got, expected):
        return
    if torch.equal(got, torch.where(ids != 0, outcome, torch.full_like(ids, -100))):
        raise ExerciseError("Your labels hold outcome codes (0-3) where the ids belong: the function is called as "
                            "make_labels(ids, outcome), ids first.")
    if selected.any() and (~selected).any():
        if torch.equal(got[~selected], torch.zeros_like(got[~selected])):
            raise ExerciseError("Unselected positions need -100, not 0: id 0 is [PAD], a real class the loss would "
                                "count.")
        if torch.equal(got[selected], torch.full_like(got[selected], -100)) and torch.equal(got[~selected], ids[~selected]):
            raise ExerciseError("The other way round: keep the id where a position was selected, -100 where it "
                                "was not.")
    if torch.equal(got, torch.where(outcome == 1, ids, torch.full_like(ids, -100))) and (outcome > 1).any():
        raise ExerciseError("Only the [MASK] positions got a label. Every *selected* position is predicted, also "
                            "those shown a random token or left unchanged.")
    wrong_unselected = (~selected) & (got != -100)
    for shift in (1, -1):  # the right labels, one position off along the window
        moved = torch.full_like(expected, -100)
        if shift == 1:
            moved[..., 1:] = expected[..., :-1]
        else:
            moved[..., :-1] = expected[..., 1:]
        if torch.equal(got, moved):
            raise ExerciseError(f"Your labels are the right ones shifted by one position ({'right' if shift == 1 else 'left'}"
                                "): a position's label is the id *at that position*, where it was selected.")
    if wrong_unselected.any():
        values = sorted(set(got[wrong_unselected].tolist()))
        shown = ", ".join(map(str, values[:5])) + (", ..." if len(values) > 5 else "")
        raise ExerciseError(f"At unselected positions (outcome 0) your labels hold the values {shown}: the loss skips a "
                            "position only where its label is -100 (cross_entropy's ignore_index).")
    for code, words in OUTCOME_WORDS.items():
        wrong = (outcome == code) & (got != ids)
        if wrong.any():
            values = sorted(set(got[wrong].tolist()))
            shown = ", ".join(map(str, values[:5])) + (", ..." if len(values) > 5 else "")
            raise ExerciseError(f"At the positions {words} your labels hold {shown}: every selected position keeps "
                                "its original id as its label, whatever the model was shown there.")
    raise ExerciseError("Expected the original id at every selected position and -100 at every other one.")


def check_make_labels(fn) -> None:
    """fn(ids, outcome) -> labels: the original id where outcome != 0 (selected), -100 elsewhere; ids untouched."""
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(5, 50, (3, 20), generator=g)
    outcome = torch.randint(0, 4, (3, 20), generator=g) * (torch.rand(3, 20, generator=g) < 0.4)
    outcome[0, :4] = torch.tensor([1, 2, 3, 0])  # every outcome occurs
    line = torch.randint(5, 50, (12,), generator=g)
    cases = [(ids, outcome), (line, torch.tensor([3, 0, 0, 1, 0, 2, 0, 0, 1, 0, 0, 3])),  # one window, a 1-D tensor
             (line, torch.zeros(12, dtype=torch.long)), (line, torch.tensor([1, 2, 3] * 4))]  # nothing / all selected
    for k, (case_ids, case_outcome) in enumerate(cases):
        try:
            _labels_case(fn, case_ids.clone(), case_outcome)
        except ExerciseError as err:
            if k == 0 and "flattened" not in str(err):  # the batch: is the answer right for one window alone?
                try:
                    _labels_case(fn, case_ids[0].clone(), case_outcome[0])
                except ExerciseError as one:
                    if "Return a torch tensor" in str(one):  # the more basic slip, named first
                        if _right_once_a_tensor(fn, case_ids, case_outcome):  # tensors whole, .tolist() at the end
                            raise ExerciseError(str(one)) from None
                        raise ExerciseError(f"{one} And ids and outcome can be a batch (windows x length), as in "
                                            "training: work on the tensors whole, not on .tolist() of them (whose "
                                            "items are rows).") from None
                else:
                    raise ExerciseError("Right for one window, wrong for a batch: ids and outcome can be a batch (windows "
                                        "x length), as in training. There len(ids) counts windows, not tokens, and a "
                                        "loop over ids walks whole rows: build the labels with ids' own shape, with "
                                        "operations that work on the tensors whole.") from None
            raise
    _ok("cross_entropy skips -100 by default (ignore_index), so only selected positions count.")
