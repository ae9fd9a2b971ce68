# kubesched.schedulers: every command a developer, CI (.ci/run) or an operator trying it out needs.
# `make test` and `make demo` install what they need themselves (venv with pinned packages, podman, test image).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
BUILD := $(CURDIR)/.build
# Every target that makes test hosts (podman hosts and real-node clusters of fixed names) runs under one lock of the
# machine, so that a second run waits rather than remove the first's hosts under it (the script says how).
HOSTS_LOCK := tests/support/hosts-lock.sh

## help: this list (what `make` alone prints): the targets a developer runs, and what each does
.DEFAULT_GOAL := help
.PHONY: help
help:
	@grep -h '^## ' $(MAKEFILE_LIST) | cut -c4-

# ansible-core: every release upstream still supports, each on a controller Python it supports, in a venv of its own
# with the `ansible` package that bundles it and the same tools, pinned in requirements/constraints-<core>.txt
# (docs/support-matrix.md). CORE picks the venv a target runs in; the newest core (.venv links to it) runs everything,
# the others sanity and the unit tests (make matrix).
CORES := 2.19 2.20 2.21 2.22
NEWEST_CORE := $(lastword $(CORES))
CORE ?= $(NEWEST_CORE)
CORE_PYTHON_VERSION_2.19 := 3.11
CORE_PYTHON_VERSION_2.20 := 3.13
CORE_PYTHON_VERSION_2.21 := 3.12
CORE_PYTHON_VERSION_2.22 := 3.13
# A core tried on its pre-release before it ships, not supported (none today): it has a controller Python and a
# constraints file (its pre-release and the `ansible` pre-release that bundles it over the newest core's pins), so
# `make deps sanity unit CORE=<core>` run it, but it is not in CORES (make test, make matrix) nor in requires_ansible
# until its release day moves it there (docs/support-matrix.md, "A new ansible-core").
PRERELEASE_CORES :=
CORE_PYTHON_VERSION := $(CORE_PYTHON_VERSION_$(CORE))
CONSTRAINTS := requirements/constraints-$(CORE).txt
# What does not depend on the checkout is kept in CACHE: the venvs (a Python and pins, nothing of the checkout, which
# resolves through COLLECTION_LINK), each named after its Python version and its pins (tests/support/venv.sh),
# and the real nodes' image tars (tests/realnode/images.sh), so a fresh clone (CI's) starts with them.
CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/kubesched
# pins FILES[,TEXT]: a hash of the files' content and of TEXT (an interpreter's path, where it names the venv).
pins = $(shell { cat $(1); printf %s '$(2)'; } | sha256sum | cut -c1-12)
VENV ?= $(CACHE)/venv-$(CORE)-py$(CORE_PYTHON_VERSION)-$(call pins,requirements/test.txt $(CONSTRAINTS))
BIN := $(VENV)/bin
COLLECTIONS := $(BUILD)/collections
COLLECTION_LINK := $(COLLECTIONS)/ansible_collections/kubesched/schedulers

# This checkout resolves as kubesched.schedulers through the link; bundled collections come from the venv.
export ANSIBLE_COLLECTIONS_PATH := $(COLLECTIONS)
export CONTAINERS_CONF := $(CURDIR)/tests/hosts/containers.conf
# The test hosts' connection: podman exec with Ansible's pipelining (tests/hosts/connection_plugins/podman_pipelined.py).
export ANSIBLE_CONNECTION_PLUGINS := $(CURDIR)/tests/hosts/connection_plugins
export PATH := $(BIN):$(PATH)
export PYTHONPATH := $(COLLECTIONS)
export ANSIBLE_NOCOLOR := 1
export PY_COLORS := 0
export NO_COLOR := 1
export KUBESCHED_NODE_IMAGES := $(CACHE)/node-images
# ansible-playbook's result polling, eased for runs side by side (tests/ansible.cfg says why).
export ANSIBLE_CONFIG := $(CURDIR)/tests/ansible.cfg

