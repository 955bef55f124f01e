"""Does the matcher pick out the same X, Y and relation as GQA's own program? (test helper)

For a matched question, the slots agree with the program when:
- side, color: X's head denotes the object the program queries;
- do-you-see: X's and Y's heads denote the two selected names;
- near: X's head denotes the related name, Y's the selected one, and the relation is "near";
- relation templates: X and Y denote the verify-rel's subject and object, and Rel is its relation.
"""

from __future__ import annotations

from contrastgen.ground import same_kind
from contrastgen.lexicon import Lexicon
from contrastgen.program import references


def _chain_name(semantic: list[dict], step: int | None) -> str | None:
    refs = {r.step: r for r in references(semantic)}
    seen = set()
    while step is not None and step not in seen:
        seen.add(step)
        if step in refs:
            return refs[step].name
        deps = semantic[step].get("dependencies") or []
        step = deps[0] if deps else None
    return None


def agrees(template: str, slots: dict[str, str], semantic: list[dict], lex: Lexicon) -> bool:
    ops = [s.get("operation", "") for s in semantic]
    refs = references(semantic)
    x, y = slots.get("x_head", ""), slots.get("y_head", "")
    if template in ("on_which_side_is_the_x", "what_color_is_the_x"):
        q = next((i for i, op in enumerate(ops) if op == "query" or op.startswith("choose h")), None)
        if q is None:
            return False
        deps = semantic[q].get("dependencies") or []
        target = _chain_name(semantic, deps[0] if deps else None)
        return target is not None and same_kind(x, target, lex)
    if template == "do_you_see_x_or_y":
        names = [r.name for r in refs if r.operation == "select"]
        return (len(names) == 2 and (same_kind(x, names[0], lex) and same_kind(y, names[1], lex)
                or same_kind(x, names[1], lex) and same_kind(y, names[0], lex)))
    if template == "are_there_x_near_the_y":
        rel = next((r for r in refs if r.operation == "relate"), None)
        return (rel is not None and rel.relation == "near" and same_kind(x, rel.name, lex)
                and same_kind(y, _chain_name(semantic, rel.dependency) or "", lex))
    if template.startswith("is_the_x_rel_the_y"):
        v = next((r for r in refs if r.operation == "verify rel"), None)
        if v is None:
            return False
        selected = _chain_name(semantic, v.dependency) or ""
        subj, obj = (v.name, selected) if v.role == "s" else (selected, v.name)
        return (v.relation == slots.get("rel", "").lower() and same_kind(x, subj, lex)
                and same_kind(y, obj, lex))
    return False
