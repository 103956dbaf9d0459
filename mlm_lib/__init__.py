"""mlm_lib: the small library the MLM notebooks build, one module per concept.

data (corpus, tokenizer, windows) -> masking (BERT's 15% and 80/10/10) -> attention -> model (BERT)
-> training (loss, loop, checkpoints) -> curriculum (sequence-length schedules) -> viz (plots).
"""
__version__ = "0.1.0"
