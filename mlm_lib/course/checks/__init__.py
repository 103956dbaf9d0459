"""Checks for the notebooks' exercises, one module per notebook: each passes a right answer and explains
what is wrong otherwise.

A check calls the learner's function on several inputs and compares with the library's answer. A wrong
answer raises `ExerciseError` with a hint aimed at the usual mistake; an unwritten one (still raising
NotImplementedError, as in the student and nbgrader release copies) says so.
"""
from ._common import ExerciseError, show_exercise_errors
from .nb00_overview import check_blank_positions, check_fill_in
from .nb01_data_and_tokens import check_unigram_loss, check_make_windows
from .nb02_masking import check_expected_counts, check_make_labels
from .nb03_attention import check_attention_weights, check_causal_mask, check_merge_heads
from .nb04_encoder import check_count_parameters, check_embed
from .nb05_training import check_masked_loss, check_lr_at
from .nb06_predictions import check_top_k, check_mask_positions
from .nb07_curriculum import check_linear_length, check_first_reaching
from .nb08_wordpiece import check_best_pair, check_encode_word
from .nb09_whole_word_masking import check_select_whole_words, check_share_std, word_level_std
from .nb10_sentence_pairs import check_pair_row, check_speaker_names, check_truncate
from .nb11_fine_tuning import check_mean_pool, check_verse_or_prose
from .nb12_hugging_face import check_hf_name, check_with_mask
from .nb13_mlm_vs_ltr import check_next_token_loss, check_next_token_pair
from .nb14_speedrun import check_newton_schulz, check_takes_muon
from .nb15_electra import check_gumbel_max, check_rtd_loss
from .nb16_modern_encoder import check_geglu, check_rotate, turned_by

show_exercise_errors()  # in a kernel, a failed check shows its message alone even before the setup cell has run

__all__ = [
    "ExerciseError",
    "check_blank_positions",
    "check_fill_in",
    "check_unigram_loss",
    "check_make_windows",
    "check_expected_counts",
    "check_make_labels",
    "check_attention_weights",
    "check_causal_mask",
    "check_merge_heads",
    "check_count_parameters",
    "check_embed",
    "check_masked_loss",
    "check_lr_at",
    "check_top_k",
    "check_mask_positions",
    "check_linear_length",
    "check_first_reaching",
    "check_best_pair",
    "check_encode_word",
    "check_select_whole_words",
    "check_pair_row",
    "check_truncate",
    "check_speaker_names",
    "check_share_std",
    "word_level_std",
    "check_verse_or_prose",
    "check_mean_pool",
    "check_hf_name",
    "check_with_mask",
    "check_next_token_pair",
    "check_next_token_loss",
    "check_newton_schulz",
    "check_takes_muon",
    "check_gumbel_max",
    "check_rtd_loss",
    "check_rotate",
    "check_geglu",
    "turned_by",
]
