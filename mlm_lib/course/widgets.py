"""Interactive views for the notebooks. Each is a thin shell around a pure function.

The pure functions (`masking_view`, `attention_view`, ...) compute what is shown and are what the tests
call; the widget functions only wire ipywidgets controls to them. Inside an observer, output goes
through `with out: out.clear_output(wait=True); ...`, the pattern that JupyterLab 4 renders.
Building a widget calls its update once, so it also works headless (papermill, nbval).
"""
from __future__ import annotations

import html
from contextlib import contextmanager

import torch

from ..curriculum import LengthSchedule
from ..devices import model_device
from ..masking import BERT_MASKING, NOT_SELECTED, OUTCOME_NAMES, mask_tokens, mask_whole_words
from ..predict import Prediction, masked_positions, predict_masked
from ..wordpiece import WordPieceTokenizer
from .viz import (BASELINE_BAND, _show_char, attention_html, figure_png, masked_text_html, pieces_html,
                  plot_attention, plot_curves, plot_topk, predictions_html, schedule_colour)


def _error_html(message: str) -> str:
    return f'<div style="color:#b00020;font-family:monospace">⚠ {html.escape(message)}</div>'


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _placeholder(box, what: str):
    """Where the widget cannot be drawn (GitHub, nbviewer, a notebook not yet run or not trusted), show a
    sentence instead of its Python repr (`VBox(children=(...`)."""
    original = box._repr_mimebundle_

    def bundle(**kwargs):
        data = original(**kwargs)
        if data:
            data["text/plain"] = f"[{what}: an interactive widget. Run the notebook to use it; what is shown above is its starting state.]"
        return data

    box._repr_mimebundle_ = bundle
    return box


class _Once:
    """Guards an observer against the updates that its own changes to other controls set off:
    `with guard() as first:` is True in the outer call, False in a nested one."""

    def __init__(self):
        self.busy = False

    @contextmanager
    def __call__(self):
        if self.busy:
            yield False
            return
        self.busy = True
        try:
            yield True
        finally:
            self.busy = False


def _known(text: str, tokenizer) -> None:
    """The tokenizer would quietly turn unknown characters into [UNK]; a learner should be told instead."""
    if isinstance(tokenizer, WordPieceTokenizer):
        unknown = [w for w in dict.fromkeys(tokenizer._words(text)) if tokenizer.word_pieces_of(w) is None]
        if unknown:
            shown = [repr(u if len(u) <= 24 else u[:20] + "...") for u in unknown[:5]]
            raise ValueError(f"The vocabulary cannot spell {', '.join(shown)}: BERT would read "
                             "[UNK] there (a character it never saw, or a word over 100 characters). Change them.")
        return
    unknown = sorted({c for c in text if c not in tokenizer.tokens})
    if unknown:
        ordinary = tokenizer.vocab_size - len(tokenizer.special_ids)
        raise ValueError(f"The tokenizer has never seen {', '.join(map(repr, unknown))}: its vocabulary is the "
                         f"{ordinary} characters of the text it was built from (and {len(tokenizer.special_ids)} "
                         "special tokens). Replace or remove them.")


# ---- 02 masking ---------------------------------------------------------------------------------------

def masking_view(text: str, tokenizer, select_prob: float = BERT_MASKING.select_prob,
                 mask_prob: float = BERT_MASKING.mask_prob, random_prob: float = BERT_MASKING.random_prob,
                 seed: int = 0, whole_words: bool = False) -> tuple[str, dict[str, int]]:
    """Mask `text` with BERT's rule; return (coloured HTML, counts per outcome). With a WordPiece tokenizer
    the pieces are shown word by word, and `whole_words=True` masks whole words (notebook 09)."""
    if not text or not text.strip():
        raise ValueError("Type some text to mask.")
    _known(text, tokenizer)
    if isinstance(tokenizer, WordPieceTokenizer):
        return _wordpiece_masking_view(text, tokenizer, select_prob, mask_prob, random_prob, seed, whole_words)
    ids = tokenizer.encode(text)
    inputs, _, outcome = mask_tokens(ids, tokenizer, select_prob=select_prob, mask_prob=mask_prob,
                                     random_prob=random_prob, generator=torch.Generator().manual_seed(seed),
                                     return_outcome=True)
    counts = {name: int((outcome == code).sum()) for code, name in OUTCOME_NAMES.items()}
    shown = [tokenizer.tokens[i] for i in inputs.tolist()]
    summary = (f"{len(ids)} character{'s' if len(ids) != 1 else ''}, {len(ids) - counts['not selected']} selected "
               f"({(len(ids) - counts['not selected']) / len(ids):.0%}): " +
               ", ".join(f"{v} {k}" for k, v in counts.items() if k != "not selected"))
    return masked_text_html(list(text), shown, outcome, title=summary), counts


