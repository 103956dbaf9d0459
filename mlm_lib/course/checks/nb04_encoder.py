"""Checks for the exercises of notebook 04 (encoder)."""
from __future__ import annotations

import contextlib
import dataclasses
import itertools
import numbers
import re

import torch

from ...model import BertConfig, BertForMLM, Embeddings
from ._common import _none_message, ExerciseError, _call, _ok, _source, _tensor

FIELDS = ("vocab_size, d_model, n_layers, n_heads, d_ff, max_len, type_vocab_size and pre_ln (print(config) shows more: "
          "switches later notebooks use, at their defaults here)")


def _config_hint(err):
    if isinstance(err, AttributeError):
        return f"BertConfig's fields are {FIELDS}."
    return None


@contextlib.contextmanager
def _no_models():
    """While active, note every course module built (the learner's function should build none)."""
    built = []
    original = torch.nn.Module.__init__

    def noting(self, *args, **kwargs):
        if type(self).__module__.startswith("mlm_lib.model"):
            built.append(type(self).__name__)
        original(self, *args, **kwargs)

    torch.nn.Module.__init__ = noting
    try:
        yield built
    finally:
        torch.nn.Module.__init__ = original


def _count_slips(config) -> dict[str, tuple[int, str]]:
    """{slip: (what that slip counts for `config`, what to tell the learner)}, the counts read from models."""
    d, layers = config.d_model, config.n_layers
    norms = 2 + 2 * layers + (1 if config.pre_ln else 0)  # embeddings, 2 per layer, head, final with pre-LN
    right = BertForMLM(config).num_parameters()
    slips = {
        "untied": (right + config.vocab_size * d, "the decoder shares the word-embedding matrix: count it once"),
        "output bias": (right - config.vocab_size, "the MLM head has an output bias of vocab_size"),
        "positions": (right - config.max_len * d, "the position embeddings are missing: max_len x d_model"),
        # two slips add up to exactly this on every configuration: 2 token types typed in and the embeddings'
        # LayerNorm left out (-2d + (2 - type_vocab_size) d): the hint names both readings
        "types": (right - config.type_vocab_size * d, "the token-type embeddings are missing: type_vocab_size x "
                  "d_model (or two slips that add up to the same: 2 token types typed in instead of "
                  "type_vocab_size, and the embeddings' LayerNorm left out)"),
        "attention biases": (right - 4 * d * layers, "the four attention projections (query, key, value, output) "
                                                     "each have a bias of d_model too"),
        "ffn biases": (right - (config.d_ff + d) * layers, "the two feed-forward layers have biases too, of d_ff "
                                                           "and d_model numbers"),
        "half norms": (right - norms * d, "a LayerNorm has two vectors of d_model, a scale and a shift"),
        "head dense": (right - (d * d + d), "the MLM head starts with a dense layer, d_model x d_model plus a bias"),
        "layer too many": (right + (right - BertForMLM(dataclasses.replace(config, n_layers=layers - 1)).num_parameters()
                                    if layers > 1 else 0),
                           "one encoder layer too many: the model has n_layers of them"),
        "layer too few": (right - (right - BertForMLM(dataclasses.replace(config, n_layers=layers - 1)).num_parameters()
                                   if layers > 1 else 0),
                          "one encoder layer too few: the model has n_layers of them (range(n_layers), not "
                          "n_layers - 1)"),
        # the final norm counted on every configuration: right for pre-LN, 2 x d_model too many for post-LN
        "final norm always": (right + (0 if config.pre_ln else 2 * d),
                              "pre_ln=False has no final LayerNorm: only pre_ln=True adds one after the last layer"),
        "head dense bias": (right - d, "one vector of d_model is missing outside the layers. Three usual ones: the "
                                       "MLM head's dense layer has a bias of d_model; a LayerNorm (after the "
                                       "embeddings, or in the head) has two vectors of d_model, a scale and a shift; "
                                       "the position table has config.max_len rows"),
        "one d_model too many": (right + d, "one vector of d_model too many outside the layers. Count them again: "
                                            "the MLM head's dense bias (one), the LayerNorms after the embeddings "
                                            "and in the head (two vectors each), and the position table's "
                                            "config.max_len rows"),
        "ffn out bias": (right - d * layers, "the feed-forward output layer (d_ff to d_model) has a bias of d_model"),
        "ffn in bias": (right - config.d_ff * layers, "the feed-forward input layer (d_model to d_ff) has a bias of "
                                                     "d_ff"),
        "one norm": (right - 2 * d, "a LayerNorm is missing: 2 x d_model each, one after the embeddings, two per "
                                    "layer, one in the head" + (", and with pre_ln one more after the last layer"
                                                                if config.pre_ln else "")),
        # only pre-LN has the final norm: without it, the count is right for post-LN and 2 x d_model short for pre-LN
        "final norm": (right - 2 * d if config.pre_ln else right,
                       "pre_ln=True adds one more LayerNorm after the last layer (2 x d_model)"),
    }
    for field, usual in (("type_vocab_size", 2), ("d_ff", 4 * d), ("max_len", 512), ("max_len", 128),
                         ("n_layers", 2), ("n_layers", 4), ("vocab_size", 84)):  # 84: the course tokenizer's
        if getattr(config, field) != usual:
            changed = BertForMLM(dataclasses.replace(config, **{field: usual})).num_parameters()
            slips[f"{field}=4 x d_model" if field == "d_ff" else f"{field}={usual}"] = (changed, f"that is the count for {field}={usual}, but this configuration "
                                                  f"has {field}={getattr(config, field)}: read every size from the "
                                                  "configuration")
    return slips


