"""BERT for masked language modelling, small enough to train on a CPU.

Taught in notebook 04 (encoder): embeddings in §1, the encoder layer in §2, the MLM head and the whole
model in §3, the parity with Hugging Face in §5. `BertForPreTraining` (the pooler and the next-sentence
head beside the MLM head, BERT's two objectives) is taught in notebook 10, `BertForSequenceClassification`
(fine-tuning) in notebook 11, the causal mask of a left-to-right model (`causal=True`) in notebook 13 (masked
against left-to-right), narrower embeddings with a projection (`embedding_size`, ELECTRA's generator) in
notebook 15 and ModernBERT's changes (the options after `causal` in `BertConfig`) in notebook 16.

embeddings (word + position + token type, then LayerNorm)
  -> n_layers x [attention -> add & LayerNorm -> feed-forward (GELU) -> add & LayerNorm]   (post-LN)
  -> MLM head: dense -> GELU -> LayerNorm -> decoder whose weight *is* the word-embedding matrix, + bias

Which published BERT: Hugging Face's `BertForMaskedLM` (exact-erf GELU, normal(0, 0.02) initialisation).
`to_hf` / `from_hf` move weights both ways and a test checks the logits agree, so "equal to HF's BERT"
is proved. Google's original TensorFlow code differs in small ways the parity does not cover: it
initialises with a *truncated* normal (std 0.02), uses the tanh approximation of GELU (within 4.7e-4 of
the exact one) and its Adam skips bias correction. `pre_ln=True` gives the pre-LayerNorm variant
(LayerNorm before each sub-layer and once more after the last layer), which trains more stably at high
learning rates but is not BERT.

ModernBERT (Warner et al., 2024) keeps the encoder and changes its parts; each change is an option here, so
that notebook 16 can measure them one at a time: rotary positions instead of a table (`position="rope"`,
`mlm_lib.rope`), a gated feed-forward layer (`ffn="geglu"`), no bias terms (`bias=False`), pre-LN whose first
layer reads the normalised embeddings as they are (`pre_ln=True, first_layer_norm=False`), global attention
in every n-th layer and a sliding window in the others (`global_every`, `local_window`), one fused projection
for queries, keys and values (`fused_qkv`), no token types (`type_vocab_size=0`). With all of them on, the
model equals Hugging Face's `ModernBertForMaskedLM` weight for weight (`to_hf` / `from_hf`, tested).
"""
from __future__ import annotations

import numbers
from dataclasses import asdict, dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn

from .attention import MultiHeadAttention, causal_bias, padding_bias, sliding_window_bias
from .dropout import Dropout
from .rope import rope_angles

POSITIONS = ("learned", "rope")
FEED_FORWARDS = ("gelu", "geglu")


@dataclass
class BertConfig:
    vocab_size: int
    d_model: int = 128        # width of every token's vector ("hidden size")
    n_layers: int = 4
    n_heads: int = 8
    d_ff: int = 512           # width of the feed-forward layer, 4 x d_model in BERT
    max_len: int = 512        # longest sequence the position embeddings cover
    type_vocab_size: int = 2  # segment A / B, for sentence pairs
    dropout: float = 0.1
    layer_norm_eps: float = 1e-12
    pad_id: int = 0
    pre_ln: bool = False
    fused_attention: bool = True
    causal: bool = False      # True: each position sees only itself and those before it (left-to-right; notebook 13)
    embedding_size: int | None = None  # the embeddings' width if not d_model; a projection follows (notebook 15)
    # ModernBERT's changes (notebook 16); the defaults are BERT's
    position: str = "learned"  # "learned": a table of max_len rows; "rope": rotary positions, no table
    rope_theta: float = 160_000.0      # RoPE's base in the global layers (ModernBERT's, at 8,192 tokens)
    local_rope_theta: float = 10_000.0  # ... and in the local (sliding-window) layers
    ffn: str = "gelu"         # "gelu": BERT's feed-forward; "geglu": gelu(x W) * (x V), d_ff wide
    bias: bool = True         # False: no bias in the linear layers and LayerNorms (the MLM decoder keeps its own)
    first_layer_norm: bool = True  # with pre_ln: False lets the first layer read the normalised embeddings as they are
    global_every: int = 1     # layers 0, n, 2n, ... attend to the whole sequence, the others within local_window
    local_window: int = 128   # a local layer's window: each position sees local_window // 2 positions either side
    fused_qkv: bool = False   # one projection for queries, keys and values (ModernBERT's Wqkv)

    def __post_init__(self):
        for name in ("vocab_size", "d_model", "n_layers", "n_heads", "d_ff", "max_len", "type_vocab_size",
                     "global_every", "local_window"):
            value = getattr(self, name)
            smallest = 0 if name in ("n_layers", "type_vocab_size") else 1
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < smallest:
                raise ValueError(f"BertConfig.{name} must be a whole number >= {smallest}, got {value!r}.")
        if self.embedding_size is not None and (isinstance(self.embedding_size, bool) or
                                                not isinstance(self.embedding_size, numbers.Integral) or
                                                self.embedding_size < 1):
            raise ValueError(f"BertConfig.embedding_size must be a whole number >= 1 or None, got {self.embedding_size!r}.")
        if self.position not in POSITIONS:
            raise ValueError(f"BertConfig.position must be one of {POSITIONS}, got {self.position!r}.")
        if self.ffn not in FEED_FORWARDS:
            raise ValueError(f"BertConfig.ffn must be one of {FEED_FORWARDS}, got {self.ffn!r}.")
        for name in ("bias", "first_layer_norm", "fused_qkv", "pre_ln"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"BertConfig.{name} must be True or False, got {getattr(self, name)!r}.")
        if not self.first_layer_norm and not self.pre_ln:
            raise ValueError("first_layer_norm=False is a pre-LN option (the first layer's norm before attention): "
                             "set pre_ln=True too, or leave first_layer_norm at True.")
        if self.position == "rope" and (self.d_model // max(1, self.n_heads)) % 2:
            raise ValueError(f"RoPE turns pairs of numbers: a head's width (d_model / n_heads = "
                             f"{self.d_model // self.n_heads}) must be even.")
        for name in ("rope_theta", "local_rope_theta"):
            if not isinstance(getattr(self, name), numbers.Real) or not getattr(self, name) > 1:
                raise ValueError(f"BertConfig.{name} must be a number > 1, got {getattr(self, name)!r}.")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads}): each head "
                             "takes an equal slice of every token's vector.")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout!r}.")
        if not isinstance(self.causal, bool):
            raise ValueError(f"BertConfig.causal must be True or False, got {self.causal!r}.")
        if not 0 <= self.pad_id < self.vocab_size:
            raise ValueError(f"pad_id {self.pad_id} is not an id of a vocabulary of {self.vocab_size} tokens.")

    @property
    def embedding_width(self) -> int:
        return self.d_model if self.embedding_size is None else self.embedding_size

    def is_global(self, layer: int) -> bool:
        """Whether layer `layer` attends to the whole sequence (else within local_window)."""
        return layer % self.global_every == 0

    def to_dict(self) -> dict:
        return asdict(self)


