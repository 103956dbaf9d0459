"""Checks for the exercises of notebook 05 (training)."""
from __future__ import annotations

import math
import re

import torch
import torch.nn.functional as F

from ...training import lr_factor
from ._common import IN_PLACE_ON_LOGITS, ExerciseError, _call, _carries_gradient, _none_message, _ok, _tensor


def _loss_hint(err):
    text = str(err)
    if "The shape of the mask" in text:
        return ("a list of True/False picks along the first axis only (the windows): keep the selection a tensor, "
                "labels != -100, which picks positions in every window.")
    sizes = re.search(r"Expected input batch_size \((\d+)\) to match target batch_size \((\d+)\)", text)
    # a target batch of 2 or 3 is the check's number of windows (labels not flattened); any other, a selection
    if sizes and int(sizes.group(2)) not in (2, 3):
        return ("the logits and the labels hold different numbers of positions: the selected positions were taken "
                "from one of them only. Select the same positions in both (logits[chosen], labels[chosen]), or "
                "keep every position in both and let ignore_index=-100 skip the rest.")
    if "Expected target size" in text or "Expected input batch_size" in text or "only batches of spatial" in text:
        return ("F.cross_entropy takes logits of shape (N, V), one row of V scores per position, and targets of "
                "shape (N,); here the logits are (batch, length, V) and the labels (batch, length). Bring both to "
                "that form first.")
    if "out of bounds" in text or "Target -100" in text:
        return "a label of -100 is not a class: keep only the positions whose label is not -100."
    if "in-place operation" in text:
        return IN_PLACE_ON_LOGITS
    return None


def _masked_loss_case(fn, logits, labels) -> None:
    V = logits.size(-1)
    expected = F.cross_entropy(logits[labels != -100], labels[labels != -100])
    given = labels.clone()
    with_grad = logits.clone().requires_grad_(True)  # as in training: the loss must carry a gradient back
    got = _tensor(_call(fn, with_grad, given, hint=_loss_hint), "the loss")
    if not torch.equal(given, labels):
        raise ExerciseError("Your function changed labels in place (a -100 became another number, or a label "
                            "changed): the caller's labels are then lost, and the next cell that reads them gets "
                            "wrong numbers. Select with a mask, or work on labels.clone().")
    if got.numel() != 1:
        raise ExerciseError(f"Return one number (a 0-d tensor), not shape {tuple(got.shape)}: take the mean.")
    chosen = labels != -100
    error_rate = 1 - (logits[chosen].argmax(-1) == labels[chosen]).float().mean()
    if torch.allclose(got.detach().float().reshape(()), error_rate, atol=1e-6) and not torch.allclose(
            error_rate, expected, atol=1e-5):
        raise ExerciseError("That is 1 minus the accuracy: argmax picks a token but has no gradient, so training "
                            "could not learn from it. The loss is cross-entropy, minus the log-probability of the "
                            "right token at each selected position, averaged.")
    if got.is_floating_point():
        _carries_gradient(got)
    got = got.detach().float().reshape(())
    if torch.allclose(got, expected, atol=1e-5):
        return
    if torch.isnan(got):
        raise ExerciseError("Your loss is NaN (not a number), what a mean over no positions at all gives: the "
                            "positions you kept are those whose label is -100, which cross_entropy leaves out. Keep "
                            "the others.")
    safe = labels.clamp_min(0)
    everywhere = F.cross_entropy(logits.reshape(-1, V), safe.reshape(-1))
    if torch.allclose(got, everywhere, atol=1e-5):
        raise ExerciseError("That averages over every position: keep only those whose label is not -100.")
    chosen = labels != -100
    diluted = F.cross_entropy(logits[chosen], labels[chosen], reduction="sum") / labels.numel()
    if torch.allclose(got, diluted, atol=1e-5):
        raise ExerciseError("Divide by the number of selected positions, not by all of them.")
    if torch.allclose(got, F.cross_entropy(logits[chosen], labels[chosen], reduction="sum"), atol=1e-4):
        raise ExerciseError("That is the sum over the selected positions: the loss is their mean, so that it does "
                            "not grow with the batch.")
    not_zero = labels != 0
    if (chosen & ~not_zero).any() and torch.allclose(got, F.cross_entropy(logits[not_zero & chosen], labels[not_zero & chosen]), atol=1e-5):
        raise ExerciseError("A label of 0 was left out: 0 is an id like any other (here a real class; in many "
                            "vocabularies an ordinary token). Only -100 means 'no loss here'.")
    picked = logits[chosen].gather(-1, labels[chosen][:, None]).squeeze(-1)
    if torch.allclose(got, -picked.mean(), atol=1e-5):
        raise ExerciseError("That is minus the raw score (logit) of the right token: cross-entropy needs its "
                            "log-probability, the scores turned into a distribution first (log-softmax).")
    if torch.allclose(got, -logits[chosen].softmax(-1).gather(-1, labels[chosen][:, None]).mean(), atol=1e-5):
        raise ExerciseError("That is minus the probability of the right token; the loss is minus its *log*-probability.")
    if (~chosen).any() and torch.allclose(got, F.cross_entropy(logits[~chosen], safe[~chosen]), atol=1e-5):
        raise ExerciseError("The mask is the wrong way round: you kept the positions whose label *is* -100 (the "
                            "unselected ones). Keep those whose label is not -100.")
    if torch.allclose(got, F.cross_entropy(logits[chosen].softmax(-1), labels[chosen]), atol=1e-5):
        raise ExerciseError("A softmax before F.cross_entropy: cross_entropy takes the raw logits and applies the "
                            "log-softmax itself, so yours was normalised twice.")
    per_position = F.cross_entropy(logits.reshape(-1, V), safe.reshape(-1), reduction="none").view(labels.shape)
    rows = chosen.any(-1)
    per_window = (per_position * chosen).sum(-1)[rows] / chosen.sum(-1)[rows]
    if rows.sum() > 1 and torch.allclose(got, per_window.mean(), atol=1e-5):
        raise ExerciseError("That is the mean of each window's mean: a window with few selected positions then "
                            "weighs as much as one with many. The loss is one mean over every selected position of "
                            "the batch.")
    raise ExerciseError(f"Expected {expected.item():.4f}, got {got.item():.4f}: the loss is the mean, over the positions "
                        "whose label is not -100, of minus the log-probability the model gives the right token.")


