"""The commands: wiring only, each a `python -m mlm_lib.experiments.NAME` with its own --help.

pretrain     train the course's reference model and write its log (`--config smoke` runs in seconds)
curriculum   the sequence-length curriculum experiment of notebook 07 (`--preset full|small|smoke`)
bench        training-step throughput against Hugging Face and other peers, on this machine

What they build on lives in the concept modules (`mlm_lib.training`, `mlm_lib.curriculum`, ...); what
they produce for the notebooks is shipped in `mlm_lib/course/assets/`.
"""
