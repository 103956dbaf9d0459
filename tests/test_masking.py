import math

import pytest
import torch

from mlm_lib.masking import IGNORE_INDEX, MASKED, NOT_SELECTED, RANDOM, UNCHANGED, mask_tokens

N_TOKENS = 1_200_000


def within_binomial(count: int, n: int, p: float, sigmas: float = 5.0) -> bool:
    return abs(count - n * p) <= sigmas * math.sqrt(n * p * (1 - p))


@pytest.mark.parametrize("select_prob, mask_prob, random_prob", [(0.15, 0.8, 0.1), (0.3, 0.5, 0.3)])
def test_proportions_match_bert(tokenizer, select_prob, mask_prob, random_prob):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, tokenizer.vocab_size, (N_TOKENS // 400, 400), generator=g)
    ids[:, 0] = tokenizer.cls_id  # some special tokens sprinkled in
    ids[:, -1] = tokenizer.sep_id
    ids[::7, -50:] = tokenizer.pad_id
    ordinary = ~torch.isin(ids, torch.tensor(tokenizer.special_ids))
    inputs, labels, outcome = mask_tokens(ids, tokenizer, select_prob=select_prob, mask_prob=mask_prob,
                                          random_prob=random_prob, generator=g, return_outcome=True)
    n, selected = int(ordinary.sum()), outcome != NOT_SELECTED
    n_sel = int(selected.sum())
    assert n > 1_000_000
    assert within_binomial(n_sel, n, select_prob)
    assert within_binomial(int((outcome == MASKED).sum()), n_sel, mask_prob)
    assert within_binomial(int((outcome == RANDOM).sum()), n_sel, random_prob)
    assert within_binomial(int((outcome == UNCHANGED).sum()), n_sel, 1 - mask_prob - random_prob)
    # the outcomes do what they say
    assert torch.all(inputs[outcome == MASKED] == tokenizer.mask_id)
    assert torch.equal(inputs[outcome == UNCHANGED], ids[outcome == UNCHANGED])
    assert torch.equal(inputs[~selected], ids[~selected])
    # random replacements are ordinary tokens, all of them reachable
    replaced = inputs[outcome == RANDOM]
    assert not torch.isin(replaced, torch.tensor(tokenizer.special_ids)).any()
    assert set(replaced.unique().tolist()) == set(range(5, tokenizer.vocab_size))
    # specials never selected; labels only where selected
    assert not selected[~ordinary].any()
    assert torch.equal(labels[selected], ids[selected])
    assert torch.all(labels[~selected] == IGNORE_INDEX)


def test_input_not_modified_and_any_shape(small_tokenizer):
    ids = torch.randint(5, small_tokenizer.vocab_size, (2, 3, 50))
    before = ids.clone()
    inputs, labels = mask_tokens(ids, small_tokenizer, select_prob=0.5)
    assert torch.equal(ids, before)
    assert inputs.shape == labels.shape == ids.shape
    assert inputs.data_ptr() != ids.data_ptr()


def test_seeded_masking_repeats(small_tokenizer):
    ids = torch.randint(5, small_tokenizer.vocab_size, (4, 64))
    a = mask_tokens(ids, small_tokenizer, generator=torch.Generator().manual_seed(7))
    b = mask_tokens(ids, small_tokenizer, generator=torch.Generator().manual_seed(7))
    assert all(torch.equal(x, y) for x, y in zip(a, b))


def test_edge_probabilities(small_tokenizer):
    ids = torch.randint(5, small_tokenizer.vocab_size, (10, 100))
    inputs, labels = mask_tokens(ids, small_tokenizer, select_prob=0.0)
    assert torch.equal(inputs, ids) and torch.all(labels == IGNORE_INDEX)
    inputs, labels = mask_tokens(ids, small_tokenizer, select_prob=1.0, mask_prob=1.0, random_prob=0.0)
    assert torch.all(inputs == small_tokenizer.mask_id) and torch.equal(labels, ids)


@pytest.mark.parametrize("kwargs, match", [
    ({"select_prob": 1.5}, "select_prob must be a probability"),
    ({"select_prob": -0.1}, "select_prob"),
    ({"mask_prob": 2}, "mask_prob"),
    ({"random_prob": -1}, "random_prob"),
    ({"mask_prob": 0.8, "random_prob": 0.3}, "mask_prob \\+ random_prob"),
])
def test_bad_probabilities_rejected(small_tokenizer, kwargs, match):
    with pytest.raises(ValueError, match=match):
        mask_tokens(torch.tensor([5, 6, 7]), small_tokenizer, **kwargs)


def test_wrong_input_type(small_tokenizer):
    with pytest.raises(TypeError, match="tokenizer.encode"):
        mask_tokens([5, 6, 7], small_tokenizer)
