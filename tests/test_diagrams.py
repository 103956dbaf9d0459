"""The diagrams (mlm_lib.course.diagrams) are drawn from the objects they show: their text carries the objects'
real values, they follow a changed parameter, and they draw across the ranges the notebooks accept (tiny and
large configurations, a window of one, Korean text)."""
import io
import re
from collections import Counter
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from mlm_lib import (BertConfig, BertForMLM, BertForSequenceClassification, CharTokenizer, MultiHeadAttention,  # noqa: E402
                     mask_tokens, newton_schulz, random_windows, save_pretrained)
from mlm_lib.course import diagrams as D  # noqa: E402
from mlm_lib.curriculum import fixed, linear, step_up  # noqa: E402
from mlm_lib.masking import IGNORE_INDEX, MASKED, NOT_SELECTED, RANDOM, UNCHANGED  # noqa: E402
from mlm_lib.model import MODERN  # noqa: E402
from mlm_lib.predict import Prediction  # noqa: E402
from mlm_lib.training import TrainConfig  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TEXT = "To be, or not to be, that is the question: whether 'tis nobler in the mind to suffer. " * 3
KOREAN = "언어 모델은 문장 속의 빈칸을 채우면서 배운다. 가려진 글자를 맞히려면 앞뒤의 글자를 함께 보아야 한다. " * 3


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def words(fig) -> str:
    """Every text on the figure, line breaks of wrapped titles read as spaces."""
    return " | ".join(" ".join(t.split()) for t in D.texts(fig))


def png_size(fig) -> int:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return len(buffer.getvalue())


def test_the_course_map_reads_the_notebooks_themselves():
    fig = D.course_map(ROOT / "notebooks", here="05")
    found = D.notebook_titles(ROOT / "notebooks")
    drawn = words(fig)
    assert len(found) >= 15
    for _, number, title in found:
        assert number in drawn and title.split()[0] in drawn
    assert "Masking" in drawn and "Part 1" in drawn
    with pytest.raises(FileNotFoundError):
        D.course_map(ROOT / "tests")


@pytest.mark.parametrize("text", [TEXT, KOREAN])
def test_tokens_to_windows_shows_the_ids_and_where_each_window_was_cut(text):
    tokenizer = CharTokenizer.from_text(text)
    ids = tokenizer.encode(text)
    windows = random_windows(ids, 3, 16, torch.Generator().manual_seed(0))
    drawn = words(D.tokens_to_windows(text, tokenizer, windows, text))
    assert "tensor (3, 16)" in drawn and f"{tokenizer.vocab_size} in the" in drawn
    for i in tokenizer.encode(text[:16]).tolist():
        assert str(i) in drawn
    starts = [text.find(tokenizer.decode(row)) for row in windows]
    assert all(f"from character {s:,}" in drawn for s in starts)
    D.tokens_to_windows(text, tokenizer, random_windows(ids, 1, 1, torch.Generator().manual_seed(0)))  # a window of one


def test_masked_window_shows_exactly_what_mask_tokens_chose(small_tokenizer):
    ids = small_tokenizer.encode("the quick brown fox jumps over the lazy dog")
    inputs, labels, outcome = mask_tokens(ids, small_tokenizer, generator=torch.Generator().manual_seed(4),
                                          return_outcome=True)
    fig = D.masked_window(ids, inputs, labels, outcome, small_tokenizer, shown=40)
    drawn = D.texts(fig)
    selected = int((outcome[:40] != NOT_SELECTED).sum())
    # drawn from a longer window, the title says which part it counts, so the window's own count does not puzzle
    assert ids.numel() > 40 and f"positions 0–39 of the window's {ids.numel()}: {selected} selected" in words(fig)
    whole = D.masked_window(ids, inputs, labels, outcome, small_tokenizer, shown=ids.numel())
    assert f"{int((outcome != NOT_SELECTED).sum())} of {ids.numel()} positions selected" in words(whole)
    assert drawn.count("^") == selected  # one marker per selected position, no more
    label_cells = [t for t in drawn if re.fullmatch(r"\d+", t)]
    assert sorted(map(int, label_cells)) == sorted(labels[:40][labels[:40] != IGNORE_INDEX].tolist())
    for code, name in ((MASKED, "[MASK]"), (RANDOM, "random"), (UNCHANGED, "unchanged")):
        assert f"{int((outcome[:40] == code).sum())} {name}" in words(fig)
    one = torch.tensor([7])
    D.masked_window(one, one, torch.tensor([7]), torch.tensor([UNCHANGED]), small_tokenizer)  # a window of one


