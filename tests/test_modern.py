"""ModernBERT's changes as options of the course's model (notebook 16): each runs alone, RoPE is what it claims,
and with all of them on the model equals Hugging Face's ModernBertForMaskedLM weight for weight, both ways."""
import math

import pytest
import torch

from mlm_lib.attention import sliding_window_bias
from mlm_lib.model import MODERN, BertConfig, BertForMLM, from_hf, not_modernbert, to_hf
from mlm_lib.rope import apply_rope, rope_angles, rope_frequencies

# odd sizes on purpose: 3 heads of 8, 5 layers (global: 0 and 3), a window of 6 (3 either side), 37 tokens
ODD = BertConfig(vocab_size=37, d_model=24, n_layers=5, n_heads=3, d_ff=40, max_len=40, dropout=0.0,
                 **{**MODERN, "local_window": 6, "global_every": 3})


def randomise(model):
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.3)
    return model


def batch(config, length=32):
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(1, config.vocab_size, (3, length), generator=g)
    mask = torch.ones_like(ids)
    mask[1, 20:] = 0  # padding at the end of one row
    ids[1, 20:] = config.pad_id
    return ids, mask


@pytest.mark.parametrize("fused_qkv", [True, False])
def test_equal_to_modernbert_both_ways_with_padding_and_local_layers(fused_qkv):
    config = BertConfig(**{**ODD.to_dict(), "fused_qkv": fused_qkv})
    ours = randomise(BertForMLM(config)).eval()
    ids, mask = batch(config)
    real = mask.bool()
    hf = to_hf(ours)
    assert type(hf).__name__ == "ModernBertForMaskedLM"
    assert hf.config.layer_types == ["full_attention", "sliding_attention", "sliding_attention", "full_attention",
                                     "sliding_attention"]
    with torch.no_grad():
        expected = hf(input_ids=ids, attention_mask=mask).logits
        torch.testing.assert_close(ours(ids, mask)[real], expected[real], atol=1e-4, rtol=1e-4)
        back = from_hf(randomise(hf)).eval()
        expected = hf(input_ids=ids, attention_mask=mask).logits
        torch.testing.assert_close(back(ids, mask)[real], expected[real], atol=1e-4, rtol=1e-4)
    assert back.config == BertConfig(**{**config.to_dict(), "fused_qkv": True})
    assert sum(p.numel() for p in hf.parameters()) == ours.num_parameters()


def test_the_local_window_matters_and_is_hugging_faces():
    """A model whose only global layer is the first differs from the same weights all global: the window is real."""
    ours = randomise(BertForMLM(ODD)).eval()
    everywhere = BertForMLM(BertConfig(**{**ODD.to_dict(), "global_every": 1})).eval()
    everywhere.load_state_dict(ours.state_dict())
    ids, _ = batch(ODD)
    with torch.no_grad():
        assert (ours(ids) - everywhere(ids)).abs().max() > 1e-3
    bias = sliding_window_bias(7, 4)[0, 0]
    assert ((bias == 0) == ((torch.arange(7)[:, None] - torch.arange(7)).abs() <= 2)).all()


def test_rope_scores_depend_on_the_distance_only():
    """Rotating q at position m and k at position n gives q·k rotated by m - n: shift both, the score stays."""
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(8, generator=g), torch.randn(8, generator=g)
    cos, sin = rope_angles(40, 8)

    def score(m, n):
        return (apply_rope(q, cos[m], sin[m]) @ apply_rope(k, cos[n], sin[n])).item()

    assert score(5, 2) == pytest.approx(score(25, 22), abs=1e-5)
    assert score(5, 2) != pytest.approx(score(5, 3), abs=1e-3)
    assert apply_rope(q, cos[3], sin[3]).norm().item() == pytest.approx(q.norm().item(), rel=1e-6)  # a rotation keeps lengths
    assert torch.allclose(rope_frequencies(8, 10_000.0), torch.tensor([1.0, 0.1, 0.01, 0.001]))
    with pytest.raises(ValueError, match="even"):
        rope_frequencies(7)


