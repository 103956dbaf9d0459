"""Pictures for the notebooks: each function returns a matplotlib Figure (or an HTML string for text).

Figures are small (dpi 80) because notebooks are stored with their outputs.
"""
from __future__ import annotations

import functools
import html
import math
import re
import warnings

import matplotlib.pyplot as plt
from matplotlib import font_manager
from matplotlib.ft2font import FT2Font
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter, MaxNLocator, MultipleLocator

from ..masking import MASKED, NOT_SELECTED, OUTCOME_NAMES, RANDOM, UNCHANGED

DPI = 80
OUTCOME_COLOURS = {NOT_SELECTED: None, MASKED: "#f4a261", RANDOM: "#e76f51", UNCHANGED: "#8ab17d"}


@functools.lru_cache(maxsize=None)
def _charmap(path: str) -> frozenset[int]:
    try:
        return frozenset(FT2Font(path).get_charmap())
    except (OSError, RuntimeError):
        return frozenset()


@functools.lru_cache(maxsize=64)
def _fallback_font(missing: frozenset[str]) -> str | None:
    """The installed font with the most of `missing`'s glyphs (None if none has any); warns about the rest."""
    best, best_count = None, 0
    for font in font_manager.fontManager.ttflist:
        if font.name.startswith("Last Resort"):  # matplotlib's own: "has" every glyph, as a box with its code
            continue
        count = sum(ord(c) in _charmap(font.fname) for c in missing)
        if count > best_count:
            best, best_count = font.name, count
    if best_count < len(missing):
        shown = "".join(sorted(missing))[:20]
        warnings.warn(f"No installed font has glyphs for {shown!r}: charts show them as empty boxes (the text "
                      "cells are unaffected). Install a font that covers them, e.g. `apt install fonts-noto-cjk` "
                      "for Korean, Chinese or Japanese, then restart the kernel.", stacklevel=3)
    return best


def fonts_for(labels) -> dict:
    """Keyword arguments for tick labels: nothing when matplotlib's default font (DejaVu Sans) has every
    glyph; else that font first and an installed font with the missing glyphs after it (matplotlib >= 3.6
    falls back glyph by glyph), so a chart of Korean or Chinese text shows its characters, not boxes."""
    default = font_manager.findfont("DejaVu Sans")
    missing = frozenset(c for label in labels for c in str(label) if c.strip() and ord(c) not in _charmap(default))
    fallback = _fallback_font(missing) if missing else None
    return {"fontfamily": ["DejaVu Sans", fallback]} if fallback else {}


def _show_char(token: str) -> str:
    """Make invisible characters visible, and [MASK] one character wide so the text keeps its shape."""
    return {"\n": "⏎", " ": "␣", "[MASK]": "█"}.get(token, token)


def masked_text_html(tokens_in: list[str], tokens_out: list[str], outcome, title: str = "") -> str:
    """The text as the model sees it, each selected position coloured by its outcome.

    tokens_in: the original tokens; tokens_out: what the model is shown; outcome: codes from masking.
    Hovering a coloured token shows the original.
    """
    spans = []
    for orig, shown, code in zip(tokens_in, tokens_out, [int(c) for c in outcome]):
        text = html.escape(_show_char(shown) if code != NOT_SELECTED else shown).replace("\n", "<br>")
        colour = OUTCOME_COLOURS[code]
        if colour is None:
            spans.append(text)
        else:
            tip = html.escape(f"{OUTCOME_NAMES[code]}: was {orig!r}")
            look = f"color:{colour}" if code == MASKED else f"background:{colour};border-radius:3px"  # █ in orange
            spans.append(f'<span title="{tip}" style="{look};padding:0 1px">{text}</span>')
    # the key names only the marks this text shows (a masked space is █; ␣ and ⏎ appear where one is shown)
    marks = [("█", "[MASK]")] + [(mark, name) for mark, token, name in (("␣", " ", "space"), ("⏎", "\n", "new line"))
                                 if any(code != NOT_SELECTED and shown == token for shown, code in
                                        zip(tokens_out, [int(c) for c in outcome]))]
    legend = " ".join(f'<span style="background:{c};padding:0 4px;border-radius:3px">{OUTCOME_NAMES[k]}</span>'
                      for k, c in OUTCOME_COLOURS.items() if c) + (
        " &nbsp;(" + ", ".join(f"{mark} = {name}" for mark, name in marks) + "; hover for the original)")
    head = f"<b>{html.escape(title)}</b><br>" if title else ""
    return (f'<div style="font-family:monospace;line-height:1.6">{head}{"".join(spans)}'
            f'<div style="margin-top:4px;font-size:90%">{legend}</div></div>')


