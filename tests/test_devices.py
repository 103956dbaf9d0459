"""One device rule (mlm_lib.devices): "auto" picks what this machine has, everything runs where the model is,
precision follows the device, and every command refuses a device the machine lacks with what it found.

On this CPU-only machine the GPU tests skip; wherever CUDA or MPS is present they run there (`on_accelerator`).
"""
import pytest
import torch

from mlm_lib import BertConfig, BertForMLM, CharTokenizer, TrainConfig, fixed, predict_masked, train
from mlm_lib import devices
from mlm_lib.experiments import (bench, curriculum, electra, finetune, lengths, mlm_vs_ltr, pretrain, roberta,
                                 sentence_head, speedrun, whole_word)

ACCELERATORS = [name for name, present in (("cuda", torch.cuda.is_available()), ("mps", devices.mps_available()))
                if present]
on_accelerator = pytest.mark.parametrize("name", ACCELERATORS or [pytest.param("cuda", marks=pytest.mark.skip(
    reason="no GPU here: runs wherever CUDA or MPS is present"))])

TEXT = "to be or not to be that is the question whether tis nobler in the mind to suffer " * 20


def tiny(tokenizer):
    torch.manual_seed(0)
    return BertForMLM(BertConfig(vocab_size=tokenizer.vocab_size, d_model=16, n_layers=1, n_heads=2, d_ff=32,
                                 max_len=32))


def short_run(model, tokenizer, precision="auto"):
    ids = tokenizer.encode(TEXT)
    config = TrainConfig(steps=6, tokens_per_batch=128, schedule=fixed(16), warmup_steps=1, eval_every=3,
                         eval_windows=8)
    return train(model, tokenizer, ids, ids, config, progress=False, precision=precision)


def test_auto_is_what_this_machine_has():
    expected = "cuda" if torch.cuda.is_available() else "mps" if devices.mps_trusted() else "cpu"
    assert devices.resolve_device("auto").type == expected
    assert devices.resolve_device(None).type == expected
    assert devices.resolve_device("cpu") == torch.device("cpu")


@pytest.mark.parametrize("name, message", [("meta", "cpu, cuda or mps"), ("tpu", "not a device name"),
                                           ("", "not a device name")])
def test_devices_the_course_does_not_compute_on_are_refused_by_name(name, message):
    with pytest.raises(ValueError, match=message):
        devices.resolve_device(name)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_without_a_gpu_says_what_was_found():
    with pytest.raises(ValueError, match="CUDA is not available here .*this machine has cpu"):
        devices.resolve_device("cuda")


def test_precision_follows_the_device():
    assert devices.precision_for("cpu") == "fp32" and devices.grad_scaler("fp32", "cpu") is None
    assert devices.precision_for("cpu", "bf16") == "bf16"
    with pytest.raises(ValueError, match="for GPUs"):
        devices.precision_for("cpu", "fp16")
    with pytest.raises(ValueError, match="precision must be one of"):
        devices.precision_for("cpu", "int8")
    assert devices.describe("cpu").startswith("cpu (") and devices.describe("cpu").endswith("fp32")
    assert devices.record("cpu") == {"device": "cpu", "device_name": devices.device_name("cpu"), "precision": "fp32"}


def test_train_on_the_cpu_is_what_it_was_bit_for_bit():
    """"auto" precision on the CPU is float32 without autocast: the same losses as asking for fp32 by name."""
    tokenizer = CharTokenizer.from_text(TEXT)
    auto, fp32 = short_run(tiny(tokenizer), tokenizer), short_run(tiny(tokenizer), tokenizer, "fp32")
    assert auto["loss"] == fp32["loss"] and auto["val_loss"] == fp32["val_loss"]


