"""ELECTRA: a small masked LM makes plausible replacements, and the encoder we keep learns at every position
whether its token is the original or a replacement (replaced-token detection).

Taught in notebook 15 (ELECTRA): replacement sampling and the discriminator's loss by hand in §1-§2, the
models and their parity with Hugging Face in §3, the equal-budget measurement in §4.

The masked LM of notebooks 02-05 learns only at the selected positions (15%, or the speedrun's 40%); at the
others its head has nothing to predict. ELECTRA (Clark et al., ICLR 2020) keeps an MLM, but small, as a
*generator*: it fills the selected positions with tokens sampled from its own predictions. The *discriminator*
(the encoder that gets fine-tuned afterwards) reads the result and says, for every position, whether the token
there is the original (0) or a replacement (1). A sampled token equal to the original counts as original.
Both train together on one loss, generator_loss + 50 x discriminator_loss; no gradient flows from the
discriminator into the generator through the sampling (a token is drawn, not differentiated), so the generator
is trained by likelihood alone, not to fool the discriminator as a GAN's would be.

What follows Google's released code (google-research/electra: `configure_pretraining.py`, `run_pretraining.py`,
`pretrain/pretrain_helpers.py`), which the course read line by line:
* the generator has the discriminator's depth, a quarter of its width (`generator_hidden_size = 0.25`), a
  feed-forward layer 4x its width, and heads as wide as the discriminator's (the code divides by 64, BERT's
  head width);
* the two share their embeddings: word, position and token-type tables and the LayerNorm after them (the
  code's `electra/embeddings` scope); the generator, narrower than the embeddings, projects them to its own
  width (`embeddings_project`, a layer of its own);
* 15% of the positions are selected (`mask_prob = 0.15`); 85% of those are shown to the generator as
  [MASK] and 15% as they are, none random (`pretrain_helpers.mask`); the generator's samples then replace
  the original at *every* selected position;
* sampling draws from the generator's softmax at temperature 1 with the Gumbel-max trick;
* the discriminator's head is dense -> GELU -> one logit per position; its loss is the mean binary cross-entropy
  over the real (not padding) positions; the total is gen_weight (1) x MLM loss + disc_weight (50) x it;
* one optimiser for both, the gradient's global norm clipped at 1.
The course's choices on top: AdamW and the schedule of the other notebooks, and its own masking code (the
selected share is a coin per position, as everywhere in the course, not a fixed count per sequence).
"""
from __future__ import annotations

import numbers

import torch
import torch.nn.functional as F
from torch import nn

from .checkpoints import register_model
from .masking import IGNORE_INDEX, MaskingConfig, mask_tokens
from .model import BertConfig, BertEncoder, BertForMLM, _name_map, not_bert, unfused
from .training import backward_and_step, eval_windows, training_batch

# ELECTRA's masking for the generator's input (Google's pretrain_helpers.mask): 15% selected, 85% of them [MASK]
ELECTRA_MASKING = MaskingConfig(select_prob=0.15, mask_prob=0.85, random_prob=0.0)
DISC_WEIGHT = 50.0  # the discriminator loss's weight (configure_pretraining.py: disc_weight = 50.0)
GENERATOR_WIDTH = 0.25  # of the discriminator's (generator_hidden_size = 0.25)


def generator_config(discriminator: BertConfig, width: float = GENERATOR_WIDTH) -> BertConfig:
    """The generator's configuration: the discriminator's depth and head width, `width` of its hidden size,
    a feed-forward layer four times as wide, and the discriminator's embedding width (the embeddings are shared)."""
    if not isinstance(width, numbers.Real) or not 0 < width <= 1:
        raise ValueError(f"The generator's width is a share of the discriminator's, in (0, 1] (ELECTRA: 1/4 to 1/2 "
                         f"worked best); got {width!r}. A generator wider than the discriminator makes its job too "
                         "hard to learn.")
    head = discriminator.d_model // discriminator.n_heads
    d_model = max(head, int(round(discriminator.d_model * width / head)) * head)
    return BertConfig(**{**discriminator.to_dict(), "d_model": d_model, "n_heads": d_model // head,
                         "d_ff": 4 * d_model, "embedding_size": discriminator.embedding_width})