def plot_frequencies(counts: dict[str, int], top: int = 40):
    """Bar chart of the `top` commonest characters."""
    items = sorted(counts.items(), key=lambda kv: -kv[1])[:top]
    total = sum(counts.values())
    fig, ax = plt.subplots(figsize=(10, 3), dpi=DPI)
    ax.bar(range(len(items)), [n / total for _, n in items], color="#457b9d")
    shown = [_show_char(c) for c, _ in items]
    ax.set_xticks(range(len(items)), shown, fontsize=11, **fonts_for(shown))
    for label in ax.get_xticklabels():  # letters and digits monospaced: in DejaVu Sans, l and I look alike
        if label.get_text().isascii() and label.get_text().isalnum():
            label.set_fontfamily("DejaVu Sans Mono")
    ax.set_ylabel("share of characters")
    ax.set_title(f"The {len(items)} commonest of {len(counts)} distinct characters")
    fig.tight_layout()
    return fig


def plot_attention(weights, labels, title: str = "", ax=None, vmax: float | None = None):
    """Heat map of one (query x key) attention matrix; rows sum to 1. `vmax` fixes the top of the colour
    scale (several heads drawn side by side share one, so equal colours mean equal weights)."""
    weights = weights.detach().cpu().numpy() if hasattr(weights, "detach") else weights
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(5, 4.5), dpi=DPI)
    im = ax.imshow(weights, cmap="viridis", vmin=0, vmax=vmax or max(float(weights.max()), 1e-9))
    if weights.shape[0] == weights.shape[1]:  # white frames on the diagonal: each query's own position, so that
        for i in range(weights.shape[0]):     # a bright cell beside a frame reads as a neighbour
            ax.add_patch(Rectangle((i - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="white", lw=0.8, alpha=0.8))
    shown = [_show_char(t) for t in labels]
    size = 10 if len(shown) <= 20 else max(5, 200 // len(shown))  # longer texts: smaller labels that do not overlap
    ax.set_xticks(range(len(shown)), shown, fontsize=size, **fonts_for(shown))
    ax.set_yticks(range(len(shown)), shown, fontsize=size, **fonts_for(shown))
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query")
    ax.set_title(title, fontsize=10)
    if own:
        fig.colorbar(im, ax=ax, shrink=0.8)
        fig.tight_layout()
        return fig
    return ax.figure


def plot_attention_heads(attn, labels, title: str = ""):
    """All heads of one layer side by side, on one colour scale (0 to the largest weight of any head);
    attn: (heads, length, length)."""
    heads = attn.shape[0]
    cols = min(2, heads)  # two a row: each map large enough to read a cell beside the diagonal at 100%
    rows = (heads + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.3 * cols + 1.2, 4.3 * rows + 0.4), dpi=DPI, squeeze=False)
    fig.subplots_adjust(left=0.08, right=0.86, bottom=0.08, top=0.92, wspace=0.25, hspace=0.3)
    top = max(float(attn.max()), 1e-9)
    for h, ax in enumerate(axes.flat):
        if h < heads:
            plot_attention(attn[h], labels, f"head {h}", ax=ax, vmax=top)
        else:
            ax.axis("off")
    bar = fig.add_axes((0.89, 0.25, 0.02, 0.5))
    fig.colorbar(axes.flat[0].images[0], cax=bar, label="attention weight")
    fig.suptitle(title)
    return fig


def plot_history(history: dict, baselines: dict[str, float] | None = None, x: str = "tokens", title: str = ""):
    """Loss and masked accuracy during training: training batches (thin) and held-out evaluations (dots).

    x: "tokens" (tokens seen) or "seconds" (wall time); baselines: name -> loss, drawn as dashed lines.
    """
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 3.5), dpi=DPI)
    xs = history["tokens"] if x == "tokens" else history["seconds"]
    ex = history["eval_tokens"] if x == "tokens" else history["eval_seconds"]
    ax_loss.plot(xs, history["loss"], lw=0.8, alpha=0.6, label="training batch")
    ax_loss.plot(ex, history["val_loss"], "o-", label="held-out")
    ax_acc.plot(xs, history["accuracy"], lw=0.8, alpha=0.6, label="training batch")
    ax_acc.plot(ex, history["val_accuracy"], "o-", label="held-out")
    for i, (name, value) in enumerate((baselines or {}).items()):
        ax_loss.axhline(value, ls="--", color=f"C{i + 2}", lw=1, label=name)
    ax_loss.set_ylabel("masked loss (nats)")
    ax_acc.set_ylabel("masked accuracy")
    for ax in (ax_loss, ax_acc):
        ax.set_xlabel("tokens seen" if x == "tokens" else "seconds")
        if x == "tokens":
            _tokens_axis(ax)
        ax.grid(alpha=0.3)
    ax_acc.legend(fontsize=8)
    # the loss falls from the top left to the bottom right: its legend, in two columns, sits on the right just under
    # the top, between the uniform line (ln V, at the top) and the unigram line, where the falling curve has passed
    ax_loss.legend(fontsize=8, ncol=2, loc="upper right", bbox_to_anchor=(1.0, 0.9))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_topk(candidates: list[tuple[str, float]], title: str = "", ax=None, original: str | None = None):
    """Horizontal bars: the top-k candidate tokens and their probabilities; with `original`, the original token's
    bar green and the others grey (as notebook 06's picture of blanks in context), and the title says when the
    original is not among them."""
    if ax is None:  # fixed margins rather than tight_layout, which would double the drawing time
        height = max(1.6, 0.35 * len(candidates) + 0.8)  # room for the title even with one bar
        fig, ax = plt.subplots(figsize=(4, height), dpi=DPI)
        fig.subplots_adjust(left=0.2, right=0.95, bottom=0.5 / height + 0.1, top=1 - 0.3 / height)
    names = [repr(_show_char(t)) for t, _ in candidates][::-1]
    colours = ["#2a9d8f" if original is None or t == original else "#bbbbbb" for t, _ in candidates][::-1]
    bars = ax.barh(names, [p for _, p in candidates][::-1], color=colours)
    ax.bar_label(bars, [f"{p:.1%}" for _, p in candidates][::-1], padding=2, fontsize=8)
    if original is not None:
        title += " (green)" if any(t == original for t, _ in candidates) else " (not among these)"
    if fonts := fonts_for(names):
        ax.set_yticks(range(len(names)), names, **fonts)
    # the whole 0-1 scale when a guess is likely; else a scale that shows the small bars (each labelled)
    top = max((p for _, p in candidates), default=1.0)
    step = 0.05 if top > 0.1 else 0.01  # small bars: a scale in steps of 1%, so the longest fills most of it
    right = 1 if top > 0.4 else math.ceil(top * 1.3 / step) * step
    ax.set_xlim(0, right * 1.18)  # room for the label of the longest bar
    # ticks in percent, as the bars' labels: the finest round spacing that gives at most six, written with as many
    # decimals as that spacing needs (so no two ticks read alike)
    spacing = next(s for s in (0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5) if right * 1.18 / s <= 6)
    decimals = 0 if spacing >= 0.01 else 1 if spacing >= 0.005 else 2
    ax.xaxis.set_major_locator(MultipleLocator(spacing))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{100 * v:.{decimals}f}%"))
    ax.set_xlabel("probability")
    ax.set_title(title, fontsize=10)
    return ax.figure


