"""Training-step throughput of the course's model against its peers, on this machine.

    python -m mlm_lib.experiments.bench              # reference + checkpoint configurations, 30 timed steps each
    python -m mlm_lib.experiments.bench --config larger --steps 20 --out bench.json

A step is what training does: forward, masked-LM loss, backward, gradient clipping, AdamW update (the same
fused AdamW for every peer); for mlm_lib it is `mlm_lib.training.train_step` itself. Every peer gets the
same sizes, the same dropout (first the course's own setting, 0.0; then BERT's 0.1) and the same masked
batches, in one process, after warm-up steps; the peers take turns step by step, and the median step time
is reported.

Peers:
  mlm_lib      `train_step` on `BertForMLM` (fused attention, MLM head at selected positions only)
  hf           Hugging Face `BertForMaskedLM`, same configuration (built locally)
  torch_nn     `torch.nn.TransformerEncoder` (post-LN, GELU) + embeddings + tied head
  textbook     `BertForMLM` with the written-out softmax attention, PyTorch's own dropout and the head at
               every position (the reference page's style)

`--electra` times an ELECTRA step (trained jointly, and the second stage) against a masked-LM step on the same
masked batches, with the operator calls of one step of each (notebook 15, section 8).

`--muon` times one `torch.optim.Muon` step (its Newton–Schulz iterations in bfloat16) against one step of the
course's `mlm_lib.muon.Muon` (the same update, its iterations in float32), on the course model's encoder matrices,
interleaved
(notebook 14, section 3: which is cheaper depends on whether the CPU has bfloat16 instructions).

`--modern` times ModernBERT's changes at the setting the speedrun trains with (length 128, batch 32, dropout
0): the course's modern model (`mlm_lib.model.MODERN`) against Hugging Face's `ModernBertForMaskedLM` of the
same configuration, the same model with three QKV projections instead of one (what fused QKV alone buys), and
BERT against `BertForMaskedLM` at the same length, all interleaved in one process.

The machine's float32 matmul rate is measured in the same run. Model FLOPs per token are counted as
6 x (non-embedding parameters) + 12 x n_layers x length x d_model (the two attention matmuls, forward and
backward); "of peak" is tokens/s x that count / matmul rate. The count is the same for every peer, so work a
peer avoids (like the head at unselected positions) shows as a higher share.
"""
from __future__ import annotations

import argparse
import platform
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn

from .. import devices
from .. import dropout as dropout_module
from ..masking import mask_tokens
from ..model import GEGLU_WIDTH, MODEL_SIZES, MODERN, BertConfig, BertForMLM, hf_config, modernbert_config
from ..training import adamw, train_step
from ._args import add_device_options, machine, today, where
from ._run import command, open_run, whole_number

_COURSE = {k: v for k, v in MODEL_SIZES["course"].items() if k in ("d_model", "n_layers", "n_heads", "d_ff")}
CONFIGS = {
    # name: (model sizes, sequence length, batch size)
    "reference": (MODEL_SIZES["reference-page"], 32, 64),   # the reference page's
    "checkpoint": (_COURSE, 64, 64),                         # the course's reference model
    "larger": (dict(d_model=256, n_layers=6, n_heads=8, d_ff=1024), 128, 32),
}
VOCAB = 84  # the Shakespeare character vocabulary


class _SpecialIds:
    """The bits of a tokenizer that `mask_tokens` needs, for a synthetic vocabulary."""
    special_ids, mask_id = [0, 1, 2, 3, 4], 4
    vocab_size = VOCAB


