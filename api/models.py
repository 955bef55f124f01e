"""Request and response bodies of the HTTP API, as pydantic models.

Why they mirror the files instead of inventing new shapes: a researcher who already has GQA
question files, scene-graph files and `contrast_sets.jsonl` should be able to POST them as they
are and get back lines they can append to the same files. So scene graphs and questions are
GQA's own records (unknown extra fields are allowed), and perturbations are docs/output-formats.md's
`contrast_sets.jsonl` schema.

The models *check* requests; the engine is then given the parsed JSON itself, not a dump of the
models, so an integer coordinate stays an integer in the evidence and the results equal the
CLI's byte for byte. That is only sound because validation is strict: nothing is coerced
(`"12"` is not a coordinate, `"3"` is not a step index), so what passed is what is used.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SkipValidation

from contrastgen.evaluation.contrast import MAX_RANK

Seed = Field(0, ge=-(2**63), le=2**63 - 1, description="seed of every random choice; same seed, same output")
# numpy's generators (the bootstrap) take only non-negative seeds.
BootstrapSeed = Field(0, ge=0, le=2**63 - 1, description="seed of the bootstrap and the examples")


class _Open(BaseModel):
    """A GQA record: the fields we need are checked; others are allowed and reach the engine as sent."""

    model_config = ConfigDict(extra="allow", strict=True, allow_inf_nan=False)


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


# --- GQA inputs -------------------------------------------------------------------------------


class Relation(_Open):
    name: str = Field(min_length=1, examples=["to the left of"])
    object: str = Field(min_length=1, description="id of the target object in the same graph")


class SceneObject(_Open):
    name: str = Field(min_length=1, examples=["fence"])
    x: float
    y: float
    w: float
    h: float
    attributes: list[str] = Field(default_factory=list, examples=[["wooden", "brown"]])
    relations: list[Relation] = Field(default_factory=list)


class SceneGraph(_Open):
    """One image's GQA scene graph (`sceneGraphs.json` value)."""

    width: float = Field(gt=0)
    height: float | None = None
    objects: dict[str, SceneObject] = Field(description="objects keyed by GQA object id")


class ProgramStep(_Open):
    """One step of GQA's functional program (`semantic`)."""

    operation: str
    dependencies: list[Annotated[int, Field(ge=0)]] = Field(
        default_factory=list, description="indices of earlier steps whose results this step uses")
    argument: str = ""


def _check_program(steps: list[ProgramStep] | None) -> list[ProgramStep] | None:
    """Dependencies must point at steps of the same program (the grounder follows them)."""
    for i, step in enumerate(steps or ()):
        for d in step.dependencies:
            if d >= len(steps):
                raise ValueError(f"step {i} depends on step {d}, but the program has {len(steps)} steps")
    return steps


Program = Annotated[list[ProgramStep] | None, AfterValidator(_check_program)]


class Question(_Open):
    """One GQA question record (`*_questions.json` value)."""

    question: str = Field(min_length=1)
    imageId: str | int  # noqa: N815 - GQA's field name
    answer: str = Field(None, description="absent for GQA's test questions")  # type: ignore[assignment]
    semantic: Program = None


# --- perturbations (docs/output-formats.md: contrast_sets.jsonl) ----------------------------------------------


class Change(_Open):
    kind: Literal["object", "attribute", "relation"]
    slot: str
    from_: str = Field(alias="from")
    to: str


class Evidence(_Open):
    query: dict[str, Any] = Field(description="the perturbed question as a program (docs/output-formats.md: queries)")
    facts: list[dict[str, Any]] = Field(description="graph facts that entail `answer` (docs/output-formats.md: facts)")
    answer: str


class Perturbation(_Open):
    question_id: str = Field(examples=["201307251_n1"])
    question: str
    answer: str
    rank: int = Field(ge=1, le=MAX_RANK)
    change: Change
    evidence: Evidence
    semantic: list[dict[str, Any]] | None = Field(
        default=None, description="the perturbed question's GQA program (when the original had one)")
    kind: Literal["contrast", "invariance"] = Field(
        default="contrast", description="contrast: the answer changes; invariance: it provably stays "
        "(program edits only); absent in files written before every perturbation said it")


class ContrastRecord(_Open):
    """One line of `contrast_sets.jsonl`."""

    question_id: str
    image_id: str
    template: str
    question: str
    answer: str
    slots: dict[str, Any] = Field(default_factory=dict)
    grounding: dict[str, Any] = Field(default_factory=dict)
    perturbations: list[Perturbation]


# --- /v1/perturb ------------------------------------------------------------------------------


class PerturbRequest(_Closed):
    question: str = Field(min_length=1, examples=["Is there a fence near the puddle?"])
    answer: str = Field(min_length=1, examples=["yes"])
    semantic: Program = Field(
        None, description="GQA's functional program; grounds slots to object ids when present")
    annotations: dict[str, Any] | None = Field(
        None, description="GQA's token annotations (question token index -> object id); the program "
                          "path finds the words of an object through them")
    types: dict[str, Any] | None = Field(None, description="GQA's question types, echoed in the result")
    scene_graph: SkipValidation[SceneGraph]  # validated once, by the library (see service._graph)
    question_id: str = Field("q", min_length=1, description="perturbations are named `<question_id>_c<rank>`")
    image_id: str = Field("image", min_length=1)
    max_k: int = Field(5, ge=1, description="at most this many perturbations, ranked 1..max_k")
    templates: list[str] | None = Field(None, description="only these template ids (default: all)")
    seed: int = Seed
    mode: Literal["templates", "programs", "both"] = Field(
        "templates", description="templates: the paper's six; programs: edit the program of a question "
                                 "that has one (the templates for one that has none); both")


