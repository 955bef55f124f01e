# Two commands a new user needs: `make demo` and `make test`. Both create .venv when missing.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NLTK_DATA ?= ../shared/nltk_data

.PHONY: demo test lint lexicon bench screenshot clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,ray,hf,harness]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/contrastgen demo --out out/demo

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q

lint: $(STAMP)
	$(BIN)/ruff check contrastgen api mturk tests benchmarks

# Regenerates the WordNet-derived lexicon in rules/lexicon/ (needs WordNet; commit the result).
lexicon: $(STAMP)
	NLTK_DATA=$(NLTK_DATA) $(BIN)/contrastgen lexicon build

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_generate.py --images 2000 --questions 30000

# Rewrites docs/viewer.png, the README's picture of the viewer, from the browser test that checks it.
screenshot: $(STAMP)
	CONTRASTGEN_SCREENSHOT=$(CURDIR)/docs/viewer.png $(BIN)/python -m pytest -q \
	    tests/viewer/test_viewer_browser.py -k first_set_shows

clean:
	rm -rf out build dist *.egg-info