class DiscriminatorHead(nn.Module):
    """Hidden vector -> one logit: how sure the model is that this position's token was replaced."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.dense = nn.Linear(c.d_model, c.d_model)
        self.prediction = nn.Linear(c.d_model, 1)

    def forward(self, h):
        return self.prediction(F.gelu(self.dense(h))).squeeze(-1)


@register_model  # so that a checkpoint can rebuild it (mlm_lib.checkpoints)
class ElectraDiscriminator(BertEncoder):
    """The encoder ELECTRA keeps: BERT's embeddings and layers, and a head with one logit per position.
    Fine-tuning starts from it as from any of the course's encoders (`BertForSequenceClassification.from_encoder`)."""

    def __init__(self, config: BertConfig):
        if not_bert(config) and not_bert(config) != [f"embedding_size={config.embedding_size!r}"]:
            raise ValueError(f"ELECTRA's discriminator is a BERT encoder (as Hugging Face's ElectraForPreTraining): "
                             f"{', '.join(not_bert(config))} are not.")
        super().__init__(config)
        self.rtd_head = DiscriminatorHead(config)
        self.apply(self._init_weights)

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        """A logit for every position, (batch, length): above 0, "replaced"."""
        return self.rtd_head(self.encode(ids, attention_mask, token_type_ids))

    def to_hf(self):
        return _to_hf(self, "discriminator")


@register_model
class ElectraGenerator(BertForMLM):
    """ELECTRA's generator: a narrow masked LM whose embeddings are the discriminator's (`Electra` shares them)."""

    def to_hf(self):
        return _to_hf(self, "generator")


class Electra(nn.Module):
    """The pair trained together: a generator and a discriminator sharing one embeddings module (word, position
    and token-type tables, and their LayerNorm). `discriminator` is what fine-tuning and export keep."""

    def __init__(self, config: BertConfig, generator_width: float = GENERATOR_WIDTH):
        super().__init__()
        self.discriminator = ElectraDiscriminator(config)
        self.generator = ElectraGenerator(generator_config(config, generator_width))
        self.generator.embeddings = self.discriminator.embeddings  # shared, not copied
        self.generator.head.word_embedding = self.discriminator.embeddings.word  # the tied decoder follows
        self.config = config

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())  # shared tensors once

    @classmethod
    def from_generator(cls, masked_lm: BertForMLM) -> "Electra":
        """A pair whose generator starts as a trained masked LM of the discriminator's size (`masked_lm`, copied),
        and whose discriminator starts from random weights -- but for the embeddings, which the two share and
        which therefore start as the masked LM's. Generator and discriminator then train together, as usual.
        (Notebook 15, section 6: the paper warns that a generator far ahead of its discriminator may leave it
        stuck on the majority class.)"""
        pair = cls(masked_lm.config)
        generator = ElectraGenerator(masked_lm.config)
        generator.load_state_dict(masked_lm.state_dict())
        pair.discriminator.embeddings.load_state_dict(generator.embeddings.state_dict())
        generator.embeddings = pair.discriminator.embeddings  # shared, as in `Electra`
        generator.head.word_embedding = pair.discriminator.embeddings.word
        pair.generator = generator
        return pair

    @classmethod
    def two_stage(cls, masked_lm: BertForMLM) -> "Electra":
        """ELECTRA's second stage (Clark et al., section 3.2, "two-stage training"): the first stage trained a masked
        LM (here `masked_lm`, e.g. the course's shipped model); the discriminator starts from its weights (its
        embeddings and layers; the replaced-or-original head is new) and the generator is that masked LM, frozen.
        The two keep separate embeddings, so that the discriminator's training leaves the generator as it was.
        Only the discriminator learns: a step costs its forward and backward pass plus the generator's forward."""
        config = masked_lm.config
        pair = cls.__new__(cls)
        nn.Module.__init__(pair)
        pair.discriminator = ElectraDiscriminator(config)
        encoder = {k: v for k, v in masked_lm.state_dict().items() if not k.startswith("head.")}
        missing = pair.discriminator.load_state_dict(encoder, strict=False).missing_keys
        if any(not k.startswith("rtd_head.") for k in missing):
            raise ValueError(f"The masked LM's encoder does not fit a discriminator: {missing} are missing.")
        pair.generator = ElectraGenerator(config)
        pair.generator.load_state_dict(masked_lm.state_dict())
        pair.generator.requires_grad_(False)
        pair.config = config
        return pair

    @classmethod
    def from_parts(cls, discriminator: ElectraDiscriminator, generator: ElectraGenerator) -> "Electra":
        """A trained pair again, from its two halves saved apart (their embeddings were one module: it is shared
        again, the discriminator's copy kept). Refuses halves that do not fit each other."""
        if generator.config.embedding_width != discriminator.config.embedding_width or \
                generator.config.vocab_size != discriminator.config.vocab_size:
            raise ValueError("These halves do not belong together: the generator's embeddings must be the "
                             "discriminator's (same vocabulary and width).")
        if not all(torch.equal(a, b) for a, b in zip(generator.embeddings.state_dict().values(),
                                                     discriminator.embeddings.state_dict().values())):
            raise ValueError("These halves were not trained together: their embeddings differ.")
        pair = cls.__new__(cls)
        nn.Module.__init__(pair)
        pair.discriminator, pair.generator, pair.config = discriminator, generator, discriminator.config
        generator.embeddings = discriminator.embeddings
        generator.head.word_embedding = discriminator.embeddings.word
        return pair


