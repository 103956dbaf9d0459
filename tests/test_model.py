import pytest
import torch

from mlm_lib.model import BertConfig, BertForMLM, from_hf, to_hf

CONFIG = BertConfig(vocab_size=84, d_model=64, n_layers=3, n_heads=4, d_ff=128, max_len=48, dropout=0.0)


def randomise(model):
    """Non-trivial weights everywhere (LayerNorms included), so a swapped name could not go unnoticed."""
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.3)
    return model


def inputs():
    ids = torch.randint(0, CONFIG.vocab_size, (3, 40))
    mask = torch.ones_like(ids)
    mask[1, 30:] = 0
    types = torch.zeros_like(ids)
    types[:, 20:] = 1
    return ids, mask, types


def test_same_logits_as_hugging_face_both_ways():
    ours = randomise(BertForMLM(CONFIG)).eval()
    ids, mask, types = inputs()
    hf = to_hf(ours)
    with torch.no_grad():
        expected = hf(input_ids=ids, attention_mask=mask, token_type_ids=types).logits
        torch.testing.assert_close(ours(ids, mask, types), expected, atol=1e-5, rtol=1e-5)
        back = from_hf(randomise(hf)).eval()
        expected = hf(input_ids=ids, attention_mask=mask, token_type_ids=types).logits
        torch.testing.assert_close(back(ids, mask, types), expected, atol=1e-5, rtol=1e-5)
    assert back.config == CONFIG
    assert sum(p.numel() for p in hf.parameters()) == ours.num_parameters()


def test_decoder_is_tied_to_word_embeddings():
    model = BertForMLM(CONFIG)
    assert model.head.word_embedding.weight is model.embeddings.word.weight


def test_logits_at_positions_equal_the_full_output_there():
    model = randomise(BertForMLM(CONFIG)).eval()
    ids = torch.randint(0, CONFIG.vocab_size, (2, 20))
    chosen = torch.rand(2, 20) < 0.3
    with torch.no_grad():
        torch.testing.assert_close(model.logits_at(ids, chosen), model(ids)[chosen])
    with pytest.raises(ValueError, match="boolean tensor shaped like ids"):
        model.logits_at(ids, chosen[:, :5])


def test_explicit_attention_model_matches_fused_and_returns_weights():
    model = randomise(BertForMLM(CONFIG)).eval()
    ids, mask, _ = inputs()
    with torch.no_grad():
        fused = model(ids, mask)
        attn = model.attentions(ids, mask)
        for layer in model.layers:
            layer.attention.fused = False
        torch.testing.assert_close(model(ids, mask), fused)
    assert len(attn) == CONFIG.n_layers and attn[0].shape == (3, 4, 40, 40)


def test_pre_ln_runs_but_is_not_hf_bert():
    model = BertForMLM(BertConfig(**{**CONFIG.to_dict(), "pre_ln": True}))
    assert model(torch.randint(0, 84, (2, 10))).shape == (2, 10, 84)
    with pytest.raises(ValueError, match="post-LN"):
        to_hf(model)


@pytest.mark.parametrize("ids, match", [
    (torch.zeros(10, dtype=torch.long), "ids\\[None\\]"),
    (torch.zeros(1, 49, dtype=torch.long), "longer than max_len"),
    (torch.full((1, 5), 84), "tokenizer"),
])
def test_bad_inputs_explained(ids, match):
    with pytest.raises(ValueError, match=match):
        BertForMLM(CONFIG)(ids)


def test_predict_masked_windows_any_text(small_tokenizer):
    from mlm_lib.predict import predict_masked

    model = BertForMLM(BertConfig(vocab_size=small_tokenizer.vocab_size, d_model=16, n_layers=1, n_heads=2,
                                  d_ff=32, max_len=32))
    text = "the quick brown fox jumps over the lazy dog. " * 5   # longer than max_len
    preds = predict_masked(model, small_tokenizer, text, [0, 100, len(text) - 1], k=3, window=16)
    assert [p.position for p in preds] == [0, 100, len(text) - 1]
    assert all(len(p.candidates) == 3 and p.candidates[0][1] >= p.candidates[-1][1] for p in preds)
    assert all(not c.startswith("[") for p in preds for c, _ in p.candidates)  # no special tokens offered
    assert len(predict_masked(model, small_tokenizer, text, select_prob=0.2, seed=1)) > 10
    with pytest.raises(ValueError, match="outside the text"):
        predict_masked(model, small_tokenizer, "abc", [5])
    with pytest.raises(ValueError, match="Type some text"):
        predict_masked(model, small_tokenizer, "", [0])


def test_predict_masked_equals_one_window_per_blank(small_tokenizer):
    """Sharing windows between blanks must give what a window centred on each blank alone gives
    whenever the shared window holds the same characters (here: the text fits in one window)."""
    from mlm_lib.predict import predict_masked

    torch.manual_seed(0)
    model = randomise(BertForMLM(BertConfig(vocab_size=small_tokenizer.vocab_size, d_model=16, n_layers=1,
                                            n_heads=2, d_ff=32, max_len=64, dropout=0.0)))
    text = "the quick brown fox jumps over"
    together = predict_masked(model, small_tokenizer, text, [3, 17, 25], k=4)
    ids = small_tokenizer.encode(text)
    ids[[3, 17, 25]] = small_tokenizer.mask_id
    with torch.no_grad():
        probs = model(ids[None]).softmax(-1)[0]
    for p in together:
        row = probs[p.position].clone()
        row[small_tokenizer.special_ids] = 0
        assert p.candidates[0][0] == small_tokenizer.tokens[int(row.argmax())]
        assert abs(p.candidates[0][1] - float(row.max())) < 1e-5
