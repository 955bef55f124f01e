"""Pointing a run's records at the real image files (`generate --images DIR`).

Why here and not in the readers: the files are a property of a user's disk, not of the dataset,
and a record that names its image file lets every later tool (the viewer, a crowd export, a
script) open the right file without guessing a dataset's `.jpg` or `.png`. A record whose image
is missing is an error before anything is written, naming the image and the folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import orjson

from contrastgen.errors import InputError
from contrastgen.jsonio import dumps

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")


def image_index(folder: str | os.PathLike[str]) -> dict[str, Path]:
    """Image id -> its file in `folder` (`{image_id}.jpg|jpeg|png`, the first suffix found)."""
    path = Path(folder)
    if not path.is_dir():
        raise InputError("--images must be a folder of {image_id}.jpg|png files", path=str(path))
    found: dict[str, Path] = {}
    for f in sorted(path.iterdir()):
        if f.suffix.lower() in IMAGE_SUFFIXES:
            found.setdefault(f.stem, f.resolve())
    return found


class _WithImageFiles:
    """The lines with `image_file` added, made as they are read (a spilled run's lines are not
    all in memory); re-iterable, like the lines it wraps."""

    def __init__(self, lines: Iterable[bytes], files: dict[str, Path], folder: str):
        self._lines, self._files, self._folder = lines, files, folder

    def __iter__(self) -> Iterator[bytes]:
        for line in self._lines:
            record = orjson.loads(line)
            image_id = str(record["image_id"])
            if image_id not in self._files:
                raise InputError(f"image {image_id!r} has no file ({', '.join(IMAGE_SUFFIXES)}) in this folder",
                                 path=self._folder, record=f"question {record['question_id']}")
            record["image_file"] = str(self._files[image_id])
            yield dumps(record)


def with_image_files(lines: Iterable[bytes], folder: str | os.PathLike[str]) -> Iterable[bytes]:
    """contrast_sets.jsonl lines with `image_file`, the absolute path of each record's image. A
    missing image raises while the lines are written, inside the output's temporary folder, so
    nothing is left half-written."""
    return _WithImageFiles(lines, image_index(folder), str(folder))
