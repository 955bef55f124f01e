"""What the program path remembers beyond one question must decide as asking again does: the
reading of a name's words (kept per process, `name_words._read_name`) and an image's values of an
attribute type (kept in the image's memo, `ImageMemo.type_values`). Each is held to a run that
never remembers: the same records and the same reasons a question ends unperturbed."""

from __future__ import annotations

import pytest
import synth

from contrastgen.engine import Engine
from contrastgen.programs import executor, name_words
from contrastgen.run.generate import generate


@pytest.fixture(scope="module")
def engine():
    return Engine.load()


@pytest.fixture(scope="module")
def dataset():
    return synth.make_dataset(150, 2000, seed=11)


def _reasons(gen) -> dict[str, int]:
    return dict(gen.stats["templates"]["program"].get("reasons", {}))


class _Forgetting(dict):
    """A memo that keeps nothing: every image's values of a type are found again each time."""

    def __setitem__(self, key, value):
        pass

    def get(self, key, default=None):
        return default


def test_a_names_reading_kept_for_the_process_decides_as_reading_it_again(engine, dataset, monkeypatch):
    questions, graphs = dataset
    name_words._read_name.cache_clear()
    remembered = generate(questions, graphs, engine=engine, workers=1, mode="programs")
    info = name_words._read_name.cache_info()
    assert info.hits > 0, "no reading was asked twice: the test shows nothing"

    monkeypatch.setattr(name_words, "_read_name", name_words._read_name.__wrapped__)
    fresh = generate(questions, graphs, engine=engine, workers=1, mode="programs")
    assert remembered.records == fresh.records
    assert _reasons(remembered) == _reasons(fresh)


def test_a_reading_is_immutable_so_a_remembered_one_cannot_be_changed_by_its_caller():
    import dataclasses

    assert dataclasses.fields(name_words.SaidName)
    assert name_words.SaidName.__dataclass_params__.frozen


class _Counting(dict):
    """A memo that counts the answers it gives from what it kept."""

    hits = 0

    def get(self, key, default=None):
        found = super().get(key, default)
        if found is not default:
            _Counting.hits += 1
        return found


def test_an_images_values_of_a_type_kept_in_its_memo_decide_as_finding_them_again(engine, dataset, monkeypatch):
    questions, graphs = dataset
    real_init = executor.ImageMemo.__init__

    def counting(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        self.type_values = _Counting()

    monkeypatch.setattr(_Counting, "hits", 0)
    monkeypatch.setattr(executor.ImageMemo, "__init__", counting)
    remembered = generate(questions, graphs, engine=engine, workers=1, mode="programs")
    assert _Counting.hits > 0, "no image's memo answered a second asking: the test shows nothing"

    def forgetting(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        self.type_values = _Forgetting()

    monkeypatch.setattr(executor.ImageMemo, "__init__", forgetting)
    fresh = generate(questions, graphs, engine=engine, workers=1, mode="programs")
    assert remembered.records == fresh.records
    assert _reasons(remembered) == _reasons(fresh)


def test_a_remembered_reading_is_keyed_by_every_input_it_reads():
    """The same words, span and name read differently under other filters or another lexicon's
    forms: the remembered reading must not answer for them."""
    from contrastgen.language.lexicon import Lexicon
    from contrastgen.programs.wording import said_once

    lex = Lexicon.load()
    text = "Is the red car parked?"
    span = said_once(text, "red car")
    assert name_words.read_name(text, span, "car", lex, {"red"}) is not None
    assert name_words.read_name(text, span, "car", lex, set()) is None  # "red" said, no step says it
    assert name_words.read_name(text, span, "car", lex, {"red"}) is not None
    other = said_once("Is the red bus parked?", "red bus")
    assert name_words.read_name("Is the red bus parked?", other, "car", lex, {"red"}) is None
