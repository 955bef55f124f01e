"""The image file of each question a harness export writes: looked up in `--images DIR` (the
bytes are embedded), or the file the record names (`generate --images`; referenced by path).

A harness run that meets a missing or unreadable image fails hours into a GPU job, far from the
question that caused it. So every image is found and opened here, at export time, and a missing
one is an error naming the question and the file, before anything is written.
"""

from __future__ import annotations

import functools
import io
import os
from pathlib import Path

from contrastgen.errors import InputError

SUFFIXES = (".jpg", ".jpeg", ".png")
# Images whose bytes are kept while rows stream past: a set's rows share their image, so the
# cache is hit for all but the first row of each image, with memory bounded by this many files.
_CACHED = 64


def _check_readable(data: bytes, *, path: Path) -> None:
    """Refuse bytes that PIL (as both harnesses decode them) cannot open."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            image.verify()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise InputError(f"image file is not a readable image ({exc})", path=str(path)) from None


class ImageSource:
    """Finds and reads each question's image. With `folder`, the file is
    `folder/{image_id}{.jpg|.jpeg|.png}` and is embedded; without, it is the record's
    `image_file`, referenced by its absolute path."""

    def __init__(self, folder: str | os.PathLike[str] | None):
        self.folder = None if folder is None else Path(folder)
        if self.folder is not None and not self.folder.is_dir():
            raise InputError("--images must be a folder of {image_id}.jpg|jpeg|png files",
                             path=str(self.folder))
        self._read = functools.lru_cache(maxsize=_CACHED)(self._read_uncached)
        self._checked: set[Path] = set()

    @property
    def embeds(self) -> bool:
        return self.folder is not None

    def path(self, image_id: str, image_file: str | None, question_id: str) -> Path:
        """The image's file (absolute); an error naming the question when there is none."""
        record = f"question {question_id}"
        if self.folder is None:
            if image_file is None:
                raise InputError(
                    f"image {image_id!r} has no file: give --images DIR to embed the images, or "
                    "run `contrastgen generate` with --images so that each record names its file",
                    record=record)
            path = Path(image_file)
            if not path.is_file():
                raise InputError(f"the record's image file of image {image_id!r} does not exist",
                                 path=str(path), record=record)
            return path.resolve()
        if not image_id or any(sep in image_id for sep in ("/", "\\", "\0")) or image_id in (".", ".."):
            raise InputError(f"image id {image_id!r} cannot name a file", record=record)
        for suffix in SUFFIXES:
            candidate = self.folder / f"{image_id}{suffix}"
            if candidate.is_file():
                return candidate.resolve()
        raise InputError(f"image {image_id!r} has no file ({', '.join(SUFFIXES)}) in this folder",
                         path=str(self.folder), record=record)

    def read(self, path: Path, question_id: str) -> bytes:
        """The file's bytes, checked to be an image PIL opens (read once while cached)."""
        try:
            return self._read(path)
        except InputError as exc:
            raise InputError(exc.reason, path=exc.path, record=f"question {question_id}") from None

    def check(self, path: Path, question_id: str) -> None:
        """Check once per file that a referenced image opens (its bytes are not kept)."""
        if path not in self._checked:
            self.read(path, question_id)
            self._checked.add(path)

    @staticmethod
    def _read_uncached(path: Path) -> bytes:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read the image ({exc.strerror or exc})", path=str(path)) from None
        _check_readable(data, path=path)
        return data
