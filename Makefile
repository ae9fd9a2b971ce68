# kubesched.schedulers: every command a developer, CI (.ci/run) or an operator trying it out needs.
# `make test` and `make demo` install what they need themselves (venv with pinned packages, podman, test image).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV ?= $(CURDIR)/.venv
BIN := $(VENV)/bin
BUILD := $(CURDIR)/.build
COLLECTIONS := $(BUILD)/collections
COLLECTION_LINK := $(COLLECTIONS)/ansible_collections/kubesched/schedulers
SANITY_TREE := $(BUILD)/sanity/ansible_collections/kubesched/schedulers

# This checkout resolves as kubesched.schedulers through the link; bundled collections come from the venv.
export ANSIBLE_COLLECTIONS_PATH := $(COLLECTIONS)
export CONTAINERS_CONF := $(CURDIR)/tests/hosts/containers.conf
export PATH := $(BIN):$(PATH)
export PYTHONPATH := $(COLLECTIONS)
export ANSIBLE_NOCOLOR := 1
export PY_COLORS := 0

SCENARIOS := $(sort $(notdir $(patsubst %/molecule.yml,%,$(wildcard extensions/molecule/*/molecule.yml))))
SCENARIO ?= $(SCENARIOS)

.PHONY: test deps host-deps image collection sanity lint unit molecule demo e2e bench changelog clean

## test: everything CI runs: sanity, lint, unit tests and every Molecule scenario
test: deps host-deps sanity lint unit molecule

deps: $(VENV)/.installed collection
$(VENV)/.installed: requirements/test.txt requirements/constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements/test.txt -c requirements/constraints.txt
	touch $@

collection:
	mkdir -p $(dir $(COLLECTION_LINK))
	ln -sfn $(CURDIR) $(COLLECTION_LINK)

host-deps:
	tests/hosts/install-host-deps.sh

image: host-deps
	tests/hosts/build-image.sh

sanity: deps
	rm -rf $(SANITY_TREE) && mkdir -p $(SANITY_TREE)
	git ls-files -z --cached --others --exclude-standard | rsync -a --from0 --files-from=- ./ $(SANITY_TREE)/
	cd $(SANITY_TREE) && git init -q && git add -A && \
	  ansible-test sanity --venv --python 3.11 --color no --exclude extensions/ --exclude tests/standin/

lint: deps
	ansible-lint --profile production --strict

unit: deps
	$(BIN)/pytest -p no:cacheprovider tests/unit

molecule: deps image
	for s in $(SCENARIO); do molecule test --scenario-name $$s || exit 1; done

demo: deps image
	tests/demo/run.sh

e2e: deps
	$(BIN)/pytest -p no:cacheprovider -v tests/e2e

bench: deps
	$(BIN)/python benchmarks/scheduler_config_bench.py

changelog: deps
	antsibull-changelog lint

clean:
	rm -rf $(BUILD) tests/output