class PerturbResult(_Open):
    """One question under one matched template. With perturbations, this object without its
    `reason` key is exactly the question's `contrast_sets.jsonl` line."""

    question_id: str
    image_id: str
    question: str
    answer: str
    template: str | None = Field(description="the template the question matched; null if none")
    slots: dict[str, Any] = Field(description="the slot fillers the template extracted")
    grounding: dict[str, Any] = Field(description="object ids each slot refers to, and how found")
    perturbations: list[Perturbation] = Field(description="as in contrast_sets.jsonl, rank order")
    types: dict[str, Any] = Field(default_factory=dict,
                                  description="the question's GQA types (structural, semantic, detailed), if given")
    reason: str | None = Field(
        description="why there are no perturbations (no_match, not_grounded, ambiguous, "
                    "no_distractor, duplicate, no_answer, ...); null when there are some")


# --- /v1/perturb/batch ------------------------------------------------------------------------


class BatchRequest(_Closed):
    questions: dict[str, Question] = Field(description="GQA questions keyed by question id")
    scene_graphs: dict[str, SkipValidation[SceneGraph]] = Field(description="GQA scene graphs keyed by image id")
    max_k: int = Field(5, ge=1)
    templates: list[str] | None = None
    seed: int = Seed
    mode: Literal["templates", "programs", "both"] = Field(
        "templates", description="templates: the paper's six; programs: edit the program of a question "
                                 "that has one (the templates for one that has none); both")
    corpus: Literal["request", "server"] = Field(
        "request",
        description="distractor statistics from the request's graphs (as `contrastgen generate` "
                    "computes them from its input) or from the corpus the server was started with")


class BatchResponse(_Open):
    results: list[PerturbResult] = Field(
        description="in question order; one per template a question matched (one with "
                    "reason no_match when it matched none)")
    stats: dict[str, Any] = Field(description="the counts `contrastgen generate` writes to stats.json")


# --- /v1/verify -------------------------------------------------------------------------------


class VerifyRequest(_Closed):
    records: list[dict[str, Any]] = Field(
        description="contrast_sets.jsonl records; checked as the CLI checks them, so a malformed "
                    "record is reported as a failure rather than rejected")
    scene_graphs: dict[str, SkipValidation[SceneGraph]]


class VerifyFailure(_Open):
    question_id: str
    perturbation_id: str | None = Field(description="null for a problem with the whole record")
    problem: str = Field(description="what did not hold, for a person")
    check: str = Field(description="the kind of check (facts, query, presupposition, structure, ...)")


class VerifyResponse(_Open):
    """The report of `contrastgen verify --json`, without the file name."""

    ok: bool
    checked: int = Field(description="perturbations checked")
    failed: int = Field(description="perturbations (or whole records) that failed a check")
    by_check: dict[str, int] = Field(description="problems per kind of check")
    unannotated_prone_rules: str | None = Field(
        description="the word list behind the unannotated-prone check; null if absent (unchecked)")
    failures: list[VerifyFailure]


# --- /v1/evaluate -----------------------------------------------------------------------------


Predictions = dict[str, str] | list[dict[str, Any]]


class EvaluateRequest(_Closed):
    records: list[ContrastRecord] = Field(min_length=1, description="contrast_sets.jsonl records")
    predictions: dict[str, Predictions] = Field(
        min_length=1,
        description="model name -> its predictions: `{question_id: answer}`, or a GQA/LXMERT/VQA "
                    "result list (`[{questionId, prediction}]`, `[{question_id, answer}]`)")
    seed: int = BootstrapSeed
    n_boot: int = Field(1000, ge=0, description="bootstrap resamples for the intervals (0: none)")
    examples: int = Field(0, ge=0, le=1000, description="failing contrast sets listed per model")
    ks: list[Annotated[int, Field(ge=1, le=MAX_RANK)]] | None = Field(
        None, description="k values to report (default 1, 3, 5 up to the largest rank)")
    oracle: str | None = Field(None, description="model whose disagreement with GQA is reported "
                                                 "as annotation noise (default: one named oracle)")
    strict: bool = Field(False, description="a missing prediction is an error, not a wrong answer")


class EvaluateReport(_Open):
    """The report of `contrastgen evaluate --contrast` (its report.json, less `inputs`); the
    evaluation library defines the sections, listed here at their top level."""

    kind: Literal["contrast"]
    version: int
    settings: dict[str, Any] = Field(description="seed, n_boot, confidence, ks, strict")
    models: list[str]
    templates: list[str]
    coverage: dict[str, Any] = Field(description="per model: predictions found, missing, ignored")
    results: dict[str, Any] = Field(description="per model, per k: the metrics with intervals, "
                                                "overall and broken down")
    examples: dict[str, Any] = Field(description="per model: failing contrast sets (`examples` > 0)")


# --- meta -------------------------------------------------------------------------------------


class TemplateInfo(_Open):
    id: str
    description: str
    examples: dict[str, list[str]] = Field(description="`match` and `no_match` example questions")


class TemplatesResponse(_Open):
    templates: list[TemplateInfo]


class Health(_Open):
    status: Literal["ok"]


class Readiness(_Open):
    status: Literal["ready", "busy"]
    templates: int
    corpus_images: int = Field(description="images in the server's corpus (0 when none)")


class Version(_Open):
    contrastgen: str
    api: str
    evidence_schema: int
    python: str
    fastapi: str
