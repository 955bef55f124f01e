"""Grounding: from a phrase of the question to scene-graph object ids.

Order of trust: the question's own program (`semantic`, exact ids), then its `annotations`
(token -> id), then the lexicon (names, plural forms, synonyms, hyponyms, attributes, one
relational modifier or side). The first source that speaks decides; lexical grounding never
overrides a program. What cannot be grounded is refused with a reason, never guessed.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from contrastgen.language.lexicon import Lexicon
from contrastgen.language.nounphrase import Modifier, NounPhrase
from contrastgen.scene.index import SceneIndex
from contrastgen.scene.program_reading import ProgramReading


@dataclass(frozen=True)
class Grounding:
    ids: tuple[str, ...]  # empty with ok=True: the phrase denotes nothing in the graph
    via: str  # "program" | "annotation" | "lexicon"
    ok: bool = True
    reason: str = ""


NOT_GROUNDED = "not_grounded"


@functools.lru_cache(maxsize=1 << 18)  # bounded: a long-lived API or Ray worker meets ever more pairs
def same_kind(a: str, b: str, lex: Lexicon) -> bool:
    """Do two names denote the same kind, or one a kind of the other? (memoised: the distractor
    loops ask it for the same few thousand pairs over and over)"""
    if not a or not b:
        return False
    if a == b:
        return True
    one, two = _kind_key(a, lex), _kind_key(b, lex)
    # the same singular or kind; one word spaced two ways ("tshirt" / "t-shirt", "trashcan" /
    # "trash can"); or one a kind of the other (`Lexicon.is_a` either way)
    return (one[0] == two[0] or one[1] == two[1] or one[2] == two[2]
            or one[1] in two[3] or two[1] in one[3])


@functools.lru_cache(maxsize=1 << 16)
def _kind_key(word: str, lex: Lexicon) -> tuple[str, str, str, frozenset[str]]:
    """What `same_kind` compares of a word: its singular, its kind (`canonical`), its singular
    squashed, and the kinds of it (`hyponyms`). Per word: a run asks `same_kind` of some hundred
    thousand pairs of a few thousand words."""
    singular = lex.singular(word)
    return singular, lex.canonical(word), squashed(singular), lex.hyponyms(word)


def squashed(name: str) -> str:
    """A name without its spaces and hyphens: "eye glasses", "eyeglasses" and "eye-glasses" are
    one word spaced three ways."""
    return name.replace(" ", "").replace("-", "")


def denoted_ids(head: str, scene: SceneIndex, lex: Lexicon) -> list[str]:
    """Objects the head noun can denote: the same kind (any form, synonym) or a hyponym."""
    found = scene.memo.get(("denoted", head, lex))
    if found is None:
        kinds, by_kind = lex.names_of_kinds(head)[0], scene.by_canonical
        # the smaller side walked: "thing" or "animal" has hundreds of kinds, a scene a dozen
        ids = ([i for k, same in by_kind.items() if k in kinds for i in same] if len(kinds) > len(by_kind)
               else [i for k in kinds for i in by_kind.get(k, ())])
        found = scene.memo["denoted", head, lex] = tuple(sorted(ids))
    return list(found)


def ground_lexically(np: NounPhrase, scene: SceneIndex, lex: Lexicon) -> Grounding:
    if np.rest or not np.head:
        return Grounding((), "lexicon", ok=False, reason=NOT_GROUNDED)
    if not lex.is_known(np.head) and lex.canonical(np.head) not in scene.by_canonical:
        return Grounding((), "lexicon", ok=False, reason=NOT_GROUNDED)
    ids = denoted_ids(np.head, scene, lex)
    for attr in np.attributes:
        ids = [i for i in ids if attr in scene.objects[i].attributes]
    if np.modifier is not None:
        ids = _apply_modifier(ids, np.modifier, scene, lex)
        if ids is None:
            return Grounding((), "lexicon", ok=False, reason=NOT_GROUNDED)
    return Grounding(tuple(ids), "lexicon")


def _apply_modifier(ids: list[str], mod: Modifier, scene: SceneIndex, lex: Lexicon) -> list[str] | None:
    if mod.kind == "side":
        return [i for i in ids if scene.side(i) == mod.side]
    if mod.kind == "attribute":
        return [i for i in ids if mod.attribute in scene.objects[i].attributes]
    if mod.kind == "relation" and mod.target is not None:
        target = ground_lexically(mod.target, scene, lex)
        if not target.ok:
            return None
        tset = set(target.ids)
        keep = []
        for i in ids:
            pairs = scene.out_edges.get(i, ()) if mod.direction == "out" else scene.in_edges.get(i, ())
            if any(r == mod.relation and o in tset for r, o in pairs):
                keep.append(i)
        return keep
    return None


def ground_slots(question: dict[str, Any], nps: dict[str, NounPhrase], scene: SceneIndex,
                 lex: Lexicon, reading: ProgramReading | None = None) -> dict[str, Grounding]:
    """Ground every noun-phrase slot (x, y) of a matched question.

    `reading` is the question's program as the template reads it (already checked to agree with
    the words, `templates.program_agreement`); its ids are exact. Without a program, the annotations, then
    the lexicon.
    """
    out: dict[str, Grounding] = {}
    for slot, np in nps.items():
        g: Grounding | None = None
        if reading is not None and slot in reading.slots:
            g = Grounding(reading.slots[slot].ids, "program")
        if g is None:
            g = _ground_by_annotation(question, np, scene)
        if g is None:
            g = ground_lexically(np, scene, lex)
        if g.ok and any(i not in scene.objects for i in g.ids):
            g = Grounding((), g.via, ok=False, reason=NOT_GROUNDED)
        out[slot] = g
    return out


def _ground_by_annotation(question: dict[str, Any], np: NounPhrase, scene: SceneIndex) -> Grounding | None:
    ann = (question.get("annotations") or {}).get("question") or {}
    if not ann or not np.head:
        return None
    tokens = [t.strip("?,.!").lower() for t in str(question.get("question", "")).split()]
    head_last = np.head.split()[-1]
    positions = [i for i, t in enumerate(tokens) if t == head_last]
    for key, oid in ann.items():
        lo, _, hi = str(key).partition(":")
        try:
            start = int(lo)
            end = int(hi) if hi else start + 1
        except ValueError:
            continue
        if any(start <= p < end for p in positions):
            return Grounding((str(oid),), "annotation")
    return None