def _wordpiece_masking_view(text, tokenizer, select_prob, mask_prob, random_prob, seed, whole_words):
    ids, word_ids = tokenizer.encode(text, return_word_ids=True)
    g = torch.Generator().manual_seed(seed)
    if whole_words:
        inputs, _, outcome = mask_whole_words(ids, word_ids, tokenizer, select_prob=select_prob, mask_prob=mask_prob,
                                              random_prob=random_prob, generator=g, return_outcome=True)
    else:
        inputs, _, outcome = mask_tokens(ids, tokenizer, select_prob=select_prob, mask_prob=mask_prob,
                                         random_prob=random_prob, generator=g, return_outcome=True)
    counts = {name: int((outcome == code).sum()) for code, name in OUTCOME_NAMES.items()}
    selected = outcome != NOT_SELECTED
    words = int(word_ids.max()) + 1 if (word_ids >= 0).any() else 0
    touched = len(set(word_ids[selected].tolist()))
    whole = sum(bool(selected[word_ids == w].all()) for w in set(word_ids[selected].tolist()))
    ordinary = int((word_ids >= 0).sum())  # special tokens typed in ([CLS], [SEP]) are never selected
    special = len(ids) - ordinary
    summary = (f"{_plural(ordinary, 'piece')} in {_plural(words, 'word')}"
               + (f" (and {_plural(special, 'special token')})" if special else "")
               + f"; {_plural(int(selected.sum()), 'piece')} selected ({int(selected.sum()) / max(ordinary, 1):.0%}) "
               f"in {_plural(touched, 'word')}, {whole} of them whole: " +
               ", ".join(f"{v} {k}" for k, v in counts.items() if k != "not selected"))
    return pieces_html([tokenizer.tokens[i] for i in ids.tolist()], [tokenizer.tokens[i] for i in inputs.tolist()],
                       outcome, word_ids, title=summary), counts


def masking_widget(tokenizer, text: str, seed: int = 0, whole_words: bool = False):
    """Sliders for the three probabilities and the seed, a text box, and the masked text, coloured.
    With a WordPiece tokenizer, pieces are shown word by word and a box switches whole-word masking."""
    import ipywidgets as w
    from IPython.display import HTML, display

    box = w.Textarea(value=text, layout=w.Layout(width="100%", height="80px"), description="text")
    select = w.FloatSlider(value=BERT_MASKING.select_prob, min=0, max=1, step=0.05, description="select_prob")
    mask = w.FloatSlider(value=BERT_MASKING.mask_prob, min=0, max=1, step=0.05, description="[MASK]")
    rand = w.FloatSlider(value=BERT_MASKING.random_prob, min=0, max=1, step=0.05, description="random")
    seed_box = w.IntSlider(value=seed, min=0, max=50, description="seed")
    wordpiece = isinstance(tokenizer, WordPieceTokenizer)
    whole = w.Checkbox(value=whole_words, description="whole words", indent=False)
    out = w.Output()
    guard = _Once()

    def update(change=None):
        with guard() as first:
            if not first:
                return
            # [MASK] and random share the selected positions: moving one past what the other leaves lowers it
            if change is not None and change["owner"] is mask and mask.value + rand.value > 1:
                rand.value = round(1 - mask.value, 2)
            if change is not None and change["owner"] is rand and mask.value + rand.value > 1:
                mask.value = round(1 - rand.value, 2)
            with out:
                out.clear_output(wait=True)
                try:
                    shown, _counts = masking_view(box.value, tokenizer, select.value, mask.value, rand.value,
                                                  seed_box.value, whole.value)
                except ValueError as err:  # empty text, characters outside the vocabulary: say so
                    shown = _error_html(str(err))
                display(HTML(shown))

    for control in (box, select, mask, rand, seed_box, whole):
        control.observe(update, names="value")
    update()
    rows = [box, w.HBox([select, mask]), w.HBox([rand, seed_box])] + ([whole] if wordpiece else []) + [out]
    return _placeholder(w.VBox(rows), "masking explorer")


