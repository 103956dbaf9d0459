"""Checks for the notebooks' exercises: each passes a right answer and explains what is wrong otherwise.

A check calls the learner's function on several inputs and compares with the library's answer. A wrong
answer raises `ExerciseError` with a hint aimed at the usual mistake; an unwritten one (still raising
NotImplementedError, as in the student notebooks) says so.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F


class ExerciseError(AssertionError):
    """The answer is not right yet; the message says what to look at."""


def _call(fn, *args):
    if not callable(fn):
        raise ExerciseError(f"Pass your function itself (e.g. check(my_function)), not {type(fn).__name__}.")
    try:
        return fn(*args)
    except NotImplementedError:
        raise ExerciseError("Not written yet: replace `raise NotImplementedError` with your code, run that cell, "
                            "then this one.") from None


def _ok(message: str) -> None:
    print("✓ Correct. " + message)


def _tensor(x, what: str) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise ExerciseError(f"Return a torch tensor for {what}, not {type(x).__name__}.")
    return x


# ---- 01 data and tokens -------------------------------------------------------------------------------

def check_unigram_loss(fn) -> None:
    """fn(counts: dict[str, int]) -> float: the loss in nats of always predicting the frequencies."""
    for counts in ({"a": 3, "b": 1}, {"x": 5, "y": 3, "z": 2, " ": 10}):
        total = sum(counts.values())
        expected = -sum(n / total * math.log(n / total) for n in counts.values())
        got = _call(fn, counts)
        try:
            got = float(got)
        except (TypeError, ValueError):
            raise ExerciseError(f"Return a number, not {type(got).__name__}.") from None
        if math.isclose(got, expected, rel_tol=1e-4):
            continue
        if math.isclose(got, -expected, rel_tol=1e-4):
            raise ExerciseError("Right size, wrong sign: a loss is minus the mean log-probability.")
        if math.isclose(got, expected / math.log(2), rel_tol=1e-4):
            raise ExerciseError("That is in bits (log base 2). PyTorch's losses are in nats: use the natural log.")
        if math.isclose(got, math.log(len(counts)), rel_tol=1e-4):
            raise ExerciseError("That is the uniform guess, ln V. Weight each character's -log p by how often it occurs.")
        raise ExerciseError(f"For counts {counts} expected {expected:.4f} nats, got {got:.4f}. "
                            "Loss = sum over characters of p(c) * -ln p(c), with p(c) = count / total.")
    _ok("The unigram loss is the entropy of the character frequencies.")


def check_make_windows(fn) -> None:
    """fn(ids, length) -> (n, length) tensor of consecutive non-overlapping windows, leftover dropped."""
    for n_ids, length in ((23, 5), (40, 8), (7, 7)):
        ids = torch.arange(100, 100 + n_ids)
        expected = ids[: n_ids // length * length].view(-1, length)
        got = _tensor(_call(fn, ids, length), "the windows")
        if got.shape != expected.shape:
            hint = ("you kept the incomplete last window" if got.shape[0] > expected.shape[0] else "too few windows")
            raise ExerciseError(f"For {n_ids} ids and length {length} expected shape {tuple(expected.shape)}, got "
                                f"{tuple(got.shape)}: {hint}. Drop the {n_ids % length} leftover ids at the end.")
        if not torch.equal(got, expected):
            raise ExerciseError("Right shape, wrong content: window i must hold ids[i*length:(i+1)*length], in order.")
    _ok("ids[: n * length].view(n, length) cuts the text into windows without copying it.")


# ---- 02 masking ---------------------------------------------------------------------------------------

def check_expected_counts(fn) -> None:
    """fn(n_tokens, select_prob, mask_prob, random_prob) -> (n_mask, n_random, n_unchanged) expected."""
    for args in ((1000, 0.15, 0.8, 0.1), (5000, 0.3, 0.5, 0.3)):
        n, s, m, r = args
        expected = (n * s * m, n * s * r, n * s * (1 - m - r))
        got = _call(fn, *args)
        try:
            got = tuple(float(x) for x in got)
        except TypeError:
            raise ExerciseError("Return three numbers: (n_mask, n_random, n_unchanged).") from None
        if len(got) == 3 and all(math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9) for a, b in zip(got, expected)):
            continue
        if len(got) == 3 and math.isclose(got[0], n * m, rel_tol=1e-6):
            raise ExerciseError("Only selected positions are replaced: multiply by select_prob too.")
        raise ExerciseError(f"For {args} expected {tuple(round(x, 3) for x in expected)}, got {got}. The three "
                            "outcomes split the n * select_prob selected positions as m, r and 1 - m - r.")
    _ok("Of 1,000 tokens BERT masks 120, randomises 15 and keeps 15, on average.")


def check_make_labels(fn) -> None:
    """fn(ids, selected) -> labels: the original id where selected, -100 elsewhere; ids untouched."""
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(5, 50, (3, 20), generator=g)
    selected = torch.rand(3, 20, generator=g) < 0.3
    before = ids.clone()
    got = _tensor(_call(fn, ids, selected), "the labels")
    if not torch.equal(ids, before):
        raise ExerciseError("Your function changed `ids` in place: work on a copy (ids.clone() or torch.where).")
    expected = torch.where(selected, ids, torch.full_like(ids, -100))
    if torch.equal(got, expected):
        _ok("cross_entropy skips -100 by default (ignore_index), so only selected positions count.")
        return
    if got.shape == ids.shape and torch.equal(got[~selected], torch.zeros_like(got[~selected])):
        raise ExerciseError("Unselected positions need -100, not 0: id 0 is [PAD], a real class the loss would count.")
    if got.shape == ids.shape and torch.equal(got[selected], torch.full_like(got[selected], -100)):
        raise ExerciseError("The other way round: keep the id where `selected` is True, -100 where it is False.")
    raise ExerciseError("Expected the original id at selected positions and -100 everywhere else (same shape as ids).")


# ---- 03 attention -------------------------------------------------------------------------------------

def check_attention_weights(fn) -> None:
    """fn(q, k) -> softmax(q kᵀ / sqrt(d)) over the keys: (..., n_queries, n_keys)."""
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 5, 16, generator=g) * 2, torch.randn(2, 7, 16, generator=g) * 2
    scores = q @ k.transpose(-2, -1)
    expected = (scores / 4.0).softmax(-1)
    got = _tensor(_call(fn, q, k), "the weights")
    if got.shape != expected.shape:
        raise ExerciseError(f"Expected shape {tuple(expected.shape)} (batch, queries, keys), got {tuple(got.shape)}: "
                            "use k.transpose(-2, -1) so each query meets each key.")
    if torch.allclose(got, expected, atol=1e-5):
        _ok("Each row is a probability distribution over the keys.")
        return
    if torch.allclose(got, scores.softmax(-1), atol=1e-5):
        raise ExerciseError("Forgot the scaling: divide the scores by sqrt(d) (here sqrt(16) = 4) before the softmax.")
    if torch.allclose(got, (scores / 16).softmax(-1), atol=1e-5):
        raise ExerciseError("Divide by sqrt(d), not d.")
    if not torch.allclose(got.sum(-1), torch.ones(2, 5), atol=1e-4):
        raise ExerciseError("Rows do not sum to 1: take the softmax over the last dimension (the keys), dim=-1.")
    raise ExerciseError("Not the expected weights: softmax(q @ k.transpose(-2, -1) / sqrt(d), dim=-1).")


def check_causal_mask(fn) -> None:
    """fn(length) -> bool (length, length), True where query i may attend to key j, i.e. j <= i."""
    for n in (1, 4, 9):
        expected = torch.ones(n, n, dtype=torch.bool).tril()
        got = _tensor(_call(fn, n), "the mask")
        if got.dtype != torch.bool:
            raise ExerciseError(f"Return a boolean tensor (True = may attend), not {got.dtype}.")
        if torch.equal(got, expected):
            continue
        if torch.equal(got, expected.T):
            raise ExerciseError("Transposed: row i is the query, column j the key; a query sees keys j <= i (lower triangle).")
        if torch.equal(got, ~expected):
            raise ExerciseError("Inverted: True must mean 'may attend'.")
        raise ExerciseError(f"For length {n} expected torch.ones(n, n, dtype=torch.bool).tril(), got\n{got.int()}")
    _ok("That is GPT's mask. BERT uses none: every position sees the whole window, in both directions.")


# ---- 04 encoder ---------------------------------------------------------------------------------------

def check_count_parameters(fn) -> None:
    """fn(config: BertConfig) -> the number of parameters of BertForMLM(config)."""
    from .model import BertConfig, BertForMLM

    for kw in ({"d_model": 32, "n_layers": 2, "n_heads": 4, "d_ff": 64, "max_len": 40},
               {"d_model": 48, "n_layers": 3, "n_heads": 6, "d_ff": 200, "max_len": 100, "type_vocab_size": 3}):
        config = BertConfig(vocab_size=61, **kw)
        expected = BertForMLM(config).num_parameters()
        got = _call(fn, config)
        if got == expected:
            continue
        diff = got - expected if isinstance(got, int) else None
        hints = {config.vocab_size * config.d_model: "the decoder shares the word-embedding matrix: count it once",
                 -config.vocab_size: "the MLM head has an output bias of vocab_size",
                 -config.max_len * config.d_model: "position embeddings: max_len x d_model",
                 -config.type_vocab_size * config.d_model: "token-type embeddings: type_vocab_size x d_model"}
        hint = hints.get(diff, "count weights and biases of every Linear, 2 x d_model per LayerNorm "
                               "(embeddings, 2 per layer, head), and the three embedding tables")
        raise ExerciseError(f"For {config} expected {expected:,}, got {got!r} (off by {diff}): {hint}.")
    _ok("Your formula matches sum(p.numel() for p in model.parameters()).")


def check_embed(fn) -> None:
    """fn(embeddings: mlm_lib.model.Embeddings, ids) -> the embedding output (dropout off)."""
    from .model import BertConfig, Embeddings

    torch.manual_seed(0)
    emb = Embeddings(BertConfig(vocab_size=30, d_model=16, max_len=12)).eval()
    with torch.no_grad():
        for p in emb.parameters():
            p.normal_()
        ids = torch.randint(0, 30, (2, 10))
        expected = emb(ids)
        got = _tensor(_call(fn, emb, ids), "the embeddings")
        if got.shape == expected.shape and torch.allclose(got, expected, atol=1e-5):
            _ok("word + position + token type, then LayerNorm.")
            return
        raw = emb.word(ids) + emb.position(torch.arange(10)) + emb.token_type(torch.zeros_like(ids))
        if got.shape == raw.shape and torch.allclose(got, raw, atol=1e-5):
            raise ExerciseError("Missing the LayerNorm at the end: embeddings.norm(...).")
        no_pos = emb.norm(emb.word(ids) + emb.token_type(torch.zeros_like(ids)))
        if got.shape == no_pos.shape and torch.allclose(got, no_pos, atol=1e-5):
            raise ExerciseError("Missing the positions: add embeddings.position(torch.arange(length)).")
        no_type = emb.norm(emb.word(ids) + emb.position(torch.arange(10)))
        if got.shape == no_type.shape and torch.allclose(got, no_type, atol=1e-5):
            raise ExerciseError("Missing the token-type embedding (segment 0 for every position).")
    raise ExerciseError("Expected norm(word(ids) + position(arange(L)) + token_type(zeros)), shape (batch, L, d_model).")


# ---- 00 overview --------------------------------------------------------------------------------------

def check_blank_positions(fn) -> None:
    """fn(text: str) -> the indices of the underscores in `text`, in order."""
    for text in ("To b_ or n_t", "___", "no blanks here", "_a_"):
        expected = [i for i, c in enumerate(text) if c == "_"]
        got = _call(fn, text)
        try:
            got = [int(i) for i in got]
        except (TypeError, ValueError):
            raise ExerciseError(f"Return a list of integer positions, not {type(got).__name__}.") from None
        if got == expected:
            continue
        if got == [i + 1 for i in expected]:
            raise ExerciseError("Off by one: Python counts positions from 0, so the first character is 0.")
        if len(expected) > 1 and got == expected[:1]:
            raise ExerciseError("Only the first blank: str.index finds one; loop over every character.")
        raise ExerciseError(f"For {text!r} expected {expected}, got {got}. Try enumerate(text).")
    _ok("Those are the positions the model will see as [MASK].")


def check_fill_in(fn) -> None:
    """fn(text, positions, guesses) -> text with guesses[i] written at positions[i]."""
    cases = [("To b_ or n_t", [4, 10], ["e", "o"], "To be or not"), ("_a_", [0, 2], ["b", "t"], "bat"),
             ("same", [], [], "same")]
    for text, positions, guesses, expected in cases:
        got = _call(fn, text, positions, guesses)
        if got == expected:
            continue
        if isinstance(got, list):
            raise ExerciseError("Return a string: join the characters back together with ''.join(...).")
        if isinstance(got, str) and len(got) != len(text):
            raise ExerciseError("Replace one character per blank; the text must keep its length.")
        raise ExerciseError(f"fill_in({text!r}, {positions}, {guesses}) should give {expected!r}, got {got!r}.")
    _ok("Strings are immutable: a list of characters, then ''.join, is the usual way.")


# ---- 05 training --------------------------------------------------------------------------------------

def check_masked_loss(fn) -> None:
    """fn(logits (B, L, V), labels (B, L) with -100 where unselected) -> mean cross-entropy at selected positions."""
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 7, 11, generator=g)
    labels = torch.randint(0, 11, (3, 7), generator=g)
    labels[torch.rand(3, 7, generator=g) < 0.6] = -100
    labels[0, 0] = 4
    expected = F.cross_entropy(logits[labels != -100], labels[labels != -100])
    got = _tensor(_call(fn, logits, labels), "the loss")
    if got.numel() == 1 and torch.allclose(got.float().reshape(()), expected, atol=1e-5):
        _ok("Only the selected positions count, averaged over those alone.")
        return
    safe = labels.clamp_min(0)
    everywhere = F.cross_entropy(logits.reshape(-1, 11), safe.reshape(-1))
    if got.numel() == 1 and torch.allclose(got.float().reshape(()), everywhere, atol=1e-5):
        raise ExerciseError("That averages over every position: keep only those whose label is not -100.")
    diluted = F.cross_entropy(logits[labels != -100], labels[labels != -100], reduction="sum") / labels.numel()
    if got.numel() == 1 and torch.allclose(got.float().reshape(()), diluted, atol=1e-5):
        raise ExerciseError("Divide by the number of selected positions, not by all of them.")
    if got.numel() != 1:
        raise ExerciseError(f"Return one number (a 0-d tensor), not shape {tuple(got.shape)}: take the mean.")
    raise ExerciseError(f"Expected {expected.item():.4f}, got {got.item():.4f}. "
                        "F.cross_entropy(logits[chosen], labels[chosen]) with chosen = labels != -100.")


def check_lr_at(fn) -> None:
    """fn(step, warmup_steps, total_steps, base_lr) -> learning rate: linear warm-up, then linear decay to 0."""
    from .training import lr_factor

    for warmup, total, base in ((10, 100, 1e-3), (4, 20, 0.5)):
        for s in (0, 1, warmup - 1, warmup, (warmup + total) // 2, total - 1, total):
            expected = base * lr_factor(s, warmup, total)
            got = _call(fn, s, warmup, total, base)
            try:
                got = float(got)
            except (TypeError, ValueError):
                raise ExerciseError(f"Return a number, not {type(got).__name__}.") from None
            if math.isclose(got, expected, rel_tol=1e-6, abs_tol=1e-12):
                continue
            if s < warmup and math.isclose(got, base * s / warmup, rel_tol=1e-6, abs_tol=1e-12):
                raise ExerciseError("Step 0 would get a zero learning rate: warm up with (step + 1) / warmup_steps.")
            phase = "warm-up" if s < warmup else "decay"
            raise ExerciseError(f"At step {s} (warm-up {warmup}, total {total}, base {base}) expected {expected:.6g}, "
                                f"got {got:.6g}: check the {phase} part. Decay: base * (total - step) / (total - warmup).")
    _ok("Warm-up, then linear decay to zero, as BERT used.")


# ---- 06 predictions -----------------------------------------------------------------------------------

def check_top_k(fn) -> None:
    """fn(logits (V,), tokens: list[str], k) -> [(token, probability)] best first, probabilities from softmax."""
    tokens = list("abcdefgh")
    logits = torch.tensor([0.5, 3.0, -1.0, 2.0, 0.0, 2.5, -2.0, 1.0])
    probs = logits.softmax(-1)
    for k in (3, 1):
        values, indices = probs.topk(k)
        expected = [(tokens[i], float(v)) for v, i in zip(values.tolist(), indices.tolist())]
        got = _call(fn, logits, tokens, k)
        try:
            got = [(str(t), float(p)) for t, p in got]
        except (TypeError, ValueError):
            raise ExerciseError("Return a list of (token, probability) pairs.") from None
        if [t for t, _ in got] == [t for t, _ in expected] and all(
                math.isclose(a, b, rel_tol=1e-4) for (_, a), (_, b) in zip(got, expected)):
            continue
        if [t for t, _ in got] == [t for t, _ in expected]:
            raise ExerciseError("Right tokens, wrong numbers: turn the logits into probabilities with softmax first.")
        if len(got) != k:
            raise ExerciseError(f"Asked for k={k}, got {len(got)} pairs.")
        raise ExerciseError(f"Expected {[(t, round(p, 3)) for t, p in expected]}, got {[(t, round(p, 3)) for t, p in got]}. "
                            "logits.softmax(-1).topk(k) gives values and indices, best first.")
    _ok("These are the bars of the explorer's chart.")


def check_mask_positions(fn) -> None:
    """fn(ids (L,), positions, mask_id) -> a copy of ids with [MASK] at positions (the input left alone)."""
    ids = torch.tensor([7, 8, 9, 10, 11, 12])
    for positions in ([1, 4], [0], []):
        original = ids.clone()
        expected = ids.clone()
        expected[positions] = 4
        got = _tensor(_call(fn, ids, positions, 4), "the masked ids")
        if not torch.equal(ids, original):
            ids.copy_(original)
            raise ExerciseError("Your function overwrote its input: clone the ids first (ids.clone()), "
                                "or the original characters are lost.")
        if got.shape == expected.shape and torch.equal(got, expected):
            continue
        raise ExerciseError(f"For positions {positions} expected {expected.tolist()}, got {got.tolist()}.")
    _ok("The original stays intact, so predictions can be compared with it.")


# ---- 07 curriculum ------------------------------------------------------------------------------------

def check_linear_length(fn) -> None:
    """fn(progress, short, long, until, multiple) -> the linear schedule's window length."""
    from .curriculum import linear

    for short, long, until, multiple in ((16, 128, 0.5, 8), (8, 64, 0.25, 4)):
        schedule = linear(short, long, until=until, multiple=multiple)
        for progress in (0.0, 0.1, until / 2, until * 0.99, until, 0.9, 1.0):
            expected = schedule.length_at(progress)
            got = _call(fn, progress, short, long, until, multiple)
            if got == expected:
                continue
            if progress >= until and got != long:
                raise ExerciseError(f"After progress {until} the length stays at `long` ({long}); got {got} at {progress}.")
            if isinstance(got, int) and got % multiple:
                raise ExerciseError(f"Round down to a multiple of {multiple} (got {got}): int(x) // multiple * multiple.")
            raise ExerciseError(f"At progress {progress} ({short}->{long} by {until}) expected {expected}, got {got!r}. "
                                "short + (long - short) * progress / until, rounded down to a multiple.")
    _ok("The same lengths as mlm_lib.curriculum.linear.")


