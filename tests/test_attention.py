import pytest
import torch
import torch.nn.functional as F

from mlm_lib.attention import MultiHeadAttention, padding_bias, scaled_dot_product_attention


@pytest.mark.parametrize("padded", [False, True])
def test_explicit_attention_equals_torch(padded):
    q, k, v = (torch.randn(3, 4, 10, 16) for _ in range(3))
    mask = torch.ones(3, 10, dtype=torch.long)
    if padded:
        mask[0, 6:] = 0
        mask[2, 3:] = 0
    bias = padding_bias(mask) if padded else None
    ours, weights = scaled_dot_product_attention(q, k, v, bias)
    torch.testing.assert_close(ours, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 4, 10))
    if padded:
        assert torch.all(weights[0, :, :, 6:] == 0) and torch.all(weights[2, :, :, 3:] == 0)


def test_multi_head_fused_and_explicit_agree():
    mha = MultiHeadAttention(32, 4).eval()
    x = torch.randn(2, 12, 32)
    mask = torch.ones(2, 12, dtype=torch.long)
    mask[1, 8:] = 0
    bias = padding_bias(mask)
    fused = mha(x, bias)
    mha.fused = False
    explicit, weights = mha(x, bias, return_weights=True)
    torch.testing.assert_close(fused, explicit)
    assert weights.shape == (2, 4, 12, 12)


def test_heads_must_divide_width():
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(30, 4)