@pytest.mark.parametrize("d_model, heads, length", [(64, 4, 6), (16, 1, 1), (768, 12, 128)])
def test_attention_flow_carries_the_shapes(d_model, heads, length):
    mha = MultiHeadAttention(d_model, heads)
    x = torch.zeros(2, length, d_model)
    drawn = words(D.attention_flow(mha, x, torch.ones(2, length)))
    d_head = d_model // heads
    assert f"(2, {heads}, {length}, {d_head})" in drawn and f"(2, {heads}, {length}, {length})" in drawn
    assert f"{heads} heads of {d_head}" in drawn and f"√{d_head}" in drawn
    assert "(no padding mask)" in words(D.attention_flow(mha, x))


@pytest.mark.parametrize("layers, d_model, pre_ln", [(3, 64, False), (1, 16, True), (12, 768, False)])
def test_encoder_diagram_counts_what_the_model_has(layers, d_model, pre_ln):
    config = BertConfig(vocab_size=84, d_model=d_model, n_layers=layers, n_heads=4, d_ff=4 * d_model, max_len=128,
                        pre_ln=pre_ln)
    drawn = words(D.encoder_diagram(config))
    with torch.device("meta"):
        total = BertForMLM(config).num_parameters()
    assert f"{layers}-layer encoder" in drawn and f"× {layers}" in drawn and f"{total:,} parameters" in drawn
    assert f"{d_model} → {4 * d_model} → {d_model}" in drawn and f"84 × {d_model}" in drawn
    assert ("final LayerNorm" in drawn) == pre_ln
    assert "pre-LN" in words(D.layer_norm_placement(config))


def test_encoder_diagram_of_a_modern_configuration_has_no_position_table():
    config = BertConfig(vocab_size=84, d_model=128, n_layers=4, n_heads=8, d_ff=344, **MODERN)
    drawn = words(D.encoder_diagram(config))
    assert "position embedding" not in drawn and "RoPE" in drawn and "GeGLU" in drawn
    assert "global every 3" in drawn
    # one table alone is drawn without a sum to meet in; BERT's three tables meet in one; the title's head is the MLM's
    texts = lambda fig: [t.get_text() for t in fig.axes[0].texts]  # noqa: E731
    assert "sum" not in texts(D.encoder_diagram(config)) and "+" not in texts(D.encoder_diagram(config))
    bert = D.encoder_diagram(BertConfig(vocab_size=84, d_model=32, n_layers=2, n_heads=2, d_ff=64))
    assert "sum" in texts(bert) and "+" in texts(bert) and "(MLM head" in words(bert)
    # ModernBERT's first layer reads the normalised embeddings without its own norm (first_layer_norm=False)
    assert "not in layer 0" in drawn
    assert "not in layer 0" not in words(D.encoder_diagram(BertConfig(vocab_size=84, d_model=32, n_layers=2,
                                                                        n_heads=2, d_ff=64, pre_ln=True)))


def test_training_step_reads_the_batch_and_the_schedule(small_tokenizer):
    config = TrainConfig(steps=300, warmup_steps=30, tokens_per_batch=512, schedule=fixed(32))
    inputs = torch.zeros(16, 32, dtype=torch.long)
    labels = torch.full((16, 32), IGNORE_INDEX)
    labels[:, ::5] = 3
    drawn = words(D.training_step(config, inputs, labels, 4.25, BertConfig(vocab_size=30)))
    assert "16 windows × 32" in drawn and "512 tokens" in drawn and f"{int((labels != -100).sum())} selected" in drawn
    assert "4.25" in drawn and "warm-up 30" in drawn and "at 300" in drawn


