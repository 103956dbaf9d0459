"""Checks for the exercises of notebook 08 (WordPiece)."""
from __future__ import annotations

from collections import Counter

from ...wordpiece import word_pieces
from ._common import ExerciseError, _call, _ok

# Toy corpora. In each the right rule's best pair wins outright (no tie; the merged case below has a tie, where
# any best pair passes); the last one
# tells the score with every occurrence counted from a score that counts a piece only where it stands in a pair
# (`a` also occurs as a word on its own: 24 times in all, 4 of them as the first piece of a pair).
_CORPORA = [
    {"the": 50, "this": 30, "that": 30, "quit": 3, "quiet": 3, "tu": 1},
    {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5},
    {"low": 5, "lower": 2, "newest": 6, "widest": 3, "zz": 2},
    {"ab": 4, "a": 20, "cd": 6, "ce": 5, "fd": 1},
    {"hahah": 4, "ha": 3, "ho": 2},  # a piece twice in one word: counted once per word, another pair wins
    {"deb": 6, "ad": 10, "ge": 16, "ae": 18, "gg": 2},  # the score, the sum, the squared count and BPE all differ
    {"xy": 2, "zw": 1, "z": 2},  # pairs counted once per word (pieces weighted) pick 'z ##w'; the score 'x ##y'
]


def _splits(counts):
    return {w: [w[0]] + ["##" + c for c in w[1:]] for w in counts}


# Each corpus split into characters, and the first once more after `q ##u` was merged: best_pair must read the
# splits it is given (a function that splits the words again from their counts answers 'q ##u' there, a pair that
# no longer exists).
_CASES = [(counts, _splits(counts)) for counts in _CORPORA] + [
    (_CORPORA[0], {w: (["qu"] + s[2:] if s[:2] == ["q", "##u"] else s) for w, s in _splits(_CORPORA[0]).items()})]


def _pair_hint(err):
    if isinstance(err, KeyError) and err.args and isinstance(err.args[0], (tuple, list)):
        return (f"you looked word_counts up with {err.args[0]!r}, a word's split: word_counts is keyed by the words "
                "themselves, as splits is (for word, split in splits.items(): ... word_counts[word]).")
    if isinstance(err, KeyError) and err.args and isinstance(err.args[0], int):
        return (f"splits and word_counts are dicts keyed by words ({{'hug': ['h', '##u', '##g'], ...}}), not lists: "
                f"[{err.args[0]}] looks for a word named {err.args[0]}. Go through the words with .items().")
    if isinstance(err, KeyError):
        return ("a word of the check's corpora is missing from the counts you read: use the function's own "
                "arguments, splits and word_counts, not the notebook's variables.")
    if isinstance(err, ZeroDivisionError):
        return ("a count you divided by is 0: the key you looked up was never counted. Two ways to get there: a "
                "look-up with something that is not one piece (the whole pair, say; each of its two pieces has a "
                "count of its own), or pieces counted from other splits than the splits argument, as they stand now "
                "(after a merge, 'qu' is one piece).")
    if "empty" in str(err):  # max() of no pairs: "arg is an empty sequence" / "iterable argument is empty"
        return ("on one of the check's small corpora your function counted no pair at all, though each word there "
                "of two pieces or more has at least one: does your loop reach each word's last pair "
                "(zip(split, split[1:]), or range(len(split) - 1))?")
    return None


def _counts(counts, splits):
    """(pair counts, piece counts, counts of each piece as a pair's first member, as its second), weighted."""
    pairs, units, firsts, seconds = Counter(), Counter(), Counter(), Counter()
    for w, n in counts.items():
        for a, b in zip(splits[w], splits[w][1:]):
            pairs[a, b] += n
            firsts[a] += n
            seconds[b] += n
        for u in splits[w]:
            units[u] += n
    return pairs, units, firsts, seconds


