"""WordPiece: the sub-word vocabulary BERT reads (`un ##believ ##able`), trained and applied by hand.

Taught in notebook 08 (WordPiece): normalisation and pre-tokenisation in §1, the merge score and training in
§2-§3, greedy longest-match encoding in §4, Hugging Face `tokenizers` beside it in §5, the vocabulary size in
§6. Notebook 09 (whole-word masking) uses the word ids that `encode` returns.

Three steps turn text into pieces, as in BERT's `BasicTokenizer` + `WordpieceTokenizer`:

1. normalise (`bert_normalize`): drop control characters, turn every kind of white space into a space, put
   spaces around CJK ideographs (each is its own word); only when asked, lower-case and strip accents;
2. pre-tokenise (`split_words`): split at white space, and make every punctuation character its own word;
3. split each word into pieces from the vocabulary, greedily, longest match first; a piece that does not
   start its word carries the prefix `##`; a word that cannot be covered becomes `[UNK]` as a whole.

Training builds the vocabulary: start from single characters (`a`, `##a`, ...) and repeatedly merge the
adjacent pair with the highest *WordPiece score* `freq(pair) / (freq(first) * freq(second))`, which prefers
pairs whose parts rarely occur apart, where BPE merges the most frequent pair. (That score is the rule as
Hugging Face's course reconstructs it -- "our best guess"; the published rule, Schuster & Nakajima 2012, picks
the merge that most raises a language model's likelihood of the training text.) Hugging Face's
`WordPieceTrainer` uses BPE's frequency rule with `##` prefixes: `rule="frequency"` calls it, so the two can
be compared on the same text. (Hugging Face's trainer breaks ties in a hash map's order, so two of its
trainings can differ in a few rare pieces: a model must keep the vocabulary it was trained with, as
checkpoints here do.)
"""
from __future__ import annotations

import numbers
import os
import re
import unicodedata
from collections import Counter
from pathlib import Path

import numpy as np
import torch

from .data import SPECIAL_TOKENS, VAL_FRACTION, load_corpus, train_val_split

PREFIX = "##"              # marks a piece that continues a word
MAX_WORD_CHARS = 100       # longer words become [UNK] without trying, as in BERT and Hugging Face
RULES = ("score", "frequency")
# The course's WordPiece models (notebook 09, the whole-word experiment): chosen in notebook 08, §6
COURSE_VOCAB_SIZE = 4000
COURSE_RULE = "frequency"

# CJK Unified Ideographs and their extensions, as in BERT's tokenizer (Hangul and kana are *not* in them)
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def _is_cjk(c: str) -> bool:
    cp = ord(c)
    return any(lo <= cp <= hi for lo, hi in _CJK)


def _is_control(c: str) -> bool:
    return c not in "\t\n\r" and unicodedata.category(c).startswith("C")


def _is_punctuation(c: str) -> bool:
    """BERT counts every ASCII non-letter, non-digit symbol (`$`, `+`, `^`...) and all of Unicode's P* as
    punctuation."""
    cp = ord(c)
    return 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126 or \
        unicodedata.category(c).startswith("P")


def strip_accents(text: str) -> str:
    """Decompose (Unicode NFD) and drop the combining marks: `é` -> `e`. Hangul syllables decompose into
    their letters (jamo), which are not marks: they stay, but each syllable becomes 2-3 characters."""
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


def bert_normalize(text: str, *, lowercase: bool = False, strip: bool | None = None) -> str:
    """BERT's normalisation. `strip` (accent stripping) follows `lowercase` unless given, as in BERT."""
    out = []
    for c in text:
        if c == "\0" or c == "\ufffd" or _is_control(c):
            continue
        if c.isspace():
            out.append(" ")
        elif _is_cjk(c):
            out.append(f" {c} ")
        else:
            out.append(c)
    text = "".join(out)
    if lowercase if strip is None else strip:
        text = strip_accents(text)
    if lowercase:
        text = "".join(c.lower() for c in text)  # per character, as Hugging Face's normaliser does
    return text


def split_words(normalized: str) -> list[str]:
    """Pre-tokenise normalised text: white space separates words, each punctuation character is a word."""
    punct = "".join(re.escape(c) for c in sorted(set(normalized)) if _is_punctuation(c))
    pattern = f"[{punct}]|[^\\s{punct}]+" if punct else r"\S+"
    return re.findall(pattern, normalized)