# ---- 03 attention -------------------------------------------------------------------------------------

def attention_view(model, tokenizer, text: str, layer: int = 0, head: int = 0):
    """Heat map of one head's attention on `text` (a matplotlib Figure)."""
    if not text:
        raise ValueError("Type some text to look at.")
    _known(text, tokenizer)
    if not 0 <= layer < model.config.n_layers or not 0 <= head < model.config.n_heads:
        raise ValueError(f"layer must be in 0..{model.config.n_layers - 1}, head in 0..{model.config.n_heads - 1}.")
    model.eval()
    with torch.no_grad():
        weights = model.attentions(tokenizer.encode(text)[None])[layer][0, head]
    return plot_attention(weights, list(text), title=f"layer {layer}, head {head}")


def attention_widget(model, tokenizer, text: str):
    """Pick a layer and a head; see where each character of `text` looks."""
    import ipywidgets as w
    import matplotlib.pyplot as plt
    from IPython.display import display

    layer = w.Dropdown(options=list(range(model.config.n_layers)), value=0, description="layer")
    head = w.IntSlider(value=0, min=0, max=model.config.n_heads - 1, description="head")
    out = w.Output()

    def update(_=None):
        with out:
            out.clear_output(wait=True)
            fig = attention_view(model, tokenizer, text, layer.value, head.value)
            display(fig)
            plt.close(fig)

    layer.observe(update, names="value")
    head.observe(update, names="value")
    update()
    return _placeholder(w.VBox([w.HBox([layer, head]), out]), "attention explorer")


# ---- 00 overview --------------------------------------------------------------------------------------

def blanks_as_spaces(text: str, tokenizer, blank: str = "_") -> str:
    """`text` with a space in place of each `blank`, ready for `predict_masked`, which puts [MASK] at those
    positions whatever stands there (the space only keeps every other position where it was; every course model
    reads a space). Refuses, by name, a text with no blank, a literal '[MASK]', or a character the tokenizer
    never saw. Notebook 00 uses it, and the fill-in-the-blanks explorer."""
    if not isinstance(blank, str) or len(blank) != 1:
        raise ValueError(f"blank is the one character that marks a missing one (default '_'), got {blank!r}.")
    if "[MASK]" in text:  # predict_masked's advice (positions=[...]) is not this function's way: name ours
        raise ValueError(f"The text holds a literal '[MASK]': here a missing character is written {blank} (one "
                         f"{blank} a character), e.g. 'To be, or n{blank}t to be'.")
    if blank not in text:
        raise ValueError(f"Put at least one {blank} where a character is missing, e.g. 'To be, or n{blank}t to be'.")
    _known(text.replace(blank, ""), tokenizer)
    return text.replace(blank, " ")


def fill_blanks_view(model, tokenizer, text: str, blank: str = "_", k: int = 3):
    """Let the model fill every `blank` character of `text`. Returns (filled text, HTML with the filled-in
    characters highlighted and their runners-up on hover, the list of `Prediction`s)."""
    spaced = blanks_as_spaces(text, tokenizer, blank)
    positions = [i for i, c in enumerate(text) if c == blank]
    predictions = predict_masked(model, tokenizer, spaced, positions, k=k)
    guesses = {p.position: p for p in predictions}
    filled = "".join(guesses[i].candidates[0][0] if i in guesses else c for i, c in enumerate(text))
    spans = []
    for i, c in enumerate(filled):
        if i in guesses:
            tip = html.escape(", ".join(f"{t!r} {v:.0%}" for t, v in guesses[i].candidates))
            spans.append(f'<span title="{tip}" style="background:#457b9d;color:white;border-radius:3px;padding:0 1px">'
                         f'{html.escape(_show_char(c))}</span>')  # a guessed space or new line stays visible
        else:
            spans.append(html.escape(c))
    return filled, f'<div style="font-family:monospace;font-size:120%">{"".join(spans)}</div>', predictions