def predictions_html(text: str, predictions, focus: int | None = None, title: str = "") -> str:
    """The text with each blank replaced by the model's first guess: green if right, red if wrong
    (hover for the original and the top candidates); the blank in `focus` is underlined."""
    by_position = {p.position: (i, p) for i, p in enumerate(predictions)}
    spans = []
    for position, char in enumerate(text):
        if position not in by_position:
            spans.append(html.escape(char).replace("\n", "<br>"))
            continue
        i, p = by_position[position]
        guess = p.candidates[0][0]
        colour = "#2a9d8f" if p.correct else "#e63946"
        tip = html.escape(f"blank {i}: was {p.original!r}; " + ", ".join(f"{t!r} {v:.0%}" for t, v in p.candidates[:3]))
        line = ";text-decoration:underline 2px" if i == focus else ""
        spans.append(f'<span title="{tip}" style="background:{colour};color:white;border-radius:3px;'
                     f'padding:0 1px{line}">{html.escape(_show_char(guess))}</span>')
    head = f"<b>{html.escape(title)}</b><br>" if title else ""
    legend = ('<span style="background:#2a9d8f;color:white;padding:0 4px;border-radius:3px">right</span> '
              '<span style="background:#e63946;color:white;padding:0 4px;border-radius:3px">wrong</span>'
              " &nbsp;(each blank shows the model's first guess; hover for the original and the runners-up)")
    return (f'<div style="font-family:monospace;line-height:1.6">{head}{"".join(spans)}'
            f'<div style="margin-top:4px;font-size:90%">{legend}</div></div>')


