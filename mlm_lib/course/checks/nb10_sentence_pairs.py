"""Checks for the exercises of notebook 10 (sentence pairs and next-sentence prediction)."""
from __future__ import annotations

import torch

from ._common import ExerciseError, _call, _ok


def _as_list(value, what: str) -> list[int]:
    try:
        if isinstance(value, torch.Tensor):
            return [int(v) for v in value.tolist()]
        if isinstance(value, (list, tuple)):
            return [int(v) for v in value]
    except (TypeError, ValueError):
        raise ExerciseError(f"{what} should hold whole numbers (token ids or 0/1), got {str(value)[:80]}.") from None
    raise ExerciseError(f"Return {what} as a list or a 1-D tensor of whole numbers, got {type(value).__name__}.")


def _expected_row(a, b, max_len, cls_id, sep_id, pad_id):
    row = [cls_id, *a, sep_id, *b, sep_id]
    pad = max_len - len(row)
    return (row + [pad_id] * pad, [0] * (len(a) + 2) + [1] * (len(b) + 1) + [0] * pad, [1] * len(row) + [0] * pad)


ROW_NAMES = ("input_ids", "token_type_ids", "attention_mask")  # what pair_row returns, in order


def check_pair_row(fn) -> None:
    """fn(a, b, max_len, cls_id, sep_id, pad_id) -> (input_ids, token_type_ids, attention_mask), each max_len long:
    [CLS] A [SEP] B [SEP] then padding; types 0 for [CLS] A [SEP], 1 for B [SEP], 0 on padding."""
    cases = [([11, 12, 13], [21, 22], 10, 2, 3, 0), ([7], [8], 5, 2, 3, 0), ([30, 31], [40, 41, 42, 43], 12, 101, 102, 0),
             ([5, 6], [7], 8, 1, 2, 9),  # a tokenizer whose [PAD] is not id 0
             ([], [8, 9], 6, 2, 3, 0),  # an empty A: [CLS] [SEP] B [SEP]
             ([11, 12, 13], [12, 22], 9, 2, 3, 0),  # B's first piece is in A too, as in real pairs (the same word twice)
             ([5, 6], [], 6, 2, 3, 0)]  # an empty B: [CLS] A [SEP] [SEP], the last [SEP] still type 1 (as Hugging Face)
    for a, b, max_len, cls_id, sep_id, pad_id in cases:
        given_a, given_b = list(a), list(b)
        got = _call(fn, given_a, given_b, max_len, cls_id, sep_id, pad_id)
        if (given_a, given_b) != (a, b):
            raise ExerciseError(f"Your function changed the lists it was given (A became {given_a}): insert, append "
                                "and similar methods change the caller's list in place, and the caller may still "
                                "need it. Build a new list instead: + joins lists into a new one and leaves both as they were.")
        if got is None:
            raise ExerciseError("Your function returned None: it has no return statement, or one that returns "
                                "nothing. Return three things: (input_ids, token_type_ids, attention_mask).")
        if not isinstance(got, (tuple, list)) or len(got) != 3:
            raise ExerciseError("Return three things: (input_ids, token_type_ids, attention_mask).")
        if not all(isinstance(g, list) for g in got):
            kinds = ", ".join(sorted({type(g).__name__ for g in got}))
            raise ExerciseError(f"Return three lists, as the task says, not {kinds}: the next cells compare them with "
                                "Hugging Face's lists" + (", and a tuple never equals a list, even with the same items"
                                                          if "tuple" in kinds else
                                                          ", and a tensor compared with a list is not one True or "
                                                          "False") + ".")
        for g, name in zip(got, ROW_NAMES):
            if any(isinstance(v, bool) for v in g):
                raise ExerciseError(f"{name} holds True/False: use the numbers 1 and 0, as Hugging Face's tokenizer "
                                    "returns them" + (" (the model looks the types up in an embedding table by "
                                                      "number)." if name == "token_type_ids" else "."))
        ids, types, mask = (_as_list(g, name) for g, name in zip(got, ROW_NAMES))
        want_ids, want_types, want_mask = _expected_row(a, b, max_len, cls_id, sep_id, pad_id)
        if len(ids) != max_len or len(types) != max_len or len(mask) != max_len:
            raise ExerciseError(f"Every row is max_len={max_len} long (padded at the end); got lengths "
                                f"{len(ids)}, {len(types)}, {len(mask)}.")
        if ids != want_ids and pad_id != 0 and ids == _expected_row(a, b, max_len, cls_id, sep_id, 0)[0]:
            raise ExerciseError(f"For pad_id={pad_id} you padded with 0: use the pad_id the function is given (the "
                                "course tokenizer's [PAD] happens to be 0; another tokenizer's need not be).")
        if ids != want_ids and sorted(map(tuple, (ids, types, mask))) == sorted(map(tuple, (want_ids, want_types, want_mask))):
            raise ExerciseError("The right three lists, in another order: return (input_ids, token_type_ids, "
                                "attention_mask), in that order.")
        if ids != want_ids:
            raise ExerciseError(f"For A={a}, B={b}: input_ids should be {want_ids}, got {ids}. The layout is [CLS] A "
                                "[SEP] B [SEP], then [PAD] up to max_len.")
        if (types, mask) == (want_mask, want_types) and want_mask != want_types:
            raise ExerciseError("The right token_type_ids and attention_mask, in each other's place: return "
                                "(input_ids, token_type_ids, attention_mask), in that order.")
        if types != want_types:
            regions = [("[CLS]", [0]), ("A's pieces", range(1, len(a) + 1)), ("the first [SEP]", [len(a) + 1]),
                       ("B's pieces", range(len(a) + 2, len(a) + len(b) + 2)), ("the last [SEP]", [len(a) + len(b) + 2]),
                       ("the padding", range(len(a) + len(b) + 3, max_len))]
            wrong = [(name, want_types[idx[0]]) for name, idx in regions
                     if len(idx) and any(types[i] != want_types[i] for i in idx)]
            if [name for name, _ in wrong] == ["the first [SEP]"]:
                raise ExerciseError("The first [SEP] closes segment A: it has token type 0, like [CLS] and A. Type 1 "
                                    "starts with B's first token.")
            if [name for name, _ in wrong] == ["the last [SEP]"] and not b:
                raise ExerciseError(f"For A={a} and an empty B: the last [SEP] is still there and still type 1, as "
                                    f"Hugging Face lays out an empty B; got {types}.")
            if [name for name, _ in wrong] == ["the padding"]:
                raise ExerciseError("Padding has token type 0 (as Hugging Face pads); only B and its [SEP] are 1.")
            real = len(a) + len(b) + 3
            if types[:real] == [t + 1 for t in want_types[:real]]:
                raise ExerciseError(f"For A={a}, B={b}: the types are numbered from 1 (got {types}). They count from "
                                    "0: type 0 for [CLS], A and the first [SEP], type 1 for B and the last [SEP], "
                                    "0 on the padding.")
            row = [cls_id, *a, sep_id, *b, sep_id]
            if b and b[0] in a and types[:len(row)] == [0] * row.index(b[0]) + [1] * (len(row) - row.index(b[0])):
                raise ExerciseError(f"For A={a}, B={b}: type 1 starts at the first {b[0]} in the row, which is in A "
                                    f"(got {types}). Searching for B's first piece finds it in A whenever A holds the "
                                    "same piece; B starts at a known position instead: right after [CLS], A and the "
                                    "first [SEP].")
            if {name for name, _ in wrong} >= {"[CLS]", "A's pieces", "the first [SEP]", "B's pieces", "the last [SEP]"}:
                raise ExerciseError(f"For A={a}, B={b}: the two types are swapped. Type 0 is segment A's ([CLS], A and "
                                    f"the first [SEP]), type 1 segment B's (B and the last [SEP]); got {types}.")
            raise ExerciseError(f"For A={a}, B={b}: token_type_ids are wrong on "
                                + ", ".join(f"{name} (should be {value})" for name, value in wrong)
                                + f". Got {types}.")
        if mask != want_mask:
            raise ExerciseError(f"attention_mask is 1 on every real token ([CLS] and [SEP] included) and 0 on padding: "
                                f"expected {want_mask}, got {mask}.")
    _ok("[CLS] A [SEP] B [SEP]: the first [SEP] belongs to A, padding is type 0 and hidden by the mask.")


