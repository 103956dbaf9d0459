"""Sentence pairs, NSP and the pretraining model, and the RoBERTa experiments' command (notebook 10)."""
import json
import math

import pytest
import torch

from mlm_lib import (BertConfig, BertForMLM, BertForPreTraining, CharTokenizer, from_hf, load_checkpoint,
                     save_checkpoint, sentence_pairs, to_hf)
from mlm_lib.course.results import roberta_table, sentence_head_table
from mlm_lib.masking import IGNORE_INDEX
from mlm_lib.pairs import (IS_NEXT, MaskedPairs, PairStream, evaluate_pairs, load_documents, mask_pairs, nsp_share,
                           pretraining_loss, split_documents, truncate_pair)
from mlm_lib.training import TrainConfig, train

TOKENIZER = CharTokenizer(chr(c) for c in range(0x41, 0x41 + 100))  # 105 ids: room for 100 tagged documents


def tagged_documents(n_docs=12, segments=30, seed=0):
    """Documents whose every token says which document it came from: document d uses only letter d (+ 5),
    segments of 1-12 tokens, so any pair shows where A and B came from."""
    g = torch.Generator().manual_seed(seed)
    docs = []
    for d in range(n_docs):
        lengths = torch.randint(1, 13, (segments,), generator=g).tolist()
        docs.append([[5 + d] * n for n in lengths])
    return docs


def parts(row_ids, row_types, row_mask):
    """(A, B) tokens of one pair."""
    real = row_ids[row_mask.bool()]
    types = row_types[row_mask.bool()]
    a, b = real[1:][types[1:] == 0][:-1], real[types == 1][:-1]
    return a, b


def test_pairs_layout_token_types_and_padding():
    pairs = sentence_pairs(tagged_documents(), TOKENIZER, 24, generator=torch.Generator().manual_seed(1))
    assert set(pairs) == {"input_ids", "token_type_ids", "attention_mask", "next_sentence_label"}
    ids, types, mask = pairs["input_ids"], pairs["token_type_ids"], pairs["attention_mask"]
    assert ids.shape == types.shape == mask.shape and ids.size(1) == 24
    for r in range(len(ids)):
        n = int(mask[r].sum())
        assert mask[r, :n].all() and not mask[r, n:].any()  # real tokens first, then padding
        assert ids[r, 0] == TOKENIZER.cls_id and ids[r, n - 1] == TOKENIZER.sep_id
        assert (ids[r, n:] == TOKENIZER.pad_id).all() and (types[r, n:] == 0).all()
        seps = (ids[r, :n] == TOKENIZER.sep_id).nonzero().flatten().tolist()
        assert len(seps) == 2
        # token type 0 for [CLS] A [SEP], 1 for B [SEP]
        assert (types[r, :seps[0] + 1] == 0).all() and (types[r, seps[0] + 1:n] == 1).all()
        assert seps[0] >= 2 and seps[1] - seps[0] >= 2  # A and B are never empty


def test_is_next_share_is_binomial_and_not_next_always_crosses_documents():
    docs = tagged_documents(n_docs=80, segments=300, seed=2)
    pairs = sentence_pairs(docs, TOKENIZER, 16, generator=torch.Generator().manual_seed(3))
    labels = pairs["next_sentence_label"]
    n = len(labels)
    assert n >= 10_000
    share = (labels == IS_NEXT).float().mean().item()
    assert abs(share - 0.5) < 4 * math.sqrt(0.25 / n), share
    for r in range(n):
        a, b = parts(pairs["input_ids"][r], pairs["token_type_ids"][r], pairs["attention_mask"][r])
        same = bool((a == a[0]).all() and (b == a[0]).all())
        assert len(set(a.tolist())) == 1  # A comes from one document
        assert same == (labels[r] == IS_NEXT), r  # IsNext: one document; NotNext: B from another, always