def _keys(counts, splits, rule):
    """pair -> its value under one of the rules a learner may have written: the score, BPE's frequency, the score
    with a sum below, the score with unweighted counts, the score with pieces counted only inside pairs, or the
    score turned upside down (the lowest wins)."""
    pairs, units, firsts, seconds = _counts({w: 1 for w in counts} if rule == "unweighted" else counts, splits)
    if rule == "pairs unweighted":
        pairs = _counts({w: 1 for w in counts}, splits)[0]
    if rule == "once per word":
        units = Counter()
        for w, n in counts.items():
            for u in set(splits[w]):
                units[u] += n
    key = {"score": lambda p: pairs[p] / (units[p[0]] * units[p[1]]), "frequency": lambda p: pairs[p],
           "sum": lambda p: pairs[p] / (units[p[0]] + units[p[1]]),
           "unweighted": lambda p: pairs[p] / (units[p[0]] * units[p[1]]),
           "pairs only": lambda p: pairs[p] / (firsts[p[0]] * seconds[p[1]]),
           "lowest": lambda p: -pairs[p] / (units[p[0]] * units[p[1]]),
           "once per word": lambda p: pairs[p] / (units[p[0]] * units[p[1]]),
           "squared": lambda p: pairs[p] ** 2 / (units[p[0]] * units[p[1]]),
           "pairs unweighted": lambda p: pairs[p] / (units[p[0]] * units[p[1]])}[rule]
    return {p: key(p) for p in pairs}


def _by_rule(counts, splits, rule):
    """The best pair under `rule` (ties: the first in sorted order)."""
    keys = _keys(counts, splits, rule)
    return max(sorted(keys), key=keys.get)


def _best_under(counts, splits, rule, got) -> bool:
    """Whether `got` is a best pair under `rule`, however a tie was broken."""
    keys = _keys(counts, splits, rule)
    return got in keys and keys[got] >= max(keys.values()) - 1e-12


_RULE_HINTS = {  # in this order: unweighted counts tie often, and a tie can look like another slip
    "frequency": "{got} is the most *frequent* pair: that is BPE's rule. WordPiece divides the pair's count by the "
                 "counts of its two parts.",
    "sum": "{got} wins if the pair's count is divided by the *sum* of its parts' counts; the WordPiece score "
           "divides by their *product*, freq(a) * freq(b).",
    "squared": "{got} wins if the pair's count weighs more than its parts' (squared, or the product's square root "
               "below it, which ranks the same): the WordPiece score divides the pair's count itself by the plain "
               "product freq(a) * freq(b).",
    "pairs only": "{got} wins if a piece is counted only where it stands in a pair (a as a pair's first member, b "
                  "as its second). freq(a) counts *every* occurrence of the piece: also as a word's last piece, or "
                  "as a whole word of one piece (in {corpus}, 'a' alone).",
    "once per word": "{got} wins if a piece is counted once per word it occurs in; freq(a) counts every "
                     "occurrence, weighted by the word's count: in 'hahah', '##a' occurs twice and '##h' twice.",
    "unweighted": "Weight every count by how often its word occurs (word_counts[word]), for the pairs and for the "
                  "single pieces.",
    "pairs unweighted": "{got} wins if each pair is counted once per word while the pieces are weighted: weight the "
                        "pair counts by how often their word occurs too (word_counts[word]).",
    "lowest": "{got} has the *lowest* score: WordPiece merges the pair with the highest.",
}


def _score_line(counts, splits, pair):
    pairs, units, _, _ = _counts(counts, splits)
    a, b = pair
    if (a, b) not in pairs:
        return f"{pair} is not a pair of neighbouring pieces in any word"
    return f"{pair} scores {pairs[a, b]} / ({units[a]} * {units[b]}) = {pairs[a, b] / (units[a] * units[b]):.3f}"