def sample_replacements(logits: torch.Tensor, generator: torch.Generator | None = None,
                        noise: torch.Tensor | None = None) -> torch.Tensor:
    """One token per row of `logits`, drawn from softmax(logits): the Gumbel-max trick, as Google's code does it
    (argmax of logits + Gumbel noise). `noise` (uniform numbers shaped like `logits`) may be drawn beforehand."""
    if noise is None:
        noise = torch.rand(logits.shape, generator=generator)
    gumbel = -torch.log(-torch.log(noise.to(logits.device) + 1e-9) + 1e-9)
    return (logits.detach().float() + gumbel).argmax(-1)


def replace_tokens(ids: torch.Tensor, labels: torch.Tensor, sampled: torch.Tensor):
    """The discriminator's input and targets: `ids` with every selected position (label != -100) set to its
    sampled token, and 1 where the token now differs from the original (a sample equal to it counts as original)."""
    chosen = labels != IGNORE_INDEX
    corrupted = ids.clone()
    corrupted[chosen] = sampled
    return corrupted, (corrupted != ids).long()


def discriminator_loss(logits: torch.Tensor, replaced: torch.Tensor, attention_mask=None) -> torch.Tensor:
    """Mean binary cross-entropy of the replaced/original logits over the real (not padding) positions."""
    losses = F.binary_cross_entropy_with_logits(logits.float(), replaced.float(), reduction="none")
    if attention_mask is None:
        return losses.mean()
    keep = attention_mask.to(losses.dtype)
    return (losses * keep).sum() / keep.sum().clamp_min(1.0)