def test_is_next_b_really_continues_a():
    # numbered tokens: document d holds 0..k in order, so B must start right after A ends (before trimming)
    docs = [[[5 + (i % 20)] for i in range(start, start + 60)] for start in range(0, 600, 60)]
    pairs = sentence_pairs(docs, TOKENIZER, 12, generator=torch.Generator().manual_seed(0), short_seq_prob=0.0)
    seen = 0
    for r in (pairs["next_sentence_label"] == IS_NEXT).nonzero().flatten().tolist():
        a, b = parts(pairs["input_ids"][r], pairs["token_type_ids"][r], pairs["attention_mask"][r])
        if len(a) + len(b) <= 9:  # one-token segments fill 9 exactly: nothing trimmed
            assert (b[0] - a[-1]) % 20 == 1
            seen += 1
    assert seen > 10


def test_sop_swaps_within_a_document_and_no_nsp_gives_single_segments():
    docs = tagged_documents()
    sop = sentence_pairs(docs, TOKENIZER, 24, generator=torch.Generator().manual_seed(0), nsp=False, sop=True)
    for r in range(len(sop["input_ids"])):
        a, b = parts(sop["input_ids"][r], sop["token_type_ids"][r], sop["attention_mask"][r])
        assert set(a.tolist()) == set(b.tolist()) and len(set(a.tolist())) == 1  # never another document
    assert 0.4 < nsp_share(sop) < 0.6
    single = sentence_pairs(docs, TOKENIZER, 24, generator=torch.Generator().manual_seed(0), nsp=False)
    assert (single["token_type_ids"] == 0).all() and (single["next_sentence_label"] == IGNORE_INDEX).all()
    assert ((single["input_ids"] == TOKENIZER.sep_id).sum(1) == 1).all()
    # RoBERTa's DOC-SENTENCES: every document's tokens, in order, none dropped
    real = single["input_ids"][single["attention_mask"].bool()]
    ordinary = real[~torch.isin(real, torch.tensor(TOKENIZER.special_ids))]
    assert ordinary.tolist() == [t for d in docs for s in d for t in s]
    assert math.isnan(nsp_share(single))


def test_pairs_are_reproducible_and_take_strings():
    docs = [["hello there", "general", "kenobi"], ["abc def", "ghi"], ["xyz", "uvw", "rst"]]
    one = sentence_pairs(docs, TOKENIZER, 16, generator=torch.Generator().manual_seed(5))
    two = sentence_pairs(docs, TOKENIZER, 16, generator=torch.Generator().manual_seed(5))
    assert all(torch.equal(one[k], two[k]) for k in one)
    assert "hello" in TOKENIZER.decode(one["input_ids"].flatten()) or "abc" in TOKENIZER.decode(one["input_ids"].flatten())


def test_truncate_pair_trims_the_longer_side_from_both_ends():
    import random
    fronts = backs = 0
    for seed in range(50):
        a, b = list(range(10)), list(range(100, 103))
        truncate_pair(a, b, 8, random.Random(seed))
        assert len(a) + len(b) == 8 and b == [100, 101, 102]
        fronts += a[0] != 0
        backs += a[-1] != 9
    assert fronts and backs  # some trimming from each end


@pytest.mark.parametrize("bad, message", [
    (dict(max_len=4), "max_len"), (dict(short_seq_prob=1.5), "short_seq_prob"),
    (dict(nsp=True, sop=True), "one sentence-level"), (dict(documents="text"), "list of documents"),
    (dict(documents=[[[5, 6]]]), "two documents"),
])
def test_bad_pair_arguments_are_refused(bad, message):
    args = dict(documents=tagged_documents(), max_len=16)
    args.update(bad)
    documents, max_len = args.pop("documents"), args.pop("max_len")
    with pytest.raises((ValueError, TypeError), match=message):
        sentence_pairs(documents, TOKENIZER, max_len, **args)


def test_masking_pairs_never_touches_cls_sep_or_padding():
    pairs = sentence_pairs(tagged_documents(n_docs=30, segments=100), TOKENIZER, 32,
                           generator=torch.Generator().manual_seed(0))
    inputs, labels = mask_pairs(pairs, TOKENIZER, generator=torch.Generator().manual_seed(0))
    specials = torch.isin(pairs["input_ids"], torch.tensor(TOKENIZER.special_ids))
    assert (labels[specials] == IGNORE_INDEX).all()
    assert torch.equal(inputs[specials], pairs["input_ids"][specials])
    share = (labels[~specials] != IGNORE_INDEX).float().mean().item()
    assert abs(share - 0.15) < 0.01