def check_best_pair(fn) -> None:
    """fn(splits, word_counts) -> the pair (first, second) with the highest WordPiece score
    freq(pair) / (freq(first) * freq(second)), counts weighted by how often each word occurs."""
    answers = []
    for counts, splits in _CASES:  # every corpus first: a slip is named by the rule all the answers follow
        got = _call(fn, {w: list(s) for w, s in splits.items()}, dict(counts), hint=_pair_hint)
        if isinstance(got, str):
            raise ExerciseError(f"You returned one string, {got!r}: return the pair as a tuple of its two pieces, "
                                "e.g. ('q', '##u'); the merge into one piece happens after the choice.")
        returned = got  # shown as it came back (a list stays a list in the message)
        try:
            got = tuple(got)
        except TypeError:
            raise ExerciseError(f"Return the pair as a tuple (first, second), e.g. ('q', '##u'); got {got!r}.") from None
        if len(got) != 2 or not all(isinstance(p, str) for p in got):
            holds_score = len(got) == 2 and isinstance(got[0], (int, float)) and isinstance(got[1], tuple)
            raise ExerciseError(f"Return the pair as a tuple of two pieces (first, second), e.g. ('q', '##u'); got "
                                f"{returned!r}" + (": the score came back with it. Return the pair alone."
                                                   if holds_score else "."))
        answers.append((counts, splits, got))
    if all(_best_under(counts, splits, "score", got) for counts, splits, got in answers):  # ties: any best pair
        _ok("'q ##u' beats the far more frequent 't ##h': both pairs hold together, and q and u are far rarer.")
        return
    counts, splits, got = next(a for a in answers if not _best_under(a[0], a[1], "score", a[2]))
    for rule, hint in _RULE_HINTS.items():
        if all(_best_under(c, s, rule, g) for c, s, g in answers):
            raise ExerciseError(hint.format(got=got, corpus=counts))
    if _best_under(counts, splits, "score", got[::-1]):
        raise ExerciseError(f"{got} is the best pair the wrong way round: return it as (first, second), in the order "
                            f"the two pieces stand in the word, {got[::-1]}.")
    if not got[1].startswith("##") and _best_under(counts, splits, "score", (got[0], "##" + got[1])):
        raise ExerciseError(f"{got}: the right pair, but its second piece lost its '##'. Return the two pieces as "
                            f"they stand in the splits, {(got[0], '##' + got[1])}.")
    lasts, firsts = {s[-1] for s in splits.values()}, {s[0] for s in splits.values()}
    if got not in _counts(counts, splits)[0] and got[0] in lasts and got[1] in firsts:
        raise ExerciseError(f"{got} joins the last piece of one word and the first piece of another: a pair is two "
                            "neighbouring pieces inside one word (count each word's pairs apart, weighted by its "
                            "count), since a merge never crosses a space.")
    if got not in _counts(counts, splits)[0]:
        raise ExerciseError(f"{got} is not a pair of neighbouring pieces in the splits the check gave you, "
                            f"{splits}: read the splits argument (after a merge it holds merged pieces, such as 'qu'), "
                            "rather than the notebook's own counts or the words split again.")
    want = _by_rule(counts, splits, "score")
    raise ExerciseError(f"On {counts} the best pair is {want}, not {got}: {_score_line(counts, splits, want)}, "
                        f"while {_score_line(counts, splits, got)}. Check in turn how you count the pairs, how you "
                        "count the single pieces, and the score you compare.")


# ---- Exercise 2: greedy longest match first -----------------------------------------------------------------

# "unab" + "##le" (longest first, from the left) against "un" + "##able" (longest last piece first, from the right);
# "abc": "ab", then no "##c", so [UNK], although "a" + "##bc" would cover it (BERT does not go back)
# "ww": 'w' then '##w' (bare lookups give 'w', 'w'; slicing from the word's start instead of `start` gives [UNK])
# "wab": 'w', then '##a' '##b' (the vocabulary has 'ab' for a word's start, not '##ab': a later piece is looked up
# with '##' only)
_VOCAB = {"un", "##believ", "##able", "u", "##n", "##b", "##e", "##l", "##i", "##v", "##a", "believ", "a", "##ble",
          "unab", "##le", "ab", "##bc", "w", "##w"}
_WORDS = ("unbelievable", "un", "believable", "unbelievablex", "xun", "a", "unable", "abc", "ww", "wab")


