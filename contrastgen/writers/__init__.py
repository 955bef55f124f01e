"""Output files: one writer class per format (contrast_sets.jsonl, GQA- and LXMERT-format views,
stats), registered by decorator; `write_outputs` writes a run's directory atomically.
"""

from __future__ import annotations

from pathlib import Path

from contrastgen.jsonio import atomic_dir, no_gc
from contrastgen.run.generate import Generation
from contrastgen.writers import formats  # noqa: F401  (registers the built-in writers)
from contrastgen.writers.base import WRITERS, Writer, register


def write_outputs(gen: Generation, out_dir: str | Path) -> Path:
    """Write every registered format; nothing appears at `out_dir` unless all of it succeeded."""
    with no_gc(), atomic_dir(out_dir) as tmp:
        for cls in WRITERS.values():
            cls().write(gen, tmp)
    return Path(out_dir)


__all__ = ["WRITERS", "Writer", "register", "write_outputs"]