def _formula(config, **fixed) -> int:
    """The parameter count of `config` with some sizes replaced (`fixed`), by the formula (no model built)."""
    size = {name: fixed.get(name, getattr(config, name)) for name in
            ("vocab_size", "d_model", "d_ff", "n_layers", "max_len", "type_vocab_size")}  # no BertConfig: no checks
    d, f = size["d_model"], size["d_ff"]
    layer = 4 * (d * d + d) + (d * f + f) + (f * d + d) + 2 * 2 * d
    return (size["vocab_size"] * d + size["max_len"] * d + size["type_vocab_size"] * d + 2 * d + size["n_layers"] * layer
            + (d * d + d) + 2 * d + size["vocab_size"] + (2 * d if config.pre_ln else 0))


def check_count_parameters(fn) -> None:
    """fn(config: BertConfig) -> the number of parameters of BertForMLM(config)."""
    answers = []
    for kw in ({"d_model": 32, "n_layers": 2, "n_heads": 4, "d_ff": 64, "max_len": 40, "type_vocab_size": 3},
               {"d_model": 48, "n_layers": 3, "n_heads": 6, "d_ff": 200, "max_len": 100, "type_vocab_size": 4},
               {"d_model": 32, "n_layers": 2, "n_heads": 4, "d_ff": 64, "max_len": 40, "type_vocab_size": 3,
                "pre_ln": True}):
        config = BertConfig(vocab_size=61, **kw)
        with _no_models() as built:
            got = _call(fn, config, hint=_config_hint)
        if built:
            raise ExerciseError("Your function built a model (BertForMLM(config) or a part of it) and counted its "
                                "parameters: that is what this check does to grade you. The exercise asks for the "
                                "count from the configuration alone: write it as a formula of d_model, d_ff, "
                                "vocab_size, max_len, ...")
        if isinstance(got, float):
            why = ("`/` always gives a float in Python (d_ff / d_model too); count with `*`, `+` and `//`, or "
                   "int(...) at the end." if _source_has(fn, "/") else "convert it with int(...) at the end.")
            raise ExerciseError(f"Return a whole number (an int), not the float {got!r}: {why}")
        if isinstance(got, numbers.Integral) and not isinstance(got, (int, bool)):
            got = int(got)  # a numpy integer is a whole number too
        if got is None:
            raise ExerciseError(_none_message("the count"))
        if not isinstance(got, int) or isinstance(got, bool):
            raise ExerciseError(f"Return a whole number (an int), not {type(got).__name__} {got!r}.")
        answers.append((config, BertForMLM(config).num_parameters(), got))
    wrong = [(config, expected, got) for config, expected, got in answers if got != expected]
    if not wrong:
        _ok("Your formula matches sum(p.numel() for p in model.parameters()).")
        return
    config, expected, got = wrong[0]
    every = [(_count_slips(c), e, g) for c, e, g in answers]
    # a slip is named only if it gives the learner's number on every configuration the check tried (where a slip
    # cannot happen, the right count): on one configuration several slips can give the same number
    fitting = [key for key in _count_slips(config) if all(s.get(key, (e, ""))[0] == g for s, e, g in every)]
    slips = [_count_slips(config)]
    same = len({got for _, _, got in answers}) == 1  # one number for three configurations: sizes read elsewhere
    rows = {c.max_len - (e - g) // c.d_model for c, e, g in wrong if (e - g) % c.d_model == 0}
    window = next(iter(rows)) if len(rows) == 1 and all((e - g) % c.d_model == 0 for c, e, g in wrong) else None
    only_pre_ln = all(c.pre_ln for c, _, _ in wrong) and any(not c.pre_ln for c, _, _ in answers)
    # a feed-forward of another width than config.d_ff (the notebook's own d_ff, say): (2 d + 1) per unit and layer
    widths = {c.d_ff + (g - e) // ((2 * c.d_model + 1) * c.n_layers) for c, e, g in wrong
              if (g - e) % ((2 * c.d_model + 1) * c.n_layers) == 0}
    ffn_width = next(iter(widths)) if len(widths) == 1 and all(
        (g - e) % ((2 * c.d_model + 1) * c.n_layers) == 0 for c, e, g in wrong) else None
    per_head = all(g - e == 4 * (c.d_model * c.d_model + c.d_model) * (c.n_heads - 1) * c.n_layers
                   for c, e, g in wrong)
    # some sizes read from the notebook's parameters (d_model 64, n_layers 2, d_ff 256, max_len 128, 2 token types)
    # and the rest from config: named if one such mix gives the learner's number on every configuration tried
    notebook = {"d_model": 64, "n_layers": 2, "d_ff": 256, "max_len": 128, "type_vocab_size": 2}
    mixed = None
    for k in range(1, len(notebook) + 1):
        for fields in itertools.combinations(notebook, k):
            if all(_formula(c, **{f: notebook[f] for f in fields}) == g for c, _, g in answers) and any(
                    _formula(c, **{f: notebook[f] for f in fields}) != e for c, e, _ in answers):
                mixed = fields
                break
        if mixed:
            break
    hint = (f"your function returned {got:,} for all three configurations the check tried, so it reads sizes from "
            "elsewhere (the notebook's own d_model, d_ff, ... or fixed numbers): read every size from `config`, "
            "config.d_model, config.d_ff, config.vocab_size and the rest" if same else
            slips[0][fitting[0]][1] if fitting else
            "the four attention projections counted once per head: they are d_model x d_model each, shared by "
            "all the heads (each head reads its own slice of d_model / n_heads columns)" if per_head else
            f"your count has a feed-forward {ffn_width} wide in every layer, but these configurations have d_ff "
            f"{', '.join(str(c.d_ff) for c, _, _ in wrong)}: read d_ff from `config`, not from the notebook"
            if ffn_width and ffn_width > 0 else
            "right on the post-LN configurations, wrong only with pre_ln=True: pre-LN moves each layer's two "
            "LayerNorms before their sublayers (the same count) and adds exactly one more, a final one after the "
            "last layer, of 2 x d_model" if only_pre_ln else
            f"your position table has {window} rows on every configuration: it has one row per position the model "
            "can read, config.max_len, whatever length the windows of a notebook have" if window and 0 < window
            and all(window != c.max_len for c, _, _ in wrong) else
            f"your count reads {', '.join(mixed)} from the notebook ({', '.join(f'{f}={notebook[f]}' for f in mixed)}) "
            "instead of from `config`: read every size from `config`, the configuration the function is given"
            if mixed else
            "count weights and biases of every Linear, 2 x d_model per LayerNorm (embeddings, 2 per layer, head, and "
            "a final one with pre_ln), and the three embedding tables")
    named = ", ".join(f"{k}={getattr(config, k)}" for k in ("vocab_size", "d_model", "n_layers", "n_heads", "d_ff",
                                                              "max_len", "type_vocab_size", "pre_ln"))
    raise ExerciseError(f"For BertConfig({named}) expected {expected:,}, got {got:,} (off by {got - expected:+,}): "
                        f"{hint}.")


def _source_has(fn, text: str) -> bool:
    """Does the answer's source hold `text`? (True where it cannot be read: then the hint keeps its usual words.)"""
    source = _source(fn)
    return source is None or text in source


def _embed_hint(err, ids=None, looked_up=None):
    """`looked_up`: the shape of the indices each table was handed (`_watched` records them), so that a size
    mismatch can name the lookup that made it."""
    if "must be Tensor, not list" in str(err) or "must be Tensor, not range" in str(err):
        return ("a table looks its rows up with a tensor of whole numbers, and one of your lookups is handed a "
                "Python list or range: give every lookup (word, position, token type) a tensor, the positions made "
                "with torch.arange.")
    if "Expected tensor for argument #1 'indices'" in str(err):
        return ("a table is looked up with whole numbers (torch.long): positions made with torch.arange(n) are whole "
                "numbers; a float range or a float dtype is not.")
    if "normalized_shape" in str(err):
        sizes = re.search(r"normalized_shape=\[(\d+)\].*size\s*\[(?:\d+,\s*)*(\d+)\]", str(err))
        if sizes and int(sizes[2]) % 3 == 0 and int(sizes[2]) // 3 == int(sizes[1]):  # three times d_model wide
            return ("the norm met vectors three times d_model wide: the three embeddings are added, not "
                    "concatenated, so each token keeps one d_model-wide vector.")
        if sizes:
            return (f"the LayerNorm was told a width of {sizes[1]}, but each token's vector is {sizes[2]} wide: a "
                    "LayerNorm normalises each vector over its last dimension, d_model (embeddings.norm knows it).")
        return ("the norm met vectors of another width than d_model: the three embeddings are added, not "
                "concatenated, so each token keeps one d_model-wide vector.")
    if "must match the size" in str(err):
        if ids is not None and looked_up:
            batch, length = ids.shape
            fits = {"word": [(batch, length)], "token_type": [(batch, length)],
                    "position": [(length,), (1, length), (batch, length)]}
            for name, shape in looked_up.items():
                if shape not in fits[name]:
                    return (f"embeddings.{name} was looked up with indices of shape {shape}, where ids is "
                            f"{tuple(ids.shape)}: the three parts add up only if each is (batch, length, d_model)"
                            + (", one index per token" if name != "position" else
                               "; a token's position is its place along the second axis of ids (len(ids) is the "
                               "number of windows)") + ".")
            if "position" not in looked_up:  # added as a table, not looked up: embeddings.position.weight
                return ("the position table was not looked up: its positions must be one row per token, (length, "
                        "d_model) or (batch, length, d_model), not the whole table of max_len rows.")
        return ("the three looked-up parts must each be (batch, length, d_model) to add up: print the shape of each "
                "and of the indices you looked it up with, against ids.shape.")
    return None


@contextlib.contextmanager
def _watched(emb, ids, looked_up=None):
    """While active: record calls of the module itself (and in `looked_up` the shape of each table's indices), and
    stop a table looked up past its last row with a message that names the table (torch's own error does not say
    which)."""
    calls = []
    looked_up = {} if looked_up is None else looked_up
    rows = {"word": "token", "position": "position", "token_type": "segment"}

    def guard(name):
        table = getattr(emb, name)

        def hook(module, args):
            index = args[0] if args else None
            if isinstance(index, torch.Tensor):
                looked_up[name] = tuple(index.shape)
            if isinstance(index, torch.Tensor) and index.numel() and not index.is_floating_point() and (
                    int(index.max()) >= table.num_embeddings or int(index.min()) < 0):
                from_ids = name == "position" and index.shape == ids.shape and torch.equal(index, ids)
                raise ExerciseError(f"In the check's small model (a table of {table.num_embeddings} rows, windows of "
                                    f"{ids.size(1)} tokens), embeddings.{name} was looked up with numbers from "
                                    f"{int(index.min())} to {int(index.max())}, but it has one row per {rows[name]}, 0 "
                                    f"to {table.num_embeddings - 1}" + {
                                        "position": (": a token's position is its place in its window, not its id."
                                                     if from_ids else ": a token's position is its place in its "
                                                     f"window, 0 to ids.size(1) - 1 (here {ids.size(1) - 1}): count "
                                                     "from ids, not from a length set elsewhere."),
                                        "token_type": ": it is looked up with each position's segment, 0 or 1.",
                                        "word": "."}[name])
        return table.register_forward_pre_hook(hook)

    handles = [emb.register_forward_hook(lambda module, args, out: calls.append(1))]
    handles += [guard(name) for name in rows]
    try:
        yield calls
    finally:
        for handle in handles:
            handle.remove()


def _embed_case(fn, emb, ids, types) -> None:
    positions = torch.arange(ids.size(1))
    expected = emb(ids, types)
    looked_up = {}
    with _watched(emb, ids, looked_up) as calls:
        got = _call(fn, emb, ids, types, hint=lambda err: _embed_hint(err, ids, looked_up))
    if calls:
        raise ExerciseError("Your function called the module itself, embeddings(...), which does the whole job. "
                            "The exercise asks you to build its output from its parts, the three tables and the "
                            "norm, to see what it does.")
    got = _tensor(got, "the embeddings")
    if got.shape == expected.shape and torch.allclose(got, expected, atol=1e-5):
        return
    candidates = [
        (emb.word(ids) + emb.position(positions) + emb.token_type(types),
         "Missing the LayerNorm at the end: the sum still goes through the module's norm."),
        (emb.norm(emb.word(ids) + emb.token_type(types)),
         "Missing the positions: each token also gets the row of its position in the window."),
        (emb.norm(emb.word(ids) + emb.position(positions) + emb.token_type(torch.zeros_like(ids))),
         "Every position got segment 0: look each position's segment up in token_type_ids."),
        (emb.norm(emb.word(ids) + emb.position(positions)),
         "Missing the token-type embedding: each token also gets the row of its segment."),
        (emb.norm(emb.word(ids)) + emb.norm(emb.position(positions)) + emb.norm(emb.token_type(types)),
         "You normalised each table on its own: BERT adds the three vectors first and normalises their sum once."),
        (emb.norm(emb.word(ids) + emb.position(positions + 1) + emb.token_type(types)),
         "Positions start at 0: the first token reads row 0 of the position table."),
        (torch.nn.functional.layer_norm(emb.word(ids) + emb.position(positions) + emb.token_type(types),
                                        emb.norm.normalized_shape, eps=emb.norm.eps),
         "Normalised, but without the module's own LayerNorm: embeddings.norm has a learned scale and shift (its "
         "weight and bias) that a fresh layer_norm, or a hand-written (x - mean) / std, leaves out. Use "
         "embeddings.norm."),
        (torch.nn.functional.layer_norm(emb.word(ids) + emb.position(positions) + emb.token_type(types),
                                        emb.norm.normalized_shape, emb.norm.weight, emb.norm.bias),
         f"Normalised with layer_norm's default eps, 1e-5: the module's norm has its own, embeddings.norm.eps "
         f"({emb.norm.eps:g}, BERT's), which matters where the vectors are small. Use embeddings.norm itself, or "
         "pass its eps."),
        (emb.norm(emb.word(ids) + emb.position(positions) + emb.token_type(1 - types)),
         "The segments are the other way round: token_type_ids gives each position's own segment (0 for A, 1 for "
         "B); look it up as it is."),
        (emb.norm(emb.word(ids) + emb.position(torch.arange(ids.size(0)))[:, None] + emb.token_type(types)),
         "Each window got one position vector for all its tokens, the window's place in the batch: a token's "
         "position is its place in its window, 0 to length-1 along the second axis of ids."),
    ]
    for wrong, message in candidates:
        if got.shape == wrong.shape and torch.allclose(got, wrong, atol=1e-5):
            raise ExerciseError(message)
    if got.shape[:-1] == expected.shape[:-1] and got.shape[-1] == 3 * expected.shape[-1]:
        raise ExerciseError(f"Your vectors are {got.shape[-1]} wide, three times d_model: the three embeddings "
                            "are added, not concatenated, so each token keeps one d_model-wide vector.")
    if got.shape == expected.shape:
        raise ExerciseError(f"Right shape, {tuple(got.shape)} (batch, length, d_model), but other values: each "
                            "token's vector is the sum of its word's, its position's and its segment's rows, "
                            "normalised once.")
    if got.shape[:-1] == expected.shape[:-1]:
        raise ExerciseError(f"Expected shape {tuple(expected.shape)} (batch, length, d_model), got {tuple(got.shape)}: "
                            f"each token's vector is as wide as the tables of the module you are given "
                            f"({expected.shape[-1]} here). Use its parts, embeddings.word, .position, .token_type "
                            "and .norm, not tables defined elsewhere in the notebook.")
    raise ExerciseError(f"Expected shape {tuple(expected.shape)} (batch, length, d_model), got {tuple(got.shape)}: "
                        "each token gets one vector of d_model numbers.")


def check_embed(fn) -> None:
    """fn(embeddings: mlm_lib.model.Embeddings, ids, token_type_ids) -> the embedding output (dropout off)."""
    torch.manual_seed(0)
    emb = Embeddings(BertConfig(vocab_size=30, d_model=16, max_len=12)).eval()
    with torch.no_grad():
        for p in emb.parameters():
            p.normal_()
        ids = torch.randint(0, 30, (2, 10))
        types = torch.randint(0, 2, (2, 10))
        one_full = torch.randint(0, 30, (1, 12)), torch.tensor([[0] * 5 + [1] * 7])  # one window using every row
        for case_ids, case_types in ((ids, types), one_full):
            _embed_case(fn, emb, case_ids, case_types)
        for table in (emb.word, emb.position, emb.token_type):  # small vectors, as a trained model's can be:
            table.weight.mul_(0.01)                               # there the norm's eps shows
        _embed_case(fn, emb, ids, types)
    _ok("word + position + token type, then LayerNorm.")
