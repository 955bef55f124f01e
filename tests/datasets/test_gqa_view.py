"""The GQA view of a perturbation: `fullAnswer`, `types` and `groups` derived from the original
and the change, never a sentence the answer does not support."""

from __future__ import annotations

import pytest

from contrastgen.datasets.gqa import full_answer, perturbation_as_gqa, perturbation_groups


def _p(answer, kind="object", old="jacket", new="shirt"):
    return {"answer": answer, "rank": 1, "change": {"kind": kind, "slot": "x", "from": old, "to": new},
            "evidence": {}}


ORIGINAL = {"question": "Of what color is the jacket?", "answer": "purple", "fullAnswer": "The jacket is purple.",
            "types": {"structural": "query", "detailed": "directOf"},
            "groups": {"global": "color", "local": "10q-jacket_color"}}


@pytest.mark.parametrize("original,p,said", [
    (ORIGINAL, _p("red"), "The shirt is red."),
    (ORIGINAL, _p("purple", new="coat"), "The coat is purple."),  # an invariance keeps the answer
    ({**ORIGINAL, "fullAnswer": "The trousers have beige color.", "answer": "beige"}, _p("black", old="trousers", new="clock"),
     "Black."),  # "The clock have": the number would change, so no sentence is made
    ({**ORIGINAL, "fullAnswer": "The laptop computer is blue.", "answer": "blue"}, _p("red", old="device", new="phone"),
     "Red."),  # the changed word is not in the sentence: it may be about the old object
    ({**ORIGINAL, "fullAnswer": "Yes, the puddle is to the right of the zebra.", "answer": "yes"},
     _p("no", kind="relation", old="to the right of", new="to the left of"), "No."),
    ({**ORIGINAL, "fullAnswer": "The giraffe is to the left of the fence.", "answer": "left"},
     _p("right", old="fence", new="bench"), "The giraffe is to the right of the bench."),
])
def test_full_answers(original, p, said):
    assert full_answer(original, p) == said


def test_groups_follow_the_change():
    assert perturbation_groups(ORIGINAL, _p("red")) == {"global": "color", "local": "10q-shirt_color"}
    assert perturbation_groups(ORIGINAL, _p("red", old="trousers", new="clock"))["local"] is None
    category = {"groups": {"global": "animal", "local": "11q-animal"}}
    assert perturbation_groups(category, _p("chair", old="animal", new="furniture")) == {
        "global": "furniture", "local": "11q-furniture"}
    relation = {"groups": {"global": None, "local": "13-fence_giraffe"}}
    assert perturbation_groups(relation, _p("right", kind="relation", old="left", new="right"))["local"] == "13-fence_giraffe"


def test_the_view_carries_them_and_the_original_types():
    record = {"image_id": "img", "question_id": "q", "template": "program"}
    view = perturbation_as_gqa(record, {**_p("red"), "question": "Of what color is the shirt?", "kind": "invariance"},
                               ORIGINAL)
    assert (view["fullAnswer"], view["types"], view["groups"]["local"]) == (
        "The shirt is red.", ORIGINAL["types"], "10q-shirt_color")
    assert view["contrast"]["kind"] == "invariance"  # a training set can tell the two kinds apart