# The Python of the real suites' localhost tasks (the roles' API calls and waits through kubernetes.core, run by
# e2e, molecule and e2e-scheduler-plugins): the system's Python 3 (Debian's 3.11, as on the test hosts' masters) in
# a venv of its own with what the collection's controller-side modules need (requirements.txt, kubernetes.core's
# requests-oauthlib), pinned as the newest core's. Ansible runs localhost's modules on the Python an inventory names
# (the playbooks honour it, docs/support-matrix.md); this one, built with PGO, runs a kubernetes.core module in a
# third less CPU than pyenv's 3.12 of the newest core's venv. The unit tests and the AWX-style jobs keep the
# controller's Python for localhost, as Ansible's implicit localhost and an execution environment do.
LOCALHOST_PYTHON ?= /usr/bin/python3
LOCALHOST_VENV = $(CACHE)/localhost-$(call pins,requirements.txt $(CONSTRAINTS),$(LOCALHOST_PYTHON))

# Real Kubernetes binaries for tests, demo and benchmarks (never for the product): `make binaries` names every binary
# the tests need (KUBE_*_BIN variables, then $${KUBE_BINARIES_DIR:-~/.cache/kube-binaries}, then the official release
# downloads where reachable, then a build from the upstream Go modules pinned in tests/binaries/modules where `go` is
# on the PATH) in $(K8S_ENV); `$(WITH_K8S) command` runs a command with them. Variables already set win.
# BINARIES_FOR: what to find or build: test (make test's), demo (make demo's), all (also every pinned kube-scheduler).
# A suite whose binaries are missing is skipped, loudly (tests/support/suite.sh), and `make test` ends with the count.
BINARIES_FOR ?= test
K8S_ENV := $(BUILD)/k8s.env
WITH_K8S := set -a && . $(K8S_ENV) && set +a &&
export SUITE_RESULTS := $(BUILD)/results

