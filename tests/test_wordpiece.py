"""WordPiece (notebook 08) and whole-word masking (notebook 09): the library's contracts."""
import math
from collections import Counter

import pytest
import torch

from mlm_lib import (MASKED, NOT_SELECTED, RANDOM, UNCHANGED, BertConfig, BertForMLM, TrainConfig, WordPieceTokenizer,
                     evaluate, fixed, load_checkpoint, mask_tokens, mask_whole_words, save_checkpoint, train)
from mlm_lib.data import load_corpus, train_val_split
from mlm_lib.wordpiece import bert_normalize, split_words, strip_accents, train_merges, word_pieces

KOREAN = "단순함을 추구하는 것은 어렵다. 한국어 문장도 WordPiece로 나뉜다! 서울에서 부산까지, 기차로 세 시간."
ODD = ("Ça va? naïve café — “quotes” ‘x’ !!!??... \x00\x07 tab\tnew\nline \u200b zero-width \u00a0nbsp "
       + "a" * 150 + " ΣΊΣΥΦΟΣ İstanbul ﬁ ǅ 𝔘𝔫𝔦 🙂🙂 中文字符 [MASK] x[MASK]y [mask] $5+3=8^2 `~| ")


@pytest.fixture(scope="module")
def shakespeare():
    return train_val_split(load_corpus())


def naive_merges(word_counts, n, rule="score", min_frequency=2):
    """The rule as notebook 08 writes it: recount everything after every merge."""
    splits = {w: [w[0]] + ["##" + c for c in w[1:]] for w in word_counts}
    merges = []
    for _ in range(n):
        pairs, units = Counter(), Counter()
        for w, c in word_counts.items():
            s = splits[w]
            for u in s:
                units[u] += c
            for a, b in zip(s, s[1:]):
                pairs[a, b] += c
        cand = {p: f for p, f in pairs.items() if f >= min_frequency}
        if not cand:
            break
        key = ((lambda p: (cand[p] / (units[p[0]] * units[p[1]]), cand[p])) if rule == "score"
               else (lambda p: (cand[p], cand[p])))
        top = max(key(p) for p in cand)
        a, b = min(p for p in cand if key(p) == top)
        merges.append((a, b))
        merged = a + b[2:] if b.startswith("##") else a + b
        for w, s in splits.items():
            out, i = [], 0
            while i < len(s):
                if i + 1 < len(s) and s[i] == a and s[i + 1] == b:
                    out.append(merged)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            splits[w] = out
    return merges


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["score", "frequency"])
def test_fast_training_makes_the_naive_merges(shakespeare, rule):
    counts = Counter(split_words(bert_normalize(shakespeare[0][:120_000])))
    assert train_merges(counts, 200, rule=rule)[1] == naive_merges(counts, 200, rule)


def test_score_and_frequency_pick_different_merges():
    # "t h" is the most frequent pair, but "q ##u": q never occurs without u, so its score is higher
    counts = {"the": 50, "this": 30, "that": 30, "quit": 3, "quiet": 3, "tu": 1}
    score = train_merges(counts, 1, rule="score")[1][0]
    frequency = train_merges(counts, 1, rule="frequency")[1][0]
    assert frequency == ("t", "##h") and score == ("q", "##u")


def test_encoding_is_greedy_longest_match_first():
    vocab = {"un", "##believ", "##able", "u", "##n", "##b", "##e", "##l", "##i", "##v", "##a"}
    assert word_pieces("unbelievable", vocab) == ["un", "##believ", "##able"]
    assert word_pieces("unbelievablex", vocab) is None  # no piece covers "x": the whole word is [UNK]
    assert word_pieces("u" * 101, vocab | {"##u"}) is None  # over 100 characters


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["score", "frequency"])
@pytest.mark.parametrize("lowercase", [False, True])
def test_bert_tokenizer_reads_our_vocab_to_the_same_ids(shakespeare, tmp_path, rule, lowercase):
    """The contract: Hugging Face's BERT tokenizer, given our vocab.txt, gives the same ids on any text.
    (`BertTokenizerFast(vocab_file=...)` ignores the file in transformers 5; `from_pretrained(folder)`
    reads it in 4 and 5.)"""
    from transformers import BertTokenizerFast

    train_text, val_text = shakespeare
    tok = WordPieceTokenizer.train(train_text[:1_500_000] + KOREAN, 3000, rule=rule, lowercase=lowercase)
    tok.save_vocab(tmp_path / "vocab.txt")
    hf = BertTokenizerFast.from_pretrained(tmp_path, do_lower_case=lowercase)
    assert hf.vocab_size == tok.vocab_size
    for text in (val_text[:200_000], KOREAN, ODD, "!!!...,,,;;;", "antidisestablishmentarianism" * 3, "", "   "):
        assert tok.encode(text).tolist() == hf(text, add_special_tokens=False)["input_ids"], text[:40]


