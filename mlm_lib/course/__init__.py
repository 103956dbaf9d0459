"""Course aids: what only the notebooks need, kept apart from the concepts a learner builds.

setup     the first cell of every notebook (seeds, figure size, versions)
checks    the exercises' checks, one module per notebook
widgets   the interactive explorers: thin controls over pure `*_view` functions that tests call directly
viz       plots and coloured text the notebooks and widgets draw
student   student copies of the notebooks, solutions removed (`make student`)
assets    the shipped reference model and experiment results, and their loaders

Course aids import the concept modules (`mlm_lib.masking`, `mlm_lib.model`, ...) and never the commands in
`mlm_lib.experiments`; the concept modules import neither (tests/test_layout.py checks this).
"""
