import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from mlm_lib.data import CharTokenizer, load_corpus, train_val_split  # noqa: E402


@pytest.fixture(scope="session")
def corpus():
    return load_corpus()


@pytest.fixture(scope="session")
def tokenizer(corpus):
    return CharTokenizer.from_text(corpus)


@pytest.fixture(scope="session")
def split_ids(corpus, tokenizer):
    train, val = train_val_split(corpus, 0.05)
    return tokenizer.encode(train), tokenizer.encode(val)


@pytest.fixture
def small_tokenizer():
    return CharTokenizer.from_text("abcdefghijklmnopqrstuvwxyz .,")


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