def test_word_ids_and_specials():
    tok = WordPieceTokenizer.train("the king is dead , long live the king ! " * 20, 60)
    ids, words = tok.encode("the kingdom [MASK] dead!", return_word_ids=True)
    pieces = tok.tokenize("the kingdom [MASK] dead!")
    assert len(pieces) == len(ids) == len(words)
    assert words[pieces.index("[MASK]")] == -1 and ids[pieces.index("[MASK]")] == tok.mask_id
    ordinary = words[words >= 0]
    assert ordinary[0] == 0 and torch.all(ordinary.diff() >= 0) and torch.all(ordinary.diff() <= 1)
    assert tok.decode(tok.encode("the king is dead")) == "the king is dead"
    assert tok.tokens[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] and tok.special_ids == [0, 1, 2, 3, 4]


def test_training_size_and_bad_input():
    tok = WordPieceTokenizer.train(["to be or not to be", "that is the question"], 40, min_frequency=1)
    assert tok.vocab_size <= 40
    with pytest.raises(ValueError, match="vocab_size"):
        WordPieceTokenizer.train("to be or not to be", 10)
    with pytest.raises(ValueError, match="whole number"):
        WordPieceTokenizer.train("to be", 100.5)
    with pytest.raises(TypeError, match="string or an iterable"):
        WordPieceTokenizer.train(42, 100)
    with pytest.raises(ValueError, match="no word"):
        WordPieceTokenizer.train("   ", 100)
    with pytest.raises(ValueError, match="rule"):
        WordPieceTokenizer.train("to be", 100, rule="bpe")


def test_accent_stripping_decomposes_hangul():
    assert strip_accents("café") == "cafe"
    assert len(strip_accents("한국어")) == 8 and strip_accents("한국어") != "한국어"  # 3 syllables -> 8 jamo
    assert bert_normalize("한국어", lowercase=True) != "한국어"
    assert bert_normalize("한국어", lowercase=True, strip=False) == "한국어"


def test_checkpoint_round_trip(tmp_path):
    tok = WordPieceTokenizer.train("the king is dead , long live the king ! " * 20, 60)
    model = BertForMLM(BertConfig(vocab_size=tok.vocab_size, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_len=32))
    save_checkpoint(tmp_path / "m.pt", model, tok)
    back = load_checkpoint(tmp_path / "m.pt")
    assert back.tokenizer == tok and isinstance(back.tokenizer, WordPieceTokenizer)
    assert WordPieceTokenizer.from_dict(tok.to_dict()) == tok
    assert WordPieceTokenizer.from_vocab_file(tok.save_vocab(tmp_path / "v" / "vocab.txt")) == tok


# ---- whole-word masking ---------------------------------------------------------------------------------

def random_words(n_rows: int, length: int, generator) -> torch.Tensor:
    """Word ids of rows made of words of 1-4 pieces, with [CLS] (-1) first and [SEP] (-1) last."""
    sizes = torch.randint(1, 5, (n_rows, length), generator=generator)
    rows = []
    for r in range(n_rows):
        ids = torch.repeat_interleave(torch.arange(length), sizes[r])[: length - 2]
        rows.append(torch.cat([torch.tensor([-1]), ids, torch.tensor([-1])]))
    return torch.stack(rows)


