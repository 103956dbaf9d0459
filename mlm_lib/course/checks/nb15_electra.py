"""Checks for the exercises of notebook 15 (ELECTRA)."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ._common import IN_PLACE_ON_LOGITS, ExerciseError, _call, _carries_gradient, _ok, _tensor


def check_gumbel_max(fn) -> None:
    """fn(logits (n, V), noise (n, V) uniform in (0, 1)) -> (n,) sampled ids: argmax(logits - log(-log(noise)))."""
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 9, generator=g) * 2
    noise = torch.rand(6, 9, generator=g).clamp(1e-6, 1 - 1e-6)
    expected = (logits - torch.log(-torch.log(noise))).argmax(-1)
    given, given_logits = noise.clone(), logits.clone()
    answer = _call(fn, given_logits, given)
    if not torch.equal(given_logits, logits):
        raise ExerciseError("Your function changed the logits it was given (an in-place operation such as -= or "
                            "add_): the caller reuses them. Compute a new tensor instead, e.g. logits + gumbel.")
    if not torch.equal(given, noise):
        raise ExerciseError("Your function changed the noise it was given (an in-place operation such as log_ or "
                            "neg_): the caller reuses it. Compute new tensors from it instead (torch.log(noise), not "
                            "noise.log_()).")
    if not isinstance(answer, torch.Tensor) and hasattr(answer, "indices"):  # what .max(dim) returns: a (values, indices) pair
        raise ExerciseError("`.max(-1)` returns a pair, (values, indices): the sample is the position of the largest, "
                            "its `.indices` (or use argmax(-1)).")
    got = _tensor(answer, "the samples")
    # a sampler of its own (torch.multinomial, whose column looks like a shape slip) is the bigger mistake: first
    again = _tensor(_call(fn, logits.clone(), noise.clone()), "the samples")
    if again.shape != got.shape or not torch.equal(again, got):
        raise ExerciseError("Two calls with the same `noise` gave different samples: your function draws its own "
                            "randomness (torch.multinomial, torch.rand...). The sample must come from `noise` alone.")
    if got.shape == (*expected.shape, 1):
        raise ExerciseError(f"One id per row: on the check's {len(logits)} rows of logits, expected shape "
                            f"{tuple(expected.shape)}, got {tuple(got.shape)}: a "
                            "dimension of size 1 was kept at the end (keepdim=True keeps it, the vocabulary's, in argmax): "
                            "drop it.")
    if got.shape != expected.shape:
        raise ExerciseError(f"One id per row: on the check's {len(logits)} rows of logits, expected shape "
                            f"{tuple(expected.shape)}, got {tuple(got.shape)} "
                            "(take the argmax over the last dimension, the vocabulary).")
    if got.is_floating_point():
        if torch.equal(got, expected.to(got.dtype)):  # the right ids, cast: .float() or arithmetic on them
            raise ExerciseError(f"The right ids, but as {got.dtype}: token ids are whole numbers (torch.long, what "
                                "argmax returns); leave out the cast (.float()) or the arithmetic that made them floats.")
        raise ExerciseError(f"Return token ids (whole numbers), not {got.dtype}: the argmax's indices, not its values.")
    if torch.equal(got, expected):
        rows = torch.tensor([[0.0, 1.0, 2.0]]).expand(30000, 3)
        drawn = _tensor(_call(fn, rows, torch.rand(30000, 3, generator=g).clamp(1e-6, 1 - 1e-6)), "the samples")
        counts = torch.bincount(drawn, minlength=3).float()
        want = rows[0].softmax(0) * 30000
        if ((counts - want).abs() > 5 * want.sqrt()).any():
            raise ExerciseError(f"Over 30,000 draws the counts {counts.tolist()} are not softmax's {want.round().tolist()}.")
        try:  # a batch can select no position at all: then there is nothing to sample, and no error either
            none = _call(fn, torch.zeros(0, 9), torch.rand(0, 9, generator=g).clamp(1e-6, 1 - 1e-6))
        except ExerciseError as err:
            raise ExerciseError(f"With no position to sample (logits of shape (0, 9)) your function failed: {err} "
                                "\nReturn an empty tensor of ids, shape (0,), as argmax does.") from None
        none = _tensor(none, "the samples")
        if none.shape != (0,) or none.is_floating_point():
            raise ExerciseError(f"With no position to sample (logits of shape (0, 9)) expected an empty tensor of ids, "
                                f"shape (0,), whole numbers; got shape {tuple(none.shape)}, {none.dtype}.")
        one = _tensor(_call(fn, torch.randn(1, 9, generator=g), torch.rand(1, 9, generator=g).clamp(1e-6, 1 - 1e-6)),
                      "the samples")  # a batch can select a single position too
        if one.shape != (1,):
            raise ExerciseError(f"With one position to sample (logits of shape (1, 9)) expected one id, shape (1,); got "
                                f"shape {tuple(one.shape)}: one id per row, even for a single row (.squeeze() drops "
                                "that row's axis).")
        _ok("argmax(logits + Gumbel noise) draws exactly from softmax(logits): a sample without computing the softmax.")
        return
    # the slips are told apart on many rows, where their samples differ (on six rows two slips can agree)
    many = torch.randn(2000, 9, generator=g) * 2
    u = torch.rand(2000, 9, generator=g).clamp(1e-6, 1 - 1e-6)
    try:
        drawn = _tensor(fn(many.clone(), u.clone()), "the samples")
    except Exception:  # noqa: BLE001 -- what failed here is told by the generic message below
        drawn = None
    slips = [
        (lambda: many.argmax(-1), "That is the most likely token every time (the noise was left out): a sampler must "
                                  "sometimes pick a less likely one."),
        (lambda: (many + u).argmax(-1), "Uniform noise added as it is: the Gumbel trick needs Gumbel noise, -log(-log(u))."),
        (lambda: (many + torch.log(-torch.log(u))).argmax(-1),
         "A sign is off: you added log(-log(u)). Compare your noise's sign with the Gumbel noise in the "
         "formula above the exercise."),
        (lambda: (many - torch.log(u)).argmax(-1),
         "-log(u) is exponential noise, not Gumbel noise: take the log twice, -log(-log(u))."),
        (lambda: (many.softmax(-1) - torch.log(-torch.log(u))).argmax(-1),
         "The noise was added to probabilities: the trick adds Gumbel noise to the *logits* (log-probabilities up to a "
         "constant), where it samples from their softmax exactly."),
        (lambda: (many + torch.log(u)).argmax(-1),
         "Adding log(u) to the logits, or multiplying the probabilities by u (the same samples), uses minus "
         "exponential noise: Gumbel noise takes the log twice, -log(-log(u)), and is added to the logits."),
        *[(lambda log=log: (many - log(-log(u))).argmax(-1),
           f"The log twice, but in base {base}: Gumbel noise uses the natural log, -torch.log(-torch.log(noise)), the "
           "log whose exp the softmax takes.") for base, log in (("10", torch.log10), ("2", torch.log2))],
    ]
    if drawn is not None and drawn.shape == (2000,):
        for slip, message in slips:
            if torch.equal(drawn, slip()):
                raise ExerciseError(message)
    raise ExerciseError("Not the Gumbel-max sample. Which noise did you add (it must be -log(-log(noise))), to what "
                        "(the logits), and where did you take the argmax (over the vocabulary, the last dimension)?")


def _rtd_hint(err):
    if "in-place operation" in str(err):
        return IN_PLACE_ON_LOGITS
    if "between 0 and 1" in str(err):
        return ("F.binary_cross_entropy reads probabilities, and these are logits (any real number): use the "
                "version that takes logits.")
    if "class probabilities" in str(err):
        return ("F.cross_entropy reads each row of logits as a choice among classes; the discriminator gives one "
                "logit per position (replaced or not): that is binary cross-entropy, computed from the logits.")
    if isinstance(err, IndexError) and "out of bounds" in str(err):
        return ("F.cross_entropy expects one logit per class, and the discriminator gives one logit per position "
                "(replaced or not): that is binary cross-entropy, computed from the logits.")
    if "can't be cast" in str(err) or "Long" in str(err) and "Float" in str(err):
        return ("the targets of binary cross-entropy are probabilities, so floats: turn the 0/1 `replaced` into "
                "floats (.float()) before the loss.")
    return None


def check_rtd_loss(fn) -> None:
    """fn(logits (B, L), replaced (B, L) 0/1, attention_mask (B, L) 0/1) -> mean binary cross-entropy over the
    real (mask 1) positions."""
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(3, 8, generator=g) * 2
    replaced = (torch.rand(3, 8, generator=g) < 0.2).long()
    mask = torch.ones(3, 8, dtype=torch.long)
    mask[2, 5:] = 0
    losses = F.binary_cross_entropy_with_logits(logits, replaced.float(), reduction="none")
    expected = (losses * mask).sum() / mask.sum()
    got = _tensor(_call(fn, logits.clone().requires_grad_(True), replaced, mask, hint=_rtd_hint), "the loss")
    if got.numel() != 1:
        raise ExerciseError(f"Return one number, the mean, as a tensor of shape () (what .mean() gives), not a "
                            f"tensor of shape {tuple(got.shape)}.")
    if got.is_floating_point():
        _carries_gradient(got)
    got = got.detach().float().reshape(())
    if math.isclose(got.item(), expected.item(), rel_tol=1e-5, abs_tol=1e-6):
        # the same batch with no padding at all: an answer may take another branch there
        plain = _tensor(_call(fn, logits.clone(), replaced, torch.ones_like(mask), hint=_rtd_hint),
                        "the loss").detach().float().reshape(-1)
        if plain.numel() != 1 or not math.isclose(plain[0].item(), losses.mean().item(), rel_tol=1e-5, abs_tol=1e-6):
            raise ExerciseError(f"Right on the check's first batch, which has padding, but on the same batch with none "
                                f"(attention_mask all 1) your loss is "
                                f"{f'{plain[0].item():.4f}' if plain.numel() == 1 else tuple(plain.shape)} where it "
                                f"should be {losses.mean().item():.4f}: look at what your function does when no "
                                "position is padding.")
        # a discriminator that is sure of itself: logits far from 0, right and wrong
        sure = torch.tensor([[40.0, -40.0, 3.0, -25.0, 90.0]])
        truth = torch.tensor([[0, 1, 1, 0, 1]])
        want = F.binary_cross_entropy_with_logits(sure, truth.float())
        said = _tensor(_call(fn, sure, truth, torch.ones_like(truth), hint=_rtd_hint), "the loss").float().reshape(-1)
        via_probabilities = F.binary_cross_entropy(torch.sigmoid(sure), truth.float())  # log clamped at -100
        if said.numel() == 1 and not math.isclose(said[0].item(), want.item(), rel_tol=1e-4) and math.isfinite(
                said[0].item()) and not math.isclose(said[0].item(), via_probabilities.item(), rel_tol=1e-3):
            raise ExerciseError(f"Right on the check's first batch, but with confident logits (40, -40, 90) your loss "
                                f"is {said[0].item():.2f} where it should be {want.item():.2f}: check your formula "
                                "for logits far from 0.")
        if said.numel() != 1 or not math.isclose(said[0].item(), want.item(), rel_tol=1e-4):
            raise ExerciseError(f"Right on the check's first batch, but with confident logits (40, -40, 90) your loss "
                                f"is {f'{said[0].item():.2f}' if said.numel() else said} where it should be {want.item():.2f}: "
                                "once the sigmoid rounds to exactly 0 or 1 in float32, log(sigmoid(x)) is log(0). "
                                "Compute the loss from the logits themselves (the version of binary cross-entropy "
                                "that takes logits, or F.logsigmoid), which stays finite.")
        _ok("Every real position counts, replaced or not: that is where ELECTRA's extra signal comes from.")
        return
    if math.isclose(got.item(), losses.mean().item(), rel_tol=1e-5):
        raise ExerciseError("The padding positions were counted too: average over the positions where "
                            "attention_mask is 1 only.")
    if math.isclose(got.item(), (losses * mask).sum().item(), rel_tol=1e-5):
        raise ExerciseError("That is the sum: the loss is the mean over the real positions.")
    sig = F.binary_cross_entropy(torch.sigmoid(logits), 1 - replaced.float(), reduction="none")
    if math.isclose(got.item(), ((sig * mask).sum() / mask.sum()).item(), rel_tol=1e-4):
        raise ExerciseError("The answer is upside down: 1 means *replaced*, and a logit above 0 says replaced (the "
                            "targets, or the logits' sign, are flipped).")
    chosen = replaced.bool() | ~replaced.bool()
    if math.isclose(got.item(), losses[replaced.bool() & mask.bool()].mean().item(), rel_tol=1e-5):
        raise ExerciseError("Only the replaced positions were scored: the discriminator is judged at every position "
                            f"({int(chosen.sum())} in the check's small batch, less the padding), the originals included.")
    clamped = F.binary_cross_entropy(logits.clamp(1e-6, 1 - 1e-6), replaced.float(), reduction="none")
    if math.isclose(got.item(), ((clamped * mask).sum() / mask.sum()).item(), rel_tol=1e-4):
        raise ExerciseError("F.binary_cross_entropy reads probabilities, and these are logits (any real number): "
                            "use the version that takes logits, or a sigmoid first.")
    if math.isclose(got.item(), (losses * mask).mean().item(), rel_tol=1e-5):
        raise ExerciseError("The padding's losses were weighted to 0, but the mean still divides by every position, "
                            "padding included: divide the sum by the number of real positions (attention_mask.sum()).")
    by_number = F.binary_cross_entropy_with_logits(logits[mask], replaced[mask].float())
    if math.isclose(got.item(), by_number.item(), rel_tol=1e-5):
        raise ExerciseError("attention_mask holds 0/1 integers, so logits[attention_mask] picks rows 0 and 1 by their "
                            "number instead of selecting positions: index with attention_mask.bool().")
    per_row = ((losses * mask).sum(1) / mask.sum(1)).mean()
    if math.isclose(got.item(), per_row.item(), rel_tol=1e-5):
        raise ExerciseError("A mean per row, then the mean of the rows: that weighs a short (padded) row's positions "
                            "more than a full row's. Average over all the real positions of the batch at once.")
    if math.isclose(got.item(), ((losses * mask).sum() / len(mask)).item(), rel_tol=1e-5):
        raise ExerciseError(f"Divided by the number of rows ({len(mask)}): len() of a 2-D tensor counts its first "
                            "dimension. The mean is over the real positions, so divide by how many there are.")
    padding_only = ((losses * (1 - mask)).sum() / (1 - mask).sum()).item()
    if math.isclose(got.item(), padding_only, rel_tol=1e-5):
        raise ExerciseError("Only the padding was scored: attention_mask is 1 at the real positions and 0 at the "
                            "padding, so keep the positions where it is 1.")
    twice = F.binary_cross_entropy_with_logits(torch.sigmoid(logits), replaced.float(), reduction="none")
    if math.isclose(got.item(), ((twice * mask).sum() / mask.sum()).item(), rel_tol=1e-4):
        raise ExerciseError("A sigmoid went in before the loss that takes logits, which applies its own: the "
                            "logits were squashed twice. Give it the logits as they are.")
    raise ExerciseError(f"Expected {expected.item():.4f}, got {got.item():.4f}. Is each position scored with "
                        "binary cross-entropy *from logits*, against a 0/1 target, and averaged over every real "
                        "position of the batch (padding out)?")
