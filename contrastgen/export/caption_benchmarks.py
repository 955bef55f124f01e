"""Caption sets as the compositionality benchmarks' own files, for their loaders as they stand.

SugarCrepe (read by LAION's CLIP_benchmark, `sugar_crepe/<kind>`, and by SugarCrepe's
`main_eval.py`): one JSON object per kind, `{"0": {"filename", "caption", "negative_caption"},
...}`, the seven files always all there (main_eval.py loads every one), images under `val2017/`.

ARO (its `VG_Relation` and `VG_Attribution` dataset classes): `visual_genome_relation.json` and
`visual_genome_attribution.json`, each a list of records with `image_path` (under `images/`), the
box the image is cropped to (`bbox_x`, `bbox_y`, `bbox_w`, `bbox_h`, whole pixels inside the
image), `true_caption`, `false_caption`, and `relation_name` or `attributes` (the two the
caption says, in its order). Each record also carries our `image_id`, `caption_id` and
`negative_id`, which the loaders do not read, so that scores can be joined back.

ARO's own scoring (`VG_Attribution.evaluate_scores`) reports accuracy per attribute pair (the
record's two `attributes`, in order) and skips every pair with fewer than 25 records, so a small
export gets no ARO attribute result at all; the export counts what ARO will report and says so
(`aro_attribute_note`). `VG_Relation.evaluate_scores` reports every relation.

With `--images DIR`, each image is looked up there (an image missing is an error naming its
caption) and the images folder the loader wants (`val2017/`, `images/`) is a link to DIR, so the
export is a dataset root as it stands. Without, file names are `<image_id>.jpg` and the user puts
the images in that folder.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from contrastgen.export.images import ImageSource
from contrastgen.files.atomic import atomic_dir
from contrastgen.records import read_caption_records
from contrastgen.terminal.progress import Advance, counted, noop

SUGARCREPE_KINDS = ("add_att", "add_obj", "replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj")
SUGARCREPE_IMAGES = "val2017"
ARO_FILES = {"aro_relation": "visual_genome_relation.json", "aro_attribute": "visual_genome_attribution.json"}
ARO_IMAGES = "images"
# The fewest records an attribute pair needs for ARO's VG_Attribution.evaluate_scores to report it
# (mertyg/vision-language-models-are-bows, dataset_zoo/aro_datasets.py: `if attr_mask.sum() < 25:
# continue`).
ARO_MIN_PAIR = 25


@dataclass(frozen=True)
class CaptionExport:
    out: Path
    files: tuple[str, ...]
    pairs: int
    notes: tuple[str, ...] = ()  # what the user should know about how the benchmark will read it


class ImageNames:
    """The file name of each caption's image inside the images folder the export links to."""

    def __init__(self, folder: str | os.PathLike[str] | None):
        self.source = ImageSource(folder) if folder is not None else None
        self._names: dict[str, str] = {}

    def name(self, image_id: str, caption_id: str) -> str:
        if self.source is None:
            return f"{image_id}.jpg"
        found = self._names.get(image_id)
        if found is None:
            path = self.source.path(image_id, None, caption_id)
            found = self._names[image_id] = path.name
        return found

    def path(self, image_id: str, caption_id: str) -> str:
        """The image's absolute path (a training file opens it as given), or `<image_id>.jpg`."""
        if self.source is None:
            return f"{image_id}.jpg"
        return str(self.source.path(image_id, None, caption_id))

    def link(self, into: Path, name: str) -> None:
        """`into/name` as a link to the images folder (nothing without one)."""
        if self.source is not None and self.source.folder is not None:
            os.symlink(self.source.folder.resolve(), into / name, target_is_directory=True)


