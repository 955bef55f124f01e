"""The dataset families a run reads, one module each, in one registry (`base.FAMILIES`).

Importing this package registers the built-in ones, GQA first (the family a file that no other
family claims is read as), then CLEVR and Super-CLEVR. A new family is one module that subclasses
`base.Family` and calls `base.register`: README.md, "Add a dataset family", and
docs/extending.md say what it must provide.
"""

from contrastgen.families import gqa  # noqa: I001 (registers first: the default family)
from contrastgen.families import clevr
from contrastgen.families.base import FAMILIES, Family, all_reasons, family_named, family_reading, register

__all__ = ["FAMILIES", "Family", "all_reasons", "clevr", "family_named", "family_reading", "gqa", "register"]