def electra_forward(model: Electra, inputs: torch.Tensor, labels: torch.Tensor, noise: torch.Tensor, *,
                    disc_weight: float = DISC_WEIGHT, fixed: torch.Tensor | None = None) -> dict:
    """Everything one ELECTRA step computes, before backward: the generator's loss at the selected positions,
    the replacements, the discriminator's logits and loss, and the total.

    `fixed` (log-probabilities over the vocabulary, e.g. `fixed_generator("unigram", ...)`) samples the
    replacements from that one distribution instead of the generator, which then neither runs nor learns: the
    paper's "unigram generator" ablation (Figure 3), and notebook 15's diagnosis."""
    chosen = labels != IGNORE_INDEX
    targets = labels[chosen]
    if fixed is None:
        frozen = not any(p.requires_grad for p in model.generator.parameters())  # ELECTRA.two_stage's
        with torch.set_grad_enabled(torch.is_grad_enabled() and not frozen):
            gen_logits = model.generator(inputs, positions=chosen)
            gen_loss = F.cross_entropy(gen_logits.float(), targets)
    else:
        gen_logits = fixed.to(inputs.device).expand(int(chosen.sum()), -1)
        gen_loss = torch.zeros((), device=inputs.device)
    original = torch.where(chosen, labels, inputs)
    corrupted, replaced = replace_tokens(original, labels, sample_replacements(gen_logits, noise=noise))
    hidden = model.discriminator.encode(corrupted)
    disc_logits = model.discriminator.rtd_head(hidden)  # = model.discriminator(corrupted), its hidden states kept
    disc_loss = discriminator_loss(disc_logits, replaced)
    return {"loss": gen_loss + disc_weight * disc_loss, "generator_loss": gen_loss, "discriminator_loss": disc_loss,
            "generator_logits": gen_logits, "targets": targets, "corrupted": corrupted, "replaced": replaced,
            "discriminator_logits": disc_logits, "hidden": hidden}


GENERATORS = ("trained", "unigram", "uniform")


def fixed_generator(kind: str, tokenizer, train_ids: torch.Tensor | None = None) -> torch.Tensor | None:
    """Log-probabilities of a generator that never learns: "unigram" samples ordinary tokens by their frequency in
    `train_ids` (the paper's unigram generator), "uniform" samples every ordinary token alike; "trained" (ELECTRA
    itself) gives None. Special tokens are never sampled."""
    if kind not in GENERATORS:
        raise ValueError(f"generator must be one of {GENERATORS}, got {kind!r}.")
    if kind == "trained":
        return None
    weights = torch.ones(tokenizer.vocab_size)
    if kind == "unigram":
        if train_ids is None:
            raise ValueError("A unigram generator counts the training text: pass its ids.")
        weights = torch.bincount(train_ids.reshape(-1), minlength=tokenizer.vocab_size).double() + 1.0
    weights[list(tokenizer.special_ids)] = 0.0
    return (weights / weights.sum()).log().float()


def recall_at_share(scores: torch.Tensor, positive: torch.Tensor) -> float:
    """Recall when the discriminator flags as many positions as were replaced: the share of replaced positions among
    the highest-scoring k positions, k being the number replaced. Chance is the replaced share itself (flagging k
    positions at random finds that share of them). Unlike the recall at logit 0 (`replaced_recall`), it does not
    need the model to be more than half sure of any position -- which, with 4% of positions replaced, a model that
    ranks them well can still never be."""
    scores, positive = scores.flatten(), positive.flatten().bool()
    k = int(positive.sum())
    if k == 0:
        return float("nan")
    return positive[scores.topk(k).indices].float().mean().item()


def roc_auc(scores: torch.Tensor, positive: torch.Tensor) -> float:
    """Area under the ROC curve: the chance that a random positive scores above a random negative
    (Mann-Whitney, ties counted half)."""
    scores, positive = scores.flatten().double(), positive.flatten().bool()
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if not n_pos or not n_neg:
        return float("nan")
    sorted_scores, order = scores.sort()
    _, inverse, counts = torch.unique_consecutive(sorted_scores, return_inverse=True, return_counts=True)
    first = (torch.cumsum(counts, 0) - counts + 1).double()
    ranks = torch.empty_like(scores)
    ranks[order] = (first + (counts.double() - 1) / 2.0)[inverse]  # 1-based ranks, ties sharing their mean
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


