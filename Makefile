# stash — `make run` starts everything on the embedded default; `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat requirements.txt requirements-dev.txt | cksum | cut -d' ' -f1)

# The suite runs twice: on the embedded default (SQLite, filesystem broker) and on the
# services (PostgreSQL, Redis), each with a real worker process.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test
TEST_BROKER_URL ?= redis://127.0.0.1:6379/15
# The services' cache, as a deployment on PostgreSQL + Redis has it (each test empties this database).
TEST_CACHE_URL ?= redis://127.0.0.1:6379/14
# `make bench` drops and creates this database (its name must contain "bench") and uses this Redis db.
BENCH_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/stash_bench
BENCH_BROKER_URL ?= redis://127.0.0.1:6379/12
# `make chaos` uses this database and Redis db (the scenarios that stop, restart or flush the
# broker start a redis-server of their own on a free port). The fuzzer runs this many examples.
CHAOS_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/stash_chaos
CHAOS_BROKER_URL ?= redis://127.0.0.1:6379/13
CHAOS_SCALE ?= long
CHAOS_FUZZ_EXAMPLES ?= 100
CHAOS_VAR := $(CURDIR)/var/chaos
PYTEST_ARGS ?=
# `make run` serves the site on this address and port (e.g. `make run HOST=0.0.0.0 PORT=8080`; another
# machine's name or address must then be in ALLOWED_HOSTS).
HOST ?= 127.0.0.1
PORT ?= 8000
# `make test` measures which lines of stash the unit tests run (pytest-cov, on the embedded default) and
# fails under this percentage: a little under the 95.49% they covered when it was introduced. Raise it as
# coverage grows.
COVERAGE_FLOOR ?= 95
# The kinds that start workers, servers or browsers beside the integration tests: their own runs.
KINDS := tests/browser tests/chaos tests/fuzz tests/bench

.PHONY: venv browsers wrk run lint test test-fast test-embedded test-services bench chaos screenshots migrate clean

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	rm -f $(VENV)/.installed-* && touch $@

venv: $(STAMP)

# Browser tests drive Debian's Chromium (no browser downloads).
browsers:
	@test -x /usr/bin/chromium || (apt-get update -qq && apt-get install -y -qq chromium chromium-driver)

# The benchmark's load generator (its short run is part of `make test`).
wrk:
	@test -x /usr/bin/wrk || (apt-get update -qq && apt-get install -y -qq wrk)

migrate: venv
	$(BIN)/python manage.py migrate --noinput

run: migrate
	$(BIN)/python manage.py stash_demo
	@echo ""
	@echo "  stash runs at http://$(HOST):$(PORT)/  (admin: http://$(HOST):$(PORT)/admin/)"
	@echo "  web, worker, sinks worker and sweeper start below; Ctrl-C stops them all."
	@echo ""
	HOST=$(HOST) $(BIN)/honcho --procfile Procfile start --port $(PORT)

# ruff check and ruff format --check (pyproject.toml) on the whole tree, the import contracts, and mypy on stash/core, hooks, models and
# processing (pyproject.toml; settings: the embedded default).
lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	env -u DATABASE_URL -u CELERY_BROKER_URL -u DJANGO_SETTINGS_MODULE $(BIN)/mypy

test: test-embedded test-services

# The edit loop: the embedded default without the tests that start workers, servers or browsers
# (integration, chaos, the fuzzers, the short benchmark, the browser tests), on two processes.
test-fast: venv
	env -u DATABASE_URL -u CELERY_BROKER_URL -u CACHE_URL STASH_VAR_DIR=$(CURDIR)/var/test-fast \
		$(BIN)/pytest -n 2 -m "not integration" --ignore=tests/browser --ignore=tests/chaos --ignore=tests/fuzz \
		--ignore=tests/bench $(PYTEST_ARGS)

# The embedded default in three runs: the unit tests on two processes, measured (COVERAGE_FLOOR); the
# integration tests; then the browser, chaos, fuzz and short benchmark tests.
test-embedded: venv browsers wrk
	env -u DATABASE_URL -u CELERY_BROKER_URL -u CACHE_URL STASH_VAR_DIR=$(CURDIR)/var/test-embedded \
		$(BIN)/pytest -n 2 -m "not integration" $(KINDS:%=--ignore=%) \
		--cov=stash --cov-report= --cov-fail-under=$(COVERAGE_FLOOR) $(PYTEST_ARGS)
	env -u DATABASE_URL -u CELERY_BROKER_URL -u CACHE_URL STASH_VAR_DIR=$(CURDIR)/var/test-embedded \
		$(BIN)/pytest -m integration $(KINDS:%=--ignore=%) $(PYTEST_ARGS)
	env -u DATABASE_URL -u CELERY_BROKER_URL -u CACHE_URL STASH_VAR_DIR=$(CURDIR)/var/test-embedded \
		$(BIN)/pytest $(KINDS) $(PYTEST_ARGS)

