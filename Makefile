# ofcstats: every target creates .venv on first use. `make help` lists them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DB := out/demo.duckdb

.DEFAULT_GOAL := help
.PHONY: help test test-fast demo bench lint notebooks sample-data clean

help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  make %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,notebooks]'
	touch $(STAMP)

test: $(STAMP) ## Run the test suite (slow tests included)
	$(BIN)/python -m pytest -q -n 2

test-fast: $(STAMP) ## Run the tests without those marked slow
	$(BIN)/python -m pytest -q -n 2 -m "not slow"

demo: $(STAMP) ## Run the main job end to end on the shipped sample data
	$(BIN)/ofcstats score data/examples/worked-examples.jsonl

bench: $(STAMP) ## Throughput of the evaluator and pipeline next to other evaluators
	$(BIN)/python bench/run.py

lint: $(STAMP) ## ruff and mypy
	$(BIN)/ruff check ofcstats tests bench
	$(BIN)/mypy

sample-data: $(STAMP) ## Regenerate data/sample/ from fixed seeds with the simulator
	@echo "sample-data: the simulator is not written yet" && false

clean: ## Remove the virtualenv and generated files
	rm -rf $(VENV) out .pytest_cache .mypy_cache .ruff_cache .hypothesis
