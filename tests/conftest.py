import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from mlm_lib.data import CharTokenizer, load_corpus, train_val_split  # noqa: E402


def pytest_configure(config):
    """`make test` runs pytest-xdist's workers, one per core (`-n auto`): each worker is pinned to its own cores, so
    that it, its torch threads and every process it starts (a notebook's kernel, a command's smoke run) share no
    core with another worker. A kernel then counts 1 usable CPU and sets 1 thread (mlm_lib.course.setup), as a
    learner's notebook does on a busy machine (where 2 threads ran 2.5x slower than 1: setup's docstring).
    Outside xdist (`pytest tests/...`), nothing changes."""
    worker, workers = os.environ.get("PYTEST_XDIST_WORKER"), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if not worker or not hasattr(os, "sched_setaffinity"):
        return
    cpus = sorted(os.sched_getaffinity(0))
    if workers <= len(cpus):
        mine = cpus[int(worker.removeprefix("gw")) % workers::workers]
        os.sched_setaffinity(0, mine)
        torch.set_num_threads(len(mine))


# the slowest files, longest first (`make test --durations`): started first, so that under xdist no worker is
# left running one of them alone at the end while the other waits (the student copies' test took 332 s of one core)
HEAVY_FIRST = ("tests/test_lab_environment.py", "notebooks/part1_mlm_from_scratch/07_curriculum.ipynb",
               "tests/test_gpu.py", "notebooks/part3_why_pretrain/11_fine_tuning.ipynb",
               "notebooks/part1_mlm_from_scratch/05_training.ipynb", "tests/test_distributed.py",
               "notebooks/part3_why_pretrain/13_mlm_vs_ltr.ipynb")


def pytest_collection_modifyitems(config, items):
    """Whole files move, in the order above, before the rest: a file's own tests (a notebook's cells) keep their
    order, and the rest keep theirs (a stable sort)."""
    def rank(item):
        path = item.nodeid.split("::")[0]
        return HEAVY_FIRST.index(path) if path in HEAVY_FIRST else len(HEAVY_FIRST)
    items.sort(key=rank)


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


@pytest.fixture
def make_run():
    """A fake curriculum run (as `mlm_lib.curriculum.run_schedule` returns it) with the given
    held-out losses, one evaluation per 100 training tokens: for tests of the summary and the views."""
    def make(label, schedule, losses, seed=0):
        tokens = [100 * (i + 1) for i in range(len(losses))]
        return {"label": label, "schedule": schedule.to_dict(), "seed": seed,
                "history": {"step": list(range(1, len(losses) + 1)), "tokens": tokens, "seconds": tokens,
                            "eval_tokens": tokens, "eval_seconds": [t / 100 for t in tokens], "val_loss": losses,
                            "val_accuracy": [0.5] * len(losses)}}
    return make