def test_blanks_and_guesses_shows_the_models_candidates():
    predictions = [Prediction(3, "b", [("b", 0.6), ("e", 0.3)]), Prediction(8, "r", [("e", 0.5), ("r", 0.4)])]
    drawn = words(D.blanks_and_guesses(TEXT, predictions))
    assert "all 2 blanks" in drawn and "right at 1 of these 2" in drawn and "60%" in drawn and "was 'r'" in drawn
    fig = D.blanks_and_guesses(TEXT, predictions)  # each column's own blank in [MASK]'s orange (notebook 02's)
    from mlm_lib.course.viz import OUTCOME_COLOURS
    from mlm_lib.masking import MASKED
    orange = [t for t in fig.axes[0].texts if t.get_text() == "█" and t.get_color() == OUTCOME_COLOURS[MASKED]]
    assert len(orange) == len(predictions)
    assert "all 2 blanks (orange)" in drawn


def test_length_schedules_keep_the_tokens_a_step():
    schedules = [fixed(64), step_up(16, 64, 0.5), linear(16, 64, 0.5)]
    drawn = words(D.length_schedules(schedules, 2048))
    assert "128 × 16" in drawn and "32 × 64" in drawn and "2,048" in drawn
    assert "linear 16->64 by 50%" in drawn
    D.length_schedules([fixed(1)], 1)  # a window of one


def test_wordpiece_match_traces_greedy_longest_match():
    vocab = {"un", "##believ", "##able", "##b", "##e", "##l", "##i", "##v", "##a"}
    drawn = words(D.wordpiece_match("unbelievable", vocab))
    assert "un ##believ ##able" in drawn and "unbelievable" in drawn
    assert "[UNK]" in words(D.wordpiece_match("xyz", vocab))


def test_merge_choice_ranks_by_both_rules():
    splits = {"the": ["t", "##h", "##e"], "quit": ["q", "##u", "##i", "##t"]}
    counts = {"the": 50, "quit": 3}
    pairs, pieces = Counter(), Counter()
    for word, split in splits.items():
        for piece in split:
            pieces[piece] += counts[word]
        for a, b in zip(split, split[1:]):
            pairs[a, b] += counts[word]
    drawn = words(D.merge_choice(pairs, pieces))
    assert "t ##h" in drawn and "q ##u" in drawn and "50" in drawn and "0.333" in drawn


def test_pieces_and_words_counts_words_touched_in_part():
    tokens = ["[CLS]", "un", "##believ", "##able", "day", "[SEP]"]
    word_ids = [-1, 0, 0, 0, 1, -1]
    by_pieces = [0, 1, 0, 0, 0, 0]
    by_words = [0, 1, 2, 1, 0, 0]
    drawn = words(D.pieces_and_words(tokens, word_ids, by_pieces, by_words))
    assert "1 words touched, 1 of them only in part" in drawn and "1 words touched, 0 of them only in part" in drawn
    assert "4 pieces in 2 words (and 2 special tokens)" in drawn
    assert "by pieces: 1 words touched, 1 of them only in part" in drawn


def test_pictures_of_parts_2_and_3_fit_a_notebook_at_100_percent():
    """Issue 51: 09's masking picture was 1,788 px wide (labels about 5 px high once the notebook shrank it). Each
    picture of notebooks 08-13 drawn from a long input stays within a notebook's width (about 960 px at the
    course's dpi), its lines cut between words."""
    tokens = ["[CLS]"] + [t for w in range(40) for t in (f"word{w}", "##ing")] + ["[SEP]"]
    word_ids = [-1] + [w for w in range(40) for _ in range(2)] + [-1]
    outcome = [NOT_SELECTED] * len(tokens)
    outcome[3] = MASKED
    fig = D.pieces_and_words(tokens, word_ids, outcome, outcome, shown=len(tokens))
    assert fig.get_size_inches()[0] * fig.dpi <= 960
    drawn = D.texts(fig)
    assert drawn.count("word39") == 2 and drawn.count("[SEP]") == 2  # every piece, in both rows
    frames = [p for p in fig.axes[0].patches if p.get_edgecolor()[:3] == matplotlib.colors.to_rgb("#444444")]
    assert all(p.get_x() + p.get_width() <= fig.get_size_inches()[0] for p in frames)  # no frame runs off the page
    long_pair = D.pair_embeddings(["x"] * 200, [0] * 100 + [1] * 100)
    assert long_pair.get_size_inches()[0] * long_pair.dpi <= 960
    encoder = BertForMLM(BertConfig(vocab_size=30, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_len=64))
    model = BertForSequenceClassification.from_encoder(encoder, 2, label_names=["verse", "prose"])
    for pooling in ("cls", "mean"):
        fig = D.classifier_diagram(model, list("a longer line of verse than fits"), pooling=pooling)
        assert fig.get_size_inches()[0] * fig.dpi <= 960 and any(f"pooling = {pooling!r}" in t for t in D.texts(fig))
    with pytest.raises(ValueError, match="pooling"):
        D.classifier_diagram(model, list("verse"), pooling="max")
    masks = D.texts(D.attention_masks(list("rth, D"), torch.tensor([IGNORE_INDEX] * 3 + [5, IGNORE_INDEX, 3])))
    assert "→ ','" in masks and "→ —" in masks  # a comma shown quoted, not mistaken for a full stop


