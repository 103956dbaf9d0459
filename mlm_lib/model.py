"""BERT for masked language modelling, small enough to train on a CPU.

Taught in notebook 04 (encoder): embeddings in §1, the encoder layer in §2, the MLM head and the whole
model in §3, the parity with Hugging Face in §5. `BertForPreTraining` (the pooler and the next-sentence
head beside the MLM head, BERT's two objectives) is taught in notebook 10.

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
"""
from __future__ import annotations

import numbers
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .attention import MultiHeadAttention, padding_bias
from .dropout import Dropout


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

    def __post_init__(self):
        for name in ("vocab_size", "d_model", "n_layers", "n_heads", "d_ff", "max_len", "type_vocab_size"):
            value = getattr(self, name)
            smallest = 0 if name == "n_layers" else 1
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < smallest:
                raise ValueError(f"BertConfig.{name} must be a whole number >= {smallest}, got {value!r}.")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads}): each head "
                             "takes an equal slice of every token's vector.")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout!r}.")
        if not 0 <= self.pad_id < self.vocab_size:
            raise ValueError(f"pad_id {self.pad_id} is not an id of a vocabulary of {self.vocab_size} tokens.")

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


class Embeddings(nn.Module):
    """A token's vector = what it is + where it is + which segment it belongs to, then LayerNorm."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.word = nn.Embedding(c.vocab_size, c.d_model, padding_idx=c.pad_id)
        self.position = nn.Embedding(c.max_len, c.d_model)
        self.token_type = nn.Embedding(c.type_vocab_size, c.d_model)
        self.norm = nn.LayerNorm(c.d_model, eps=c.layer_norm_eps)
        self.dropout = Dropout(c.dropout)

    def forward(self, ids, token_type_ids=None):
        # positions 0..L-1 are simply the first L rows of the table; without token types every position
        # is segment 0 (row 0). Slicing instead of looking up saves two gathers and their backward passes.
        x = self.word(ids) + self.position.weight[: ids.size(1)]
        x = x + (self.token_type.weight[0] if token_type_ids is None else self.token_type(token_type_ids))
        return self.dropout(self.norm(x))


class EncoderLayer(nn.Module):
    """Attention lets positions exchange information; the feed-forward then works on each one alone."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.pre_ln = c.pre_ln
        self.attention = MultiHeadAttention(c.d_model, c.n_heads, c.dropout, fused=c.fused_attention)
        self.attention_norm = nn.LayerNorm(c.d_model, eps=c.layer_norm_eps)
        self.ff_in = nn.Linear(c.d_model, c.d_ff)
        self.ff_out = nn.Linear(c.d_ff, c.d_model)
        self.ff_norm = nn.LayerNorm(c.d_model, eps=c.layer_norm_eps)
        self.dropout = Dropout(c.dropout)

    def feed_forward(self, x):
        return self.dropout(self.ff_out(F.gelu(self.ff_in(x))))

    def forward(self, x, bias=None, return_weights: bool = False):
        if self.pre_ln:
            a = self.attention(self.attention_norm(x), bias, return_weights)
            attn, weights = a if return_weights else (a, None)
            x = x + self.dropout(attn)
            x = x + self.feed_forward(self.ff_norm(x))
        else:  # post-LN, as in BERT
            a = self.attention(x, bias, return_weights)
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
        self.dense = nn.Linear(c.d_model, c.d_model)
        self.norm = nn.LayerNorm(c.d_model, eps=c.layer_norm_eps)
        self.word_embedding = word_embedding  # shared, not a copy
        self.bias = nn.Parameter(torch.zeros(c.vocab_size))

    def forward(self, h):
        h = self.norm(F.gelu(self.dense(h)))
        return F.linear(h, self.word_embedding.weight, self.bias)