def attention_html(context: list[str], weights, target: int, title: str = "") -> str:
    """Where one blank looked: the characters of its window shaded by the attention they got (darker =
    more; one weight per character, summing to 1), the blank itself framed in red. HTML rather than a
    plot: the browser draws 64 labelled cells for free, matplotlib would take ~60 ms per redraw."""
    weights = [float(w) for w in weights]
    top = max(weights) or 1.0
    cells = []
    for i, (char, w) in enumerate(zip(context, weights)):
        frame = "outline:2px solid #e63946;" if i == target else ""
        # a blank keeps its orange █ at any shade: in white it would read as a gap in the text
        ink = OUTCOME_COLOURS[MASKED] if char == "[MASK]" else ("white" if w / top > 0.55 else "black")
        cells.append(f'<span title="{w:.1%}" style="background:rgba(69,123,157,{w / top:.2f});color:{ink};{frame}'
                     f'padding:0 1px">{html.escape(_show_char(char))}</span>')
    head = f"<b>{html.escape(title)}</b><br>" if title else ""
    return f'<div style="font-family:monospace;line-height:1.8;margin-top:6px">{head}{"".join(cells)}</div>'


def _tokens_axis(ax) -> None:
    """Token counts as 400k / 2.4M: plain numbers of six or seven digits run into each other."""
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1e6:g}M" if v >= 1e6 else f"{v / 1e3:g}k"
                                               if v >= 1e3 else f"{v:g}"))


# how a fixed-length run, the baseline the schedules are read against, is drawn in every curriculum plot: a wide,
# light band beneath the others, so that neither it nor a schedule whose line runs on it is hidden
BASELINE_BAND = dict(lw=4.5, alpha=0.5, zorder=1.5)


