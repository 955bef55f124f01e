"""One scene graph, indexed once: objects by name, edges both ways, boxes.

Why an index: every template asks "which objects are called X", "is there an edge X -rel-> Y",
"which side is this box on". Answering those by rescanning the raw graph for each question and
candidate would make a million-question run quadratic in graph size; the index is built once per
image and shared by all of that image's questions.

Why the edges are indexed lazily: building the index is a measurable share of a GQA-scale run
(relations outnumber objects several times over), and the colour, side and "do you see" templates
never look at an edge. The set of edges and the lists by subject and object are built apart: a
program executed on another image (a group's candidate) asks only whether an edge is there, and
the lists would triple what each such scene allocates and what the collector walks.

Why a scene may drop its graph (`build_for_lookup`): a run with groups builds a scene for each of
a hundred thousand candidate images and keeps thousands in a cache. Kept whole, the parsed JSON
(a dict and two lists per object, a dict per relation) is most of what the cache holds, what the
collector walks and what an eviction frees, long after its memory went cold; taken apart at once,
it is freed while still warm and the cache holds only the index. Such a scene reads an edge
from its record only when a program asks one, and then only its subject's relations: most
candidates are turned down before any relation is asked, the rest ask one or two, and their
hundred-odd edges would be made and freed for nothing.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from typing import Any, NamedTuple

import orjson

from contrastgen.language.lexicon import Lexicon

# An object whose box centre lies within this fraction of the width around the middle has no
# clear side: "on which side" is not asked of it, and it is not a distractor for that template.
CENTRE_BAND = 0.10

Edge = tuple[str, str, str]  # (subject id, relation, object id)


def _clean(text: str) -> str:
    """Lower-case and trim; the common already-clean case costs one comparison."""
    low = text.lower()
    return low if low == low.strip() else low.strip()


class _CleanWords(dict[str, str]):
    """`_clean` of each name, attribute and relation as written, remembered: a corpus writes a
    few thousand words millions of times, and a lookup that hits costs no Python call. Emptied
    when full, so a corpus of unique words costs bounded memory."""

    LIMIT = 1 << 16

    def __missing__(self, text: str) -> str:
        if len(self) >= self.LIMIT:
            self.clear()
        clean = self[text] = _clean(text)
        return clean


_CLEAN = _CleanWords()


class SceneObject(NamedTuple):
    """One object of the graph (a named tuple: a GQA-scale run builds millions of them)."""

    id: str
    name: str  # lower-cased, stripped, as in the graph
    canonical: str
    attributes: frozenset[str]
    x: float
    y: float
    w: float
    h: float

    @property
    def centre_x(self) -> float:
        return self.x + self.w / 2.0


class RecordEdges(AbstractSet[Edge]):
    """A lookup scene's edges (`SceneIndex.from_lookup_record`), asked with (subject, relation,
    object) tuples like a set of them, and answered from the subject's line of relations in the
    record, parsed when an edge of that subject is first asked.

    Why not a set: a candidate scene that asks of edges at all asks one or two (1.7 on average,
    133k questions over 15k graphs), and making all its hundred-odd edges cost twice what building
    the scene did (about 100 us against 45 on the 1M benchmark set's graphs), then more objects to
    free when the cache evicts it. Iterating makes them all."""

    __slots__ = ("_of", "_into")

    def __init__(self, relations_of: dict[str, bytes | list[dict[str, Any]]]):
        self._of = relations_of  # subject id -> its relations: the record's line, then parsed
        self._into: dict[str, dict[str, set[str]]] = {}  # relation -> object id -> its subjects

    def _relations(self, subject: str) -> list[dict[str, Any]]:
        found = self._of.get(subject, ())
        if type(found) is bytes:
            found = self._of[subject] = orjson.loads(found)
        return found  # type: ignore[return-value]

    def __contains__(self, edge: object) -> bool:
        if type(edge) is not tuple or len(edge) != 3:
            return False
        subject, relation, obj = edge
        if type(subject) is not str or type(relation) is not str or type(obj) is not str:
            return False
        clean = _CLEAN.__getitem__
        for rel in self._relations(subject):
            if clean(rel["name"]) == relation and str(rel["object"]) == obj:
                return True
        return False

    def objects_of(self, subject: str, relation: str) -> frozenset[str]:
        """The objects o of the edges (subject, relation, o): read from the subject's line alone."""
        clean = _CLEAN.__getitem__
        return frozenset([str(rel["object"]) for rel in self._relations(subject) if clean(rel["name"]) == relation])

    def subjects_of(self, obj: str, relation: str) -> frozenset[str]:
        """The subjects s of the edges (s, relation, obj).

        Why not the adjacency lists: a candidate scene asks this of one or two relations, and
        listing every edge both ways cost more than executing the program. The subjects of one
        relation are listed once, from the lines that can hold it: a line is parsed only where its
        bytes, lower-cased, contain the relation's word (a pure-ASCII line whose name cleans to
        the word has it there; any other line is parsed)."""
        into = self._into.get(relation)
        if into is None:
            into = self._into[relation] = {}
            clean = _CLEAN.__getitem__
            needle = relation.encode() if _written_bare(relation) else None
            for subject, line in self._of.items():
                if type(line) is bytes and needle is not None and line.isascii() and needle not in line.lower():
                    continue
                for rel in self._relations(subject):
                    if clean(rel["name"]) == relation:
                        into.setdefault(str(rel["object"]), set()).add(subject)
        return frozenset(into.get(obj, ()))

    def __iter__(self) -> Iterator[Edge]:
        return iter(dict.fromkeys(self.in_order()))

    def __len__(self) -> int:
        return len(set(self.in_order()))

    def in_order(self) -> Iterator[Edge]:
        """The edges in the graph's order (an edge written twice, twice)."""
        clean = _CLEAN.__getitem__
        for subject in list(self._of):
            for rel in self._relations(subject):
                yield subject, clean(rel["name"]), str(rel["object"])


def _written_bare(word: str) -> bool:
    """Is the word written in JSON as it is (ASCII, nothing escaped)? Then its bytes appear in any
    pure-ASCII line of JSON that holds a string equal to it, lower-cased, stripped."""
    return word.isascii() and word.isprintable() and '"' not in word and "\\" not in word


_NO_ATTRIBUTES: frozenset[str] = frozenset()


class _AttributeSets(dict[tuple[str, ...], frozenset[str]]):
    """One frozenset for each list of attributes a lookup record writes (keyed by its tuple),
    shared by every object and scene that has it: a few thousand lists recur across a corpus, and
    a scene that shares them (and its words, interned) is fewer objects to make now and to free
    when it is evicted. A lookup that hits costs no Python call. Emptied when full, so a corpus
    of unique lists costs bounded memory."""

    LIMIT = 1 << 16

    def __missing__(self, attributes: tuple[str, ...]) -> frozenset[str]:
        if len(self) >= self.LIMIT:
            self.clear()
        found = self[attributes] = frozenset(map(sys.intern, attributes))
        return found


_ATTRIBUTE_SETS = _AttributeSets()


def _by_name_and_kind(objects: dict[str, SceneObject]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The objects' ids by name and by canonical kind, each list in the objects' order."""
    by_name: dict[str, list[str]] = {}
    by_canonical: dict[str, list[str]] = {}
    for oid, name, kind, _attributes, _x, _y, _w, _h in objects.values():
        same = by_name.get(name)
        if same is None:
            by_name[name] = [oid]
        else:
            same.append(oid)
        same = by_canonical.get(kind)
        if same is None:
            by_canonical[kind] = [oid]
        else:
            same.append(oid)
    return by_name, by_canonical


class SceneIndex:
    """Objects by name and canonical kind (eager), relation edges both ways (on first use)."""

    __slots__ = ("image_id", "width", "height", "objects", "by_name", "by_canonical", "_graph",
                 "_edges", "_edge_record", "_out_edges", "_in_edges", "memo")

    def __init__(self, image_id: str, width: float, height: float, objects: dict[str, SceneObject],
                 by_name: dict[str, list[str]], by_canonical: dict[str, list[str]],
                 graph: dict[str, Any]):
        self.image_id = image_id
        self.width = width
        self.height = height
        self.objects = objects
        self.by_name = by_name
        self.by_canonical = by_canonical
        self._graph = graph
        self._edges: AbstractSet[Edge] | None = None
        self._edge_record: bytes | None = None  # a lookup scene's edges, as its record wrote them
        self._out_edges: dict[str, list[tuple[str, str]]] | None = None
        self._in_edges: dict[str, list[tuple[str, str]]] | None = None
        # answers of pure lookups about this scene (the objects a name denotes, the names an object
        # may be renamed to), keyed by what they depend on: a program edit asks them of every
        # candidate, dozens of times per question
        self.memo: dict[tuple[Any, ...], Any] = {}

    @property
    def graph(self) -> dict[str, Any]:
        """The scene graph as given (its scene-level fields: `location`, `weather`)."""
        return self._graph

    @classmethod
    def build(cls, image_id: str, graph: dict[str, Any], lex: Lexicon) -> SceneIndex:
        objects: dict[str, SceneObject] = {}
        canonical, clean, new = lex.canonical, _CLEAN.__getitem__, tuple.__new__
        # the graph's own order (JSON order, hence deterministic); lists are sorted where it matters
        for oid, o in graph["objects"].items():
            name = clean(o["name"])
            attrs = o.get("attributes")
            # the named tuple made without its keyword-taking constructor: every image's objects
            objects[oid] = new(SceneObject, (oid, name, canonical(name),
                                             frozenset(map(clean, attrs)) if attrs else _NO_ATTRIBUTES,
                                             float(o["x"]), float(o["y"]), float(o["w"]), float(o["h"])))
        return cls(image_id, float(graph["width"]), float(graph.get("height") or 0.0), objects,
                   *_by_name_and_kind(objects), graph)

    @classmethod
    def build_for_lookup(cls, image_id: str, graph: dict[str, Any], lex: Lexicon) -> SceneIndex:
        """The same index, which keeps of the graph only its scene-level fields (`location`,
        `weather`) and its relations (read into edges when first asked): for a scene that is kept
        long and asked only what programs ask (its objects, names, edges and fields)."""
        return cls.from_lookup_record(image_id, cls.lookup_record(graph, lex))

    @staticmethod
    def lookup_record(graph: dict[str, Any], lex: Lexicon) -> bytes:
        """What `build_for_lookup` keeps of a graph, as compact JSON: its size and scene-level
        fields, each object's id, cleaned name, kind, attributes and box; then, a line each, each
        object's relations as the graph wrote them (`RecordEdges` answers from them).

        Why a record: a run with groups reads every graph once as it loads and builds a scene
        for a candidate image again and again in its workers; made once, the record spares each
        of those builds the graph's JSON (a dict per object and per relation) and the words'
        cleaning and kinds, and it reads back to the very index the graph gives."""
        clean, canonical, dumps = _CLEAN.__getitem__, lex.canonical, orjson.dumps
        objects: list[tuple[Any, ...]] = []
        lines: list[bytes] = [b""]  # the objects' line first, made once they are all read
        for oid, o in graph["objects"].items():
            name = clean(o["name"])
            attrs = o.get("attributes")
            x, y, w, h = o["x"], o["y"], o["w"], o["h"]
            # a whole coordinate stays an int: read back, a small one is the interpreter's shared
            # int where a float would be one more object to make and free for each of the
            # hundred thousand candidate scenes a group search builds (it compares and computes
            # as the float would); written out, as a run writes a record of every graph it loads
            objects.append((oid, name, canonical(name), list(map(clean, attrs)) if attrs else [],
                            x if type(x) is int else float(x), y if type(y) is int else float(y),
                            w if type(w) is int else float(w), h if type(h) is int else float(h)))
            lines.append(dumps(o.get("relations") or ()))
        fields = {k: v for k, v in graph.items() if k != "objects"}
        # JSON lines (compact JSON escapes any newline in a string): the objects, then one line of
        # relations per object, parsed only when a program asks an edge of that object
        lines[0] = dumps((float(graph["width"]), float(graph.get("height") or 0.0), fields, objects))
        return b"\n".join(lines)

    @classmethod
    def from_lookup_record(cls, image_id: str, record: bytes) -> SceneIndex:
        """The index a `lookup_record` was made for (`build_for_lookup`'s)."""
        cut = record.find(b"\n")
        if cut < 0:  # no objects, no lines of relations
            cut = len(record)
        width, height, fields, rows = orjson.loads(memoryview(record)[:cut])
        objects: dict[str, SceneObject] = {}
        intern, attribute_set, new = sys.intern, _ATTRIBUTE_SETS.__getitem__, tuple.__new__
        for oid, name, kind, attrs, x, y, w, h in rows:
            name, kind = intern(name), intern(kind)
            # the named tuple made without its keyword-taking constructor: a group run makes millions
            objects[oid] = new(SceneObject, (oid, name, kind, attribute_set(tuple(attrs)) if attrs else _NO_ATTRIBUTES,
                                             x, y, w, h))
        scene = cls(image_id, width, height, objects, *_by_name_and_kind(objects), fields)
        scene._edge_record = record[cut + 1:]  # a scene built for lookup has no graph to read them from
        return scene

    # -- edges ----------------------------------------------------------------------------------
    def _index_adjacency(self) -> None:
        if self._graph_edges_given():
            self._index_graph_adjacency()
            return
        edges: set[Edge] = set()
        out_edges: dict[str, list[tuple[str, str]]] = defaultdict(list)
        in_edges: dict[str, list[tuple[str, str]]] = defaultdict(list)
        given = self.edges  # a lookup scene reads its record now
        assert isinstance(given, RecordEdges)
        for edge in given.in_order():
            if edge in edges:
                continue
            edges.add(edge)
            oid = edge[0]
            out_edges[oid].append((edge[1], edge[2]))
            in_edges[edge[2]].append((edge[1], oid))
        self._out_edges, self._in_edges = dict(out_edges), dict(in_edges)

    def _graph_edges_given(self) -> bool:
        """Are the edges read from the graph (not from a lookup record)?"""
        return self._edge_record is None and not isinstance(self._edges, RecordEdges)

    def _index_graph_adjacency(self) -> None:
        """`_index_adjacency` of a scene that has its graph, in one pass over the objects'
        relations: each edge once, at its first place in the graph's order, without a generator
        (an image of GQA's often relates every pair of its objects)."""
        edges: set[Edge] = set()
        out_edges: dict[str, list[tuple[str, str]]] = {}
        in_edges: dict[str, list[tuple[str, str]]] = {}
        clean, add = _CLEAN.__getitem__, edges.add
        for oid, o in self._graph["objects"].items():
            mine: list[tuple[str, str]] = []
            for rel in o.get("relations", ()):
                name, obj = clean(rel["name"]), rel["object"]
                if type(obj) is not str:
                    obj = str(obj)
                edge = (oid, name, obj)
                if edge in edges:
                    continue
                add(edge)
                mine.append((name, obj))
                into = in_edges.get(obj)
                if into is None:
                    in_edges[obj] = [(name, oid)]
                else:
                    into.append((name, oid))
            if mine:
                out_edges[oid] = mine
        self._out_edges, self._in_edges = out_edges, in_edges
        if self._edges is None:
            self._edges = edges

    @property
    def edges(self) -> AbstractSet[Edge]:
        if self._edges is None:
            if self._edge_record is not None:
                lines = self._edge_record.split(b"\n") if self.objects else []
                self._edges = RecordEdges(dict(zip(self.objects, lines, strict=True)))
                self._edge_record = None
                return self._edges
            clean = _CLEAN.__getitem__
            self._edges = {(oid, clean(rel["name"]), str(rel["object"]))
                           for oid, o in self._graph["objects"].items() for rel in o.get("relations", ())}
        return self._edges

    @property
    def out_edges(self) -> dict[str, list[tuple[str, str]]]:
        """id -> [(relation, object id)]"""
        if self._out_edges is None:
            self._index_adjacency()
        return self._out_edges

    @property
    def in_edges(self) -> dict[str, list[tuple[str, str]]]:
        """id -> [(relation, subject id)]"""
        if self._in_edges is None:
            self._index_adjacency()
        return self._in_edges

    def related(self, obj: str, rel: str, role: str) -> frozenset[str]:
        """The other objects standing in `rel` to `obj`: as its subject (role s: s -rel-> obj) or
        as its object (o: obj -rel-> o). A lookup scene whose adjacency lists were never made
        reads them from its record's lines (`RecordEdges`) rather than making them."""
        edges = self._edges if self._edge_record is None else self.edges
        if self._out_edges is None and isinstance(edges, RecordEdges):
            found = edges.subjects_of(obj, rel) if role == "s" else edges.objects_of(obj, rel)
            return found - {obj} if obj in found else found
        adjacent = self.in_edges if role == "s" else self.out_edges
        return frozenset(o for r, o in adjacent.get(obj, ()) if r == rel and o != obj)

    def has_any_name(self, names: frozenset[str]) -> bool:
        """Is any object named one of `names`? (walking the scene's few names: a kind's names, the
        absence test's, run to hundreds)"""
        return not names.isdisjoint(self.by_name)

    def neighbours(self, obj: str, rel: str, *, symmetric: bool) -> set[str]:
        """Objects s with s -rel-> obj (and obj -rel-> s when symmetric)."""
        out = {s for r, s in self.in_edges.get(obj, ()) if r == rel}
        if symmetric:
            out |= {o for r, o in self.out_edges.get(obj, ()) if r == rel}
        out.discard(obj)
        return out

    # -- geometry ------------------------------------------------------------------------------
    def side(self, oid: str) -> str | None:
        """'left' or 'right' from the box centre; None inside the centre band (no clear side)."""
        c = self.objects[oid].centre_x
        half = self.width / 2.0
        if abs(c - half) < CENTRE_BAND * self.width:
            return None
        return "left" if c < half else "right"

    def colors(self, oid: str, lex: Lexicon) -> list[str]:
        return sorted(a for a in self.objects[oid].attributes if lex.is_color(a))