class ReplacedTokenDetection:
    """ELECTRA's objective, as `training.train` runs it (notebook 15): masked windows of the training ids as the
    generator's input (`config.masking`, ELECTRA's 15% / 85% [MASK] by default in the command), replacements
    sampled, the joint loss; held out, on the same windows every time (the schedule's final length,
    `config.eval_windows`, masked and sampled with `config.eval_seed`): the discriminator's accuracy and AUC at
    every position, and the generator's masked accuracy.

    The model is an `Electra` pair. History: "loss" is the total, "accuracy" the discriminator's accuracy over
    every position of the batch; also generator_loss, discriminator_loss, replaced (the share of positions
    replaced). `generator="unigram"` or `"uniform"` samples the replacements from a fixed distribution instead
    (`fixed_generator`; the pair's generator then idles): the paper's unigram-generator ablation, and the
    diagnosis of notebook 15, §5.
    """

    distributed = False

    def __init__(self, disc_weight: float = DISC_WEIGHT, generator: str = "trained"):
        if isinstance(disc_weight, bool) or not isinstance(disc_weight, numbers.Real) or not disc_weight > 0:
            raise ValueError(f"disc_weight (the paper's lambda, 50) must be a positive number, got {disc_weight!r}: "
                             "at 0 or below the discriminator, the model ELECTRA keeps, would learn nothing.")
        if generator not in GENERATORS:
            raise ValueError(f"generator must be one of {GENERATORS} (the trained generator is ELECTRA's; the other "
                             f"two are the paper's fixed ablations), got {generator!r}.")
        self.disc_weight, self.generator, self.fixed = float(disc_weight), generator, None

    def check(self, tokenizer, train_data, val_data, config) -> None:
        if getattr(tokenizer, "mask_id", None) is None:
            raise ValueError("ELECTRA's generator reads [MASK] tokens: the tokenizer needs a mask token "
                             "(the course's tokenizers have `[MASK]`).")
        self.fixed = fixed_generator(self.generator, tokenizer, train_data)

    def batch(self, tokenizer, train_data, config, progress: float, generator) -> dict:

        inputs, labels = training_batch(train_data, tokenizer, config, progress, generator)
        noise = torch.rand(int((labels != IGNORE_INDEX).sum()), tokenizer.vocab_size, generator=generator)
        return {"inputs": inputs, "labels": labels, "noise": noise}

    def step(self, model, optimizer, batch: dict, config, *, world, autocast_dtype=None, scaler=None) -> dict:
        if not isinstance(model, Electra):
            raise TypeError(f"ReplacedTokenDetection trains an Electra pair (generator + discriminator), got "
                            f"{type(model).__name__}: build one with mlm_lib.electra.Electra(config).")
        device = world.device
        with torch.autocast(device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None):
            out = electra_forward(model, batch["inputs"].to(device), batch["labels"].to(device), batch["noise"],
                                  disc_weight=self.disc_weight, fixed=self.fixed)
        backward_and_step(out["loss"], model, optimizer, config.grad_clip, scaler)
        replaced = out["replaced"]
        right = ((out["discriminator_logits"].detach() > 0).long() == replaced).float().mean()
        return {"loss": out["loss"].detach(), "accuracy": right, "generator_loss": out["generator_loss"].detach(),
                "discriminator_loss": out["discriminator_loss"].detach(), "replaced": replaced.float().mean()}

    @torch.no_grad()
    def evaluate(self, model, tokenizer, val_data, config) -> dict:
        return evaluate_electra(model, tokenizer, val_data, length=config.schedule.length_at(1.0),
                                windows=config.eval_windows, seed=config.eval_seed, masking=config.masking,
                                disc_weight=self.disc_weight, fixed=self.fixed)

    def tokens(self, batch: dict) -> int:
        return batch["inputs"].numel()


