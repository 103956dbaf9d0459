"""The setup cell every notebook opens with: seed everything, set the figure size, print the versions."""
from __future__ import annotations

import platform
import random

import matplotlib
import matplotlib.pyplot as plt
import torch


def setup_notebook(seed: int = 0, *, dpi: int = 80) -> None:
    """Seed Python's and torch's random numbers, make figures small enough for a stored notebook, and
    print what this notebook runs on (versions, CPU threads) so a learner can compare with the stored run."""
    import mlm_lib

    random.seed(seed)
    torch.manual_seed(seed)
    plt.rcParams["figure.dpi"] = dpi
    print(f"Python {platform.python_version()} | torch {torch.__version__} | matplotlib {matplotlib.__version__} "
          f"| mlm_lib {mlm_lib.__version__} | {torch.get_num_threads()} CPU threads")