def _truncate(a, b, max_tokens, fronts, slip=None):
    """The rule, or the rule with one of the usual slips; None where the slip would crash."""
    a, b, i, j = list(a), list(b), 0, 0
    while len(a) + len(b) > max_tokens:
        if slip == "only B":
            longer = b
        elif slip == "tie cuts A":
            longer = a if len(a) >= len(b) else b
        else:
            longer = a if len(a) > len(b) else b
        k = 0 if slip == "first value only" else (j if slip == "a count per side" and longer is b else i)
        if not longer or k >= len(fronts):
            return None
        if slip == "from the end":  # list.pop() reads the last value first
            k = len(fronts) - 1 - i
        if slip == "backwards":  # the values a trim needs, read last first: fronts[excess - 1], ..., fronts[0]
            k = len(a) + len(b) - max_tokens - 1
            if k >= len(fronts):
                return None
        front = fronts[k] if slip != "True means back" else not fronts[k]
        del longer[0 if front else -1]
        if slip == "a count per side" and longer is b:
            j += 1
        else:
            i += 1
    return a, b


_TRUNCATE_HINTS = {  # in the order tried: an answer that fits two slips gets the first one's hint
    "from the end": "You read fronts from its end (list.pop() takes the last value): each trim takes the *next* "
                    "value, from the first on.",
    "backwards": "You read the values of fronts backwards, the last one the trims need first (an index counted "
                 "from how many tokens are still too many): each trim takes the *next* value, fronts[0] first.",
    "tie cuts A": "When A and B are equally long, trim B (Google's script trims A only when A is strictly longer).",
    "first value only": "You read the first value of fronts for every trim; each trim takes the *next* value, one "
                        "value per token removed.",
    "True means back": "The ends are swapped: True in fronts means the token goes from the *front* of the longer "
                       "side, False from its back.",
    "only B": "Only B was trimmed. Each trim takes a token from the *longer* side, A or B, whichever it is at that "
              "moment.",
    "a count per side": "You keep a separate place in fronts for A and for B; the values of fronts are used in "
                        "order, one per token removed, whichever side it comes from.",
}


