# spare-jax: two commands for a fresh machine with only python3 and make.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TSTAMP := $(VENV)/.installed-test

.PHONY: run figures test test-all quick clean bench

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# pip byte-compiles every installed file on one core; compileall does it on every core (half the install's
# time on 2 cores). Only for speed: a file it cannot compile does not stop the install.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q --no-compile -e .
	$(PY) -m compileall -q -j 0 $(VENV)/lib > /dev/null || true
	touch $@

$(TSTAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q --no-compile -e '.[test]'
	$(PY) -m compileall -q -j 0 $(VENV)/lib > /dev/null || true
	touch $@ $(STAMP)

run: $(STAMP)  ## the planner's quick answer at N = 600 (a few minutes; the time measured: docs/index.md): results/ (git-ignored)
	$(PY) -m spare_jax run

quick: run  ## the same as make run (kept for older instructions)

figures: $(STAMP)  ## the full suite (about 25-40 minutes on 2 cores): rewrites the tracked figures/
	$(PY) -m spare_jax run --full

# Tests that run one compiled program carry the same xdist_group mark and run on one worker (loadgroup), which
# compiles it once; the others are shared out as they come. A worker that crashes (a segmentation fault in
# native code) ends the run, red, naming the test: pytest-xdist's loadgroup scheduler would otherwise wait
# for the crashed worker's tests forever.
XDIST = -n auto --maxprocesses=4 --dist loadgroup --max-worker-restart=0

test: $(TSTAMP)  ## the test suite without the slow tier (one worker per core, at most 4: mostly JAX compiles)
	$(PY) -m pytest -q $(XDIST) -m "not slow"

test-all: $(TSTAMP)  ## every test, the slow tier included (N = 600 statistics, smoke runs, multi-process)
	$(PY) -m pytest -q $(XDIST)

bench: $(TSTAMP)
	$(PY) -m spare_jax bench

clean:
	rm -rf $(VENV) build *.egg-info .jax_cache  # .jax_cache: the tests' compilation cache
