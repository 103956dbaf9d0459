"""Checks for the exercises of notebook 14 (how fast a laptop can pretrain BERT)."""
from __future__ import annotations

import torch

from ...model import MODEL_SIZES, BertConfig, BertForMLM
from ...muon import hidden_matrices, newton_schulz
from ._common import ExerciseError, _call, _ok, _tensor


def check_newton_schulz(fn) -> None:
    """fn(matrix, steps) -> five (or `steps`) Newton-Schulz iterations of Muon, as `mlm_lib.newton_schulz`."""
    g = torch.Generator().manual_seed(0)
    for shape in ((6, 6), (4, 10), (10, 4)):
        matrix = torch.randn(*shape, generator=g)
        for steps in (1, 5):
            want = newton_schulz(matrix, steps)
            got = _tensor(_call(fn, matrix.clone(), steps), "the result")
            if got.shape != matrix.shape:
                raise ExerciseError(f"For a {shape[0]}x{shape[1]} matrix return a {shape[0]}x{shape[1]} matrix, got "
                                    f"shape {tuple(got.shape)} (a tall matrix is turned wide for the iteration, then back).")
            if not torch.isfinite(got).all() or torch.linalg.matrix_norm(got.float(), ord=2) > 2:  # largest singular value
                raise ExerciseError("The numbers blow up: divide the matrix by its norm (matrix.norm()) first, so "
                                    "every singular value starts at most 1, where the polynomial pulls it towards 1.")
            if not torch.allclose(got.float(), want, atol=1e-4, rtol=1e-4):
                raise ExerciseError(f"Not the same as mlm_lib.newton_schulz for a {shape[0]}x{shape[1]} matrix and "
                                    f"steps={steps}. Each step is X <- a X + (b G + c G @ G) @ X with G = X @ X.T and "
                                    "(a, b, c) = (3.4445, -4.775, 2.0315), starting from X = matrix / matrix.norm().")
    _ok("Five multiplications of small matrices, and every singular value sits near 1: the update's directions "
        "all move alike.")


def check_takes_muon(fn) -> None:
    """fn(name, parameter) -> True for the parameters Muon takes (the encoder layers' weight matrices)."""
    model = BertForMLM(BertConfig(vocab_size=20, **(MODEL_SIZES["smoke"] | {"n_layers": 2})))
    want = set(hidden_matrices(model))
    for name, parameter in model.named_parameters():
        got = _call(fn, name, parameter)
        if not isinstance(got, bool):
            raise ExerciseError(f"Return True or False, got {type(got).__name__} for {name}.")
        if got and name not in want:
            if parameter.dim() < 2:
                raise ExerciseError(f"{name} is a vector (shape {tuple(parameter.shape)}): there is no matrix to "
                                    "orthogonalise. Biases and LayerNorm weights stay with AdamW.")
            if name.startswith("embeddings"):
                raise ExerciseError(f"{name} is a table looked up row by row, not a map that multiplies a hidden "
                                    "vector: embeddings stay with AdamW.")
            raise ExerciseError(f"{name} is outside the encoder layers: the speedrun gives Muon only the layers' "
                                "matrices (as modded-nanoGPT does), and the MLM head stays with AdamW.")
        if not got and name in want:
            raise ExerciseError(f"{name} (shape {tuple(parameter.shape)}) multiplies the hidden vectors inside an "
                                "encoder layer: Muon is for exactly these matrices.")
    _ok(f"{len(want)} matrices with Muon (Q, K, V, output, two feed-forward per layer), everything else AdamW.")