def _truncate_hint(err, fn=None, case=None):
    if "not an iterator" in str(err):
        return ("`fronts` is a list, and next() needs an iterator: make one once, before the loop (iter(fronts)), "
                "or read fronts[i] with a counter that grows by one per token removed.")
    if isinstance(err, IndexError) and ("assignment" in str(err) or "pop from empty list" in str(err)):
        return "you deleted a token from an empty list: each trim takes a token from the *longer* side."
    if isinstance(err, IndexError) and fn is not None and case is not None:  # which slip: run it with values to spare
        a, b, max_tokens, fronts = case
        try:
            got = fn(list(a), list(b), max_tokens, list(fronts) + [True] * (len(a) + len(b) + 2))
            got = [list(g) for g in got]
        except Exception:
            got = None
        if got is not None and len(got) == 2:
            if sum(map(len, got)) == max_tokens - 1 < len(a) + len(b):
                return ("your loop trims once too often: with more values in fronts it stops at "
                        f"{max_tokens - 1} tokens, not {max_tokens}. Look at the condition that ends your loop.")
            if got == [list(x) for x in _truncate(a, b, max_tokens, fronts)]:
                return ("you read a value of `fronts` that no trim uses (here "
                        + ("the pair already fits, so fronts is empty" if len(a) + len(b) <= max_tokens
                           else f"{len(fronts)} values for {len(fronts)} trims")
                        + "): read one only inside the loop, once per token you remove.")
    if isinstance(err, IndexError):
        return ("you read past the end of `fronts`, which holds one value per token that must go (none at all when "
                "the pair already fits): read a value only inside the loop, once per trim, and does your loop stop "
                "as soon as len(a) + len(b) is no longer *above* max_tokens?")
    return None


