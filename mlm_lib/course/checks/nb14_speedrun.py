"""Checks for the exercises of notebook 14 (how fast a laptop can pretrain BERT)."""
from __future__ import annotations

import sys

import torch

from ...model import MODEL_SIZES, BertConfig, BertForMLM
from ...muon import hidden_matrices, newton_schulz
from ._common import ExerciseError, _call, _ok, _tensor


def _ns_slips(matrix, steps):
    """The review's wrong Newton-Schulz answers, each computed, with the hint that names it."""
    a, b, c = 3.4445, -4.7750, 2.0315
    tall = matrix.size(0) > matrix.size(1)

    def run(n, update, renorm=False):
        x = matrix.float().T if tall else matrix.float()
        x = x / x.norm()
        for _ in range(n):
            x = update(x)
            x = x / x.norm() if renorm else x
        return x.T if tall else x

    def step(x, b=b, squared=True, left=True):
        gram = x @ x.T if left else x.T @ x
        poly = b * gram + c * (gram @ gram if squared else gram)
        return a * x + (poly @ x if left else x @ poly)

    slips = [("Check the coefficients' signs: b is negative (-4.775); with +4.775 the polynomial pushes singular "
              "values away from 1.", run(steps, lambda x: step(x, b=-b))),
             ("The last coefficient multiplies G @ G, the Gram matrix squared (the s^5 term), not G once.",
              run(steps, lambda x: step(x, squared=False))),
             ("Divide by the norm once, at the start: the iteration itself keeps the singular values near 1, and "
              "dividing again every step undoes its work.", run(steps, step, renorm=True))]
    if matrix.size(0) == matrix.size(1):
        slips.append(("Your Gram matrix stands on the wrong side of X: X.T @ X can only multiply X from the right, "
                      "X @ X.T from the left (section 3's formula).",
                      run(steps, lambda x: a * x + (b * (x.T @ x) + c * (x.T @ x) @ (x.T @ x)) @ x)))
        slips.append(("Your Gram matrix stands on the wrong side of X: X @ X.T can only multiply X from the left, "
                      "X.T @ X from the right (section 3's formula).",
                      run(steps, lambda x: a * x + x @ (b * (x @ x.T) + c * (x @ x.T) @ (x @ x.T)))))
    if steps > 1:
        slips.append((f"One iteration's worth, whatever `steps` says ({steps}): each turn must start from the "
                      "previous turn's result, so assign it back to x.", run(1, step)))
        x0 = (matrix.float().T if tall else matrix.float()) / matrix.float().norm()
        gram0 = x0 @ x0.T  # computed once, before the loop

        def stale(x):
            return a * x + (b * gram0 + c * gram0 @ gram0) @ x
        slips.append(("The Gram matrix was computed once, before the loop: X changes every iteration, so its Gram "
                      "matrix X @ X.T must be computed again inside the loop, from the current X.", run(steps, stale)))
    slips.append(("Your function returned the matrix it was given, unchanged: return the result of the iteration "
                  "(the x the loop updated).", matrix.float()))
    slips.append(("The powers must be matrix products (@), not number-by-number powers (** and *): the polynomial "
                  "acts on the matrix's singular values only through G = X @ X.T, G @ G and G @ X.",
                  run(steps, lambda x: a * x + b * x ** 3 + c * x ** 5)))
    u, _, vh = torch.linalg.svd(matrix.float(), full_matrices=False)
    slips.append(("That is the exact orthogonalisation, U @ Vh from the SVD, which Muon's Newton-Schulz iteration "
                  "only approximates (every singular value near 1, not exactly 1): the exercise asks for the "
                  "iteration itself, which is cheaper.", u @ vh))
    spectral = matrix.float() / torch.linalg.matrix_norm(matrix.float(), ord=2)
    xs = spectral.T if tall else spectral
    for _ in range(steps):
        xs = step(xs)
    slips.append(("You divided by the largest singular value (the spectral norm, ord=2). The course divides by "
                  "matrix.norm(), the Frobenius norm, as mlm_lib.newton_schulz does: cheaper, and it also puts "
                  "every singular value at most 1.", xs.T if tall else xs))
    for n in (steps - 1, steps + 1):
        if n >= 0:
            slips.append((f"One iteration {'short' if n < steps else 'too many'}: called with steps={steps}, your "
                          f"function gives what {n} iteration(s) give. Count the loop's turns, and check that each turn "
                          "assigns its result back to x, so that the next turn starts from it.", run(n, step)))
    if steps != 5:
        slips.append((f"Five iterations whatever `steps` says: the loop must turn `steps` times (here {steps}).",
                      run(5, step)))
    slips.append(("The powers must be matrix products (@), not number-by-number products (*): the polynomial acts on "
                  "the matrix's singular values only through G @ G and G @ X.",
                  run(steps, lambda x: a * x + (b * (x @ x.T) + c * (x @ x.T) * (x @ x.T)) @ x)))
    return slips


