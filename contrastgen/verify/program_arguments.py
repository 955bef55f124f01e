"""The verifier's one reader of a GQA program step's argument.

Why one: the executor, the checks of a program edit and the checks of a two-image group all read
the same few shapes, and a second reader that splits them a little differently would let one
check read an argument another refuses. It is the verifier's own (it shares nothing with the
generator's `datasets/gqa_program.py`), so a misreading there cannot make both sides agree.

The shapes, as GQA writes them (stray spaces allowed, as GQA's programs carry them):
- a reference, `NAME (ids)`: "cat (12,13)" lists two objects, "cat (-)" lists none (every cat);
- a relation, `NAME,REL,s|o (ids)`: the named objects are the subject (s) or the object (o) of
  REL; REL may itself hold a comma, so it is every part between the first and the last;
- an attribute value or a choice of them, `A|B`.
Only a reference's or a relation's argument has ids: a filter's "not(red)" is a value.
"""

from __future__ import annotations

import functools
from typing import Any

from contrastgen.verify.graph import EvidenceProblem
from contrastgen.verify.rules import normalize_name

# The operations whose argument names objects and lists their ids.
REFERENCE_OPERATIONS = ("select", "relate", "verify rel", "choose rel")


def split_listed(argument: str) -> tuple[str, list[str] | None]:
    """(what is said, the ids listed): "cat (12,13)" -> ("cat", ["12", "13"]); "cat (-)" ->
    ("cat", ["-"]); "cat" -> ("cat", None), no list at all."""
    body, ids = _split_listed(argument)
    return body, None if ids is None else list(ids)


@functools.lru_cache(maxsize=65536)
def _split_listed(argument: str) -> tuple[str, tuple[str, ...] | None]:
    """Cached: a record's program is read by each check of each of its perturbations."""
    text = argument.strip()
    if not (text.endswith(")") and "(" in text):
        return text, None
    body, _, inner = text[:-1].rpartition("(")
    return body.strip(), tuple(i.strip() for i in inner.split(",") if i.strip())


def listed_ids(argument: str) -> list[str]:
    """The object ids an argument lists ("-" and blanks aside); none where it lists none."""
    return [i for i in split_listed(argument)[1] or () if i != "-"]


def named(argument: str) -> tuple[str, list[str] | None]:
    """A reference read strictly: "cat (12,13)" -> ("cat", ["12", "13"]); "cat (-)" -> ("cat",
    None), every object the name denotes; an EvidenceProblem where there is no id list."""
    body, ids = split_listed(argument)
    if ids is None:
        raise EvidenceProblem(f"program argument {argument.strip()!r} does not name objects as 'name (ids)'")
    return body, None if ids in ([], ["-"]) else ids


def relation_parts(argument: str) -> tuple[str, str, str, list[str] | None]:
    """A relation read strictly: (name, relation, role s|o, ids as `named` gives them), or an
    EvidenceProblem saying the argument is not of that shape."""
    body, ids = named(argument)
    parts = [p.strip() for p in body.split(",")]
    if len(parts) < 3 or parts[-1] not in ("s", "o"):
        raise EvidenceProblem(f"program argument {argument.strip()!r} is not 'name,relation,s|o (ids)'")
    return normalize_name(parts[0]), normalize_name(",".join(parts[1:-1])), parts[-1], ids


@functools.lru_cache(maxsize=65536)
def reference_name(argument: str) -> str:
    """The name a reference or relation argument says, its ids aside ("" for none)."""
    return normalize_name(_split_listed(argument)[0].split(",")[0])


def relation_of(argument: str) -> str:
    """The relation a relation argument says; "" where it is not `name,rel,role`."""
    parts = [x.strip() for x in split_listed(argument)[0].split(",")]
    return normalize_name(",".join(parts[1:-1])) if len(parts) >= 3 else ""


def role_of(argument: str) -> str:
    """The role (s or o) a relation argument gives its named objects, as written."""
    return split_listed(argument)[0].split(",")[-1].strip()


def options(argument: str) -> list[str]:
    """An attribute argument's values: "red" -> ["red"], "red|blue" -> ["red", "blue"]."""
    return [normalize_name(x) for x in argument.split("|")]


def operation_of(step: Any) -> str:
    """A step's operation, single-spaced ("verify  color" is "verify color")."""
    return " ".join(str(step.get("operation", "")).split()) if isinstance(step, dict) else ""


def dependencies(step: Any) -> list[int]:
    """The steps a program step reads, as a record gives them; none where it gives no list of
    step numbers (the executor then says what is wrong with the program)."""
    deps = step.get("dependencies") if isinstance(step, dict) else None
    return [d for d in deps if isinstance(d, int)] if isinstance(deps, list) else []