def test_split_documents_holds_out_whole_last_documents():
    docs = {f"d{i}": ["x" * 100] * (i + 1) for i in range(10)}
    train, val = split_documents(docs, 0.05)
    assert list(train) == [f"d{i}" for i in range(8)] and list(val) == ["d8", "d9"]
    train, val = split_documents(docs, 0.4)
    assert set(train).isdisjoint(val) and sum(len(v) for v in val.values()) >= 0.4 * 55
    with pytest.raises(ValueError, match="too few"):
        split_documents({"a": ["x"], "b": ["y"]})


def test_shakespeare_documents_are_the_plays_and_text_files_split_at_two_blank_lines(tmp_path):
    plays = load_documents()
    assert len(plays) == 38 and "hamlet" in plays
    assert plays["hamlet"][0].split("\n")[0].endswith(":")  # a segment starts with its speaker
    path = tmp_path / "docs.txt"
    path.write_text("one a\n\none b\n\n\ntwo a\n\ntwo b\n\n\n\nthree a\n\nthree b\n")
    assert list(load_documents(path).values()) == [["one a", "one b"], ["two a", "two b"], ["three a", "three b"]]
    flat = tmp_path / "flat.txt"
    flat.write_text("\n".join(f"line {i}" for i in range(40)))
    with pytest.warns(UserWarning, match="no document breaks"):
        docs = load_documents(flat)
    assert len(docs) == 8 and sum(map(len, docs.values())) == 40
    short = tmp_path / "short.txt"
    short.write_text("a\nb\n")
    with pytest.raises(ValueError, match="two blank lines"):
        load_documents(short)


# ---- the model: equal to Hugging Face's BertForPreTraining ---------------------------------------------

def small_pretraining_model(seed=0):
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=TOKENIZER.vocab_size, d_model=32, n_layers=2, n_heads=4, d_ff=64, max_len=24,
                        dropout=0.0)
    return BertForPreTraining(config).eval()


def a_padded_batch():
    pairs = sentence_pairs(tagged_documents(), TOKENIZER, 24, generator=torch.Generator().manual_seed(0),
                           short_seq_prob=0.5)
    padded = (pairs["attention_mask"] == 0).any(1)
    rows = torch.cat([padded.nonzero()[:3, 0], (~padded).nonzero()[:3, 0]])
    batch = {k: v[rows] for k, v in pairs.items()}
    assert (batch["attention_mask"] == 0).any() and (batch["token_type_ids"] == 1).any()
    return batch


def test_pretraining_model_equals_hugging_face_both_ways():
    pytest.importorskip("transformers")
    model = small_pretraining_model()
    with torch.no_grad():  # non-zero pooler and NSP weights, so a swapped or missing one would show
        model.pooler.bias.normal_()
        model.nsp_head.bias.normal_()
    batch = a_padded_batch()
    hf = to_hf(model)
    assert type(hf).__name__ == "BertForPreTraining"
    inputs, labels = mask_pairs(batch, TOKENIZER, generator=torch.Generator().manual_seed(0))
    out = hf(input_ids=inputs, attention_mask=batch["attention_mask"], token_type_ids=batch["token_type_ids"],
             labels=labels, next_sentence_label=batch["next_sentence_label"])
    mlm, nsp = model.pretraining_logits(inputs, batch["attention_mask"], batch["token_type_ids"])
    real = batch["attention_mask"].bool()
    torch.testing.assert_close(mlm[real], out.prediction_logits[real], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(nsp, out.seq_relationship_logits, atol=1e-5, rtol=1e-5)
    chosen = labels != IGNORE_INDEX
    at, nsp_at = model.pretraining_logits(inputs, batch["attention_mask"], batch["token_type_ids"], positions=chosen)
    total, _ = pretraining_loss(at, labels[chosen], nsp_at, batch["next_sentence_label"])
    torch.testing.assert_close(total, out.loss, atol=1e-5, rtol=1e-5)
    back = from_hf(hf)
    assert type(back) is BertForPreTraining
    for (name, ours), theirs in zip(model.state_dict().items(), back.state_dict().values()):
        assert torch.equal(ours, theirs), name
    # the MLM-only model still converts to BertForMaskedLM, and its pooler-less weights are refused cleanly
    assert type(to_hf(BertForMLM(model.config))).__name__ == "BertForMaskedLM"
    assert type(from_hf(to_hf(BertForMLM(model.config)))) is BertForMLM


def test_pretraining_model_works_with_the_mlm_tools_and_checkpoints(tmp_path):
    model = small_pretraining_model()
    batch = a_padded_batch()
    logits = model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])
    assert logits.shape == (*batch["input_ids"].shape, TOKENIZER.vocab_size)  # forward: MLM logits, as BertForMLM
    save_checkpoint(tmp_path / "p.pt", model, TOKENIZER)
    loaded = load_checkpoint(tmp_path / "p.pt").model
    assert type(loaded) is BertForPreTraining
    for a, b in zip(model.state_dict().values(), loaded.state_dict().values()):
        assert torch.equal(a, b)
    with pytest.raises(ValueError, match="BertForPreTraining, not a BertForMLM"):
        load_checkpoint(tmp_path / "p.pt", model=BertForMLM(model.config))


