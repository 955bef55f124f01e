"""The direct way to `POST /v1/perturb` (`api/direct.py`) answers exactly as FastAPI's route does,
and the small-body reading (`parsing._proven_small`) accepts only what the byte scan accepts.

In process, through starlette's TestClient (which runs the lifespan): the same app twice, with and
without the direct layer, must give the same status, headers and bytes for every request.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import orjson
import pytest
from contrastgen.api import parsing, routes_v1
from contrastgen.api.access_log import AccessLogMiddleware
from contrastgen.api.app import asgi_app, create_app
from contrastgen.api.direct import DirectPerturb, content_length
from contrastgen.api.guards import RequestGuards
from contrastgen.api.settings import Limits, Settings
from contrastgen.api.state import EngineState, load_state
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_harness import examples, posted_in_process
from starlette.testclient import TestClient

TOKEN = "direct-test-token"
HEADERS = {"Content-Type": "application/json", "X-Request-ID": "same-id"}


@pytest.fixture(scope="module")
def state() -> EngineState:
    return load_state(Settings())


def _settings(**kw: Any) -> Settings:
    limits = Limits(max_objects_per_graph=40, max_question_chars=200)
    return dataclasses.replace(Settings(limits=limits), **kw)


def _through_fastapi(settings: Settings, state: EngineState):
    """The app as served before the direct layer: every request goes through FastAPI."""
    return AccessLogMiddleware(RequestGuards(create_app(settings, state=state), settings))


def _request() -> dict:
    return copy.deepcopy(examples()["PerturbRequest"]["perturbed"]["value"])


def _bodies() -> list[bytes]:
    ok = _request()
    many = _request()
    many["scene_graph"]["objects"].update(
        {f"extra{i}": {"name": "pebble", "x": 1, "y": 1, "w": 1, "h": 1} for i in range(41)})
    missing = _request()
    first = next(iter(missing["scene_graph"]["objects"].values()))
    first["relations"] = [{"name": "near", "object": "nowhere"}]
    raw = orjson.dumps(ok)
    first_id = next(iter(ok["scene_graph"]["objects"]))
    graph_at = raw.index(b'"objects":{') + len(b'"objects":{')
    return [
        raw,
        orjson.dumps({**ok, "question": "Why is the sky blue?"}),  # no template: 200 with a reason
        orjson.dumps({**ok, "question": "What: a colon in a string?"}),  # read the exact way
        orjson.dumps({**ok, "max_k": "3"}),  # strict: a string is no number
        orjson.dumps({**ok, "templates": ["no_such_template"]}),
        orjson.dumps({**ok, "question": "is the cat " * 30}),  # over the question cap: 413
        orjson.dumps(many),  # over the object cap: 413
        orjson.dumps(missing),  # a relation to a missing object: 422
        raw[:graph_at] + orjson.dumps(first_id) + b':{"name":"x","x":0,"y":0,"w":1,"h":1},' + raw[graph_at:],  # an id twice
        raw.replace(b'"question":', b'"question":"dup","question":', 1),  # a field given twice
        b'{"question": "a", "scene_graph": {"x": ' + b"[" * 70 + b"]" * 70 + b"}}",  # past the depth limit
        b'{"question": "a", "scene_graph": ' + b"[" * 2000 + b"]" * 2000 + b"}",  # past orjson's own
        b'{"question": "a",}',  # no JSON
        b"   ",
        b"[1, 2]",
    ]


@pytest.mark.parametrize("token", [None, TOKEN])
def test_the_direct_way_answers_as_fastapi_does(state, token):
    settings = _settings(token=token)
    bodies = _bodies()
    headers = {**HEADERS, **({"Authorization": f"Bearer {token}"} if token else {})}
    direct = posted_in_process(asgi_app(settings, state=state), bodies, headers)
    assert direct == posted_in_process(_through_fastapi(settings, state), bodies, headers)
    statuses = [status for status, _, _ in direct]
    assert statuses[:3] == [200, 200, 200] and {413, 422} <= set(statuses)
    assert orjson.loads(direct[0][2])["perturbations"]
    if token:
        for wrong in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic abc"}):
            refused = posted_in_process(asgi_app(settings, state=state), bodies[:1], {**HEADERS, **wrong})
            assert refused == posted_in_process(_through_fastapi(settings, state), bodies[:1], {**HEADERS, **wrong})
            assert refused[0][0] == 401


def test_a_saturated_pool_is_refused_the_same_way(state):
    settings = _settings()
    answers = []
    for app in (asgi_app(settings, state=state), _through_fastapi(settings, state)):
        with TestClient(app, base_url="http://127.0.0.1") as client:
            fastapi_app = app.app.app.app if isinstance(app.app.app, DirectPerturb) else app.app.app
            fastapi_app.state.pool.pending = fastapi_app.state.pool.max_pending
            r = client.post("/v1/perturb", content=_bodies()[0], headers=HEADERS)
            answers.append((r.status_code, r.headers.multi_items(), r.content))
    assert answers[0] == answers[1] and answers[0][0] == 503


def test_the_direct_way_takes_only_plain_posts_within_the_limit(state):
    app = create_app(_settings(), state=state)
    direct = DirectPerturb(app, _settings())

    def scope(method: str = "POST", path: str = "/v1/perturb", length: bytes | None = b"10", **kw) -> dict:
        headers = [(b"content-type", b"application/json")]
        if length is not None:
            headers.append((b"content-length", length))
        return {"type": "http", "method": method, "path": path, "root_path": "", "headers": headers, **kw}

    assert direct._taken(scope())
    assert not direct._taken(scope(length=None))  # chunked: FastAPI's body limit counts it
    assert not direct._taken(scope(length=str(16 << 20 | 1).encode()))  # FastAPI's 413
    assert not direct._taken(scope(length=b"+10"))
    assert not direct._taken(scope(method="GET"))
    assert not direct._taken(scope(path="/v1/perturb/batch"))
    assert not direct._taken(scope(path="/v1/perturb/"))
    assert content_length(scope(length=b"12")) == 12
    with_cors = _settings(cors_origins=("https://lab.example",))
    assert not DirectPerturb(create_app(with_cors, state=state), with_cors)._taken(scope())


def test_a_body_over_the_limit_is_fastapis_413(state):
    settings = dataclasses.replace(_settings(), limits=Limits(max_body_bytes=1000))
    body = orjson.dumps({**_request(), "question": "x" * 2000})
    direct = posted_in_process(asgi_app(settings, state=state), [body], HEADERS)
    assert direct == posted_in_process(_through_fastapi(settings, state), [body], HEADERS)
    assert direct[0][0] == 413


def test_cors_headers_still_come_with_an_answer(state):
    settings = _settings(cors_origins=("https://lab.example",))
    with TestClient(asgi_app(settings, state=state), base_url="http://127.0.0.1") as client:
        r = client.post("/v1/perturb", content=_bodies()[0], headers={**HEADERS, "Origin": "https://lab.example"})
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "https://lab.example"


def test_the_route_function_is_what_answers(state, monkeypatch):
    """The direct way calls the route's own function (so the two cannot drift apart)."""
    calls = []
    route = routes_v1.perturb

    async def counted(request):
        calls.append(request.url.path)
        return await route(request)

    monkeypatch.setattr(routes_v1, "perturb", counted)
    posted_in_process(asgi_app(_settings(), state=state), _bodies()[:1], HEADERS)
    assert calls == ["/v1/perturb"]


