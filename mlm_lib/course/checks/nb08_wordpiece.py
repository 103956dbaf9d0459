"""Checks for the exercises of notebook 08 (WordPiece)."""
from __future__ import annotations

from collections import Counter

from ...wordpiece import train_merges, word_pieces
from ._common import ExerciseError, _call, _ok

_CORPORA = [
    {"the": 50, "this": 30, "that": 30, "quit": 3, "quiet": 3, "tu": 1},
    {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5},
    {"low": 5, "lower": 2, "newest": 6, "widest": 3, "zz": 2},
]


def _splits(counts):
    return {w: [w[0]] + ["##" + c for c in w[1:]] for w in counts}


def _frequent_pair(counts, splits):
    pairs = Counter()
    for w, n in counts.items():
        for a, b in zip(splits[w], splits[w][1:]):
            pairs[a, b] += n
    top = max(pairs.values())
    return min(p for p, f in pairs.items() if f == top)


def check_best_pair(fn) -> None:
    """fn(splits, word_counts) -> the pair (first, second) with the highest WordPiece score
    freq(pair) / (freq(first) * freq(second)), counts weighted by how often each word occurs."""
    for counts in _CORPORA:
        splits = _splits(counts)
        expected = train_merges(counts, 1, rule="score", min_frequency=1)[1][0]
        got = _call(fn, {w: list(s) for w, s in splits.items()}, dict(counts))
        try:
            got = tuple(got)
        except TypeError:
            raise ExerciseError(f"Return the pair as a tuple (first, second), e.g. ('q', '##u'); got {got!r}.") from None
        if got == expected:
            continue
        if got == _frequent_pair(counts, splits):
            raise ExerciseError(f"{got} is the most *frequent* pair: that is BPE's rule. WordPiece divides the "
                                "pair's count by the counts of its two parts.")
        flat = Counter()
        units = Counter(u for s in splits.values() for u in s)
        for s in splits.values():
            for a, b in zip(s, s[1:]):
                flat[a, b] += 1
        unweighted = max(flat, key=lambda p: flat[p] / (units[p[0]] * units[p[1]]))
        if got == unweighted:
            raise ExerciseError("Weight every count by how often its word occurs (word_counts[word]), for the pairs "
                                "and for the single pieces.")
        raise ExerciseError(f"On {counts} the best pair is not {got}. Count pairs and pieces over all words, "
                            "each weighted by its word's count, then take the largest freq(ab) / (freq(a) * freq(b)).")
    _ok("'q ##u' beats the far more frequent 't ##h': q is never seen without u, t is seen everywhere.")


def check_encode_word(fn) -> None:
    """fn(word, vocab) -> the pieces of `word`, greedy longest match first, or ['[UNK]'] if it cannot be covered."""
    vocab = {"un", "##believ", "##able", "u", "##n", "##b", "##e", "##l", "##i", "##v", "##a", "believ", "a", "##ble"}
    for word in ("unbelievable", "un", "believable", "unbelievablex", "xun", "a"):
        expected = word_pieces(word, vocab) or ["[UNK]"]
        got = _call(fn, word, set(vocab))
        if not isinstance(got, list):
            raise ExerciseError(f"Return a list of pieces, e.g. ['un', '##believ', '##able']; got {type(got).__name__}.")
        if got == expected:
            continue
        if word == "unbelievablex" and got[:3] == ["un", "##believ", "##able"]:
            raise ExerciseError("When one part of a word cannot be matched, the *whole* word becomes ['[UNK]'] "
                                "(BERT does not keep the pieces it found).")
        if any(p.startswith("##") for p in got[:1]) or (len(got) > 1 and not all(p.startswith("##") for p in got[1:])):
            raise ExerciseError(f"For {word!r} you returned {got}: the first piece has no ##, every later one has "
                                "(look it up in vocab as '##' + the substring).")
        raise ExerciseError(f"For {word!r} expected {expected}, got {got}: at each position, try the *longest* "
                            "substring first and shorten it until it is in the vocabulary.")
    _ok("Greedy longest-match-first, and a word it cannot cover becomes a single [UNK].")
