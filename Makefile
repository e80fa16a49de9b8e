# Two commands on a fresh Debian machine with Python 3.11:
#   make run    start the dashboard on http://127.0.0.1:8501 (the ACTG 175 example is loaded)
#   make test   run the whole test suite (unit, property, AppTest and headless-Chromium tests)
#   make workshop   serve a class: N dashboard processes behind nginx on http://127.0.0.1:8501
#                   (PROCESSES=3, PORT=8500, ADDRESS=0.0.0.0 to change; Ctrl-C stops them all)
#   make test-fast   the unit tier's quick tests, in under three minutes (tests/conftest.py)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501
ROOT_USER := $(shell [ "$$(id -u)" = 0 ] && echo yes)

.PHONY: run workshop test test-fast bench clean chromium axe java tools

# the tests in two pytest-xdist workers (this machine's 2 cores), a test file to a worker (its
# module fixtures made once); the tests that measure time or memory (mark serial,
# tests/conftest.py) run after them alone. One junit XML a run in test-results (durations).
XDIST := -n 2 --dist loadfile

# byte code written even where the environment says not to (PYTHONDONTWRITEBYTECODE): pytest
# then keeps each test module's rewritten asserts, so the serial phase collects in 4.5 s instead
# of 11.7 s, and every server and command-line process a test starts reads the project compiled
test test-fast: export PYTHONDONTWRITEBYTECODE :=

$(BIN)/python:
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { \
	  if [ "$(ROOT_USER)" = yes ]; then \
	    echo "installing python3-venv (Debian)"; rm -rf $(VENV); \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv && \
	    $(PYTHON) -m venv $(VENV); \
	  else echo "python3 -m venv failed: install the python3-venv package" >&2; exit 1; fi; }
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.runtime: requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install -q -r requirements.txt
	@touch $@

$(VENV)/.dev: requirements-dev.txt $(VENV)/.runtime
	$(BIN)/python -m pip install -q -r requirements-dev.txt
	@touch $@

# one BLAS thread per computation: sessions run side by side on the cores, and a threaded BLAS
# whose threads wait for each other on a busy machine made a Protect move with the benchmark
# analyses 3x slower and a propensity model 2x at load average 3 (bench/bench_analysis.py)
run workshop bench: export OPENBLAS_NUM_THREADS ?= 1

run: $(VENV)/.runtime
	$(BIN)/python -m streamlit run app.py --server.address 127.0.0.1 --server.port $(PORT) \
	  --browser.gatherUsageStats false

# N processes of the above (default: the cores) behind nginx with the shipped deploy/nginx.conf,
# sticky by its cookie, each with its share of the memory budget and the workers (ui/infra/workshop.py)
PROCESSES ?=
ADDRESS ?= 127.0.0.1
workshop: $(VENV)/.runtime
	$(BIN)/python -m ui.infra.workshop --port $(PORT) --address $(ADDRESS) \
	  $(if $(PROCESSES),--processes $(PROCESSES))

chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$(ROOT_USER)" = yes ]; then \
	    echo "installing Debian chromium for the browser tests"; \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium fonts-liberation; \
	  else echo "warning: chromium is missing and this user cannot install it (apt-get install chromium)" >&2; fi; }

# nginx (the shipped proxy config is tested in front of a real server) and strace (a figure
# export is traced to show that Kaleido's Chromium sends nothing off the machine): Debian's
tools:
	@{ command -v nginx >/dev/null 2>&1 && command -v strace >/dev/null 2>&1; } || { \
	  if [ "$(ROOT_USER)" = yes ]; then \
	    echo "installing Debian nginx-light and strace for the tests"; \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx-light strace; \
	  else echo "warning: nginx or strace is missing and this user cannot install them (apt-get install nginx-light strace)" >&2; fi; }

# Java 17 for the Spark engine's tests (PySpark starts a JVM); Debian's headless runtime
java:
	@command -v java >/dev/null 2>&1 || { \
	  if [ "$(ROOT_USER)" = yes ]; then \
	    echo "installing Debian openjdk-17-jre-headless for the Spark engine"; \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q openjdk-17-jre-headless; \
	  else echo "warning: java is missing and this user cannot install it (apt-get install openjdk-17-jre-headless): the Spark tests will fail" >&2; fi; }

# axe-core (pinned in package.json / package-lock.json) for the accessibility test in Chromium
axe:
	@[ -f node_modules/axe-core/axe.min.js ] || { \
	  if command -v npm >/dev/null 2>&1; then npm ci --no-audit --no-fund; \
	  else echo "warning: npm is missing: the accessibility test needs axe-core (npm ci)" >&2; fi; }

test: $(VENV)/.dev chromium axe java tools
	$(BIN)/python -m ruff check .
	$(BIN)/python -m mypy
	rm -rf test-results
	status=0; \
	$(BIN)/python -m pytest $(XDIST) -m "not serial" --junitxml=test-results/junit-parallel.xml \
	  || status=$$?; \
	$(BIN)/python -m pytest -m serial --junitxml=test-results/junit-serial.xml || status=$$?; \
	exit $$status

# the unit tier (no Streamlit, no server, no browser) without its slow tests (exhaustive
# references, subprocesses: SLOW in tests/conftest.py) and its serial ones, a test to whichever
# worker is free: the loop to run while changing code
test-fast: $(VENV)/.dev
	$(BIN)/python -m pytest -n 2 -m "unit and not slow and not serial" \
	  --junitxml=test-results/junit-fast.xml

bench: $(VENV)/.dev
	$(BIN)/python -m bench.bench_risk
	$(BIN)/python -m bench.bench_linkage
	$(BIN)/python -m bench.bench_methods
	$(BIN)/python -m bench.bench_sweep
	$(BIN)/python -m bench.bench_search
	$(BIN)/python -m bench.bench_slider
	$(BIN)/python -m bench.bench_analysis
	$(BIN)/python -m bench.bench_population
	$(BIN)/python -m bench.bench_pitman
	$(BIN)/python -m bench.bench_loglinear
	$(BIN)/python -m bench.bench_cli
	$(BIN)/python -m bench.bench_noise
	$(BIN)/python -m bench.bench_microaggregation
	$(BIN)/python -m bench.bench_suda2
	$(BIN)/python -m bench.bench_engines
	$(BIN)/python -m bench.bench_lessons
	$(BIN)/python -m bench.bench_inference
	$(BIN)/python -m bench.bench_buys
	$(BIN)/python -m bench.bench_households
	$(BIN)/python -m bench.bench_synthesis
	$(BIN)/python -m bench.bench_tables
	$(BIN)/python -m bench.bench_corpus
	SDC_CORPUS_ALL=1 $(BIN)/python -m pytest -m corpus --junitxml=test-results/junit-corpus.xml
	$(BIN)/python -m bench.bench_read
	$(BIN)/python -m bench.bench_bombs
	$(BIN)/python -m bench.bench_headers
	$(BIN)/python -m bench.bench_first_page

clean:
	rm -rf $(VENV) test-results .pytest_cache .hypothesis node_modules
