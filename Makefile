# Two commands a new user needs: `make demo` and `make test`. Both create .venv when missing;
# the demo installs the core only, the tests every extra (crowd, Ray, Hugging Face, lexicon build).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORE := $(VENV)/.installed-core
ALL := $(VENV)/.installed-all
# The lexicon build's inputs: Visual Genome's vocabulary and WordNet, beside this checkout here.
VG_VOCAB ?= ../shared/data/vocab/vg-1750-700-450
NLTK_DATA ?= ../shared/nltk_data

.PHONY: demo test lint lexicon bench bench-check screenshot clean

# setuptools notes on every editable install of a layout like this one (rules/, api/ and mturk/
# mapped into the contrastgen package) that folders named like a package may shadow it; the
# mapping is deliberate, so that one notice is silenced (nothing else is).
PIP_INSTALL := PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install -q

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(CORE): pyproject.toml | $(VENV)/bin/python
	$(PIP_INSTALL) -e .
	touch $(CORE)

$(ALL): pyproject.toml | $(VENV)/bin/python
	$(PIP_INSTALL) -e '.[dev,crowd,ray,hf,harness,lexicon,captions]'
	touch $(ALL) $(CORE)

demo: $(CORE)
	$(BIN)/contrastgen demo --out out/demo

test: $(ALL)
	$(BIN)/python -m pytest -n 2 -q

lint: $(ALL)
	$(BIN)/ruff check contrastgen api mturk tests benchmarks

# Regenerates the WordNet-derived lexicon in rules/lexicon/ (commit the result).
lexicon: $(ALL)
	$(BIN)/contrastgen lexicon build --vocab $(VG_VOCAB) --wordnet $(NLTK_DATA)

bench: $(ALL)
	$(BIN)/python benchmarks/bench_generate.py --images 2000 --questions 30000

# The 30k benchmark against benchmarks/baseline.json (its ratio to the parse floor): exits 1 and
# says so when a change costs more than 10%. For review on a quiet host, not a timed test.
bench-check: $(ALL)
	$(BIN)/python benchmarks/bench_check.py

# Rewrites docs/viewer.png, the README's picture of the viewer, from the browser test that checks it.
screenshot: $(ALL)
	CONTRASTGEN_SCREENSHOT=$(CURDIR)/docs/viewer.png $(BIN)/python -m pytest -q \
	    tests/viewer/test_viewer_browser.py -k first_set_shows

clean:
	rm -rf out build dist *.egg-info