@pytest.mark.slow
def test_whole_word_masking_exact():
    tok = WordPieceTokenizer([f"t{i}" for i in range(40)] + ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    g = torch.Generator().manual_seed(0)
    words = random_words(2500, 420, g)
    ids = torch.randint(0, 40, words.shape, generator=g)
    ids[words < 0] = tok.cls_id
    ids[:, -1] = tok.sep_id
    before = ids.clone()
    inputs, labels, outcome = mask_whole_words(ids, words, tok, generator=g, return_outcome=True)
    assert torch.equal(ids, before)  # input untouched
    ordinary = words >= 0
    n = int(ordinary.sum())
    assert n > 1_000_000
    selected = outcome != NOT_SELECTED
    assert not selected[~ordinary].any()  # specials never selected
    # a word is selected whole or not at all
    key = torch.arange(len(words))[:, None] * 10_000 + words.clamp(min=0)
    for_word = torch.zeros(int(key.max()) + 1).scatter_reduce(0, key[ordinary], selected[ordinary].float(), "amin",
                                                              include_self=False)
    any_word = torch.zeros(int(key.max()) + 1).scatter_reduce(0, key[ordinary], selected[ordinary].float(), "amax",
                                                             include_self=False)
    assert torch.equal(for_word, any_word)
    # the share of selected pieces: mean 15%, with the variance of word-level draws
    sizes = torch.bincount(key[ordinary])
    sizes = sizes[sizes > 0].double()
    sd = math.sqrt(0.15 * 0.85 * float((sizes ** 2).sum()))
    assert abs(int(selected.sum()) - 0.15 * n) < 5 * sd
    # each selected piece 80 / 10 / 10, as in Google's script
    k = int(selected.sum())
    for code, p in ((MASKED, 0.8), (RANDOM, 0.1), (UNCHANGED, 0.1)):
        assert abs(int((outcome == code).sum()) - p * k) < 5 * math.sqrt(k * p * (1 - p))
    assert torch.all(inputs[outcome == MASKED] == tok.mask_id)
    assert not torch.isin(inputs[outcome == RANDOM], torch.tensor(tok.special_ids)).any()
    assert torch.equal(labels[selected], ids[selected]) and torch.all(labels[~selected] == -100)


def test_whole_word_masking_refuses_bad_input():
    tok = WordPieceTokenizer.train("the king is dead , long live the king ! " * 20, 60)
    ids, words = tok.encode("the king is dead", return_word_ids=True)
    with pytest.raises(ValueError, match="shape"):
        mask_whole_words(ids, words[:-1], tok)
    with pytest.raises(TypeError, match="integer tensor"):
        mask_whole_words(ids, words.float(), tok)
    with pytest.raises(TypeError, match="integer tensor"):
        mask_whole_words(ids, words.tolist(), tok)
    inputs, labels = mask_whole_words(ids[None].repeat(3, 1), words[None].repeat(3, 1), tok,
                                      generator=torch.Generator().manual_seed(0))
    assert inputs.shape == (3, len(ids))


@pytest.mark.slow
def test_huggingface_whole_word_collator_masks_every_selected_piece():
    """What notebook 09 says about Hugging Face: its whole-word masking shows [MASK] at every selected piece."""
    import warnings
    from transformers import BertTokenizerFast, DataCollatorForLanguageModeling

    pytest.importorskip("transformers", minversion="5.0")
    import tempfile
    tok = WordPieceTokenizer.train(load_corpus()[:300_000], 1000, rule="frequency")
    with tempfile.TemporaryDirectory() as folder:
        tok.save_vocab(f"{folder}/vocab.txt")
        hf = BertTokenizerFast.from_pretrained(folder, do_lower_case=False)
    enc = hf(["To be, or not to be, that is the question: whether 'tis nobler in the mind to suffer"] * 400,
             return_offsets_mapping=True, return_special_tokens_mask=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        collator = DataCollatorForLanguageModeling(hf, whole_word_mask=True, seed=0)
        batch = collator([{k: enc[k][i] for k in enc} for i in range(400)])
    chosen = batch["labels"] != -100
    assert chosen.sum() > 500 and torch.all(batch["input_ids"][chosen] == hf.mask_token_id)


@pytest.mark.slow
def test_training_with_whole_words(tmp_path):
    text = load_corpus()[:200_000]
    train_text, val_text = train_val_split(text)
    tok = WordPieceTokenizer.train(train_text, 400, rule="frequency")
    (tr, trw), (va, vaw) = tok.encode(train_text, True), tok.encode(val_text, True)
    torch.manual_seed(0)
    model = BertForMLM(BertConfig(vocab_size=tok.vocab_size, d_model=32, n_layers=1, n_heads=2, d_ff=64, max_len=32))
    config = TrainConfig(steps=4, tokens_per_batch=256, schedule=fixed(32), warmup_steps=1, eval_every=2,
                         eval_windows=8, whole_word=True)
    with pytest.raises(ValueError, match="word ids"):
        train(model, tok, tr, va, config, progress=False)
    history = train(model, tok, tr, va, config, progress=False, train_word_ids=trw, val_word_ids=vaw)
    assert len(history["val_loss"]) == 2
    result = evaluate(model, tok, va, length=32, windows=16, word_ids=vaw, whole_word=True)
    assert 0 <= result["word_accuracy"] <= 1 and result["words"] > 0
    # the same windows masked piece by piece: the plain evaluation
    assert evaluate(model, tok, va, length=32, windows=16)["predictions"] > 0
    assert mask_tokens(tr[:64], tok)[0].shape == (64,)