def check_masked_loss(fn) -> None:
    """fn(logits (B, L, V), labels (B, L) with -100 where unselected) -> mean cross-entropy at selected positions."""
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 7, 11, generator=g)
    labels = torch.randint(0, 11, (3, 7), generator=g)
    labels[torch.rand(3, 7, generator=g) < 0.6] = -100
    labels[0, 0] = 4
    labels[1, 1] = 0  # id 0 is a class like any other: only -100 means "no loss"
    one = torch.full((2, 5), -100)
    one[1, 4] = 3  # a single selected position, the very last one
    every = torch.randint(0, 6, (2, 5), generator=g)  # every position selected
    for case_logits, case_labels in ((logits, labels), (torch.randn(2, 5, 6, generator=g), one),
                                     (torch.randn(2, 5, 6, generator=g), every)):
        _masked_loss_case(fn, case_logits, case_labels)
    _ok("Only the selected positions count, averaged over those alone.")


def _lr_hint(warmup):
    def hint(err):
        if isinstance(err, ZeroDivisionError) and warmup == 0:
            return ("the check also tries warmup_steps = 0, no warm-up at all (TrainConfig allows it): then the "
                    "rate starts at base_lr and only decays, and nothing may be divided by warmup_steps.")
        if isinstance(err, ZeroDivisionError) and warmup > 0:
            return ("the check also tries warmup_steps = total_steps, a run that is all warm-up (TrainConfig allows "
                    "it): its decay has no steps, so from total_steps on the rate is 0, with nothing to divide by.")
        return None
    return hint


