"""The program path: GQA's functional programs executed on a scene graph (`gqa`), the ground for
perturbing any question type by editing one argument of its program.
"""
