"""Output files: one writer class per format (contrast_sets.jsonl, GQA- and LXMERT-format views,
stats), registered by decorator; `write_outputs` writes a run's directory atomically, the files of
every view writer in one pass over the run's entries.
"""

from __future__ import annotations

from pathlib import Path

from contrastgen.files.atomic import atomic_dir
from contrastgen.files.manifest import CONTRAST_SET, write_manifest
from contrastgen.gc_policy import no_gc
from contrastgen.results.generation import Generation
from contrastgen.writers import formats  # noqa: F401  (registers the built-in writers)
from contrastgen.writers.base import WRITERS, ViewFile, ViewWriter, Writer, register, write_views


def write_outputs(gen: Generation, out_dir: str | Path) -> Path:
    """Write every registered format; nothing appears at `out_dir` unless all of it succeeded."""
    with no_gc(), atomic_dir(out_dir) as tmp:
        writers = [cls() for cls in WRITERS.values()]
        views = [w for w in writers if isinstance(w, ViewWriter)]
        for w in writers:
            if not isinstance(w, ViewWriter):
                w.write(gen, tmp)
        write_views([f for w in views for f in w.files_of(gen, tmp)], gen.views)
        write_manifest(tmp, CONTRAST_SET, "contrastgen generate")
    return Path(out_dir)


__all__ = ["WRITERS", "ViewFile", "ViewWriter", "Writer", "register", "write_outputs", "write_views"]
