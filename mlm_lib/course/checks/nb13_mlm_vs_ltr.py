"""Checks for the exercises of notebook 13 (masked against left-to-right)."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ._common import ExerciseError, _call, _carries_gradient, _ok, _tensor


def _pair_hint(err):
    if isinstance(err, IndexError) and "too many indices" in str(err):
        return ("the window is one row of ids, a 1-D tensor with no batch axis: slice its only dimension.")
    return None


def _typed_length(fn) -> None:
    """A slice with a number typed in (window[:64]) keeps the whole of a shorter window: try a long one to tell."""
    long = torch.arange(200)
    try:
        got = fn(long.clone())
        inputs = got[0]
    except Exception:  # the answer's other faults are named by the check's own cases
        return
    if isinstance(inputs, torch.Tensor) and inputs.dim() == 1 and inputs.numel() < long.numel() - 1:
        raise ExerciseError(f"For a window of {long.numel()} tokens your inputs hold {inputs.numel()}: your slice ends "
                            "at a number typed in. On the check's short windows such a slice keeps every token, the "
                            "last one too. Read the length from the window itself.")


def check_next_token_pair(fn) -> None:
    """fn(window) -> (inputs, labels) for next-token prediction: inputs = window[:-1], labels = window[1:]."""
    for window in (torch.tensor([5, 6, 7, 8, 9]), torch.tensor([[10, 11, 12], [20, 21, 22]]).flatten(),
                   torch.tensor([3, 4]), torch.tensor([7])):  # one input and one label; then none at all
        got = _call(fn, window.clone(), hint=_pair_hint)
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise ExerciseError("Return two tensors: (inputs, labels).")
        inputs, labels = (_tensor(g, name) for g, name in zip(got, ("the inputs", "the labels")))
        if inputs.is_floating_point() or labels.is_floating_point():
            wrong = " and ".join(f"the {name} are {t.dtype}" for name, t in (("inputs", inputs), ("labels", labels))
                                 if t.is_floating_point())
            if len(window) == 1 and inputs.numel() == 0 == labels.numel():  # only the empty pair came out as floats
                raise ExerciseError(f"For the window {window.tolist()} (one token: no pair at all) {wrong}: empty, but "
                                    "floats. torch.tensor([]) makes a float tensor; give it dtype=window.dtype, or "
                                    "slice the window, which keeps its type.")
            raise ExerciseError(f"Return the ids in their own type ({window.dtype}); {wrong}: the model looks the "
                                "inputs up in its embedding table, and cross_entropy reads the labels as class "
                                "numbers; both need whole numbers.")
        if torch.equal(inputs, window[:-1]) and torch.equal(labels, window[1:]):
            continue  # right (for one token: both empty, which the checks below would take for other slips)
        if inputs.shape == labels.shape == window.shape and torch.equal(inputs, labels):
            raise ExerciseError("Inputs and labels are the same: the model would learn to copy what it reads. Shift "
                                "by one: the label of position i is the token at i + 1.")
        if torch.equal(inputs, window[1:]) and torch.equal(labels, window[:-1]):
            raise ExerciseError("Backwards: that predicts the *previous* token. Which of the two should keep the "
                                "window's first token, and which its last?")
        if inputs.shape == window.shape and torch.equal(inputs, window) and labels.numel() >= window.numel() - 1:
            _typed_length(fn)
            raise ExerciseError(f"For the window {window.tolist()} your inputs are the whole window: its last token has "
                                "no next token to be its label, so it is not an input. The inputs leave it out.")
        if len(window) == 1 and not (inputs.numel() == labels.numel() == 0):
            raise ExerciseError(f"A window of one token, {window.tolist()}, has no next token to predict: both inputs "
                                f"and labels are empty; you returned inputs {inputs.tolist()} and labels "
                                f"{labels.tolist()}. (A slice from -len(window) + 1 starts at -0, the window's start.)")
        if not (torch.equal(inputs, window[:-1]) and torch.equal(labels, window[1:])):
            raise ExerciseError(f"For the window {window.tolist()} you returned inputs {inputs.tolist()} and labels "
                                f"{labels.tolist()}. Check two things: is labels[i] the token that comes right after "
                                "inputs[i], for every i, and does each token of the window that has a token before it "
                                "appear as a label?")
    _ok("A window of n tokens gives n - 1 predictions: every input position has a label (training cuts windows one "
        "token longer than the model reads, so that each of its 64 inputs gets one).")


def _loss_hint(err):
    import re
    sizes = re.search(r"Expected input batch_size \((\d+)\) to match target batch_size \((\d+)\)", str(err))
    if sizes:  # both flattened, over different numbers of positions
        return (f"the logits and the labels are flattened, but over different numbers of positions ({sizes[1]} and "
                f"{sizes[2]}): each window must give as many predictions as labels. The check's windows are "
                "6 tokens long, not the notebook's 64: slice with sizes read from the tensors, not with a number typed in.")
    if "Expected target size" in str(err):
        return ("F.cross_entropy reads (positions, vocabulary) logits against (positions,) labels, or puts the "
                "vocabulary in dimension 1: flatten the batch and length dimensions of both first.")
    if "view size is not compatible" in str(err):
        return ("a slice such as logits[:, :-1] is a view that skips memory, which .view cannot flatten: "
                "use .reshape, which copies when it must.")
    if "is invalid for input of size" in str(err):
        return ("the check's logits have a vocabulary of their own (11 tokens, not the notebook's): read every size "
                "from the tensors themselves, logits.size(-1), not from the tokenizer or a number typed in.")
    return None


def check_next_token_loss(fn) -> None:
    """fn(logits, ids) -> mean cross-entropy of predicting ids[:, i + 1] from logits[:, i]."""
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 6, 11, generator=g)
    ids = torch.randint(0, 11, (2, 6), generator=g)
    want = F.cross_entropy(logits[:, :-1].reshape(-1, 11), ids[:, 1:].reshape(-1))
    logits.requires_grad_(True)  # as in training: the loss must carry a gradient back to the logits
    got = _call(fn, logits, ids.clone(), hint=_loss_hint)
    if isinstance(got, float):
        raise ExerciseError("That is a Python float (from .item() or float()): right as a number, but training calls "
                            ".backward() on the loss, which needs the tensor. Return the tensor itself.")
    got = _tensor(got, "the loss")
    if got.numel() != 1:
        raise ExerciseError(f"Return one number (the mean over every prediction), got shape {tuple(got.shape)}.")
    if not got.is_floating_point():
        raise ExerciseError(f"A loss is a float, got a tensor of {got.dtype}: the mean of the log-probabilities is not a "
                            "whole number.")
    if got.grad_fn is None:  # an error rate (argmax compared with the next tokens) has none: name it first
        predicted, following = logits.detach()[:, :-1].argmax(-1), ids[:, 1:]
        for rate in ((predicted != following).float().mean(), (predicted == following).float().mean()):
            if torch.allclose(got.detach().float(), rate):
                raise ExerciseError("That is a share of the next tokens guessed wrong (or right), from argmax and a "
                                    "comparison: neither has a gradient, so training could not learn from it. The "
                                    "loss is the cross-entropy of each position's logits against its next token, "
                                    "averaged.")
    _carries_gradient(got)
    got = got.detach().float()  # float64 is fine: compare in the logits' precision
    logits = logits.detach()
    if torch.allclose(got, F.cross_entropy(logits.reshape(-1, 11), ids.reshape(-1))):
        raise ExerciseError("No shift: position i is scored against its own token, which (without a mask over it) "
                            "it can read. Its label is the token that comes after it.")
    flat_logits, flat_labels = logits[:, :-1].reshape(-1, 11), ids[:, 1:].reshape(-1)
    if torch.allclose(got, F.cross_entropy(logits[:, :-1].reshape(-1, 11), ids[:, :-1].reshape(-1))):
        raise ExerciseError("Trimmed but not shifted: logits[:, :-1] is scored against ids[:, :-1], so position i "
                            "still meets its own token. Its label is the token after it, at i + 1.")
    if torch.allclose(got, F.cross_entropy(logits[:, -2], ids[:, -1])):
        raise ExerciseError("Only one prediction per window (the last position that has a next token): every "
                            "position but the last predicts its successor, and all of them count in the mean.")
    if torch.allclose(got, F.cross_entropy(flat_logits, flat_labels, reduction="sum")):
        raise ExerciseError("That is the sum over the predictions: the loss is their mean (as reduction='mean' "
                            "gives), so that it does not grow with the batch.")
    if torch.allclose(got, F.nll_loss(flat_logits, flat_labels)):
        raise ExerciseError("You averaged minus the raw logits of the right tokens: the loss needs their "
                            "*log-probabilities*, the logits after a log-softmax over the vocabulary. F.cross_entropy "
                            "applies it itself (F.nll_loss does not).")
    if torch.allclose(got, F.nll_loss(flat_logits.softmax(-1), flat_labels)) or torch.allclose(
            got, -flat_logits.softmax(-1).gather(1, flat_labels[:, None]).mean()):
        raise ExerciseError("The loss is the mean of minus the *log*-probability of each right token; you averaged "
                            "minus the probabilities themselves (softmax with no log).")
    if torch.allclose(got, F.cross_entropy(flat_logits.softmax(-1), flat_labels)):
        raise ExerciseError("A softmax before F.cross_entropy: cross_entropy takes the raw logits and applies the "
                            "log-softmax itself, so yours was normalised twice.")
    wrong_axis = torch.log_softmax(logits[:, :-1], dim=1)  # over the positions, not the vocabulary
    if torch.allclose(got, -wrong_axis.gather(-1, ids[:, 1:, None]).mean()):
        raise ExerciseError("The log-softmax ran over dimension 1, the positions: each position's scores must become "
                            "probabilities over the vocabulary, the last dimension (dim=-1).")
    if torch.allclose(got, F.cross_entropy(logits[:, 1:].reshape(-1, 11), ids[:, :-1].reshape(-1))):
        raise ExerciseError("Shifted the wrong way: you score each position against the token *before* it. Position "
                            "i's logits predict the token at i + 1.")
    if torch.allclose(got, -want, atol=1e-5):
        raise ExerciseError("Right size, wrong sign: the loss is *minus* the mean log-probability of each next token "
                            "(log-probabilities are negative, so the loss is positive).")
    if torch.allclose(got, F.cross_entropy(logits.reshape(-1, 11), ids.roll(-1, dims=1).reshape(-1))):
        raise ExerciseError("roll wraps around: the last position's logits were scored against the window's *first* "
                            "token. The last position has no next token in the window, so it has nothing to be scored "
                            "against.")
    if len(ids) > 1 and torch.allclose(got, F.cross_entropy(logits[:-1].reshape(-1, 11), ids[1:].reshape(-1))):
        raise ExerciseError("The shift went along the batch: you scored window w's logits against window w + 1's "
                            "tokens. logits is (windows, positions, vocabulary) and ids (windows, positions): the "
                            "next token is the next *position* of the same window, so shift the second axis and "
                            "keep every window.")
    per_window = F.cross_entropy(flat_logits, flat_labels, reduction="none").view(len(ids), -1).sum(1)
    if torch.allclose(got, per_window.mean()):
        raise ExerciseError("That is each window's *sum* of losses, averaged over the windows: the loss is the mean "
                            "over every prediction (a sum grows with the window's length).")
    if not torch.allclose(got, want, atol=1e-5):
        raise ExerciseError(f"Not the mean next-token cross-entropy yet: expected {want.item():.4f}, got "
                            f"{got.item():.4f} (logits of shape {tuple(logits.shape)}). Check in turn: which logits "
                            "have a next token to predict, which tokens are predicted, that both are flattened alike, "
                            "and that the loss is the mean.")
    _ok("Every position but the last predicts its successor: n - 1 losses per window of n, against about 15% of n for "
        "MLM.")
