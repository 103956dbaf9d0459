import pytest
import torch

from mlm_lib.data import SPECIAL_TOKENS, CharTokenizer, load_corpus, random_windows, train_val_split


def test_default_corpus_is_clean_shakespeare(corpus):
    assert 4_000_000 < len(corpus) < 6_000_000
    assert 70 <= len(set(corpus)) <= 90
    assert "**" not in corpus and "\n#" not in corpus and "_Enter" not in corpus and "*Enter" not in corpus
    assert "HAMLET:\n" in corpus and "To be, or not to be" in corpus


def test_corpus_from_file(tmp_path):
    f = tmp_path / "t.txt"
    f.write_text("Ünïcode text\n", encoding="utf-8")
    assert load_corpus(f) == "Ünïcode text\n"


@pytest.mark.parametrize("content, match", [(b"", "empty"), (b"  \n", "empty"), (b"caf\xe9", "UTF-8")])
def test_corpus_bad_files(tmp_path, content, match):
    f = tmp_path / "bad.txt"
    f.write_bytes(content)
    with pytest.raises(ValueError, match=match):
        load_corpus(f)


def test_corpus_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="No text file"):
        load_corpus(tmp_path / "nope.txt")


def test_split_is_contiguous_and_checked():
    train, val = train_val_split("abcdefghij", 0.2)
    assert (train, val) == ("abcdefgh", "ij")
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError):
            train_val_split("abcdefghij", bad)


def test_tokenizer_specials_and_round_trip(tokenizer, corpus, tmp_path):
    assert tokenizer.tokens[:5] == list(SPECIAL_TOKENS)
    assert tokenizer.special_ids == [0, 1, 2, 3, 4]
    assert (tokenizer.pad_id, tokenizer.unk_id, tokenizer.mask_id) == (0, 1, 4)
    assert tokenizer.vocab_size == 5 + len(set(corpus))
    sample = corpus[:2000]
    assert tokenizer.decode(tokenizer.encode(sample)) == sample
    tokenizer.save(tmp_path / "tok.json")
    assert CharTokenizer.load(tmp_path / "tok.json") == tokenizer


def test_unknown_characters_become_unk(small_tokenizer):
    ids = small_tokenizer.encode("abc€z")
    assert ids.tolist()[3] == small_tokenizer.unk_id
    assert small_tokenizer.decode(ids) == "abc[UNK]z"


def test_tokenizer_rejects_empty_text_and_foreign_json(tmp_path):
    with pytest.raises(ValueError, match="empty"):
        CharTokenizer.from_text("")
    (tmp_path / "x.json").write_text('{"tokens": ["a"]}')
    with pytest.raises(ValueError, match="not a saved CharTokenizer"):
        CharTokenizer.load(tmp_path / "x.json")


def test_random_windows_deterministic_and_in_range():
    ids = torch.arange(1000)
    a = random_windows(ids, 8, 32, torch.Generator().manual_seed(3))
    b = random_windows(ids, 8, 32, torch.Generator().manual_seed(3))
    assert a.shape == (8, 32) and torch.equal(a, b)
    assert torch.equal(a[:, 1:] - a[:, :-1], torch.ones(8, 31, dtype=torch.long))  # contiguous text
    with pytest.raises(ValueError, match="fewer than one window"):
        random_windows(ids[:10], 2, 32)
