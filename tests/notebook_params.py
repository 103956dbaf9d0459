"""The course's notebooks, and the small papermill parameters the tests run them with."""
import json
from pathlib import Path

from mlm_lib.course.setup import usable_cpus
from mlm_lib.course.student import course_notebooks

# A cell that runs longer than this fails the test instead of hanging it (a kernel can stop answering:
# ipykernel#1554). The slowest cell as written takes about 70 s on 2 idle cores.
CELL_TIMEOUT = 300



def at_once() -> int:
    """How many notebook runs a test starts at once, one torch thread each: one per core it may use, at most 2 (the
    course's CI machine has 2). Under `make test` each pytest worker is pinned to one core (conftest.py): 1."""
    return max(1, min(2, usable_cpus()))


NOTEBOOKS = course_notebooks(Path(__file__).resolve().parents[1] / "notebooks")

# Small settings and another seed, so CI checks the notebooks are not tied to their stored values.
SMALL = {
    "00_overview": {"seed": 1, "sentence": "Friends, R_mans, countrym_n, lend me your _ars"},
    "01_data_and_tokens": {"seed": 1, "window_length": 32, "batch_size": 2},
    "02_masking": {"seed": 1, "n_check_tokens": 200_000, "passage": "Friends, Romans, countrymen, lend me your ears;"},
    "03_attention": {"seed": 1},  # its checks need the full 500 steps (about 15 s)
    "04_encoder": {"seed": 1, "d_model": 32, "n_heads": 2, "d_ff": 64, "length": 16, "batch_size": 2},
    "05_training": {"seed": 1, "steps": 40, "tokens_per_batch": 512, "length": 32, "d_model": 32, "n_layers": 1,
                    "n_heads": 2, "d_ff": 64, "eval_every": 20, "hand_steps": 10},
    "06_predictions": {"seed": 1, "k": 3, "select_prob": 0.3, "n_windows": 100, "passage": "Friends, Romans, countrymen"},
    "07_curriculum": {"seed": 1, "steps": 40, "tokens_per_batch": 512, "long": 32, "eval_every": 20},
    "08_wordpiece": {"seed": 1, "vocab_size": 1000, "sweep_sizes": [300, 1000]},
    "09_whole_word_masking": {"seed": 1, "n_check_tokens": 200_000, "fallback_steps": 20,
                              "passage": "Friends, Romans, countrymen, lend me your ears;"},
    "10_sentence_pairs_and_nsp": {"seed": 1, "max_len": 64, "vocab_size": 1000},
    "11_fine_tuning": {"seed": 1, "budget": 20, "steps": 5},
    "12_hugging_face": {"seed": 1, "fine_tune_steps": 3, "text": "Friends, Romans, countrymen"},
    "13_mlm_vs_ltr": {"seed": 1, "steps": 10},
    "14_how_fast": {"seed": 1, "steps": 4},
    "15_electra": {"seed": 1, "diagnosis_steps": 20},
    "16_modern_encoder": {"seed": 1, "d_head": 8},
}

# Another language and script, for the "bring your own corpus" runs: a short Korean text written for the
# tests (no download), repeated to about 11,000 characters.
KOREAN_TEXT = """언어 모델은 문장 속의 빈칸을 채우면서 배운다. 가려진 글자를 맞히려면 앞뒤의 글자를 함께 보아야 한다.
처음에는 자주 나오는 글자만 고르지만, 조금 지나면 이웃한 글자에서 답을 찾는다.
책을 천천히 읽는 사람은 모르는 낱말을 만나도 앞뒤 문맥으로 뜻을 짐작한다.
우리는 작은 컴퓨터에서도 이 과정을 처음부터 끝까지 직접 만들어 볼 수 있다.
바람이 부는 저녁에 아이들은 마당에서 공을 차고, 어른들은 이야기를 나눈다.
오늘 배운 것을 내일 다시 써 보면, 손에 익어서 더 쉽게 떠오른다.
""" * 40
# what each notebook needs besides `corpus` to run on it: text in its vocabulary, a model trained on it
KOREAN = {
    "00_overview": {"sentence": "언어 모델은 빈칸을 _우면서 배운다."},
    "02_masking": {"passage": "가려진 글자를 맞히려면 앞뒤의 글자를 함께 보아야 한다."},
    "03_attention": {"sentence": "처음에는 자주 나오는 글자만 고른다."},
    "06_predictions": {"passage": "책을 천천히 읽는 사람은 모르는 낱말을 만나도"},
    "09_whole_word_masking": {"passage": "가려진 글자를 맞히려면 앞뒤의 글자를 함께 보아야 한다."},
    "12_hugging_face": {"text": "언어 모델은 문장 속의 빈칸을 채우면서 배운다."},
}


def with_small_parameters(path: Path, target: Path) -> None:
    """A copy of the notebook whose parameters cell ends with the small settings (as papermill would set them)."""
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
    cell["source"] = "".join(cell["source"]) + "\n" + "\n".join(f"{k} = {v!r}" for k, v in SMALL[path.stem].items())
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(nb))