class TorchNNEncoderMLM(nn.Module):
    """The same network from `torch.nn.TransformerEncoder` parts, with a tied MLM head at every position."""

    def __init__(self, c: BertConfig):
        super().__init__()
        self.word = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.max_len, c.d_model)
        self.norm = nn.LayerNorm(c.d_model, eps=c.layer_norm_eps)
        layer = nn.TransformerEncoderLayer(c.d_model, c.n_heads, c.d_ff, c.dropout, activation="gelu",
                                           batch_first=True, norm_first=False, layer_norm_eps=c.layer_norm_eps)
        self.encoder = nn.TransformerEncoder(layer, c.n_layers, enable_nested_tensor=False)
        self.dense = nn.Linear(c.d_model, c.d_model)
        self.head_norm = nn.LayerNorm(c.d_model, eps=c.layer_norm_eps)
        self.bias = nn.Parameter(torch.zeros(c.vocab_size))

    def forward(self, ids):
        x = self.norm(self.word(ids) + self.position(torch.arange(ids.size(1), device=ids.device)))
        h = self.head_norm(F.gelu(self.dense(self.encoder(x))))
        return F.linear(h, self.word.weight, self.bias)


def _peers(config: BertConfig):
    """name -> (model, loss function(inputs, labels) -> loss); mlm_lib's is None: it runs `train_step`."""
    ours = BertForMLM(config)

    textbook = BertForMLM(BertConfig(**{**config.to_dict(), "fused_attention": False}))

    def textbook_loss(x, y):
        dropout_module.USE_FAST_MASK = False
        try:
            return F.cross_entropy(textbook(x).flatten(0, 1), y.flatten())
        finally:
            dropout_module.USE_FAST_MASK = True

    from transformers import BertForMaskedLM

    hf = BertForMaskedLM(hf_config(config))

    def hf_loss(x, y):
        return hf(input_ids=x, labels=y).loss

    torch_nn = TorchNNEncoderMLM(config)

    def torch_nn_loss(x, y):
        return F.cross_entropy(torch_nn(x).flatten(0, 1), y.flatten())

    return {"mlm_lib": (ours, None), "hf": (hf, hf_loss), "torch_nn": (torch_nn, torch_nn_loss),
            "textbook": (textbook, textbook_loss)}


def _peer_step(model, optimizer, loss_fn, x, y) -> None:
    """What `train_step` does, for a peer with its own loss: zero, forward + loss, backward, clip, update."""
    optimizer.zero_grad(set_to_none=True)
    loss_fn(x, y).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()


def _synchronize(device) -> None:
    """Wait for a GPU to finish what it was given, so that the clock measures the work, not its launch."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def matmul_gflops(n: int = 1024, repeats: int = 20, device="cpu") -> float:
    """The device's float32 matrix-multiply rate (GFLOP/s), best of `repeats` n x n products."""
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    for _ in range(3):
        a @ b
    _synchronize(device)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        a @ b
        _synchronize(device)
        best = min(best, time.perf_counter() - t)
    return 2 * n ** 3 / best / 1e9


def flops_per_token(config: BertConfig, length: int) -> float:
    d, ff, n = config.d_model, config.d_ff, config.n_layers
    non_embedding = n * (4 * d * d + 4 * d + 2 * d * ff + ff + d + 4 * d) + (d * d + 3 * d + config.vocab_size)
    return 6 * non_embedding + 12 * n * length * d


COURSE_DROPOUT = MODEL_SIZES["course"]["dropout"]  # the course trains without dropout (0.0); BERT used 0.1


def _non_embedding_flops(model, length: int) -> float:
    """6 x (parameters outside the embedding tables) + 12 x layers x length x width: a step's FLOPs per token."""
    c = model.config
    embedding = sum(p.numel() for n, p in model.named_parameters() if n.startswith("embeddings."))
    return 6 * (model.num_parameters() - embedding) + 12 * c.n_layers * length * c.d_model