test-services: venv browsers wrk
	DATABASE_URL=$(TEST_DATABASE_URL) CELERY_BROKER_URL=$(TEST_BROKER_URL) CACHE_URL=$(TEST_CACHE_URL) \
		SECRET_KEY=test-only DEBUG=0 STASH_VAR_DIR=$(CURDIR)/var/test-services $(BIN)/pytest $(PYTEST_ARGS)

# stash against the hand-written baseline in bench/, end to end (worker, gunicorn, wrk), on every
# backend (embedded, PostgreSQL + Redis, RabbitMQ); figures go to docs/BENCHMARKS.md (a short run is part of `make test`).
bench: venv wrk
	$(BIN)/python -m bench.run --backend all --report docs/BENCHMARKS.md \
		--database-url $(BENCH_DATABASE_URL) --broker-url $(BENCH_BROKER_URL) --var-dir $(CURDIR)/var/bench

# Fault scenarios (tests/chaos, long) on both backends, then the fuzzers (tests/fuzz, if present);
# figures go to docs/RELIABILITY.md even when a scenario fails. `make chaos BIN=<venv>/bin` runs with
# that environment instead of building .venv.
chaos: $(if $(wildcard $(BIN)/pytest),,venv)
	@rm -f $(CHAOS_VAR)/*.json; status=0; \
	env -u DATABASE_URL -u CELERY_BROKER_URL STASH_VAR_DIR=$(CHAOS_VAR)/embedded STASH_CHAOS_SCALE=$(CHAOS_SCALE) \
		STASH_CHAOS_FIGURES=$(CHAOS_VAR)/embedded.json $(BIN)/pytest -p no:cacheprovider -m chaos tests/chaos \
		$(PYTEST_ARGS) || status=1; \
	DATABASE_URL=$(CHAOS_DATABASE_URL) CELERY_BROKER_URL=$(CHAOS_BROKER_URL) SECRET_KEY=chaos-only DEBUG=0 \
		STASH_VAR_DIR=$(CHAOS_VAR)/services STASH_CHAOS_SCALE=$(CHAOS_SCALE) \
		STASH_CHAOS_FIGURES=$(CHAOS_VAR)/services.json $(BIN)/pytest -p no:cacheprovider -m chaos tests/chaos \
		$(PYTEST_ARGS) || status=1; \
	if [ -d tests/fuzz ]; then \
		DATABASE_URL=$(CHAOS_DATABASE_URL) CELERY_BROKER_URL=$(CHAOS_BROKER_URL) SECRET_KEY=chaos-only DEBUG=0 \
			STASH_VAR_DIR=$(CHAOS_VAR)/services STASH_FUZZ_EXAMPLES=$(CHAOS_FUZZ_EXAMPLES) \
			$(BIN)/pytest -p no:cacheprovider tests/fuzz $(PYTEST_ARGS) || status=1; \
	else echo "chaos: tests/fuzz is not there; the fuzzers were not run"; fi; \
	$(BIN)/python -m tests.chaos.report docs/RELIABILITY.md $(CHAOS_VAR)/embedded.json $(CHAOS_VAR)/services.json \
		--command "make chaos CHAOS_SCALE=$(CHAOS_SCALE)" || status=1; \
	exit $$status

# The admin screenshots of the README and docs/admin.md (docs/img/), taken by the browser tests.
screenshots: venv browsers
	env -u DATABASE_URL -u CELERY_BROKER_URL -u CACHE_URL STASH_VAR_DIR=$(CURDIR)/var/test-embedded \
		STASH_SCREENSHOTS=$(CURDIR)/docs/img $(BIN)/pytest tests/browser/test_admin.py tests/browser/test_review.py \
		tests/browser/test_examples.py tests/browser/test_statement_policy.py tests/browser/test_appeal.py \
		tests/browser/test_review_team.py tests/browser/test_failures.py tests/browser/test_shadows.py -q

clean:
	rm -rf var