SCENARIOS := $(sort $(notdir $(patsubst %/molecule.yml,%,$(wildcard extensions/molecule/*/molecule.yml))))
SCENARIO ?= $(SCENARIOS)

.PHONY: test deps host-deps binaries image collection sanity lint unit molecule drills demo demo-clean e2e bench bench-rollout bench-lease-gaps bench-fleet bench-hostile clean docs differential layout

## test: everything CI runs: sanity, lint, unit and differential tests, the e2e test and every Molecule scenario
## with its drills (the rolling timings: make drills), on the real binaries `make binaries` finds (a suite whose binaries are missing is skipped, loudly)
# Four chains side by side; the real-node clusters keep their hosts until every chain ended (no real-node cluster is
# removed while another runs): tests/support/run-test.sh says why and how.
REAL_NODE_SCENARIOS := static_pod
# The older ansible-core releases whose sanity make test runs beside the newest core's whole run, and those of them
# whose CORE_UNIT_TESTS it runs too: the oldest, so that the unit tests run on both ends of the supported range with
# the newest core's (the cores between get their sanity here and their unit tests in make matrix;
# docs/support-matrix.md says why). TEST_OLDER_CORES= leaves them all to make matrix.
TEST_OLDER_CORES ?= $(filter-out $(NEWEST_CORE),$(CORES))
TEST_OLDER_CORE_UNITS ?= $(firstword $(TEST_OLDER_CORES))
test: deps host-deps binaries image
	+MAKE="$(MAKE)" BUILD="$(BUILD)" K8S_ENV="$(K8S_ENV)" CORE="$(CORE)" $(HOSTS_LOCK) tests/support/run-test.sh "$(TEST_E2E_MINORS)" \
	  "$(REAL_NODE_SCENARIOS)" "$(filter-out $(REAL_NODE_SCENARIOS),$(SCENARIOS))" \
	  "$(TEST_OLDER_CORES)" "$(TEST_OLDER_CORE_UNITS)" "$(CORE_UNIT_TESTS)" "$(SHIPPED_SANITY_TARGETS)"

# .venv, the newest core's venv where the docs' commands look for it (an older checkout's .venv directory is replaced
# by the link). Safe to run twice at once: venv.sh locks, and the link is made only when it differs.
deps: collection
	@[ -n "$(CORE_PYTHON_VERSION)" ] || { echo "CORE=$(CORE) is not one of $(CORES) $(PRERELEASE_CORES)" >&2; exit 2; }
	tests/support/venv.sh $(VENV) $(CORE_PYTHON_VERSION) -r requirements/test.txt -c $(CONSTRAINTS)
ifeq ($(CORE),$(NEWEST_CORE))
	[ "$$(readlink .venv)" = "$(VENV)" ] || { rm -rf .venv && ln -sfn $(VENV) .venv; }
endif

# Safe to run twice at once (make test runs sub-makes side by side): the link is made only when it differs.
collection:
	mkdir -p $(dir $(COLLECTION_LINK))
	[ "$$(readlink $(COLLECTION_LINK))" = "$(CURDIR)" ] || ln -sfn $(CURDIR) $(COLLECTION_LINK)

host-deps:
	tests/hosts/install-host-deps.sh

# A private temp file per run, renamed into place: safe to run twice at once. Prints where each binary came from.
binaries: host-deps
	mkdir -p $(BUILD)
	$(PYTHON) tests/support/k8s_binaries.py --for $(BINARIES_FOR) > $(K8S_ENV).$$$$ && mv -f $(K8S_ENV).$$$$ $(K8S_ENV)

## binaries-all: every pinned release's kube-scheduler too (1.30 to the newest), as make differential needs
.PHONY: binaries-all
binaries-all:
	$(MAKE) --no-print-directory binaries BINARIES_FOR=all

image: host-deps
	tests/hosts/build-image.sh

# ansible-test gets a venv of its own (its pinned linters would clash with ansible-lint's), one per core (CORE):
# sanity runs with that core's own ansible-test and rules, on that core's venv Python, on a copy of the checkout of
# its own, so every core's sanity can run at once. Ignore files are per core (tests/sanity/ignore-<core>.txt), for
# rules that do not apply, never for a finding to fix. --venv mode is not usable here because it downloads a pip
# bootstrap script from a host outside the package registries: tests/sanity/offline_get_pip.py stands in for it; and
# a linter requirement ansible-test pins to a URL outside them (2.22's dill) is replaced by a release the package
# index serves (tests/sanity/offline_requirements.py).
SANITY := $(BUILD)/sanity-$(CORE)
# Its venv is in CACHE (ansible-test installs its linters' pins into it on the first run); the sanity run holds its lock,
# so two checkouts' runs of one core take turns.
ANSIBLE_CORE_PIN = $(shell grep '^ansible-core==' $(CONSTRAINTS))
SANITY_VENV ?= $(CACHE)/sanity-$(CORE)-py$(CORE_PYTHON_VERSION)-$(subst ==,-,$(ANSIBLE_CORE_PIN))
SANITY_TREE := $(SANITY)/ansible_collections/kubesched/schedulers

# ansible-test's targets (paths, a directory with its trailing /); empty: the whole checkout. make test gives the older
# cores SHIPPED_SANITY_TARGETS, what the built collection ships (galaxy.yml's build_ignore leaves tests, extensions
# and benchmarks out): their rules judge what their users install, in half the time; the newest core checks it all.
SANITY_TARGETS ?=
SHIPPED_SANITY_TARGETS := plugins/ roles/ playbooks/ meta/ docs/ changelogs/ README.md CHANGELOG.rst CONTRIBUTING.md \
  LICENSE bindep.txt requirements.txt .ansible-lint .ansible-lint-ignore
sanity:
	tests/support/venv.sh $(SANITY_VENV) $(CORE_PYTHON_VERSION) $(ANSIBLE_CORE_PIN)
	$(SANITY_VENV)/bin/python tests/sanity/offline_requirements.py $(SANITY_VENV)
	v=$$(sed -n "s/^ *pip='\([0-9.]*\)',$$/\1/p" $(SANITY_VENV)/lib/python3*/site-packages/ansible_test/_internal/python_requirements.py); \
	  f=$$HOME/.ansible/test/cache/get_pip_$${v//./_}.py; cmp -s tests/sanity/offline_get_pip.py $$f || \
	  { install -D -m 0644 tests/sanity/offline_get_pip.py $$f.$$$$ && mv -f $$f.$$$$ $$f; }
	rm -rf $(SANITY_TREE) && mkdir -p $(SANITY_TREE)
	git ls-files -z --cached --others --exclude-standard | rsync -a --from0 --files-from=- ./ $(SANITY_TREE)/
	cd $(SANITY_TREE) && git init -q && git add -A && \
	  PATH=$(SANITY_VENV)/bin:$$PATH ANSIBLE_COLLECTIONS_PATH=$(SANITY) flock $(SANITY_VENV).lock \
	  $(SANITY_VENV)/bin/ansible-test sanity --local --requirements --python $(CORE_PYTHON_VERSION) --color no \
	  $(SANITY_TARGETS)

lint: deps
	# ansible-lint installs the collection it lints into ANSIBLE_HOME's collections (~/.ansible without it), where
	# every later ansible-lint or ansible-playbook on this machine would find that stale copy before the checkout.
	rm -rf $(BUILD)/lint-home
	ANSIBLE_HOME=$(BUILD)/lint-home ansible-lint --profile production --strict
	antsibull-changelog lint

# Unit tests, and the differential tests that compare the library with the real kube-scheduler (DIFF_MINORS), on
# the venv of CORE; UNIT_TESTS narrows them. make test runs them all on the newest core and CORE_UNIT_TESTS on the
# others: the tests whose outcome depends on ansible-core (the action plugins, modules and filters as ansible-core
# runs them, playbooks and roles through a real ansible-playbook, the built tarball installed and run).
UNIT_TESTS ?= tests/unit tests/differential
CORE_UNIT_TESTS := tests/unit/plugins/action tests/unit/plugins/modules tests/unit/plugins/filter tests/unit/playbooks \
  tests/unit/ee/test_runtime_metadata.py tests/unit/ee/test_readme_install.py
# UNIT_MARKERS: a pytest -m expression; by default it leaves out the placement preview's slow real-binary cases
# (marker slow_preview, tests/unit/conftest.py: make preview-tests runs them; UNIT_MARKERS= runs everything).
UNIT_MARKERS ?= not slow_preview
unit: deps binaries
	$(WITH_K8S) $(BIN)/pytest -p no:cacheprovider -rfEs --durations=30 -m "$(UNIT_MARKERS)" $(UNIT_TESTS)

## preview-tests: the placement preview's real-binary cases that make test leaves out (pytest marker slow_preview):
## every signal an interrupted preview meets, several runs of several configurations, the deployment role's and the
## rollout's Check jobs on the real preview, scheduler-plugins' scheduler; make test keeps one small case of each behaviour
.PHONY: preview-tests
preview-tests: deps binaries
	$(WITH_K8S) $(BIN)/pytest -p no:cacheprovider -rfEs --durations=15 -m slow_preview tests/unit

## matrix: every supported ansible-core (CORES): its sanity and its unit tests (MATRIX_UNIT_TESTS, default all of
## them), each core on its own venv; make test runs the same with CORE_UNIT_TESTS on the older cores
MATRIX_UNIT_TESTS ?= $(UNIT_TESTS)
.PHONY: matrix
matrix:
	rc=0; for core in $(CORES); do \
	  $(MAKE) --no-print-directory sanity unit CORE=$$core UNIT_TESTS="$(MATRIX_UNIT_TESTS)" || rc=1; done; exit $$rc

## new-core: VERSION=2.22.0 (a release or pre-release PyPI serves, e.g. 2.22.0rc1): a venv with that ansible-core on
## top of the newest core's pins, then its sanity (its own ansible-test and rules) and the unit tests that exercise
## ansible-core; every failure listed in .build/new-core-VERSION/report.txt. Nothing of the checkout changes: adding
## the core is then a constraints file and a line in CORES (docs/support-matrix.md). Its controller Python:
## NEW_CORE_PYTHON, else the one the Makefile names for that core (CORE_PYTHON_VERSION_2.22), else the newest core's
.PHONY: new-core
new-core:
	@[ -n "$(VERSION)" ] || { echo "usage: make new-core VERSION=2.22.0 [NEW_CORE_PYTHON=3.13]" >&2; exit 2; }
	tests/support/new-core.sh "$(VERSION)" \
	  "$(or $(NEW_CORE_PYTHON),$(CORE_PYTHON_VERSION_$(basename $(VERSION))),$(CORE_PYTHON_VERSION_$(NEWEST_CORE)))" \
	  "requirements/constraints-$(NEWEST_CORE).txt" "$(CORE_UNIT_TESTS)"

## galaxy-importer: the tarball `ansible-galaxy collection build` makes, checked by galaxy-importer 0.4.44 as Galaxy
## checks an upload (metadata, documentation, changelog, ansible-lint), any warning a failure
## (tests/support/galaxy_import.py); in its own venv (requirements/galaxy-importer.txt)
# Its Python is that of the ansible-core its own pins hold, which Galaxy's importer runs, not the newest core's.
IMPORTER_PYTHON_VERSION = $(CORE_PYTHON_VERSION_$(basename $(shell sed -n 's/^ansible-core==//p' requirements/galaxy-importer.txt)))
IMPORTER_VENV = $(CACHE)/importer-py$(IMPORTER_PYTHON_VERSION)-$(call pins,requirements/galaxy-importer.txt)
RELEASE_DIR := $(BUILD)/release
.PHONY: galaxy-importer
galaxy-importer: deps
	tests/support/venv.sh $(IMPORTER_VENV) $(IMPORTER_PYTHON_VERSION) -r requirements/galaxy-importer.txt
	rm -rf $(RELEASE_DIR) && mkdir -p $(RELEASE_DIR)
	$(BIN)/ansible-galaxy collection build --output-path $(RELEASE_DIR) .
	$(IMPORTER_VENV)/bin/python tests/support/galaxy_import.py $(RELEASE_DIR)/kubesched-schedulers-*.tar.gz

## release: VERSION=x.y.z, a semantic version (docs/versioning-policy.md): galaxy.yml's version, the changelog
## fragments turned into CHANGELOG.rst and changelogs/changelog.yaml (antsibull-changelog release), then the tarball
## built and checked by galaxy-importer (.build/release). Review, commit and tag; nothing is pushed or uploaded
.PHONY: release
release: deps
	@[ -n "$(VERSION)" ] || { echo "usage: make release VERSION=x.y.z" >&2; exit 2; }
	$(BIN)/python tests/support/release.py "$(VERSION)"
	$(MAKE) --no-print-directory galaxy-importer

# Every scenario runs even when one fails, MOLECULE_JOBS (default 2) at a time (each mostly waits on its hosts); their
# logs follow in order. Each runs the real binaries its `needs-binaries` names (skipped, loudly, when one is missing):
# the kube-scheduler of its minor (SYSTEMD_KUBE_MINOR, STATIC_POD_KUBE_MINOR: see its molecule.yml) against a
# control plane of its own.
molecule: deps image binaries
	$(WITH_K8S) $(HOSTS_LOCK) tests/support/run-molecule.sh $(SCENARIO)

## drills: every Molecule scenario with its timing drills (MOLECULE_DRILLS=1): the longest time pods stayed
## unscheduled while a config change rolled over three masters (systemd restarts; static pods replaced by real
## kubelets), printed as `drill: {...}` lines. Measurements, not checks: `make test` leaves them out.
drills: deps image binaries
	$(WITH_K8S) MOLECULE_DRILLS=1 $(HOSTS_LOCK) tests/support/run-molecule.sh $(SCENARIO)

demo: BINARIES_FOR := demo
demo: deps image binaries
	$(WITH_K8S) $(HOSTS_LOCK) tests/demo/run.sh

demo-clean:
	$(HOSTS_LOCK) tests/demo/clean.sh

# The e2e (deployment and verify roles and AWX-style runner jobs on a real cluster: control plane and kubelets of the
# scheduler's minor or one newer) once per scheduler minor in E2E_MINORS; every minor runs even when one fails, one
# without its binaries is skipped, loudly. `make test` runs the newest (TEST_E2E_MINORS) within its time budget.
# E2E_TESTS narrows what pytest runs (default: all of tests/e2e but the preview's fidelity test, which has a target of
# its own, below): make e2e E2E_MINORS=1.35 E2E_TESTS=tests/e2e/test_cluster_view.py
E2E_MINORS ?= 1.36 1.37
TEST_E2E_MINORS ?= 1.37
E2E_TESTS ?= $(CURDIR)/tests/e2e --ignore=$(CURDIR)/tests/e2e/test_preview_fidelity.py
export E2E_TESTS
e2e e2e-preview-fidelity e2e-preview-fidelity-plugins molecule drills e2e-scheduler-plugins: export KUBESCHED_LOCALHOST_PYTHON = $(LOCALHOST_VENV)/bin/python
e2e e2e-preview-fidelity e2e-preview-fidelity-plugins molecule drills e2e-scheduler-plugins: localhost-venv
.PHONY: localhost-venv
localhost-venv:
	tests/support/venv.sh $(LOCALHOST_VENV) $(LOCALHOST_PYTHON) -r requirements.txt requests-oauthlib -c $(CONSTRAINTS)

e2e: deps binaries
	$(WITH_K8S) $(HOSTS_LOCK) tests/support/run-e2e.sh $(E2E_MINORS)

## e2e-preview-fidelity: the placement preview's prediction of a profile change (LeastAllocated -> MostAllocated) against
## where the e2e's real cluster places the same pods once playbooks/static_pod.yml rolled the change out
## (tests/e2e/test_preview_fidelity.py, on a cluster of its own of PREVIEW_FIDELITY_MINOR; about 4 minutes with the
## cluster's start, 3 in the e2e's chain, make test's longest: too long for make test, whose unit tests keep the small
## case on a local API server)
PREVIEW_FIDELITY_MINOR ?= $(lastword $(TEST_E2E_MINORS))
.PHONY: e2e-preview-fidelity
e2e-preview-fidelity: deps binaries
	$(WITH_K8S) E2E_TESTS="-rfEsP $(CURDIR)/tests/e2e/test_preview_fidelity.py" E2E_SUITE=e2e-preview-fidelity \
	  $(HOSTS_LOCK) tests/support/run-e2e.sh $(PREVIEW_FIDELITY_MINOR)

## e2e-preview-fidelity-plugins: the placement preview's prediction of a scheduler-plugins profile change
## (NodeResourcesAllocatable's mode Most -> Least) against where scheduler-plugins 0.34.7's scheduler places the same
## pods once the deployment role rolled the change out, on e2e-scheduler-plugins' cluster
## (tests/e2e_plugins/test_preview_fidelity_plugins.py; 113-131 s, 151-170 s with the cluster's start: left out of make test's
## e2e-scheduler-plugins, whose budget is full)
.PHONY: e2e-preview-fidelity-plugins
e2e-preview-fidelity-plugins: deps image binaries
	$(WITH_K8S) $(HOSTS_LOCK) tests/support/suite.sh e2e-preview-fidelity-plugins $(SCHEDULER_PLUGINS_E2E_NEEDS) -- \
	  pytest -p no:cacheprovider -v -rfEsP --durations=10 tests/e2e_plugins/test_preview_fidelity_plugins.py

## e2e-scheduler-plugins: scheduler-plugins 0.34.7 (its scheduler and controller built from its Go module) deployed by
## the deployment role on a real 1.35 cluster: CRDs, RBAC, controller, gang scheduling, an ElasticQuota, state absent
## (all of tests/e2e_plugins but the preview's fidelity test, which has a target of its own, above)
SCHEDULER_PLUGINS_E2E_NEEDS := SCHEDULER_PLUGINS_SCHEDULER_BIN_0_34_7 SCHEDULER_PLUGINS_CONTROLLER_BIN_0_34_7 \
  KUBE_SCHEDULER_BIN_1_35 KUBE_APISERVER_BIN_1_35 KUBE_CONTROLLER_MANAGER_BIN_1_35 KUBELET_BIN_1_35 ETCD_BIN
.PHONY: e2e-scheduler-plugins
e2e-scheduler-plugins: deps image binaries
	$(WITH_K8S) $(HOSTS_LOCK) tests/support/suite.sh e2e-scheduler-plugins $(SCHEDULER_PLUGINS_E2E_NEEDS) -- \
	  pytest -p no:cacheprovider -v -rfEs --durations=10 tests/e2e_plugins \
	  --ignore=tests/e2e_plugins/test_preview_fidelity_plugins.py

bench: deps image binaries
	$(BIN)/python benchmarks/scheduler_config_bench.py
	$(WITH_K8S) $(HOSTS_LOCK) $(BIN)/python benchmarks/rollout_vs_naive.py

## bench-rollout: the systemd and static_pod playbooks against a naive playbook on three local masters: wall time and
## the calls each master cost (modules sent, tasks run), per phase, against the targets in benchmarks/rollout_vs_naive.py
bench-rollout: deps image binaries collection
	$(WITH_K8S) $(HOSTS_LOCK) $(BIN)/python benchmarks/rollout_vs_naive.py

## bench-lease-gaps: how long the default scheduler's lease is unheld and the longest a pod stays unscheduled while a
## config-only change and a bad change roll over one master and three (static_pod on real kubelets, then systemd;
## LEASE_GAPS_MODES picks), on the real test cluster: a table of figures, no pass/fail
bench-lease-gaps: deps image binaries collection
	$(WITH_K8S) $(HOSTS_LOCK) $(BIN)/python benchmarks/lease_gaps.py

## bench-fleet: a config change over N = 1, 4 and 8 small clusters of systemd masters (two each, one API server with a
## lease per cluster) with playbooks/systemd.yml's waves: T(N), T(8)/T(1), the load average and where the CPU
## went (controller, test hosts, machine) with the bound 2 cores put on T(8); no pass/fail
bench-fleet: deps image binaries collection
	$(WITH_K8S) $(HOSTS_LOCK) $(BIN)/python benchmarks/fleet.py

## fuzz: the property suite over every entry point (tests/unit/hardening/test_properties.py) with FUZZ_SCALE times
## its examples (default 20, about 20000) and a new random seed each run; `make unit` runs it with a fixed seed
FUZZ_SCALE ?= 20
.PHONY: fuzz
fuzz: deps
	FUZZ_SCALE=$(FUZZ_SCALE) $(BIN)/pytest -p no:cacheprovider -q tests/unit/hardening/test_properties.py

## bench-preview: the placement preview (kubesched.schedulers.placement_preview's engine) on a snapshot of PREVIEW_NODES Node
## objects and PREVIEW_PODS running pods (default 1000 and 30000), LeastAllocated against MostAllocated, one run each: the
## time of each phase, the peak memory, and the same kube-scheduler's own throughput on this machine
.PHONY: bench-preview
PREVIEW_NODES ?= 1000
PREVIEW_PODS ?= 30000
bench-preview: deps binaries collection
	$(WITH_K8S) $(BIN)/python benchmarks/placement_preview.py --nodes $(PREVIEW_NODES) --pods $(PREVIEW_PODS)

## bench-hostile: worst-case time and peak RSS of the hostile inputs (alias bomb, nesting, size,
## long numbers, 10000 instances, a 1 MiB flag)
bench-hostile: deps
	$(BIN)/python benchmarks/hostile_inputs.py

# The differential corpus through the config library and the real kube-scheduler of every minor (1.30-1.38) whose
# binary is present: a table per minor and family, every disagreement, the throughput; then it re-records those
# minors' answers in tests/differential/recorded/<minor>.jsonl (what CI compares the library with when the binaries
# are missing) and counts the changed answers: review them with `git diff tests/differential/recorded`.
# DIFF_MINORS="1.30 1.35" limits the minors.
.PHONY: differential
differential: BINARIES_FOR := all
differential: deps binaries
	$(WITH_K8S) rc=0; $(BIN)/python tests/differential/run.py || rc=$$?; \
	git --no-pager diff --stat -- tests/differential/recorded; exit $$rc

## new-minor: VERSION=1.38.0-rc.0: pin that release (a pre-release where the Go module proxy serves one), build its
## kube-scheduler, run the differential corpus through it and the library, list every disagreement for review and
## record its answers (tests/differential/new_minor.py; the list also in .build/new-minor-VERSION.txt). SUBSTITUTES:
## MODULE=VERSION pairs for modules the release needs that the Go module proxy refuses (said on their go.mod lines)
.PHONY: new-minor
new-minor: deps
	@[ -n "$(VERSION)" ] || { echo "usage: make new-minor VERSION=1.38.0-rc.0" >&2; exit 2; }
	$(BIN)/python tests/differential/new_minor.py $(VERSION) $(addprefix --substitute=,$(SUBSTITUTES))

## newer-releases: the releases newer than each pinned one (tests/binaries/modules) that the Go module proxy serves,
## asked for by name as it serves patches it does not list (tests/binaries/newer_releases.py; NEWER_MISSES names not
## served in a row end a walk, default 3): a line per pin. Repins and builds nothing (tests/binaries/pin.py does)
NEWER_MISSES ?= 3
.PHONY: newer-releases
newer-releases:
	$(PYTHON) tests/binaries/newer_releases.py --misses $(NEWER_MISSES)

# The docs site: antsibull-docs lints the collection's docs (plugins, roles' argument specs, docs/docsite) and writes
# the RST pages, sphinx builds them into $(DOCS)/html (config in docs/site). Any lint error or warning fails it.
# References are checked against this collection and its dependencies (ansible.builtin, kubernetes.core): `all`
# would load every collection of the venv's ansible package and take minutes.
# The linter runs without this Makefile's PYTHONPATH: it lints a copy of the collection in a fresh
# antsibull-docs-XXXXXXXX directory, and with the checkout importable as kubesched.schedulers too, the plugins' paths
# were taken relative to the checkout, so the copy's directory name reached every page's edit link, and a name ending
# in "_" (one run in 37) made it an RST reference: "Unknown target name" (tests/unit/ee/test_docs_site.py).
DOCS := $(BUILD)/docs
.PHONY: docs
docs: deps
	env -u PYTHONPATH antsibull-docs lint-collection-docs --plugin-docs --validate-collection-refs dependent \
	  --disallow-unknown-collection-refs .
	rm -rf $(DOCS) && mkdir -p $(DOCS) && mkdir -m 0700 $(DOCS)/rst
	antsibull-docs --config-file docs/site/antsibull-docs.cfg collection --use-current --squash-hierarchy \
	  --fail-on-error --cleanup everything --dest-dir $(DOCS)/rst kubesched.schedulers
	sphinx-build -W --keep-going -n -q -b html -c docs/site $(DOCS)/rst $(DOCS)/html
	@echo "docs: $(DOCS)/html/index.html"

# The README's "What is inside" and CONTRIBUTING.md's layout, rewritten from the tree (tests/unit/ee/test_layout.py
# fails when either drifts from it).
layout: deps
	$(BIN)/python docs/layout.py

clean:
	rm -rf $(BUILD) tests/output