def bench_modern(steps: int = 30, warmup: int = 5, seed: int = 0, length: int = 128, batch: int = 32,
                 device="cpu") -> dict:
    """ModernBERT's step against Hugging Face's, and BERT's, at the speedrun's setting (notebook 16)."""
    from transformers import BertForMaskedLM, ModernBertForMaskedLM

    base = dict(vocab_size=VOCAB, max_len=length, dropout=COURSE_DROPOUT, **_COURSE)
    modern = BertConfig(**{**base, **MODERN, "d_ff": GEGLU_WIDTH[base["d_ff"]]})
    bert = BertConfig(**base)
    torch.manual_seed(seed)
    ours_modern, ours_bert = BertForMLM(modern), BertForMLM(bert)
    models = {"mlm_lib modern": ours_modern, "hf ModernBERT": ModernBertForMaskedLM(modernbert_config(modern)),
              "mlm_lib modern, 3 QKV projections": BertForMLM(BertConfig(**{**modern.to_dict(), "fused_qkv": False})),
              "mlm_lib BERT": ours_bert, "hf BERT": BertForMaskedLM(hf_config(bert))}
    for model in models.values():
        model.to(device)

    def hf_loss(model):
        return lambda x, y: model(input_ids=x, labels=y).loss

    losses = {k: (hf_loss(m) if k.startswith("hf") else None) for k, m in models.items()}
    g = torch.Generator().manual_seed(seed)
    batches = [tuple(t.to(device) for t in mask_tokens(torch.randint(5, VOCAB, (batch, length), generator=g),
                                                        _SpecialIds(), generator=g)) for _ in range(4)]
    optimizers = {k: adamw(list(m.parameters()), lr=1e-4) for k, m in models.items()}
    times = {k: [] for k in models}
    for i in range(warmup + steps):
        for key, model in models.items():
            model.train()
            x, y = batches[i % len(batches)]
            t = time.perf_counter()
            if losses[key] is None:
                train_step(model, optimizers[key], x, y, grad_clip=1.0)
            else:
                _peer_step(model, optimizers[key], losses[key], x, y)
            _synchronize(device)
            if i >= warmup:
                times[key].append(time.perf_counter() - t)
    gflops = matmul_gflops(device=device)
    result = {"config": "modern", "device": devices.device_name(device), "length": length, "batch": batch, "steps": steps, "dropout": COURSE_DROPOUT,
              "matmul_gflops": gflops, "parameters": {k: sum(p.numel() for p in m.parameters()) for k, m in models.items()},
              "peers": {}}
    for key, ts in times.items():
        rate = batch * length / statistics.median(ts)
        ours = ours_modern if "modern" in key.lower() else ours_bert
        result["peers"][key] = {"median_step_ms": 1000 * statistics.median(ts), "tokens_per_s": rate,
                                "of_peak": rate * _non_embedding_flops(ours, length) / (gflops * 1e9)}
    for key, peer in result["peers"].items():
        reference = "hf ModernBERT" if "modern" in key.lower() else "hf BERT"
        peer["vs_hf"] = peer["tokens_per_s"] / result["peers"][reference]["tokens_per_s"]
    peers = result["peers"]
    result["modern_vs_bert"] = peers["mlm_lib modern"]["tokens_per_s"] / peers["mlm_lib BERT"]["tokens_per_s"]
    result["fused_qkv_speedup"] = (peers["mlm_lib modern"]["tokens_per_s"] /
                                   peers["mlm_lib modern, 3 QKV projections"]["tokens_per_s"])
    return result


