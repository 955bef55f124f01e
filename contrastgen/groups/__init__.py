"""Two-image groups (NaturalBench's 2x2): for a contrast pair (Q, Q') on image I, an image J of the
corpus on which both questions are proven again and Q's answer differs from I's. `index` finds the
candidate images, `search` proves the cells on them, `record` writes what was found."""
