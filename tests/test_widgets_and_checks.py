"""Widgets are thin views over pure functions (tested here without a browser); checks judge exercises."""
import math

import pytest
import torch

from mlm_lib import checks
from mlm_lib.checks import ExerciseError
from mlm_lib.model import BertConfig, BertForMLM
from mlm_lib.widgets import attention_view, attention_widget, masking_view, masking_widget


def test_masking_view_counts_and_colours(small_tokenizer):
    text = "the quick brown fox jumps over the lazy dog " * 10
    html, counts = masking_view(text, small_tokenizer, select_prob=0.5, seed=3)
    assert sum(counts.values()) == len(text)
    assert 0.35 < 1 - counts["not selected"] / len(text) < 0.65
    assert html.count("<span title=") == len(text) - counts["not selected"]
    assert masking_view(text, small_tokenizer, seed=3) == masking_view(text, small_tokenizer, seed=3)
    with pytest.raises(ValueError, match="Type some text"):
        masking_view("", small_tokenizer)


def test_masking_widget_builds_updates_and_explains_bad_settings(small_tokenizer):
    widget = masking_widget(small_tokenizer, "hello world")
    select, mask = widget.children[1].children
    select.value = 0.9
    mask.value = 1.0  # with random 0.1 this is impossible: shown as a message, not a traceback
    assert select.value == 0.9


def test_attention_view_and_widget(small_tokenizer):
    model = BertForMLM(BertConfig(vocab_size=small_tokenizer.vocab_size, d_model=16, n_layers=2, n_heads=2, d_ff=32,
                                  max_len=32))
    fig = attention_view(model, small_tokenizer, "hello", layer=1, head=1)
    assert len(fig.axes) == 2  # the heat map and its colour bar
    with pytest.raises(ValueError, match="layer must be"):
        attention_view(model, small_tokenizer, "hello", layer=5)
    widget = attention_widget(model, small_tokenizer, "hello")
    widget.children[0].children[1].value = 1


def blank(*args):
    raise NotImplementedError("Exercise: write your answer here")


RIGHT_AND_WRONG = [
    (checks.check_unigram_loss,
     lambda c: -sum(n / sum(c.values()) * math.log(n / sum(c.values())) for n in c.values()),
     lambda c: -sum(n / sum(c.values()) * math.log2(n / sum(c.values())) for n in c.values()), "bits"),
    (checks.check_make_windows, lambda ids, L: ids[: len(ids) // L * L].view(-1, L),
     lambda ids, L: torch.stack([ids[i:i + L] for i in range(0, len(ids) - L + 1)]), "shape"),
    (checks.check_expected_counts, lambda n, s, m, r: (n * s * m, n * s * r, n * s * (1 - m - r)),
     lambda n, s, m, r: (n * m, n * r, n * (1 - m - r)), "select_prob"),
    (checks.check_make_labels, lambda ids, sel: torch.where(sel, ids, torch.full_like(ids, -100)),
     lambda ids, sel: torch.where(sel, ids, torch.zeros_like(ids)), "not 0"),
    (checks.check_attention_weights, lambda q, k: (q @ k.transpose(-2, -1) / q.size(-1) ** 0.5).softmax(-1),
     lambda q, k: (q @ k.transpose(-2, -1)).softmax(-1), "sqrt"),
    (checks.check_causal_mask, lambda n: torch.ones(n, n, dtype=torch.bool).tril(),
     lambda n: torch.ones(n, n, dtype=torch.bool).triu(), "Transposed"),
    (checks.check_count_parameters, lambda c: BertForMLM(c).num_parameters(),
     lambda c: BertForMLM(c).num_parameters() + c.vocab_size * c.d_model, "count it once"),
    (checks.check_embed, lambda e, ids: e(ids),
     lambda e, ids: e.word(ids) + e.position(torch.arange(ids.size(1))) + e.token_type(torch.zeros_like(ids)),
     "LayerNorm"),
]


@pytest.mark.parametrize("check, right, wrong, hint", RIGHT_AND_WRONG, ids=[r[0].__name__ for r in RIGHT_AND_WRONG])
def test_checks_pass_right_reject_wrong_and_blank(check, right, wrong, hint, capsys):
    check(right)
    assert "✓ Correct" in capsys.readouterr().out
    with pytest.raises(ExerciseError, match=hint):
        check(wrong)
    with pytest.raises(ExerciseError, match="Not written yet"):
        check(blank)
