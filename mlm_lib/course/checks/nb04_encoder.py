"""Checks for the exercises of notebook 04 (encoder)."""
from __future__ import annotations

import contextlib

import torch

from ...model import BertConfig, BertForMLM, Embeddings
from ._common import ExerciseError, _call, _ok, _tensor

FIELDS = "vocab_size, d_model, n_layers, n_heads, d_ff, max_len, type_vocab_size and pre_ln"


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


def check_count_parameters(fn) -> None:
    """fn(config: BertConfig) -> the number of parameters of BertForMLM(config)."""
    for kw in ({"d_model": 32, "n_layers": 2, "n_heads": 4, "d_ff": 64, "max_len": 40, "type_vocab_size": 3},
               {"d_model": 48, "n_layers": 3, "n_heads": 6, "d_ff": 200, "max_len": 100, "type_vocab_size": 4},
               {"d_model": 32, "n_layers": 2, "n_heads": 4, "d_ff": 64, "max_len": 40, "type_vocab_size": 3,
                "pre_ln": True}):
        config = BertConfig(vocab_size=61, **kw)
        expected = BertForMLM(config).num_parameters()
        with _no_models() as built:
            got = _call(fn, config, hint=_config_hint)
        if built:
            raise ExerciseError("Your function built a model (BertForMLM(config) or a part of it) and counted its "
                                "parameters: that is what this check does to grade you. The exercise asks for the "
                                "count from the configuration alone: write it as a formula of d_model, d_ff, "
                                "vocab_size, max_len, ...")
        if got == expected:
            continue
        diff = got - expected if isinstance(got, int) else None
        d = config.d_model
        hints = {config.vocab_size * d: "the decoder shares the word-embedding matrix: count it once",
                 -config.vocab_size: "the MLM head has an output bias of vocab_size",
                 -config.max_len * d: "position embeddings: max_len x d_model",
                 -config.type_vocab_size * d: "token-type embeddings: type_vocab_size x d_model",
                 -2 * d: ("pre_ln=True adds one more LayerNorm after the last layer (2 x d_model)" if config.pre_ln
                          else "a LayerNorm is missing: 2 x d_model each, one after the embeddings, two per "
                               "layer, one in the head")}
        hint = hints.get(diff, "count weights and biases of every Linear, 2 x d_model per LayerNorm "
                               "(embeddings, 2 per layer, head, and a final one with pre_ln), and the three "
                               "embedding tables")
        named = ", ".join(f"{k}={getattr(config, k)}" for k in ("vocab_size", "d_model", "n_layers", "d_ff", "max_len",
                                                                  "type_vocab_size", "pre_ln"))
        raise ExerciseError(f"For BertConfig({named}) expected {expected:,}, got {got!r} (off by {diff}): {hint}.")
    _ok("Your formula matches sum(p.numel() for p in model.parameters()).")


def _embed_hint(err):
    text = str(err)
    if isinstance(err, IndexError) and "out of range" in text:
        return ("position embeddings are looked up by *position*, 0 .. length-1 (torch.arange(ids.size(1))), "
                "not by token id.")
    if "must match the size" in text:
        return "ids is (batch, length): the positions are torch.arange(ids.size(1)); len(ids) is the batch size."
    return None


def check_embed(fn) -> None:
    """fn(embeddings: mlm_lib.model.Embeddings, ids, token_type_ids) -> the embedding output (dropout off)."""
    torch.manual_seed(0)
    emb = Embeddings(BertConfig(vocab_size=30, d_model=16, max_len=12)).eval()
    with torch.no_grad():
        for p in emb.parameters():
            p.normal_()
        ids = torch.randint(0, 30, (2, 10))
        types = torch.randint(0, 2, (2, 10))
        positions = torch.arange(10)
        expected = emb(ids, types)
        got = _tensor(_call(fn, emb, ids, types, hint=_embed_hint), "the embeddings")
        if got.shape == expected.shape and torch.allclose(got, expected, atol=1e-5):
            _ok("word + position + token type, then LayerNorm.")
            return
        candidates = [
            (emb.word(ids) + emb.position(positions) + emb.token_type(types),
             "Missing the LayerNorm at the end: embeddings.norm(...)."),
            (emb.norm(emb.word(ids) + emb.token_type(types)),
             "Missing the positions: add embeddings.position(torch.arange(length))."),
            (emb.norm(emb.word(ids) + emb.position(positions) + emb.token_type(torch.zeros_like(ids))),
             "Every position got segment 0: look up embeddings.token_type(token_type_ids)."),
            (emb.norm(emb.word(ids) + emb.position(positions)),
             "Missing the token-type embedding: add embeddings.token_type(token_type_ids)."),
        ]
        candidates += [
            (emb.norm(emb.word(ids)) + emb.norm(emb.position(positions)) + emb.norm(emb.token_type(types)),
             "You normalised each table on its own: BERT adds the three vectors first and normalises their sum once."),
            (emb.norm(emb.word(ids) + emb.position(positions + 1) + emb.token_type(types)),
             "Positions start at 0: the first token reads row 0 of the position table."),
        ]
        for wrong, message in candidates:
            if got.shape == wrong.shape and torch.allclose(got, wrong, atol=1e-5):
                raise ExerciseError(message)
        if got.shape[:-1] == expected.shape[:-1] and got.shape[-1] == 3 * expected.shape[-1]:
            raise ExerciseError(f"Your vectors are {got.shape[-1]} wide, three times d_model: the three embeddings "
                                "are added, not concatenated, so each token keeps one d_model-wide vector.")
    raise ExerciseError(f"Expected shape {tuple(expected.shape)} (batch, L, d_model), got {tuple(got.shape)}, and "
                        "other values: each token's vector is the sum of its word's, its position's and its "
                        "segment's rows, LayerNorm-ed once.")