def bench_electra(steps: int = 30, warmup: int = 5, seed: int = 0, length: int = 128, batch: int = 32,
                  device="cpu") -> dict:
    """An ELECTRA step against a masked-LM step on the same characters (notebook 15, section 8): the course's
    masked LM, ELECTRA trained jointly (a generator a quarter as wide) and ELECTRA's second stage (the generator
    the masked LM, frozen), on the same masked batches, interleaved step by step in one process; and the operator
    calls of one step of each (PyTorch's profiler), the cost a GPU feels at these sizes (one kernel launch or more
    each)."""
    from ..electra import Electra, electra_forward
    from ..training import backward_and_step

    config = BertConfig(vocab_size=VOCAB, max_len=length, dropout=COURSE_DROPOUT, **_COURSE)
    torch.manual_seed(seed)
    masked_lm = BertForMLM(config)
    models = {"masked LM": masked_lm, "ELECTRA, joint": Electra(config), "ELECTRA, second stage": Electra.two_stage(masked_lm)}
    for model in models.values():
        model.to(device).train()
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(4):
        x, y = mask_tokens(torch.randint(5, VOCAB, (batch, length), generator=g), _SpecialIds(), generator=g)
        noise = torch.rand(int((y != -100).sum()), VOCAB, generator=g)
        batches.append((x.to(device), y.to(device), noise))
    optimizers = {k: adamw([p for p in m.parameters() if p.requires_grad], lr=1e-4) for k, m in models.items()}

    def step(key: str, i: int) -> None:
        x, y, noise = batches[i % len(batches)]
        if key == "masked LM":
            train_step(models[key], optimizers[key], x, y, grad_clip=1.0)
        else:
            out = electra_forward(models[key], x, y, noise)
            backward_and_step(out["loss"], models[key], optimizers[key], 1.0, None)

    times = {k: [] for k in models}
    for i in range(warmup + steps):
        for key in models:
            t = time.perf_counter()
            step(key, i)
            _synchronize(device)
            if i >= warmup:
                times[key].append(time.perf_counter() - t)
    calls = {}
    for key in models:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
            step(key, 0)
        calls[key] = sum(e.count for e in profile.key_averages())
    peers = {k: {"median_step_ms": 1000 * statistics.median(ts), "operator_calls": calls[k],
                 "parameters_trained": sum(p.numel() for p in models[k].parameters() if p.requires_grad)}
             for k, ts in times.items()}
    for peer in peers.values():
        peer["vs_masked_lm"] = peer["median_step_ms"] / peers["masked LM"]["median_step_ms"]
    return {"config": "electra", "device": devices.device_name(device), "length": length, "batch": batch,
            "characters_a_step": length * batch, "steps": steps, "threads": torch.get_num_threads(), "peers": peers}


MUON_PEERS = ("torch.optim.Muon step (bfloat16)", "course's Muon step (float32)")  # bench --muon's two, in its file


def bench_muon(steps: int = 30, warmup: int = 5, seed: int = 0) -> dict:
    """One `torch.optim.Muon` step against one step of the course's `mlm_lib.muon.Muon`: the same update (momentum,
    five Newton–Schulz iterations, weight decay), its iterations in bfloat16 in PyTorch's and in float32 in the
    course's, each on its own copy of the course model's encoder matrices (`hidden_matrices`) with the same
    gradients, taking turns step by step in one process. bfloat16 is cheap on a CPU with bfloat16 instructions and
    emulated (slow) without them, which is why the course's `MuonAndAdamW` iterates in float32 (notebook 14,
    section 3)."""
    from ..muon import Muon, hidden_matrices

    torch.manual_seed(seed)
    model = BertForMLM(BertConfig(vocab_size=VOCAB, **_COURSE))
    names = set(hidden_matrices(model))
    twins = {}
    for key in MUON_PEERS:
        matrices = [p.detach().clone().requires_grad_() for n, p in model.named_parameters() if n in names]
        twins[key] = matrices
    gradients = [torch.randn_like(m) for m in twins[MUON_PEERS[0]]]
    for matrices in twins.values():
        for matrix, gradient in zip(matrices, gradients):
            matrix.grad = gradient.clone()
    bf16, fp32 = MUON_PEERS
    peers = {bf16: torch.optim.Muon(twins[bf16], lr=0.02).step, fp32: Muon(twins[fp32], lr=0.02).step}
    times = {k: [] for k in peers}
    for i in range(warmup + steps):
        for key, run in peers.items():
            t = time.perf_counter()
            run()
            if i >= warmup:
                times[key].append(time.perf_counter() - t)
    ms = {k: 1000 * statistics.median(ts) for k, ts in times.items()}
    return {"config": "muon", "matrices": len(gradients), "steps": steps, "threads": torch.get_num_threads(),
            "median_ms": ms, "bf16_vs_fp32": ms[bf16] / ms[fp32]}


