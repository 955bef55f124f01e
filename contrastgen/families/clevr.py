"""The CLEVR family (CLEVR and Super-CLEVR): the questions of some images through the CLEVR path
(`clevr.question`), with the GQA- and LXMERT-format views of each perturbed original and its
perturbations (`generate`'s `original.json` and `augmented*.json`, as on GQA's path).

A view keeps the question's CLEVR record whole, with its recovered program, so CLEVR's loaders
read the augmented file as they read the originals. `augment` asks for a view of every original
(`ClevrOptions.every_original`): an unperturbed one carries the recovered program only where it
is proven (it runs to the file's answer, its part words certain, and no edit held); any other is
written as its file has it, since its words were not read with certainty or its answer is not
the one its program gives.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contrastgen.clevr.question import CLEVR_SEED, perturb_clevr_question, unread
from contrastgen.clevr.scene_view import clevr_scene
from contrastgen.datasets import clevr as clevr_files
from contrastgen.datasets.base import DictQuestions
from contrastgen.datasets.inputs import InputPaths
from contrastgen.datasets.lxmert import lxmert_item
from contrastgen.families.base import (
    GROUP_REASONS,
    Family,
    Prepared,
    Settings,
    ShardContext,
    register,
)
from contrastgen.groups.clevr import add_clevr_groups, scene_reader
from contrastgen.groups.index import GroupIndex
from contrastgen.jsonio import dumps
from contrastgen.perturb import normalize_question
from contrastgen.results.generation import ShardResult
from contrastgen.results.stats import outcome
from contrastgen.results.view_bytes import ViewEntry

# Why a question may end unperturbed: its words read back into no family's program (`no_family`,
# `no_reading`, and GQA's `ambiguous`, `program_mismatch`), the program does not run on the scene,
# a part's words select other parts than the raw name Super-CLEVR's engine matches (the
# original's, or those of every edit that held otherwise), or no edit holds; `no_scene_graph`
# as on GQA's paths.
REASONS = ("no_family", "no_reading", "original_invalid", "part_ambiguous", "no_edit")


@dataclass(frozen=True)
class ClevrFamilyOptions:
    """What a CLEVR run asks beyond the shared settings."""

    every_original: bool = False  # views of the unperturbed originals too (`augment`)


@dataclass(frozen=True)
class ClevrOptions:
    """What every shard of a CLEVR run reads."""

    max_k: int
    seed: int
    groups: GroupIndex | None = None  # `--groups`: the corpus's index (and scenes), to look for two-image groups
    every_original: bool = False


def run_clevr_shard(context: ShardContext, images: list[str]) -> ShardResult:
    """The questions of some images, perturbed and serialised."""
    out = ShardResult(questions=0)
    options: ClevrOptions = context.options
    max_k, seed, index = options.max_k, options.seed, options.groups
    scene_of = scene_reader(index.graphs, {}) if index is not None else None
    for image_id in images:
        items = context.questions.questions_of(image_id)
        out.questions += len(items)
        existing = {normalize_question(text) for _, text, _ in items}
        graph = context.graphs.get(image_id)
        scene = clevr_scene(image_id, graph) if graph is not None else None
        for qid, _, q in items:
            assert isinstance(q, Mapping)
            reading = None
            if scene is None:
                result, program = unread(qid, q, "no_scene_graph"), None
            else:
                done = perturb_clevr_question(qid, q, scene, max_k=max_k, seed=seed, existing=existing)
                result, program, reading = done.result, done.program, done.reading
            out.outcomes.append(outcome(result))
            if result.perturbations and index is not None and reading is not None:
                add_clevr_groups(result, reading, index, scene_of, seed, out.groups)
            record = result.to_record()
            if record is not None:
                out.lines.append((qid, (dumps(record),)))
            if record is not None or options.every_original:
                # the path sets the answer only once the program is proven to give the file's
                out.views += _views(qid, q, record, program if result.answer else None)
    return out


def _clevr_view(record: Mapping[str, Any], p: Mapping[str, Any], original: Mapping[str, Any]) -> dict[str, Any]:
    """A perturbation as a CLEVR question record (what CLEVR's loaders read), with its proof."""
    out = {k: original[k] for k in ("split", "image_filename", "image_index", "image") if k in original}
    out.update({"imageId": record["image_id"], "question": p["question"], "answer": p["answer"],
                "program": p["program"], **record["family"],
                "contrast": {"original_question_id": record["question_id"], "rank": p["rank"],
                             "change": p["change"], "kind": p["kind"]}})
    return out


def _views(qid: str, q: Mapping[str, Any], record: dict[str, Any] | None, program: list | None) -> list[ViewEntry]:
    original = dict(q)
    if program is not None:
        original["program"] = program
    entries = [ViewEntry(qid, 0, dumps(original).rstrip(b"\n"), dumps(lxmert_item(qid, original)).rstrip(b"\n"))]
    for p in (record or {}).get("perturbations", []):
        view = _clevr_view(record, p, q)  # type: ignore[arg-type]
        entries.append(ViewEntry(p["question_id"], p["rank"], dumps(view).rstrip(b"\n"),
                                 dumps(lxmert_item(p["question_id"], view)).rstrip(b"\n")))
    return entries


class Clevr(Family):
    name = "clevr"
    describe = "CLEVR / Super-CLEVR: {\"questions\": [...]}"
    Options = ClevrFamilyOptions
    shard = staticmethod(run_clevr_shard)
    seed_keys = {"clevr": CLEVR_SEED}
    reasons = REASONS
    group_reasons = (*GROUP_REASONS, "unreadable")
    augment_options = {"every_original": True}

    def load_questions(self, path: InputPaths) -> dict[str, dict[str, Any]]:
        return clevr_files.load_questions(path)

    def load_scenes(self, path: str | Path) -> Mapping[str, Any]:
        return clevr_files.load_scenes(path)

    def prepare(self, questions: Mapping[str, Any], graphs: Mapping[str, Any], settings: Settings,
                options: ClevrFamilyOptions) -> Prepared:
        source = DictQuestions(questions)  # type: ignore[arg-type]
        index = None
        if settings.groups:
            from contrastgen.language.lexicon import Lexicon

            index = GroupIndex.build(graphs, Lexicon.load())
        shard_options = ClevrOptions(max_k=settings.max_k, seed=settings.seed, groups=index,
                                     every_original=options.every_original)
        return Prepared(ShardContext(source, graphs, shard_options), stats={"dataset": "clevr"})


CLEVR = register(Clevr())
