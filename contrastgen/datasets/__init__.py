"""Stage 1, reading: the only code that knows a dataset's file format.

Everything after this stage sees validated records (questions, scene graphs) and never parses a
file itself, so a new dataset family means a reader here and its tests.
"""