def test_nsp_training_learns_an_easy_signal_and_evaluation_reports_it():
    docs = tagged_documents(n_docs=12, segments=60, seed=4)  # NotNext is visible: B's letters differ from A's
    model = small_pretraining_model()
    stream = PairStream(docs, TOKENIZER, 24, passes=4, masking=TrainConfig().masking,
                        generator=torch.Generator().manual_seed(0))
    val = sentence_pairs(tagged_documents(n_docs=12, segments=20, seed=9), TOKENIZER, 24,
                         generator=torch.Generator().manual_seed(0))
    # NSP only rises once the encoder has learnt something: about 150 steps here (measured)
    config = TrainConfig(steps=300, tokens_per_batch=24 * 32, lr=3e-3, warmup_steps=5, eval_every=150,
                         schedule={"kind": "fixed", "short": 24, "long": 24})
    before = evaluate_pairs(model, TOKENIZER, val)
    history = train(model.train(), TOKENIZER, stream, {"pairs": val}, config, objective=MaskedPairs(), progress=False)
    after = history["val_pairs"][-1]
    assert before["nsp_accuracy"] < 0.7 and after["nsp_accuracy"] > 0.9
    assert after["loss"] < before["loss"]
    assert history["step"][-1] == 300 and len(history["eval_step"]) == 2


def test_static_masks_are_reused_and_dynamic_ones_are_not():
    g = torch.Generator().manual_seed(0)  # random tokens, so no two examples are alike
    docs = [[torch.randint(5, 105, (8,), generator=g).tolist() for _ in range(10)] for _ in range(4)]
    kwargs = dict(passes=1, masking=TrainConfig().masking, nsp=False)
    static = PairStream(docs, TOKENIZER, 16, generator=torch.Generator().manual_seed(0), static_masks=True, **kwargs)
    dynamic = PairStream(docs, TOKENIZER, 16, generator=torch.Generator().manual_seed(0), **kwargs)
    n = len(static)

    def masks_by_example(stream, epochs):
        seen = {}
        for _ in range(epochs):
            part, inputs, labels = stream.next_batch(n)
            for row, lab in zip(part["input_ids"], labels):
                seen.setdefault(tuple(row.tolist()), set()).add(tuple(lab.tolist()))
        return seen

    assert all(len(m) == 1 for m in masks_by_example(static, 3).values())
    assert sum(len(m) > 1 for m in masks_by_example(dynamic, 3).values()) > n // 2
    assert static.epochs == 3


def test_pair_training_refuses_a_bad_curriculum():
    stream = PairStream(tagged_documents(), TOKENIZER, 16, passes=1, masking=TrainConfig().masking,
                        generator=torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match="rising"):
        train(small_pretraining_model(), TOKENIZER, [(0.5, stream)], {}, TrainConfig(steps=2), objective=MaskedPairs(),
              progress=False)


