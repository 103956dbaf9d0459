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


def _counts(counts, splits):
    pairs, units = Counter(), Counter()
    for w, n in counts.items():
        for a, b in zip(splits[w], splits[w][1:]):
            pairs[a, b] += n
        for u in splits[w]:
            units[u] += n
    return pairs, units


def _by_rule(counts, splits, rule):
    """The best pair under one of the rules a learner may have written: the score, BPE's frequency, the score
    with a sum below, or the score with unweighted counts."""
    pairs, units = _counts(counts, splits)
    if rule == "unweighted":
        pairs, units = _counts({w: 1 for w in counts}, splits)
    key = {"score": lambda p: pairs[p] / (units[p[0]] * units[p[1]]), "frequency": lambda p: pairs[p],
           "sum": lambda p: pairs[p] / (units[p[0]] + units[p[1]]),
           "unweighted": lambda p: pairs[p] / (units[p[0]] * units[p[1]])}[rule]
    return max(sorted(pairs), key=key)


_RULE_HINTS = {
    "frequency": "{got} is the most *frequent* pair: that is BPE's rule. WordPiece divides the pair's count by the "
                 "counts of its two parts.",
    "sum": "{got} wins if the pair's count is divided by the *sum* of its parts' counts; the WordPiece score "
           "divides by their *product*, freq(a) * freq(b).",
    "unweighted": "Weight every count by how often its word occurs (word_counts[word]), for the pairs and for the "
                  "single pieces.",
}


def check_best_pair(fn) -> None:
    """fn(splits, word_counts) -> the pair (first, second) with the highest WordPiece score
    freq(pair) / (freq(first) * freq(second)), counts weighted by how often each word occurs."""
    answers = []
    for counts in _CORPORA:  # every corpus first: a slip is named by the rule all the answers follow
        splits = _splits(counts)
        got = _call(fn, {w: list(s) for w, s in splits.items()}, dict(counts))
        if isinstance(got, str):
            raise ExerciseError(f"You returned one string, {got!r}: return the pair as a tuple of its two pieces, "
                                "e.g. ('q', '##u'); the merge into one piece happens after the choice.")
        try:
            answers.append((counts, splits, tuple(got)))
        except TypeError:
            raise ExerciseError(f"Return the pair as a tuple (first, second), e.g. ('q', '##u'); got {got!r}.") from None
    if all(got == _by_rule(counts, splits, "score") for counts, splits, got in answers):
        _ok("'q ##u' beats the far more frequent 't ##h': q is never seen without u, t is seen everywhere.")
        return
    wrong = next((counts, splits, got) for counts, splits, got in answers if got != _by_rule(counts, splits, "score"))
    for rule, hint in _RULE_HINTS.items():
        if all(got == _by_rule(counts, splits, rule) for counts, splits, got in answers):
            raise ExerciseError(hint.format(got=wrong[2]))
    raise ExerciseError(f"On {wrong[0]} the best pair is not {wrong[2]}. Count pairs and pieces over all words, "
                        "each weighted by its word's count, then take the largest freq(ab) / (freq(a) * freq(b)).")


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
        if got == ["[UNK]"]:
            raise ExerciseError(f"For {word!r} you returned ['[UNK]'], but the vocabulary covers it: {expected}. Check "
                                "how you look pieces up: the first piece of a word bare, every later one with '##' "
                                "in front (vocab holds 'un' and '##able', not 'able').")
        raise ExerciseError(f"For {word!r} expected {expected}, got {got}: at each position, try the *longest* "
                            "substring first and shorten it until it is in the vocabulary.")
    _ok("Greedy longest-match-first, and a word it cannot cover becomes a single [UNK].")
