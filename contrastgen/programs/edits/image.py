"""One image as the program edits of its questions work on it (`ImageTools`): its scene index,
the lexicon, one executor for all its runs, and the proofs an executed edit must pass.

Why apart from the editor: an edit reads these through the question it edits
(`EditedQuestion.image`), and the editor, which runs the edits, holds them too; neither needs the
other to reach them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from contrastgen.language.lexicon import Lexicon
from contrastgen.programs.executor import GqaExecutor
from contrastgen.programs.proofs import EditProofs
from contrastgen.scene.index import SceneIndex


def _returning(executor: GqaExecutor) -> Callable[[], GqaExecutor]:
    return lambda: executor


@dataclass
class ImageTools:
    """What every edit of every question of one image reads: the graph's index and the graph,
    the lexicon, `executor()` (the one executor of its runs) and `proofs` (which also note why a
    colour "no" was not claimed, a question's reason when nothing else is found)."""

    scene: SceneIndex
    graph: dict[str, Any]
    lex: Lexicon
    executor: Callable[[], GqaExecutor] = field(init=False, repr=False)
    proofs: EditProofs = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # made from the parts, not a bound method: the proofs holding this object would be a
        # reference cycle, and each question's tools, with its image's whole index, would then
        # stay until the collector found them instead of going when the question is done
        # one executor serves every run of the question: a run starts an `Execution` of its own,
        # and building one per run (with its memo's look-up) cost more than many a run
        self.executor = _returning(GqaExecutor(self.scene, self.lex, self.graph))
        self.proofs = EditProofs(self.scene, self.lex, self.executor)
