"""Checks for the exercises of notebook 04 (encoder)."""
from __future__ import annotations

import torch

from ...model import BertConfig, BertForMLM, Embeddings

from ._common import ExerciseError, _call, _ok, _tensor


def check_count_parameters(fn) -> None:
    """fn(config: BertConfig) -> the number of parameters of BertForMLM(config)."""
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