class BertForMLM(nn.Module):
    """Embeddings, a stack of encoder layers and the MLM head: BERT pretrained by masked-LM alone."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        self.embeddings = Embeddings(config)
        self.layers = nn.ModuleList(EncoderLayer(config) for _ in range(config.n_layers))
        self.final_norm = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps) if config.pre_ln else nn.Identity()
        self.head = MLMHead(config, self.embeddings.word)
        self.apply(self._init_weights)

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
        x = self.embeddings(ids, token_type_ids)
        bias = padding_bias(attention_mask, x.dtype)
        attentions = []
        for layer in self.layers:
            if return_attentions:
                x, w = layer(x, bias, return_weights=True)
                attentions.append(w)
            else:
                x = layer(x, bias)
        x = self.final_norm(x)
        return (x, attentions) if return_attentions else x

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        """Logits over the vocabulary at every position: (batch, length, vocab_size)."""
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

    def attentions(self, ids, attention_mask=None, token_type_ids=None) -> list[torch.Tensor]:
        """Attention weights of every layer, each (batch, heads, length, length), for plots."""
        return self.encode(ids, attention_mask, token_type_ids, return_attentions=True)[1]

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


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


# ---- Hugging Face conversion -------------------------------------------------------------------------

def hf_config(config: BertConfig):
    """The `transformers.BertConfig` describing the same network (built locally, nothing downloaded)."""
    if config.pre_ln:
        raise ValueError("Hugging Face's BertForMaskedLM is post-LN: only a model with pre_ln=False can be converted.")
    from transformers import BertConfig as HFBertConfig

    return HFBertConfig(
        vocab_size=config.vocab_size, hidden_size=config.d_model, num_hidden_layers=config.n_layers,
        num_attention_heads=config.n_heads, intermediate_size=config.d_ff, hidden_act="gelu",
        max_position_embeddings=config.max_len, type_vocab_size=config.type_vocab_size,
        hidden_dropout_prob=config.dropout, attention_probs_dropout_prob=config.dropout,
        layer_norm_eps=config.layer_norm_eps, pad_token_id=config.pad_id,
    )


def _name_map(n_layers: int, pretraining: bool = False) -> dict[str, str]:
    """Our parameter names -> Hugging Face's (`BertForMaskedLM`'s, or with `pretraining` `BertForPreTraining`'s,
    which adds the pooler and the NSP head, `cls.seq_relationship`)."""
    names = {
        "embeddings.word.weight": "bert.embeddings.word_embeddings.weight",
        "embeddings.position.weight": "bert.embeddings.position_embeddings.weight",
        "embeddings.token_type.weight": "bert.embeddings.token_type_embeddings.weight",
        "head.dense.weight": "cls.predictions.transform.dense.weight",
        "head.dense.bias": "cls.predictions.transform.dense.bias",
        "head.bias": "cls.predictions.bias",
    }
    parts = {"attention.query": "attention.self.query", "attention.key": "attention.self.key",
             "attention.value": "attention.self.value", "attention.output": "attention.output.dense",
             "ff_in": "intermediate.dense", "ff_out": "output.dense"}
    norms = {"embeddings.norm": "bert.embeddings.LayerNorm", "head.norm": "cls.predictions.transform.LayerNorm"}
    for i in range(n_layers):
        for ours, theirs in parts.items():
            for p in ("weight", "bias"):
                names[f"layers.{i}.{ours}.{p}"] = f"bert.encoder.layer.{i}.{theirs}.{p}"
        norms[f"layers.{i}.attention_norm"] = f"bert.encoder.layer.{i}.attention.output.LayerNorm"
        norms[f"layers.{i}.ff_norm"] = f"bert.encoder.layer.{i}.output.LayerNorm"
    if pretraining:
        norms.update({"pooler": "bert.pooler.dense", "nsp_head": "cls.seq_relationship"})
    for ours, theirs in norms.items():
        names[ours + ".weight"], names[ours + ".bias"] = theirs + ".weight", theirs + ".bias"
    return names


def to_hf(model: BertForMLM):
    """A Hugging Face model holding this model's weights: `BertForMaskedLM` for a `BertForMLM`,
    `BertForPreTraining` for a `BertForPreTraining`."""
    from transformers import BertForMaskedLM
    from transformers import BertForPreTraining as HFBertForPreTraining

    pretraining = isinstance(model, BertForPreTraining)
    hf = (HFBertForPreTraining if pretraining else BertForMaskedLM)(hf_config(model.config))
    ours = model.state_dict()
    names = _name_map(model.config.n_layers, pretraining)
    result = hf.load_state_dict({t: ours[mine] for mine, t in names.items()}, strict=False)
    untouched = [k for k in result.missing_keys if not k.startswith("cls.predictions.decoder.")]  # tied ones
    if untouched or result.unexpected_keys:
        raise RuntimeError(f"Weight names did not line up with Hugging Face's: {untouched or result.unexpected_keys}")
    hf.tie_weights()
    return hf.eval() if not model.training else hf


def from_hf(hf_model) -> BertForMLM:
    """Our model holding the weights of a Hugging Face BERT (GELU, absolute positions): a `BertForMLM` from a
    `BertForMaskedLM`, a `BertForPreTraining` from a `BertForPreTraining`."""
    c = hf_model.config
    if c.hidden_act != "gelu" or getattr(c, "position_embedding_type", "absolute") != "absolute":
        raise ValueError("Only BERT with hidden_act='gelu' and absolute position embeddings can be converted.")
    config = BertConfig(
        vocab_size=c.vocab_size, d_model=c.hidden_size, n_layers=c.num_hidden_layers, n_heads=c.num_attention_heads,
        d_ff=c.intermediate_size, max_len=c.max_position_embeddings, type_vocab_size=c.type_vocab_size,
        dropout=c.hidden_dropout_prob, layer_norm_eps=c.layer_norm_eps, pad_id=c.pad_token_id or 0,
    )
    theirs = hf_model.state_dict()
    pretraining = "cls.seq_relationship.weight" in theirs
    if not pretraining and "cls.predictions.bias" not in theirs:
        raise ValueError(f"{type(hf_model).__name__} has no MLM head: convert a BertForMaskedLM or a BertForPreTraining.")
    model = (BertForPreTraining if pretraining else BertForMLM)(config)
    names = _name_map(config.n_layers, pretraining)
    result = model.load_state_dict({mine: theirs[t] for mine, t in names.items()}, strict=False)
    if result.missing_keys != ["head.word_embedding.weight"]:  # the tied decoder is the word embedding
        raise RuntimeError(f"Weight names did not line up with Hugging Face's: {result.missing_keys}")
    return model.train(hf_model.training)