def _encode(word, vocab, slip=None):
    """Greedy longest-match-first as written with one of the usual slips (None: right)."""
    pieces, start = [], 0
    while start < len(word):
        if slip == "shortest":
            ends = range(start + 1, len(word) + 1)
        elif slip == "no single character":  # the loop's last length is 2: range(len(word), start + 1, -1)
            ends = range(len(word), start + 1, -1)
        else:
            ends = range(len(word), start, -1)
        for end in ends:
            bare = start == 0 if slip not in ("bare", "## first") else slip == "bare"
            part = word[:end] if slip == "from the start" else word[start:end]
            piece = part if bare else "##" + part
            if piece in vocab or (slip == "either form" and not bare and part in vocab):
                pieces.append(piece)
                start = end
                break
        else:
            if slip == "keep the pieces":
                return pieces + ["[UNK]"]
            if slip == "[UNK] per character":
                pieces.append("[UNK]")
                start += 1
                continue
            return ["[UNK]"]
    return pieces


_ENCODE_HINTS = {
    "keep the pieces": "When one part of a word cannot be matched, the *whole* word becomes ['[UNK]'] (BERT does "
                       "not keep the pieces it found).",
    "[UNK] per character": "You wrote an [UNK] for the part that does not match and went on; BERT gives up on the "
                           "word: when some part cannot be matched, the *whole* word becomes ['[UNK]'].",
    "bare": "Every piece is looked up bare, but only a word's first piece is stored bare: every later one is stored "
            "with '##' in front (vocab holds 'un' and '##able', not 'able').",
    "from the start": "Your pieces are cut from the word's beginning (word[:end]) rather than from where the last "
                      "piece ended (word[start:end]): after 'w', the next piece of 'ww' is '##w', the rest of the word.",
    "either form": "A later piece is looked up in either form, '##ab' or 'ab': only the '##' form may continue a "
                   "word. 'ab' (stored bare) is a piece for a word's *start*; after 'w', 'wab' goes on with '##a', "
                   "'##b'.",
    "## first": "The first piece of a word is stored without '##' ('un', not '##un'); only the later ones have it.",
    "shortest": "You take the *shortest* piece that fits; BERT takes the *longest*: at each position, start from "
                "the longest substring and shorten it until it is in the vocabulary.",
    "no single character": "A piece of one character is never tried: 'a' is in the vocabulary, yet you returned "
                           "['[UNK]'] for it. Check the last length your inner loop tries.",
}


def check_encode_word(fn) -> None:
    """fn(word, vocab) -> the pieces of `word`, greedy longest match first, or ['[UNK]'] if it cannot be covered."""
    answers = []
    for word in _WORDS:
        got = _call(fn, word, set(_VOCAB), seconds=10, what=f"the word {word!r}")
        if isinstance(got, tuple):
            got = list(got)
        if not isinstance(got, list):
            raise ExerciseError(f"Return a list of pieces, e.g. ['un', '##believ', '##able']; got {type(got).__name__}.")
        answers.append((word, got))
    if all(got == (word_pieces(word, _VOCAB) or ["[UNK]"]) for word, got in answers):
        _ok("Greedy longest-match-first, and a word it cannot cover becomes a single [UNK].")
        return
    for slip, hint in _ENCODE_HINTS.items():
        if all(got == _encode(word, _VOCAB, slip) for word, got in answers):
            raise ExerciseError(hint)
    word, got = next((w, g) for w, g in answers if g != (word_pieces(w, _VOCAB) or ["[UNK]"]))
    want = word_pieces(word, _VOCAB) or ["[UNK]"]
    if word == "unable" and got == ["un", "##able"]:
        raise ExerciseError("For 'unable' expected ['unab', '##le'], got ['un', '##able']: that is the longest *last* "
                            "piece first, matching from the end of the word. BERT starts at the word's beginning and "
                            "takes the longest piece there ('unab'), then goes on from where it ends.")
    if word == "abc" and got == ["a", "##bc"]:
        raise ExerciseError("For 'abc' expected ['[UNK]'], got ['a', '##bc']: after 'ab' nothing matches '##c', and "
                            "BERT then gives up on the word. It never goes back to try a shorter first piece ('a'), "
                            "even where that would cover the word.")
    raise ExerciseError(f"For {word!r} expected {want}, got {got} (vocab: {sorted(_VOCAB)}). Check in turn: the "
                        "longest piece first, '##' on every piece but the first, and the whole word as one [UNK] when "
                        "some part cannot be matched.")
