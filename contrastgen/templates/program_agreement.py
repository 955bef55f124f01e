"""Does a template's reading of the words say what the question's program says?

Why: a GQA question's program is the authority on what is asked: which relation, between which
objects. A template reads the words; where the two differ (the pattern took "the catcher wearing
jeans" for Y, while the program verifies "wearing"), a proof built on the template's reading
would prove something about another question. The engine refuses such a question
(`program_mismatch`) instead of mixing ids from one step with a relation from another.
"""

from __future__ import annotations

import dataclasses

from contrastgen.language.lexicon import Lexicon
from contrastgen.language.nounphrase import NounPhrase
from contrastgen.scene.ground import same_kind
from contrastgen.scene.program_reading import ProgramReading, SlotRef
from contrastgen.templates.patterns import Match


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _slot_agrees(np: NounPhrase, ref: SlotRef, lex: Lexicon) -> bool:
    """Same kind of object, a relational modifier in the words exactly when the program has a
    relate step in the slot's chain, and every filter of the chain said by the words ("filter
    color: white" for "the white wall", "filter hposition: left" for "the cup on the left")."""
    worded_relation = np.modifier is not None and np.modifier.kind == "relation"
    said = set(np.attributes)
    if np.modifier is not None:
        said |= {np.modifier.side, np.modifier.attribute} - {""}
    filtered = {f.rsplit(": ", 1)[-1].strip().lower() for f in ref.filters}
    return same_kind(np.head, ref.name, lex) and worded_relation == ref.related and filtered <= said


def agreeing_reading(m: Match, nps: dict[str, NounPhrase], reading: ProgramReading | None,
                     lex: Lexicon) -> ProgramReading | None:
    """The program's reading with its slots named as the template's, or None on disagreement."""
    shape = m.template.program
    if reading is None or reading.kind != shape.get("kind"):
        return None
    if "relation" in shape or "relation_slot" in shape:
        asked = shape.get("relation") or m.spans[shape["relation_slot"]].text
        if _norm(asked) != _norm(reading.relation):
            return None
    slots = reading.slots
    if reading.kind == "see":
        a, b = slots["a"], slots["b"]
        x, y = nps["x"], nps["y"]
        if _slot_agrees(x, a, lex) and _slot_agrees(y, b, lex):
            slots = {"x": a, "y": b}
        elif _slot_agrees(x, b, lex) and _slot_agrees(y, a, lex):
            slots = {"x": b, "y": a}
        else:
            return None
        return dataclasses.replace(reading, slots=slots)
    if set(nps) != set(slots) or not all(_slot_agrees(nps[s], slots[s], lex) for s in nps):
        return None
    return reading
