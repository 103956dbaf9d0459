"""mlm_lib: the small library the MLM notebooks build, one module per concept.

Concepts (what a learner builds; none imports `course` or `experiments`), in the order they import each other —
a module imports only modules before it in this list, at the top of its file (tests/test_layout.py checks it):

    data -> wordpiece -> masking -> baselines -> dropout -> rope -> attention -> model -> devices -> predict
    -> schedules -> distributed -> checkpoints -> training -> curriculum -> verdict -> pairs -> ltr -> finetune
    -> muon -> electra -> hf

data (corpus, character tokenizer, windows; 01) and wordpiece (BERT's sub-word tokenizer; 08); masking (15% and
80/10/10; 02; whole words, 09); baselines (what a model must beat; 01, 05, 06); dropout (a faster CPU dropout),
rope (rotary positions; 16) and attention (03); model (BERT, its pretraining and classification heads, the
conversion to and from Hugging Face's BERT; 04); devices (where a model computes, and in what precision; 05);
predict (filling blanks; 06); schedules (the learning rate's and the window length's, as functions of the share
of the budget spent; 05, 07); distributed (torchrun and DDP; 05, §7); checkpoints (05); training (the
loss, the step, the one loop; 05); then what builds on training: curriculum (length curricula as an
experiment; 07), verdict (the one rule that turns two arms' runs, paired by seed, into one word; 07 on),
pairs (sentence pairs, NSP / SOP; 10), ltr (left-to-right; 13), finetune (the verse-or-prose
task; 11), muon (the speedrun's optimiser; 14), electra (replaced-token detection; 15), hf (every model as a
Hugging Face model and folder; 12, 15).

Course aids: `mlm_lib.course` (exercise checks, widgets, plots, student copies, shipped assets).
Commands: `mlm_lib.experiments` (pretrain, curriculum, bench, whole_word, roberta, finetune, mlm_vs_ltr,
scaling, lengths, speedrun, ...), all under one output rule (`mlm_lib.experiments._run`).

The names below are the public API: `from mlm_lib import mask_tokens, BertForMLM, train`.
"""
__version__ = "0.5.0"

from .attention import MultiHeadAttention, causal_bias, padding_bias, scaled_dot_product_attention, softmax_entropy
from .baselines import NeighbourCountModel, NgramNaiveBayes, count_model_baseline, unigram_baseline
from .checkpoints import Checkpoint, load_checkpoint, save_checkpoint
from .curriculum import LengthSchedule, fixed, linear, run_schedule, step_up, summarize, tokens_to_reach
from .data import (SPECIAL_TOKENS, VAL_FRACTION, CharTokenizer, load_corpus, prepare_data, random_windows,
                   train_val_split)
from .verdict import Verdict, verdict
from .masking import (BERT_MASKING, EVAL_SEED, IGNORE_INDEX, MASKED, NOT_SELECTED, OUTCOME_NAMES, RANDOM, UNCHANGED,
                      MaskingConfig, mask_tokens, mask_whole_words)
from .finetune import classify, encode_examples, evaluate_classifier, fine_tune, task_splits, verse_or_prose
from .hf import from_hf, hf_tokenizer, save_pretrained, to_hf
from .ltr import NextToken, evaluate_next_token, next_token_batch
from .model import (MODEL_SIZES, BertConfig, BertEncoder, BertForMLM, BertForPreTraining,
                    BertForSequenceClassification)
from .muon import Muon, MuonAndAdamW, hidden_matrices, newton_schulz
from .pairs import (MaskedPairs, PairStream, evaluate_pairs, load_documents, pretraining_loss, sentence_pairs,
                    split_documents)
from .predict import Prediction, predict_masked
from .training import (MaskedLM, TrainConfig, evaluate, lr_factor, make_optimizer, masked_accuracy, mlm_loss, train,
                       train_step, training_batch, word_mates_accuracy)
from .wordpiece import WordPieceTokenizer, prepare_wordpiece_data

__all__ = [
    "MultiHeadAttention", "causal_bias", "padding_bias", "scaled_dot_product_attention", "softmax_entropy",
    "NeighbourCountModel", "NgramNaiveBayes", "count_model_baseline", "unigram_baseline",
    "Checkpoint", "load_checkpoint", "save_checkpoint",
    "LengthSchedule", "fixed", "linear", "run_schedule", "step_up", "summarize", "tokens_to_reach",
    "SPECIAL_TOKENS", "VAL_FRACTION", "CharTokenizer", "load_corpus", "prepare_data", "random_windows",
    "train_val_split",
    "BERT_MASKING", "EVAL_SEED", "IGNORE_INDEX", "MASKED", "NOT_SELECTED", "OUTCOME_NAMES", "RANDOM", "UNCHANGED",
    "MaskingConfig", "mask_tokens", "mask_whole_words",
    "classify", "encode_examples", "evaluate_classifier", "fine_tune", "task_splits", "verse_or_prose",
    "hf_tokenizer", "save_pretrained", "NextToken", "evaluate_next_token", "next_token_batch",
    "MODEL_SIZES", "BertConfig", "BertEncoder", "BertForMLM", "BertForPreTraining", "BertForSequenceClassification",
    "from_hf", "to_hf",
    "Muon", "MuonAndAdamW", "hidden_matrices", "newton_schulz",
    "MaskedPairs", "PairStream", "evaluate_pairs", "load_documents", "pretraining_loss", "sentence_pairs",
    "split_documents",
    "Prediction", "predict_masked",
    "MaskedLM", "TrainConfig", "evaluate", "lr_factor", "make_optimizer", "masked_accuracy", "mlm_loss", "train", "train_step",
    "training_batch", "word_mates_accuracy", "Verdict", "verdict",
    "WordPieceTokenizer", "prepare_wordpiece_data",
]
