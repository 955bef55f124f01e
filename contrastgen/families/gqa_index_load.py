"""The group index and lookup records made while a run loads, shared between the two loading
processes.

Why: a run from files reads the questions in a second process while this one reads the graphs,
and with groups this one also makes each graph's index keys and lookup record
(`groups.index.IndexBuilder`). The two reads take about the same time, so the index work made the
graphs' side the longer by all of it, while the questions' process sat idle once its file was
read (the 1M benchmark set: about 6 of 17 seconds of loading). Here the graphs read while the
questions' process is busy are indexed here as they are parsed; once it is free, the rest are
handed to it in batches, each as soon as the spill has written it, and it parses them again from
the spill's file (cheaper than what it takes off this side). Its keys and records join this
side's at the end, so the index and every record are those one process would have made.
"""

from __future__ import annotations

from multiprocessing.pool import AsyncResult
from pathlib import Path

from contrastgen.datasets.question_spill import GraphSlice, read_graph_slices
from contrastgen.groups.index import IndexBuilder, RecordFile, RecordsMade
from contrastgen.language.lexicon import Lexicon
from contrastgen.parallel.tasks import Helper

HANDOFF_IMAGES = 1024  # graphs per batch handed over (the spill writes them out at each batch's end)
_HELPER_RECORDS = "lookup-helper.bin"


class HelperIndex:
    """The loading helper's state (`parallel.tasks.helper`): the lexicon it inherited when it
    forked, and its own builder across one run's batches, made by the first."""

    def __init__(self, lex: Lexicon):
        self.lex = lex
        self.builder: tuple[Path, IndexBuilder] | None = None


def index_batch(state: HelperIndex, folder: Path, image_ids: list[str], slices: list[GraphSlice]) -> RecordsMade:
    """In the helper: the keys and lookup records of some graphs of the spill, read back from its
    file; the records appended to the helper's own file in `folder`."""
    if state.builder is None or state.builder[0] != folder:
        state.builder = (folder, IndexBuilder(state.lex, RecordFile(folder / _HELPER_RECORDS)))
    builder = state.builder[1]
    for image_id, graph in zip(image_ids, read_graph_slices(folder / "graphs.bin", slices), strict=True):
        builder.add(image_id, graph)
    return builder.take_made()


class SharedIndexing:
    """The spill's callback (`each`) and batch hook for a run loading in two processes: graphs are
    indexed here until `questions` is done, then handed to the helper."""

    def __init__(self, builder: IndexBuilder, helper: Helper, questions: AsyncResult, folder: Path):
        self.builder, self.helper, self.questions, self.folder = builder, helper, questions, folder
        self._handing = False
        self._handed: list[str] = []  # graphs of the current batch left to the helper
        self._results: list[AsyncResult] = []

    def each(self, image_id: str, graph: dict) -> None:
        if not self._handing and not self.questions.ready():
            self.builder.add(image_id, graph)
            return
        self._handing = True
        self._handed.append(image_id)

    def batch_written(self, slices: list[GraphSlice]) -> None:
        """A batch of the spill is on disk: hand over its graphs this side skipped (the last ones
        of the batch: once handing starts, every graph is handed)."""
        if self._handed:
            self._results.append(self.helper.submit(
                index_batch, self.folder, self._handed, slices[len(slices) - len(self._handed):]))
            self._handed = []

    def join(self) -> None:
        """Wait for the helper's batches and add what they made to this side's builder."""
        assert not self._handed, "a handed graph's batch was never written"
        for result in self._results:
            self.builder.absorb(result.get(), self.folder / _HELPER_RECORDS)
