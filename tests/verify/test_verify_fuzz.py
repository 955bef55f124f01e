"""Arbitrary JSON in any part of a perturbation is judged (a list of problems), never a crash.

A verifier that raises KeyError on an odd evidence record stops a whole run; one that passes an
unchanged valid record must keep passing it. Which odd values must *fail* is for the targeted
tests in test_verify_perturbation.py (some replacements are harmless, e.g. [] for no attributes).
"""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from verify_cases import VALID, as_record, fixed_rules, make_graph

from contrastgen.answers import normalize_answer
from contrastgen.jsonio import dumps
from contrastgen.verify.checker import verify_contrast_sets, verify_perturbation

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False, width=32)
    | st.sampled_from(["", "1", "2", "cup", "near", "left", "yes", "no", "red", "object", "only", "side"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["op", "fact", "id", "ids", "names", "name", "rel", "object", "subject",
                         "symmetric", "attributes", "colors", "x", "w", "side", "center", "image_width"]),
        inner, max_size=4),
    max_leaves=8,
)

# Paths into a perturbation whose value the fuzzer replaces.
_PATHS = [("answer",), ("change",), ("evidence",), ("evidence", "query"), ("evidence", "facts"),
          ("evidence", "answer"), ("evidence", "query", "object"), ("evidence", "query", "names"),
          ("evidence", "query", "op"), ("evidence", "facts", 0), ("evidence", "facts", 0, "id"),
          ("evidence", "query", "symmetric"), ("evidence", "query", "attributes")]

_SETTINGS = settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(case=st.sampled_from(sorted(VALID)), path=st.sampled_from(_PATHS), value=_JSON)
def test_any_value_anywhere_is_judged_not_crashed(case, path, value):
    original, pert = copy.deepcopy(VALID[case])
    node = pert
    for key in path[:-1]:  # every valid case has evidence, its query and a first fact
        node = node[key]
    before = copy.deepcopy(pert)
    node[path[-1]] = value
    changed = dumps(pert) != dumps(before)  # by the bytes: True == 1 == 1.0 in Python, not in JSON
    problems = verify_perturbation(pert, original, make_graph(), rules=fixed_rules())
    assert isinstance(problems, list) and all(isinstance(p, str) and p for p in problems)
    if not changed:
        assert problems == []


@_SETTINGS
@given(field=st.sampled_from(["question_id", "image_id", "answer", "template", "perturbations", "rank",
                              "pert_question_id"]), value=_JSON)
def test_any_value_in_a_record_is_judged_not_crashed(field, value):
    original, pert = copy.deepcopy(VALID["color"])
    record = as_record(original, [pert])
    if field == "rank":
        record["perturbations"][0]["rank"] = value
    elif field == "pert_question_id":
        record["perturbations"][0]["question_id"] = value
    else:
        record[field] = value
    report = verify_contrast_sets([record], {"img1": make_graph()}, rules=fixed_rules())
    assert all(isinstance(f.problem, str) and f.problem for f in report.failures)
    if field == "answer":  # any other original answer is fine, as long as the contrast changes it
        assert report.ok == (isinstance(value, str) and normalize_answer(value) != "red")
    else:  # compare as JSON text: True == 1 in Python, but a rank of true is not a rank of 1
        assert report.ok == (dumps(record) == dumps(as_record(original, [pert])))
