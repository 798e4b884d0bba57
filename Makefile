# The targets the README and CI run. `make test` and `make demo` set everything up on a fresh
# machine: a Java 17+ runtime for Spark (installed with apt-get when missing) and .venv.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

export PYSPARK_PYTHON := $(abspath $(PY))
export PYSPARK_DRIVER_PYTHON := $(abspath $(PY))

.PHONY: install java test demo docs lint format wheel clean

# The modules are byte-compiled after the install, on every core (pip compiles them one by one),
# and explicitly: where PYTHONDONTWRITEBYTECODE is set, an import writes no bytecode, and every
# process (a test's, a Spark worker's) would compile each module it imports again
$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-compile -c constraints.txt -e '.[spark,connect,dev,bench,docs]'
	$(PY) -m compileall -q -j 0 $(VENV)/lib src > /dev/null
	@touch $(STAMP)

install: java $(STAMP)

java:
	@bash .ci/ensure-java

test: install
	$(PY) -m pytest -n 2 -q

demo: install
	$(VENV)/bin/windowagg demo

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests tools
	$(VENV)/bin/ruff format --check src tests tools
	$(VENV)/bin/mypy
	@skips=$$(grep -rn --include=*.py "fmt: skip" src tests tools | wc -l); \
	if [ "$$skips" -gt 10 ]; then echo "$$skips fmt: skip (at most 10: tables of data)"; exit 1; fi

wheel: $(STAMP)
	bash .ci/wheel

format: $(STAMP)
	$(VENV)/bin/ruff format src tests tools
	$(VENV)/bin/ruff check --fix src tests tools

clean:
	rm -rf $(VENV) build dist site .pytest_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
