"""Generating contrast sets for a whole dataset: the library's entry point, for every family.

    gen = generate(questions, scene_graphs, max_k=5, workers=2)        # the first family (GQA)
    gen = generate(questions, scenes, family=name, max_k=5)            # any registered family

The family (`families.base.FAMILIES`, the first one when none is named) prepares the inputs and
gives the shard function; its own options (`Family.Options`, e.g. GQA's `templates`, `mode`,
`engine`) are passed by name. Its shards (`run.shards`) run on this process, a local fork pool or
Ray, and the output does not depend on which, nor on `workers`. `run.pipeline` adds loading and
writing, as the command line and the HTTP service use them.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Mapping
from typing import Any

from contrastgen.families import family_named
from contrastgen.families.base import Settings
from contrastgen.parallel.backend import LOCAL, Backend, default_workers
from contrastgen.results.generation import Generation
from contrastgen.run.shards import run_shards


def generate(questions: Mapping[str, dict[str, Any]], scene_graphs: Mapping[str, Any], *, family: str | None = None,
             max_k: int = 5, seed: int = 0, workers: int | None = None, progress: bool = False,
             backend: Backend = LOCAL, groups: bool = False, **options: Any) -> Generation:
    """Perturb every question of a loaded dataset; results in input order, independent of `workers`
    and of the backend. `groups`: also look for each contrast pair's two-image group."""
    chosen = family_named(family)
    settings = run_settings(max_k=max_k, seed=seed, workers=workers, progress=progress, backend=backend,
                            groups=groups)
    family_options = chosen.options(options)
    with frozen():
        return run_shards(chosen, chosen.prepare(questions, scene_graphs, settings, family_options), settings)


def run_settings(*, max_k: int, seed: int, workers: int | None, progress: bool, backend: Backend,
                 groups: bool) -> Settings:
    """The settings of a run, checked; no `workers`: one per CPU."""
    if max_k < 1:
        raise ValueError("max_k must be at least 1")
    return Settings(max_k=max_k, seed=seed, workers=default_workers() if workers is None else max(1, workers),
                    progress=progress, backend=backend, groups=groups)


@contextlib.contextmanager
def frozen() -> Iterator[None]:
    """Freeze what is loaded: the collector then never walks the millions of loaded objects (nor,
    in forked workers, touches and so copies their pages). A caller that froze them keeps them
    frozen."""
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    try:
        yield
    finally:
        if not frozen_before:
            gc.unfreeze()