@torch.no_grad()
def evaluate_electra(model: Electra, tokenizer, ids: torch.Tensor, *, length: int, windows: int = 256,
                     seed: int = 1234, masking: MaskingConfig = ELECTRA_MASKING, batch_size: int = 64,
                     disc_weight: float = DISC_WEIGHT, fixed: torch.Tensor | None = None) -> dict:
    """Both halves on held-out text: windows spread evenly over `ids`, masked and sampled with `seed` (the same
    every time). Returns the discriminator's accuracy (every position), AUC, its recall of replaced tokens at logit
    0 and when it flags as many positions as were replaced (`recall_at_share`), its accuracy on original tokens; the generator's masked accuracy and loss; the share of positions replaced; the total loss;
    and the spread of the discriminator's hidden states across positions (`hidden_spread`)."""

    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    batch = eval_windows(ids, length, windows)
    g = torch.Generator().manual_seed(seed)
    inputs, labels = mask_tokens(batch, tokenizer, masking, generator=g)
    noise = torch.rand(int((labels != IGNORE_INDEX).sum()), tokenizer.vocab_size, generator=g)
    logits, replaced, gen_right, gen_loss, disc_loss, used, spreads = [], [], 0, 0.0, 0.0, 0, []
    for i in range(0, len(inputs), batch_size):
        x, y = inputs[i:i + batch_size].to(device), labels[i:i + batch_size].to(device)
        n = int((y != IGNORE_INDEX).sum())
        out = electra_forward(model, x, y, noise[used:used + n], disc_weight=disc_weight, fixed=fixed)
        used += n
        spreads.append(hidden_spread(out["hidden"]) * len(x))
        logits.append(out["discriminator_logits"].cpu())
        replaced.append(out["replaced"].cpu())
        gen_right += int((out["generator_logits"].argmax(-1) == out["targets"]).sum())
        gen_loss += out["generator_loss"].item() * n
        disc_loss += out["discriminator_loss"].item() * x.numel()
    model.train(was_training)
    logits, replaced = torch.cat(logits), torch.cat(replaced).bool()
    said = logits > 0
    return {"accuracy": (said == replaced).float().mean().item(), "auc": roc_auc(logits, replaced),
            "replaced_recall": said[replaced].float().mean().item() if replaced.any() else float("nan"),
            "replaced_recall_at_share": recall_at_share(logits, replaced),
            "original_accuracy": (~said[~replaced]).float().mean().item(), "replaced": replaced.float().mean().item(),
            "generator_accuracy": gen_right / max(1, used), "generator_loss": gen_loss / max(1, used),
            "discriminator_loss": disc_loss / logits.numel(),
            "loss": gen_loss / max(1, used) + disc_weight * disc_loss / logits.numel(),
            "spread": sum(spreads) / len(inputs)}


# below this spread a discriminator counts as collapsed: its positions' vectors differ by about 1% of what a
# learning encoder's do (the course's masked LM: 0.87 on the held-out text at 128; notebook 15's first ELECTRA
# runs: 1.5e-5 and 1.7e-4)
COLLAPSED_SPREAD = 0.01


def hidden_spread(hidden: torch.Tensor) -> float:
    """How much the discriminator's last hidden states differ from position to position: their standard deviation
    across the positions of a window, averaged over features and windows (`hidden`: batch x length x width).
    Near 0, every position gets the same vector -- the encoder has collapsed to one answer for all of them,
    whatever its accuracy says (notebook 15, §4: a collapsed run's spread is about 1e-5, a learning one's 0.1-1)."""
    return hidden.float().std(dim=1).mean().item()


# ---- Hugging Face conversion (notebook 15, §3) ------------------------------------------------------------

def electra_hf_config(discriminator: BertConfig, generator: BertConfig | None = None):
    """The `transformers.ElectraConfig` of the discriminator, or, given `generator`, of the generator (its width,
    the shared embedding width)."""
    from transformers import ElectraConfig

    c = generator or discriminator
    return ElectraConfig(vocab_size=c.vocab_size, embedding_size=c.embedding_width, hidden_size=c.d_model,
                         num_hidden_layers=c.n_layers, num_attention_heads=c.n_heads, intermediate_size=c.d_ff,
                         hidden_act="gelu", hidden_dropout_prob=c.dropout, attention_probs_dropout_prob=c.dropout,
                         max_position_embeddings=c.max_len, type_vocab_size=c.type_vocab_size,
                         layer_norm_eps=c.layer_norm_eps, pad_token_id=c.pad_id)


