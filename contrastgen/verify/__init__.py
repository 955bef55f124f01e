"""The independent checker of contrast sets.

It re-reads the words, executes the program with its own executor and checks every evidence fact
against the scene graph. It imports nothing from the generator side (language, scene, templates,
engine, run, writers), so a bug there cannot hide itself here; tests/test_layers.py holds that.
"""