# Model sizes used in more than one place (the commands, the notebooks, the benchmark), named once.
MODEL_SIZES = {
    # the course's reference model (notebooks 00, 06) and the curriculum experiment (07)
    "course": dict(d_model=128, n_layers=4, n_heads=8, d_ff=512, max_len=128, dropout=0.0),
    # the labml.ai reference page's model, which the course grew from
    "reference-page": dict(d_model=128, n_layers=6, n_heads=8, d_ff=256),
    # seconds-long runs of the commands in the tests
    "smoke": dict(d_model=32, n_layers=1, n_heads=2, d_ff=64, max_len=64, dropout=0.0),
}

# ModernBERT's changes, all together, on the course's sizes (notebook 16): the GeGLU layer's width is 2/3 of
# d_ff (344 for 512), so that its three matrices hold about as many parameters as BERT's two; local layers see
# 16 characters either side (a quarter of the 128 the course trains at; ModernBERT's 128 tokens are an eighth of
# its 1,024-token pretraining length); LayerNorm's epsilon is ModernBERT's.
MODERN = dict(position="rope", ffn="geglu", bias=False, pre_ln=True, first_layer_norm=False, global_every=3,
              local_window=32, fused_qkv=True, type_vocab_size=0, layer_norm_eps=1e-5)
GEGLU_WIDTH = {512: 344}  # BERT's d_ff -> GeGLU's, at about equal parameters (the course's size)


class Embeddings(nn.Module):
    """A token's vector = what it is + where it is + which segment it belongs to, then LayerNorm."""

    def __init__(self, c: BertConfig):
        super().__init__()
        width = c.embedding_width
        self.word = nn.Embedding(c.vocab_size, width, padding_idx=c.pad_id)
        if c.position == "learned":  # with RoPE, positions enter inside attention instead (notebook 16)
            self.position = nn.Embedding(c.max_len, width)
        if c.type_vocab_size:
            self.token_type = nn.Embedding(c.type_vocab_size, width)
        self.norm = nn.LayerNorm(width, eps=c.layer_norm_eps, bias=c.bias)
        self.dropout = Dropout(c.dropout)

    def forward(self, ids, token_type_ids=None):
        # positions 0..L-1 are simply the first L rows of the table; without token types every position
        # is segment 0 (row 0). Slicing instead of looking up saves two gathers and their backward passes.
        x = self.word(ids)
        if hasattr(self, "position"):
            x = x + self.position.weight[: ids.size(1)]
        if hasattr(self, "token_type"):
            x = x + (self.token_type.weight[0] if token_type_ids is None else self.token_type(token_type_ids))
        elif token_type_ids is not None and bool((token_type_ids != 0).any()):
            raise ValueError("This model has no token types (type_vocab_size=0, as ModernBERT): it reads one "
                             "segment; pass no token_type_ids.")
        return self.dropout(self.norm(x))