def schedule_colour(label: str, others: list[str]) -> str:
    """One colour per schedule wherever it is drawn: fixed blue, step orange, the linear 16->L by 50% green,
    other variants the next colours in the order given."""
    if label.startswith("fixed"):
        return "C0"
    if label.startswith("step"):
        return "C1"
    if re.fullmatch(r"linear 16->\d+ by 50%", label):
        return "C2"
    variants = [x for x in others if not (x.startswith(("fixed", "step")) or re.fullmatch(r"linear 16->\d+ by 50%", x))]
    return f"C{3 + variants.index(label) % 7}" if label in variants else "C9"


def plot_curves(runs: list[dict], x: str = "tokens", title: str = "", ax=None, baselines: dict | None = None,
                colours_from: list[str] | None = None, mixed: bool | None = None):
    """Held-out loss of several training runs against tokens seen or wall time. Runs with the same label
    (several seeds) share a colour: their mean loss as a line with dots, each seed as a thin line (tokens
    only); a single run shown beside such means is dashed and named "(one run)", so that it does not read as a mean; a fixed-length run is drawn as a wide light band beneath the others, the baseline they are read against. Against wall time the x of a point is the *median* over seeds: one run slowed by other work on
    the machine would otherwise stretch the whole curve. `baselines` (name -> loss) are dashed lines.
    `colours_from`: every label the reader may pick from, so that a schedule keeps its colour whatever else is shown."""
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 3.6), dpi=DPI)
    key = "eval_tokens" if x == "tokens" else "eval_seconds"
    labels = list(dict.fromkeys(r["label"] for r in runs))
    if mixed is None:  # some labels are means of seeds (a caller that shows a selection can say so for all of it)
        mixed = any(sum(r["label"] == label for r in runs) > 1 for label in labels)
    several = False
    for label in labels:
        colour = schedule_colour(label, colours_from or labels)
        group = [r["history"] for r in runs if r["label"] == label]
        for h in group:
            if len(group) > 1 and x == "tokens":
                ax.plot(h[key], h["val_loss"], color=colour, lw=0.7, alpha=0.35)
                several = True
        n = min(len(h["val_loss"]) for h in group)
        median_x = [sorted(h[key][j] for h in group)[(len(group) - 1) // 2] for j in range(n)]
        mean_y = [sum(h["val_loss"][j] for h in group) / len(group) for j in range(n)]
        alone = len(group) == 1 and mixed  # one run beside means of seeds: drawn and named so as not to read alike
        seeds = (" (one run)" if alone else "" if len(group) == 1 else f" (mean of {len(group)} seeds)"
                 if x == "tokens" else f" (mean loss of {len(group)} seeds, at their median time)")
        style = {"ls": "--", "lw": 1.8, "zorder": 3} if alone else {"marker": "o", "ms": 3}
        ax.plot(median_x, mean_y, color=colour, label=label + seeds,
                **{**style, **(BASELINE_BAND if label.startswith("fixed") else {})})
    for (name, value), style in zip((baselines or {}).items(), ("--", ":", "-.")):
        ax.axhline(value, ls=style, color="grey", lw=1, label=f"{name}: {value:.2f}")
    if several:
        ax.plot([], [], color="grey", lw=0.7, alpha=0.5, label="thin lines: single seeds")
    ax.set_xlabel("training tokens seen" if x == "tokens" else "wall time (s)")
    if x == "tokens":
        _tokens_axis(ax)
    ax.set_ylabel("held-out masked loss (nats)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    if title:
        ax.set_title(title, fontsize=10)
    ax.figure.tight_layout()
    return ax.figure


def plot_sentence_heads(runs: list[dict]):
    """Notebook 10, section 3: the sentence head's accuracy over training, one panel per head (NSP, SOP), one colour
    per kind of test set (the same in both panels) and one line style per seed (solid, dashed, dash-dotted: seeds 0, 1, 2). Runs of other variants
    (the NSP head at another learning rate) are left out: the notebook compares those in numbers."""
    from matplotlib.lines import Line2D

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), dpi=DPI, sharey=True)
    styles = ("-", "--", "-.")
    for ax, objective in zip(axes, ("NSP", "SOP")):
        shown = [f"training plays, new {objective}", f"held-out {objective}"]
        shown += ["held-out SOP, equal halves"] if objective == "SOP" else []
        colour = dict(zip(shown, ("#e76f51", "#457b9d", "#2a9d8f")))  # one colour a role, the same in both panels
        role = dict(zip(shown, ("training plays, new pairs", "held-out plays", "held-out, equal halves")))
        for run in (r for r in runs if r["variant"] == f"MLM + {objective}"):
            h = run["history"]
            for name in shown:
                ax.plot(h["eval_step"], [e["nsp_accuracy"] for e in h["val_" + name]], styles[run["seed"] % 3],
                        color=colour[name])
        handles = [Line2D([], [], color=c, label=role[name]) for name, c in colour.items()]
        seeds = sorted({r["seed"] for r in runs})
        handles += [Line2D([], [], linestyle="", label="")] * max(0, len(seeds) - len(handles))  # sets left, seeds right
        handles += [Line2D([], [], color="black", linestyle=styles[s % 3], label=f"seed {s}") for s in seeds]
        ax.axhline(0.5, color="black", linewidth=0.6)
        ax.set_title(f"MLM + {objective}: the head on {objective} pairs", fontsize=10)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        ax.legend(handles=handles, fontsize=9, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.16),
                  columnspacing=1.5)
    axes[0].set_ylabel("sentence-head accuracy")
    fig.tight_layout()
    return fig