@pytest.mark.slow
@pytest.mark.parametrize("experiment", ["nsp", "masking", "rate"])
def test_roberta_command_smoke(tmp_path, experiment):
    from mlm_lib.experiments import roberta

    out = tmp_path / f"{experiment}.json"
    assert roberta.main([experiment, "--preset", "smoke", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    names = [v[0] for v in roberta.EXPERIMENTS[experiment]]
    assert [r["variant"] for r in result["runs"]] == names and set(result["summary"]) == set(names)
    assert result["experiment"] == experiment and "romeo-and-juliet" not in result["training_documents"]
    with pytest.raises(SystemExit):  # an existing result is never overwritten by accident
        roberta.main([experiment, "--preset", "smoke", "--out", str(out)])
    assert roberta.main([experiment, "--preset", "smoke", "--out", str(out), "--resume"]) == 0
    assert len(json.loads(out.read_text())["runs"]) == len(names)  # nothing run twice


@pytest.mark.parametrize("experiment", ["nsp", "masking", "rate"])
def test_shipped_roberta_results_are_whole_and_readmes_show_them(experiment):
    from pathlib import Path

    from mlm_lib.course.assets import load_json_results
    from mlm_lib.course.comparisons import TOGETHER, shipped
    from mlm_lib.experiments import roberta

    for name in TOGETHER[f"roberta_{experiment}"]:  # each file: one command's, its summary its own seeds'
        made = load_json_results(name)
        assert made["experiment"] == experiment and made["preset"] == "full"
        assert all(c.startswith(f"python -m mlm_lib.experiments.roberta {experiment} ") for c in made["commands"])
        assert made["summary"] == roberta.summary(made["runs"])
    results = shipped(f"roberta_{experiment}")  # every seed
    assert results["summary"] == roberta.summary(results["runs"])
    assert list(results["summary"]) == [v[0] for v in roberta.EXPERIMENTS[experiment]]  # every variant ran
    seeds = {name: sorted(r["seed"] for r in results["runs"] if r["variant"] == name) for name in results["summary"]}
    assert len({tuple(s) for s in seeds.values()}) == 1, seeds  # every variant with the same seeds
    for run in results["runs"]:
        assert run["history"]["eval_step"][-1] == results["settings"]["steps"]
        assert "romeo-and-juliet" not in results["training_documents"]
    table = roberta_table(results)
    root = Path(__file__).resolve().parents[1]
    assert table in (root / "docs/results-part2.md").read_text(), "docs' table must be results_table(the shipped JSON)"
    assert table in (root / "mlm_lib/course/assets/results/README.md").read_text()


def test_the_same_configuration_in_two_experiments_gives_the_same_figures():
    """MLM alone at 15%, seed 0, runs in the nsp and in the rate experiment: README says they agree exactly."""
    from mlm_lib.course.assets import load_json_results

    def final(experiment, variant):
        run = next(r for r in load_json_results(f"roberta_{experiment}")["runs"]
                   if r["variant"] == variant and r["seed"] == 0)
        return run["history"]["val_segments"][-1]

    assert final("nsp", "MLM alone") == final("rate", "15%")


def test_pair_training_holds_the_rate_after_warm_up_when_told():
    """The sentence-head experiment holds the rate after its warm-up (decay=False); the default decays it to 0."""
    stream = PairStream(tagged_documents(), TOKENIZER, 16, passes=1, masking=TrainConfig().masking,
                        generator=torch.Generator().manual_seed(0))
    seen = []
    optimizer_step = torch.optim.AdamW.step

    def spy(self, *args, **kwargs):
        seen.append(self.param_groups[0]["lr"])
        return optimizer_step(self, *args, **kwargs)

    torch.optim.AdamW.step = spy
    try:
        for decay in (False, True):
            config = TrainConfig(steps=4, tokens_per_batch=64, lr=1e-3, warmup_steps=2, eval_every=4, decay=decay)
            train(small_pretraining_model(), TOKENIZER, stream, {}, config, objective=MaskedPairs(), progress=False)
    finally:
        torch.optim.AdamW.step = optimizer_step
    assert seen[:4] == [5e-4, 1e-3, 1e-3, 1e-3]  # warm-up, then held
    assert seen[4:] == [5e-4, 1e-3, 1e-3, 5e-4]  # the course's warm-up and linear decay

def test_speaker_names_and_the_shortcut_they_give():
    from mlm_lib.pairs import shares_a_speaker, speaker_names

    assert speaker_names("[CLS] SAMPSON : Gregory . LADY CAPULET : Ay . I : no . Romeo : so [SEP]") == {"SAMPSON",
                                                                                                          "CAPULET"}
    tok = CharTokenizer.from_text("ROMEO :JULIET,ab ")
    rows = []
    for a, b in (("ROMEO : ab", "JULIET : ba , ROMEO : a"), ("ROMEO : ab", "JULIET : ab")):
        ids = [tok.cls_id, *tok.encode(a), tok.sep_id, *tok.encode(b), tok.sep_id]
        rows.append((ids, [0] * (len(a) + 2) + [1] * (len(b) + 1)))
    width = max(len(r[0]) for r in rows) + 2
    pairs = {"input_ids": torch.tensor([r[0] + [tok.pad_id] * (width - len(r[0])) for r in rows]),
             "token_type_ids": torch.tensor([r[1] + [0] * (width - len(r[1])) for r in rows]),
             "attention_mask": torch.tensor([[1] * len(r[0]) + [0] * (width - len(r[0])) for r in rows])}
    assert shares_a_speaker(pairs, tok).tolist() == [True, False]


@pytest.mark.slow
def test_sentence_head_command_smoke(tmp_path):
    from mlm_lib.experiments import sentence_head

    out = tmp_path / "head.json"
    assert sentence_head.main(["--preset", "smoke", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    names = [v[0] for v in sentence_head.VARIANTS]
    assert [r["variant"] for r in result["runs"]] == names and list(result["summary"]) == names
    assert not set(result["training_documents"]) & set(result["held_out_documents"])
    for run in result["runs"]:
        assert set(run["also_in_training"]) == {n for n, _, _ in sentence_head.EVAL_SETS}
        assert all(0 <= e["nsp_accuracy"] <= 1 for n, _, _ in sentence_head.EVAL_SETS
                   for e in run["history"][f"val_{n}"])
    assert result["runs"][2]["config"]["lr"] == 1e-3 and result["runs"][0]["config"]["lr"] == 3e-4
    with pytest.raises(SystemExit):  # an existing result is never overwritten by accident
        sentence_head.main(["--preset", "smoke", "--out", str(out)])
    assert sentence_head.main(["--preset", "smoke", "--out", str(out), "--resume", "--seeds", "0", "1",
                               "--variants", "MLM + SOP"]) == 0
    runs = json.loads(out.read_text())["runs"]
    assert [(r["variant"], r["seed"]) for r in runs[3:]] == [("MLM + SOP", 1)]  # nothing run twice


def test_shipped_sentence_head_results_are_whole_and_readmes_show_them():
    from pathlib import Path

    from mlm_lib.course.assets import load_json_results
    from mlm_lib.experiments import sentence_head

    from mlm_lib.course.comparisons import TOGETHER, shipped

    first = load_json_results("sentence_head")
    assert first["summary"] == sentence_head.summary(first["runs"])  # the file as its command wrote it
    for name in TOGETHER["sentence_head"]:  # the third seed, in a file of its own
        made = load_json_results(name)
        assert made["experiment"] == "sentence_head" and made["preset"] == "full"
        assert all(c.startswith("python -m mlm_lib.experiments.sentence_head ") for c in made["commands"])
    results = shipped("sentence_head")
    results["summary"] = sentence_head.summary(results["runs"])
    assert list(results["summary"]) == [v[0] for v in sentence_head.VARIANTS]  # every variant ran
    seeds = {name: sorted(r["seed"] for r in results["runs"] if r["variant"] == name) for name in results["summary"]}
    assert seeds["MLM + NSP"] == seeds["MLM + SOP"] == [0, 1, 2], seeds
    assert not set(results["training_documents"]) & set(results["held_out_documents"])
    for run in results["runs"]:
        assert run["history"]["eval_step"][-1] == results["settings"]["steps"]
    table = sentence_head_table(results)
    root = Path(__file__).resolve().parents[1]
    assert table in (root / "docs/results-part2.md").read_text(), "docs' table must be results_table(the shipped JSON)"
    assert table in (root / "mlm_lib/course/assets/results/README.md").read_text()


def test_equal_halves_trims_the_longer_half_and_keeps_the_labels():
    from mlm_lib.pairs import equal_halves

    made = sentence_pairs(tagged_documents(), TOKENIZER, 40, generator=torch.Generator().manual_seed(3), nsp=False,
                          sop=True)
    even = equal_halves(made, TOKENIZER, seed=1)
    assert torch.equal(even["next_sentence_label"], made["next_sentence_label"])
    assert even["input_ids"].shape == made["input_ids"].shape
    for row in range(len(made["input_ids"])):
        halves = []
        for pairs in (made, even):
            real = pairs["attention_mask"][row].bool()
            ids, types = pairs["input_ids"][row][real], pairs["token_type_ids"][row][real]
            halves.append((ids[types == 0][1:-1].tolist(), ids[types == 1][:-1].tolist()))
        (a, b), (a2, b2) = halves
        assert len(a2) == len(b2) == min(len(a), len(b))
        shorter, longer, kept = (a, b, b2) if len(a) <= len(b) else (b, a, a2)
        assert (a2 if len(a) <= len(b) else b2) == shorter  # the shorter half is untouched
        assert any(longer[i:i + len(kept)] == kept for i in range(len(longer) - len(kept) + 1))  # a run of it


def test_readmes_give_the_sentence_head_commands_exactly():
    from pathlib import Path

    from mlm_lib.course.assets import load_json_results

    root = Path(__file__).resolve().parents[1]
    for readme in ("docs/results-part2.md", "mlm_lib/course/assets/results/README.md"):
        text = (root / readme).read_text()
        assert all(command in text for command in load_json_results("sentence_head")["commands"]), readme


def test_notebook_10s_held_out_pairs_are_the_sentence_head_experiments():
    """Notebook 10 (cells 44 and 46) scores its shortcut rules on the very held-out pairs the heads were scored on:
    seed 99 at max_len 128, all 409 SOP pairs and the first 512 of the NSP pairs."""
    from mlm_lib.course.assets import reference_checkpoint
    from mlm_lib.experiments import sentence_head
    from mlm_lib.pairs import encode_documents, sentence_pairs, split_documents

    tokenizer = reference_checkpoint("shakespeare-wordpiece").tokenizer
    train_docs, val_docs = split_documents(load_documents(None))
    val_pieces = encode_documents(val_docs, tokenizer)
    settings = sentence_head.PRESETS["full"]
    names = list(train_docs)[: settings["train_documents"]]
    sets = sentence_head.eval_sets(encode_documents({n: train_docs[n] for n in names}, tokenizer), val_pieces,
                                   tokenizer, settings)
    for name, sop in (("held-out SOP", True), ("held-out NSP", False)):
        notebooks = sentence_pairs(val_pieces, tokenizer, 128, generator=torch.Generator().manual_seed(99), nsp=not sop,
                                   sop=sop)
        heads = sets[name]
        n = len(heads["input_ids"])
        assert n == (409 if sop else 512) and len(notebooks["input_ids"]) == (409 if sop else 565)
        assert torch.equal(heads["input_ids"], notebooks["input_ids"][:n])
        assert torch.equal(heads["next_sentence_label"], notebooks["next_sentence_label"][:n])


def test_google_not_next_share_counts_one_segment_chunks_as_not_next():
    """Notebook 10's comparison with Google's rule: a chunk of one segment must take B from elsewhere (NotNext), so
    documents of one long segment each give NotNext every time; short segments give about half."""
    from mlm_lib.pairs import google_not_next_share

    long_segments = [[list(range(200))] * 6 for _ in range(4)]  # every segment fills a pair by itself
    assert google_not_next_share(long_segments, 128, seed=0) == 1.0
    short_segments = [[[1, 2, 3]] * 400 for _ in range(4)]  # chunks of many segments: the coin decides
    assert 0.4 < google_not_next_share(short_segments, 128, seed=0) < 0.6
    assert math.isnan(google_not_next_share([], 128, seed=0))
