# Two commands: `make lab` (set up if needed, open the course) and `make test` (set up if needed, run every test).
# Set-up is a virtual environment in .venv, made once and refreshed when pyproject.toml changes.
# On Linux without a GPU, `make lab TORCH_INDEX=https://download.pytorch.org/whl/cpu` asks for the CPU build: torch
# is installed alone from that index first, then the rest. --index-url does not switch off the extra indexes or
# find-links a pip.conf may add, so the build that came is checked afterwards (check-torch), not assumed.
PYTHON ?= python3
VENV ?= .venv
TORCH_INDEX ?=
PY := $(VENV)/bin/python
LAB_ARGS ?=
TORCH_REQUIREMENT := torch>=2.2,<3
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout=300
NOTEBOOKS := $(wildcard notebooks/*/[0-9][0-9]_*.ipynb)
BENCH_OUT ?= runs/bench-2core

.PHONY: lab test test-fast student bench notebooks release-notebooks book clean check-torch gpu-check gpu-results

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.lab-installed: pyproject.toml | $(VENV)/bin/python
	$(if $(TORCH_INDEX),$(PY) -m pip install --retries 2 --timeout 20 "$(TORCH_REQUIREMENT)" --index-url $(TORCH_INDEX),)
	$(PY) -m pip install -e .
	$(MAKE) --no-print-directory check-torch
	touch $@

$(VENV)/.test-installed: pyproject.toml $(VENV)/.lab-installed
	$(PY) -m pip install -e '.[test]'
	touch $@

check-torch:  ## which torch build .venv holds; with a CPU TORCH_INDEX, stop if pip brought a CUDA build anyway
	@$(PY) -c "import torch; cuda = torch.version.cuda; print('torch', torch.__version__ + ':', 'a CUDA ' + cuda + ' build' if cuda else 'a CPU build')"
	@case "$(TORCH_INDEX)" in *cpu*) $(PY) -c "import sys; import torch; sys.exit(torch.version.cuda and 'TORCH_INDEX named the CPU index, yet pip installed a CUDA build: your pip configuration adds other sources (pip config list: extra-index-url or find-links). Remove .venv and run again with PIP_CONFIG_FILE=/dev/null.')";; esac

lab: $(VENV)/.lab-installed
	cd notebooks && $(abspath $(VENV))/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root,) $(LAB_ARGS)

test: $(VENV)/.test-installed
	$(PY) -m pytest tests notebooks $(NBVAL) -n auto --dist loadscope --no-loadscope-reorder --durations=15

test-fast: $(VENV)/.test-installed   ## library tests only: no notebook runs, no command smoke runs
	$(PY) -m pytest tests -m "not slow"

student: $(VENV)/.lab-installed      ## student copies of the notebooks, solutions removed, in student/
	$(PY) -m mlm_lib.course.student notebooks student

bench: $(VENV)/.test-installed        ## training-step throughput against Hugging Face and other peers
	@mkdir -p $(dir $(BENCH_OUT))
	$(PY) -m mlm_lib.experiments.bench --out $(BENCH_OUT).json | tee $(BENCH_OUT).txt
	@echo "Written to $(BENCH_OUT).{txt,json}; to update the committed figures: make bench BENCH_OUT=benchmarks/bench-2core"

release-notebooks: $(VENV)/.test-installed  ## re-execute every notebook once, in order, on a quiet machine (outputs are committed)
	$(PY) -m mlm_lib.course.release notebooks

notebooks: release-notebooks

gpu-check: $(VENV)/.test-installed    ## on one NVIDIA GPU: device tests, every notebook and every command there (< 5 min)
	$(PY) -m mlm_lib.experiments.gpu check --out-dir runs/gpu

gpu-results: $(VENV)/.test-installed  ## on one NVIDIA GPU: every GPU figure the course quotes, into runs/gpu (< 10 min)
	$(PY) -m mlm_lib.experiments.gpu results --out-dir runs/gpu

BOOK_VENV ?= .venv-book
$(BOOK_VENV)/.installed: docs/book-requirements.txt
	$(PYTHON) -m venv $(BOOK_VENV)
	$(BOOK_VENV)/bin/python -m pip install -r docs/book-requirements.txt
	touch $@

BOOK_CHECK ?=
book: $(BOOK_VENV)/.installed          ## the course as a static HTML book in _build/book/html (the stored notebooks, not re-run)
	$(BOOK_VENV)/bin/python docs/build_book.py $(BOOK_CHECK)

clean:
	rm -rf $(VENV) $(BOOK_VENV) student .pytest_cache _build
