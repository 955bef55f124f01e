"""Template handlers: one per template id, all with the signature `(Context) -> Iterator[Candidate]`.

Adding a template means a pattern entry in rules/templates.json, one handler here, and its tests.
"""

from __future__ import annotations

from contrastgen.perturb.base import Handler
from contrastgen.perturb.color import perturb_color
from contrastgen.perturb.near import perturb_near
from contrastgen.perturb.relation import perturb_relation, perturb_relation_object
from contrastgen.perturb.see import perturb_see
from contrastgen.perturb.side import perturb_side

HANDLERS: dict[str, Handler] = {
    "on_which_side_is_the_x": perturb_side,
    "what_color_is_the_x": perturb_color,
    "do_you_see_x_or_y": perturb_see,
    "are_there_x_near_the_y": perturb_near,
    "is_the_x_rel_the_y__relation": perturb_relation,
    "is_the_x_rel_the_y__object": perturb_relation_object,
}
