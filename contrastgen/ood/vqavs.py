"""VQA-VS: one OOD test set per shortcut (Si et al. 2022), on VQA v2 or GQA data.

For each of the nine shortcuts, samples are grouped by their concept (see `concepts`), groups with
a normalised answer entropy below 0.9 are kept, and in each kept group the answers whose count is
under 1.2 x the group's mean are the tail: the union of the tails is that shortcut's OOD set, the
rest of the kept groups its head. Without object annotations the five object-based shortcuts are
skipped and say so; they are never approximated. A sample whose image the annotations lack is
counted and left unlabelled for those shortcuts (its language concepts still count).

The output directory is self-contained for scoring: it carries every sample's human answers, so
`evaluate_ood` needs nothing but the directory and the predictions.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contrastgen.datasets.gqa import gqa_json
from contrastgen.datasets.samples import Sample
from contrastgen.errors import InputError
from contrastgen.files.atomic import atomic_dir
from contrastgen.files.manifest import OOD_VQAVS, write_manifest
from contrastgen.jsonio import keyed_object, write_chunks, write_json, write_jsonl, write_text
from contrastgen.ood.concepts import SHORTCUT_NAMES, SHORTCUTS, SampleConcepts, label_samples
from contrastgen.ood.imbalance import GroupSplit, answer_histograms, split_groups
from contrastgen.terminal.progress import progress as progress_bar

STATS_FILE = "stats.json"
NO_OBJECTS = "skipped: no object annotations (pass --objects)"


@dataclass
class VqaVsConfig:
    entropy_threshold: float = 0.9
    tail_factor: float = 1.2
    drop_stopwords: bool = False
    shortcuts: tuple[str, ...] = SHORTCUT_NAMES

    def __post_init__(self) -> None:
        unknown = [s for s in self.shortcuts if s not in SHORTCUT_NAMES]
        if unknown:
            raise InputError(f"unknown shortcut(s) {', '.join(unknown)}; expected {', '.join(SHORTCUT_NAMES)}")
        if not 0 < self.entropy_threshold <= 1:
            raise InputError(f"entropy threshold must be in (0, 1], got {self.entropy_threshold}")
        if not self.tail_factor > 0:
            raise InputError(f"tail factor must be positive, got {self.tail_factor}")


@dataclass
class ShortcutSplit:
    """One shortcut's groups and its head and tail (OOD) samples. The counts are fields of their
    own: a streamed build keeps only the imbalanced groups and no ids (`groups`, `head_ids` and
    `tail_ids` are then what it names and writes, not what it counted)."""

    name: str
    family: str
    groups: dict[str, GroupSplit] = field(default_factory=dict)
    head_ids: list[str] = field(default_factory=list)
    tail_ids: list[str] = field(default_factory=list)
    unlabelled: int = 0
    skipped: str | None = None
    group_count: int = 0  # every group, balanced or not
    head: int = 0
    tail: int = 0

    def stats(self) -> dict[str, Any]:
        if self.skipped:
            return {"family": self.family, "skipped": self.skipped}
        return {
            "family": self.family,
            "groups": self.group_count,
            "imbalanced_groups": sum(1 for g in self.groups.values() if g.imbalanced),
            "head": self.head,
            "tail": self.tail,
            "unlabelled": self.unlabelled,
        }


@dataclass
class VqaVsBuild:
    config: VqaVsConfig
    data_format: str
    samples: list[Sample]
    concepts: list[SampleConcepts]
    splits: dict[str, ShortcutSplit]
    mi_source: str = "input"
    without_objects: int = 0  # samples whose image the object annotations lack (object concepts unlabelled)

    def built(self) -> list[str]:
        return [n for n, s in self.splits.items() if not s.skipped]

    def overlap(self) -> dict[str, dict[str, float | None]]:
        sets = {n: set(self.splits[n].tail_ids) for n in self.built()}
        return overlap_shares({a: {b: len(sets[a] & sets[b]) for b in sets} for a in sets})

    def stats(self) -> dict[str, Any]:
        return vqavs_stats(self.config, self.data_format, len(self.samples), self.without_objects,
                           self.mi_source, self.splits, self.overlap())


def overlap_shares(shared: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, float | None]]:
    """overlap[a][b]: the share of a's OOD samples that are also in b's, from `shared[a][b]`, the
    samples in both (`shared[a][a]`: a's size). The paper's Fig. 5b plots this as the cell (b, a):
    'the proportion of duplicate samples ... in the a set'."""
    return {a: {b: (n / row[a] if row[a] else None) for b, n in row.items()} for a, row in shared.items()}


def vqavs_stats(config: VqaVsConfig, data_format: str, samples: int, without_objects: int, mi_source: str,
                splits: Mapping[str, ShortcutSplit], overlap: Mapping[str, Any]) -> dict[str, Any]:
    """`stats.json`, whether the build held its samples or streamed them."""
    return {
        "benchmark": "vqa-vs",
        "format_version": 1,
        "data_format": data_format,
        "samples": samples,
        "samples_without_object_annotations": without_objects,
        "entropy_threshold": config.entropy_threshold,
        "tail_factor": config.tail_factor,
        "drop_stopwords": config.drop_stopwords,
        "mi_source": mi_source,
        "shortcuts": {n: s.stats() for n, s in splits.items()},
        "overlap": overlap,
    }


def buildable_shortcuts(config: VqaVsConfig, *, with_objects: bool) -> list[str]:
    """The requested shortcuts the data can have; refused when none can."""
    requested = [sc for sc in SHORTCUTS if sc.name in config.shortcuts]
    built = [sc.name for sc in requested if with_objects or not sc.needs_objects]
    if not built:
        raise InputError(f"none of the requested shortcuts ({', '.join(sc.name for sc in requested)}) can be "
                         "built without object annotations: pass --objects, or ask for QT, KW, KWP or QT+KW")
    return built


def requested_splits(config: VqaVsConfig, built: Sequence[str]) -> dict[str, ShortcutSplit]:
    """Every requested shortcut's split, still empty, in the paper's order; those the data cannot
    have (`built` lacks them) marked skipped."""
    splits = {sc.name: ShortcutSplit(sc.name, sc.family) for sc in SHORTCUTS if sc.name in config.shortcuts}
    for name, split in splits.items():
        if name not in built:
            split.skipped = NO_OBJECTS
    return splits


def build_vqavs(samples: Sequence[Sample], config: VqaVsConfig | None = None, *, data_format: str = "vqa",
                objects: Mapping[str, Sequence[str]] | None = None,
                mi_samples: Sequence[Sample] | None = None,
                mi_objects: Mapping[str, Sequence[str]] | None = None, progress: bool = False) -> VqaVsBuild:
    """Label the samples with their concepts and build each requested shortcut's OOD set;
    `progress`: a bar on a terminal, per sample labelled."""
    config = config or VqaVsConfig()
    if not samples:
        raise InputError("no samples to build VQA-VS from")
    built = buildable_shortcuts(config, with_objects=objects is not None)
    with progress_bar("labelling questions", len(samples), enabled=progress) as advance:
        concepts = label_samples(samples, objects=objects, mi_samples=mi_samples, mi_objects=mi_objects,
                                 drop_stopwords=config.drop_stopwords, advance=advance)
    answers = {s.question_id: s.answer for s in samples}
    splits = requested_splits(config, built)
    for name in built:
        split = splits[name]
        keyed = [(c.question_id, c.concepts[name]) for c in concepts]
        split.unlabelled = sum(1 for _, k in keyed if k is None)
        labelled = [(qid, k) for qid, k in keyed if k is not None]
        split.groups = split_groups(answer_histograms((k, answers[qid]) for qid, k in labelled),
                                    entropy_threshold=config.entropy_threshold,
                                    tail_factor=config.tail_factor, strict_tail=True)
        for qid, key in labelled:
            group = split.groups[key]
            if not group.imbalanced:
                continue
            (split.tail_ids if answers[qid] in group.tail else split.head_ids).append(qid)
        split.group_count, split.head, split.tail = len(split.groups), len(split.head_ids), len(split.tail_ids)
    without = sum(1 for s in samples if s.image_id not in objects) if objects is not None else 0
    return VqaVsBuild(config, data_format, list(samples), concepts, splits,
                      "input" if mi_samples is None else "separate", without)


def gqa_questions_object(samples: Sequence[Sample]) -> Iterator[bytes]:
    """{question id: record} as `jsonio.dumps` writes it, from records kept serialised
    (`load_gqa_samples`) or parsed."""
    return keyed_object((s.question_id, s.question_record if isinstance(s.question_record, bytes)
                         else gqa_json(s.question_record)) for s in sorted(samples, key=lambda s: s.question_id))


def vqa_question_files(samples: Sequence[Sample]) -> tuple[list[dict], list[dict]]:
    """VQA v2's two files for a set of samples: the questions and their annotations, in order."""
    return [s.question_record for s in samples], [s.annotation_record or {} for s in samples]


def stats_markdown(stats: Mapping[str, Any]) -> str:
    """The paper's Table 1 for this data, as Markdown."""
    lines = []
    if stats.get("samples_without_object_annotations"):
        lines += [f"{stats['samples_without_object_annotations']} of {stats['samples']} samples have an image "
                  "the object annotations lack: unlabelled for the object-based shortcuts.", ""]
    lines += ["| shortcut | family | groups | imbalanced | head | tail (OOD) | unlabelled |",
              "|---|---|---:|---:|---:|---:|---:|"]
    for name, s in stats["shortcuts"].items():
        if "skipped" in s:
            lines.append(f"| {name} | {s['family']} | {s['skipped']} | | | | |")
        else:
            lines.append(f"| {name} | {s['family']} | {s['groups']} | {s['imbalanced_groups']} | "
                         f"{s['head']} | {s['tail']} | {s['unlabelled']} |")
    return "\n".join(lines) + "\n"


def write_vqavs(build: VqaVsBuild, out_dir: str | os.PathLike[str], *, extra_stats: Mapping[str, Any] | None = None,
                extra_files: Callable[[Path], None] | None = None) -> Path:
    """Write the OOD sets, concept labels, answers for scoring, stats and overlap, atomically;
    `extra_files` writes more into the same directory (the IID sets), `extra_stats` joins stats.json."""
    by_id = {s.question_id: s for s in build.samples}
    stats = {**build.stats(), **(extra_stats or {})}
    with atomic_dir(out_dir) as tmp:
        if extra_files is not None:
            extra_files(tmp)
        for name in build.built():
            chosen = [by_id[q] for q in build.splits[name].tail_ids]
            if build.data_format == "gqa":
                write_chunks(tmp / "ood" / f"{name}.json", gqa_questions_object(chosen))
            else:
                ques, ans = vqa_question_files(chosen)
                write_json(tmp / "ood" / f"{name}-Ques.json", ques)
                write_json(tmp / "ood" / f"{name}-Ans.json", ans)
        write_json(tmp / "splits.json", {
            "iid": [s.question_id for s in build.samples],
            "ood": {n: build.splits[n].tail_ids for n in build.built()},
            "head": {n: build.splits[n].head_ids for n in build.built()},
        })
        write_json(tmp / "answers.json", {s.question_id: {"answer": s.answer, "answers": s.answers,
                                                          "answer_type": s.answer_type}
                                          for s in build.samples})
        split_of = {n: {**dict.fromkeys(build.splits[n].head_ids, "head"),
                        **dict.fromkeys(build.splits[n].tail_ids, "tail")} for n in build.built()}
        write_jsonl(tmp / "concepts.jsonl", (
            {"question_id": c.question_id, "labels": c.labels, "concepts": c.concepts,
             "split": {n: split_of[n].get(c.question_id) for n in build.built()}}
            for c in build.concepts))
        write_summary(tmp, build.splits, stats)
    return Path(out_dir)


def write_summary(tmp: Path, splits: Mapping[str, ShortcutSplit], stats: Mapping[str, Any]) -> None:
    """groups.json, stats.json, stats.md, the manifest and the overlap plot: what both builds write alike."""
    from contrastgen.ood.plots import plot_overlap

    built = [n for n, s in splits.items() if not s.skipped]
    write_json(tmp / "groups.json", {n: {k: g.to_json() for k, g in splits[n].groups.items() if g.imbalanced}
                                     for n in built})
    write_json(tmp / STATS_FILE, stats, indent=True)
    write_text(tmp / "stats.md", stats_markdown(stats))
    write_manifest(tmp, OOD_VQAVS, "contrastgen ood vqavs")
    if len(built) > 1:
        plot_overlap(stats["overlap"], tmp / "overlap.png")