# --- the small-body reading -------------------------------------------------------------------

_KEYS = st.sampled_from(["a", "b", "id", "1", "x:y", 'q"', "\\", "é"])
_TEXT = st.text(alphabet='ab:"\\{}[],é \n', max_size=6)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False), _TEXT)


def _encoded(tree: Any) -> bytes:
    """JSON text of a tree whose objects are lists of (key, value) pairs: keys may repeat."""
    if isinstance(tree, tuple) and tree and tree[0] == "obj":
        return b"{" + b", ".join(orjson.dumps(k) + b": " + _encoded(v) for k, v in tree[1]) + b"}"
    if isinstance(tree, list):
        return b"[" + b",".join(_encoded(v) for v in tree) + b"]"
    return orjson.dumps(tree)


_TREES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.tuples(st.just("obj"), st.lists(st.tuples(_KEYS, inner), max_size=4))),
    max_leaves=30,
)


def _exact(body: bytes) -> Any:
    try:
        return ("ok", parsing._read_checked(body))
    except parsing.FieldError as exc:
        return ("refused", exc.loc, exc.msg, exc.kind)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TREES, st.integers(0, 70))
def test_the_small_body_reading_accepts_only_what_the_scan_accepts(tree, wrap):
    body = b"[" * wrap + _encoded(tree) + b"]" * wrap
    fast = parsing._proven_small(body)
    if fast is not parsing._UNPROVEN:
        assert _exact(body) == ("ok", fast)


def test_the_small_body_reading_leaves_keys_given_twice_and_deep_bodies_to_the_scan():
    assert parsing._proven_small(b'{"a": 1, "a": 2}') is parsing._UNPROVEN
    assert parsing._proven_small(b'{"a": {"b": 1, "b": 1}}') is parsing._UNPROVEN
    deep = b"[" * 65 + b"]" * 65
    assert parsing._proven_small(deep) is parsing._UNPROVEN and _exact(deep)[0] == "refused"
    assert parsing._proven_small(b"[" * 64 + b"]" * 64) == _exact(b"[" * 64 + b"]" * 64)[1]
    assert parsing._proven_small(b'{"a": "b:c"}') is parsing._UNPROVEN  # a colon in a string
    assert parsing._proven_small(b'{"a": {"b": [1, {"c": null}]}}') == {"a": {"b": [1, {"c": None}]}}