def bench_config(name: str, steps: int = 30, warmup: int = 5, seed: int = 0, dropout: float = COURSE_DROPOUT,
                 device="cpu") -> dict:
    sizes, length, batch = CONFIGS[name]
    config = BertConfig(vocab_size=VOCAB, max_len=max(512, length), dropout=dropout, **sizes)
    torch.manual_seed(seed)
    peers = _peers(config)
    for model, _ in peers.values():
        model.to(device)
    g = torch.Generator().manual_seed(seed)
    batches = [tuple(t.to(device) for t in mask_tokens(torch.randint(5, VOCAB, (batch, length), generator=g),
                                                        _SpecialIds(), generator=g)) for _ in range(4)]
    optimizers = {k: adamw(list(m.parameters()), lr=1e-4) for k, (m, _) in peers.items()}  # the same for all
    times = {k: [] for k in peers}
    # interleave the peers step by step, so a slow patch of a shared machine hits all of them alike
    for i in range(warmup + steps):
        for key, (model, loss_fn) in peers.items():
            model.train()
            x, y = batches[i % len(batches)]
            t = time.perf_counter()
            if loss_fn is None:
                train_step(model, optimizers[key], x, y, grad_clip=1.0)
            else:
                _peer_step(model, optimizers[key], loss_fn, x, y)
            _synchronize(device)
            if i >= warmup:
                times[key].append(time.perf_counter() - t)
    gflops = matmul_gflops(device=device)
    per_token = flops_per_token(config, length)
    result = {"config": name, "device": devices.device_name(device), "dropout": dropout, "sizes": sizes, "length": length, "batch": batch, "steps": steps,
              "matmul_gflops": gflops, "flops_per_token": per_token, "peers": {}}
    hf_rate = batch * length / statistics.median(times["hf"])
    for key, ts in times.items():
        rate = batch * length / statistics.median(ts)
        result["peers"][key] = {"median_step_ms": 1000 * statistics.median(ts), "tokens_per_s": rate,
                                "vs_hf": rate / hf_rate, "of_peak": rate * per_token / (gflops * 1e9)}
    return result


def bench_dropout(repeats: int = 50, p: float = 0.1) -> list[dict]:
    """`mlm_lib.dropout` against `torch.nn.functional.dropout` on the course model's two dropout shapes
    (hidden states and attention weights at batch 64, length 64), interleaved, median of `repeats`:
    drawing the mask alone, and the whole dropout, forward and backward."""
    shapes = {"hidden (64, 64, 128)": (64, 64, 128), "attention (64, 8, 64, 64)": (64, 8, 64, 64)}
    rows = []
    for label, shape in shapes.items():
        x = torch.randn(shape, requires_grad=True)
        cases = {
            "mask: mlm_lib": lambda: dropout_module.drop_mask(shape, p),
            "mask: torch bernoulli_": lambda: torch.empty(shape).bernoulli_(p),
            "dropout fwd+bwd: mlm_lib": lambda: dropout_module.dropout(x, p).sum().backward(),
            "dropout fwd+bwd: torch": lambda: F.dropout(x, p, True).sum().backward(),
        }
        times = {k: [] for k in cases}
        for i in range(repeats + 3):
            for key, fn in cases.items():
                t = time.perf_counter()
                fn()
                if i >= 3:
                    times[key].append(time.perf_counter() - t)
        ms = {k: 1000 * statistics.median(v) for k, v in times.items()}
        rows.append({"shape": label, "ms": ms,
                     "mask_speedup": ms["mask: torch bernoulli_"] / ms["mask: mlm_lib"],
                     "dropout_speedup": ms["dropout fwd+bwd: torch"] / ms["dropout fwd+bwd: mlm_lib"]})
    return rows