def check_lr_at(fn) -> None:
    """fn(step, warmup_steps, total_steps, base_lr) -> learning rate: linear warm-up, then linear decay to 0,
    never below 0."""
    for warmup, total, base in ((10, 100, 1e-3), (4, 20, 0.5), (1, 10, 2e-3), (0, 10, 0.5), (5, 5, 1.0)):
        steps = sorted({s for s in (0, 1, warmup - 1, warmup, (warmup + total) // 2, total - 1, total, total + 3)
                        if s >= 0})
        for s in steps:
            expected = base * lr_factor(s, warmup, total)
            got = _call(fn, s, warmup, total, base, hint=_lr_hint(warmup))
            if got is None:
                raise ExerciseError(_none_message("the learning rate"))
            if isinstance(got, torch.Tensor):
                raise ExerciseError("Return a plain number (a Python float), not a tensor: the rate is written into "
                                    "the optimiser's settings, param_groups, which hold numbers (a 0-d tensor's "
                                    ".item() is one).")
            try:
                got = float(got)
            except (TypeError, ValueError):
                raise ExerciseError(f"Return a number, not {type(got).__name__}.") from None
            if math.isclose(got, expected, rel_tol=1e-6, abs_tol=1e-12):
                continue
            if s < warmup and got == 0 and s + 1 < warmup:
                last = _call(fn, warmup - 1, warmup, total, base)
                if isinstance(last, (int, float)) and math.isclose(float(last), base, rel_tol=1e-6):
                    raise ExerciseError(f"At step {s} the rate is 0, yet it reaches base_lr at the last warm-up step: "
                                        "integer division (//) rounds (step + 1) / warmup_steps down to 0. Use /.")
            if s < warmup and math.isclose(got, base * s / warmup, rel_tol=1e-6, abs_tol=1e-12):
                raise ExerciseError("Step 0 would get a zero learning rate: warm up with (step + 1) / warmup_steps.")
            if s == warmup and warmup > 0 and math.isclose(got, base * (s + 1) / warmup, rel_tol=1e-6):
                raise ExerciseError(f"At step {s} = warmup_steps the warm-up is over: warm up while step < "
                                    "warmup_steps (not <=), then decay.")
            if math.isclose(got, lr_factor(s, warmup, total), rel_tol=1e-6, abs_tol=1e-12) and base != 1:
                raise ExerciseError(f"At step {s} you returned {got:.6g}, the schedule's multiplier alone: multiply it by "
                                    f"base_lr ({base}), the peak rate the schedule scales.")
            if s > total and got < 0:
                raise ExerciseError(f"At step {s}, past total_steps ({total}), the rate went negative ({got:.3g}): "
                                    "never below 0.")
            if warmup == 0:
                raise ExerciseError(f"With warmup_steps = 0 (no warm-up; TrainConfig allows it), at step {s} of {total} "
                                    f"(base {base}) expected {expected:.6g}, got {got:.6g}: without a warm-up the rate "
                                    "starts at base_lr and decays from step 0.")
            later = [_call(fn, t, warmup, total, base) for t in (warmup + (total - warmup) // 2, total - 1)]
            if s >= warmup and got == 0 and expected > 0 and all(isinstance(v, (int, float)) for v in later) and \
                    0 < later[0] < later[1]:
                raise ExerciseError(f"At step {s} (warm-up {warmup}, total {total}, base {base}) expected "
                                    f"{expected:.6g}, got 0, and later the rate grows ({later[0]:.3g}, then "
                                    f"{later[1]:.3g}): the decay runs the wrong way. After the warm-up the rate "
                                    "falls from base_lr to 0: (total_steps - step) / (total_steps - warmup_steps).")
            if s >= warmup and got == 0 and expected > 0:
                raise ExerciseError(f"At step {s} (warm-up {warmup}, total {total}, base {base}) expected "
                                    f"{expected:.6g}, got 0 while the decay still has steps to go: a clamp at 0 "
                                    "belongs below the rate, max(0, ...), which keeps it from going negative; "
                                    "min(0, ...) caps every rate at 0.")
            phase = "warm-up" if s < warmup else "decay"
            formula = ("Warm-up: base * (step + 1) / warmup_steps, reaching base at the last warm-up step." if s < warmup
                       else "Decay: base * (total - step) / (total - warmup).")
            raise ExerciseError(f"At step {s} (warm-up {warmup}, total {total}, base {base}) expected {expected:.6g}, "
                                f"got {got:.6g}: check the {phase} part. {formula}")
    _ok("Warm-up, then linear decay to zero, as BERT used.")