def figure_png(fig) -> bytes:
    """The figure as PNG bytes, closed afterwards: what a widget displays. Figures here set their own
    margins, so no second "tight" drawing pass is needed (the notebook's default display does one)."""
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


def pieces_html(pieces_in: list[str], pieces_out: list[str], outcome, word_ids, title: str = "",
                guesses: dict[int, tuple[str, bool]] | None = None) -> str:
    """Word pieces as BERT reads them (notebooks 08, 09): each word framed, its pieces shown with their `##`,
    selected pieces coloured by outcome (hover for the original). `guesses` (position -> (guess, right))
    adds a model's guess under a piece, green when right, red when wrong."""
    words, current, last = [], [], None
    for i, (orig, shown, code, w) in enumerate(zip(pieces_in, pieces_out, [int(c) for c in outcome],
                                                    [int(x) for x in word_ids])):
        if current and (w != last or w < 0):
            words.append(current)
            current = []
        last = w
        colour = OUTCOME_COLOURS[code]
        label = html.escape(shown)
        if colour is not None:
            tip = html.escape(f"{OUTCOME_NAMES[code]}: was {orig!r}")
            label = f'<span title="{tip}" style="background:{colour};border-radius:3px;padding:0 2px">{label}</span>'
        if guesses and i in guesses:
            guess, right = guesses[i]
            label += (f'<sub style="color:{"#2a9d8f" if right else "#b00020"};font-weight:bold">'
                      f'{html.escape(guess)}</sub>')
        current.append(label)
    if current:
        words.append(current)
    boxes = "".join(f'<span style="display:inline-block;border:1px solid #bbb;border-radius:4px;padding:1px 3px;'
                    f'margin:2px">{"&thinsp;".join(w)}</span>' for w in words)
    present = {int(c) for c in outcome}  # the legend names only the outcomes this text shows
    legend = " ".join(f'<span style="background:{c};padding:0 4px;border-radius:3px">{OUTCOME_NAMES[k]}</span>'
                      for k, c in OUTCOME_COLOURS.items() if c and k in present) + \
        " &nbsp;(a frame = one word; hover for the original)"
    head = f"<b>{html.escape(title)}</b><br>" if title else ""
    return (f'<div style="font-family:monospace;line-height:1.9">{head}{boxes}'
            f'<div style="margin-top:4px;font-size:90%">{legend}</div></div>')
