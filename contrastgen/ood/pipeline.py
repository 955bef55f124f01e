"""From files to an OOD directory in one call: what `contrastgen ood` runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from contrastgen.datasets.formats import OOD_FORMATS, resolve_format
from contrastgen.datasets.samples import Sample, load_gqa_samples, load_vqa
from contrastgen.errors import InputError
from contrastgen.ood.gqa_ood import GqaOodConfig
from contrastgen.ood.gqa_ood_stream import run_gqa_ood_streamed
from contrastgen.ood.objects import load_image_objects
from contrastgen.ood.vqavs import VqaVsConfig, build_vqavs, write_vqavs
from contrastgen.ood.vqavs_iid import IidSplit, iid_stats, split_iid, write_iid_parts
from contrastgen.ood.vqavs_stream import Workers, run_vqavs_gqa_streamed

PathLike = str | os.PathLike[str]


def run_gqa_ood(questions: PathLike, out_dir: PathLike, config: GqaOodConfig | None = None, *,
                progress: bool = False) -> dict[str, Any]:
    """Build GQA-OOD from a GQA question file (or directory of shards); return its stats. Streamed
    (`gqa_ood_stream`): the same files as `write_gqa_ood(build_gqa_ood(...))`, without holding the
    questions."""
    return run_gqa_ood_streamed(questions, out_dir, config, progress=progress)


def load_samples(questions: PathLike, annotations: PathLike | None, data_format: str = "auto") -> tuple[str, list[Sample]]:
    fmt = resolve_format(data_format, questions, OOD_FORMATS)
    if fmt == "vqa":
        if annotations is None:
            raise InputError("VQA questions need --annotations (the ten human answers per question)",
                             path=str(questions))
        return fmt, load_vqa(questions, annotations)
    if fmt == "gqa":
        if annotations is not None:
            raise InputError("these read as GQA questions (an object keyed by question id, or a folder of "
                             f"them), which carry their answers, but --annotations {annotations} was given: "
                             "VQA questions are a list, or {\"questions\": [...]}", path=str(questions))
        return fmt, load_gqa_samples(questions)
    raise InputError(f"unknown data format {data_format!r}; expected auto, vqa or gqa")


def run_vqavs(questions: PathLike, out_dir: PathLike, *, annotations: PathLike | None = None,
              objects: PathLike | None = None, data_format: str = "auto",
              mi_questions: PathLike | None = None, mi_annotations: PathLike | None = None,
              mi_objects: PathLike | None = None, config: VqaVsConfig | None = None,
              workers: Workers | None = None, iid: IidSplit | None = None, progress: bool = False) -> dict[str, Any]:
    """Build VQA-VS from VQA v2 or GQA files; return its stats.

    `mi_questions` (+ `mi_annotations`, `mi_objects`) estimate the MI statistics on another split,
    typically training, as the paper does; by default they come from the input itself. GQA data
    streams, its counting and labelling run on `workers` (the local pool or Ray); VQA v2 is read
    whole, in this process. With `iid`, the input is the pool the paper splits into IID training,
    validation and test sets (`vqavs_iid`): the OOD sets come from the IID test set, and the MI
    statistics from the training set unless `mi_questions` is given; the input is then read whole.
    `progress`: a bar on a terminal, per question labelled.
    """
    fmt = resolve_format(data_format, questions, OOD_FORMATS)
    image_objects = load_image_objects(objects) if objects is not None else None
    # the MI split's own objects; without them, the input's (both builds read None so)
    mi_image_objects = None
    if image_objects is not None and mi_questions is not None and mi_objects is not None:
        mi_image_objects = load_image_objects(mi_objects)
    if fmt == "gqa" and annotations is None and mi_annotations is None and iid is None:
        return run_vqavs_gqa_streamed(questions, out_dir, objects=image_objects, mi_questions=mi_questions,
                                      mi_objects=mi_image_objects, config=config, workers=workers,
                                      progress=progress)
    fmt, samples = load_samples(questions, annotations, fmt)
    mi_samples = load_samples(mi_questions, mi_annotations, fmt)[1] if mi_questions is not None else None
    if iid is None:
        build = build_vqavs(samples, config, data_format=fmt, objects=image_objects,
                            mi_samples=mi_samples, mi_objects=mi_image_objects, progress=progress)
        write_vqavs(build, Path(out_dir))
        return build.stats()
    parts = split_iid(samples, iid)
    if mi_samples is None:
        mi_samples, mi_image_objects = parts["train"], image_objects
    build = build_vqavs(parts["test"], config, data_format=fmt, objects=image_objects,
                        mi_samples=mi_samples, mi_objects=mi_image_objects, progress=progress)
    extra = {"iid_split": iid_stats(iid, parts)}
    write_vqavs(build, Path(out_dir), extra_stats=extra,
                extra_files=lambda tmp: write_iid_parts(tmp, parts, fmt))
    return {**build.stats(), **extra}