def fill_blanks_widget(model, tokenizer, text: str):
    """A text box: type a sentence with _ for missing characters; the model's guesses appear below."""
    import ipywidgets as w
    from IPython.display import HTML, display

    box = w.Text(value=text, description="your text", layout=w.Layout(width="100%"))
    out = w.Output()

    def update(_=None):
        with out:
            out.clear_output(wait=True)
            try:
                _, shown, _ = fill_blanks_view(model, tokenizer, box.value)
            except ValueError as err:
                shown = _error_html(str(err))
            display(HTML(shown))

    box.observe(update, names="value")
    update()
    return _placeholder(w.VBox([box, out]), "fill-in-the-blanks box")


# ---- 06 predictions -----------------------------------------------------------------------------------

# characters: one update took 85 ms on 300 (the benchmark command's interaction figure, 2-core CPU, 2026-11-25), so
# about a second at this limit; the newcomer probe measured 35 s a keystroke on 110,000
MAX_EXPLORED = 3000


@torch.no_grad()
def prediction_view(model, tokenizer, text: str, positions=None, *, select_prob: float = BERT_MASKING.select_prob,
                    seed: int = 0, k: int = 5, focus: int = 0, window: int = 64):
    """Mask `text` at `positions` (or at random: each character with probability `select_prob`, drawn with `seed`)
    and let the model fill the blanks.

    Returns (HTML: the text with the guesses coloured right/wrong, then where blank number `focus` looked;
    a Figure: that blank's top-k candidates; the list of `Prediction`s).
    """
    if len(text) > MAX_EXPLORED:  # each edit recomputes every blank: a long text would stall the widget
        raise ValueError(f"The explorer reads at most {MAX_EXPLORED:,} characters at a time ({len(text):,} given): "
                         "paste a passage, not a whole text (predict_masked takes any length).")
    _known(text, tokenizer)
    predictions = predict_masked(model, tokenizer, text, positions, k=k, window=window, select_prob=select_prob,
                                 seed=seed)
    if not 0 <= focus < len(predictions):
        raise ValueError(f"There {'is' if len(predictions) == 1 else 'are'} {_plural(len(predictions), 'blank')}: "
                         f"the blank to inspect must be between 0 and {len(predictions) - 1}.")
    right = sum(p.correct for p in predictions)
    html_text = predictions_html(text, predictions, focus,
                                 title=f"{_plural(len(predictions), 'blank')}, {right} filled in right "
                                       f"({right / len(predictions):.0%})")
    # the attention of the focused blank, in a window around it, with every blank masked as above
    ids = tokenizer.encode(text)
    ids[[p.position for p in predictions]] = tokenizer.mask_id
    width = min(window, len(ids), model.config.max_len)
    p = predictions[focus]
    start = max(0, min(p.position - width // 2, len(ids) - width))
    model.eval()
    attention = model.attentions(ids[None, start:start + width])[-1][0].mean(0)[p.position - start]
    context = [tokenizer.tokens[i] if i == tokenizer.mask_id else text[start + j]
               for j, i in enumerate(ids[start:start + width].tolist())]
    html_text += attention_html(context, attention, p.position - start,
                                title=f"where blank {focus} (framed) looked: last layer, mean over heads; "
                                      "darker = more attention (hover for the share)")
    fig = plot_topk(p.candidates, title=f"blank {focus}: was {_show_char(p.original)!r}",
                    original=p.original)
    return html_text, fig, predictions


def prediction_widget(model, tokenizer, text: str, seed: int = 0, *, select_prob: float = BERT_MASKING.select_prob,
                      k: int = 5):
    """The masked-prediction explorer: type text, mask at random (select_prob, seed) or at chosen positions,
    pick a blank, and see the guesses, the top-k bar chart and the blank's attention; it starts from `seed`,
    `select_prob` and `k`, as the static picture drawn with the same values. A WordPiece model gets its own
    explorer: pieces word by word, whole words masked or not (notebook 09)."""
    if isinstance(tokenizer, WordPieceTokenizer):
        return _wordpiece_prediction_widget(model, tokenizer, text, seed)
    import ipywidgets as w
    from IPython.display import HTML, Image, display

    box = w.Textarea(value=text, layout=w.Layout(width="100%", height="70px"), description="text")
    select = w.FloatSlider(value=select_prob, min=0.05, max=0.5, step=0.05, description="select_prob")
    seed_box = w.IntSlider(value=seed, min=0, max=max(50, seed), description="seed")
    chosen = w.Text(value="", placeholder="e.g. 3, 10, 11 (empty: at random)", description="positions")
    focus = w.IntSlider(value=0, min=0, max=0, description="blank")
    top_k = w.IntSlider(value=k, min=1, max=max(10, k), description="top k")
    out = w.Output()
    guard = _Once()

    def update(_=None):
        with guard() as first:
            if not first:
                return
            with out:
                out.clear_output(wait=True)
                try:
                    positions = ([int(p) for p in chosen.value.replace(",", " ").split()] if chosen.value.strip()
                                 else None)
                except ValueError:
                    display(HTML(_error_html("positions: whole numbers separated by commas, e.g. 3, 10, 11.")))
                    return
                try:
                    _known(box.value, tokenizer)
                    # the blank slider follows the number of blanks *before* drawing, so it never points past them
                    focus.max = max(0, len(masked_positions(box.value, positions, select_prob=select.value,
                                                            seed=seed_box.value)) - 1)
                    html_text, fig, _ = prediction_view(model, tokenizer, box.value, positions, select_prob=select.value,
                                                        seed=seed_box.value, focus=focus.value, k=top_k.value)
                except ValueError as err:  # empty text, unknown characters, positions outside the text
                    display(HTML(_error_html(str(err))))
                    return
                display(HTML(html_text))
                display(Image(figure_png(fig)))

    for control in (box, select, seed_box, chosen, focus, top_k):
        control.observe(update, names="value")
    update()
    return _placeholder(w.VBox([box, w.HBox([select, seed_box]), w.HBox([chosen, focus]), top_k, out]),
                        "masked-prediction explorer")


@torch.no_grad()
def wordpiece_prediction_view(model, tokenizer, text: str, *, select_prob: float = BERT_MASKING.select_prob,
                              seed: int = 0, k: int = 5, focus: int = 0, whole_words: bool = True):
    """The prediction explorer for a WordPiece model (notebook 09): mask whole words (or single pieces), each
    with probability `select_prob` (drawn with `seed`), all shown as [MASK], and let the model fill them in. Returns (HTML: the pieces, word by
    word, each blank with the model's first guess; a Figure: blank `focus`'s top-k; the `Prediction`s)."""
    if not text or not text.strip():
        raise ValueError("Type some text for the model to read.")
    _known(text, tokenizer)
    ids, word_ids = tokenizer.encode(text, return_word_ids=True)
    if len(ids) > model.config.max_len:
        raise ValueError(f"The text is {len(ids)} pieces long; this model reads at most {model.config.max_len}. "
                         "Shorten it.")
    g = torch.Generator().manual_seed(seed)
    mask = mask_whole_words if whole_words else (lambda i, _w, t, **kw: mask_tokens(i, t, **kw))
    _, _, outcome = mask(ids, word_ids, tokenizer, select_prob=select_prob, mask_prob=1.0, random_prob=0.0,
                         generator=g, return_outcome=True)
    chosen = outcome != NOT_SELECTED
    if not chosen.any():  # nothing drawn in a short text: take one word (or piece) so there is a blank
        pick = int(torch.randint(len(ids), (1,), generator=g))
        chosen = (word_ids == word_ids[pick]) if whole_words and word_ids[pick] >= 0 else \
            (torch.arange(len(ids)) == pick)
    positions = chosen.nonzero().flatten().tolist()
    if not 0 <= focus < len(positions):
        raise ValueError(f"There {'is' if len(positions) == 1 else 'are'} {_plural(len(positions), 'blank')}: "
                         f"the blank to inspect must be between 0 and {len(positions) - 1}.")
    inputs = ids.clone()
    inputs[chosen] = tokenizer.mask_id
    model.eval()
    device = model_device(model)  # computed where the model is, shown from the CPU
    probs = model.logits_at(inputs[None].to(device), chosen[None].to(device)).float().softmax(-1).cpu()
    probs[:, tokenizer.special_ids] = 0.0
    top = probs.topk(min(k, probs.size(-1)), dim=-1)
    pieces = [tokenizer.tokens[i] for i in ids.tolist()]
    predictions = [Prediction(p, pieces[p], [(tokenizer.tokens[i], float(v)) for v, i in zip(vals, idx)])
                   for p, vals, idx in zip(positions, top.values.tolist(), top.indices.tolist())]
    right = sum(p.correct for p in predictions)
    outcome = torch.where(chosen, torch.ones_like(ids), torch.zeros_like(ids))  # all shown as [MASK]
    html_text = pieces_html(pieces, [tokenizer.tokens[i] for i in inputs.tolist()], outcome, word_ids,
                            title=f"{_plural(len(positions), 'blank')}, {right} filled in right "
                                  f"({right / len(positions):.0%}); the model's first guess is under each blank",
                            guesses={p.position: (p.candidates[0][0], p.correct) for p in predictions})
    p = predictions[focus]
    fig = plot_topk(p.candidates, title=f"blank {focus}: was {_show_char(p.original)!r}",
                    original=p.original)
    return html_text, fig, predictions


def _wordpiece_prediction_widget(model, tokenizer, text: str, seed: int = 0):
    import ipywidgets as w
    import matplotlib.pyplot as plt
    from IPython.display import HTML, Image, display

    box = w.Textarea(value=text, layout=w.Layout(width="100%", height="70px"), description="text")
    select = w.FloatSlider(value=BERT_MASKING.select_prob, min=0.05, max=0.5, step=0.05, description="select_prob")
    seed_box = w.IntSlider(value=seed, min=0, max=50, description="seed")
    whole = w.Checkbox(value=True, description="whole words", indent=False)
    focus = w.IntSlider(value=0, min=0, max=0, description="blank")
    top_k = w.IntSlider(value=5, min=1, max=10, description="top k")
    out = w.Output()
    guard = _Once()

    def update(_=None):
        with guard() as first:
            if not first:
                return
            with out:
                out.clear_output(wait=True)
                try:
                    html_text, fig, predictions = wordpiece_prediction_view(
                        model, tokenizer, box.value, select_prob=select.value, seed=seed_box.value, k=top_k.value,
                        focus=0, whole_words=whole.value)
                    focus.max = len(predictions) - 1  # follows the blanks before drawing the focused one
                    if focus.value:
                        plt.close(fig)  # blank 0's chart, drawn but not shown: closed, or it appears under a later cell
                        html_text, fig, _ = wordpiece_prediction_view(
                            model, tokenizer, box.value, select_prob=select.value, seed=seed_box.value, k=top_k.value,
                            focus=focus.value, whole_words=whole.value)
                except ValueError as err:
                    display(HTML(_error_html(str(err))))
                    return
                display(HTML(html_text))
                display(Image(figure_png(fig)))

    for control in (box, select, seed_box, whole, focus, top_k):
        control.observe(update, names="value")
    update()
    return _placeholder(w.VBox([box, w.HBox([select, seed_box]), w.HBox([whole, focus]), top_k, out]),
                        "masked-prediction explorer")


# ---- 07 curriculum ------------------------------------------------------------------------------------

def curriculum_view(runs: list[dict], labels, x: str = "tokens", baselines: dict | None = None):
    """Compare the runs whose label is in `labels`: their length schedules (left) and held-out loss
    curves against tokens or seconds (right). Returns (Figure, {label: final mean loss})."""
    import matplotlib.pyplot as plt

    labels = list(labels)
    if not labels:
        raise ValueError("Pick at least one schedule to show.")
    unknown = [label for label in labels if label not in {r["label"] for r in runs}]
    if unknown:
        raise ValueError(f"No measured run is called {unknown}; choose from {sorted({r['label'] for r in runs})}.")
    if x not in ("tokens", "seconds"):
        raise ValueError("x is 'tokens' or 'seconds'.")
    picked = [r for r in runs if r["label"] in labels]
    fig, (ax_len, ax_loss) = plt.subplots(1, 2, figsize=(11, 3.6), dpi=80, gridspec_kw={"width_ratios": [1, 1.6]})
    finals = {}
    shown = list(dict.fromkeys(r["label"] for r in picked))
    every = list(dict.fromkeys(r["label"] for r in runs))  # a schedule's colour does not change with the selection
    for label in shown:
        run = next(r for r in picked if r["label"] == label)
        schedule = LengthSchedule(**run["schedule"])
        steps = run["history"]["step"]
        ax_len.plot(steps, [schedule.length_at((s - 1) / steps[-1]) for s in steps],
                    color=schedule_colour(label, every), label=label,
                    **(BASELINE_BAND if label.startswith("fixed") else {}))
        group = [r["history"]["val_loss"][-1] for r in picked if r["label"] == label]
        finals[label] = sum(group) / len(group)
    if picked:  # the two panels' x axes, tied: a step count here, the tokens those steps read on the right
        last = picked[0]["history"]
        ax_len.set_xlabel(f"step (its {last['step'][-1]:,} steps read the right panel's "
                          f"{last['eval_tokens'][-1] / 1e6:.2g}M tokens)")
    ax_len.set_ylabel("window length")
    ax_len.set_title("the schedules", fontsize=10)
    ax_len.grid(alpha=0.3)
    plot_curves(picked, x=x, ax=ax_loss, title="held-out loss at the final length", baselines=baselines,
                colours_from=every, mixed=any(sum(r["label"] == label for r in runs) > 1 for label in every))
    fig.tight_layout()
    return fig, finals


def seeds_note(runs: list[dict], label: str) -> str:
    """How many runs a schedule's final loss stands for: a mean of three seeds and one run must not read alike."""
    finals = sorted((r["seed"], r["history"]["val_loss"][-1]) for r in runs if r["label"] == label)
    if len(finals) == 1:
        return f"(one run, seed {finals[0][0]})"
    return f"(mean of {len(finals)} seeds: " + ", ".join(f"{loss:.2f}" for _, loss in finals) + ")"


def curriculum_widget(runs: list[dict], default=None, baselines: dict | None = None):
    """Pick measured schedules (kind, start length, growth fraction) and compare their curves."""
    import ipywidgets as w
    import matplotlib.pyplot as plt
    from IPython.display import HTML, display

    labels = list(dict.fromkeys(r["label"] for r in runs))
    pick = w.SelectMultiple(options=labels, value=tuple(default or labels[:2]), rows=min(8, len(labels)),
                            description="schedules", layout=w.Layout(width="420px"))
    axis = w.ToggleButtons(options=[("tokens", "tokens"), ("wall time", "seconds")], value="tokens",
                           description="x axis")
    out = w.Output()

    def update(_=None):
        with out:
            out.clear_output(wait=True)
            try:
                fig, finals = curriculum_view(runs, pick.value, axis.value, baselines)
            except ValueError as err:
                display(HTML(_error_html(str(err))))
                return
            display(fig)
            plt.close(fig)
            display(HTML("<br>".join(f"<code>{html.escape(k)}</code>: final held-out loss {v:.3f} {seeds_note(runs, k)}"
                                     for k, v in sorted(finals.items(), key=lambda kv: kv[1]))))

    pick.observe(update, names="value")
    axis.observe(update, names="value")
    update()
    return _placeholder(w.VBox([w.HBox([pick, axis]), out]), "schedule comparison")
