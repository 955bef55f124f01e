"""What `contrastgen generate`, `augment` and `demo` do, from files to files, for either dataset
family: load, generate, point records at image files, write. The command line parses options and
prints; everything else is here, where tests and scripts call it too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from contrastgen.datasets.gqa import InputPaths
from contrastgen.parallel.backend import LOCAL, Backend
from contrastgen.results.generation import Generation

CLEVR, GQA = "clevr", "gqa"


@dataclass(frozen=True)
class RunRequest:
    """A generation as the command line asks it (`--format` resolved: "gqa" or "clevr")."""

    questions: InputPaths
    scene_graphs: Path
    data_format: str = GQA
    max_k: int = 5
    seed: int = 0
    workers: int | None = None
    progress: bool = False  # GQA only: a CLEVR-family run prints no progress bar
    templates: list[str] | None = None  # GQA only
    mode: str = "templates"  # GQA only
    backend: Backend = LOCAL
    groups: bool = False  # also look for two-image groups (`contrastgen.groups`)


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
    if request.data_format == CLEVR:
        from contrastgen.datasets.clevr import load_questions, load_scenes
        from contrastgen.run.generate import generate_clevr

        questions, scenes = load_questions(request.questions), load_scenes(request.scene_graphs)
        lap("load")
        gen = generate_clevr(questions, scenes, max_k=request.max_k, seed=request.seed, workers=request.workers,
                             backend=request.backend, groups=request.groups)
        lap("generate")
        return gen
    from contrastgen.engine import Engine
    from contrastgen.run.allocator import tune_for_batch
    from contrastgen.run.generate import generate_from_files

    tune_for_batch()
    # The engine before the data: loading it allocates enough to trigger full collections,
    # which would walk the whole dataset if it were loaded already.
    engine = Engine.load()
    lap("engine")
    return generate_from_files(engine, request.questions, request.scene_graphs, max_k=request.max_k,
                               seed=request.seed, templates=request.templates, workers=request.workers,
                               progress=request.progress, lap=lap, mode=request.mode, backend=request.backend,
                               groups=request.groups)


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
    """Training questions plus their perturbations, in GQA's format and LXMERT's (CLEVR-family
    input: its own records, keyed by question id); the Generation and the counts written."""
    from contrastgen.writers.augmented import write_augmented_from_files, write_augmented_training

    if request.data_format == CLEVR:
        from contrastgen.datasets.clevr import load_questions, load_scenes
        from contrastgen.run.generate import generate_clevr

        questions = load_questions(request.questions)
        gen = generate_clevr(questions, load_scenes(request.scene_graphs), max_k=request.max_k, seed=request.seed,
                             workers=request.workers, backend=request.backend, every_original=True)
        counts = write_augmented_training(gen, questions, out, replace=replace, seed=request.seed,
                                          lxmert_file=lxmert_file, replace_share=replace_share)
        return gen, counts
    gen = generate_files(request)
    # the originals are read once more as the file is written
    counts = write_augmented_from_files(gen, request.questions, out, replace=replace, seed=request.seed,
                                        lxmert_file=lxmert_file, replace_share=replace_share)
    return gen, counts
