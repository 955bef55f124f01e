"""The work behind each endpoint: parse, check limits, call the library, serialise.

Every function here is synchronous and runs in a worker thread (see `offload`), from the raw
body to the response bytes, so the event loop only moves bytes. None contains generation,
verification or scoring logic: they call the same library functions as the CLI, with the same
arguments, and serialise with `contrastgen.jsonio.dumps` (sorted keys), which is why the HTTP
results equal the CLI's byte for byte.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from contrastgen.api.errors import FieldError, LimitExceeded
from contrastgen.api.models import (
    BatchRequest,
    EvaluateRequest,
    PerturbRequest,
    VerifyRequest,
)
from contrastgen.api.offload import Deadline
from contrastgen.api.parsing import parse_body
from contrastgen.api.settings import Limits
from contrastgen.api.state import EngineState

from contrastgen.datasets.gqa import validate_question, validate_scene_graph
from contrastgen.errors import InputError
from contrastgen.evaluation.contrast import evaluate_contrast
from contrastgen.evaluation.predictions import parse_predictions
from contrastgen.families.gqa_image_work import ImageWork, RunOptions, perturb_in_image
from contrastgen.jsonio import dumps
from contrastgen.perturb import PROGRAM_PATH, PerturbResult
from contrastgen.results.stats import compute_stats, outcome
from contrastgen.verify.checker import verify_contrast_sets

# --- shared checks ----------------------------------------------------------------------------


def _limit(what: str, value: int, limit: int) -> None:
    if value > limit:
        raise LimitExceeded(what, value, limit)


def _graph(image_id: str, raw: Any, limits: Limits, loc: list[str | int]) -> dict[str, Any]:
    """The graph as the CLI would have read it from a file, after the CLI's own validation.

    The request models skip validating scene graphs (their schema still documents them): this
    is the one validation, the library's, and its errors carry the field they are about.
    """
    objects = raw.get("objects") if isinstance(raw, dict) else None
    if isinstance(objects, dict):
        _limit(f"objects in scene graph {image_id!r}", len(objects), limits.max_objects_per_graph)
    try:
        return validate_scene_graph(image_id, raw)
    except InputError as exc:
        raise FieldError([*loc, *(exc.field or ())], str(exc), "invalid_scene_graph") from None


def _graphs(graphs: Mapping[str, dict[str, Any]], limits: Limits) -> dict[str, dict[str, Any]]:
    _limit("scene graphs in one request", len(graphs), limits.max_graphs_per_request)
    return {iid: _graph(iid, g, limits, ["body", "scene_graphs", iid]) for iid, g in graphs.items()}


def _templates(state: EngineState, ids: list[str] | None) -> list[str] | None:
    if ids is None:
        return None
    known = state.template_ids
    for i, tid in enumerate(ids):
        if tid not in known:
            raise FieldError(["body", "templates", i],
                             f"unknown template {tid!r}; GET /v1/templates lists them",
                             "unknown_template")
    return list(ids)


def _question_text(text: Any, limits: Limits, loc: list[str | int]) -> None:
    """A question longer than any real one is refused before it costs CPU (413)."""
    if isinstance(text, str) and len(text) > limits.max_question_chars:
        raise LimitExceeded(f"characters in the question at {'.'.join(map(str, loc))}", len(text),
                            limits.max_question_chars, loc)


def _record_questions(records: Any, limits: Limits) -> None:
    """The question of every contrast-set record and of its perturbations, held to the cap."""
    if not isinstance(records, list):
        return
    for i, rec in enumerate(records):
        if isinstance(rec, dict):
            _question_text(rec.get("question"), limits, ["body", "records", i, "question"])
            perturbations = rec.get("perturbations")
            for j, p in enumerate(perturbations if isinstance(perturbations, list) else ()):
                if isinstance(p, dict):
                    _question_text(p.get("question"), limits,
                                   ["body", "records", i, "perturbations", j, "question"])


def _max_k(max_k: int, limits: Limits) -> int:
    if max_k > limits.max_k:
        raise FieldError(["body", "max_k"], f"max_k must be at most {limits.max_k}", "less_than_equal")
    return max_k


def result_dict(res: PerturbResult) -> dict[str, Any]:
    """A `PerturbResult` as JSON: the contrast_sets.jsonl record (even with no perturbations)
    plus `reason`."""
    return {**res.record(), "reason": res.reason}


# --- /v1/perturb ------------------------------------------------------------------------------


def templates_json(state: EngineState) -> bytes:
    return dumps({"templates": [{"id": t.id, "description": t.description, "examples": t.examples}
                                for t in state.templates]})


def perturb(state: EngineState, limits: Limits, body: bytes) -> bytes:
    """One question against one graph. Distractor statistics come from the server's corpus when
    it has one (one graph alone says little about which objects co-occur), else from that graph."""
    req, raw = parse_body(PerturbRequest, body)
    _question_text(req.question, limits, ["body", "question"])
    max_k = _max_k(req.max_k, limits)
    templates = _templates(state, req.templates)
    graph = _graph(req.image_id, raw["scene_graph"], limits, ["body", "scene_graph"])
    question: dict[str, Any] = {"question": req.question, "answer": req.answer, "imageId": req.image_id}
    for key in ("semantic", "annotations", "types"):
        if raw.get(key) is not None:
            question[key] = raw[key]
    corpus = state.corpus
    if corpus is None:
        corpus = state.single_graph_corpora.corpus_of(req.image_id, graph)
    res = state.engine.perturb(req.question_id, question, graph, corpus=corpus, max_k=max_k,
                               seed=req.seed, templates=templates, mode=req.mode)
    return dumps(result_dict(res))


# --- /v1/perturb/batch ------------------------------------------------------------------------


@dataclass
class BatchJob:
    """A validated batch, ready to run in slices (so a stream can send results as they come).

    Each question goes through `contrastgen.families.gqa_image_work`, as in `contrastgen generate`'s
    workers, with one `ImageWork` per image (its scene index built once, duplicates checked
    against every question of the image), so each result equals the CLI's.
    """

    questions: list[tuple[str, dict[str, Any]]]
    images: dict[str, ImageWork]
    options: RunOptions

    def __len__(self) -> int:
        return len(self.questions)


def prepare_batch(state: EngineState, limits: Limits, body: bytes) -> BatchJob:
    req, data = parse_body(BatchRequest, body)
    _limit("questions in one batch", len(req.questions), limits.max_questions_per_batch)
    max_k = _max_k(req.max_k, limits)
    templates = _templates(state, req.templates)
    graphs = _graphs(data["scene_graphs"], limits)
    questions = []
    texts: dict[str, list[str]] = defaultdict(list)
    for qid, q in data["questions"].items():
        try:
            raw = validate_question(qid, q)
        except InputError as exc:
            raise FieldError(["body", "questions", qid], str(exc), "invalid_question") from None
        _question_text(raw["question"], limits, ["body", "questions", qid, "question"])
        if raw["imageId"] not in graphs:
            raise FieldError(["body", "questions", qid, "imageId"],
                             f"image {raw['imageId']!r} of question {qid!r} is not among scene_graphs",
                             "unknown_image")
        questions.append((qid, raw))
        texts[raw["imageId"]].append(raw["question"])
    if req.corpus == "server":
        if state.corpus is None:
            raise FieldError(["body", "corpus"], "the server was started without --scene-graphs; "
                             "use \"request\"", "no_server_corpus")
        corpus = state.corpus
    else:
        corpus = state.engine.build_corpus(graphs)
    images = {iid: ImageWork(state.engine, iid, graphs[iid], ts) for iid, ts in texts.items()}
    return BatchJob(questions, images, RunOptions(corpus=corpus, max_k=max_k, seed=req.seed,
                                                  templates=templates, mode=req.mode))


def batch_results(job: BatchJob, start: int, stop: int, deadline: Deadline) -> list[PerturbResult]:
    """Results for questions `start:stop`, checking the deadline between questions."""
    out = []
    for qid, question in job.questions[start:stop]:
        deadline.check()
        out.extend(perturb_in_image(job.images[question["imageId"]], qid, question, job.options))
    return out


def batch_response(state: EngineState, limits: Limits, body: bytes, deadline: Deadline) -> bytes:
    """The whole batch as one JSON object, with the statistics `stats.json` would hold."""
    job = prepare_batch(state, limits, body)
    results = batch_results(job, 0, len(job), deadline)
    options = job.options
    template_ids = [t.id for t in state.engine.select_templates(options.templates)]
    graphs = {iid: work.graph for iid, work in job.images.items()}
    if options.mode != "templates":
        template_ids.append(PROGRAM_PATH)
    stats = compute_stats([outcome(r) for r in results], len(job.questions), set(job.images), graphs,
                          options.max_k, options.seed, template_ids)
    return dumps({"results": [result_dict(r) for r in results], "stats": stats})


def batch_ndjson(state: EngineState, job: BatchJob, start: int, stop: int,
                 deadline: Deadline) -> bytes:
    """Results for questions `start:stop` as NDJSON lines (one slice of a streamed batch)."""
    return b"".join(dumps(result_dict(r)) for r in batch_results(job, start, stop, deadline))


def iter_slices(n: int, size: int) -> Iterator[tuple[int, int]]:
    for start in range(0, n, size):
        yield start, min(n, start + size)


# --- /v1/verify -------------------------------------------------------------------------------


def verify(state: EngineState, limits: Limits, body: bytes, deadline: Deadline) -> bytes:
    req, data = parse_body(VerifyRequest, body)
    _limit("records in one request", len(req.records), limits.max_records_per_request)
    _record_questions(data["records"], limits)
    graphs = _graphs(data["scene_graphs"], limits)
    deadline.check()
    report = verify_contrast_sets(data["records"], graphs, rules=state.verify_rules)
    # The same fields as `contrastgen verify --json`, less the file name.
    return dumps(report.as_dict(unannotated_prone_rules=state.verify_rules.unannotated_prone_source))


# --- /v1/evaluate -----------------------------------------------------------------------------


def evaluate(state: EngineState, limits: Limits, body: bytes, deadline: Deadline) -> bytes:
    """The report `contrastgen evaluate --contrast` computes, from the same library call."""
    req, data = parse_body(EvaluateRequest, body)
    _limit("records in one request", len(req.records), limits.max_records_per_request)
    _record_questions(data["records"], limits)
    if req.n_boot > limits.max_n_boot:
        raise FieldError(["body", "n_boot"], f"n_boot must be at most {limits.max_n_boot}",
                         "less_than_equal")
    records = data["records"]
    predictions = {}
    for name, preds in data["predictions"].items():
        try:
            predictions[name] = parse_predictions(preds, path=f"predictions[{name!r}]")
        except InputError as exc:
            raise FieldError(["body", "predictions", name], str(exc), "invalid_predictions") from None
    deadline.check()
    try:
        report = evaluate_contrast(records, predictions, seed=req.seed, n_boot=req.n_boot,
                                   examples=req.examples, strict=req.strict, ks=req.ks or None,
                                   oracle=req.oracle, path="records")
    except InputError as exc:
        raise FieldError(["body"], str(exc), "invalid_input") from None
    return dumps(report)
