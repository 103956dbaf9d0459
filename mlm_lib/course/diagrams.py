"""Diagrams: the course's pictures of structures, drawn from the objects a notebook has just built.

Every function takes the live object (a config, a tokenizer's output, a masked batch, a model, a folder) and
returns a matplotlib Figure labelled with that object's real values: shapes, counts, tokens, parameter numbers.
Change a parameter of the notebook and the picture follows it, so it never shows a structure the code does not
have. They are drawn the course's own way (boxes, arrows, rows of cells); the captions under them in the
notebooks say what to look at. Tests read the figures' text to check that the labels are the object's values.

One function per picture, in the order of the course: `course_map` (00), `tokens_to_windows` (01),
`masked_window` (02), `attention_flow` (03), `encoder_diagram` and `layer_norm_placement` (04),
`training_step` (05), `blanks_and_guesses` (06), `length_schedules` (07), `wordpiece_match` and
`merge_choice` (08), `pieces_and_words` (09), `pair_embeddings` and `pair_kinds` (10), `classifier_diagram`
(11), `export_diagram` (12), `attention_masks` (13), `singular_values` (14), `electra_diagram` (15),
`rope_rotation` and `layer_pattern` (16).
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import matplotlib.pyplot as plt
import torch
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Rectangle

from ..masking import IGNORE_INDEX, MASKED, NOT_SELECTED, OUTCOME_NAMES, RANDOM, UNCHANGED
from .student import course_notebooks
from .viz import DPI, OUTCOME_COLOURS, _show_char, fonts_for

# one palette for the structures: what a token is, what the network does, what comes out, what is learnt
INPUT, LAYER, HEAD, LOSS, QUIET = "#dbe9f6", "#f6e7cf", "#dcefd9", "#f7d4d4", "#eeeeee"
EDGE = "#555555"


# ---- drawing primitives ------------------------------------------------------------------------------

def _canvas(width: float, height: float):
    """A figure whose data units are inches: (0, 0) bottom left, (width, height) top right, no axes."""
    fig = plt.figure(figsize=(width, height), dpi=DPI)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.axis("off")
    return fig, ax


def _box(ax, x, y, w, h, text, colour=LAYER, size=10, weight="normal", edge=EDGE, style="round,pad=0.02,rounding_size=0.08",
         **text_kw):
    """A rounded box with its lower-left corner at (x, y) and `text` in its middle."""
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle=style, facecolor=colour, edgecolor=edge, lw=1))
    if text:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size, fontweight=weight, **text_kw)
    return (x, y, w, h)


def _arrow(ax, start, end, text=None, size=8.5, colour=EDGE, side="right", style="-|>", lw=1.2, **kw):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=12, color=colour, lw=lw,
                                 shrinkA=1, shrinkB=1, **kw))
    if text:
        mx, my = (start[0] + end[0]) / 2, (start[1] + end[1]) / 2
        offset = 0.08 if side == "right" else -0.08
        ax.text(mx + offset, my, text, ha="left" if side == "right" else "right", va="center", fontsize=size,
                color="#333333")


def _cells(ax, x, y, tokens, colours=None, w=0.32, h=0.32, size=10, edge="#999999", label=None, label_size=9,
           text_colours=None, fonts=None):
    """A row of square cells, one token each, starting at (x, y); `label` to their left."""
    fonts = fonts if fonts is not None else fonts_for(tokens)
    for i, token in enumerate(tokens):
        colour = colours[i] if colours is not None else "white"
        ax.add_patch(Rectangle((x + i * w, y), w, h, facecolor=colour or "white", edgecolor=edge, lw=0.8))
        ax.text(x + i * w + w / 2, y + h / 2, token, ha="center", va="center", fontsize=size,
                color=(text_colours[i] if text_colours else "black"), **fonts)
    if label:
        ax.text(x - 0.12, y + h / 2, label, ha="right", va="center", fontsize=label_size)


def _count(n: int) -> str:
    """12,345 -> '12.3k', 1,234,567 -> '1.23M': parameter counts that fit in a box."""
    if n >= 1e6:
        return f"{n / 1e6:.3g}M"
    if n >= 1e4:
        return f"{n / 1e3:.3g}k"
    return f"{n:,}"


def _shape(t) -> str:
    return "(" + ", ".join(str(int(s)) for s in t) + ")"


def _token(t: str) -> str:
    return _show_char(t) if len(t) == 1 or t == "[MASK]" else t


def texts(fig) -> list[str]:
    """Every piece of text drawn on a figure (titles and labels included): what the tests read."""
    return [t.get_text() for t in fig.findobj(match=lambda a: hasattr(a, "get_text") and hasattr(a, "get_position"))
            if t.get_text()]


# ---- 00: the course map ----------------------------------------------------------------------------

PART_TITLES = {"part1": "Part 1 · MLM from scratch (characters)", "part2": "Part 2 · the input BERT really reads",
               "part3": "Part 3 · what pretraining is for", "part4": "Part 4 · speed",
               "part5": "Part 5 · after BERT"}


def notebook_titles(folder) -> list[tuple[str, str, str]]:
    """(part folder, number, short title) of every notebook under `folder` (the course's `notebooks/`), in
    reading order, read from each notebook's first heading ("# 05 · Training: the masked-LM loss, ..." gives
    "Training")."""
    out = []
    for path in course_notebooks(folder):
        first = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"]).splitlines()[0]
        title = re.split(r":| — ", re.sub(r"^#+\s*\d+\s*·\s*", "", first))[0].strip()
        out.append((path.parent.name, path.name[:2], title))
    if not out:
        raise FileNotFoundError(f"No notebooks (NN_name.ipynb in a part's folder) under {folder}.")
    return out


def _wrap(text: str, width: int) -> str:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "\n".join(lines + [line])


def course_folder() -> Path:
    """The course's `notebooks/` folder, found from the installed library (it sits beside `mlm_lib/` in the
    course's folder, which `pip install -e .` installs), never from the working directory: papermill from the
    repository root, Colab and CI jobs run notebooks from elsewhere."""
    folder = Path(__file__).resolve().parents[2] / "notebooks"
    if not course_notebooks(folder):
        raise FileNotFoundError(f"The course's notebooks are not beside the installed mlm_lib ({folder}): install the "
                                "course from its folder with `pip install -e .`, or pass the folder that holds them: "
                                "course_map('path/to/notebooks').")
    return folder


def course_map(folder=None, here: str | None = None):
    """The course as a path: one row per part, one box per notebook with its number and title, read from the
    notebooks themselves (in `folder`, default the course's own, `course_folder()`); `here` (a number such as
    "00") is drawn darker."""
    notebooks = notebook_titles(course_folder() if folder is None else folder)
    parts = list(dict.fromkeys(p for p, _, _ in notebooks))
    per_row = max(sum(p == part for p, _, _ in notebooks) for part in parts)
    # at most 11 inches (880 pixels at the notebooks' dpi): a notebook shows it at 100%, not shrunk to fit
    left = 0.2
    gap = 0.22
    bw = min(1.45, (11.0 - 2 * left - (per_row - 1) * gap) / per_row)
    labels = {number: f"{number}\n{_wrap(title, int(bw / 0.075))}" for _, number, title in notebooks}
    # tall enough for the longest label (8.5-point lines are 0.15 inch apart) with a margin above and below
    bh = max(0.72, 0.15 * max(label.count("\n") + 1 for label in labels.values()) + 0.24)
    width = left * 2 + per_row * bw + (per_row - 1) * gap
    row_h = bh + 0.56
    fig, ax = _canvas(max(width, 7.0), 0.35 + row_h * len(parts))
    for r, part in enumerate(parts):
        y = 0.15 + row_h * (len(parts) - 1 - r)
        key = part.split("_")[0]
        ax.text(left, y + bh + 0.12, PART_TITLES.get(key, part), fontsize=10, fontweight="bold", va="bottom")
        for i, (_, number, title) in enumerate(n for n in notebooks if n[0] == part):
            x = left + i * (bw + gap)
            colour = "#9cc3e4" if number == here else INPUT
            _box(ax, x, y, bw, bh, labels[number], colour=colour, size=8.5)
            if i:
                _arrow(ax, (x - gap, y + bh / 2), (x, y + bh / 2))
    return fig


# ---- 01: text -> characters -> ids -> windows --------------------------------------------------------

def tokens_to_windows(text: str, tokenizer, windows, training_text: str | None = None, shown: int = 16):
    """What notebook 01 builds, as one picture: the first `shown` characters of `text`, their ids from
    `tokenizer`, and the batch `windows` (a (batch, length) tensor of ids) as stretches of the training text,
    each at the offset where it was cut (found in `training_text`, when given)."""
    chars = list(text[:shown])
    ids = tokenizer.encode(text[:shown]).tolist()
    batch, length = windows.shape
    fig, ax = _canvas(10.0, 3.0 + 0.32 * batch)
    x0, top = 1.9, 2.55 + 0.32 * batch
    ax.text(0.2, top + 0.1, f"text: {len(text):,} characters" if len(text) > shown else "text", fontsize=10,
            fontweight="bold")
    _cells(ax, x0, top - 0.45, [_show_char(c) for c in chars], label="characters", w=0.42, size=12,
           colours=[INPUT] * len(chars))
    _cells(ax, x0, top - 1.2, [str(i) for i in ids], label=f"ids ({tokenizer.vocab_size} in the\nvocabulary)", w=0.42,
           size=8.5, colours=[HEAD] * len(ids))
    for i in range(len(chars)):
        _arrow(ax, (x0 + 0.42 * i + 0.21, top - 0.47), (x0 + 0.42 * i + 0.21, top - 0.86), lw=0.8)
    # the training text as a bar, each window of the batch at its offset
    bar_y, bar_w = top - 2.0, 7.6
    total = len(training_text) if training_text else None
    ax.add_patch(Rectangle((x0, bar_y), bar_w, 0.22, facecolor=QUIET, edgecolor="#999999"))
    ax.text(x0 - 0.12, bar_y + 0.11, "training text" + (f"\n{total:,} characters\n= ids (one each)" if total else ""), ha="right", va="center",
            fontsize=9)
    for row in range(batch):
        piece = tokenizer.decode(windows[row])
        y = bar_y - 0.4 - 0.32 * row
        start = training_text.find(piece) if training_text else -1
        if start >= 0:
            bx = x0 + bar_w * start / total
            ax.add_patch(Rectangle((bx, bar_y), max(0.05, bar_w * length / total), 0.22, facecolor=f"C{row % 10}"))
            ax.text(bx + 0.03, bar_y + 0.3, str(row), color=f"C{row % 10}", fontsize=8.5, ha="center", fontweight="bold")
            where = f"(from character {start:,})"
        else:
            where = ""
        snippet = piece[:60].replace("\n", "⏎")
        ax.text(x0 + 0.1, y + 0.1, f"window {row}: “{snippet}{'…' if len(piece) > 60 else ''}”  {where}",
                fontsize=9, family="monospace", color=f"C{row % 10}", **fonts_for(snippet))
    ax.text(x0, bar_y - 0.4 - 0.32 * batch, f"a batch: {batch} windows × {length} ids = tensor {_shape(windows.shape)}",
            fontsize=9.5, fontweight="bold")
    return fig


# ---- 02: one masked window ---------------------------------------------------------------------------

def masked_window(ids, inputs, labels, outcome, tokenizer, start: int = 0, shown: int = 30):
    """One window through BERT's masking, position by position: the original tokens, the selected positions,
    what the model is shown there ([MASK] / random / kept, coloured), and the labels row (the original id where
    the loss counts, -100 elsewhere). Drawn for positions start .. start + shown of `mask_tokens`' output, in
    blocks of at most 22 positions, so that every cell and id stays readable at a notebook's width."""
    total = ids.numel()
    ids, inputs, labels, outcome = (t.reshape(-1)[start:start + shown].tolist() for t in (ids, inputs, labels, outcome))
    n = len(ids)
    blocks = max(1, -(-n // 22))
    per_block = max(1, -(-n // blocks))  # blocks of equal length, the last one perhaps shorter
    w = 0.4
    block_h = 2.05
    x0 = 1.3
    fig, ax = _canvas(x0 + min(n, per_block) * w + 0.3, 1.15 + blocks * block_h)
    top = 0.55 + blocks * block_h
    for b in range(blocks):
        part = slice(b * per_block, (b + 1) * per_block)
        codes, y = outcome[part], top - 0.5 - b * block_h
        original = [_token(tokenizer.tokens[i]) for i in ids[part]]
        shown_tokens = [_token(tokenizer.tokens[i]) if code != MASKED else "█" for i, code in zip(inputs[part], codes)]
        _cells(ax, x0, y, original, w=w, h=0.34, label="original", size=10)
        _cells(ax, x0, y - 0.38, ["^" if c != NOT_SELECTED else "" for c in codes], w=w, h=0.34, label="selected",
               size=10, edge="white")
        _cells(ax, x0, y - 0.8, shown_tokens, colours=[OUTCOME_COLOURS[c] for c in codes], w=w, h=0.34,
               label="model sees", size=10)
        _cells(ax, x0, y - 1.22, [str(v) if v != IGNORE_INDEX else "·" for v in labels[part]], w=w, h=0.34,
               label="label", size=9, colours=[QUIET if v == IGNORE_INDEX else "white" for v in labels[part]])
        if blocks > 1:
            ax.text(x0, y + 0.45, f"positions {start + b * per_block}–{start + min(n, (b + 1) * per_block) - 1}",
                    fontsize=8.5, color="#555555")
    counts = {code: outcome.count(code) for code in (MASKED, RANDOM, UNCHANGED)}
    selected = n - outcome.count(NOT_SELECTED)
    where = (f"positions {start}–{start + n - 1} of the window's {total}: {selected} selected" if total > n  # a part
             else f"{selected} of {n} positions selected")
    ax.text(0.15, top + 0.3, f"{where}: " + ", ".join(
        f"{counts[c]} {OUTCOME_NAMES[c]}" for c in (MASKED, RANDOM, UNCHANGED)), fontsize=10, fontweight="bold")
    for i, code in enumerate((MASKED, RANDOM, UNCHANGED)):
        ax.add_patch(Rectangle((x0 + i * 1.9, 0.22), 0.25, 0.2, facecolor=OUTCOME_COLOURS[code], edgecolor="#999999"))
        ax.text(x0 + i * 1.9 + 0.32, 0.32, OUTCOME_NAMES[code] + (" (none here)" if not counts[code] else ""),
                va="center", fontsize=9)
    ax.text(x0 + 3 * 1.9, 0.32, "· = -100 (no loss)", va="center", fontsize=9)
    return fig


# ---- 03: attention, with the shapes of the notebook's tensors ---------------------------------------

def attention_flow(attention, x, attention_mask=None):
    """Multi-head self-attention as a flow, labelled with the shapes it has for input `x` (batch, length,
    d_model) in the module `attention` (`MultiHeadAttention`): the projections, the split into heads, the
    scaled scores, the padding bias, the softmax, the weighted values, the merge and the output layer."""
    b, length, d = (int(s) for s in x.shape)
    h, dh = attention.n_heads, attention.d_head
    has_bias = attention.output.bias is not None
    per = d * d + (d if has_bias else 0)
    fig, ax = _canvas(10.5, 4.4)
    bw, bh = 1.55, 0.78

    def step(col, row, title, shape, colour=LAYER):
        x0, y0 = 0.2 + col * 2.05, 2.75 - row * 2.0
        _box(ax, x0, y0, bw, bh, "", colour=colour)
        ax.text(x0 + bw / 2, y0 + bh * 0.66, title, ha="center", va="center", fontsize=9.5)
        ax.text(x0 + bw / 2, y0 + bh * 0.27, shape, ha="center", va="center", fontsize=8.5, family="monospace")
        return x0, y0

    def link(a, b_):
        if a[1] == b_[1]:
            _arrow(ax, (a[0] + bw, a[1] + bh / 2), (b_[0], b_[1] + bh / 2))
        else:
            _arrow(ax, (a[0] + bw / 2, a[1]), (b_[0] + bw / 2, b_[1] + bh), connectionstyle="arc3,rad=0")

    s0 = step(0, 0, "x", _shape((b, length, d)), INPUT)
    s1 = step(1, 0, "Q, K, V = x·W", f"3 × {_shape((b, length, d))}")
    ax.text(s1[0] + bw / 2, s1[1] - 0.18, f"3 × {_count(per)} parameters", ha="center", fontsize=8)
    s2 = step(2, 0, f"split: {h} heads of {dh}", _shape((b, h, length, dh)))
    s3 = step(3, 0, f"Q·Kᵀ / √{dh}", _shape((b, h, length, length)))
    mask = "(no padding mask)" if attention_mask is None else "bias " + _shape((b, 1, 1, length))
    s4 = step(4, 0, "+ padding bias", mask, QUIET if attention_mask is None else LOSS)
    if attention_mask is not None:  # the box shows the bias's own shape: the scores keep theirs
        ax.text(s4[0] + bw / 2 - 0.08, s4[1] - 0.18, f"scores stay {_shape((b, h, length, length))}", ha="right",
                fontsize=8)  # left of the arrow down to the softmax
    s5 = step(4, 1, "softmax over keys", _shape((b, h, length, length)))
    s6 = step(3, 1, "weights · V", _shape((b, h, length, dh)))
    s7 = step(2, 1, "merge heads", _shape((b, length, d)))
    s8 = step(1, 1, "out = merged·W_o", _shape((b, length, d)))
    ax.text(s8[0] + bw / 2, s8[1] - 0.18, f"{_count(per)} parameters", ha="center", fontsize=8)
    s9 = step(0, 1, "out", _shape((b, length, d)), HEAD)
    for a, c in ((s0, s1), (s1, s2), (s2, s3), (s3, s4), (s4, s5)):
        link(a, c)
    for a, c in ((s5, s6), (s6, s7), (s7, s8), (s8, s9)):
        _arrow(ax, (a[0], a[1] + bh / 2), (c[0] + bw, c[1] + bh / 2))
    # the head split drawn on one token's vector: d numbers in h coloured slices
    cell = min(0.12, 9.6 / d)
    y = 1.9
    for i in range(d):
        ax.add_patch(Rectangle((0.3 + i * cell, y), cell, 0.16, facecolor=f"C{i // dh % 10}", edgecolor="white", lw=0.3))
    ax.text(0.3, y + 0.24, f"one token's vector of {d}: head i reads slice i ({dh} numbers); "
            f"attention runs in every head at once, then the slices are joined again", fontsize=8.5)
    ax.text(0.2, 4.2, f"multi-head self-attention: batch {b}, length {length}, d_model {d}, {h} heads",
            fontsize=10, fontweight="bold")
    return fig


# ---- 04: the encoder, from its configuration --------------------------------------------------------

def _parameters(config, kind="mlm") -> dict[str, int]:
    """Parameter counts of the model `config` describes, built on the meta device (no memory, no time)."""
    from ..model import BertForMLM

    with torch.device("meta"):
        model = BertForMLM(config)
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    layer = model.layers[-1] if len(model.layers) else None  # the last: ModernBERT's first has one norm fewer
    out = {"embeddings": count(model.embeddings) + (count(model.embed_project) if hasattr(model, "embed_project") else 0),
           "total": model.num_parameters(), "head": count(model.head.dense) + count(model.head.norm) + model.head.bias.numel()}
    if layer is not None:
        out.update(attention=count(layer.attention), ffn=count(layer.ff_in) + count(layer.ff_out),
                   norms=count(layer.attention_norm) + count(layer.ff_norm), layer=count(layer),
                   norms_first=count(model.layers[0].attention_norm) + count(model.layers[0].ff_norm))
    return out


def encoder_diagram(config):
    """The encoder `config` (a `BertConfig`) describes, bottom to top: the embeddings summed and normalised,
    n_layers × the encoder layer (post-LN or pre-LN as configured), the masked-LM head whose decoder is the
    word-embedding matrix; each box with its shape and parameter count, the total at the top."""
    c = config
    n = _parameters(c)
    d, V = c.d_model, c.vocab_size
    fig, ax = _canvas(8.6, 7.4)
    cx, bw = 4.3, 3.6
    # embeddings
    rows = [("word", f"{V} × {c.embedding_width}")]
    if c.position == "learned":
        rows.append(("position", f"{c.max_len} × {c.embedding_width}"))
    if c.type_vocab_size:
        rows.append(("token type", f"{c.type_vocab_size} × {c.embedding_width}"))
    ew = 7.8 / len(rows)
    for i, (name, shape) in enumerate(rows):
        _box(ax, 0.4 + i * ew, 0.1, ew - 0.25, 0.5, f"{name} embedding\n{shape}", INPUT, size=9)
        if len(rows) > 1:  # each table's line to the sum; one table alone goes straight up (below)
            ax.plot([0.4 + i * ew + (ew - 0.25) / 2, cx], [0.6, 0.86], color=EDGE, lw=1.2)
    # the tables' rows meet in one sum (a + in a circle), which the LayerNorm then reads; one table alone (RoPE, no
    # token types) has nothing to add to, so it goes straight on
    if len(rows) > 1:
        ax.add_patch(Circle((cx, 0.88), 0.09, facecolor="white", edgecolor=EDGE, lw=1.2, zorder=3))
        ax.text(cx, 0.875, "+", ha="center", va="center", fontsize=10, zorder=4)
        ax.text(cx + 0.12, 1.06, "sum", fontsize=9, va="center")
    _arrow(ax, (cx, 0.97 if len(rows) > 1 else 0.6), (cx, 1.15))
    _box(ax, cx - bw / 2, 1.15, bw, 0.42, "LayerNorm" + (f" → projection to {d}" if c.embedding_width != d else ""),
         QUIET, size=8.5)
    ax.text(cx + bw / 2 + 0.15, 1.36, f"embeddings:\n{_count(n['embeddings'])} parameters", fontsize=8.5, va="center")
    # the layer
    top_of_layers = 1.75
    if c.n_layers:
        ly, lh = 1.8, 3.55
        ax.add_patch(FancyBboxPatch((cx - bw / 2 - 0.35, ly), bw + 0.7, lh, boxstyle="round,pad=0.02,rounding_size=0.1",
                                    facecolor="#fbf5ea", edgecolor=EDGE, lw=1.2, ls="--"))
        ax.text(cx + bw / 2 + 0.45, ly + lh / 2, f"× {c.n_layers}\nlayer{'s' if c.n_layers > 1 else ''}", fontsize=12,
                fontweight="bold", va="center")
        ffn = (f"feed-forward: {d} → {c.d_ff} → {d}" if c.ffn == "gelu" else
               f"GeGLU: {d} → 2 × {c.d_ff}, gated → {d}")
        attn = f"multi-head attention: {c.n_heads} heads, {d // c.n_heads} wide each"
        notes = (["RoPE on Q and K"] if c.position == "rope" else []) + (
            [f"global every {c.global_every}, else local, ±{c.local_window // 2}"] if c.global_every > 1 else [])
        if notes:  # a second line, so that the first stays inside its box
            attn += "\n(" + "; ".join(notes) + ")"
        if c.pre_ln:
            first = "LayerNorm" if c.first_layer_norm else "LayerNorm (not in layer 0: it reads\nthe normalised embeddings)"
            parts = [(first, QUIET), (attn, LAYER), ("+ (residual)", "white"), ("LayerNorm", QUIET),
                     (ffn, LAYER), ("+ (residual)", "white")]
        else:
            parts = [(attn, LAYER), ("+ (residual), then LayerNorm", QUIET), (ffn, LAYER),
                     ("+ (residual), then LayerNorm", QUIET)]
        step = (lh - 0.35) / len(parts)
        for i, (text, colour) in enumerate(parts):
            y = ly + 0.15 + i * step
            _box(ax, cx - bw / 2, y, bw, step * 0.72, text, colour, size=8.5)
            if i:
                _arrow(ax, (cx, y - step * 0.28), (cx, y))
        ax.text(cx - bw / 2 - 0.45, ly + lh / 2, f"per layer:\nattention {_count(n['attention'])}\n"
                f"feed-forward {_count(n['ffn'])}\nnorms {_count(n['norms'])}"
                + (f"\n({_count(n['norms_first'])} in layer 0)" if n["norms_first"] != n["norms"] else ""),
                fontsize=8.5, ha="right", va="center")
        _arrow(ax, (cx, 1.57), (cx, ly + 0.15))
        top_of_layers = ly + lh
    y = top_of_layers + 0.2
    if c.pre_ln:
        _box(ax, cx - bw / 2, y, bw, 0.36, "final LayerNorm", QUIET, size=8.5)
        _arrow(ax, (cx, top_of_layers - 0.05), (cx, y))
        y += 0.5
    head = _box(ax, cx - bw / 2, y, bw, 0.62, f"MLM head: dense {d}→{c.embedding_width}, GELU, LayerNorm\n"
                f"decoder = word embedding, + bias {V}", HEAD, size=8.5)
    _arrow(ax, (cx, y - 0.14), (cx, y))
    # the tied decoder: a dashed line back to the word embedding, along the left margin (clear of every label)
    ax.plot([cx - bw / 2, 0.15, 0.15, 0.4], [y + 0.31, y + 0.31, 0.35, 0.35], ls="--", color="#2a9d8f", lw=1.2)
    ax.text(0.3, y + 0.05, "decoder tied to\nthe word embedding:\none matrix", fontsize=8.5, color="#2a9d8f",
            va="top")
    _box(ax, cx - bw / 2, y + 0.82, bw, 0.38, f"logits: one score per vocabulary entry ({V} per position)", LOSS, size=8.5)
    _arrow(ax, (cx, y + 0.62), (cx, y + 0.82))
    kind = "pre-LN" if c.pre_ln else "post-LN, as BERT"
    top = y + 1.55
    fig.set_size_inches(8.6, top)
    ax.set_ylim(0, top)
    ax.text(0.2, top - 0.3, f"{c.n_layers}-layer encoder, d_model {d} ({kind}): {n['total']:,} parameters "
            f"(MLM head {_count(n['head'])})", fontsize=10.5, fontweight="bold")
    return fig


def layer_norm_placement(config):
    """One encoder layer of `config` drawn both ways: post-LN (BERT: LayerNorm after each residual sum) and
    pre-LN (LayerNorm before each sub-layer, one more after the stack), the residual paths as side lines."""
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 4.4), dpi=DPI)
    d = config.d_model
    for ax, pre in zip(axes, (False, True)):
        ax.set_xlim(0, 4)
        ax.set_ylim(0, 5.2)
        ax.axis("off")
        if pre:
            parts = ["LayerNorm", "attention", "+", "LayerNorm", "feed-forward", "+"]
        else:
            parts = ["attention", "+", "LayerNorm", "feed-forward", "+", "LayerNorm"]
        y = 0.25
        entries = []
        for p in parts:
            h = 0.34 if p in ("+", "LayerNorm") else 0.46
            colour = QUIET if p == "LayerNorm" else ("white" if p == "+" else LAYER)
            _box(ax, 1.0, y, 2.0, h, p, colour, size=9)
            entries.append((y, h, p))
            y += h + 0.27
        for (y0, h0, _), (y1, _, _) in zip(entries, entries[1:]):
            _arrow(ax, (2.0, y0 + h0), (2.0, y1))
        # residual lines: from before each sub-layer block to its "+"
        plus = [i for i, (_, _, p) in enumerate(entries) if p == "+"]
        starts = [0, plus[0] + (2 if not pre else 1)]
        for s, p in zip(starts, plus):
            ys = entries[s][0] - 0.12
            yp = entries[p][0] + entries[p][1] / 2
            ax.plot([1.0 - 0.1, 0.55, 0.55], [ys, ys, yp], color="#2a9d8f", lw=1.2)
            _arrow(ax, (0.55, yp), (1.0, yp), colour="#2a9d8f")
        if pre:  # the one LayerNorm outside the layers: once, after the last layer (dashed: not part of this layer)
            top = entries[-1][0] + entries[-1][1]
            ax.text(2.0, top + 0.16, "⋮ the other layers", ha="center", va="bottom", fontsize=8.5, color="#555555")
            _box(ax, 1.0, top + 0.55, 2.0, 0.34, "final LayerNorm", QUIET, size=9, style="round,pad=0.02,rounding_size=0.08")
            ax.patches[-1].set_linestyle("--")
            ax.text(3.1, top + 0.72, "once, after\nthe last layer", fontsize=8, va="center", color="#555555")
        ax.set_title(("pre-LN (later models; BertConfig(pre_ln=True))" if pre else
                      "post-LN (BERT, the course's default)"), fontsize=9.5)
        ax.text(2.0, 0.02, f"x: {d} per token", ha="center", fontsize=8.5)
    fig.text(0.5, 0.01, "green: the residual path, the sub-layer's input added to its output", ha="center", fontsize=8.5,
             color="#2a9d8f")
    return fig


# ---- 05: one training step ---------------------------------------------------------------------------

def training_step(config, inputs, labels, loss: float, model_config=None):
    """One step of `train`, with the notebook's numbers: the batch of windows, the masking, the model at the
    selected positions, the loss there, backward, clipping, the AdamW update at this step's learning rate; and
    beside it the learning rate over the whole budget (`config`, a `TrainConfig`)."""
    from ..training import lr_factor

    b, length = (int(s) for s in inputs.shape)
    selected = int((labels != IGNORE_INDEX).sum())
    vocab = model_config.vocab_size if model_config is not None else "V"
    fig = plt.figure(figsize=(10.5, 3.3), dpi=DPI)
    ax = fig.add_axes((0, 0, 0.68, 1))
    ax.set_xlim(0, 7.14)
    ax.set_ylim(0, 3.3)
    ax.axis("off")
    steps = [("batch", f"{b} windows × {length}\n= {b * length:,} tokens", INPUT),
             ("mask_tokens", f"{selected} selected\n({selected / (b * length):.0%})", QUIET),
             ("model", f"logits at the\nselected: ({selected}, {vocab})", LAYER),
             ("loss", f"cross-entropy at\nthe selected: {loss:.2f}", LOSS),
             ("backward", "gradients of\nevery weight", QUIET),
             ("clip", f"gradient norm\n≤ {config.grad_clip:g}", QUIET),
             ("AdamW", f"update at the\nstep's rate", HEAD)]
    for i, (name, text, colour) in enumerate(steps):
        col, row = i % 4, i // 4
        x, y = 0.15 + col * 1.75, 1.85 - row * 1.5
        if row == 1:
            x = 0.15 + (3 - col) * 1.75
        _box(ax, x, y, 1.45, 1.05, "", colour)
        ax.text(x + 0.725, y + 0.78, name, ha="center", fontsize=9.5, fontweight="bold")
        ax.text(x + 0.725, y + 0.36, text, ha="center", va="center", fontsize=8.5)
        if i and i != 4:
            prev = 0.15 + ((i - 1) % 4 if row == 0 else 3 - (i - 1) % 4) * 1.75
            if row == 0:
                _arrow(ax, (prev + 1.45, y + 0.52), (x, y + 0.52))
            else:
                _arrow(ax, (prev, y + 0.52), (x + 1.45, y + 0.52))
    _arrow(ax, (0.15 + 3 * 1.75 + 0.72, 1.85), (0.15 + 3 * 1.75 + 0.72, 1.4))
    ax.plot([0.15 + 1.75, 0.15 + 0.72, 0.15 + 0.72], [0.35 + 0.52, 0.35 + 0.52, 1.3], color=EDGE, lw=1.2)
    _arrow(ax, (0.15 + 0.72, 1.3), (0.15 + 0.72, 1.85))
    ax.text(0.15 + 0.8, 1.1, "next step", fontsize=8.5)
    ax.text(0.15, 3.1, f"one training step: {config.tokens_per_batch:,} tokens a step, {int(config.masking.select_prob * 100)}% selected",
            fontsize=10, fontweight="bold")
    plot = fig.add_axes((0.74, 0.2, 0.24, 0.62))
    total = config.steps if config.steps is not None else 1000
    xs = list(range(0, total, max(1, total // 200)))
    plot.plot(xs, [config.lr * lr_factor(s, config.warmup_steps, total) for s in xs], color="#457b9d")
    plot.set_title(f"learning rate: warm-up {config.warmup_steps},\nthen linear decay to 0 at {total}", fontsize=9)
    plot.set_xlabel("step", fontsize=9)
    plot.tick_params(labelsize=8)
    plot.grid(alpha=0.3)
    return fig


# ---- 06: blanks and the model's guesses ---------------------------------------------------------------

def blanks_and_guesses(text: str, predictions, shown: int = 8):
    """The first `shown` blanks of `predict_masked`'s answer on `text`: each blank (orange, [MASK]'s colour) in its
    context as the model saw it (the other blanks shaded ▒), and under it the model's candidates with their
    probabilities (green: the right one)."""
    chosen = sorted(predictions, key=lambda p: p.position)[:shown]
    blanked = {p.position for p in predictions}  # every blank, as the model saw it: [MASK], drawn █
    seen = "".join("█" if i in blanked else c for i, c in enumerate(text))
    k = max(len(p.candidates) for p in chosen) if chosen else 0
    cols = max(1, len(chosen))
    height = 1.45 + 0.3 * k
    fig, ax = _canvas(max(7.0, 1.35 * cols + 0.3), height)
    for i, p in enumerate(chosen):
        x = 0.2 + i * 1.35
        # the blank this column predicts in [MASK]'s orange, its neighbours' blanks shaded grey (▒)
        left = seen[max(0, p.position - 4):p.position].replace("\n", "⏎").replace("█", "▒")
        right = seen[p.position + 1:p.position + 5].replace("\n", "⏎").replace("█", "▒")
        half = 0.3 * 9.5  # half a monospace character, in points
        ax.text(x + 0.6, height - 0.65, "█", ha="center", fontsize=9.5, family="monospace",
                color=OUTCOME_COLOURS[MASKED])  # [MASK]'s orange, as in notebook 02's pictures
        for part, side, ha in ((left, -half, "right"), (right, half, "left")):
            ax.annotate(part.replace("⏎", " "), (x + 0.6, height - 0.65), xytext=(side, 0), textcoords="offset points",
                        ha=ha, va="baseline", fontsize=9.5, family="monospace", **fonts_for(part))
            # DejaVu's ⏎ is a small glyph: draw each line break larger, in blue, centred on its character's cell
            for i in (i for i, c in enumerate(part) if c == "⏎"):
                centre = side + 2 * half * (i + 0.5) if ha == "left" else side - 2 * half * (len(part) - i - 0.5)
                ax.annotate("⏎", (x + 0.6, height - 0.65), xytext=(centre, 0), textcoords="offset points",
                            ha="center", va="baseline", fontsize=13, color="#1f77b4", fontweight="bold")
        ax.text(x + 0.6, height - 0.92, f"was {_show_char(p.original)!r}", ha="center", fontsize=8.5, color="#555555")
        for j, (token, prob) in enumerate(p.candidates):
            y = height - 1.3 - 0.3 * j
            right_one = token == p.original
            ax.add_patch(Rectangle((x + 0.35, y), 0.72 * prob, 0.22, facecolor="#2a9d8f" if right_one else "#bbbbbb"))
            ax.text(x + 0.3, y + 0.11, repr(_show_char(token)), ha="right", va="center", fontsize=8.5,
                    **fonts_for(token))
            ax.text(x + 0.38 + 0.72 * prob, y + 0.11, f"{prob:.0%}", va="center", fontsize=8.5)
    right = sum(p.correct for p in chosen)
    shown = f"the first {len(chosen)} of the {len(predictions)} blanks" if len(chosen) < len(predictions) else \
        f"all {len(chosen)} blanks"
    ax.text(0.2, height - 0.3, f"{shown} (orange), the model's top {k} at each (green: the original): first guess right at "
            f"{right} of these {len(chosen)}", fontsize=10, fontweight="bold")
    return fig


# ---- 07: length schedules as windows growing over training -----------------------------------------------

def length_schedules(schedules, tokens_per_batch: int, points: int = 6):
    """Each schedule as the batches it draws at `points` moments of training: a batch is drawn as a block of
    (windows × length), so its area, the tokens per step, stays the same while its shape changes."""
    moments = [i / (points - 1) for i in range(points)]
    longest = max(s.long for s in schedules)
    most = max(s.batch_size_at(0.0, tokens_per_batch) for s in schedules)
    col_w, row_h = 1.45, 1.2
    fig, ax = _canvas(2.2 + col_w * points, 0.7 + row_h * len(schedules))
    unit_x = (col_w - 0.25) / longest
    unit_y = (row_h - 0.4) / max(most, 1)
    for r, s in enumerate(schedules):
        y0 = 0.25 + row_h * (len(schedules) - 1 - r)
        ax.text(0.15, y0 + row_h / 2 - 0.1, s.describe(), fontsize=9.5, va="center", fontweight="bold")
        for c, p in enumerate(moments):
            length, batch = s.length_at(p), s.batch_size_at(p, tokens_per_batch)
            x = 2.1 + c * col_w
            ax.add_patch(Rectangle((x, y0 + 0.2), length * unit_x, batch * unit_y, facecolor=f"C{r}", alpha=0.55,
                                   edgecolor=f"C{r}"))
            ax.text(x, y0 + 0.02, f"{batch} × {length}", fontsize=8)
    for c, p in enumerate(moments):
        ax.text(2.1 + c * col_w, 0.4 + row_h * len(schedules), f"{p:.0%} of training", fontsize=8.5, color="#555555")
    ax.text(0.15, 0.4 + row_h * len(schedules), f"a batch = windows (height)\n× length (width): {tokens_per_batch:,}\n"
            "tokens a step, whatever its shape", fontsize=8.5, va="center")
    return fig


# ---- 08: WordPiece -------------------------------------------------------------------------------------

def wordpiece_match(word: str, vocab, tries_shown: int = 5):
    """Greedy longest-match-first on `word` through `vocab` (a set of pieces, or a tokenizer with `.tokens`):
    one row per piece found, the candidates tried from the longest down (struck out: not in the vocabulary)
    and the one taken (green). A word it cannot cover ends in [UNK], as BERT's encoder does."""
    pieces_in = set(getattr(vocab, "tokens", vocab))
    rows, start, failed = [], 0, False
    while start < len(word):
        tried = []
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            tried.append(piece)
            if piece in pieces_in:
                break
        else:
            rows.append((tried, None))
            failed = True
            break
        rows.append((tried, tried[-1]))
        start += len(tried[-1].removeprefix("##")) if start else len(tried[-1])
    def width_of(piece):
        return 0.11 * len(piece) + 0.3

    def shown_of(tried):
        return tried if len(tried) <= tries_shown + 1 else tried[:2] + ["…"] + tried[-(tries_shown - 2):]

    need = max(sum(width_of(p) + 0.12 if p != "…" else 1.12 for p in shown_of(t)) for t, _ in rows) + 1.2
    fig, ax = _canvas(max(9.0, need + (3.2 if failed else 0)), 0.9 + 0.5 * len(rows))
    for r, (tried, taken) in enumerate(rows):
        y = 0.35 + 0.5 * (len(rows) - 1 - r)
        ax.text(0.2, y + 0.12, f"step {r + 1}", fontsize=9, va="center")
        shown = shown_of(tried)
        x = 1.0
        for piece in shown:
            good = piece == taken
            w = width_of(piece)
            if piece != "…":
                _box(ax, x, y, w, 0.3, piece, HEAD if good else QUIET, size=8.5, family="monospace")
                if not good:
                    ax.plot([x + 0.05, x + w - 0.05], [y + 0.15, y + 0.15], color="#b00020", lw=1)
            else:
                ax.text(x + 0.15, y + 0.12, f"… {len(tried) - len(shown) + 1} more", fontsize=8.5)
                w = 1.0
            x += w + 0.12
        if taken is None:
            ax.text(x, y + 0.12, "nothing fits: the whole word becomes [UNK]", fontsize=9, color="#b00020")
    result = "[UNK]" if failed else " ".join(t for _, t in rows)
    ax.text(0.2, 0.55 + 0.5 * len(rows), f"“{word}” → {result}   (the longest piece that fits, then the longest "
            "## piece from there)", fontsize=10, fontweight="bold")
    return fig


def merge_choice(pairs, pieces, shown: int = 6):
    """The candidate merges of a WordPiece training step (`pairs`: pair -> frequency, `pieces`: piece ->
    frequency, as the notebook counts them) ranked two ways: by frequency (BPE, and Hugging Face's trainer) and
    by WordPiece's score freq(ab) / (freq(a) freq(b)); the pair each rule merges first is green."""
    score = {p: f / (pieces[p[0]] * pieces[p[1]]) for p, f in pairs.items()}
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 0.45 * shown + 1.1), dpi=DPI)
    for ax, (name, values, fmt) in zip(axes, (("by frequency (BPE, HF's trainer)", dict(pairs), "{:,}"),
                                              ("by score (WordPiece)", score, "{:.3f}"))):
        top = sorted(values.items(), key=lambda kv: -kv[1])[:shown][::-1]
        labels = [f"{a} {b}" for (a, b), _ in top]
        ax.barh(labels, [v for _, v in top], color=["#bbbbbb"] * (len(top) - 1) + ["#2a9d8f"])
        for i, (_, v) in enumerate(top):
            ax.text(v, i, " " + fmt.format(v), va="center", fontsize=8.5)
        ax.set_title(name, fontsize=10)
        ax.tick_params(labelsize=9)
        ax.set_xticks([])
        for side in ("top", "right", "bottom"):
            ax.spines[side].set_visible(False)
        ax.set_xlim(0, max(v for _, v in top) * 1.3)
    fig.tight_layout()
    return fig


# ---- 09: pieces or whole words -----------------------------------------------------------------------

def _piece_width(token: str) -> float:
    return 0.08 * len(token) + 0.17


_WORD_GAP = 0.16  # inches between two words' frames; a word's own pieces touch, so a frame reads as one word


def _piece_row(ax, x, y, tokens, word_ids, outcome, size=9):
    """Pieces as cells coloured by outcome, each word framed; returns the x where the row ends."""
    start = x
    words = []
    for i, (t, w) in enumerate(zip(tokens, word_ids)):
        width = _piece_width(t)
        if words and not (words[-1][0] == w and w >= 0):
            x += _WORD_GAP
        code = int(outcome[i])
        colour = OUTCOME_COLOURS[code] or "white"
        shown = "█" if code == MASKED else t
        ax.add_patch(Rectangle((x, y), width, 0.32, facecolor=colour, edgecolor="#dddddd", lw=0.5))
        ax.text(x + width / 2, y + 0.16, shown, ha="center", va="center", fontsize=size, family="monospace",
                **fonts_for(shown))
        if words and words[-1][0] == w and w >= 0:
            words[-1][2] = x + width
        else:
            words.append([w, x, x + width])
        x += width
    for w, x0, x1 in words:
        if w >= 0:
            ax.add_patch(Rectangle((x0 - 0.02, y - 0.04), x1 - x0 + 0.04, 0.4, facecolor="none", edgecolor="black",
                                   lw=1.6))
    return x - start


def _lines_of_words(tokens, word_ids, room: float) -> list[range]:
    """Positions cut into lines at most `room` inches wide, never inside a word (a word wider than a line gets
    a line of its own)."""
    groups, i = [], 0
    while i < len(tokens):  # a word's pieces, or one special token
        j = i + 1
        while j < len(tokens) and word_ids[i] >= 0 and word_ids[j] == word_ids[i]:
            j += 1
        groups.append(range(i, j))
        i = j
    lines, start, used = [], 0, 0.0
    for group in groups:
        width = sum(_piece_width(tokens[k]) for k in group) + _WORD_GAP
        if used and used + width > room:
            lines.append(range(start, group.start))
            start, used = group.start, 0.0
        used += width
    if start < len(tokens):
        lines.append(range(start, len(tokens)))
    return lines


def pieces_and_words(tokens, word_ids, by_pieces, by_words, shown: int = 40, width: float = 11.5):
    """The same pieces masked two ways: piece by piece (`by_pieces`, outcome codes of `mask_tokens`) and word by
    word (`by_words`, of `mask_whole_words`); a frame is one word, as the tokenizer's word ids say. The first
    `shown` pieces are drawn, in lines that fit `width` inches (a notebook's width at 100%), the two maskings of
    each line one above the other."""
    tokens = [str(t) for t in tokens][:shown]
    word_ids = [int(w) for w in word_ids][:shown]
    by_pieces, by_words = [int(c) for c in by_pieces][:shown], [int(c) for c in by_words][:shown]
    left = 1.55
    lines = _lines_of_words(tokens, word_ids, width - left - 0.2)
    block = 1.05
    height = 0.55 + block * len(lines) + 0.55
    fig, ax = _canvas(width, height)
    for n, line in enumerate(lines):
        top = height - 0.55 - block * n
        for y, outcome, name in ((top - 0.45, by_pieces, "by pieces"), (top - 0.9, by_words, "by whole words")):
            ax.text(0.15, y + 0.16, name, fontsize=9.5, va="center", fontweight="bold" if n == 0 else "normal",
                    color="black" if n == 0 else "#555555")
            _piece_row(ax, left, y, [tokens[k] for k in line], [word_ids[k] for k in line],
                       [outcome[k] for k in line])
    for k, (outcome, name) in enumerate(((by_pieces, "by pieces"), (by_words, "by whole words"))):
        hit = {w for w, c in zip(word_ids, outcome) if c != NOT_SELECTED and w >= 0}
        partly = sum(1 for w in hit if any(c == NOT_SELECTED for v, c in zip(word_ids, outcome) if v == w))
        ax.text(0.15 + 5.4 * k, 0.25, f"{name}: {len(hit)} words touched, {partly} of them only in part",
                fontsize=9.5, color="#333333")
    present = [(c, colour) for c, colour in ((MASKED, "orange"), (RANDOM, "red"), (UNCHANGED, "green"))
               if c in by_pieces or c in by_words]  # only the outcomes drawn get a legend
    ordinary = sum(1 for w in word_ids if w >= 0)
    special = len(word_ids) - ordinary
    ax.text(0.15, height - 0.3, f"{ordinary} pieces in {len({w for w in word_ids if w >= 0})} words"
            + (f" (and {special} special tokens)" if special else "") + "; a frame is a word; "
            + ", ".join(f"{colour}: {OUTCOME_NAMES[c]}" for c, colour in present)
            + (" (▮ = shown as [MASK])" if any(c == MASKED for c, _ in present) else ""), fontsize=10)
    return fig


# ---- 10: a sentence pair ---------------------------------------------------------------------------------

def pair_embeddings(tokens, token_type_ids, shown: int = 14):
    """BERT's input for a pair, as the three rows of vectors that are summed (BERT's Figure 2, drawn from a real
    pair): the tokens, their token embeddings, the segment embedding each gets from its token type (A or B), and
    the position embedding. Long pairs show their start, where A ends and B starts, and their end, with "…" for
    what is left out."""
    tokens, types = [_token(str(t)) for t in tokens], [int(t) for t in token_type_ids]
    n = len(tokens)
    a_len = sum(1 for t in types if t == 0)  # [CLS], A and the first [SEP]
    if n <= shown:
        index = list(range(n))
    else:  # the first tokens, the last 3 of A (its [SEP] among them) and the first 3 of B, the last tokens
        keep = set(range(4)) | set(range(max(0, a_len - 3), min(n, a_len + 3))) | set(range(n - 3, n))
        index = []
        for i in sorted(keep):
            if index and i != index[-1] + 1:
                index.append(-1)
            index.append(i)
    w = 0.64
    fig, ax = _canvas(1.9 + w * len(index) + 0.3, 3.3)
    rows = [("input", lambda i: tokens[i], "white"), ("token", lambda i: f"E[{tokens[i].strip('[]')}]", INPUT),
            ("segment", lambda i: "E_A" if types[i] == 0 else "E_B", None),
            ("position", lambda i: f"E_{i}", QUIET)]
    for r, (name, label, colour) in enumerate(rows):
        y = 2.4 - r * 0.65
        ax.text(1.75, y + 0.2, name, ha="right", va="center", fontsize=9.5)
        for c, i in enumerate(index):
            x = 1.9 + c * w
            if i < 0:
                ax.text(x + w / 2, y + 0.2, "…", ha="center", va="center")
                continue
            fill = colour or ("#fde2c8" if types[i] == 0 else "#d9d2f0")
            text = label(i)
            _box(ax, x + 0.03, y, w - 0.06, 0.4, text if len(text) <= 8 else text[:7] + "…", fill,
                 size=8 if len(text) > 6 else 9, **fonts_for(text))
        if r:
            ax.text(1.9 + w * len(index) + 0.05, y + 0.2, "+" if r < 3 else "", fontsize=11, va="center")
    ax.text(0.15, 3.05, f"a pair of {n} tokens: segment A = {a_len} (orange, with [CLS] and the first [SEP]), "
            f"B = {n - a_len} (violet); each input vector = token + segment + position", fontsize=9.5,
            fontweight="bold")
    return fig


def pair_kinds(document_a, document_b, at: int = 2):
    """How the three kinds of pairs are cut, drawn from two real documents (lists of segments): IsNext takes A
    and the segment that follows it in the same document; NotNext takes B from another document (BERT); SOP's
    swapped pair puts the same two in the other order (ALBERT's sentence-order prediction)."""
    def short(s):
        s = " ".join(str(s).split())
        return s if len(s) <= 34 else s[:33] + "…"

    a, nxt, other = document_a[at], document_a[at + 1], document_b[min(at, len(document_b) - 1)]
    fig, ax = _canvas(10.2, 2.9)
    kinds = [("IsNext (NSP label 0)", a, nxt, "#fde2c8", "#fde2c8", "the next segment of the same document"),
             ("NotNext (NSP label 1)", a, other, "#fde2c8", "#d9d2f0", "a segment of another document"),
             ("SOP: swapped (label 1)", nxt, a, "#fde2c8", "#fde2c8", "the same two segments, order reversed")]
    for r, (name, first, second, c1, c2, note) in enumerate(kinds):
        y = 2.05 - r * 0.75
        ax.text(0.15, y + 0.17, name, fontsize=9.5, fontweight="bold", va="center")
        _box(ax, 2.4, y, 0.55, 0.34, "[CLS]", QUIET, size=8.5)
        _box(ax, 3.0, y, 2.9, 0.34, short(first), c1, size=9)
        _box(ax, 5.95, y, 0.55, 0.34, "[SEP]", QUIET, size=8.5)
        _box(ax, 6.55, y, 2.9, 0.34, short(second), c2, size=9)
        _box(ax, 9.5, y, 0.55, 0.34, "[SEP]", QUIET, size=8.5)
        ax.text(6.55, y - 0.15, "B: " + note, fontsize=9, color="#444444")
    ax.text(0.15, 2.65, "orange: one document; violet: another", fontsize=9.5)
    return fig


# ---- 11: the classifier on top of the encoder ------------------------------------------------------------

def classifier_diagram(model, tokens, pooling: str | None = None):
    """Fine-tuning's model on one real example: the pretrained encoder reads `tokens`; the pooler takes the
    [CLS] vector ("cls") or the mean of the real positions ("mean"), as `model` (a
    `BertForSequenceClassification`) is set or as `pooling` asks; a linear classifier gives one score per label."""
    c = model.config
    pooling = pooling or model.pooling
    if pooling not in ("cls", "mean"):
        raise ValueError(f"pooling is 'cls' or 'mean', got {pooling!r}.")
    labels = getattr(model, "label_names", None) or [f"label {i}" for i in range(model.classifier.out_features)]
    shown = [str(t) for t in tokens][:14]
    more = len(tokens) - len(shown)
    w = 0.5
    fig, ax = _canvas(max(8.0, 2.2 + w * (len(shown) + 1)), 4.2)
    x0 = 1.6
    _cells(ax, x0, 0.25, [_token(t) for t in shown] + (["…"] if more else []), w=w, size=9, label="input")
    enc = _box(ax, x0, 0.9, w * (len(shown) + (1 if more else 0)), 0.75,
               f"pretrained encoder: {c.n_layers} layers × {c.d_model} wide (every weight fine-tuned, unless frozen)",
               LAYER, size=9)
    for i in range(len(shown)):
        used = (i == 0) if pooling == "cls" else True
        colour = "#2a9d8f" if used else "#cccccc"
        ax.plot([x0 + i * w + w / 2, x0 + i * w + w / 2], [1.65, 1.95], color=colour, lw=1.5)
        ax.add_patch(Rectangle((x0 + i * w + 0.08, 1.95), w - 0.16, 0.22, facecolor=colour, alpha=0.6))
    pooled_x = x0 + (w / 2 if pooling == "cls" else w * len(shown) / 2)
    what = "the [CLS] vector" if pooling == "cls" else "the mean of the real positions' vectors"
    pooler = f"pooler: tanh(dense({what}))"
    box_w = max(3.5, 0.072 * len(pooler) + 0.4)
    _box(ax, pooled_x - box_w / 2, 2.55, box_w, 0.45, pooler, HEAD, size=9)
    _arrow(ax, (pooled_x, 2.17), (pooled_x, 2.55))
    _box(ax, pooled_x - box_w / 2, 3.3, box_w, 0.45, f"classifier: {c.d_model} → {len(labels)} ({', '.join(map(str, labels))})",
         LOSS, size=9)
    _arrow(ax, (pooled_x, 3.0), (pooled_x, 3.3))
    ax.text(0.15, 3.95, f"pooling = {pooling!r}: " + ("only position 0 feeds the classifier" if pooling == "cls" else
                                                     "every real position feeds the classifier"),
            fontsize=10, fontweight="bold")
    return fig


# ---- 12: what save_pretrained writes, and who reads it ---------------------------------------------------

def export_diagram(folder):
    """The real files `save_pretrained` wrote into `folder` (names and sizes), the Auto classes that read them,
    and the pipeline built on those."""
    files = sorted(p for p in Path(folder).iterdir() if p.is_file())
    if not files:
        raise FileNotFoundError(f"{folder} holds no files: run save_pretrained into it first.")
    fig, ax = _canvas(9.5, 0.9 + 0.36 * max(len(files), 4))
    top = 0.55 + 0.36 * max(len(files), 4)
    ax.text(0.15, top, f"{Path(folder).name}/", fontsize=10, fontweight="bold", family="monospace")
    mid = top - 0.3 - 0.18 * len(files)
    readers = {"model": (4.3, mid + 0.46), "tokenizer": (4.3, mid - 0.24)}  # where each class's box starts
    for i, path in enumerate(files):
        y = top - 0.42 - 0.36 * i
        size = path.stat().st_size
        shown = f"{size / 1e6:.1f} MB" if size >= 1e5 else f"{size / 1e3:.1f} kB"
        for_tokenizer = "token" in path.name or path.name == "vocab.txt"
        colour = HEAD if path.suffix == ".safetensors" else (INPUT if for_tokenizer else QUIET)
        _box(ax, 0.3, y, 3.1, 0.28, f"{path.name}   {shown}", colour, size=8.5, family="monospace")
        _arrow(ax, (3.45, y + 0.14), readers["tokenizer" if for_tokenizer else "model"])  # who reads this file
    _box(ax, 4.3, mid + 0.25, 2.2, 0.42, "AutoModelForMaskedLM", LAYER, size=9)
    _box(ax, 4.3, mid - 0.45, 2.2, 0.42, "AutoTokenizer", INPUT, size=9)
    _box(ax, 7.2, mid - 0.12, 2.1, 0.5, 'pipeline("fill-mask")', HEAD, size=9)
    _arrow(ax, (6.5, mid + 0.46), (7.2, mid + 0.2))
    _arrow(ax, (6.5, mid - 0.24), (7.2, mid))
    ax.text(4.3, mid - 0.75, "offline: from_pretrained(folder), nothing downloaded", fontsize=8.5, color="#555555")
    return fig


# ---- 13: the two attention masks ---------------------------------------------------------------------------

def attention_masks(tokens, labels=None):
    """Who may read whom, for the same `tokens`: the masked LM's full attention and the left-to-right model's
    causal triangle (query rows, key columns; dark = may attend), and under each what it is trained to predict
    (`labels`: the masked LM's, -100 where no loss; the left-to-right model predicts every next token)."""
    tokens = [_token(str(t)) for t in tokens]
    n = len(tokens)
    chosen = [] if labels is None else [i for i, v in enumerate(labels) if int(v) != IGNORE_INDEX]
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 4.6), dpi=DPI)
    for ax, causal in zip(axes, (False, True)):
        seen = tokens if causal else ["█" if i in chosen else t for i, t in enumerate(tokens)]
        allowed = torch.ones(n, n)
        if causal:
            allowed = allowed.tril()
        ax.imshow(allowed, cmap="Blues", vmin=0, vmax=1.4)
        ax.set_xticks(range(n), seen, fontsize=10, **(fonts_for(tokens) or {"family": "monospace"}))
        ax.set_yticks(range(n), seen, fontsize=10, **(fonts_for(tokens) or {"family": "monospace"}))
        ax.set_xlabel("key (read)", fontsize=9)
        ax.set_ylabel("query", fontsize=9)
        if causal:
            targets = tokens[1:] + ["·"]
            title = (f"left-to-right: {n * (n + 1) // 2} of {n * n} pairs; predicts the next token at every position "
                     "but the last (nothing follows it in the window)")
        else:
            targets = [tokens[i] if i in chosen else "·" for i in range(n)]
            title = f"masked LM: all {n * n} pairs; predicts the {len(chosen)} selected positions"
        ax.set_title(_wrap(title, 42), fontsize=9.5)
        for i, t in enumerate(targets):  # quoted, so that a comma is not read as a full stop
            ax.text(n + 0.2, i, f"→ '{t}'" if t != "·" else "→ —", va="center", fontsize=10,
                    color="#b00020" if t != "·" else "#999999", **(fonts_for(t) or {"family": "monospace"}))
    fig.tight_layout()
    return fig


# ---- 14: Muon, singular values before and after Newton-Schulz ------------------------------------------------

def singular_values(update, orthogonalised, name: str = "the update"):
    """The singular values of a weight update before and after Muon's Newton-Schulz iteration: a few large
    directions and many small ones, made about equal (near 1), which is Muon's whole idea."""
    before = torch.linalg.svdvals(update.float()).tolist()
    after = torch.linalg.svdvals(orthogonalised.float()).tolist()
    fig, ax = plt.subplots(figsize=(7.5, 3.0), dpi=DPI)
    ax.plot(range(1, len(before) + 1), [b / before[0] for b in before], "o-", ms=3, label=f"{name}, scaled to its largest")
    ax.plot(range(1, len(after) + 1), after, "o-", ms=3, label="after Newton-Schulz")
    ax.set_xlabel("singular value, largest first")
    ax.set_ylabel("size")
    ax.set_title(f"{tuple(update.shape)} matrix: largest/smallest {before[0] / max(before[-1], 1e-12):.0f}× before, "
                 f"{max(after) / max(min(after), 1e-12):.1f}× after", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8.5)
    fig.tight_layout()
    return fig


def recipe_card(config, name: str, optimizer: str = "AdamW"):
    """A speedrun recipe on its clock, from its `TrainConfig` (a budget in seconds): the learning rate as the
    loop sets it (warm-up, then linear decay to zero at the bell) and the window length, both functions of the
    share of the budget spent; the training masking rate in the title."""
    if not config.on_the_clock:
        raise ValueError("recipe_card draws a recipe on the clock: give a TrainConfig with `seconds`.")
    minutes = config.seconds / 60
    share = [i / 200 for i in range(201)]
    fig, ax = plt.subplots(figsize=(8.0, 2.6), dpi=DPI)
    ax.plot([s * minutes for s in share], [config.lr_factor_at(0, s * config.seconds) for s in share],
            label=f"learning rate (peak {config.lr:g})")
    ax2 = ax.twinx()
    ax2.plot([s * minutes for s in share], [config.schedule.length_at(s) for s in share], color="C1",
             label="window length")
    ax.set_xlabel("minutes of training")
    ax.set_ylabel("share of the peak rate")
    ax2.set_ylabel("window length", color="C1")
    ax.set_title(f"{name}: {config.masking.select_prob:.0%} of positions selected in training, "
                 f"{config.schedule.describe()}, {optimizer}, {config.tokens_per_batch:,} tokens a step", fontsize=10)
    lines = ax.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
    ax.legend(lines, [line.get_label() for line in lines], fontsize=8.5, loc="center right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


# ---- 15: ELECTRA -------------------------------------------------------------------------------------------

def electra_diagram(tokens, shown_to_generator, sampled, selected, replaced, scores, shown: int = 24):
    """ELECTRA on one real window: the original tokens, what the generator is shown ([MASK] at most selected
    positions), its samples at every selected position, the discriminator's input (the samples written in) with
    the positions really replaced in red, and the discriminator's probability of "replaced" at every position."""
    n, total = min(shown, len(tokens)), len(tokens)
    in_window = sum(bool(s) for s in selected), sum(bool(r) for r in replaced)  # the whole window's, for the title
    tokens, shown_to_generator, sampled = ([_token(str(t)) for t in x][:n] for x in (tokens, shown_to_generator, sampled))
    selected = [bool(s) for s in selected][:n]
    replaced = [bool(r) for r in replaced][:n]
    probs = [float(p) for p in scores][:n]
    w = min(0.36, 9.0 / n)
    fig, ax = _canvas(2.4 + w * n + 0.2, 4.8)
    x0 = 2.4
    _cells(ax, x0, 3.45, tokens, w=w, label="original", size=9)
    _cells(ax, x0, 2.85, shown_to_generator, w=w, label="generator sees", size=9,
           colours=[OUTCOME_COLOURS[MASKED] if t == "█" else ("#c4c4c4" if s else "white")
                    for t, s in zip(shown_to_generator, selected)])
    _cells(ax, x0, 2.25, [t if s else "" for t, s in zip(sampled, selected)], w=w, label="generator samples", size=9,
           colours=["#dbe9f6" if s else "white" for s in selected], edge="#dddddd")  # pale blue: a sample
    _cells(ax, x0, 1.65, sampled, w=w, label="discriminator sees", size=9,
           colours=["#f7c6c6" if r else "white" for r in replaced])
    for i, p in enumerate(probs):  # each bar in a frame of height 1, its value written in it
        p = float(p)
        ax.add_patch(Rectangle((x0 + i * w + 0.04, 0.45), w - 0.08, 0.9, facecolor="none", edgecolor="#cccccc", lw=0.6))
        ax.add_patch(Rectangle((x0 + i * w + 0.04, 0.45), w - 0.08, 0.9 * p, facecolor="#e76f51" if replaced[i] else "#8d99ae"))
        ax.text(x0 + (i + 0.5) * w, 0.45 + 0.9 * p / 2, f"{p:.2f}".lstrip("0"), ha="center", va="center", fontsize=8.5,
                color="white" if p > 0.25 else "black")
    ax.plot([x0, x0 + w * n], [0.45 + 0.45, 0.45 + 0.45], ls="--", color="black", lw=0.8, zorder=3)
    ax.text(x0 - 0.12, 0.95, "P(replaced)", ha="right", va="center", fontsize=9)
    ax.text(x0 - 0.12, 0.65, "(box top: 1;\ndashed line: 0.5)", ha="right", va="center", fontsize=8.5, color="#555555")
    k = sum(selected)
    same = sum(1 for s, r in zip(selected, replaced) if s and not r)
    where = f"the first {n} of the window's {total} positions" if total > n else f"{n} positions"
    whole = f"\nin the whole window, {in_window[0]} sampled and {in_window[1]} replaced" if total > n else ""
    ax.text(0.15, 4.05, f"{where}: {k} sampled, {k - same} really replaced (red), {same} sampled back to the "
            f"original{whole}", fontsize=10, fontweight="bold", va="bottom", linespacing=1.4)
    ax.text(0.15, 0.12, "the discriminator is scored at every position; the generator only at the selected ones. "
            "A bar's colour is the truth (red: really replaced), its height the prediction",
            fontsize=8.5, color="#555555")
    return fig


# ---- 16: a modern encoder ---------------------------------------------------------------------------------

def rope_rotation(query, key, positions=(0, 3, 7), pair: int = 0, theta: float = 10_000.0):
    """RoPE on one pair of numbers of a head: the same query and key vectors turned by their positions, drawn as
    arrows; the angle between query at m and key at n is the same whenever m - n is (their dot product too)."""
    from ..rope import rope_frequencies

    d = query.numel()
    speed = float(rope_frequencies(d, theta)[pair])
    q = torch.tensor([float(query[pair]), float(query[pair + d // 2])])
    k = torch.tensor([float(key[pair]), float(key[pair + d // 2])])

    def turn(v, angle):
        c, s = math.cos(angle), math.sin(angle)
        return torch.tensor([v[0] * c - v[1] * s, v[0] * s + v[1] * c])

    fig, axes = plt.subplots(1, len(positions), figsize=(3.0 * len(positions), 3.2), dpi=DPI)
    top = float(max(q.norm(), k.norm())) * 1.6  # room for the labels beyond the arrows' tips
    for ax, m in zip(axes, positions):
        qm, km = turn(q, m * speed), turn(k, (m + 2) * speed)
        for v, colour, name in ((qm, "#e76f51", f"q at {m}"), (km, "#457b9d", f"k at {m + 2}")):
            ax.annotate("", xy=(float(v[0]), float(v[1])), xytext=(0, 0), arrowprops=dict(arrowstyle="-|>", color=colour, lw=2))
            tip = v / max(float(v.norm()), 1e-9)  # the label just beyond the tip, on the arrow's line
            inside = lambda z: max(-0.78 * top, min(0.78 * top, z))  # noqa: E731 -- kept clear of the panel's edge
            ax.text(inside(float(v[0] + 0.22 * top * tip[0])), inside(float(v[1] + 0.14 * top * tip[1])), name,
                    color=colour, fontsize=9, ha="center", va="center", zorder=4,
                    bbox=dict(facecolor="white", edgecolor="none", alpha=0.8, pad=1))
        ax.set_xlim(-top, top)
        ax.set_ylim(-top, top)
        ax.set_aspect("equal")
        ax.axhline(0, color="#dddddd", lw=0.8)
        ax.axvline(0, color="#dddddd", lw=0.8)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(f"this pair's share of q·k: {float(qm @ km):.3f}", fontsize=9.5)
    fig.suptitle(f"pair {pair} of a {d}-wide head, turned {speed:.3g} rad a position; the key always two positions "
                 "after the query", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    return fig


def layer_pattern(config, length: int = 64):
    """Which keys each layer of `config` lets a query read: global layers see the whole window, local layers a
    band of local_window // 2 either side (ModernBERT's alternation), drawn for one window of `length`."""
    from ..attention import sliding_window_bias

    n = config.n_layers
    fig, axes = plt.subplots(1, n, figsize=(2.3 * n + 0.5, 2.9), dpi=DPI, squeeze=False)
    for i, ax in enumerate(axes[0]):
        if config.is_global(i) or config.global_every == 1:
            seen = torch.ones(length, length)
            kind = "global"
        else:
            seen = (sliding_window_bias(length, config.local_window)[0, 0] == 0).float()
            kind = f"local ±{config.local_window // 2}"
        ax.imshow(seen, cmap="Blues", vmin=0, vmax=1.4)
        ax.set_title(f"layer {i}: {kind}", fontsize=9.5)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_xlabel(f"{int(seen.sum()):,} of {length * length:,} pairs", fontsize=8.5)
    fig.suptitle(f"{n} layers, global every {config.global_every}: who reads whom in a window of {length}", fontsize=10)
    fig.tight_layout()
    return fig
