"""Part 3: the course's models as Hugging Face folders, loaded offline by `transformers` as its users would."""
import json

import pytest
import torch

from mlm_lib import BertConfig, BertForSequenceClassification, hf_tokenizer, predict_masked, save_pretrained
from mlm_lib.course.assets import reference_checkpoint
from mlm_lib.finetune import LABEL_NAMES, classify

from notebook_params import KOREAN_TEXT

ODD = "Tab\there, a line\nbreak, ünïcödé, 中文, \x00 control and  two spaces."


@pytest.fixture(scope="module")
def char_model():
    return reference_checkpoint()


@pytest.fixture(scope="module")
def char_folder(char_model, tmp_path_factory):
    return save_pretrained(char_model.model, char_model.tokenizer, tmp_path_factory.mktemp("hf") / "char", max_length=64)


def test_character_tokenizer_gives_our_ids(char_model, corpus):
    tok = hf_tokenizer(char_model.tokenizer)
    for text in (corpus[-200_000:], KOREAN_TEXT[:2000], ODD, ""):
        assert tok(text, add_special_tokens=False)["input_ids"] == char_model.tokenizer.encode(text).tolist(), text[:30]
    # one difference, on purpose: in Hugging Face `[MASK]` typed in a text is the mask token (how the
    # fill-mask pipeline marks a blank); our character tokenizer spells it out, and the course masks by position
    assert tok("a[MASK]b", add_special_tokens=False)["input_ids"] == [char_model.tokenizer.encode("a")[0].item(),
                                                                     char_model.tokenizer.mask_id,
                                                                     char_model.tokenizer.encode("b")[0].item()]
    ids = tok("Romeo")["input_ids"]
    assert ids[0] == char_model.tokenizer.cls_id and ids[-1] == char_model.tokenizer.sep_id
    assert tok.decode(tok("To be,\nor not", add_special_tokens=False)["input_ids"]) == "To be,\nor not"
    pair = tok("ab", "cd")
    assert pair["token_type_ids"] == [0, 0, 0, 0, 1, 1, 1]


def test_wordpiece_tokenizer_gives_our_ids(corpus):
    wp = reference_checkpoint("shakespeare-wordpiece").tokenizer
    tok = hf_tokenizer(wp, special_tokens=False)
    for text in (corpus[-200_000:], KOREAN_TEXT[:2000], ODD, "a [MASK] in text", "antidisestablishmentarianism" * 5):
        assert tok(text)["input_ids"] == wp.encode(text).tolist(), text[:30]


def test_folder_is_safetensors_and_loads_offline(char_folder, char_model):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    names = {p.name for p in char_folder.iterdir()}
    assert "model.safetensors" in names and not any(n.endswith((".bin", ".pt", ".pkl")) for n in names)
    assert json.loads((char_folder / "config.json").read_text())["architectures"] == ["BertForMaskedLM"]
    model = AutoModelForMaskedLM.from_pretrained(char_folder).eval()
    tok = AutoTokenizer.from_pretrained(char_folder)
    assert tok.model_max_length == 64 and tok("abc")["input_ids"] == char_model.tokenizer.encode("abc").tolist()
    ids = char_model.tokenizer.encode("Friends, Romans, countrymen, lend me your ears")[None]
    with torch.no_grad():
        torch.testing.assert_close(model(input_ids=ids).logits, char_model.model.eval()(ids), atol=1e-5, rtol=1e-5)


def test_fill_mask_pipeline_agrees_with_predict_masked(char_folder, char_model):
    from transformers import pipeline

    fill = pipeline("fill-mask", model=str(char_folder), top_k=5)
    text = "Friends, Romans, countrymen, lend me your ears"
    for position in (3, 10, 30, 44):
        ours = predict_masked(char_model.model, char_model.tokenizer, text, [position], k=5)[0]
        theirs = fill(text[:position] + "[MASK]" + text[position + 1:])
        assert [c for c, _ in ours.candidates] == [r["token_str"] for r in theirs]
        assert [p for _, p in ours.candidates] == pytest.approx([r["score"] for r in theirs], abs=1e-5)
        assert theirs[0]["sequence"] == text[:position] + theirs[0]["token_str"] + text[position + 1:]


def test_wordpiece_fill_mask(tmp_path):
    from transformers import pipeline

    ck = reference_checkpoint("shakespeare-wordpiece")
    folder = save_pretrained(ck.model, ck.tokenizer, tmp_path / "wp", max_length=64)
    text = "My lord, the king is coming to the [MASK] to see you."
    theirs = pipeline("fill-mask", model=str(folder), top_k=3)(text)
    ids = ck.tokenizer.encode(text)[None]
    position = ids[0].tolist().index(ck.tokenizer.mask_id)
    with torch.no_grad():
        probs = ck.model.eval()(ids)[0, position].softmax(-1)
    assert [r["token"] for r in theirs] == probs.topk(3).indices.tolist()