@pytest.mark.parametrize("change", [dict(position="rope"), dict(ffn="geglu", d_ff=344), dict(bias=False),
                                    dict(pre_ln=True, first_layer_norm=False), dict(global_every=3, local_window=32),
                                    dict(fused_qkv=True), MODERN])
def test_each_change_alone_trains_a_step_and_is_no_longer_bert(change):
    config = BertConfig(**{**dict(vocab_size=30, d_model=32, n_layers=4, n_heads=4, d_ff=64, max_len=48, dropout=0.0),
                           **change})
    model = BertForMLM(config)
    ids = torch.randint(5, 30, (2, 48))
    loss = torch.nn.functional.cross_entropy(model(ids).flatten(0, 1), ids.flatten())
    loss.backward()
    assert math.isfinite(loss.item()) and all(p.grad is not None for p in model.parameters())
    if change == dict(fused_qkv=True):  # a layout of the same network: still BERT, and exported as BERT
        assert type(to_hf(model)).__name__ == "BertForMaskedLM"
    elif change is not MODERN:
        with pytest.raises(ValueError, match="cannot be converted"):
            to_hf(model)


def test_bias_free_means_no_bias_but_the_decoders():
    model = BertForMLM(BertConfig(vocab_size=30, d_model=32, n_layers=2, n_heads=4, d_ff=64, **MODERN))
    biases = [n for n, _ in model.named_parameters() if n.endswith("bias")]
    assert biases == ["head.bias"]
    assert not hasattr(model.embeddings, "position") and not hasattr(model.embeddings, "token_type")
    assert isinstance(model.layers[0].attention_norm, torch.nn.Identity)  # ModernBERT skips the first pre-norm


def test_a_rope_model_is_refused_past_its_measured_length_and_has_no_token_types():
    model = BertForMLM(BertConfig(vocab_size=30, d_model=32, n_layers=2, n_heads=4, d_ff=64, max_len=256, **MODERN))
    model.eval()(torch.randint(5, 30, (1, 256)))  # no table: any length up to max_len works...
    model.keep_positions(128)  # ...and max_len is where the course measured it to hold
    with pytest.raises(ValueError, match="longer than max_len=128"):
        model(torch.randint(5, 30, (1, 129)))
    with pytest.raises(ValueError, match="no token types"):
        model(torch.randint(5, 30, (1, 10)), token_type_ids=torch.ones(1, 10, dtype=torch.long))


@pytest.mark.parametrize("bad, match", [
    (dict(position="alibi"), "position must be one of"), (dict(ffn="swiglu"), "ffn must be one of"),
    (dict(first_layer_norm=False), "pre-LN option"), (dict(global_every=0), "global_every"),
    (dict(position="rope", d_model=30, n_heads=10), "must be even"), (dict(rope_theta=1), "rope_theta"),
])
def test_bad_options_are_refused_by_name(bad, match):
    with pytest.raises(ValueError, match=match):
        BertConfig(vocab_size=30, **bad)


def test_a_partly_modern_model_says_what_keeps_it_from_modernbert():
    config = BertConfig(vocab_size=30, d_model=32, n_heads=4, **{**MODERN, "bias": True})
    assert not_modernbert(config) == ["bias=True (ModernBERT: False)"]
    with pytest.raises(ValueError, match="bias=True"):
        to_hf(BertForMLM(config))


@pytest.mark.parametrize("d_head", [15, 0, -2, 2.0])
def test_rope_angles_refuse_a_width_that_has_no_pairs(d_head):
    """Notebook 16's `d_head` parameter reaches rope_angles: an odd, empty, negative or fractional width is refused
    with the reason (the notebook names the parameter), never a torch error from deep inside."""
    from mlm_lib.rope import rope_angles
    with pytest.raises(ValueError, match="even whole number"):
        rope_angles(64, d_head)