def test_pair_embeddings_and_kinds_follow_the_pair():
    tokens = ["[CLS]", "a", "b", "[SEP]", "c", "[SEP]"]
    types = [0, 0, 0, 0, 1, 1]
    drawn = words(D.pair_embeddings(tokens, types))
    assert "segment A = 4" in drawn and "B = 2" in drawn and drawn.count("E_B") == 2 and "E_5" in drawn
    long_pair = words(D.pair_embeddings(["x"] * 200, [0] * 100 + [1] * 100))
    assert "E_199" in long_pair and "…" in long_pair
    assert "E_99" in long_pair and "E_100" in long_pair  # where A ends and B starts is drawn, not left out
    kinds = words(D.pair_kinds(["one", "two", "three", "four"], ["alpha", "beta", "gamma"]))
    assert "three" in kinds and "four" in kinds and "gamma" in kinds and "IsNext" in kinds


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_classifier_diagram_says_what_is_pooled(pooling):
    encoder = BertForMLM(BertConfig(vocab_size=30, d_model=16, n_layers=3, n_heads=2, d_ff=32, max_len=32))
    model = BertForSequenceClassification.from_encoder(encoder, 2, label_names=["prose", "verse"], pooling=pooling)
    drawn = words(D.classifier_diagram(model, list("a line of verse")))
    assert f"pooling = {pooling!r}" in drawn and "3 layers × 16 wide" in drawn and "16 → 2 (prose, verse)" in drawn


def test_export_diagram_lists_the_real_files(tmp_path, small_tokenizer):
    model = BertForMLM(BertConfig(vocab_size=small_tokenizer.vocab_size, d_model=16, n_layers=1, n_heads=2, d_ff=32,
                                  max_len=16))
    save_pretrained(model, small_tokenizer, tmp_path / "export")
    drawn = words(D.export_diagram(tmp_path / "export"))
    for path in (tmp_path / "export").iterdir():
        assert path.name in drawn
    with pytest.raises(FileNotFoundError):
        D.export_diagram(tmp_path)


def test_attention_masks_count_the_pairs_each_model_reads():
    labels = torch.full((6,), IGNORE_INDEX)
    labels[2] = 5
    drawn = words(D.attention_masks(list("to be!"), labels))
    assert "all 36 pairs" in drawn and "21 of 36 pairs" in drawn and "predicts the 1 selected" in drawn


def test_muon_pictures():
    g = torch.Generator().manual_seed(0)
    update = torch.randn(16, 32, generator=g) @ torch.diag(torch.logspace(0, -2, 32))
    drawn = words(D.singular_values(update, newton_schulz(update)))
    assert "(16, 32) matrix" in drawn and "after" in drawn
    from mlm_lib import MaskingConfig
    recipe = TrainConfig(seconds=900, warmup_seconds=36, schedule=linear(16, 128, until=0.5), lr=2e-3,
                         masking=MaskingConfig(select_prob=0.4), tokens_per_batch=4096)
    card = words(D.recipe_card(recipe, "bert-40%"))
    assert "40% of positions" in card and "peak 0.002" in card and "linear 16->128 by 50%" in card
    with pytest.raises(ValueError, match="seconds"):
        D.recipe_card(TrainConfig(steps=10), "steps")


