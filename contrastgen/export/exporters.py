"""Every export, of contrast sets and of caption sets, in one registry: what it reads, which
options it takes, how it is run and what it says it wrote.

Why one registry: `contrastgen export` and `contrastgen captions export` (and any caller of the
library) find an export, check the options given against what it takes and run it the same way;
a new export is one entry here, and the commands list it in `--format` without an `if` of their
own. The writers are imported when an export runs, so naming the formats (`--help`) loads none.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contrastgen.errors import InputError
from contrastgen.files.manifest import CAPTION_SET, CONTRAST_SET
from contrastgen.registry import Registry

# The options an export may take beyond its source and output folder.
SPLIT, LICENSE, LICENSE_NOTE, NAME, IMAGES, SEED = "split", "license", "license_note", "name", "images", "seed"


@dataclass(frozen=True)
class ExportOptions:
    """What the caller asked for; an export reads the ones it `takes` (None: its default)."""

    split: str | None = None
    license: str | None = None
    license_note: str | None = None
    name: str | None = None  # a harness benchmark's name
    images: Path | None = None
    seed: int | None = None
    progress: bool = False


@dataclass(frozen=True)
class Exported:
    """What an export wrote (`result`, the writer's own record of it) and its summary in words."""

    out: Path
    files: tuple[str, ...]
    lines: tuple[str, ...]
    result: Any = field(repr=False)


@dataclass(frozen=True)
class Exporter:
    """One export: the kind of output it `reads` (`files.manifest`), its `--format` name, the
    options it `takes`, and `run(source, out, options)`."""

    reads: str
    name: str
    takes: frozenset[str]
    run: Callable[[Path, Path, ExportOptions], Exported]


EXPORTS: Registry[Exporter] = Registry("export")


def _key(reads: str, name: str) -> str:
    return f"{reads}/{name}"


def _register(reads: str, name: str, takes: tuple[str, ...]) -> Callable[[Callable], Callable]:
    def add(run: Callable[[Path, Path, ExportOptions], Exported]) -> Callable:
        EXPORTS.add(_key(reads, name), Exporter(reads, name, frozenset(takes), run))
        return run
    return add


def formats(reads: str) -> tuple[str, ...]:
    """The export names for a kind of output, in the order they were registered."""
    return tuple(e.name for e in EXPORTS.values() if e.reads == reads)


def exporter(reads: str, name: str) -> Exporter:
    """The export `name` of a kind of output; an unknown name is an InputError naming the choices."""
    if _key(reads, name) not in EXPORTS:
        raise InputError(f"unknown export format {name!r} (one of {', '.join(formats(reads))})")
    return EXPORTS[_key(reads, name)]


def taking(reads: str, option: str) -> tuple[str, ...]:
    """The exports of a kind of output that take `option` (for a message saying where it applies)."""
    return tuple(e.name for e in EXPORTS.values() if e.reads == reads and option in e.takes)


def run_export(reads: str, name: str, source: str | os.PathLike[str], out: str | os.PathLike[str],
               options: ExportOptions = ExportOptions()) -> Exported:
    """Run one export of `source` (an output directory of kind `reads`, or its file) into `out`."""
    return exporter(reads, name).run(Path(source), Path(out), options)


def _writer(spec: str) -> Callable[..., Any]:
    module, function = spec.split(":")
    return getattr(importlib.import_module(module), function)


# --- contrast sets: one row per perturbation (parquet, hf, jsonl), or a harness's benchmark ------

def _rows_export(name: str, takes: tuple[str, ...]) -> None:
    @_register(CONTRAST_SET, name, takes)
    def run(source: Path, out: Path, o: ExportOptions) -> Exported:
        write = _writer("contrastgen.export.write:export")
        kwargs: dict[str, Any] = {"split": o.split} if o.split is not None else {}
        r = write(source, out, fmt=name, license=o.license, license_note=o.license_note, images=o.images,
                  progress=o.progress, **kwargs)
        return Exported(r.out, r.files, (f"wrote {r.rows:,} perturbations of {r.sets:,} contrast sets to {r.out}: "
                                         + ", ".join(r.files),), r)


_rows_export("parquet", (SPLIT, LICENSE, LICENSE_NOTE, IMAGES))
_rows_export("hf", (SPLIT, LICENSE, LICENSE_NOTE, IMAGES))
_rows_export("jsonl", (SPLIT, LICENSE, LICENSE_NOTE))


def _harness_export(name: str, spec: str) -> None:
    @_register(CONTRAST_SET, name, (NAME, IMAGES))
    def run(source: Path, out: Path, o: ExportOptions) -> Exported:
        if o.name is None:
            raise InputError(f"the {name} export needs a benchmark name")
        r = _writer(spec)(source, out, name=o.name, images=o.images, progress=o.progress)
        return Exported(r.out, r.files, (
            f"wrote {r.questions:,} questions of {r.sets:,} contrast sets to {r.out}: " + ", ".join(r.files),
            f"run: {', '.join(r.names)} (see {r.out / 'README.md'})"), r)


_harness_export("lmms-eval", "contrastgen.export.lmms_eval:export_lmms_eval")
_harness_export("vlmevalkit", "contrastgen.export.vlmevalkit:export_vlmevalkit")


# --- caption sets: each benchmark's own files -----------------------------------------------------

def _caption_export(name: str, spec: str, unit: str, takes: tuple[str, ...] = (IMAGES,)) -> None:
    @_register(CAPTION_SET, name, takes)
    def run(source: Path, out: Path, o: ExportOptions) -> Exported:
        from contrastgen.records import caption_file
        from contrastgen.terminal.progress import line_count
        from contrastgen.terminal.progress import progress as progress_bar

        kwargs: dict[str, Any] = {"seed": o.seed} if SEED in takes and o.seed is not None else {}
        lines = line_count(caption_file(source))
        passes = 2 if SEED in takes else 1  # NegCLIP reads the records again to pick negative images
        with progress_bar("exporting captions", lambda: passes * lines(), enabled=o.progress) as advance:
            r = _writer(spec)(source, out, images=o.images, advance=advance, **kwargs)
        shown = ", ".join(r.files[:8]) + (", ..." if len(r.files) > 8 else "")
        return Exported(r.out, r.files, (f"wrote {r.pairs} {unit} to {out} ({shown})", *r.notes), r)


_caption_export("sugarcrepe", "contrastgen.export.caption_benchmarks:export_sugarcrepe", "pairs")
_caption_export("aro", "contrastgen.export.caption_benchmarks:export_aro", "pairs")
_caption_export("hf", "contrastgen.export.caption_hf:export_caption_hf", "pairs")
_caption_export("negclip", "contrastgen.export.negclip:export_negclip", "rows", (IMAGES, SEED))
