"""The course's models as Hugging Face folders: `save_pretrained(model, tokenizer, folder)`.

Taught in notebook 12 (the model in Hugging Face). The folder holds what `transformers` loads offline:
`config.json` and the weights as `model.safetensors` (no pickle: loading runs no code), written by
`transformers`' own `save_pretrained` from the model `model.to_hf` builds, and the tokenizer's files:
a `PreTrainedTokenizerFast` built with the `tokenizers` library that gives the same ids as ours (a test
checks it on Shakespeare and Korean):
* for WordPiece: BERT's normaliser and pre-tokeniser and a WordPiece model (greedy longest match, `##`), as in
  `BertTokenizerFast`;
* for characters: a word-level model whose words are single characters (every character, spaces and line
  breaks included, is split off on its own) and a decoder that joins them without spaces;
with the course's five special tokens. A model is given its input as it was trained: the course pretrains
its MLM models on plain windows of text, so their tokenizer adds nothing; a classifier and a pair model read
`[CLS] A [SEP]` (`[CLS] A [SEP] B [SEP]`, token types 0 and 1, for a pair), and their tokenizer adds those.
`AutoModelForMaskedLM`, `AutoTokenizer`, `pipeline("fill-mask", ...)` and, for a fine-tuned classifier,
`AutoModelForSequenceClassification` and `pipeline("text-classification", ...)` then read the folder.

`max_length` becomes the tokenizer's `model_max_length`: set it to the longest input the model was trained on
(the shipped `shakespeare-char`: 128 characters, all that its position table holds; 64 for
`shakespeare-char-64` and notebook 12's classifier), so that Hugging Face
warns about, or with `truncation=True` cuts, text the model has not learnt to read.
"""
from __future__ import annotations

import numbers
import os
import shutil
import tempfile
from pathlib import Path

from . import electra
from . import model as bert
from .data import CharTokenizer
from .model import BertForMLM
from .wordpiece import WordPieceTokenizer


def to_hf(model):
    """The Hugging Face model holding `model`'s weights, for every model of the course: the BERT family
    (`mlm_lib.model.to_hf`, notebook 04) and ELECTRA's two halves (`ElectraForPreTraining`,
    `ElectraForMaskedLM`; notebook 15). The dispatch lives here, at the top, so that `model` knows nothing of
    what is built on it."""
    if isinstance(model, (electra.ElectraDiscriminator, electra.ElectraGenerator)):
        return model.to_hf()
    return bert.to_hf(model)


def from_hf(hf_model):
    """Our model holding a Hugging Face model's weights: ELECTRA's halves through `mlm_lib.electra`, the BERT
    family through `mlm_lib.model.from_hf`."""
    name = type(hf_model).__name__
    if name.startswith("Electra"):
        return electra.electra_from_hf(hf_model)
    if not name.startswith(("Bert", "ModernBert")):  # GPT-2 and others: refused here, not deep in their config
        raise ValueError(f"{name} is not one of the models the course converts: BertForMaskedLM, BertForPreTraining, "
                         "BertForSequenceClassification, ModernBertForMaskedLM, ElectraForPreTraining and "
                         "ElectraForMaskedLM.")
    return bert.from_hf(hf_model)