def pairs(records: Iterable[Mapping[str, Any]], kinds: Iterable[str] | None = None
          ) -> Iterator[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """(caption record, negative) in file order, of the kinds asked for (all without)."""
    wanted = None if kinds is None else set(kinds)
    for record in records:
        for negative in record["negatives"]:
            if wanted is None or negative["kind"] in wanted:
                yield record, negative


def _dump(data: Any) -> bytes:
    # 4-space indent as SugarCrepe's own files; orjson indents by 2 only, so the standard library
    # writes these (they are small: one pair per kind and image)
    import json

    return (json.dumps(data, indent=4, ensure_ascii=False) + "\n").encode("utf-8")


def export_sugarcrepe(source: str | os.PathLike[str], out: str | os.PathLike[str], *,
                      images: str | os.PathLike[str] | None = None, advance: Advance = noop) -> CaptionExport:
    """SugarCrepe's seven files (`advance(1)` per caption record read)."""
    names = ImageNames(images)
    by_kind: dict[str, dict[str, dict[str, str]]] = {k: {} for k in SUGARCREPE_KINDS}
    for record, negative in pairs(counted(read_caption_records(source), advance), SUGARCREPE_KINDS):
        entries = by_kind[negative["kind"]]
        entries[str(len(entries))] = {"filename": names.name(record["image_id"], record["id"]),
                                      "caption": record["caption"], "negative_caption": negative["caption"]}
    with atomic_dir(out) as tmp:
        for kind, entries in by_kind.items():
            (tmp / f"{kind}.json").write_bytes(_dump(entries))
        names.link(tmp, SUGARCREPE_IMAGES)
        files = tuple(f"{k}.json" for k in SUGARCREPE_KINDS)
    return CaptionExport(Path(out), files, sum(len(e) for e in by_kind.values()))


def aro_record(record: Mapping[str, Any], negative: Mapping[str, Any], image_path: str) -> dict[str, Any]:
    x, y, w, h = record["region"]
    out: dict[str, Any] = {"image_path": image_path, "bbox_x": x, "bbox_y": y, "bbox_w": w, "bbox_h": h,
                           "true_caption": record["caption"], "false_caption": negative["caption"],
                           "image_id": record["image_id"], "caption_id": record["id"], "negative_id": negative["id"]}
    reading = record["evidence"]["reading"]
    if negative["kind"] == "aro_relation":
        out["relation_name"] = reading["relation"]
    else:
        out["attributes"] = [p["attribute"] for p in reading["phrases"]]
    return out


def aro_attribute_note(records: Iterable[Mapping[str, Any]]) -> str:
    """What ARO's VG_Attribution.evaluate_scores will report of these attribution records: the
    attribute pairs (keyed `first_second`, as it keys them) with at least ARO_MIN_PAIR records."""
    per_pair = Counter(f"{r['attributes'][0]}_{r['attributes'][1]}" for r in records)
    total = sum(per_pair.values())
    reported = {pair: n for pair, n in per_pair.items() if n >= ARO_MIN_PAIR}
    largest = max(per_pair.values(), default=0)
    head = (f"ARO's VG_Attribution.evaluate_scores reports only attribute pairs with at least "
            f"{ARO_MIN_PAIR} records: ")
    if not reported:
        return (head + f"none of the {len(per_pair):,} pairs here has that many (the largest has {largest:,}), "
                f"so ARO gives this export no attribution result; `contrastgen evaluate --captions` scores "
                f"all {total:,} records")
    kept = sum(reported.values())
    return (head + f"{len(reported):,} of the {len(per_pair):,} pairs here ({kept:,} of {total:,} records); "
            f"the other {total - kept:,} records count in `contrastgen evaluate --captions` only")


def export_aro(source: str | os.PathLike[str], out: str | os.PathLike[str], *,
               images: str | os.PathLike[str] | None = None, advance: Advance = noop) -> CaptionExport:
    """ARO's two Visual Genome files (`advance(1)` per caption record read)."""
    names = ImageNames(images)
    by_kind: dict[str, list[dict[str, Any]]] = {k: [] for k in ARO_FILES}
    for record, negative in pairs(counted(read_caption_records(source), advance), ARO_FILES):
        by_kind[negative["kind"]].append(aro_record(record, negative, names.name(record["image_id"], record["id"])))
    with atomic_dir(out) as tmp:
        for kind, file in ARO_FILES.items():
            (tmp / file).write_bytes(orjson.dumps(by_kind[kind], option=orjson.OPT_INDENT_2))
        names.link(tmp, ARO_IMAGES)
    return CaptionExport(Path(out), tuple(ARO_FILES.values()), sum(len(v) for v in by_kind.values()),
                         notes=(aro_attribute_note(by_kind["aro_attribute"]),))
