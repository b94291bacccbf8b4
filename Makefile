# Serving Interview Lab: `make run` serves the app, `make test` runs every check.
SHELL := /bin/bash
# Python 3.11 to 3.13 (pyproject.toml): python3.11 when there is one (as in CI), else python3.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
CHROMIUM ?= /usr/bin/chromium
PYTEST_ARGS ?= -n 2

.PHONY: run test setup browser graphviz wrk lint format bench audit clean

$(STAMP): requirements.txt requirements-dev.txt
	@test -n "$(PYTHON)" && $(PYTHON) -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))' 2>/dev/null || { \
	  echo "Python 3.11, 3.12 or 3.13 is needed; '$(or $(PYTHON),python3)' is $$($(or $(PYTHON),python3) --version 2>&1 | head -n 1)."; \
	  echo "Install one, or run 'make PYTHON=/path/to/python3.12 ...'"; exit 1; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	@touch $(STAMP)

setup: $(STAMP)

run: $(STAMP) graphviz
	DEBUG=$${DEBUG:-true} $(PY) manage.py migrate --noinput
	DEBUG=$${DEBUG:-true} $(PY) manage.py load_content
	DEBUG=$${DEBUG:-true} $(PY) manage.py render_markup
	DEBUG=$${DEBUG:-true} $(PY) manage.py runserver $(HOST):$(PORT)

# $(call system_tool,CHECK,PACKAGE,WHO NEEDS IT): run CHECK; when it fails, install Debian's PACKAGE as
# root, or else say how and stop. (No commas inside the arguments: make splits on them.)
define system_tool
@$(1) || { if [ "$$(id -u)" = "0" ]; then \
  echo "$(2) is missing: installing Debian's $(2)..."; \
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null; \
else echo "$(3) need $(2): sudo apt-get install -y $(2)"; exit 1; fi; }
endef

# The browser tests never skip: they need Chromium at $(CHROMIUM).
browser:
	$(call system_tool,test -x $(CHROMIUM),chromium,The browser tests (they never skip; or point CHROMIUM=/path/to/chromium at another build))

# Graphviz's dot lays out the walkthrough diagrams when content is saved (lessons/diagram.py).
graphviz:
	$(call system_tool,command -v dot >/dev/null,graphviz,The walkthrough diagrams)

# wrk loads the server in make bench; tests/bench checks the bench's wrk script with it.
wrk:
	$(call system_tool,command -v wrk >/dev/null,wrk,make bench and make test)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

test: $(STAMP) graphviz browser wrk lint
	DJANGO_SETTINGS_MODULE=interview.test_settings $(PY) manage.py makemigrations --check --dry-run >/dev/null || { echo "Models changed without a migration: run manage.py makemigrations"; exit 1; }
	CHROMIUM=$(CHROMIUM) $(PY) -m pytest $(PYTEST_ARGS)

# BENCH_SECONDS per target (default 10, a few minutes in all; 2 for a quick look). SQLite unless
# DATABASE_URL (and REDIS_URL) are set.
bench: $(STAMP) wrk
	$(PY) -m bench.run

# Lighthouse from npm (pinned: 12.2.3 runs on Node 20) on home, lesson, calculator, results and review.
LIGHTHOUSE_VERSION := 12.2.3
audit: $(STAMP) graphviz browser
	@command -v npm >/dev/null || { echo "make audit needs Node.js 18+ and npm: sudo apt-get install -y nodejs npm"; exit 1; }
	@test -x .audit/node_modules/.bin/lighthouse || npm install --prefix .audit --no-audit --no-fund -E lighthouse@$(LIGHTHOUSE_VERSION)
	CHROME_PATH=$(CHROMIUM) $(PY) -m bench.audit

clean:
	rm -rf $(VENV) staticfiles .audit .pytest_cache .ruff_cache