def word_pieces(word: str, vocab) -> list[str] | None:
    """Greedy longest-match-first split of one word into pieces of `vocab`; None if it cannot be covered."""
    if len(word) > MAX_WORD_CHARS:
        return None
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else PREFIX + word[start:end]
            if piece in vocab:
                pieces.append(piece)
                start = end
                break
        else:
            return None
    return pieces


def _merged(first: str, second: str) -> str:
    return first + (second[len(PREFIX):] if second.startswith(PREFIX) else second)


def train_merges(word_counts: dict[str, int], n_merges: int, *, rule: str = "score", min_frequency: int = 2):
    """The merges WordPiece training makes, in order, from word frequencies: `(alphabet, [(a, b), ...])`.

    rule="score": merge the pair with the highest freq(pair) / (freq(a) * freq(b)) (WordPiece);
    rule="frequency": the pair with the highest freq(pair) (BPE). Ties go to the more frequent pair, then to
    the alphabetically first. Only pairs seen at least `min_frequency` times are merged.
    Counts are updated word by word after each merge, and the best pair is found with one array operation,
    so 8,000 merges over Shakespeare take seconds rather than hours.
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}.")
    words = [[w[0]] + [PREFIX + c for c in w[1:]] for w in word_counts]
    counts = list(word_counts.values())
    alphabet = sorted({s for w in words for s in w})
    sym_id = {s: i for i, s in enumerate(alphabet)}
    symbols = list(alphabet)
    sym_count = np.zeros(len(symbols) + n_merges + 1, dtype=np.float64)
    pair_slot: dict[tuple[int, int], int] = {}
    pair_first, pair_second, pair_count = [], [], []
    pair_words: dict[int, set[int]] = {}
    ids = [[sym_id[s] for s in w] for w in words]

    def add(word_index: int, sign: int) -> None:
        seq, n = ids[word_index], counts[word_index] * sign
        for s in seq:
            sym_count[s] += n
        for a, b in zip(seq, seq[1:]):
            slot = pair_slot.get((a, b))
            if slot is None:
                slot = pair_slot[(a, b)] = len(pair_count)
                pair_first.append(a)
                pair_second.append(b)
                pair_count.append(0)
                pair_words[slot] = set()
            pair_count[slot] += n
            if sign > 0:
                pair_words[slot].add(word_index)

    for i in range(len(ids)):
        add(i, +1)
    merges = []
    while len(merges) < n_merges and pair_count:
        pc = np.asarray(pair_count, dtype=np.float64)
        if rule == "score":
            score = pc / (sym_count[pair_first] * sym_count[pair_second]).clip(min=1)
        else:
            score = pc.copy()
        score[pc < max(1, min_frequency)] = -1.0
        best = score.max()
        if best < 0:
            break
        tied = np.flatnonzero(score == best)
        slot = min(tied, key=lambda s: (-pair_count[s], symbols[pair_first[s]], symbols[pair_second[s]]))
        a, b = pair_first[slot], pair_second[slot]
        new = len(symbols)
        symbols.append(_merged(symbols[a], symbols[b]))
        merges.append((symbols[a], symbols[b]))
        for w in list(pair_words[slot]):
            seq = ids[w]
            if not any(x == a and y == b for x, y in zip(seq, seq[1:])):
                continue  # stale: an earlier merge already took this word's pair
            add(w, -1)
            out, i = [], 0
            while i < len(seq):
                if i + 1 < len(seq) and seq[i] == a and seq[i + 1] == b:
                    out.append(new)
                    i += 2
                else:
                    out.append(seq[i])
                    i += 1
            ids[w] = out
            add(w, +1)
    return alphabet, merges


def _whole(name: str, value, smallest: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < smallest:
        raise ValueError(f"{name} must be a whole number >= {smallest}, got {value!r}.")
    return int(value)


def _texts(texts) -> list[str]:
    if isinstance(texts, str):
        return [texts]
    try:
        texts = list(texts)
    except TypeError:
        raise TypeError("texts must be a string or an iterable of strings (e.g. a list of lines).") from None
    if not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be a string or an iterable of strings (e.g. a list of lines).")
    return texts


class WordPieceTokenizer:
    """BERT's tokenizer: text -> word pieces -> ids, with the course's five special tokens.

    Has the same special-token properties as `CharTokenizer` (`pad_id`, `mask_id`, `special_ids`, `tokens`,
    `vocab_size`...), so masking, training, checkpoints and widgets take either. `save_vocab` writes BERT's
    `vocab.txt`; `transformers.BertTokenizerFast.from_pretrained(folder, do_lower_case=lowercase)` reads it
    from its folder and gives the same ids (a test checks it; `BertTokenizerFast(vocab_file=...)` ignores the
    file in transformers 5, notebook 08).
    """

    def __init__(self, tokens, *, lowercase: bool = False):
        tokens = list(tokens)
        missing = [t for t in SPECIAL_TOKENS if t not in tokens]
        if missing:
            raise ValueError(f"A WordPiece vocabulary needs the special tokens {SPECIAL_TOKENS}; missing {missing}.")
        if len(set(tokens)) != len(tokens):
            repeated = sorted(t for t, n in Counter(tokens).items() if n > 1)[:5]
            raise ValueError(f"Each piece must appear once in the vocabulary; repeated: {repeated}.")
        self.tokens = tokens
        self.lowercase = bool(lowercase)
        self._id = {t: i for i, t in enumerate(tokens)}
        self._special = re.compile("|".join(re.escape(t) for t in SPECIAL_TOKENS))
        self._cache: dict[str, list[str] | None] = {}

    # ---- training ------------------------------------------------------------------------------------
    @classmethod
    def train(cls, texts, vocab_size: int, *, min_frequency: int = 2, lowercase: bool = False,
              rule: str = "score") -> "WordPieceTokenizer":
        """Learn a vocabulary of at most `vocab_size` pieces (specials and single characters included).

        rule="score" is WordPiece's merge score, trained here; rule="frequency" is Hugging Face's
        `WordPieceTrainer` (BPE's most-frequent-pair rule with `##`), for comparison. Fewer pieces come out
        when no pair is seen `min_frequency` times any more.
        """
        vocab_size = _whole("vocab_size", vocab_size, len(SPECIAL_TOKENS) + 1)
        min_frequency = _whole("min_frequency", min_frequency, 1)
        texts = _texts(texts)
        if rule not in RULES:
            raise ValueError(f"rule must be one of {RULES}, got {rule!r}.")
        if rule == "frequency":
            return cls._train_hf(texts, vocab_size, min_frequency, lowercase)
        counts = Counter()
        for text in texts:
            counts.update(split_words(bert_normalize(text, lowercase=lowercase)))
        if not counts:
            raise ValueError("There is no word in the text to learn from: pass some text.")
        n_alphabet = len({w[0] for w in counts} | {PREFIX + c for w in counts for c in w[1:]})
        if vocab_size < len(SPECIAL_TOKENS) + n_alphabet:
            raise ValueError(f"vocab_size={vocab_size} cannot even hold the {n_alphabet} single characters of this "
                             f"text (with and without ##) and the 5 special tokens: use at least "
                             f"{len(SPECIAL_TOKENS) + n_alphabet}.")
        alphabet, merges = train_merges(counts, vocab_size - len(SPECIAL_TOKENS) - n_alphabet, rule="score",
                                        min_frequency=min_frequency)
        return cls(list(SPECIAL_TOKENS) + alphabet + [_merged(a, b) for a, b in merges], lowercase=lowercase)

    @classmethod
    def _train_hf(cls, texts, vocab_size, min_frequency, lowercase):
        from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                            special_tokens=list(SPECIAL_TOKENS), show_progress=False)
        tok.train_from_iterator(texts, trainer)
        vocab = tok.get_vocab()
        # Its ids for `##` pieces, and its choice between pairs of equal count, follow a hash map's order,
        # which changes from run to run (huggingface/tokenizers#1794): a few pieces at the end of the
        # vocabulary may differ between two trainings on the same text. Sort what can be sorted (single
        # characters), keep the merges in the order made, and save the vocabulary you train with.
        merged = [t for t in sorted(vocab, key=vocab.get) if t not in SPECIAL_TOKENS and len(t.removeprefix(PREFIX)) > 1]
        single = sorted(t for t in vocab if t not in SPECIAL_TOKENS and len(t.removeprefix(PREFIX)) <= 1)
        return cls(list(SPECIAL_TOKENS) + single + merged, lowercase=lowercase)

    # ---- the vocabulary ------------------------------------------------------------------------------
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
        return sorted(self._id[t] for t in SPECIAL_TOKENS)

    # ---- text -> pieces -> ids -----------------------------------------------------------------------
    def _words(self, text: str) -> list[str]:
        """Pre-tokenised words of `text`; a special token written in the text (`[MASK]`) stays one word."""
        if not isinstance(text, str):
            raise TypeError(f"Expected text (a str), got {type(text).__name__}.")
        words, last = [], 0
        for m in self._special.finditer(text):
            words += split_words(bert_normalize(text[last:m.start()], lowercase=self.lowercase))
            words.append(m.group())
            last = m.end()
        return words + split_words(bert_normalize(text[last:], lowercase=self.lowercase))

    def _pieces(self, word: str) -> list[str] | None:
        if word not in self._cache:
            self._cache[word] = [word] if word in SPECIAL_TOKENS else word_pieces(word, self._id)
        return self._cache[word]

    def tokenize(self, text: str) -> list[str]:
        """Text to pieces: `tokenize("unbelievable")` -> e.g. `['un', '##believ', '##able']`."""
        return [p for w in self._words(text) for p in (self._pieces(w) or ["[UNK]"])]

    def encode(self, text: str, return_word_ids: bool = False):
        """Text to a 1-D tensor of ids. With `return_word_ids=True`, also a tensor giving each piece the
        index of its word (0, 1, ...; -1 for special tokens): what whole-word masking needs."""
        ids, word_ids, n = [], [], 0
        for w in self._words(text):
            pieces = self._pieces(w) or ["[UNK]"]
            ids += [self._id[p] for p in pieces]
            if w in SPECIAL_TOKENS:
                word_ids.append(-1)
            else:
                word_ids += [n] * len(pieces)
                n += 1
        ids = torch.tensor(ids, dtype=torch.long)
        return (ids, torch.tensor(word_ids, dtype=torch.long)) if return_word_ids else ids

    def decode(self, ids) -> str:
        """Ids back to text: `##` pieces join the piece before them, words are separated by spaces,
        specials are written out and padding is dropped. (Spacing around punctuation is not restored.)"""
        ids = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
        out = ""
        for i in ids:
            if i == self.pad_id:
                continue
            t = self.tokens[i]
            out += t[len(PREFIX):] if t.startswith(PREFIX) and out else (" " + t if out else t)
        return out

    def word_pieces_of(self, word: str) -> list[str] | None:
        """The pieces of one pre-tokenised word, or None where BERT would write [UNK]."""
        return self._pieces(word)

    # ---- files ---------------------------------------------------------------------------------------
    def save_vocab(self, path) -> Path:
        """Write BERT's `vocab.txt` (one piece per line, line number = id), atomically."""
        if any("\n" in t or "\r" in t or t != t.strip() for t in self.tokens):
            raise ValueError("A piece holds white space, which vocab.txt cannot store one per line.")
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text("\n".join(self.tokens) + "\n", encoding="utf-8")
            tmp.replace(path)
        finally:
            tmp.unlink(missing_ok=True)
        return path

    @classmethod
    def from_vocab_file(cls, path, *, lowercase: bool = False) -> "WordPieceTokenizer":
        """Read a BERT `vocab.txt` (ours, or a published model's)."""
        lines = Path(path).read_text(encoding="utf-8").split("\n")
        return cls([t for t in lines if t], lowercase=lowercase)

    def to_dict(self) -> dict:
        return {"type": "WordPieceTokenizer", "tokens": self.tokens, "lowercase": self.lowercase}

    @classmethod
    def from_dict(cls, data: dict) -> "WordPieceTokenizer":
        if data.get("type") != "WordPieceTokenizer" or "tokens" not in data:
            raise ValueError("This is not a saved WordPieceTokenizer (expected 'type' and 'tokens').")
        return cls(data["tokens"], lowercase=data.get("lowercase", False))

    def __eq__(self, other) -> bool:
        return (isinstance(other, WordPieceTokenizer) and self.tokens == other.tokens
                and self.lowercase == other.lowercase)

    def __repr__(self) -> str:
        return f"WordPieceTokenizer(vocab_size={self.vocab_size}, lowercase={self.lowercase})"


def prepare_wordpiece_data(corpus=None, vocab_size: int = COURSE_VOCAB_SIZE, *, rule: str = COURSE_RULE,
                           lowercase: bool = False, val_fraction: float = VAL_FRACTION):
    """The corpus in word pieces: `(tokenizer, (train_ids, train_word_ids), (val_ids, val_word_ids))`.

    The vocabulary is learnt from the training part only, so the held-out text may hold words it never saw
    (that is what the [UNK] rate measures); the split is the same as for the character models.
    """
    train_text, val_text = train_val_split(load_corpus(corpus), val_fraction)
    tokenizer = WordPieceTokenizer.train(train_text, vocab_size, rule=rule, lowercase=lowercase)
    return (tokenizer, tokenizer.encode(train_text, return_word_ids=True),
            tokenizer.encode(val_text, return_word_ids=True))