def check_truncate(fn) -> None:
    """fn(a, b, max_tokens, fronts) -> (a, b): while too long, drop one token of the longer side (B when they
    tie), from its front if the next value of `fronts` is True, else from its back. The caller's lists stay as
    they were (the pairs code uses its segments again)."""
    cases = [(list(range(10)), [100, 101, 102], 8, [True, False, True, True, False]),
             ([1, 2, 3], [4, 5, 6], 4, [False, True]),
             ([1, 2], [3, 4, 5, 6, 7, 8], 4, [True, True, False, True]),
             ([1, 2], [3], 5, []),
             ([], [1, 2, 3, 4], 2, [True, False]),
             ([1, 2, 3, 4, 5], [6, 7], 5, [True, False]),
             # more values than trims: reading them from the end gives the other ends
             ([1, 2, 3, 4, 5, 6], [7], 4, [True, True, True, False, False, False]),
             # both sides trimmed, through a tie: the values read backwards give other ends than a tie cut wrongly
             ([1, 2, 3, 4], [5, 6, 7], 3, [True, False, True, False])]
    answers, not_lists = [], set()
    for a, b, max_tokens, fronts in cases:
        given_a, given_b, given_fronts = list(a), list(b), list(fronts)
        got = _call(fn, given_a, given_b, max_tokens, given_fronts,
                    hint=lambda err, case=(a, b, max_tokens, fronts): _truncate_hint(err, fn, case))
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise ExerciseError("Return the two trimmed lists: (a, b).")
        not_lists |= {type(g).__name__ for g in got if not isinstance(g, list)}
        answers.append(((a, b, max_tokens, fronts), (_as_list(got[0], "a"), _as_list(got[1], "b")),
                        (given_a, given_b, given_fronts)))
    wrong = [(case, got) for case, got, _ in answers if got != _truncate(*case)]
    if wrong:
        for slip, hint in _TRUNCATE_HINTS.items():
            if all(got == _truncate(*case, slip=slip) for case, got, _ in answers):
                raise ExerciseError(hint)
        if all(got == _truncate(*case)[::-1] for case, got, _ in answers):
            raise ExerciseError("Your trimming is right, but the two come back in the wrong order: return (a, b), "
                                "A first.")
        (a, b, max_tokens, fronts), (got_a, got_b) = wrong[0]
        want_a, want_b = _truncate(a, b, max_tokens, fronts)
        if len(got_a) + len(got_b) != max_tokens and len(a) + len(b) > max_tokens:
            for side, other, emptied, kept, whole in (("B", "A", got_b, got_a, a), ("A", "B", got_a, got_b, b)):
                if not emptied and kept == list(whole) and len(kept) > max_tokens:  # one side untouched, the other gone
                    raise ExerciseError(f"A={a}, B={b}, max_tokens={max_tokens}: you trimmed only {side} until it was "
                                        f"empty, and left {other} whole. Each trim takes a token from the *longer* "
                                        f"side, which here is {other} (B on a tie).")
            raise ExerciseError(f"Trim until the two fit together: len(a) + len(b) == {max_tokens} here, got "
                                f"{len(got_a)} + {len(got_b)}.")
        raise ExerciseError(f"A={a}, B={b}, max_tokens={max_tokens}, fronts={fronts}: expected {(want_a, want_b)}, "
                            f"got {(got_a, got_b)}. Check in turn: which side is the longer one (B on a tie), which "
                            "value of fronts each trim reads, and which end True means.")
    if not_lists:  # right values: in the form the next cells join to [CLS] and [SEP]
        kinds = ", ".join(sorted(not_lists))
        raise ExerciseError(f"The right tokens, returned as {kinds}: return two new lists, as the task says. The "
                            "next step joins them with lists ([cls_id] + a + [sep_id]), and a list plus a "
                            f"{min(not_lists)} fails.")
    for (a, b, _, fronts), _, (given_a, given_b, given_fronts) in answers:
        if (given_a, given_b) != (a, b):
            changed = "; ".join(f"{name}={was} became {now}" for name, was, now in (("A", a, given_a), ("B", b, given_b))
                                if was != now)  # only the lists it changed
            raise ExerciseError(f"The trimmed lists are right, but your function changed the lists it was given "
                                f"({changed}). The pairs code uses the same token lists "
                                "again for later pairs: trim copies, and leave the caller's lists as they were.")
        if given_fronts != fronts:
            raise ExerciseError(f"The trimmed lists are right, but your function changed the list fronts it was "
                                f"given ({fronts} became {given_fronts}): read its values without removing them, "
                                "as the caller may read the same draws again.")
    _ok("The longer side loses tokens at random ends, so neither half keeps only its start or only its end.")


