"""The CLEVR family's shard: the questions of some images through the CLEVR path
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
from typing import Any

from contrastgen.clevr.question import perturb_clevr_question, unread
from contrastgen.clevr.scene_view import clevr_scene
from contrastgen.datasets.base import QuestionSource
from contrastgen.datasets.lxmert import lxmert_item
from contrastgen.groups.clevr import add_clevr_groups, scene_reader
from contrastgen.groups.index import GroupIndex
from contrastgen.jsonio import dumps
from contrastgen.perturb import normalize_question
from contrastgen.results.generation import ShardResult
from contrastgen.results.stats import outcome
from contrastgen.results.view_bytes import ViewEntry
from contrastgen.run.shards import ShardPayload, ShardQuestions


@dataclass(frozen=True)
class ClevrOptions:
    max_k: int
    seed: int
    groups: GroupIndex | None = None  # `--groups`: the corpus's index (and scenes), to look for two-image groups
    every_original: bool = False  # views of the unperturbed originals too (`augment`)


@dataclass(frozen=True)
class ClevrContext:
    """Everything a CLEVR shard reads: the same for every shard of a run."""

    questions: QuestionSource
    scenes: Mapping[str, dict[str, Any]]
    options: ClevrOptions


def run_clevr_shard(context: ClevrContext, images: list[str]) -> ShardResult:
    """The questions of some images, perturbed and serialised."""
    out = ShardResult(questions=0)
    max_k, seed, index = context.options.max_k, context.options.seed, context.options.groups
    scene_of = scene_reader(index.graphs, {}) if index is not None else None
    for image_id in images:
        items = context.questions.questions_of(image_id)
        out.questions += len(items)
        existing = {normalize_question(text) for _, text, _ in items}
        graph = context.scenes.get(image_id)
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
            record = result.to_record()
            if record is not None and index is not None and reading is not None:
                add_clevr_groups(record, reading, index, scene_of, seed, out.groups)
            if record is not None:
                out.lines.append((qid, (dumps(record),)))
            if record is not None or context.options.every_original:
                # the path sets the answer only once the program is proven to give the file's
                out.views += _views(qid, q, record, program if result.answer else None)
    return out


def remote_clevr_shard(options: ClevrOptions, payload: ShardPayload) -> ShardResult:
    """What a Ray worker runs: one shard, from its questions and scenes alone."""
    items, scenes, _ = payload
    return run_clevr_shard(ClevrContext(ShardQuestions(items), scenes, options), list(items))


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
