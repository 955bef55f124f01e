"""The one way to reach the data files that ship with contrastgen.

`rules/` and the bundled sample are installed as the packages `contrastgen.rules` and
`contrastgen.data`, so they are found the same way from a source checkout (editable install) and
from a wheel; nothing here assumes the layout of a checkout or points outside it.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path


def rules_dir() -> Path:
    """The directory of `rules/` (the `contrastgen.rules` package)."""
    return Path(str(files("contrastgen.rules")))


def rules_file(*parts: str) -> Path:
    """A file under `rules/`, e.g. `rules_file("lexicon", "nouns.tsv")`."""
    return rules_dir().joinpath(*parts)


def rules_resource(*parts: str) -> Traversable:
    """A file under `rules/` as a resource: readable even where the package is not a directory."""
    node = files("contrastgen.rules")
    for part in parts:
        node = node.joinpath(part)
    return node


def package_resource(package: str, *parts: str) -> Traversable:
    """A data file of one of contrastgen's packages (`contrastgen.api`, `contrastgen.mturk`)."""
    node = files(package)
    for part in parts:
        node = node.joinpath(part)
    return node


def lexicon_dir() -> Path:
    """`rules/lexicon/`: the committed, WordNet-derived lexicon."""
    return rules_file("lexicon")


def sample_dir() -> Path:
    """The bundled sample (questions, scene graphs) that `contrastgen demo` runs on."""
    return Path(str(files("contrastgen.data"))) / "sample"


def clevr_sample_dir() -> Path:
    """The bundled Super-CLEVR sample (questions/, scenes/, images/) the demo's CLEVR loop runs on."""
    return Path(str(files("contrastgen.data"))) / "sample_clevr"


def api_file(name: str) -> Path:
    """A data file of the HTTP service (its OpenAPI examples)."""
    return Path(str(files("contrastgen.api"))) / name