def _electra_names(config: BertConfig, half: str) -> dict[str, str]:
    """Our names -> `ElectraForPreTraining`'s ("discriminator") or `ElectraForMaskedLM`'s ("generator"):
    BERT's encoder names under `electra.`, the projection, and each half's head."""
    names = {mine: theirs.replace("bert.", "electra.", 1) for mine, theirs in _name_map(config.n_layers, "mlm").items()
             if not mine.startswith("head.")}
    if config.embedding_width != config.d_model:
        names.update({"embed_project.weight": "electra.embeddings_project.weight",
                      "embed_project.bias": "electra.embeddings_project.bias"})
    if half == "discriminator":
        names.update({f"rtd_head.dense.{p}": f"discriminator_predictions.dense.{p}" for p in ("weight", "bias")})
        names.update({f"rtd_head.prediction.{p}": f"discriminator_predictions.dense_prediction.{p}"
                      for p in ("weight", "bias")})
    else:
        names.update({f"head.dense.{p}": f"generator_predictions.dense.{p}" for p in ("weight", "bias")})
        names.update({f"head.norm.{p}": f"generator_predictions.LayerNorm.{p}" for p in ("weight", "bias")})
        names["head.bias"] = "generator_lm_head.bias"
    return names


def _to_hf(model, half: str):
    from transformers import ElectraForMaskedLM, ElectraForPreTraining

    hf = (ElectraForPreTraining if half == "discriminator" else ElectraForMaskedLM)(electra_hf_config(model.config))
    ours = unfused(model.state_dict())
    result = hf.load_state_dict({t: ours[mine] for mine, t in _electra_names(model.config, half).items()}, strict=False)
    untouched = [k for k in result.missing_keys if k != "generator_lm_head.weight"]  # tied to the word embeddings
    if untouched or result.unexpected_keys:
        raise RuntimeError(f"Weight names did not line up with ELECTRA's: {untouched or result.unexpected_keys}")
    if half == "generator":
        hf.tie_weights()
    return hf.eval() if not model.training else hf


def electra_from_hf(hf_model):
    """Our `ElectraDiscriminator` from an `ElectraForPreTraining`, our `ElectraGenerator` from an
    `ElectraForMaskedLM` (each on its own; `Electra` pairs them)."""
    c = hf_model.config
    if c.hidden_act != "gelu" or getattr(c, "position_embedding_type", "absolute") != "absolute":
        raise ValueError("Only ELECTRA with hidden_act='gelu' and absolute position embeddings can be converted.")
    name = type(hf_model).__name__
    if name not in ("ElectraForPreTraining", "ElectraForMaskedLM"):
        raise ValueError(f"Of ELECTRA's classes the course converts ElectraForPreTraining and ElectraForMaskedLM, "
                         f"not {name}.")
    half = "discriminator" if name == "ElectraForPreTraining" else "generator"
    config = BertConfig(vocab_size=c.vocab_size, d_model=c.hidden_size, n_layers=c.num_hidden_layers,
                        n_heads=c.num_attention_heads, d_ff=c.intermediate_size, max_len=c.max_position_embeddings,
                        type_vocab_size=c.type_vocab_size, dropout=c.hidden_dropout_prob,
                        layer_norm_eps=c.layer_norm_eps, pad_id=c.pad_token_id or 0,
                        embedding_size=None if c.embedding_size == c.hidden_size else c.embedding_size)
    model = (ElectraDiscriminator if half == "discriminator" else ElectraGenerator)(config)
    theirs = hf_model.state_dict()
    result = model.load_state_dict({mine: theirs[t] for mine, t in _electra_names(config, half).items()}, strict=False)
    expected = [] if half == "discriminator" else ["head.word_embedding.weight"]
    if result.missing_keys != expected:
        raise RuntimeError(f"Weight names did not line up with ELECTRA's: {result.missing_keys}")
    return model.train(hf_model.training)


__all__ = ["DISC_WEIGHT", "ELECTRA_MASKING", "GENERATORS", "Electra", "ElectraDiscriminator", "ElectraGenerator",
           "ReplacedTokenDetection", "COLLAPSED_SPREAD", "discriminator_loss", "electra_forward", "electra_from_hf", "evaluate_electra",
           "fixed_generator", "generator_config", "hidden_spread", "recall_at_share", "replace_tokens", "roc_auc",
           "sample_replacements"]
