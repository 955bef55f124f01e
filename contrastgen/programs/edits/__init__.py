"""Perturbing a GQA question by editing one argument of one step of its program.

`ProgramEditor` runs the edits of `EDITS` (each one object behind the `ProgramEdit` protocol:
`applies(step)`, `propose(...)`) over a question's steps; `EditedQuestion` is the question they
are given, holding the image's `ImageTools` (graph, lexicon, executor, proofs). The modules
import one way: `base` and `image` <- `question` <- each kind of edit <- `editor`.
README's "Add a program edit" says how to add one.
"""

from contrastgen.programs.edits.editor import EDITS, ProgramEdit, ProgramEditor
from contrastgen.programs.edits.image import ImageTools
from contrastgen.programs.edits.question import EditedQuestion

__all__ = ["EDITS", "EditedQuestion", "ImageTools", "ProgramEdit", "ProgramEditor"]
