"""Checkpoints (mlm_lib.checkpoints): the checksum a file carries and loading verifies, the upgrade of files of
format 1 (tensors bit for bit), and writes that are whole or not at all."""
import os

import pytest
import torch

from mlm_lib import BertConfig, BertForMLM, CharTokenizer, load_checkpoint, save_checkpoint
from mlm_lib.checkpoints import CHECKPOINT_FORMAT, WriteError, atomic_write, checksum, read_payload, upgrade


@pytest.fixture
def saved(tmp_path):
    tokenizer = CharTokenizer.from_text("to be or not to be, that is the question")
    torch.manual_seed(0)
    model = BertForMLM(BertConfig(vocab_size=tokenizer.vocab_size, d_model=16, n_layers=1, n_heads=2, d_ff=32,
                                  max_len=32))
    path = tmp_path / "model.pt"
    save_checkpoint(path, model, tokenizer)
    return path


def test_a_checkpoint_carries_the_checksum_of_all_it_holds(saved):
    payload = read_payload(saved)
    assert payload["format"] == CHECKPOINT_FORMAT and payload["checksum"] == checksum(payload)
    changed = dict(payload, model=dict(payload["model"]))
    changed["model"]["embeddings.word.weight"] = changed["model"]["embeddings.word.weight"].clone()
    changed["model"]["embeddings.word.weight"][0, 0] += 1e-6  # one weight, one ulp or so
    assert checksum(changed) != payload["checksum"]
    assert checksum(dict(payload, tokenizer={"type": "CharTokenizer", "tokens": []})) != payload["checksum"]
    torch.save(changed, saved)
    with pytest.raises(ValueError, match="is damaged: its weights"):
        load_checkpoint(saved)


def test_upgrade_adds_the_checksum_and_keeps_every_tensor_bit_for_bit(saved):
    old = read_payload(saved)
    first = {k: v for k, v in old.items() if k != "checksum"} | {"format": "mlm_lib-checkpoint-1"}
    torch.save(first, saved)  # a file as mlm_lib wrote it before checkpoints had a checksum
    assert load_checkpoint(saved).model is not None  # it still loads
    assert "upgraded to mlm_lib-checkpoint-2" in upgrade(saved)
    new = read_payload(saved)
    assert new["format"] == CHECKPOINT_FORMAT and set(new) == set(first) | {"checksum"}
    for key, tensor in first["model"].items():
        assert new["model"][key].dtype == tensor.dtype and torch.equal(new["model"][key], tensor)
        assert new["model"][key].numpy().tobytes() == tensor.numpy().tobytes()
    assert "already" in upgrade(saved)


def test_the_shipped_checkpoints_carry_their_checksum():
    from importlib.resources import files

    for path in sorted((files("mlm_lib.course.assets") / "checkpoints").glob("*.pt")):
        payload = read_payload(path)
        assert payload["format"] == CHECKPOINT_FORMAT and payload["checksum"] == checksum(payload), path.name


def test_a_failed_write_leaves_the_file_that_was_there(tmp_path):
    path = tmp_path / "state.pt"
    path.write_bytes(b"the last good state")

    def half_then_full(f):
        f.write(b"half of a new state")
        raise OSError(28, "No space left on device")
    with pytest.raises(WriteError) as failed:
        atomic_write(path, half_then_full)
    assert failed.value.filename == str(path) and failed.value.strerror == "No space left on device"
    assert path.read_bytes() == b"the last good state" and os.listdir(tmp_path) == ["state.pt"]


def test_a_model_path_the_notebooks_cannot_read_is_a_parameter_error(tmp_path):
    """A learner who sets `model_path` to a missing or damaged file reads one line naming the parameter and the fix
    (a ParameterError, printed as its message alone), not a traceback through the loader."""
    from mlm_lib.course.assets import load_model
    from mlm_lib.course.setup import ParameterError

    (tmp_path / "zero.pt").write_bytes(b"")
    for path in (tmp_path / "missing.pt", tmp_path, tmp_path / "zero.pt"):
        with pytest.raises(ParameterError, match="model_path: .* Set model_path in the parameters cell"):
            load_model(path)
