"""The paper's templates: patterns (rules/templates.json) bound to one handler each.

`registry` binds a rules entry to its handler and answerer, checked when the templates load;
one module per template proposes candidate replacements and proves their answers from the scene.
"""
