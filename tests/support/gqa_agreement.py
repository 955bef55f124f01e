"""Does a matched question's reading agree with GQA's own program? (test helper)

Written apart from `contrastgen.scene.program_reading` on purpose: the tests judge the engine's reading against
the program with their own parse of it. A match agrees when the program's last step is of the
template's kind and asks about the same objects (by kind) and, where there is one, relation:
- side, color: the last step queries hposition / color of X's object;
- do-you-see: the last step is `or` of two `exist`s of X's and Y's names;
- near: the last step is `exist` of a `relate: X,near,s` from Y;
- relation templates: the last step is `verify rel` with the template's relation, between X and
  Y, and neither slot's chain has a relate step the words do not say.
"""

from __future__ import annotations

from contrastgen.language.lexicon import Lexicon
from contrastgen.scene.ground import same_kind


def _name(arg: str) -> str:
    return arg.rsplit("(", 1)[0].split(",")[0].strip().lower()


def _rel(arg: str) -> tuple[str, str, str]:
    parts = [p.strip() for p in arg.rsplit("(", 1)[0].split(",")]
    return parts[0].lower(), ",".join(parts[1:-1]).lower(), parts[-1]


def _chain(semantic: list[dict], step: int) -> tuple[str | None, bool]:
    """(the name the chain ends in, whether it passes a relate step)."""
    related = False
    while True:
        s = semantic[step]
        if s["operation"] == "select":
            return _name(s["argument"]), related
        if s["operation"] == "relate":
            related = True
            if not s["argument"].startswith("_"):
                return _name(s["argument"]), True
        if not s["operation"].startswith(("filter", "relate")) or not s["dependencies"]:
            return None, related
        step = s["dependencies"][0]


def agrees(template: str, slots: dict[str, str], semantic: list[dict], lex: Lexicon) -> bool:
    last = semantic[-1]
    op, deps = last["operation"], last.get("dependencies") or []
    x, y = slots.get("x_head", ""), slots.get("y_head", "")
    if template in ("on_which_side_is_the_x", "what_color_is_the_x"):
        wanted = "color" if template == "what_color_is_the_x" else "hposition"
        if not ((op == "query" and last["argument"] == wanted) or op == f"choose {wanted}"):
            return False
        name, _ = _chain(semantic, deps[0])
        return name is not None and same_kind(x, name, lex)
    if template == "do_you_see_x_or_y":
        if op != "or" or len(deps) != 2:
            return False
        names = [_chain(semantic, semantic[d]["dependencies"][0])[0] or "" for d in deps]
        return (same_kind(x, names[0], lex) and same_kind(y, names[1], lex)
                or same_kind(x, names[1], lex) and same_kind(y, names[0], lex))
    if template == "are_there_x_near_the_y":
        if op != "exist" or semantic[deps[0]]["operation"] != "relate":
            return False
        relate = semantic[deps[0]]
        name, rel, role = _rel(relate["argument"])
        anchor, related = _chain(semantic, relate["dependencies"][0])
        return (rel == "near" and role == "s" and same_kind(x, name, lex) and not related
                and anchor is not None and same_kind(y, anchor, lex))
    if template.startswith("is_the_x_rel_the_y"):
        if op != "verify rel":
            return False
        name, rel, role = _rel(last["argument"])
        selected, related = _chain(semantic, deps[0])
        if selected is None or related:
            return False
        subj, obj = (name, selected) if role == "s" else (selected, name)
        return rel == slots.get("rel", "").lower() and same_kind(x, subj, lex) and same_kind(y, obj, lex)
    return False


SPATIAL = {"to the left of", "to the right of", "in front of", "on top of", "next to", "above", "below",
           "behind", "under", "beneath", "beside", "near"}
FAMILY = {"on_which_side_is_the_x": "side", "what_color_is_the_x": "color", "do_you_see_x_or_y": "see",
          "are_there_x_near_the_y": "near", "is_the_x_rel_the_y__relation": "relation",
          "is_the_x_rel_the_y__object": "relation"}


def program_family(semantic: list[dict]) -> str | None:
    """Which template family a program asks, judged from the program alone (for recall)."""
    last = semantic[-1]
    op, deps = last["operation"], last.get("dependencies") or []
    if (op == "query" and last["argument"] == "color") or op == "choose color":
        return "color" if op == "query" else None
    if (op == "query" and last["argument"] == "hposition") or op == "choose hposition":
        return "side"
    if op == "or" and len(deps) == 2 and all(semantic[d]["operation"] == "exist" for d in deps):
        return "see"
    if op == "exist" and deps and semantic[deps[0]]["operation"] == "relate":
        _, rel, role = _rel(semantic[deps[0]]["argument"])
        return "near" if rel == "near" and role == "s" else None
    if op == "verify rel" and _rel(last["argument"])[1] in SPATIAL:
        return "relation"
    return None
