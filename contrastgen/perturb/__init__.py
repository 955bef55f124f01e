"""Template handlers: one per template id, all with the signature `(Context) -> Iterator[Candidate]`,
and for each template the function that answers its original question from the graph.

Adding a template means a pattern entry in rules/templates.json, one handler module here, and its
tests.
"""

from __future__ import annotations

from collections.abc import Callable

from contrastgen.perturb.base import Context, Handler
from contrastgen.perturb.color import answer_color, perturb_color
from contrastgen.perturb.near import answer_near, perturb_near
from contrastgen.perturb.relation import answer_relation, perturb_relation, perturb_relation_object
from contrastgen.perturb.see import answer_see, perturb_see
from contrastgen.perturb.side import answer_side, perturb_side

HANDLERS: dict[str, Handler] = {
    "on_which_side_is_the_x": perturb_side,
    "what_color_is_the_x": perturb_color,
    "do_you_see_x_or_y": perturb_see,
    "are_there_x_near_the_y": perturb_near,
    "is_the_x_rel_the_y__relation": perturb_relation,
    "is_the_x_rel_the_y__object": perturb_relation_object,
}

# How each template's original question is answered from the graph: the oracle baseline uses
# these, and they raise Refusal where the graph cannot answer.
ANSWERERS: dict[str, Callable[[Context], str | None]] = {
    "on_which_side_is_the_x": answer_side,
    "what_color_is_the_x": answer_color,
    "do_you_see_x_or_y": answer_see,
    "are_there_x_near_the_y": answer_near,
    "is_the_x_rel_the_y__relation": answer_relation,
    "is_the_x_rel_the_y__object": answer_relation,
}
