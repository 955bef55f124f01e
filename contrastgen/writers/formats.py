"""The formats of a run's output directory.

Why several views of one result: evaluation scripts and model loaders already read GQA's
question format and LXMERT's input format; giving them `augmented.json` (and k = 1, 3 views)
means nobody writes a converter. Perturbed GQA records carry their proof under `contrast`, so
tools downstream (the oracle baseline, crowd export) need only these files.
"""

from __future__ import annotations

from pathlib import Path

from contrastgen.jsonio import write_chunks, write_json, write_text
from contrastgen.results.generation import Generation
from contrastgen.results.stats import stats_markdown
from contrastgen.writers.base import (
    ViewFile,
    ViewWriter,
    Writer,
    gqa_item,
    lxmert_item,
    register,
    view_names,
)


@register
class ContrastSets(Writer):
    """The contrast sets themselves: what `verify`, `evaluate`, `mturk export` and the API read."""

    name = "contrast_sets"
    files = "contrast_sets.jsonl"

    def write(self, gen: Generation, out: Path) -> None:
        write_chunks(out / "contrast_sets.jsonl", gen.lines)


@register
class GqaViews(ViewWriter):
    """Originals and perturbations in GQA's question format, one file per view."""

    name = "gqa"
    files = "original.json, augmented.json, augmented_k1.json, augmented_k3.json"

    def files_of(self, gen: Generation, out: Path) -> list[ViewFile]:
        return [ViewFile(out / f"{view}.json", max_rank, gqa_item, (b"{", b"}\n"))
                for view, max_rank in view_names(gen.max_k).items()]


@register
class LxmertViews(ViewWriter):
    """The same views in LXMERT's input format."""

    name = "lxmert"
    files = "lxmert/<view>.json"

    def files_of(self, gen: Generation, out: Path) -> list[ViewFile]:
        (out / "lxmert").mkdir(exist_ok=True)
        return [ViewFile(out / "lxmert" / f"{view}.json", max_rank, lxmert_item, (b"[", b"]\n"))
                for view, max_rank in view_names(gen.max_k).items()]


@register
class Stats(Writer):
    """Counts in the paper's terms, as JSON and as Markdown."""

    name = "stats"
    files = "stats.json, stats.md"

    def write(self, gen: Generation, out: Path) -> None:
        write_json(out / "stats.json", gen.stats, indent=True)
        write_text(out / "stats.md", stats_markdown(gen.stats))
