"""The course's notebooks, and the small papermill parameters the tests run them with."""
from pathlib import Path

# A cell that runs longer than this fails the test instead of hanging it (a kernel can stop answering:
# ipykernel#1554). The slowest cell as written takes about 70 s on 2 idle cores.
CELL_TIMEOUT = 300

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*/[0-9][0-9]_*.ipynb"))

# Small settings and another seed, so CI checks the notebooks are not tied to their stored values.
SMALL = {
    "00_overview": {"seed": 1, "sentence": "Friends, R_mans, countrym_n, lend me your _ars"},
    "01_data_and_tokens": {"seed": 1, "window_length": 32, "batch_size": 2},
    "02_masking": {"seed": 1, "n_check_tokens": 200_000, "passage": "Friends, Romans, countrymen, lend me your ears;"},
    "03_attention": {"seed": 1},  # its checks need the full 500 steps (about 15 s)
    "04_encoder": {"seed": 1, "d_model": 32, "n_heads": 2, "d_ff": 64, "length": 16, "batch_size": 2},
    "05_training": {"seed": 1, "steps": 40, "tokens_per_batch": 512, "length": 32, "d_model": 32, "n_layers": 1,
                    "n_heads": 2, "d_ff": 64, "eval_every": 20, "hand_steps": 10},
    "06_predictions": {"seed": 1, "k": 3, "rate": 0.3, "n_windows": 100, "passage": "Friends, Romans, countrymen"},
    "07_curriculum": {"seed": 1, "steps": 40, "tokens_per_batch": 512, "long": 32, "eval_every": 20},
}