def bench_interaction(repeats: int = 20, length: int = 300) -> dict:
    """The prediction explorer's whole update (`mlm_lib.course.widgets.prediction_view`, what the widget runs when
    a control moves) on a `length`-character passage with the shipped model: encode, mask 15%, one batched
    forward pass, top-5 for every blank, the coloured text and the attention of one blank (HTML), and the
    top-k chart rendered to PNG as the widget displays it."""
    import matplotlib

    matplotlib.use("Agg")

    from ..course.assets import reference_checkpoint
    from ..course.viz import figure_png
    from ..course.widgets import prediction_view
    from ..data import load_corpus

    checkpoint = reference_checkpoint()
    model, tokenizer = checkpoint.model.eval(), checkpoint.tokenizer
    passage = load_corpus()[10_000:10_000 + length]

    def update():
        _, fig, predictions = prediction_view(model, tokenizer, passage, seed=0, k=5)
        figure_png(fig)  # rendered exactly as the widget renders it
        return len(predictions)

    blanks = update()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        update()
        times.append(time.perf_counter() - t)
    return {"characters": length, "blanks": blanks, "median_ms": 1000 * statistics.median(times), "repeats": repeats}


def print_result(r: dict) -> None:
    setting = "the course's setting" if r["dropout"] == COURSE_DROPOUT else "BERT's dropout"
    print(f"\n{r['config']}, dropout {r['dropout']} ({setting}): {r['sizes']}, length {r['length']}, batch {r['batch']}, "
          f"median of {r['steps']} steps; "
          f"matmul {r['matmul_gflops']:.0f} GFLOP/s")
    print(f"{'peer':>10} {'step ms':>9} {'tokens/s':>10} {'vs HF':>7} {'of peak':>8}")
    for key, p in r["peers"].items():
        print(f"{key:>10} {p['median_step_ms']:9.1f} {p['tokens_per_s']:10,.0f} {p['vs_hf']:6.2f}x {p['of_peak']:8.0%}")