def test_classifier_exports_and_classifies_the_same(char_model, tmp_path):
    from transformers import AutoModelForSequenceClassification, pipeline

    torch.manual_seed(0)
    clf = BertForSequenceClassification.from_encoder(char_model.model, 2, label_names=LABEL_NAMES).eval()
    with torch.no_grad():
        clf.classifier.weight.normal_(0, 1.0)  # untrained, but decisive, so the comparison means something
    folder = save_pretrained(clf, char_model.tokenizer, tmp_path / "clf", max_length=64)
    hf = AutoModelForSequenceClassification.from_pretrained(folder)
    assert hf.config.id2label == {0: "verse", 1: "prose"}
    texts = ["But, soft! what light through yonder window breaks?", "I will catechise the world for him; that is"]
    ours = classify(clf, texts, char_model.tokenizer)
    theirs = pipeline("text-classification", model=str(folder))(texts)
    assert [o["label"] for o in ours] == [t["label"] for t in theirs]
    assert [o["probability"] for o in ours] == pytest.approx([t["score"] for t in theirs], abs=1e-5)


def test_export_refuses_and_never_leaves_half_a_folder(char_model, tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "mine.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        save_pretrained(char_model.model, char_model.tokenizer, folder)
    assert (folder / "mine.txt").read_text() == "keep me"
    with pytest.raises(TypeError, match=r"save_pretrained\(checkpoint.model, checkpoint.tokenizer, folder\)"):
        save_pretrained(char_model, char_model.tokenizer, tmp_path / "whole")  # notebook 12's Exercise 3, a slip
    with pytest.raises(TypeError, match="not a str"):
        save_pretrained("model.pt", char_model.tokenizer, tmp_path / "path")
    assert not (tmp_path / "whole").exists() and not (tmp_path / "path").exists()
    mismatch = BertForSequenceClassification(BertConfig(vocab_size=10, d_model=16, n_heads=2), 2)
    with pytest.raises(ValueError, match="do not belong together"):
        save_pretrained(mismatch, char_model.tokenizer, tmp_path / "x")
    causal = type(char_model.model)(BertConfig(**{**char_model.model.config.to_dict(), "causal": True}))
    with pytest.raises(ValueError, match="left-to-right"):
        save_pretrained(causal, char_model.tokenizer, tmp_path / "y")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary folder left behind
    save_pretrained(char_model.model, char_model.tokenizer, folder, overwrite=True)
    assert not (folder / "mine.txt").exists() and (folder / "model.safetensors").is_file()


def test_a_modern_model_exports_as_modernbert_and_fills_masks_alike(char_model, tmp_path):
    """A course model with all of ModernBERT's changes (notebook 16) is saved as a ModernBertForMaskedLM that
    AutoModelForMaskedLM loads offline; its tokenizer returns no token types (the model has none), and the
    fill-mask pipeline gives predict_masked's guesses."""
    from transformers import AutoModelForMaskedLM, pipeline

    from mlm_lib import BertForMLM
    from mlm_lib.model import MODERN

    tokenizer = char_model.tokenizer
    torch.manual_seed(0)
    model = BertForMLM(BertConfig(vocab_size=tokenizer.vocab_size, d_model=32, n_layers=3, n_heads=2, d_ff=48,
                                  max_len=64, dropout=0.0, **{**MODERN, "local_window": 8})).eval()
    folder = save_pretrained(model, tokenizer, tmp_path / "modern", max_length=64)
    assert json.loads((folder / "config.json").read_text())["architectures"] == ["ModernBertForMaskedLM"]
    loaded = AutoModelForMaskedLM.from_pretrained(folder).eval()
    assert type(loaded).__name__ == "ModernBertForMaskedLM"
    ids = tokenizer.encode("Friends, Romans, countrymen")[None]
    with torch.no_grad():
        torch.testing.assert_close(loaded(input_ids=ids).logits, model(ids), atol=1e-4, rtol=1e-4)
    fill = pipeline("fill-mask", model=str(folder), top_k=3)
    text = "Friends, Romans, countrymen, lend me your ears"
    ours = predict_masked(model, tokenizer, text, [10], k=3)[0]
    theirs = fill(text[:10] + "[MASK]" + text[11:])
    assert [c for c, _ in ours.candidates] == [r["token_str"] for r in theirs]