def _not_the_library(fn) -> None:
    """Refuse an answer that hands the work to the course's own function (the check compares with it, so it would
    pass without one iteration written): a global name the answer's code uses that is `mlm_lib.newton_schulz`, or
    the attribute `newton_schulz` read from a module that holds it (mlm_lib.newton_schulz(...))."""
    code, names = getattr(fn, "__code__", None), set()
    stack = [code] if code is not None else []
    while stack:  # the function's code and any function or comprehension nested in it
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if hasattr(k, "co_names"))
    space = getattr(fn, "__globals__", {})
    modules = [space.get(name, sys.modules.get(name)) for name in names]  # mlm_lib, imported here or in the cell
    if any(space.get(name) is newton_schulz for name in names) or "newton_schulz" in names and any(
            getattr(module, "newton_schulz", None) is newton_schulz for module in modules):
        raise ExerciseError("Your function calls the course's own mlm_lib.newton_schulz, which the check compares "
                            "with: write the iteration itself (the normalisation, then `steps` turns of the "
                            "polynomial).")


def check_newton_schulz(fn) -> None:
    """fn(matrix, steps) -> five (or `steps`) Newton-Schulz iterations of Muon, as `mlm_lib.newton_schulz`."""
    _not_the_library(fn)
    g = torch.Generator().manual_seed(0)
    for shape in ((6, 6), (4, 10), (10, 4)):
        matrix = torch.randn(*shape, generator=g)
        for steps in (1, 5):
            want = newton_schulz(matrix, steps)
            given = matrix.clone()
            got = _tensor(_call(fn, given, steps, hint=_steps_hint), "the result")
            if not torch.equal(given, matrix):
                raise ExerciseError("Your function changed the matrix it was given (an in-place operation such as /= or "
                                    "a method ending in _): an optimiser's momentum would be rescaled. Build new "
                                    "tensors instead, e.g. x = matrix / norm.")
            if got.shape != matrix.shape:
                raise ExerciseError(f"For a {shape[0]}x{shape[1]} matrix return a {shape[0]}x{shape[1]} matrix, got "
                                    f"shape {tuple(got.shape)} (a tall matrix is turned wide for the iteration, then back).")
            if torch.allclose(got.float(), want, atol=1e-4, rtol=1e-4):
                continue
            if got.dtype in (torch.bfloat16, torch.float16):
                raise ExerciseError(f"The result is in {str(got.dtype).removeprefix('torch.')}: the course iterates "
                                    "in float32, and the check compares with that. A 16-bit float keeps two to "
                                    "three significant digits, so its result lands visibly apart (section 3 sets "
                                    "PyTorch's bfloat16 Muon beside float32). Keep x in float32 throughout.")
            for message, variant in _ns_slips(matrix, steps):
                if variant.shape == got.shape and torch.allclose(got.float(), variant, atol=1e-4, rtol=1e-4):
                    raise ExerciseError(message)
            gap = float((got.float() - want).norm() / want.norm()) if got.shape == want.shape else float("inf")
            # near, but further than float32's rounding, and about as far as the course's own iteration run in
            # bfloat16 lands (a wrong polynomial can land near too, but further than that): bfloat16 somewhere
            in_bf16 = newton_schulz(matrix, steps, dtype=torch.bfloat16).float()
            bf16_gap = float((in_bf16 - want).norm() / want.norm())
            if 2e-3 < gap < 3 * bf16_gap:
                raise ExerciseError(f"Close, but {gap:.0e} apart (relative): more than float32's rounding and about "
                                    "bfloat16's. Keep every step of the iteration in float32, not only the result.")
            if got.shape == want.T.shape and torch.allclose(got.float(), want.T, atol=1e-4, rtol=1e-4):
                raise ExerciseError(f"For a {shape[0]}x{shape[1]} matrix your result is the right one, transposed: "
                                    "the iteration keeps the matrix's orientation, so return X as it comes out of "
                                    "the loop (a wide or tall matrix turned around for the loop is turned back).")
            if not torch.isfinite(got).all() or torch.linalg.matrix_norm(got.float(), ord=2) > 2:  # largest singular value
                raise ExerciseError("The numbers blow up. Four things keep them near 1: the start (every singular "
                                    "value at most 1 once the matrix is divided by its norm), the polynomial's "
                                    "coefficients with their signs, which pull values in (0, 1] towards 1, the Gram "
                                    "matrix itself, X times its transpose (X @ X itself is no Gram matrix), and every "
                                    "product in the polynomial a matrix product (@, not *). Check all four.")
            raise ExerciseError(f"Not the same as mlm_lib.newton_schulz for a {shape[0]}x{shape[1]} matrix and "
                                f"steps={steps}. Check in turn: the start (divided by its norm once, in float32), the "
                                "Gram matrix (X @ X.T on the left of X, or X.T @ X on its right; matrix products, @), the three coefficients and the number "
                                "of iterations.")
    try:
        default = fn(matrix.clone())
    except TypeError:
        raise ExerciseError("Called with the matrix alone, your function stops: give `steps` its default, 5, as the "
                            "exercise's signature has (newton_schulz_by_hand(matrix, steps=5)).") from None
    if not (isinstance(default, torch.Tensor) and torch.allclose(default.float(), newton_schulz(matrix, 5),
                                                                 atol=1e-4, rtol=1e-4)):
        raise ExerciseError("Called with the matrix alone, your function does not give five iterations: the default "
                            "of `steps` must be 5, Muon's.")
    zero = _tensor(_call(fn, torch.zeros(3, 5), 5), "the result for a zero matrix")
    if not torch.isfinite(zero).all():
        raise ExerciseError("A matrix of zeros (a gradient can be one) gives NaN: its norm is 0. Keep the norm you "
                            "divide by away from zero (a small floor), as the text says and mlm_lib.newton_schulz does.")
    _ok("Five iterations of three small matrix products each: on the check's matrices every singular value lands "
        "between about 0.5 and 1.5, so those directions all move by about the same amount.")