@command
def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", nargs="+", default=["reference", "checkpoint"], choices=sorted(CONFIGS))
    parser.add_argument("--steps", type=whole_number(1), default=30, help="timed steps per peer (median reported)")
    parser.add_argument("--warmup", type=whole_number(0), default=5)
    parser.add_argument("--dropout", type=float, nargs="+", default=[COURSE_DROPOUT, 0.1],
                        help="dropout settings, the course's own (0.0) first, then BERT's (0.1)")
    parser.add_argument("--out", help="also write the results to this results file (.json)")
    parser.add_argument("--modern", action="store_true",
                        help="only ModernBERT's step against Hugging Face's and BERT's, at the speedrun's setting")
    parser.add_argument("--electra", action="store_true",
                        help="only an ELECTRA step against a masked-LM step on the same characters (notebook 15)")
    parser.add_argument("--muon", action="store_true",
                        help="only torch.optim.Muon's bfloat16 step against float32 iterations (notebook 14)")
    parser.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    add_device_options(parser)
    args = parser.parse_args(argv)
    device, _ = where(parser, args)  # every peer steps in float32 (the rates compare kernels, not precisions)
    if any(not 0.0 <= d < 1.0 for d in args.dropout):
        parser.error(f"--dropout values must be in [0, 1), got {args.dropout}")
    options = {"--config": args.config, "--steps": args.steps, "--warmup": args.warmup, "--dropout": args.dropout,
               "--modern": args.modern, "--electra": args.electra, "--muon": args.muon, "--device": device.type}
    out = open_run(parser, "bench", args.out, options=options, overwrite=args.overwrite, resumable=False, argv=argv)

    def write(result: dict) -> None:
        if out is not None:
            out.record = result
            out.finish()

    print(f"{devices.describe(device, 'fp32')}, torch {torch.__version__}")
    if args.muon:
        if device.type != "cpu":
            parser.error("--muon times the CPU (whether it has bfloat16 instructions): run it with --device cpu")
        result = bench_muon(args.steps, args.warmup)
        print(f"\nOne Muon step on the course model's {result['matrices']} encoder matrices, median of "
              f"{result['steps']} steps")
        for key, ms in result["median_ms"].items():
            print(f"{key:>34} {ms:8.1f} ms")
        print(f"bfloat16 / float32: {result['bf16_vs_fp32']:.2f}x")
        write({"machine": machine(), "date": today(), "muon": result})
        return [result]
    if args.electra:
        result = bench_electra(args.steps, args.warmup, device=device)
        print(f"\nAn ELECTRA step against a masked-LM step, {result['characters_a_step']:,} characters a step "
              f"(length {result['length']}, batch {result['batch']}), median of {result['steps']} steps")
        print(f"{'peer':>24} {'step ms':>8} {'x masked LM':>12} {'operator calls':>15}")
        for key, p in result["peers"].items():
            print(f"{key:>24} {p['median_step_ms']:8.1f} {p['vs_masked_lm']:11.2f}x {p['operator_calls']:15,}")
        write({"machine": machine(), "date": today(), "electra": result})
        return [result]
    if args.modern:
        result = bench_modern(args.steps, args.warmup, device=device)
        print(f"\nModernBERT's changes at the speedrun's setting (length 128, batch 32, dropout 0), median of "
              f"{result['steps']} steps; matmul {result['matmul_gflops']:.0f} GFLOP/s")
        print(f"{'peer':>34} {'params':>8} {'step ms':>8} {'tokens/s':>9} {'vs HF':>6} {'of peak':>8}")
        for key, p in result["peers"].items():
            print(f"{key:>34} {result['parameters'][key]:8,} {p['median_step_ms']:8.1f} {p['tokens_per_s']:9,.0f} "
                  f"{p['vs_hf']:5.2f}x {p['of_peak']:8.0%}")
        print(f"modern / BERT (mlm_lib): {result['modern_vs_bert']:.2f}x; one QKV projection / three: "
              f"{result['fused_qkv_speedup']:.2f}x")
        write({"machine": platform.platform(), "threads": torch.get_num_threads(), "torch": torch.__version__,
               "date": today(), "modern": result})
        return [result]
    results = [bench_config(name, args.steps, args.warmup, dropout=d, device=device) for d in args.dropout
               for name in args.config]
    for r in results:
        print_result(r)
    if device.type != "cpu":  # the dropout kernel and the widget's update are the CPU's (what a laptop learner feels)
        write({"machine": platform.platform(), "device": devices.device_name(device), "torch": torch.__version__,
               "date": today(), "results": results})
        return results
    drop = bench_dropout(repeats=max(5, args.steps))
    print("\ndropout at p = 0.1, median ms (torch's time / mlm_lib's):")
    for row in drop:
        print(f"  {row['shape']:>26}: mask {row['ms']['mask: mlm_lib']:.2f} vs {row['ms']['mask: torch bernoulli_']:.2f} "
              f"({row['mask_speedup']:.2f}x); dropout fwd+bwd {row['ms']['dropout fwd+bwd: mlm_lib']:.2f} vs "
              f"{row['ms']['dropout fwd+bwd: torch']:.2f} ({row['dropout_speedup']:.2f}x)")
    interaction = bench_interaction(repeats=max(3, args.steps))
    print(f"\nprediction explorer update, {interaction['characters']} characters, {interaction['blanks']} blanks: "
          f"{interaction['median_ms']:.0f} ms (median of {interaction['repeats']})")
    write({"machine": platform.platform(), "threads": torch.get_num_threads(), "torch": torch.__version__,
           "date": today(), "results": results, "dropout": drop, "interaction": interaction})
    return results


if __name__ == "__main__":
    main()