def check_speaker_names(fn) -> None:
    """fn(text) -> the set of speakers a decoded pair names: every word of two or more capitals (A-Z) right
    before ' :'."""
    from ...pairs import speaker_names

    cases = ["[CLS] SAMPSON : Gregory , o ' my word , we ' ll not carry coals . GREGORY : No , for then [SEP]",
             "JULIET : O Romeo , Romeo ! wherefore art thou Romeo ? ROMEO : I take thee at thy word [SEP]",
             "LADY CAPULET : What , Tybalt ? [SEP]",
             "NURSE : Madam ! NURSE : Your lady mother is coming [SEP]",
             "and therefore : I will . Romeo : no . I : yes [SEP]",
             "",
             # from the pairs of notebook 10 (a trimmed front leaves ' :' right after [CLS] or [SEP], and the
             # decoder glues a trimmed name's pieces to them)
             "[CLS] : Ay me ! for aught that I could ever read , Could ever hear [SEP] LYSANDER : Hermia [SEP]",
             "HERMIA : O cross ! too high to be enthrall ' d to low [SEP]ANDER : Or else misgraffed [SEP]",
             "[CLS]ESEUS : Go , bring them in . [SEP] : Come , sir [SEP]",
             "KING EDWARD IV : Now , brother of Gloucester [SEP]",  # a name of two capitals
             "Enter MacDUFF : Hail , king ! [SEP]",  # a word of mixed case is no name: not DUFF
             "ROMEO : Printed in 1597 : the first quarto [SEP]"]  # digits are no capitals: not 1597
    for text in cases:
        got = _call(fn, text)
        if got is None:
            raise ExerciseError(f"For {text!r} your function returned None: return a set every time, the empty set, "
                                "set(), when the text names no speaker (the rule intersects the sets of A and of B).")
        if not isinstance(got, (set, frozenset)) or not all(isinstance(g, str) for g in got):
            raise ExerciseError(f"Return a set of names (strings), got {type(got).__name__}: a set holds each speaker "
                                "once, however many speeches they have, and the rule intersects the sets of A and of B.")
        got, want = set(got), speaker_names(text)
        glued = {name for name in want if f"]{name} :" in text}  # a trimmed name glued to [CLS]/[SEP]: either way
        if got in (want, want - glued):
            continue
        if any("[" in g or "]" in g for g in got):
            odd = sorted(g for g in got if "[" in g or "]" in g)
            raise ExerciseError(f"In {text!r} you found {sorted(got)}, among them {odd}: [CLS] and [SEP] are not "
                                "speakers, and a name is made of "
                                "the capitals A-Z only (the decoder can put ' :' right after [CLS] or [SEP], or glue a "
                                "trimmed name to them).")
        if any("LADY" in g for g in got):
            raise ExerciseError("Of 'LADY CAPULET :', take the word right before the colon, 'CAPULET': a name of "
                                "several words is then still named the same way in A and in B.")
        if "DUFF" in got:
            raise ExerciseError(f"In {text!r} you found 'DUFF': 'MacDUFF' is one word and not all of it is capitals. "
                                "A name is a whole word of capitals, not the capitals at the end of a longer word.")
        if {g.upper() for g in got} == want:
            raise ExerciseError(f"In {text!r} you found {sorted(got)}: the right names, with their case changed. "
                                "Return each name as the text writes it, in capitals, so that the same speaker in A "
                                "and in B is the same string.")
        if any(any(ch.isdigit() for ch in g) for g in got):
            numbers = sorted(g for g in got if any(ch.isdigit() for ch in g))
            raise ExerciseError(f"In {text!r} you found {numbers}: a name is made of the capitals A-Z only, and "
                                "digits are not capitals.")
        if any(not g.isupper() for g in got):  # before 'I': a rule that takes any word takes both, this is the larger slip
            raise ExerciseError(f"Only words written entirely in capitals are names (the plays write speakers as "
                                f"ROMEO:); in {text!r} you found {sorted(got)}.")
        if got & {"I", "O"}:
            raise ExerciseError("'I :' is not a speaker: a name has two or more capitals.")
        if want - got and all(len(name) == 2 for name in want - got):
            raise ExerciseError(f"In {text!r} the speakers are {sorted(want)}, you found {sorted(got)}: a name of two "
                                "capitals counts too (two or more).")
        if got and got < want:
            missed = sorted(want - got)
            if all(text.startswith(f"{name} :") for name in missed):  # e.g. a pattern that wants a space before the name
                raise ExerciseError(f"In {text!r} you found {sorted(got)} but not {missed}, the name the text starts "
                                    "with: nothing stands before it, not even a space.")
            first = min(want, key=lambda name: text.find(f"{name} :"))
            if got == {first}:
                raise ExerciseError("Look at every colon, not only the first: a pair holds several speeches.")
            raise ExerciseError(f"In {text!r} the speakers are {sorted(want)}; you missed {missed}: look at what "
                                "stands right before and after each of them.")
        raise ExerciseError(f"In {text!r} the speakers are {sorted(want)}, you found {sorted(got)}.")
    _ok("Names before ' :' — a rule that reads no word of the speeches themselves.")