def _takes_muon_hint(err):
    if isinstance(err, TypeError) and "positional argument" in str(err):
        return "the check, like the optimiser, calls takes_muon(name, parameter): two arguments, the name first."
    if isinstance(err, AttributeError) and "'Parameter' object" in str(err):
        return ("a string method called on the parameter: the check calls takes_muon(name, parameter), the name "
                "(a string) first, then the tensor.")
    return None


def _steps_hint(err):
    if isinstance(err, TypeError) and "positional argument" in str(err):
        return "the check calls newton_schulz_by_hand(matrix, steps): give it a second argument, steps=5 by default."
    if isinstance(err, NameError) and getattr(err, "name", None) in ("a", "b", "c"):
        return ("a, b and c are the iteration's coefficients, (3.4445, -4.775, 2.0315) in the text above: define them "
                "in your own cell too (the folded template does, on its first line), or write the numbers in.")
    return None


def check_takes_muon(fn) -> None:
    """fn(name, parameter) -> True for the parameters Muon takes (the encoder layers' weight matrices)."""
    model = BertForMLM(BertConfig(vocab_size=20, **(MODEL_SIZES["smoke"] | {"n_layers": 3})))
    want = set(hidden_matrices(model))
    answers = {}
    for name, parameter in model.named_parameters():
        got = _call(fn, name, parameter, hint=_takes_muon_hint)
        if not isinstance(got, bool):
            raise ExerciseError(f"Return True or False, got {type(got).__name__} for {name}.")
        answers[name] = got
    if all(got != (name in want) for name, got in answers.items()):  # every answer the other way round
        raise ExerciseError("Every answer is the other way round: True is for the parameters Muon takes (the encoder "
                            "layers' weight matrices), False for those that stay with AdamW.")
    for name, parameter in model.named_parameters():
        got = answers[name]
        if got and name not in want:
            if parameter.dim() < 2:
                raise ExerciseError(f"{name} is a vector (shape {tuple(parameter.shape)} in the check's small model): there is no matrix to "
                                    "orthogonalise. Biases and LayerNorm weights stay with AdamW.")
            if name.startswith("embeddings"):
                raise ExerciseError(f"{name} is a table looked up row by row, not a map that multiplies a hidden "
                                    "vector: embeddings stay with AdamW.")
            raise ExerciseError(f"{name} is outside the encoder layers: the speedrun gives Muon only the layers' "
                                "matrices (as modded-nanoGPT does), and the MLM head stays with AdamW.")
        if not got and name in want:
            raise ExerciseError(f"{name} (shape {tuple(parameter.shape)} in the check's small model) multiplies the hidden vectors inside an "
                                "encoder layer: Muon is for exactly these matrices.")
    _ok(f"{len(want)} matrices with Muon in the check's 3-layer model (Q, K, V, output, two feed-forward per layer; "
        "24 in the course's 4-layer model), everything else AdamW.")
