# ofcstats: every target creates .venv on first use. `make help` lists them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
BASE := $(VENV)/.base
STAMP := $(VENV)/.installed
NOTEBOOKS := $(VENV)/.notebooks
DEMO_DB := out/demo.duckdb

.DEFAULT_GOAL := help
.PHONY: help test test-fast demo bench lint docs notebooks browser sample-data clean

help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  make %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# Three installs, each what its targets need: the project alone (the demo), with the
# Jupyter stack (notebooks), and with the test tools and the Jupyter stack (tests, lint,
# bench: the notebook tests run the notebooks).
$(BASE): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(BASE)

$(NOTEBOOKS): $(BASE)
	$(BIN)/python -m pip install --quiet -e '.[notebooks]'
	touch $(NOTEBOOKS)

$(STAMP): $(BASE)
	$(BIN)/python -m pip install --quiet -e '.[dev,notebooks]'
	touch $(NOTEBOOKS) $(STAMP)

# The log reader is compiled (numba) on its first use, once per install: done here, so
# that the two test workers do not both do it.
test: $(STAMP) browser ## Run the test suite (slow tests included)
	$(BIN)/python -c "from ofcstats.formats import jsonl; jsonl.compile_reader()"
	$(BIN)/python -m pytest -q -n 2

test-fast: $(STAMP) ## Run the tests without those marked slow
	$(BIN)/python -c "from ofcstats.formats import jsonl; jsonl.compile_reader()"
	$(BIN)/python -m pytest -q -n 2 -m "not slow"

# The report's browser test drives the distribution's Chromium (no browser downloads at
# install time). Installed only as root with apt-get at hand; never fails the build: the
# test says why it is skipped when there is no Chromium.
browser: ## Install the system's Chromium for the report's browser test, where possible
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then \
		true; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "apt-get install chromium (for the report's browser test)"; \
		{ DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 || \
		  { apt-get update -qq >/dev/null 2>&1 && \
		    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1; }; } || \
		echo "chromium could not be installed: the browser test will be skipped"; \
	else \
		echo "no chromium, and no apt-get as root to install it: the browser test will be skipped"; \
	fi

demo: $(BASE) ## Load the sample data, score it under every ruleset, compare, write report.html
	@mkdir -p out
	$(BIN)/ofcstats ingest data/sample -r data/rulesets/pineapple-progressive.toml \
		--db $(DEMO_DB) --quiet
	$(BIN)/ofcstats rescore --all-rulesets --db $(DEMO_DB) --quiet
	$(BIN)/ofcstats compare --db $(DEMO_DB)
	$(BIN)/ofcstats report --db $(DEMO_DB) --ruleset american -o report.html

notebooks: $(NOTEBOOKS) ## Open the notebooks in JupyterLab
	$(BIN)/jupyter lab notebooks/

docs: $(BASE) ## Write docs/cli.md from the commands themselves
	$(BIN)/ofcstats cli-reference -o docs/cli.md

bench: $(STAMP) ## Throughput of the evaluator and pipeline next to other evaluators
	$(BIN)/python bench/run.py

lint: $(STAMP) ## ruff and mypy
	$(BIN)/ruff check ofcstats tests bench
	$(BIN)/mypy

sample-data: $(BASE) ## Regenerate data/sample/ from fixed seeds with the simulator
	$(BIN)/ofcstats simulate -q --variant pineapple --ruleset american --seed 7 \
		--players alice:aggressive,bob:safe,carol:montecarlo --hands 1000 --timeout-rate 0.01 \
		--prefix pineapple-american -o data/sample/pineapple-american.jsonl
	$(BIN)/ofcstats simulate -q --variant pineapple --ruleset data/rulesets/pineapple-progressive.toml \
		--seed 8 --players hana:aggressive,ivan:montecarlo,june:balanced --hands 700 \
		--prefix pineapple-progressive -o data/sample/pineapple-progressive.jsonl
	$(BIN)/ofcstats simulate -q --variant ofc-classic --ruleset western --seed 9 \
		--players dave:balanced,erin:safe,frank:random,gina:aggressive --hands 400 \
		--timeout-rate 0.02 --prefix classic-western -o data/sample/ofc-classic-western.jsonl
	$(BIN)/ofcstats simulate -q --variant ofc-turbo --ruleset classic-kush --seed 10 \
		--players kim:safe,lee:balanced,max:aggressive --hands 600 \
		--prefix turbo-kush -o data/sample/ofc-turbo-classic-kush.jsonl
	$(BIN)/ofcstats simulate -q --variant chinese-13 --ruleset russian --seed 11 \
		--players nora:safe,omar:balanced,pia:aggressive,quin:montecarlo --hands 400 \
		--prefix chinese-russian -o data/sample/chinese-13-russian.jsonl
	$(BIN)/ofcstats simulate -q --variant criss-cross --ruleset criss-cross --seed 12 \
		--players rosa:balanced,sven:safe --hands 150 \
		--prefix criss-cross -o data/sample/criss-cross.jsonl

clean: ## Remove the virtualenv and generated files
	rm -rf $(VENV) out .pytest_cache .mypy_cache .ruff_cache .hypothesis
