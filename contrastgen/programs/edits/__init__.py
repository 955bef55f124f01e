"""Perturbing a GQA question by editing one argument of one step of its program.

`ProgramEditor` runs the edits of `EDITS` (each one object behind the `ProgramEdit` protocol:
`applies(step)`, `propose(...)`) over a question's steps; `EditedQuestion` is what they share.
README's "Add a program edit" says how to add one.
"""

from contrastgen.programs.edits.base import ProgramEdit
from contrastgen.programs.edits.editor import EDITS, ProgramEditor
from contrastgen.programs.edits.question import EditedQuestion

__all__ = ["EDITS", "EditedQuestion", "ProgramEdit", "ProgramEditor"]
