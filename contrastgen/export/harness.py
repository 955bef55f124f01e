"""What the harness exports share: the questions a harness asks a model, one row per distinct
question, each naming the contrast sets it belongs to; the name a benchmark is run by; the result.

A harness (lmms-eval, VLMEvalKit) sends every row of a benchmark to the model once. An original
matched by two templates, or by a template and a program edit, heads two contrast sets; asking it
twice would cost a second answer and could bring back two different ones for one question. So a
row is one question, and its sets are explicit: `contrast_ids` lists them (a perturbation has
one, an original one per set it heads). Metrics group rows by these ids, never by row order, so
a run split over ranks, shuffled or cut short still scores each set from its own rows.

`role` says how a row is scored: `original` and `perturbation` against their gold answers
(accuracy, and contrast consistency over a set), `invariance` against its gold answer too, which
is its original's (accuracy, and invariance consistency over a set), `group cell` against its gold answer in its two-image
group only (`generate --groups`: a pair's two questions asked of a second image). `groups` lists
the groups a row is a cell of, as `<group id>:<cell>` (NaturalBench's order: 0 the original, 1
the perturbation, both on the record's image; 2 and 3 the same two questions on the second
image), so the group metrics are rebuilt from ids, as the contrast sets are.

The contrast file is read twice, so memory holds the originals' memberships, not the rows: the
first pass gathers which sets each original heads, the second writes each question once, an
original where its first set comes in the file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

from contrastgen.answers import normalize_answer
from contrastgen.errors import InputError
from contrastgen.records import (
    ContrastSet,
    contrast_file,
    iter_contrast_sets,
    read_contrast_records,
)
from contrastgen.terminal.progress import Advance, line_count, noop
from contrastgen.terminal.progress import progress as progress_bar

ORIGINAL = "original"
PERTURBATION = "perturbation"
INVARIANCE = "invariance"
GROUP_CELL = "group cell"
ROLES = (ORIGINAL, PERTURBATION, INVARIANCE, GROUP_CELL)
_IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")
_NAME = re.compile(r"[A-Za-z0-9_]+")


@dataclass(frozen=True)
class HarnessExport:
    out: Path
    files: tuple[str, ...]  # relative to `out`
    questions: int
    sets: int
    names: tuple[str, ...]  # what a harness runs: the lmms-eval task, the VLMEvalKit datasets


def check_name(name: str) -> str:
    """A `--name`: it becomes part of file, task and dataset names."""
    if not _NAME.fullmatch(name):
        raise InputError(f"--name {name!r} must be letters, digits and underscores")
    return name


def contrast_id(cs: ContrastSet) -> str:
    """A set's id: its original question and its template (the key `records` holds unique)."""
    return f"{cs.question_id}:{cs.template}"


@dataclass(frozen=True)
class HarnessQuestion:
    """One question as a harness asks it. `answer` is the normalised gold answer; `rank` is 0 for
    an original; `image_file` is the record's own file (`generate --images`), None without one.
    `templates` and `edit_kinds` are what the question is scored under in the contrast metrics:
    a perturbation's set's template and its edit kind; for an original, the templates of the sets
    it heads that have contrast perturbations, and those perturbations' kinds (both empty for an
    original whose sets hold invariance perturbations only). `set_template` is the template of the
    first set the question belongs to, for a harness column that takes one value."""

    question_id: str
    image_id: str
    dataset: str
    question: str
    answer: str
    role: str
    contrast_ids: tuple[str, ...]
    templates: tuple[str, ...]
    question_type: str
    edit_kinds: tuple[str, ...]
    rank: int
    image_file: str | None
    set_template: str
    groups: tuple[str, ...] = ()  # `<group id>:<cell>` of every two-image group the row is a cell of
    group_id: str = ""  # a `group cell` row's group
    # JSON {contrast id: {edit kind or "invariance": perturbations}} of the row's sets, so a
    # harness scoring a run cut short (`--limit`) can tell a set asked in full from one half asked
    set_sizes: str = "{}"


@dataclass
class _Membership:
    """The sets one original heads, in file order, and the edit kinds of their contrasts."""

    contrast_ids: list[str] = field(default_factory=list)
    sizes: dict[str, dict[str, int]] = field(default_factory=dict)
    templates: list[str] = field(default_factory=list)  # of the sets with contrast perturbations
    kinds: set[str] = field(default_factory=set)
    groups: list[str] = field(default_factory=list)  # the groups it is cell 0 of


def _sets(source: Path) -> Iterator[ContrastSet]:
    return iter_contrast_sets(read_contrast_records(source), path=str(contrast_file(source)))


