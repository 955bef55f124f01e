"""Where a program's argument is said in the question, and the question with it said otherwise.

Why a module of its own: a program edit is only a perturbation of the question as written if the
words that change are exactly the ones that say the changed argument. Finding those words (GQA's
`annotations` for objects, the argument's one occurrence for attributes and relations) and
rewriting them (capitalisation, "a"/"an" before a new noun) is one job, shared by every kind of
edit.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import regex

from contrastgen.language.articles import article

# GQA's question tokens (what `annotations` index): words, and punctuation on its own.
_TOKEN = regex.compile(r"\w+(?:'\w+)?|[^\w\s]")
_WORD = regex.compile(r"\w+")
_INDEFINITE_BEFORE = regex.compile(r"\b(a|an)\s+$", flags=regex.IGNORECASE)
_ARTICLE_BEFORE = regex.compile(r"\b(a|an|A|An)\s+$")
_ARTICLE_ENDS = regex.compile(r"\b(a|an|A|An)\s*$")


@functools.lru_cache(maxsize=4096)
def _whole_words(phrase: str) -> regex.Pattern[str]:
    """A phrase as whole words, any case; compiled once (regex's own cache costs more per call
    than a program edit's execution)."""
    return regex.compile(rf"(?<!\w){regex.escape(phrase)}(?!\w)", flags=regex.IGNORECASE)


@dataclass(frozen=True)
class Span:
    start: int  # character offsets in the question
    end: int


@functools.lru_cache(maxsize=1024)
def tokens(text: str) -> tuple[tuple[int, int], ...]:
    """The (start, end) of each token; kept for the last questions seen, since every reference
    step of a question and every one of its candidates asks it again."""
    return tuple((m.start(), m.end()) for m in _TOKEN.finditer(text))


def aligned_span(question: dict[str, Any], text: str, ids: tuple[str, ...]) -> Span | None:
    """The one span of words the annotations give to exactly these object ids, if there is one."""
    ann = question.get("annotations")
    ann = ann.get("question") if isinstance(ann, dict) else None
    if not isinstance(ann, dict) or not ids:
        return None
    toks = tokens(text)
    spans = []
    for key, oid in ann.items():
        if str(oid) not in ids:
            continue
        first, _, last = str(key).partition(":")
        try:
            a = int(first)
            b = int(last) if last else a + 1
        except ValueError:
            return None
        if not 0 <= a < b <= len(toks):
            return None
        spans.append(Span(toks[a][0], toks[b - 1][1]))
    return spans[0] if len(spans) == 1 else None


def said_once(text: str, phrase: str) -> Span | None:
    """The phrase's one occurrence as whole words (any case); None when absent or repeated, since
    then the words cannot be tied to one argument."""
    if not phrase.strip():
        return None
    if text.isascii() and phrase.isascii():
        found = _ascii_occurrences(text.lower(), phrase.lower())
    else:
        found = [m.span() for m in _whole_words(phrase).finditer(text)]
    return Span(*found[0]) if len(found) == 1 else None


def _ascii_occurrences(low: str, phrase: str) -> list[tuple[int, int]]:
    """`_whole_words(phrase)`'s matches in ASCII text, lower-cased both: the common case, found by
    `str.find` (compiling a pattern per phrase cost more than the search; in ASCII, lower-casing
    keeps offsets and `\\w` is a letter, a digit or "_")."""
    out, start, size = [], 0, len(phrase)
    while (at := low.find(phrase, start)) >= 0:
        end = at + size
        if not (at and _ascii_word(low[at - 1])) and not (end < len(low) and _ascii_word(low[end])):
            out.append((at, end))
            start = end  # matches do not overlap, as a pattern's do not
        else:
            start = at + 1
    return out


def _ascii_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def replace(text: str, span: Span, new: str, *, noun: bool = False) -> str:
    """The text with the span said as `new`, capitalised where the span opens the sentence (not
    for a mid-sentence capital: "the TV" -> "the bench"); for a noun, "a"/"an" before it agrees
    with the new word."""
    before, old, after = text[:span.start], text[span.start:span.end], text[span.end:]
    said = new[:1].upper() + new[1:] if old[:1].isupper() and not before.strip() else new
    if noun:
        m = _ARTICLE_BEFORE.search(before)
        if m:
            art = article(new)
            art = art.capitalize() if m.group(1)[0].isupper() else art
            before = before[:m.start(1)] + art + before[m.end(1):]
    return before + said + after


def follows_indefinite(text: str, span: Span) -> bool:
    """Is the span said after "a"/"an"? Then a new noun there must be countable and singular."""
    return _INDEFINITE_BEFORE.search(text[:span.start]) is not None


def doubled_words(text: str) -> int:
    """How many words repeat the word before them ("near near"): an edit must not add one."""
    words = [w.lower() for w in _WORD.findall(text)]
    return sum(1 for a, b in zip(words, words[1:], strict=False) if a == b)


def without(text: str, span: Span) -> str:
    """The text with the span's words removed, one space with them, and "a"/"an" before the
    next word made to agree ("an old car" -> "a car")."""
    before, after = text[:span.start], text[span.end:]
    if before.endswith(" ") and (after.startswith(" ") or after[:1] in ("?", ",", ".")):
        before = before[:-1]
    elif after.startswith(" "):
        after = after[1:]
    m = _ARTICLE_ENDS.search(before)
    nxt = after.lstrip().split(" ", 1)[0].strip("?,.")
    if m and nxt:
        art = article(nxt)
        art = art.capitalize() if m.group(1)[0].isupper() else art
        before = before[:m.start(1)] + art + before[m.end(1):]
    return before + after