def test_the_batches_follow_the_model_not_the_process_world(monkeypatch):
    """`train` alone asks the model where it is. The bug it replaces asked `distributed.current()`, whose world of
    one process is always the CPU: here that world says "meta" instead, so a batch sent there would fail."""
    from mlm_lib import distributed

    tokenizer = CharTokenizer.from_text(TEXT)
    seen = []
    original = BertForMLM.forward

    def spy(self, inputs, *args, **kwargs):
        seen.append(inputs.device.type)
        return original(self, inputs, *args, **kwargs)

    monkeypatch.setattr(BertForMLM, "forward", spy)
    monkeypatch.setattr(distributed, "current", lambda: distributed.World(device=torch.device("meta")))
    history = short_run(tiny(tokenizer), tokenizer)
    assert seen and set(seen) == {"cpu"} and len(history["loss"]) == 6


@on_accelerator
def test_train_and_predict_run_on_the_accelerator(name):
    tokenizer = CharTokenizer.from_text(TEXT)
    device = devices.resolve_device(name)
    model = tiny(tokenizer).to(device)
    history = short_run(model, tokenizer)
    assert all(p.device.type == device.type for p in model.parameters())
    assert history["val_loss"][-1] < history["val_loss"][0] * 1.5
    cpu = short_run(tiny(tokenizer), tokenizer)
    assert abs(history["loss"][0] - cpu["loss"][0]) < 0.05  # the first step's loss: the same model, same batch
    assert predict_masked(model, tokenizer, "to be or not", [3], k=2)[0].candidates


COMMANDS = {
    "pretrain": (pretrain.main, ["--config", "smoke", "--out", "{tmp}/run"]),
    "speedrun": (speedrun.main, ["--preset", "smoke", "--minutes", "0.1", "--out", "{tmp}/s.json"]),
    "electra": (electra.main, ["--preset", "smoke", "--characters", "4096", "--out", "{tmp}/e.json"]),
    "finetune": (finetune.main, ["curve", "--preset", "smoke", "--out", "{tmp}/f.json"]),
    "curriculum": (curriculum.main, ["--preset", "smoke"]),
    "whole_word": (whole_word.main, ["--preset", "smoke"]),
    "roberta": (roberta.main, ["nsp", "--preset", "smoke", "--out", "{tmp}/r.json"]),
    "sentence_head": (sentence_head.main, ["--preset", "smoke", "--out", "{tmp}/h.json"]),
    "mlm_vs_ltr": (mlm_vs_ltr.main, ["--preset", "smoke", "--out", "{tmp}/m.json"]),
    "lengths": (lengths.main, ["{tmp}/model.pt"]),
    "bench": (bench.main, ["--steps", "1"]),
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("device, message", [
    pytest.param("cuda", "CUDA is not available here", marks=pytest.mark.skipif(torch.cuda.is_available(),
                                                                              reason="this machine has CUDA")),
    ("meta", "the course trains and evaluates on cpu, cuda or mps")])
def test_every_command_refuses_a_device_it_cannot_use_before_any_work(command, device, message, tmp_path, capsys):
    main, argv = COMMANDS[command]
    with pytest.raises(SystemExit) as stop:
        main([a.format(tmp=tmp_path) for a in argv] + ["--device", device])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "this machine has cpu" in err and "Traceback" not in err
    assert not any(tmp_path.iterdir())  # refused before anything was written


def test_one_thread_is_one_thread_not_one_threads():
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        assert devices.describe("cpu").endswith(", 1 thread), fp32")
        torch.set_num_threads(2)
        assert devices.describe("cpu").endswith(", 2 threads), fp32")
    finally:
        torch.set_num_threads(threads)
    record = {"cpu": "AMD EPYC", "cpu_flags": ["avx2"], "cores": 2, "threads": 1, "torch": "2.13.0+cpu"}
    assert devices.machine_summary(record) == "AMD EPYC (avx2), 2 cores, 1 thread, torch 2.13.0+cpu"
    assert devices.machine_summary(record | {"threads": 2}).endswith(", 2 threads, torch 2.13.0+cpu")
    # an older file's one-line record says what it lacks, so no text takes it for a named machine
    assert devices.machine_summary("x86_64, 2 threads, torch 2.13.0+cpu") == \
        "x86_64, 2 threads, torch 2.13.0+cpu (CPU model not recorded)"