def check_first_reaching(fn) -> None:
    """fn(tokens: list, losses: list, target) -> tokens at the first evaluation with loss <= target, or None."""
    tokens = [100, 200, 300, 400, 500]
    losses = [3.2, 3.0, 2.6, 2.7, 2.4]
    for target, expected in ((3.0, 200), (2.65, 300), (2.45, 500), (2.0, None), (5.0, 100)):
        got = _call(fn, tokens, losses, target)
        if got == expected:
            continue
        if expected is None:
            raise ExerciseError("When the loss never gets that low, return None (not 0, not the last value).")
        if got == 400 and target == 2.65:
            raise ExerciseError("The first evaluation at or below the target counts, even if the loss goes up again.")
        raise ExerciseError(f"For target {target} expected {expected}, got {got!r}: walk through the evaluations "
                            "in order and return the tokens of the first whose loss <= target.")
    _ok("A lower number means fewer training tokens to the same quality.")


# ---- helper used in the notebooks -------------------------------------------------------------------

def softmax_entropy(scores: torch.Tensor) -> torch.Tensor:
    """Entropy (nats) of softmax(scores) along the last dimension: low = peaked, ln n = uniform."""
    p = F.softmax(scores, -1)
    return -(p * p.clamp_min(1e-12).log()).sum(-1)
