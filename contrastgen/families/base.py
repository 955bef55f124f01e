"""What a dataset family provides, and the one registry of families.

Why a family is the unit of plug-in: GQA and CLEVR differ in how their files are read, which
perturbation paths run on a question (and so which seed keys and refusal reasons they bring),
what a shard does and which views of a question a run writes; they share everything else: the
shards, the merge, the spill, the writers, the command line. A family is one module that
subclasses `Family` and registers an instance (`register`); `run/` asks the registry which family
reads the inputs and never names one. The registry is ordered: the first family is the one a file
that no other family's detector claims is read as (its reader then names what is wrong).

The contract, what a run gives a family and what it gets back:
- `Settings`, the same for every family (k, seed, workers, backend, groups);
- the family's own options (`Options`, a dataclass: GQA's templates and mode), passed by name;
- `prepare` (loaded questions and graphs) or `prepare_files` (paths) gives a `Prepared`: the
  `ShardContext` every shard reads, the statistics' template rows, and statistics of its own;
- `shard(context, images)`, a module-level function, gives one shard's `ShardResult`; it is the
  same function on every backend: forked workers inherit the whole context, a Ray task gets the
  options once and its own shard's questions and graphs (`ShardContext` is `parallel.tasks.Apart`).
"""

from __future__ import annotations

import contextlib
import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from contrastgen.datasets.base import QuestionItem, QuestionSource
from contrastgen.datasets.formats import QUESTION_FORMATS
from contrastgen.datasets.inputs import InputPaths
from contrastgen.datasets.packing import GraphJson
from contrastgen.groups.search import REASONS as GROUP_REASONS
from contrastgen.parallel.backend import LOCAL, Backend
from contrastgen.registry import Registry
from contrastgen.results.generation import Generation, ShardResult

SHARD_IMAGES = 256  # images per shard: the unit a backend distributes (and a spilled input's shard)

__all__ = ["FAMILIES", "GROUP_REASONS", "SHARD_IMAGES", "Family", "Prepared", "Settings", "ShardContext",
           "ShardQuestions", "family_named", "family_reading", "register"]


@dataclass(frozen=True)
class Settings:
    """What every family's run is asked, whatever the family."""

    max_k: int = 5
    seed: int = 0
    workers: int = 1
    progress: bool = False
    backend: Backend = LOCAL
    groups: bool = False  # also look for two-image groups (`contrastgen.groups`)


@dataclass
class ShardQuestions:
    """One shard's questions as a `QuestionSource`: what a Ray task carries."""

    items: dict[str, list[QuestionItem]]  # image id -> its questions, in input order
    positions: dict[str, int] | None = None  # question id -> input position (a spilled input's)

    @property
    def order(self) -> list[str]:
        return [qid for items in self.items.values() for qid, _, _ in items]

    def __len__(self) -> int:
        return sum(len(v) for v in self.items.values())

    @property
    def image_ids(self) -> list[str]:
        return list(self.items)

    def questions_of(self, image_id: str) -> list[QuestionItem]:
        return self.items.get(image_id, [])

    def position_of(self, image_id: str, question_id: str) -> int | None:
        return None if self.positions is None else self.positions[question_id]


# What a Ray task carries: the shard's questions by image, their graphs, and (for a spilled
# input) each question's input position.
ShardPayload = tuple[dict[str, list[QuestionItem]], Mapping[str, Any], "dict[str, int] | None"]


@dataclass(frozen=True)
class ShardContext:
    """Everything a shard reads: the same for every shard of a run. `local` is what only this
    machine's processes get, inherited through the fork (GQA: the caller's engine); a Ray task has
    None there and makes its own once per process."""

    questions: QuestionSource
    graphs: Mapping[str, Any]  # dicts, or graphs kept as JSON (`packing.GraphJson`)
    options: Any  # the family's, with the run's settings it needs: sent once to a Ray worker
    local: Any = None

    def shared(self) -> Any:
        return self.options

    def carried(self, images: list[str]) -> ShardPayload:
        """One shard's questions and graphs, made as the backend asks for the next task (a window
        of tasks in flight holds their inputs, not the whole input)."""
        source, graphs = self.questions, self.graphs
        position_of = getattr(source, "position_of", None)  # a spilled input's output order
        items = {image: source.questions_of(image) for image in images}
        positions = ({qid: position_of(image, qid) for image, qs in items.items() for qid, _, _ in qs}
                     if position_of is not None else None)
        # packed graphs travel as their JSON (smaller than pickled dicts; the task parses them)
        subset = (graphs.subset(images) if isinstance(graphs, GraphJson)
                  else {image: graphs[image] for image in images if image in graphs})
        return items, subset, positions

    @property
    def rejoin(self) -> Callable[[Any, ShardPayload], tuple[ShardContext, list[str]]]:
        return _rejoin


def _rejoin(options: Any, payload: ShardPayload) -> tuple[ShardContext, list[str]]:
    """On a Ray worker: the context of one shard, from the run's options and the shard's payload."""
    items, graphs, positions = payload
    return ShardContext(ShardQuestions(items, positions), graphs, options), list(items)