class EncoderLayer(nn.Module):
    """Attention lets positions exchange information; the feed-forward then works on each one alone."""

    def __init__(self, c: BertConfig, index: int = 0):
        super().__init__()
        self.pre_ln, self.gated, self.is_global = c.pre_ln, c.ffn == "geglu", c.is_global(index)
        self.attention = MultiHeadAttention(c.d_model, c.n_heads, c.dropout, fused=c.fused_attention,
                                            fused_qkv=c.fused_qkv, linear_bias=c.bias)
        if c.pre_ln and index == 0 and not c.first_layer_norm:  # the embeddings were just normalised (ModernBERT)
            self.attention_norm = nn.Identity()
        else:
            self.attention_norm = nn.LayerNorm(c.d_model, eps=c.layer_norm_eps, bias=c.bias)
        self.ff_in = nn.Linear(c.d_model, 2 * c.d_ff if self.gated else c.d_ff, bias=c.bias)
        self.ff_out = nn.Linear(c.d_ff, c.d_model, bias=c.bias)
        self.ff_norm = nn.LayerNorm(c.d_model, eps=c.layer_norm_eps, bias=c.bias)
        self.dropout = Dropout(c.dropout)

    def feed_forward(self, x):
        h = self.ff_in(x)
        if self.gated:  # GeGLU: one half, through GELU, scaled by the other half, position by position
            h, gate = h.chunk(2, dim=-1)
            return self.dropout(self.ff_out(F.gelu(h) * gate))
        return self.dropout(self.ff_out(F.gelu(h)))

    def forward(self, x, bias=None, return_weights: bool = False, rope=None):
        if self.pre_ln:
            a = self.attention(self.attention_norm(x), bias, return_weights, rope)
            attn, weights = a if return_weights else (a, None)
            x = x + self.dropout(attn)
            x = x + self.feed_forward(self.ff_norm(x))
        else:  # post-LN, as in BERT
            a = self.attention(x, bias, return_weights, rope)
            attn, weights = a if return_weights else (a, None)
            x = self.attention_norm(x + self.dropout(attn))
            x = self.ff_norm(x + self.feed_forward(x))
        return (x, weights) if return_weights else x


class MLMHead(nn.Module):
    """Hidden vector -> a score for every token of the vocabulary.

    The decoder reuses the word-embedding matrix (weight tying): a token's input vector and the vector
    its prediction is compared against are the same, which saves vocab x d_model parameters and gives
    rare tokens the gradient signal of both ends.
    """

    def __init__(self, c: BertConfig, word_embedding: nn.Embedding):
        super().__init__()
        self.dense = nn.Linear(c.d_model, c.embedding_width, bias=c.bias)
        self.norm = nn.LayerNorm(c.embedding_width, eps=c.layer_norm_eps, bias=c.bias)
        self.word_embedding = word_embedding  # shared, not a copy
        self.bias = nn.Parameter(torch.zeros(c.vocab_size))

    def forward(self, h):
        h = self.norm(F.gelu(self.dense(h)))
        return F.linear(h, self.word_embedding.weight, self.bias)


