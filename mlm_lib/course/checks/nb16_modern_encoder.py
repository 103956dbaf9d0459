"""Checks for the exercises of notebook 16 (the modern encoder)."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ...rope import apply_rope, rope_angles
from ._common import ExerciseError, _call, _ok, _tensor


def check_rotate(fn) -> None:
    """fn(x (..., L, d), cos (L, d), sin (L, d)) -> x turned pair by pair: pair i is (x[i], x[i + d/2]), turned by
    its angle (cos and sin hold each angle twice, once per half), as `mlm_lib.rope.apply_rope`."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 7, 8, generator=g)
    cos, sin = rope_angles(7, 8)
    expected = apply_rope(x, cos, sin)
    given = x.clone()
    got = _tensor(_call(fn, given, cos, sin, hint=_rotate_hint), "the turned vectors")
    if not torch.equal(given, x):
        raise ExerciseError("Your function changed its input in place (x *= ..., x += ..., a method ending in _ such "
                            "as mul_, or an assignment into x[...]): the caller's vectors are gone. Build a new tensor "
                            "instead, e.g. x * cos.")
    if got.shape != x.shape:
        raise ExerciseError(f"A rotation keeps the shape: expected {tuple(x.shape)}, got {tuple(got.shape)}.")
    if got.dtype != x.dtype:
        raise ExerciseError(f"Return the vectors in their own dtype ({x.dtype}), got {got.dtype}: a turn changes "
                            "directions, not precision.")
    if torch.allclose(got, expected, atol=1e-5):
        one = torch.randn(8, generator=g)  # one vector and its position's angles, as the notebook calls it
        try:
            single = fn(one.clone(), cos[3], sin[3])
        except Exception as err:  # noqa: BLE001 -- any failure here is the learner's indexing, named below
            raise ExerciseError(f"Right for a batch of windows, but a single vector x of shape (8,) with its angles "
                                f"cos[p], sin[p] of shape (8,) stops it ({type(err).__name__}: {err}). Work on the "
                                "last dimension with `...` (x[..., :h], cos[..., :h]), whatever comes before it.") from None
        if not (isinstance(single, torch.Tensor) and single.shape == one.shape
                and torch.allclose(single, apply_rope(one, cos[3], sin[3]), atol=1e-5)):
            raise ExerciseError("Right for a batch of windows, not for a single vector x of shape (8,) with cos[p], "
                                "sin[p] of shape (8,): split the last dimension (dim=-1 or `...`), not a fixed one.")
        _ok("Each pair turned by its position's angle: lengths kept, and q·k now depends on the distance only.")
        return
    first, second = x.chunk(2, dim=-1)
    if torch.allclose(got, x * cos + torch.cat((second, -first), -1) * sin, atol=1e-5):
        raise ExerciseError("The turn goes the wrong way: the quarter turn of a pair (a, b) is (-b, a), so the first "
                            "half gets minus the second half, and it is *added*, times sin (x * cos + turn * sin). One "
                            "of those two signs is flipped in yours.")
    neighbours = torch.stack((-x[..., 1::2], x[..., ::2]), -1).flatten(-2)
    if torch.allclose(got, x * cos + neighbours * sin, atol=1e-5):
        raise ExerciseError("Those pairs are neighbours (0, 1), (2, 3): RoFormer's layout. The course (and Hugging "
                            "Face's ModernBERT) pairs each number with the one half a head away, (i, i + d/2), "
                            "which is how `cos` and `sin` are laid out.")
    if torch.allclose(got, x * sin + torch.cat((-second, first), -1) * cos, atol=1e-5):
        raise ExerciseError("cos and sin are swapped: the pair itself is scaled by the cosine (at angle 0 nothing "
                            "may change), its quarter turn by the sine.")
    rotated = torch.cat((-second, first), -1)
    if torch.allclose(got, rotated * sin, atol=1e-5):
        raise ExerciseError("The cosine term is missing: a turn by angle t keeps cos(t) of the pair itself and adds "
                            "sin(t) of its quarter turn.")
    if torch.allclose(got, x * cos + torch.cat((second, first), -1) * sin, atol=1e-5):
        raise ExerciseError("The halves swapped places, but no sign changed: the quarter turn of a pair (a, b) has a "
                            "minus sign in it (the text above gives it). Without it (b, a) is a mirror image, not a quarter "
                            "turn, and x·cos + (b, a)·sin changes the pair's length.")
    if torch.allclose(got, x * cos + torch.cat((first, -second), -1) * sin, atol=1e-5):
        raise ExerciseError("(a, -b) only flips a sign and keeps the halves in place, a mirror image: the quarter "
                            "turn of a pair (a, b) is (-b, a), so the halves also swap places.")
    if torch.allclose(got, x * cos + torch.cat((-first, second), -1) * sin, atol=1e-5):
        raise ExerciseError("The quarter turn of a pair (a, b) is (-b, a): the halves swap places as well as one "
                            "changing sign.")
    top, bottom = x.chunk(2, dim=-2)
    if x.size(-2) % 2 == 0 and torch.allclose(got, x * cos + torch.cat((-bottom, top), -2) * sin, atol=1e-5):
        raise ExerciseError("The halves were taken along the positions: a pair is two numbers of one vector, so "
                            "split the last dimension (the vector's), chunk(2, dim=-1).")
    if torch.allclose(got, x * cos, atol=1e-5):
        raise ExerciseError("Only the cosine part: a rotation also mixes in the pair's other number, times the sine.")
    if torch.allclose(got, x + rotated * sin, atol=1e-5):
        raise ExerciseError("x itself went in unscaled: a turn keeps cos(t) of the pair (x * cos) and adds sin(t) of "
                            "its quarter turn.")
    if x.size(0) % 2 == 0 and torch.allclose(got, x * cos + torch.cat((-x.chunk(2, 0)[1], x.chunk(2, 0)[0]), 0) * sin,
                                             atol=1e-5):
        raise ExerciseError("The halves were taken along the first dimension (the batch): a pair is two numbers of one "
                            "vector, so split the last dimension, whatever the number of dimensions before it.")
    d = x.size(-1)
    if torch.allclose(got, x * cos + x * sin, atol=1e-5):  # no turn at all: tell the three usual causes apart
        if _right_on(fn, (2, 3, 7, 16)):  # right at the notebook's width: a width typed in, not read from x
            raise ExerciseError(f"Right for vectors of 16 numbers (the notebook's d_head), not for the check's {d}: "
                                f"your halves are a fixed 8 wide, here the whole vector, so nothing turns. Take the "
                                "width from x: h = x.shape[-1] // 2.")
        if _right_on(fn, (8,)):  # right for one vector alone: the halves sliced on the first axis
            raise ExerciseError("Right for a single vector, not for a batch of them: your halves were sliced on the "
                                "first axis (x[h:] where x[..., h:] is meant), which in a batch is not the vector's. "
                                "Slice the last axis: x[..., :h] and x[..., h:].")
        raise ExerciseError("Your result is x * cos + x * sin: nothing was turned, as if x itself stood where its "
                            "quarter turn (-x2, x1) belongs. Build the quarter turn from the two halves of the last "
                            "axis, h = x.shape[-1] // 2.")
    for h in range(1, d):  # the turn with halves of another width: a fixed one, or another dimension's
        if h != d // 2 and torch.allclose(got, x * cos + torch.cat((-x[..., h:], x[..., :h]), -1) * sin, atol=1e-5):
            wide = f"{h} number{'s' if h > 1 else ''} wide"
            others = [i for i in range(x.dim() - 1) if x.size(i) // 2 == h]
            if others:  # len(x) or x.shape[0]: the size of a dimension other than the vector's
                raise ExerciseError(f"Your halves are {wide}: half the size of dimension {others[0]} of x "
                                    f"({tuple(x.shape)}), not of the vectors, which are its last dimension, {d} wide"
                                    + (" (len(x) counts the first dimension)" if others[0] == 0 else "")
                                    + f". Take x.shape[-1] // 2 = {d // 2}.")
            raise ExerciseError(f"Your halves are {wide}, but the check's vectors have {d} numbers: the halves are "
                                f"d/2 = {d // 2}. A fixed number fits one width only; take it from x, x.shape[-1] // 2.")
    if (got.norm(dim=-1) - x.norm(dim=-1)).abs().max() > 1e-3:
        raise ExerciseError("The vectors changed length: a rotation keeps it, so something other than a turn happened.")
    raise ExerciseError("Not the expected rotation: x * cos + (the quarter-turned x) * sin, pair (i, i + d/2) by pair.")


def turned_by(rotate, cos, sin):
    """Notebook 16, section 1: the learner's `rotate` as `turned(x, position)`, for the cell that prints q·k scores.
    Before it returns, `rotate` is held to the library's `apply_rope` on a batch of windows (where halves taken on
    the wrong axis, or of a fixed width, go wrong although one vector comes out right); a rotate that fails there,
    or later changes a vector's shape, stops with one line that sends the learner to Exercise 1's check."""
    refused = ExerciseError("your rotate turns vectors otherwise than the library's apply_rope: run Exercise 1's "
                            "check above, which says what it does wrong")
    if not _right_on(rotate, (2, 3, 7, 2 * cos.shape[-1])):  # windows x heads x positions x a head twice as wide
        raise refused

    def turned(x, position):
        try:
            out = rotate(x, cos[position], sin[position])
            same = tuple(out.shape) == tuple(x.shape) and torch.allclose(out, apply_rope(x, cos[position],
                                                                                         sin[position]), atol=1e-5)
        except (TypeError, IndexError, RuntimeError, AttributeError, ValueError):
            same = False
        if not same:
            raise refused
        return out

    return turned


def _right_on(fn, shape) -> bool:
    """Does the answer turn vectors of this shape right (the last number: their width)? A shape of one dimension is
    one vector with its position's angles, as the notebook's cell 8 calls it."""
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
    cos, sin = rope_angles(7, shape[-1])
    if len(shape) == 1:
        cos, sin = cos[3], sin[3]
    try:
        got = fn(x.clone(), cos, sin)
        return isinstance(got, torch.Tensor) and got.shape == x.shape and torch.allclose(got, apply_rope(x, cos, sin),
                                                                                          atol=1e-5)
    except Exception:  # noqa: BLE001 -- a learner's function failing here only means: not right on this shape
        return False


def _rotate_hint(err):
    if isinstance(err, TypeError) and "slice indices must be integers" in str(err):
        return ("a slice took a float: x.shape[-1] / 2 is one (8 / 2 = 4.0). The halves' width is a whole number, "
                "from floor division.")
    if isinstance(err, TypeError) and "positional argument" in str(err):
        return "the check, like the notebook, calls rotate(x, cos, sin): three arguments, in that order."
    if "must match the size of tensor" in str(err) or "Sizes of tensors must match" in str(err):
        return ("the pieces you combine do not line up: x, its halves, cos and sin meet on the *last* dimension, "
                "so split and join along it (dim=-1) and slice it with `...` (x[..., :h]), whatever comes before.")
    return None


def _geglu_hint(err):
    if "too many values to unpack (expected 2)" in str(err):
        return ("w_in(x) was cut into more than two pieces: torch.split(t, n) cuts pieces n wide, not n pieces. Cut "
                "its last dimension into two halves.")
    if "cannot be multiplied" in str(err):
        return ("w_out reads f numbers, half of w_in's 2f outputs: what reaches w_out must be the product of the "
                "two halves of w_in(x) (the layer called, not its weight multiplied by hand), split along its *last* "
                "dimension (the features), multiplied number by number (*, not the matrix product @).")
    if "must match the size of tensor" in str(err):
        return ("two tensors of different sizes met in a product. The two halves of w_in(x) must each be f wide "
                "(half its last dimension: the notebook's layer has f = 344, the check's f = 5), and they multiply "
                "before w_out, which takes f numbers back to d: check where each slice starts and ends, and where "
                "w_out comes.")
    return None


def check_geglu(fn) -> None:
    """fn(x (..., d), w_in (nn.Linear d -> 2f), w_out (nn.Linear f -> d)) -> w_out(gelu(h) * gate), where h and
    gate are the first and second halves of w_in(x)."""
    torch.manual_seed(0)
    w_in, w_out = torch.nn.Linear(6, 10), torch.nn.Linear(5, 6)
    x = torch.randn(3, 4, 6)
    h, gate = w_in(x).chunk(2, dim=-1)
    expected = w_out(F.gelu(h) * gate)
    got = _tensor(_call(fn, x, w_in, w_out, hint=_geglu_hint), "the output")
    if got.shape != expected.shape:
        raise ExerciseError(f"Expected shape {tuple(expected.shape)} (back to d), got {tuple(got.shape)}: split "
                            "w_in's output in two halves of f, multiply them, then w_out.")
    if torch.allclose(got, expected, atol=1e-5):
        _ok("One half through GELU, scaled by the other half: the gate decides, per number, how much passes.")
        return
    if torch.allclose(got, w_out(F.gelu(h, approximate="tanh") * gate), atol=1e-4):
        _ok("One half through GELU (your tanh approximation is within 1e-3 of the exact erf GELU the course and "
            "ModernBERT use), scaled by the other half: the gate decides, per number, how much passes.")
        return
    bias_free = (x @ w_in.weight.T).chunk(2, dim=-1)
    if torch.allclose(got, w_out(F.gelu(bias_free[0]) * bias_free[1]), atol=1e-5):
        raise ExerciseError("w_in's bias is missing: call the layer itself, w_in(x), which adds it, rather than "
                            "multiplying by its weight alone.")
    if torch.allclose(got, (F.gelu(bias_free[0]) * bias_free[1]) @ w_out.weight.T, atol=1e-5) or torch.allclose(
            got, (F.gelu(h) * gate) @ w_out.weight.T, atol=1e-5):
        raise ExerciseError("A bias is missing: call the layers themselves, w_in(x) and w_out(...), which add their "
                            "biases, rather than multiplying by their weights alone.")
    if torch.allclose(got, x + expected, atol=1e-5):
        raise ExerciseError("x was added back: the residual belongs to the block around the layer (notebook 04), "
                            "the feed-forward layer returns w_out(...) alone.")
    slips = [(w_out(F.relu(h) * gate), "ReLU on the first half makes ReGLU; GeGLU puts GELU there."),
             (w_out(F.silu(h) * gate), "SiLU makes SwiGLU (LLaMA's choice); GeGLU, ModernBERT's, uses GELU."),
             (w_out(F.gelu(w_in(x)[..., :5])), "The gate is missing: the second half multiplies the first "
                                               "half's GELU, number by number."),
             (w_out(F.gelu(w_in(x)[..., ::2]) * w_in(x)[..., 1::2]), "Even and odd numbers are not the halves: "
              "the first f numbers of w_in(x) go through GELU, the last f are the gate."),
             (w_out(h * gate), "GELU is missing: the first half goes through GELU before the gate multiplies it."),
             (w_out(F.gelu(h) + gate), "The halves were added: the gate *multiplies* the first half's GELU, number "
                                       "by number."),
             (w_out(torch.mul(*F.gelu(w_in(x)).chunk(2, dim=-1))), "GELU went on the gate too (on both halves, or "
              "on all of w_in(x) before the split): only the first half goes through it; the gate, the second half, "
              "multiplies as it is.")]
    for wrong, message in slips:
        if torch.allclose(got, wrong, atol=1e-5):
            raise ExerciseError(message)
    if torch.allclose(got, w_out(h * F.gelu(gate)), atol=1e-5):
        raise ExerciseError("GELU went on the gate: the course (and ModernBERT) puts it on the first half and "
                            "multiplies by the second as it is.")
    if torch.allclose(got, w_out(F.gelu(h * gate)), atol=1e-5):
        raise ExerciseError("GELU after the product: apply it to the first half alone, then multiply by the gate.")
    raise ExerciseError("Not GeGLU. Compare your function with the exercise's formula step by step: which half of "
                        "w_in(x) goes through GELU, what multiplies it, and what w_out reads.")