def hf_tokenizer(tokenizer, max_length: int | None = None, *, special_tokens: bool = True, token_types: bool = True):
    """A Hugging Face fast tokenizer giving the same ids as `tokenizer` (ours), built with `tokenizers`.

    `special_tokens`: whether a text is read as `[CLS] text [SEP]` (a pair as `[CLS] A [SEP] B [SEP]`), as the
    course's classifiers and pair models were trained; the course pretrains its MLM models on plain windows
    of text, with no `[CLS]` or `[SEP]`, so their tokenizer adds none. `token_types=False` leaves the token-type
    ids out of what it returns, for a model that has none (ModernBERT, notebook 16).
    """
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, numbers.Integral)
                                   or max_length < 3):
        raise ValueError(f"max_length must be a whole number >= 3, got {max_length!r}.")
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(tokenizer.tokens)}
    if isinstance(tokenizer, WordPieceTokenizer):  # BERT's normaliser and pre-tokeniser, greedy longest match
        fast = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
        fast.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                                     strip_accents=None, lowercase=tokenizer.lowercase)
        fast.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        fast.decoder = decoders.WordPiece(prefix="##")
    elif isinstance(tokenizer, CharTokenizer):
        fast = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
        fast.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")  # every character alone
        fast.decoder = decoders.Fuse()  # characters back to text, nothing between them
    else:
        raise TypeError(f"Expected the course's CharTokenizer or WordPieceTokenizer, got {type(tokenizer).__name__}.")
    cls, sep = tokenizer.cls_id, tokenizer.sep_id
    if special_tokens:
        fast.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    else:
        fast.post_processor = processors.TemplateProcessing(single="$A", pair="$A $B:1", special_tokens=[])
    limit = {} if max_length is None else {"model_max_length": int(max_length)}
    return PreTrainedTokenizerFast(tokenizer_object=fast, clean_up_tokenization_spaces=False, unk_token="[UNK]",
                                   model_input_names=["input_ids", "token_type_ids", "attention_mask"] if token_types
                                   else ["input_ids", "attention_mask"],
                                   pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]",
                                   **limit)


def save_pretrained(model, tokenizer, folder, *, max_length: int | None = None, overwrite: bool = False) -> Path:
    """Write `model` (BertForMLM — a ModernBERT when it has all of ModernBERT's changes —, BertForPreTraining or
    BertForSequenceClassification) and its tokenizer as a Hugging Face folder. The folder appears whole or not at all: everything is written to a temporary folder
    beside it first. An existing folder is replaced only with `overwrite=True`."""
    folder = Path(folder)
    for given, part in ((model, "model"), (tokenizer, "tokenizer")):
        if hasattr(given, "model") and hasattr(given, "tokenizer"):  # a Checkpoint (load_model, reference_checkpoint)
            raise TypeError(f"save_pretrained got a checkpoint as its {part}: pass its parts, "
                            "save_pretrained(checkpoint.model, checkpoint.tokenizer, folder).")
    if not hasattr(model, "config"):
        raise TypeError(f"save_pretrained writes one of the course's models (BertForMLM, BertForPreTraining, "
                        f"BertForSequenceClassification), not a {type(model).__name__}.")
    if tokenizer.vocab_size != model.config.vocab_size:
        raise ValueError(f"Tokenizer has {tokenizer.vocab_size} tokens but the model {model.config.vocab_size}: "
                         "they do not belong together.")
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{folder} is a file: give a folder to write the model into.")
    blocked = next((p for p in folder.parents if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        raise ValueError(f"{blocked} is a file, so {folder} cannot be a folder in it: give a folder path.")
    if max_length is not None and not isinstance(max_length, bool) and isinstance(max_length, numbers.Integral) \
            and max_length > model.config.max_len:
        raise ValueError(f"max_length={max_length} is longer than the model's max_len={model.config.max_len}: Hugging "
                         "Face would accept longer texts and fail inside the model. Give at most "
                         f"{model.config.max_len}.")
    if folder.exists() and any(folder.iterdir()) and not overwrite:
        raise FileExistsError(f"{folder} already holds files: choose a new folder, or pass overwrite=True to replace it.")
    hf_tok = hf_tokenizer(tokenizer, max_length, special_tokens=not type(model) is BertForMLM,
                          token_types=bool(model.config.type_vocab_size))
    hf = to_hf(model)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # a bar for one small shard is noise (and stored stderr in a notebook)
    try:
        hf.save_pretrained(tmp)
        hf_tok.save_pretrained(tmp)
        if not (tmp / "model.safetensors").is_file():
            raise RuntimeError(f"transformers did not write model.safetensors (it wrote {sorted(os.listdir(tmp))}).")
        if folder.exists():
            old = folder.with_name(f".{folder.name}.old.{os.getpid()}")
            folder.replace(old)
            tmp.replace(folder)
            shutil.rmtree(old)
        else:
            tmp.replace(folder)
    finally:
        if bars:
            hf_logging.enable_progress_bar()
        if tmp.exists():
            shutil.rmtree(tmp)
    return folder