def test_electra_diagram_counts_real_replacements():
    tokens = list("to be or not")
    shown = ["█" if i in (1, 4, 7) else t for i, t in enumerate(tokens)]
    sampled = ["x" if i in (1, 4) else t for i, t in enumerate(tokens)]
    replaced = [1 if i in (1, 4) else 0 for i in range(len(tokens))]
    selected = [i in (1, 4, 7) for i in range(len(tokens))]
    drawn = words(D.electra_diagram(tokens, shown, sampled, selected, replaced, torch.rand(len(tokens))))
    assert "12 positions: 3 sampled, 2 really replaced" in drawn and "1 sampled back to the original" in drawn
    # a window longer than the picture: the title says which part it counts, not "3 of 24" for a window of 30
    long = tokens + list(" to be or not to be")
    tail = [False] * 16 + [True] + [False] * 2  # one more replacement at position 28, beyond the picture
    drawn = words(D.electra_diagram(long, shown + long[12:], sampled + long[12:], selected + tail,
                                    replaced + [int(t) for t in tail], torch.rand(len(long)), shown=24))
    assert "the first 24 of the window's 31 positions: 3 sampled" in drawn
    assert "in the whole window, 4 sampled and 3 replaced" in drawn  # so a printout of the window's counts agrees


def test_modern_pictures_follow_the_configuration():
    q, k = torch.randn(16), torch.randn(16)
    fig = D.rope_rotation(q, k)
    values = [t for t in D.texts(fig) if "q·k" in t]
    assert len(values) == 3 and len(set(values)) == 1  # the same distance, the same score, wherever it is
    config = BertConfig(vocab_size=30, d_model=32, n_layers=5, n_heads=4, **{**MODERN, "local_window": 8})
    drawn = words(D.layer_pattern(config, length=20))
    assert drawn.count("global") >= 2 and "local ±4" in drawn and "layer 4" in drawn


def test_figures_stay_small():
    config = BertConfig(vocab_size=84, d_model=128, n_layers=4, n_heads=8, d_ff=512)
    for fig in (D.encoder_diagram(config), D.course_map(ROOT / "notebooks"), D.layer_norm_placement(config)):
        assert png_size(fig) <= 150_000 and fig.dpi <= 100


def _readable(fig, widest: int = 900, smallest: float = 8.0):
    """Shown at 100% in a notebook about 900-1000 pixels wide: no wider than that, and no text under 8 pt."""
    fig.canvas.draw()
    width = fig.get_size_inches()[0] * fig.dpi
    sizes = [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip() and t.get_visible()]
    assert width <= widest, f"{width:.0f} pixels wide"
    assert min(sizes) >= smallest, f"text of {min(sizes)} pt"


def test_part1_pictures_read_at_100_percent(small_tokenizer):
    """The 2026-11-26 review read the masking picture's ids at about 6 pt and the course map came out 1,140 pixels
    wide (shrunk to fit a notebook): each part-1 picture fits the notebook's width with text of 8 pt or more."""
    from mlm_lib.course.viz import plot_attention_heads

    _readable(D.course_map(ROOT / "notebooks", here="00"))
    ids = small_tokenizer.encode("the quick brown fox jumps over the lazy dog and the cat, then more")
    inputs, labels, outcome = mask_tokens(ids, small_tokenizer, generator=torch.Generator().manual_seed(4),
                                          return_outcome=True)
    fig = D.masked_window(ids, inputs, labels, outcome, small_tokenizer, shown=43)
    _readable(fig)
    assert "positions 0–21" in words(fig) and "positions 22–42" in words(fig)  # 43 positions, two blocks
    _readable(plot_attention_heads(torch.softmax(torch.randn(4, 16, 16), -1), list("To be, or not to")))
    predictions = [Prediction(3 + 5 * k, "b", [("b", 0.96), ("e", 0.02), ("a", 0.01)]) for k in range(8)]
    fig = D.blanks_and_guesses(TEXT, predictions)
    _readable(fig)
    assert "█" in words(fig) and "▯" not in words(fig)  # a blank looks like notebook 02's [MASK]
