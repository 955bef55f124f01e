"""What `contrastgen generate`, `augment` and `demo` do, from files to files, for any dataset
family: ask the registry which family reads the inputs, load, generate, point records at image
files, write. The command line parses options and prints; everything else is here, where tests
and scripts call it too.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contrastgen.datasets.inputs import InputPaths
from contrastgen.families import family_named, family_reading
from contrastgen.families.base import Family, Prepared
from contrastgen.parallel.backend import LOCAL, Backend
from contrastgen.results.generation import Generation
from contrastgen.run.generate import frozen, run_settings
from contrastgen.run.shards import run_shards


@dataclass(frozen=True)
class RunRequest:
    """A generation as the command line asks it. `family`: a registered family's name, "auto" to
    detect it from the questions' first bytes, or None for the first family; `options`: the
    family's own (`Family.Options`), by name."""

    questions: InputPaths
    scene_graphs: Path
    family: str | None = None
    max_k: int = 5
    seed: int = 0
    workers: int | None = None
    progress: bool = False
    backend: Backend = LOCAL
    groups: bool = False  # also look for two-image groups (`contrastgen.groups`)
    options: Mapping[str, Any] = field(default_factory=dict)

    def reader(self) -> Family:
        """The family that reads the questions."""
        return family_for(self.family, self.questions)


def family_for(name: str | None, questions: InputPaths) -> Family:
    """The family of that name; "auto": the one whose format the questions are in (from their
    first bytes); None: the first registered."""
    return family_reading(questions) if name == "auto" else family_named(name)


def family_options(family: Family, given: Mapping[str, Any]) -> dict[str, Any]:
    """Of the command line's family options (`--templates`, `--mode`), those the family takes: the
    rest are not its concern (a family without templates has none to choose)."""
    return {name: value for name, value in given.items() if name in family.option_names()}


class _Clock:
    """The seconds each phase of a run took, as the command line prints them."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = now - self._last
        self._last = now

    def total(self) -> dict[str, float]:
        self.timings["total"] = sum(self.timings.values())
        return self.timings


def generate_files(request: RunRequest, lap: Callable[[str], None] = lambda phase: None) -> Generation:
    """A whole run from its input files; `lap(name)` as each phase ends."""
    return _generate_files(request, lap)[0]


def _generate_files(request: RunRequest, lap: Callable[[str], None], *, augment: bool = False
                    ) -> tuple[Generation, Prepared]:
    from contrastgen.run.allocator import tune_for_batch

    family = request.reader()
    options = family.options({**request.options, **(family.augment_options if augment else {})})
    settings = run_settings(max_k=request.max_k, seed=request.seed, workers=request.workers,
                            progress=request.progress, backend=request.backend, groups=request.groups)
    tune_for_batch()
    with family.prepare_files(request.questions, request.scene_graphs, settings, options, lap) as prepared, \
            frozen():
        gen = run_shards(family, prepared, settings)
    lap("generation")
    return gen, prepared


def run_generate(request: RunRequest, out: Path, *, images: Path | None = None
                 ) -> tuple[Generation, dict[str, float]]:
    """Load, generate, write OUT (whole or not at all); the Generation and each phase's seconds."""
    from contrastgen.writers import write_outputs

    clock = _Clock()
    gen = generate_files(request, clock.lap)
    if images is not None:
        from contrastgen.run.images import with_image_files
        gen.lines = with_image_files(gen.lines, images)
    write_outputs(gen, out)
    clock.lap("write")
    return gen, clock.total()


def run_augment(request: RunRequest, out: Path, *, lxmert_file: Path, replace: bool, replace_share: float
                ) -> tuple[Generation, dict[str, int]]:
    """Training questions plus their perturbations, in GQA's format and LXMERT's (or, for a family
    whose views are its own records, those, keyed by question id); the Generation and the counts
    written."""
    family = request.reader()
    gen, prepared = _generate_files(dataclasses.replace(request, family=family.name), lambda phase: None,
                                    augment=True)
    counts = family.write_augmented(gen, prepared, request.questions, out, replace=replace, seed=request.seed,
                                    lxmert_file=lxmert_file, replace_share=replace_share)
    return gen, counts