@dataclass
class Prepared:
    """A family's inputs made ready for the shards."""

    context: ShardContext
    template_ids: list[str] | None = None  # the statistics' rows in order; None: those the outcomes name
    stats: dict[str, Any] = field(default_factory=dict)  # added to the run's statistics


class Family(ABC):
    """One dataset family: subclass, set the class attributes, implement the readers and
    `prepare`, and `register` an instance."""

    name: ClassVar[str]
    describe: ClassVar[str]  # one line, for `--help`
    Options: ClassVar[type]  # the family's own options (a dataclass; every field has a default)
    shard: ClassVar[Callable[[ShardContext, list[str]], ShardResult]]  # staticmethod(a module-level function)
    seed_keys: ClassVar[Mapping[str, str]]  # each perturbation path it runs -> the seed string its order is drawn by
    reasons: ClassVar[tuple[str, ...]]  # why a question may end unperturbed on its paths (`stats.json`)
    group_reasons: ClassVar[tuple[str, ...]] = GROUP_REASONS  # `--groups`: why a pair may go ungrouped
    augment_options: ClassVar[Mapping[str, Any]] = {}  # options `augment` adds to the run

    def detect(self, questions: InputPaths) -> bool:
        """Are these questions in this family's format (from their first bytes: inputs are large)?
        By default the question format registered under the family's name decides; a family with
        no such format says it itself."""
        if self.name not in QUESTION_FORMATS:
            raise NotImplementedError(f"family {self.name!r} registers no question format: give it a detect()")
        return QUESTION_FORMATS[self.name].detect(questions)

    @abstractmethod
    def load_questions(self, path: InputPaths) -> dict[str, dict[str, Any]]:
        """Questions by id, in input order, each with `question` and `imageId`."""

    @abstractmethod
    def load_scenes(self, path: str | Path) -> Mapping[str, Any]:
        """Scene graphs by image id, in the data model of `datasets/base.py`."""

    @abstractmethod
    def prepare(self, questions: Mapping[str, Any], graphs: Mapping[str, Any], settings: Settings,
                options: Any) -> Prepared:
        """The shards' context for loaded inputs."""

    @contextlib.contextmanager
    def prepare_files(self, questions: InputPaths, graphs: str | Path, settings: Settings, options: Any,
                      lap: Callable[[str], None]) -> Iterator[Prepared]:
        """The shards' context for inputs on disk, alive while the shards run; `lap(name)` as each
        phase ends. By default both are loaded whole; a family whose inputs can be large streams
        them (GQA)."""
        questions_read, graphs_read = self.load_questions(questions), self.load_scenes(graphs)
        lap("load")
        yield self.prepare(questions_read, graphs_read, settings, options)

    def options(self, given: Mapping[str, Any]) -> Any:
        """The family's options from their names; a name it does not take is the caller's error."""
        names = self.option_names()
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise TypeError(f"the {self.name} family takes no option {', '.join(unknown)} "
                            f"(its options: {', '.join(names) or 'none'})")
        return self.Options(**given)

    def option_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(self.Options))

    def warnings(self, stats: Mapping[str, Any], options: Any) -> list[str]:
        """What a finished run should tell its user about its input (each one sentence), from
        its statistics: a family knows which of its options an input can leave with nothing to
        do. None by default."""
        return []

    def write_augmented(self, gen: Generation, prepared: Prepared, questions: InputPaths, out: Path, *,
                        lxmert_file: Path, replace: bool, seed: int, replace_share: float) -> dict[str, int]:
        """`augment`'s training file: the originals the run loaded and their perturbations, keyed
        by question id. A family whose inputs are not held in memory (GQA's are spilled) reads
        its originals again from `questions`."""
        from contrastgen.datasets.base import DictQuestions
        from contrastgen.writers.augmented import write_augmented_training

        loaded = prepared.context.questions
        assert isinstance(loaded, DictQuestions), f"the {self.name} family's questions are not in memory"
        return write_augmented_training(gen, loaded.questions, out, replace=replace, seed=seed,
                                        lxmert_file=lxmert_file, replace_share=replace_share)


FAMILIES: Registry[Family] = Registry("dataset family")


def register(family: Family) -> Family:
    """Add a family; its seed keys must differ from every other family's (two paths drawing the
    same order would not be independent)."""
    taken = {key: other.name for other in FAMILIES.values() for key in other.seed_keys.values()}
    for key in family.seed_keys.values():
        if key in taken:
            raise ValueError(f"the {family.name} family's seed key {key!r} is the {taken[key]} family's")
    return FAMILIES.add(family.name, family)


def family_named(name: str | None) -> Family:
    """The family of that name (an unknown one is an InputError listing them); None: the first."""
    return FAMILIES[name] if name is not None else FAMILIES.values()[0]


def family_reading(questions: InputPaths) -> Family:
    """The family whose format the questions are in: the first after the first whose detector
    holds, else the first."""
    families = FAMILIES.values()
    return next((f for f in families[1:] if f.detect(questions)), families[0])


def all_reasons() -> tuple[str, ...]:
    """Every refusal reason of every registered family, each once, in registration order."""
    return tuple(dict.fromkeys(r for f in FAMILIES.values() for r in f.reasons))