class BertEncoder(nn.Module):
    """Embeddings and a stack of encoder layers: what every model of the course shares. The models below add
    their heads: the MLM head (`BertForMLM`), the pooler and NSP head (`BertForPreTraining`), the pooler and a
    classifier (`BertForSequenceClassification`, notebook 11)."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        self.embeddings = Embeddings(config)
        if config.embedding_width != config.d_model:  # narrower embeddings, widened to the layers' width
            self.embed_project = nn.Linear(config.embedding_width, config.d_model)
        self.layers = nn.ModuleList(EncoderLayer(config, i) for i in range(config.n_layers))
        self.final_norm = (nn.LayerNorm(config.d_model, eps=config.layer_norm_eps, bias=config.bias) if config.pre_ln
                           else nn.Identity())

    @staticmethod
    def _init_weights(m):
        """Hugging Face's BERT initialisation: normal(0, 0.02) weights (Google's code truncates the normal at
        two standard deviations), zero biases, LayerNorm at identity, a zero `[PAD]` embedding."""
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)
        if isinstance(m, nn.Embedding) and m.padding_idx is not None:
            with torch.no_grad():
                m.weight[m.padding_idx].zero_()

    def _check(self, ids):
        if ids.dim() != 2:
            raise ValueError(f"Expected ids of shape (batch, length), got {tuple(ids.shape)}: use ids[None] for one sequence.")
        if ids.size(1) > self.config.max_len:
            raise ValueError(f"Sequence of {ids.size(1)} tokens is longer than max_len={self.config.max_len}: cut it into windows.")
        if ids.numel() and (ids.min() < 0 or ids.max() >= self.config.vocab_size):
            raise ValueError(f"Token ids must lie in [0, {self.config.vocab_size}): was the text encoded with this model's tokenizer?")

    def encode(self, ids, attention_mask=None, token_type_ids=None, return_attentions: bool = False):
        """The encoder's output: one vector per position, (batch, length, d_model)."""
        self._check(ids)
        c, length = self.config, ids.size(1)
        x = self.embeddings(ids, token_type_ids)
        if hasattr(self, "embed_project"):
            x = self.embed_project(x)
        bias = padding_bias(attention_mask, x.dtype)
        if c.causal:  # left-to-right: position i may not look at i+1, i+2, ... (notebook 13)
            bias = causal_bias(length, x.dtype, x.device) if bias is None else bias + causal_bias(
                length, x.dtype, x.device)
        biases = {True: bias}  # global layers; local ones see a window too (notebook 16)
        if c.global_every > 1 and c.n_layers > 1:
            window = sliding_window_bias(length, c.local_window, x.dtype, x.device)
            biases[False] = window if bias is None else torch.minimum(bias, window)
        ropes = {True: None, False: None}
        if c.position == "rope":  # the turn of every query and key by its position: global and local bases
            ropes = {True: rope_angles(length, c.d_model // c.n_heads, c.rope_theta, x.device),
                     False: rope_angles(length, c.d_model // c.n_heads, c.local_rope_theta, x.device)}
        attentions = []
        for layer in self.layers:
            layer_bias, rope = biases[layer.is_global], ropes[layer.is_global]
            if return_attentions:
                x, w = layer(x, layer_bias, return_weights=True, rope=rope)
                attentions.append(w)
            else:
                x = layer(x, layer_bias, rope=rope)
        x = self.final_norm(x)
        return (x, attentions) if return_attentions else x

    def attentions(self, ids, attention_mask=None, token_type_ids=None) -> list[torch.Tensor]:
        """Attention weights of every layer, each (batch, heads, length, length), for plots: computed where the
        model is (the inputs are moved there), returned on the CPU."""
        where = next(self.parameters()).device
        moved = [None if t is None else t.to(where) for t in (ids, attention_mask, token_type_ids)]
        return [a.cpu() for a in self.encode(*moved, return_attentions=True)[1]]

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def keep_positions(self, length: int) -> "BertEncoder":
        """Keep the first `length` rows of the position table and drop the rest: the model then refuses
        longer input, with an error that says to cut it into windows (notebook 06).

        A model trained on windows of at most `length` (a curriculum that ends there, notebook 07) never
        trained the rows after it; they keep their random start, and input that reaches them gets silently
        worse answers instead of an error. `python -m mlm_lib.experiments.lengths` measures it; the
        pretraining command keeps only the trained rows. Returns the model itself, changed in place.
        """
        if isinstance(length, bool) or not isinstance(length, numbers.Integral) or not 1 <= length <= self.config.max_len:
            raise ValueError(f"length must be a whole number from 1 to max_len={self.config.max_len}, got {length!r}.")
        if not hasattr(self.embeddings, "position"):  # RoPE: no table; the longest input measured to hold (notebook 16)
            self.config = replace(self.config, max_len=length)
            return self
        table = self.embeddings.position
        kept = nn.Embedding(length, table.embedding_dim, device=table.weight.device, dtype=table.weight.dtype)
        with torch.no_grad():
            kept.weight.copy_(table.weight[:length])
        self.embeddings.position = kept
        self.config = replace(self.config, max_len=length)
        return self

class BertForMLM(BertEncoder):
    """Embeddings, a stack of encoder layers and the MLM head: BERT pretrained by masked-LM alone."""

    def __init__(self, config: BertConfig):
        super().__init__(config)
        self.head = MLMHead(config, self.embeddings.word)
        self.apply(self._init_weights)

    def forward(self, ids, attention_mask=None, token_type_ids=None, positions=None):
        """Logits over the vocabulary at every position: (batch, length, vocab_size); with `positions`,
        at those positions only, as `logits_at` (which is how training calls it: through `forward`, so
        that a DistributedDataParallel wrapper sees the call)."""
        if positions is not None:
            return self.logits_at(ids, positions, attention_mask, token_type_ids)
        return self.head(self.encode(ids, attention_mask, token_type_ids))

    def logits_at(self, ids, positions, attention_mask=None, token_type_ids=None):
        """Logits at the chosen positions only: (n_chosen, vocab_size), rows in reading order.

        `positions` is a boolean tensor shaped like `ids`, e.g. `labels != -100`. The loss needs nothing
        else, and sending only those 15% through the MLM head saves most of the head's work in training
        (taught in notebook 05, §2).
        """
        if not isinstance(positions, torch.Tensor) or positions.dtype != torch.bool or positions.shape != ids.shape:
            raise ValueError("positions must be a boolean tensor shaped like ids (e.g. labels != -100), got "
                             f"{getattr(positions, 'dtype', type(positions).__name__)} of shape "
                             f"{tuple(getattr(positions, 'shape', ()))} for ids of shape {tuple(ids.shape)}.")
        return self.head(self.encode(ids, attention_mask, token_type_ids)[positions])



class BertForPreTraining(BertForMLM):
    """BERT with both of its pretraining objectives: the MLM head, and next-sentence prediction (notebook 10).

    The pooler turns the encoder's vector at `[CLS]` (position 0) into one vector for the whole input
    (dense + tanh); the NSP head scores it as IsNext (0) or NotNext (1), Hugging Face's label order.
    `forward` and `logits_at` still give the MLM logits, so every tool of notebooks 05-09 (evaluation,
    predictions, widgets) takes this model as it is; `pretraining_logits` gives both objectives' logits from
    one pass of the encoder.
    """

    def __init__(self, config: BertConfig):
        super().__init__(config)
        self.pooler = nn.Linear(config.d_model, config.d_model)
        self.nsp_head = nn.Linear(config.d_model, 2)
        for module in (self.pooler, self.nsp_head):
            self._init_weights(module)

    def pool(self, hidden: torch.Tensor) -> torch.Tensor:
        """One vector per sequence: tanh(dense(the vector at [CLS]))."""
        return torch.tanh(self.pooler(hidden[:, 0]))

    def pretraining_logits(self, ids, attention_mask=None, token_type_ids=None, positions=None):
        """(MLM logits, NSP logits): MLM at every position, or at `positions` only (a boolean tensor shaped
        like `ids`, e.g. `labels != -100`), and NSP logits of shape (batch, 2)."""
        if positions is not None and (not isinstance(positions, torch.Tensor) or positions.dtype != torch.bool
                                      or positions.shape != ids.shape):
            raise ValueError("positions must be a boolean tensor shaped like ids (e.g. labels != -100).")
        hidden = self.encode(ids, attention_mask, token_type_ids)
        mlm = self.head(hidden if positions is None else hidden[positions])
        return mlm, self.nsp_head(self.pool(hidden))


POOLINGS = ("cls", "mean")
ENCODER_PARTS = ("embeddings", "embed_project", "layers", "final_norm")  # a state dict's encoder, by first name


class BertForSequenceClassification(BertEncoder):
    """BERT fine-tuned to put a whole text in one of `num_labels` classes (notebook 11, fine-tuning).

    The encoder is the pretrained one; on top sit a pooler (dense + tanh) and a linear classifier, as in
    Hugging Face's `BertForSequenceClassification` (dropout before the classifier). What is pooled:
    * "cls" (BERT's choice): the vector at `[CLS]`, position 0, which attention lets read the whole input;
    * "mean": the average of the vectors of the real (not padding) positions. A left-to-right model must use
      this one: under its causal mask position 0 sees nothing but itself (notebook 13).
    `from_encoder` starts it from a pretrained model: the encoder's weights are copied, the pooler too where
    the source has one (`BertForPreTraining`), and the classifier starts from random weights.
    """

    def __init__(self, config: BertConfig, num_labels: int = 2, pooling: str = "cls", label_names=None):
        super().__init__(config)
        if isinstance(num_labels, bool) or not isinstance(num_labels, numbers.Integral) or num_labels < 2:
            raise ValueError(f"num_labels must be a whole number >= 2 (a classifier chooses between classes), got {num_labels!r}.")
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}.")
        if pooling == "cls" and config.causal:
            raise ValueError("A left-to-right (causal) model's [CLS] at position 0 sees only itself: use pooling='mean'.")
        names = [str(n) for n in label_names] if label_names is not None else [f"LABEL_{i}" for i in range(num_labels)]
        if len(names) != num_labels:
            raise ValueError(f"label_names has {len(names)} names for {num_labels} labels.")
        self.num_labels, self.pooling, self.label_names = int(num_labels), pooling, names
        self.pooler = nn.Linear(config.d_model, config.d_model)
        self.dropout = Dropout(config.dropout)
        self.classifier = nn.Linear(config.d_model, num_labels)
        self.apply(self._init_weights)

    def options(self) -> dict:
        """What a checkpoint must store beside the config to rebuild this model."""
        return {"num_labels": self.num_labels, "pooling": self.pooling, "label_names": list(self.label_names)}

    @classmethod
    def from_encoder(cls, model: BertEncoder, num_labels: int = 2, *, pooling: str = "cls", label_names=None,
                     dropout: float | None = None) -> "BertForSequenceClassification":
        """A classifier whose encoder (and pooler, if `model` has one) holds `model`'s weights, copied.

        `dropout` replaces the source's (BERT fine-tunes with 0.1; the course pretrains with 0).
        """
        if not isinstance(model, BertEncoder):
            raise TypeError(f"from_encoder takes one of the course's models, got {type(model).__name__}.")
        config = BertConfig(**{**model.config.to_dict(), **({} if dropout is None else {"dropout": dropout})})
        new = cls(config, num_labels, pooling, label_names)
        source = model.state_dict()
        shared = {k: v for k, v in source.items() if k.split(".")[0] in (*ENCODER_PARTS, "pooler")}
        missing, unexpected = new.load_state_dict(shared, strict=False)
        if unexpected or any(k.split(".")[0] in ENCODER_PARTS for k in missing):
            raise RuntimeError(f"Encoder weights did not line up: missing {missing}, unexpected {unexpected}.")
        return new.to(next(model.parameters()).device)

    def pool(self, hidden: torch.Tensor, attention_mask=None) -> torch.Tensor:
        """One vector per text: tanh(dense(summary)), the summary being the [CLS] vector or the mean."""
        if self.pooling == "cls":
            summary = hidden[:, 0]
        else:
            keep = (torch.ones(hidden.shape[:2], device=hidden.device) if attention_mask is None
                    else attention_mask.to(hidden.dtype))[..., None]
            summary = (hidden * keep).sum(1) / keep.sum(1).clamp_min(1.0)
        return torch.tanh(self.pooler(summary))

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        """Class scores (logits), shape (batch, num_labels)."""
        hidden = self.encode(ids, attention_mask, token_type_ids)
        return self.classifier(self.dropout(self.pool(hidden, attention_mask)))


# ---- Hugging Face conversion -------------------------------------------------------------------------

def not_bert(config: BertConfig) -> list[str]:
    """The options of `config` that Hugging Face's BERT classes do not have: empty for BERT."""
    bert = BertConfig(vocab_size=config.vocab_size)
    found = [f"{name}={getattr(config, name)!r}" for name in ("pre_ln", "causal", "position", "ffn", "bias",
                                                              "global_every", "embedding_size")
             if getattr(config, name) != getattr(bert, name) and not (name == "embedding_size" and
                                                                      config.embedding_width == config.d_model)]
    return found + (["type_vocab_size=0"] if config.type_vocab_size == 0 else [])


def not_modernbert(config: BertConfig) -> list[str]:
    """The options of `config` that differ from Hugging Face's ModernBERT: empty when every change is on."""
    want = dict(position="rope", ffn="geglu", bias=False, pre_ln=True, first_layer_norm=False, type_vocab_size=0,
                causal=False)
    found = [f"{k}={getattr(config, k)!r} (ModernBERT: {v!r})" for k, v in want.items() if getattr(config, k) != v]
    return found + ([f"embedding_size={config.embedding_size}"] if config.embedding_width != config.d_model else [])


def hf_config(config: BertConfig, **extra):
    """The `transformers.BertConfig` describing the same network (built locally, nothing downloaded); `extra`
    goes to it as it is (e.g. num_labels, id2label for a classifier)."""
    if config.causal:
        raise ValueError("This is a left-to-right (causal) model, not BERT: Hugging Face's BERT classes attend both ways.")
    if not_bert(config):
        modern = (f" Nor is it a ModernBERT, which differs in {', '.join(not_modernbert(config))}."
                  if not_modernbert(config) else " It is a ModernBERT: to_hf gives a ModernBertForMaskedLM.")
        raise ValueError(f"Hugging Face's BERT (post-LN, learned positions, GELU, biases) has no "
                         f"{', '.join(not_bert(config))}: this model cannot be converted to it.{modern}")
    from transformers import BertConfig as HFBertConfig

    return HFBertConfig(
        vocab_size=config.vocab_size, hidden_size=config.d_model, num_hidden_layers=config.n_layers,
        num_attention_heads=config.n_heads, intermediate_size=config.d_ff, hidden_act="gelu",
        max_position_embeddings=config.max_len, type_vocab_size=config.type_vocab_size,
        hidden_dropout_prob=config.dropout, attention_probs_dropout_prob=config.dropout,
        layer_norm_eps=config.layer_norm_eps, pad_token_id=config.pad_id, **extra,
    )


def unfused(state: dict) -> dict:
    """A state dict with every fused `attention.qkv` split into `attention.query`, `.key` and `.value`."""
    out = {}
    for key, value in state.items():
        if ".attention.qkv." in key:
            for part, piece in zip(("query", "key", "value"), value.chunk(3, dim=0)):
                out[key.replace(".qkv.", f".{part}.")] = piece
        else:
            out[key] = value
    return out


def modernbert_config(config: BertConfig):
    """The `transformers.ModernBertConfig` of a course model with all of ModernBERT's changes (notebook 16)."""
    if not_modernbert(config):
        raise ValueError(f"Not a ModernBERT: {', '.join(not_modernbert(config))}. Build it with "
                         "BertConfig(..., **mlm_lib.model.MODERN) to export it as ModernBertForMaskedLM.")
    from transformers import ModernBertConfig

    layer_types = ["full_attention" if config.is_global(i) else "sliding_attention" for i in range(config.n_layers)]
    return ModernBertConfig(
        vocab_size=config.vocab_size, hidden_size=config.d_model, intermediate_size=config.d_ff,
        num_hidden_layers=config.n_layers, num_attention_heads=config.n_heads, hidden_activation="gelu",
        max_position_embeddings=config.max_len, norm_eps=config.layer_norm_eps, norm_bias=False,
        attention_bias=False, mlp_bias=False, classifier_bias=False, decoder_bias=True, layer_types=layer_types,
        local_attention=config.local_window, attention_dropout=config.dropout, embedding_dropout=config.dropout,
        mlp_dropout=config.dropout, pad_token_id=config.pad_id, bos_token_id=None, eos_token_id=None,
        cls_token_id=None, sep_token_id=None, tie_word_embeddings=True,
        rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": float(config.rope_theta)},
                         "sliding_attention": {"rope_type": "default", "rope_theta": float(config.local_rope_theta)}})


def _modernbert_names(n_layers: int) -> dict[str, str]:
    """Our parameter names -> `ModernBertForMaskedLM`'s (fused QKV; no biases but the decoder's; no norm
    before the first layer's attention)."""
    names = {"embeddings.word.weight": "model.embeddings.tok_embeddings.weight",
             "embeddings.norm.weight": "model.embeddings.norm.weight", "final_norm.weight": "model.final_norm.weight",
             "head.dense.weight": "head.dense.weight", "head.norm.weight": "head.norm.weight",
             "head.bias": "decoder.bias"}
    for i in range(n_layers):
        ours, theirs = f"layers.{i}.", f"model.layers.{i}."
        names.update({ours + "attention.qkv.weight": theirs + "attn.Wqkv.weight",
                      ours + "attention.output.weight": theirs + "attn.Wo.weight",
                      ours + "ff_norm.weight": theirs + "mlp_norm.weight",
                      ours + "ff_in.weight": theirs + "mlp.Wi.weight", ours + "ff_out.weight": theirs + "mlp.Wo.weight"})
        if i > 0:
            names[ours + "attention_norm.weight"] = theirs + "attn_norm.weight"
    return names


def fused(state: dict) -> dict:
    """A state dict with every attention's query, key and value joined into one `attention.qkv`."""
    out = {}
    for key, value in state.items():
        if ".attention.query." in key:
            parts = [state[key.replace(".query.", f".{p}.")] for p in ("query", "key", "value")]
            out[key.replace(".query.", ".qkv.")] = torch.cat(parts, dim=0)
        elif ".attention.key." not in key and ".attention.value." not in key:
            out[key] = value
    return out


def _modernbert_to_hf(model: "BertForMLM"):
    from transformers import ModernBertForMaskedLM

    if type(model) is not BertForMLM:
        raise ValueError(f"Only the masked-LM model converts to ModernBERT ({type(model).__name__} does not: "
                         "Hugging Face's ModernBERT classifier pools and projects differently).")
    hf = ModernBertForMaskedLM(modernbert_config(model.config))
    ours = fused(model.state_dict())
    result = hf.load_state_dict({theirs: ours[mine] for mine, theirs in _modernbert_names(model.config.n_layers).items()},
                                strict=False)
    untouched = [k for k in result.missing_keys if k != "decoder.weight"]  # tied to the embeddings
    if untouched or result.unexpected_keys:
        raise RuntimeError(f"Weight names did not line up with ModernBERT's: {untouched or result.unexpected_keys}")
    hf.tie_weights()
    return hf.eval() if not model.training else hf


def _modernbert_from_hf(hf_model) -> "BertForMLM":
    c = hf_model.config
    if c.hidden_activation != "gelu" or c.norm_bias or c.attention_bias or c.mlp_bias or c.classifier_bias:
        raise ValueError("Only a ModernBERT with GELU and no biases (the published one) can be converted.")
    types = list(c.layer_types)
    every = next((i for i, t in enumerate(types[1:], 1) if t == "full_attention"), len(types))
    config = BertConfig(**{**MODERN, "global_every": max(1, every), "layer_norm_eps": c.norm_eps,
                           "local_window": c.local_attention}, vocab_size=c.vocab_size, d_model=c.hidden_size,
                        n_layers=c.num_hidden_layers, n_heads=c.num_attention_heads, d_ff=c.intermediate_size,
                        max_len=c.max_position_embeddings, pad_id=c.pad_token_id or 0, dropout=float(c.attention_dropout),
                        rope_theta=c.rope_parameters["full_attention"]["rope_theta"],
                        local_rope_theta=c.rope_parameters["sliding_attention"]["rope_theta"])
    if [config.is_global(i) for i in range(config.n_layers)] != [t == "full_attention" for t in types]:
        raise ValueError(f"This ModernBERT's layer pattern {types} is not 'global every n-th layer'.")
    model = BertForMLM(config)
    theirs = hf_model.state_dict()
    result = model.load_state_dict({mine: theirs[t] for mine, t in _modernbert_names(config.n_layers).items()},
                                   strict=False)
    if result.missing_keys != ["head.word_embedding.weight"]:  # the tied decoder
        raise RuntimeError(f"Weight names did not line up with ModernBERT's: {result.missing_keys}")
    return model.train(hf_model.training)


def _kind(model) -> str:
    if isinstance(model, BertForSequenceClassification):
        return "classification"
    return "pretraining" if isinstance(model, BertForPreTraining) else "mlm"


def _name_map(n_layers: int, kind: str = "mlm") -> dict[str, str]:
    """Our parameter names -> Hugging Face's: `BertForMaskedLM`'s ("mlm"), `BertForPreTraining`'s ("pretraining":
    the MLM head, the pooler and the NSP head, `cls.seq_relationship`) or `BertForSequenceClassification`'s
    ("classification": the pooler and `classifier`, no MLM head)."""
    names = {
        "embeddings.word.weight": "bert.embeddings.word_embeddings.weight",
        "embeddings.position.weight": "bert.embeddings.position_embeddings.weight",
        "embeddings.token_type.weight": "bert.embeddings.token_type_embeddings.weight",
    }
    if kind != "classification":
        names.update({"head.dense.weight": "cls.predictions.transform.dense.weight",
                      "head.dense.bias": "cls.predictions.transform.dense.bias",
                      "head.bias": "cls.predictions.bias"})
    parts = {"attention.query": "attention.self.query", "attention.key": "attention.self.key",
             "attention.value": "attention.self.value", "attention.output": "attention.output.dense",
             "ff_in": "intermediate.dense", "ff_out": "output.dense"}
    norms = {"embeddings.norm": "bert.embeddings.LayerNorm"}
    if kind != "classification":
        norms["head.norm"] = "cls.predictions.transform.LayerNorm"
    for i in range(n_layers):
        for ours, theirs in parts.items():
            for p in ("weight", "bias"):
                names[f"layers.{i}.{ours}.{p}"] = f"bert.encoder.layer.{i}.{theirs}.{p}"
        norms[f"layers.{i}.attention_norm"] = f"bert.encoder.layer.{i}.attention.output.LayerNorm"
        norms[f"layers.{i}.ff_norm"] = f"bert.encoder.layer.{i}.output.LayerNorm"
    if kind == "pretraining":
        norms.update({"pooler": "bert.pooler.dense", "nsp_head": "cls.seq_relationship"})
    if kind == "classification":
        norms.update({"pooler": "bert.pooler.dense", "classifier": "classifier"})
    for ours, theirs in norms.items():
        names[ours + ".weight"], names[ours + ".bias"] = theirs + ".weight", theirs + ".bias"
    return names


def to_hf(model: BertEncoder):
    """A Hugging Face model holding this model's weights: `BertForMaskedLM` for a `BertForMLM`,
    `BertForPreTraining` for a `BertForPreTraining`, `BertForSequenceClassification` for ours (pooling "cls");
    `ModernBertForMaskedLM` for a `BertForMLM` with all of ModernBERT's changes (`MODERN`). (ELECTRA's halves,
    built later in the course, convert through `mlm_lib.hf.to_hf`, which is also `mlm_lib.to_hf`.)"""
    if hasattr(model, "to_hf"):
        raise TypeError(f"A {type(model).__name__} converts itself: use mlm_lib.to_hf(model) (or model.to_hf()).")
    if not not_modernbert(model.config):
        return _modernbert_to_hf(model)
    from transformers import BertForMaskedLM
    from transformers import BertForPreTraining as HFBertForPreTraining
    from transformers import BertForSequenceClassification as HFBertForSequenceClassification

    kind = _kind(model)
    if kind == "classification":
        if model.pooling != "cls":
            raise ValueError(f"Hugging Face's BertForSequenceClassification pools [CLS]; this model pools "
                             f"{model.pooling!r} and has no equal there.")
        names_ = model.label_names
        hf = HFBertForSequenceClassification(hf_config(
            model.config, num_labels=model.num_labels, id2label=dict(enumerate(names_)),
            label2id={n: i for i, n in enumerate(names_)}))
    else:
        hf = (HFBertForPreTraining if kind == "pretraining" else BertForMaskedLM)(hf_config(model.config))
    ours = unfused(model.state_dict())
    names = _name_map(model.config.n_layers, kind)
    result = hf.load_state_dict({t: ours[mine] for mine, t in names.items()}, strict=False)
    untouched = [k for k in result.missing_keys if not k.startswith("cls.predictions.decoder.")]  # tied ones
    if untouched or result.unexpected_keys:
        raise RuntimeError(f"Weight names did not line up with Hugging Face's: {untouched or result.unexpected_keys}")
    if kind != "classification":
        hf.tie_weights()
    return hf.eval() if not model.training else hf


def from_hf(hf_model) -> BertEncoder:
    """Our model holding the weights of a Hugging Face BERT (GELU, absolute positions): a `BertForMLM` from a
    `BertForMaskedLM`, a `BertForPreTraining` from a `BertForPreTraining`, a `BertForSequenceClassification`
    from a `BertForSequenceClassification`; a `BertForMLM` with ModernBERT's changes from a
    `ModernBertForMaskedLM`. (ELECTRA's halves, built later in the course, convert through `mlm_lib.hf.from_hf`,
    which is also `mlm_lib.from_hf`.)"""
    name = type(hf_model).__name__
    if name.startswith("Electra"):
        raise TypeError(f"{name} is one of ELECTRA's halves: convert it with mlm_lib.from_hf (mlm_lib.hf.from_hf).")
    if name.startswith("ModernBert"):
        if name != "ModernBertForMaskedLM":
            raise ValueError(f"Of ModernBERT's classes the course converts ModernBertForMaskedLM, not {name}.")
        return _modernbert_from_hf(hf_model)
    c = hf_model.config
    if c.hidden_act != "gelu" or getattr(c, "position_embedding_type", "absolute") != "absolute":
        raise ValueError("Only BERT with hidden_act='gelu' and absolute position embeddings can be converted.")
    config = BertConfig(
        vocab_size=c.vocab_size, d_model=c.hidden_size, n_layers=c.num_hidden_layers, n_heads=c.num_attention_heads,
        d_ff=c.intermediate_size, max_len=c.max_position_embeddings, type_vocab_size=c.type_vocab_size,
        dropout=c.hidden_dropout_prob, layer_norm_eps=c.layer_norm_eps, pad_id=c.pad_token_id or 0,
    )
    theirs = hf_model.state_dict()
    if "classifier.weight" in theirs:
        kind = "classification"
        labels = [c.id2label[i] for i in range(c.num_labels)] if getattr(c, "id2label", None) else None
        model = BertForSequenceClassification(config, c.num_labels, "cls", labels)
    elif "cls.seq_relationship.weight" in theirs:
        kind, model = "pretraining", BertForPreTraining(config)
    elif "cls.predictions.bias" in theirs:
        kind, model = "mlm", BertForMLM(config)
    else:
        raise ValueError(f"{type(hf_model).__name__} has no head the course knows: convert a BertForMaskedLM, a "
                         "BertForPreTraining or a BertForSequenceClassification.")
    names = _name_map(config.n_layers, kind)
    result = model.load_state_dict({mine: theirs[t] for mine, t in names.items()}, strict=False)
    expected = [] if kind == "classification" else ["head.word_embedding.weight"]  # the tied decoder
    if result.missing_keys != expected:
        raise RuntimeError(f"Weight names did not line up with Hugging Face's: {result.missing_keys}")
    return model.train(hf_model.training)
