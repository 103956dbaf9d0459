"""Interactive views for the notebooks. Each is a thin shell around a pure function.

The pure functions (`masking_view`, `attention_view`, ...) compute what is shown and are what the tests
call; the widget functions only wire ipywidgets controls to them. Inside an observer, output goes
through `with out: out.clear_output(wait=True); ...`, the pattern that JupyterLab 4 renders.
Building a widget calls its update once, so it also works headless (papermill, nbval).
"""
from __future__ import annotations

import html

import torch

from .masking import OUTCOME_NAMES, mask_tokens
from .viz import masked_text_html, plot_attention


def _error_html(message: str) -> str:
    return f'<div style="color:#b00020;font-family:monospace">⚠ {html.escape(message)}</div>'


# ---- 02 masking ---------------------------------------------------------------------------------------

def masking_view(text: str, tokenizer, select_prob: float = 0.15, mask_prob: float = 0.8,
                 random_prob: float = 0.1, seed: int = 0) -> tuple[str, dict[str, int]]:
    """Mask `text` with BERT's rule; return (coloured HTML, counts per outcome)."""
    if not text:
        raise ValueError("Type some text to mask.")
    ids = tokenizer.encode(text)
    inputs, _, outcome = mask_tokens(ids, tokenizer, select_prob=select_prob, mask_prob=mask_prob,
                                     random_prob=random_prob, generator=torch.Generator().manual_seed(seed),
                                     return_outcome=True)
    counts = {name: int((outcome == code).sum()) for code, name in OUTCOME_NAMES.items()}
    shown = [tokenizer.tokens[i] for i in inputs.tolist()]
    summary = (f"{len(ids)} characters, {len(ids) - counts['not selected']} selected "
               f"({(len(ids) - counts['not selected']) / len(ids):.0%}): " +
               ", ".join(f"{v} {k}" for k, v in counts.items() if k != "not selected"))
    return masked_text_html(list(text), shown, outcome, title=summary), counts


def masking_widget(tokenizer, text: str, seed: int = 0):
    """Sliders for the three probabilities and the seed, a text box, and the masked text, coloured."""
    import ipywidgets as w
    from IPython.display import HTML, display

    box = w.Textarea(value=text, layout=w.Layout(width="100%", height="80px"), description="text")
    select = w.FloatSlider(value=0.15, min=0, max=1, step=0.05, description="select")
    mask = w.FloatSlider(value=0.8, min=0, max=1, step=0.05, description="[MASK]")
    rand = w.FloatSlider(value=0.1, min=0, max=1, step=0.05, description="random")
    seed_box = w.IntSlider(value=seed, min=0, max=50, description="seed")
    out = w.Output()

    def update(_=None):
        with out:
            out.clear_output(wait=True)
            try:
                shown, _counts = masking_view(box.value, tokenizer, select.value, mask.value, rand.value, seed_box.value)
            except ValueError as err:  # impossible probabilities, empty text: say so, keep the controls
                shown = _error_html(str(err))
            display(HTML(shown))

    for control in (box, select, mask, rand, seed_box):
        control.observe(update, names="value")
    update()
    return w.VBox([box, w.HBox([select, mask]), w.HBox([rand, seed_box]), out])


# ---- 03 attention -------------------------------------------------------------------------------------

def attention_view(model, tokenizer, text: str, layer: int = 0, head: int = 0):
    """Heat map of one head's attention on `text` (a matplotlib Figure)."""
    if not text:
        raise ValueError("Type some text to look at.")
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
    return w.VBox([w.HBox([layer, head]), out])
