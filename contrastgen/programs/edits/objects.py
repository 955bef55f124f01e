"""Edits of an object's name: the object a `select`, `relate`, `verify rel` or `choose rel` refers to.

Why their own module: finding the words that name an object, choosing names that may replace it
(and those that name the same object: the invariances) and the shortcuts that skip sure refusals are
one job, apart from relations and attributes.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

import regex

from contrastgen.datasets.gqa_program import (
    REFERENCE_OPS,
    RELATION_OPS,
    Step,
    reference_name,
    relation_of,
    split_reference,
)
from contrastgen.language.lexicon import Lexicon
from contrastgen.language.nounphrase import phrase_words
from contrastgen.perturb import Proposal, Ranking
from contrastgen.programs.edits.base import (
    determinerless,
    referring_kinds,
    said_as_kind,
)
from contrastgen.programs.edits.question import EditedQuestion
from contrastgen.programs.executor import (
    MIDDLE,
    PRONOUNS,
    SCENE,
    ProgramRefusal,
)
from contrastgen.programs.name_words import SaidName, read_name, said_plural
from contrastgen.programs.proofs import negated
from contrastgen.programs.wording import replace
from contrastgen.scene.ground import denoted_ids, same_kind, squashed

_WORD = regex.compile(r"[\w'-]+")


# a function of the words and the name alone, asked of every reference step of every question:
# kept for the process, as the question texts and names recur over a set
@functools.lru_cache(maxsize=1 << 16)
def _said_after_other(text: str, name: str, lex: Lexicon) -> bool:
    """`NameEdit._said_as_other`."""
    words = [w.lower() for w in _WORD.findall(text)]
    for i, w in enumerate(words[:-1]):
        if w in phrase_words().contrastive:
            for noun in (" ".join(words[i + 1:i + 3]), words[i + 1]):
                if noun == name or (lex.is_known(noun) and lex.canonical(noun) == lex.canonical(name)):
                    return True
    return False


@dataclass
class _Slot:
    """What every candidate name for one step shares, found once per step: the question, the
    step, the words that say its name (`said`, and those words in lower case, split), whether
    the question asks which kind of thing it is, the relation a relation argument keeps, and
    the steps reading a selected object alone (`NameEdit.reader_checks`)."""

    q: EditedQuestion
    index: int
    said: SaidName
    name: str
    asks_kind: bool
    old_words: list[str] = field(init=False)
    relation: str | None = field(init=False)  # "rel,role" of a relation argument; None for a select
    exist_after: bool = field(init=False)
    readers: list[tuple[Step, dict[str, bool] | None]] = field(init=False)

    def __post_init__(self) -> None:
        self.old_words = self.q.text[self.said.span.start:self.said.span.end].lower().split()
        step = self.q.steps[self.index]
        self.relation = None
        if step.operation in RELATION_OPS:
            _, rel, role = relation_of(step)
            self.relation = f"{rel},{role}"
        self.exist_after, self.readers = NameEdit.reader_checks(self.q, self.index)


class NameEdit:
    """Another name for the object a `select`, `relate`, `verify rel` or `choose rel` refers to."""

    name = "object"
    last = False

    def applies(self, step: Step) -> bool:
        return step.operation in REFERENCE_OPS and reference_name(step) not in ("_", "", SCENE)

    def propose(self, q: EditedQuestion, index: int, rng: random.Random, ranking: Ranking) -> Iterator[Proposal]:
        """Another name for the object a step refers to, where the words name it."""
        lex, step = q.image.lex, q.steps[index]
        name = reference_name(step)
        if name in ("_", "", SCENE) or name in PRONOUNS:
            return
        ids = split_reference(step.argument)[1] or ()
        span = q.annotated_span(ids) or q.named_span(name)
        said = span and read_name(q.text, span, name, lex,
                                  {w for value in self._filter_values(q, index) for w in value.split()})
        if not said:
            return  # the words for this object are not the program's name for it
        q.aligned = True
        if self._said_as_other(q, name):
            return  # "the car to the left of the other car": renaming either leaves "other" unanchored
        relations = {relation_of(q.steps[i])[1] for i in q.dependents(index) | {index}
                     if q.steps[i].operation in RELATION_OPS}
        # "What is the man wearing?" asks it of a person, not of a table; "to the left of" of anything
        same_category = any(r and not self._spatial(q, r) for r in relations)
        asks_kind = bool(lex.hyponyms(name)) and lex.is_a(q.gold, name)
        candidates = self._candidates(q, name, rng, same_category=same_category, asks_kind=asks_kind,
                                      plural=said.plural)
        # the names this step is or has been said by, without spaces (the canonical one is never offered)
        spellings = {squashed(name), squashed(lex.canonical(name))}
        slot = _Slot(q, index, said, name, asks_kind)
        for cand, invariance in self._with_invariants(q, name, ids, candidates, plural=said.plural):
            if invariance and (not ranking.wants_invariance or squashed(cand) in spellings):
                continue  # its rank is taken, or it is a name already said, spaced otherwise (that
                # would test the tokenizer, not the reading)
            p = self._try_name(slot, cand, invariance=invariance)
            if p is not None:
                if invariance:
                    spellings.add(squashed(cand))
                yield p

    def _filter_values(self, q: EditedQuestion, index: int) -> list[str]:
        """The values of the filters that narrow step `index`'s objects (a chain of filters)."""
        chain, values = {index}, []
        for j in range(index + 1, len(q.steps)):
            s = q.steps[j]
            if s.head == "filter" and s.dependencies[:1] and s.dependencies[0] in chain:
                chain.add(j)
                value = s.argument.strip().lower()
                if not negated(value):
                    values.append(value)
        return values

    def _said_as_other(self, q: EditedQuestion, name: str) -> bool:
        """Do the words say the name after "other" or "another" ("the cow next to the other cow")?
        Then two references are tied by sharing it, and a new name for one of them is a second
        change, or a question about "the other bench" where no first bench was said."""
        return _said_after_other(q.text, name, q.image.lex)

    def _spatial(self, q: EditedQuestion, rel: str) -> bool:
        return all(r.strip() in q.image.lex.relations for r in rel.split("|"))

    def _candidates(self, q: EditedQuestion, name: str, rng: random.Random, *, same_category: bool,
                    asks_kind: bool, plural: bool) -> Iterator[str]:
        """Names that may replace `name`: the graph's objects' names (only those of its category
        where a non-spatial relation is asked of it; where the words say the name in the plural,
        also the names of objects named in the plural, "flowers"), and where the question asks
        which kind of thing something is ("What vehicle is it?"), the kinds the graph's objects
        are. The executor then refuses a candidate that lacks what the question asks of it."""
        lex = q.image.lex
        category = lex.category(name)
        if same_category and category is None:
            return
        named = [reference_name(s) for s in q.steps if s.operation in REFERENCE_OPS]
        names = self._offered(q, category if same_category else None, plural=plural, asks_kind=asks_kind)
        def new_kind(n: str) -> bool:
            return all(not same_kind(n, m, lex) for m in named if m not in ("_", ""))

        said_kin = frozenset().union(*(self._kin(q, m) for m in named if m not in ("_", "")))
        pool = sorted(names - said_kin)  # new_kind(n), from the memo
        if not pool and same_category and any(lex.category(n) == category and new_kind(n) for n in self._prone_names(q)):
            q.prone_refused = True  # "Who is wearing a shirt?": the other clothing is all unannotated-prone
        rng.shuffle(pool)
        yield from pool

    def _with_invariants(self, q: EditedQuestion, name: str, ids: tuple[str, ...], contrasts: Iterator[str], *,
                         plural: bool) -> Iterator[tuple[str, bool]]:
        """First the names that denote the same one object in other words (a synonym, or a
        general noun for a kind it is, when it is the only one: "the man" -> "the person"), whose
        answer must not change; then the contrast candidates. A plural noun may say the object
        only where the words say it in the plural ("the pants" -> "the trousers")."""
        lex, scene = q.image.lex, q.image.scene
        if len(ids) == 1:
            kinds = {k for k in set(lex.kinds(name)) & referring_kinds()
                     if said_as_kind(name, k, lex) and said_as_kind(scene.objects[ids[0]].name, k, lex)}
            same = (set(lex.synonyms(name)) | kinds) - determinerless()
            for cand in sorted(same - {name, lex.canonical(name)}):
                if (lex.is_known(cand) and (plural or not lex.is_plural(cand)) and not lex.is_unannotated_prone(cand)
                        and not lex.is_uncountable(cand) and denoted_ids(cand, scene, lex) == list(ids)):
                    yield cand, True
        for cand in contrasts:
            yield cand, False

    def _shares_first_word(self, slot: _Slot, cand: str) -> bool:
        """Do the old words and the new name open with the same word ("sign post" / "sign",
        "game controller" / "game")? A reader comparing the questions word by word then sees that
        word kept before the new noun, saying of it what no step of the program checks."""
        old = slot.old_words
        new = cand.lower().split()
        return bool(old) and bool(new) and old[0] == new[0] and old != new

    def _try_name(self, slot: _Slot, cand: str, *, invariance: bool) -> Proposal | None:
        q, index, said, name = slot.q, slot.index, slot.said, slot.name
        lex, scene = q.image.lex, q.image.scene
        if not said.takes(cand, lex):
            return None  # "a board" cannot become "a fog", nor "both cheese and meat" "both cheese and vase"
        if said.possessed and not invariance:
            return None  # "her racket" -> "her kite": nothing shows whose the kite is
        if not invariance and self._shares_first_word(slot, cand):
            return None  # "the sign post" -> "the sign": read word by word, "sign" stays as an adjective
        ids = denoted_ids(cand, scene, lex)
        if len(ids) != 1:
            return None  # "the <cand>" must be one object
        if said.plural and said.definite and not said_plural(scene.objects[ids[0]].name, lex):
            return None  # "the flowers" are one object named so; "the lamps" would be several
        if self._cannot_answer(slot, ids[0]):
            return None
        argument = cand if slot.relation is None else f"{cand},{slot.relation}"
        found = tuple(ids)
        done = q.execute(index, argument,
                         lambda run: (run.answer == q.gold) == invariance and run.refs.get(index) == found)
        if done is None:
            return None
        edited, run, rewritten = done
        answer = run.answer
        if not invariance and self._gives_away(q, answer, cand, slot.asks_kind):
            return None
        facts = [{"fact": "only", "names": q.kind_names(cand), "ids": [ids[0]]}]
        words = replace(q.text, said.span, said.as_said(cand, lex), noun=True)
        if not q.reads_well(words):
            return None
        # what the filters narrowing it hold of the new object ("the happy woman", "a woman that
        # is happy"): the words say it, so the evidence does
        held = sorted(v for v in self._filter_values(q, index) if v in scene.objects[ids[0]].attributes)
        return q.perturbation(edited, run, index, rewritten, words,
                                 {"kind": "object", "slot": f"step{index}", "from": name, "to": cand},
                                 facts, "invariance" if invariance else "contrast",
                                 {ids[0]: held} if held else None)

    def _renamable(self, q: EditedQuestion) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        """The names a reference may take in this scene, whatever the question: its objects'
        names, and the general kinds they are, that the lexicon knows as singular nouns said
        with an article and rarely left unannotated; and apart, its objects' names that are
        plural ("jeans", "flowers": one object, a garment or a group), which only words in the
        plural may take (kept per scene: every question asks)."""
        lex, scene = q.image.lex, q.image.scene
        key = ("renamable", lex)
        found = scene.memo.get(key)
        if found is None:
            def usable(names: set[str]) -> frozenset[str]:
                return frozenset(n for n in names if lex.is_known(n) and not lex.is_unannotated_prone(n)
                                 and n not in determinerless())
            own = {o.name for o in scene.objects.values()}
            kinds = {k for o in scene.objects.values() for k in (*lex.kinds(o.name), lex.category(o.name))
                     if k in referring_kinds() and said_as_kind(o.name, k, lex)}
            singular = {n for n in own if not lex.is_plural(n)}
            found = scene.memo[key] = (usable(singular), usable({k for k in kinds if not lex.is_plural(k)}),
                                       usable({n for n in own if said_plural(n, lex)}))
        return found

    def _offered(self, q: EditedQuestion, category: str | None, *, plural: bool, asks_kind: bool) -> frozenset[str]:
        """The scene's names (`_renamable`) a reference may take, before those of a kind the
        program says are set aside: of `category` only, where one is given; the plural names too
        where the words say it in the plural; the general kinds too where the question asks which
        kind of thing it is. Kept per scene: the same few keys recur over its questions."""
        lex, scene = q.image.lex, q.image.scene
        key = ("offered", lex, category, plural, asks_kind)
        found = scene.memo.get(key)
        if found is None:
            own, kinds, groups = self._renamable(q)
            names = {n for n in (own | groups if plural else own) if category is None or lex.category(n) == category}
            if asks_kind:
                names.update(kinds)
            found = scene.memo[key] = frozenset(names)
        return found

    def _kin(self, q: EditedQuestion, said: str) -> frozenset[str]:
        """The names a reference may take in this scene (`_renamable`) that are of the same kind
        as `said` or a kind of it or it of them (`same_kind`): kept per scene, as the program
        names of its questions recur."""
        lex, scene = q.image.lex, q.image.scene
        key = ("kin", said, lex)
        found = scene.memo.get(key)
        if found is None:
            own, kinds, groups = self._renamable(q)
            found = scene.memo[key] = frozenset(n for n in own | kinds | groups if same_kind(n, said, lex))
        return found

    def _prone_names(self, q: EditedQuestion) -> frozenset[str]:
        """The scene's names of kinds annotators leave out, which no reference may take."""
        lex, scene = q.image.lex, q.image.scene
        key = ("prone names", lex)
        found = scene.memo.get(key)
        if found is None:
            found = scene.memo[key] = frozenset(o.name for o in scene.objects.values()
                                                if lex.is_known(o.name) and lex.is_unannotated_prone(o.name))
        return found

    def _cannot_answer(self, slot: _Slot, oid: str) -> bool:
        """A shortcut, never a decision: True only where executing the edit would surely be
        refused, because the step reading the new object asks what it lacks (its one colour, an
        edge of the relation) and nothing downstream could turn the empty result into an answer."""
        q, step = slot.q, slot.q.steps[slot.index]
        if step.operation == "choose rel":  # the new object against the one it is asked of
            sources = q.original.values[step.dependencies[0]] if step.dependencies else ()
            _, rels, role = relation_of(step)
            return not isinstance(sources, str) and not any(
                self._linked(q, oid, rel, x, role) for rel in rels.split("|") for x in sources)
        for s, lacks in slot.readers:
            if lacks is None:  # a typed filter or verify: asked each time, for what its proof notes
                if self._no_unshown(q, s, oid):
                    return True
                continue
            found = lacks.get(oid)
            if found is None:
                found = lacks[oid] = self._reader_refuses(q, s, oid, slot.exist_after)
            if found:
                return True
        return False

    @staticmethod
    def reader_checks(q: EditedQuestion, index: int) -> tuple[bool, list[tuple[Step, dict[str, bool] | None]]]:
        """Whether an `exist` is downstream of the `select` at `index`, and each step that reads it
        alone with its image-wide memo of `_reader_refuses` by object (None for a typed filter or
        verify, whose proof notes a reason on the question's proofs, so asked each time). Does
        a reader surely refuse an object? That depends only on the image, so every candidate of
        every question of the image shares the answer."""
        if q.steps[index].head != "select":
            return False, []
        exist_after, readers = q.readers(index)
        memo, lex = q.image.scene.memo, q.image.lex
        checks: list[tuple[Step, dict[str, bool] | None]] = []
        for s in readers:
            if s.head in ("filter", "verify") and s.kind not in ("", "rel", "name", "hposition", "vposition"):
                checks.append((s, None))
                continue
            key = ("reader lacks", lex, s.operation, s.argument, exist_after)
            lacks = memo.get(key)
            if lacks is None:
                lacks = memo[key] = {}
            checks.append((s, lacks))
        return exist_after, checks

    def _reader_refuses(self, q: EditedQuestion, s: Step, oid: str, exist_after: bool) -> bool:
        """Does step `s`, which reads the selected object `oid` alone and is no typed filter or
        verify, surely refuse it?"""
        if s.head == "query" and s.argument not in ("name", ""):
            values = q.image.executor().values_of(oid, s.argument)
            return len(values) != 1 or values == {MIDDLE}
        if s.operation == "relate":
            return self._unrelated(q, s, oid, exist_after)
        if s.operation == "verify rel":
            return self._relation_undecided(q, s, oid)
        if s.operation == "choose rel":  # its own object (by GQA's ids) against the new one
            named = split_reference(s.argument)[1] or ()
            _, rels, role = relation_of(s)
            return not any(self._linked(q, n, rel, oid, role) for rel in rels.split("|") for n in named)
        if s.head == "choose" and s.kind not in ("", "rel", "name"):
            values = q.image.executor().values_of(oid, s.kind)
            return not any(o.strip().lower() in values for o in s.argument.split("|"))
        return False

    def _unrelated(self, q: EditedQuestion, s: Step, oid: str, exist_after: bool) -> bool:
        """A `relate` from the new object where it has no edge of the relation, and no answer
        could rest on finding nothing so related (no `exist` after, or a name whose absence the
        graph cannot show)."""
        name, rel, role = relation_of(s)
        edges = q.image.scene.in_edges if role == "s" else q.image.scene.out_edges
        return not any(r == rel for r, _ in edges.get(oid, ())) and (
            not exist_after or (name not in ("_", "") and not q.image.proofs.absence_shown(name)))

    def _relation_undecided(self, q: EditedQuestion, s: Step, oid: str) -> bool:
        """A `verify rel` between the new object and an object its name does not single out, or
        one the graph says neither holds nor fails to."""
        name, rel, role = relation_of(s)
        named = denoted_ids(name, q.image.scene, q.image.lex)
        if len(named) != 1:
            return True
        subject, obj = (named[0], oid) if role == "s" else (oid, named[0])
        return q.image.proofs.relation_decided(subject, rel, obj) is None

    def _no_unshown(self, q: EditedQuestion, s: Step, oid: str) -> bool:
        """A `filter` or `verify` of an attribute the new object lacks where the graph does not
        show it lacks it: its "no" could not be shown."""
        value = s.argument.strip().lower()
        if negated(value):
            return False
        try:  # as the executor reads the step: a filter any attribute, a verify its type
            held = q.image.executor().has(oid, "attribute" if s.head == "filter" else s.kind, value)
        except ProgramRefusal:
            return True
        return not held and not q.image.proofs.excluded(oid, s.kind, value)

    def _linked(self, q: EditedQuestion, named: str, rel: str, source: str, role: str) -> bool:
        """Is there the edge a relation argument asks: `named` its subject (s) or object (o)?"""
        edge = (named, rel.strip(), source) if role == "s" else (source, rel.strip(), named)
        return edge in q.image.scene.edges

    def _gives_away(self, q: EditedQuestion, answer: str, cand: str, asks_kind: bool) -> bool:
        """"What kind of clock is it? clock": the new words say the answer. Where the question
        asks which kind of a thing it is, the answer is a kind of the new word by design."""
        lex = q.image.lex
        if answer in {f.lower() for f in lex.forms(cand)} or lex.canonical(answer) == lex.canonical(cand):
            return True
        return not asks_kind and lex.is_a(answer, cand)
