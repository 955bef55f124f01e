"""The linguistic fixer: realise a replacement noun phrase and keep the question grammatical.

Rules (the paper's Table 10, and the ones its code got wrong):
- a/an by pronunciation, not by first letter (an hour, a uniform, an umbrella, an MP3 player),
  via inflect's pronunciation rules (precomputed for the vocabulary: contrastgen.language.articles);
- singular countable nouns take the original's determiner kind (a/an, any, the); uncountable nouns
  take no indefinite article ("Is there any water", "Is there water"); plural and plural-only
  nouns take none ("Are there jeans");
- definite stays definite and indefinite stays indefinite (changing "a" to "the" would add a
  presupposition the graph may not support);
- the verb that agrees with the noun (is/are, has/have) follows the new noun's number;
- "either ... or" and everything outside the replaced span are kept as written;
- a capital first letter and a final question mark.
"""

from __future__ import annotations

from contrastgen.language.articles import with_article
from contrastgen.language.lexicon import Lexicon
from contrastgen.language.nounphrase import NounPhrase


def indefinite(word: str) -> str:
    """'a'/'an' + word, chosen by pronunciation (see contrastgen.language.articles)."""
    return with_article(word)


def realise(name: str, like: NounPhrase, lex: Lexicon, *, plural: bool | None = None) -> tuple[str, bool]:
    """A noun phrase for `name` in the role `like` had; returns (text, grammatically plural).

    `plural` forces the number (e.g. the graph's own name for a definite reference); by default
    the number of the original head is kept where the new noun allows it.
    """
    name = name.lower().strip()
    uncountable = lex.is_uncountable(name)
    plural_only = lex.is_plural_only(name)
    if plural is None:
        plural = lex.is_plural(like.head) and not lex.is_uncountable(like.head)
    if uncountable:
        noun, is_plural = lex.singular(name), False
    elif plural_only:
        noun, is_plural = name, True
    else:
        noun = lex.plural(name) if plural else lex.singular(name)
        is_plural = plural
        if plural and lex.canonical(noun) != lex.canonical(name):
            # "glasses" is glass's plural but reads as spectacles: say the singular instead
            noun, is_plural = lex.singular(name), False
    det = like.determiner
    if det in ("the", "this", "that", "these", "those"):
        # keep definiteness; "the" is safe for either number where a demonstrative is not
        text = f"the {noun}"
    elif det in ("a", "an"):
        text = noun if (uncountable or is_plural) else indefinite(noun)
    elif det in ("any", "some"):
        text = f"{det} {noun}"
    else:  # bare plural or bare mass noun in the original
        text = noun if (uncountable or is_plural) else indefinite(noun)
    return text, is_plural


_AGREEMENT = {"is": ("is", "are"), "are": ("is", "are"), "has": ("has", "have"), "have": ("has", "have"),
              "does": ("does", "do"), "do": ("does", "do")}


def agree(verb: str, plural: bool) -> str:
    """The verb form for the noun's number, with the original's capitalisation."""
    pair = _AGREEMENT.get(verb.lower())
    if pair is None:
        return verb
    out = pair[1] if plural else pair[0]
    return out.capitalize() if verb[:1].isupper() else out


def replace_spans(text: str, replacements: list[tuple[int, int, str]]) -> str:
    """Apply non-overlapping (start, end, new) replacements."""
    out, pos = [], 0
    for start, end, new in sorted(replacements):
        out.append(text[pos:start])
        out.append(new)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def finish(text: str) -> str:
    """Capital first letter, single spaces, final question mark."""
    text = " ".join(text.split())
    text = text[:1].upper() + text[1:]
    return text.rstrip("?. ") + "?"