def _memberships(source: Path, advance: Advance = noop) -> dict[str, _Membership]:
    out: dict[str, _Membership] = {}
    for cs in _sets(source):
        advance(1)
        m = out.setdefault(cs.question_id, _Membership())
        m.contrast_ids.append(contrast_id(cs))
        m.sizes[contrast_id(cs)] = set_size(cs)
        kinds = {p.change_kind for p in cs.perturbations if not p.invariance}
        if kinds and cs.template not in m.templates:
            m.templates.append(cs.template)
        m.kinds.update(kinds)
        m.groups += [f"{p.group.id}:0" for p in cs.perturbations if p.group is not None]
    return out


def set_size(cs: ContrastSet) -> dict[str, int]:
    """A set's perturbations by edit kind (`invariance` for the invariance ones)."""
    out: dict[str, int] = {}
    for p in cs.perturbations:
        key = INVARIANCE if p.invariance else p.change_kind
        out[key] = out.get(key, 0) + 1
    return out


def _sizes_json(sizes: dict[str, dict[str, int]]) -> str:
    return json.dumps(sizes, sort_keys=True, separators=(",", ":"))


def has_groups(source: str | os.PathLike[str]) -> bool:
    """Whether any pair of `source` has a two-image group (the exports then add their columns)."""
    return any(p.group is not None for cs in _sets(Path(source)) for p in cs.perturbations)


def _sibling_image(image_file: str | None, image_id: str) -> str | None:
    """The second image's file beside the record's own (`generate --images` names only that)."""
    if image_file is None:
        return None
    folder, suffix = Path(image_file).parent, Path(image_file).suffix
    for ext in dict.fromkeys((suffix, *_IMAGE_SUFFIXES)):
        if (folder / f"{image_id}{ext}").is_file():
            return str(folder / f"{image_id}{ext}")
    return None


def harness_progress(source: str | os.PathLike[str], *, enabled: bool) -> AbstractContextManager[Advance]:
    """The bar of a harness export, on a terminal: `harness_questions` reads the contrast sets
    twice (what each question belongs to, then the questions), advancing per set each time."""
    lines = line_count(contrast_file(Path(source)))
    return progress_bar("exporting", lambda: 2 * lines(), enabled=enabled)


def harness_questions(source: str | os.PathLike[str], advance: Advance = noop) -> Iterator[HarnessQuestion]:
    """Every distinct question of `source` (a `generate` output or contrast file), originals
    before their perturbations, perturbations in rank order. `advance(1)` per contrast set read
    (`harness_progress`'s bar)."""
    source = Path(source)
    memberships = _memberships(source, advance)
    emitted: set[str] = set()
    for cs in _sets(source):
        advance(1)
        dataset = str(cs.record.get("dataset") or "gqa")
        image_file = cs.record.get("image_file")
        image_file = str(image_file) if isinstance(image_file, str) and image_file else None
        if cs.question_id not in emitted:
            emitted.add(cs.question_id)
            m = memberships[cs.question_id]
            yield HarnessQuestion(
                question_id=cs.question_id, image_id=cs.image_id, dataset=dataset,
                question=cs.question, answer=cs.answer, role=ORIGINAL,
                contrast_ids=tuple(m.contrast_ids), templates=tuple(m.templates),
                question_type=cs.question_type, edit_kinds=tuple(sorted(m.kinds)), rank=0,
                image_file=image_file, set_template=cs.template, groups=tuple(m.groups),
                set_sizes=_sizes_json(m.sizes))
        for p in sorted(cs.perturbations, key=lambda p: p.rank):
            group = p.group
            yield HarnessQuestion(
                question_id=p.question_id, image_id=cs.image_id, dataset=dataset,
                question=p.question, answer=p.gold,
                role=INVARIANCE if p.invariance else PERTURBATION,
                contrast_ids=(contrast_id(cs),), templates=(cs.template,),
                question_type=cs.question_type, edit_kinds=(p.change_kind,), rank=p.rank,
                image_file=image_file, set_template=cs.template,
                groups=() if group is None else (f"{group.id}:1",),
                set_sizes=_sizes_json({contrast_id(cs): set_size(cs)}))
            if group is not None:
                other = str(group.images[1])
                for cell in (2, 3):
                    c = group.cells[cell]
                    yield HarnessQuestion(
                        question_id=c.question_id, image_id=other, dataset=dataset,
                        question=c.question, answer=normalize_answer(c.answer), role=GROUP_CELL,
                        contrast_ids=(), templates=(cs.template,), question_type=cs.question_type,
                        edit_kinds=(), rank=0, image_file=_sibling_image(image_file, other),
                        set_template=cs.template, groups=(f"{group.id}:{cell}",), group_id=group.id)
