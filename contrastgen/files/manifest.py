"""What kind of output a directory is, said by the directory itself (`manifest.json`).

Why a manifest: `verify`, `view`, `evaluate` and `export` each take a directory and must know
what wrote it (a contrast set, a caption set, a GQA redundancy ladder, OOD splits of one kind)
before they read it. Told by the directory, each reads one small file; guessed from the files
it holds, every reader would keep its own guess, and a new kind would have to be taught to all.
Each writer puts the manifest in the directory it builds, so it appears with the rest, whole
(`files.atomic.atomic_dir`). The manifest names no time and no host: the same inputs give the
same bytes.

Directories written before manifests existed are recognised from their layout by
`legacy_kind`, the one place that looks at files to tell a kind; nothing else does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contrastgen import __version__
from contrastgen.errors import InputError
from contrastgen.jsonio import read_json, read_jsonl, write_json

MANIFEST = "manifest.json"
FORMAT_VERSION = 1  # of the manifest itself; a reader refuses a newer one

# The kinds, each with the command that writes it.
CONTRAST_SET = "contrast-set"  # `generate` (with `--groups`, its pairs carry their groups), `demo`
CAPTION_SET = "caption-set"  # `captions generate`
GQA_REDUNDANCY_LADDER = "gqa-redundancy-ladder"  # `ood gqa-redundancy`
OOD_GQA = "ood-gqa"  # `ood gqa`: GQA-OOD's head and tail
OOD_VQAVS = "ood-vqavs"  # `ood vqavs`: one OOD set per shortcut
OOD_SUPERCLEVR = "ood-superclevr"  # `ood superclevr`: the concept splits and the redundancy splits
OOD_SUPERCLEVR_VARIANTS = "ood-superclevr-variants"  # `ood superclevr --variant`
KINDS: dict[str, str] = {
    CONTRAST_SET: "a contrast set (`contrastgen generate`)",
    CAPTION_SET: "a caption set (`contrastgen captions generate`)",
    GQA_REDUNDANCY_LADDER: "a GQA redundancy ladder (`contrastgen ood gqa-redundancy`)",
    OOD_GQA: "GQA-OOD splits (`contrastgen ood gqa`)",
    OOD_VQAVS: "VQA-VS splits (`contrastgen ood vqavs`)",
    OOD_SUPERCLEVR: "Super-CLEVR splits (`contrastgen ood superclevr`)",
    OOD_SUPERCLEVR_VARIANTS: "Super-CLEVR variants (`contrastgen ood superclevr --variant`)",
}
OOD_KINDS = (OOD_GQA, OOD_VQAVS, OOD_SUPERCLEVR, OOD_SUPERCLEVR_VARIANTS, GQA_REDUNDANCY_LADDER)

_CONTRAST_FILE, _CAPTIONS_FILE, _STATS_FILE = "contrast_sets.jsonl", "captions.jsonl", "stats.json"
# stats.json's `benchmark`, as the OOD builders wrote it before manifests
_BENCHMARKS = {"gqa-redundancy": GQA_REDUNDANCY_LADDER, "gqa-ood": OOD_GQA, "vqa-vs": OOD_VQAVS}


@dataclass(frozen=True)
class Manifest:
    """`kind` (one of `KINDS`), the manifest's `format_version`, the `contrastgen` version that
    wrote the directory and the command (`made_by`)."""

    kind: str
    made_by: str
    contrastgen: str = __version__
    format_version: int = FORMAT_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "format_version": self.format_version, "contrastgen": self.contrastgen,
                "made_by": self.made_by}


def write_manifest(folder: str | os.PathLike[str], kind: str, made_by: str) -> None:
    """Write `folder`'s manifest: call it inside the `atomic_dir` the output is built in."""
    if kind not in KINDS:
        raise ValueError(f"unknown output kind {kind!r}")
    write_json(Path(folder) / MANIFEST, Manifest(kind, made_by).to_dict(), indent=True)


def read_manifest(folder: str | os.PathLike[str]) -> Manifest | None:
    """The directory's manifest, or None where it has none (a file, or an older output)."""
    path = Path(folder) / MANIFEST
    if not path.is_file():
        return None
    raw = read_json(path)
    if not isinstance(raw, Mapping) or raw.get("kind") not in KINDS or not isinstance(raw.get("made_by"), str):
        raise InputError(f"not a contrastgen manifest (its kind is one of {', '.join(KINDS)})", path=str(path))
    version = raw.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version > FORMAT_VERSION:
        raise InputError(f"manifest format {version!r} is newer than this contrastgen reads ({FORMAT_VERSION}); "
                         "update contrastgen", path=str(path))
    return Manifest(kind=raw["kind"], made_by=raw["made_by"], contrastgen=str(raw.get("contrastgen")),
                    format_version=version)


def artifact_kind(path: str | os.PathLike[str]) -> str | None:
    """What `path` is: its manifest's kind; for a file or a directory an older contrastgen wrote,
    what `legacy_kind` recognises; None for anything else."""
    manifest = read_manifest(path) if Path(path).is_dir() else None
    return manifest.kind if manifest is not None else legacy_kind(path)


def legacy_kind(path: str | os.PathLike[str]) -> str | None:
    """The kind of a directory without a manifest (written before manifests, or a file given
    alone), from its layout: an OOD directory by its stats.json's `benchmark` (and Super-CLEVR's
    `layout`), a caption set by captions.jsonl
    without contrast sets, a contrast set by contrast_sets.jsonl; a JSON-lines file by its first
    record (a caption has `caption` and `negatives`). None where nothing fits."""
    p = Path(path)
    if p.is_dir():
        stats = p / _STATS_FILE
        data = read_json(stats) if stats.is_file() else None
        benchmark = data.get("benchmark") if isinstance(data, Mapping) else None
        if benchmark in _BENCHMARKS:
            return _BENCHMARKS[benchmark]
        if benchmark == "super-clevr":
            return OOD_SUPERCLEVR_VARIANTS if data.get("layout") == "variants" else OOD_SUPERCLEVR
        if (p / _CONTRAST_FILE).is_file():
            return CONTRAST_SET
        return CAPTION_SET if (p / _CAPTIONS_FILE).is_file() else None
    if not p.is_file() or p.suffix != ".jsonl":
        return None
    first = next(read_jsonl(p), None)
    return CAPTION_SET if isinstance(first, Mapping) and "caption" in first and "negatives" in first else CONTRAST_SET


def require_kind(path: str | os.PathLike[str], wanted: str) -> None:
    """Refuse a directory whose manifest declares another kind than `wanted`, saying what it is
    (a file, or a directory without a manifest, is left to the reader, whose errors name it)."""
    manifest = read_manifest(path) if Path(path).is_dir() else None
    if manifest is not None and manifest.kind != wanted:
        raise InputError(f"this directory is {KINDS[manifest.kind]}, not {KINDS[wanted]}", path=str(path))
