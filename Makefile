# Switchyard developer targets. `make` (or `make help`) lists them.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Prefer the go on PATH; fall back to the standard install location.
export PATH := $(PATH):/usr/local/go/bin

GO       ?= go
# ./... skips directories named testdata; the simulated provider CLIs live
# there, and so does the golden-file helper of the tests: both are tested too.
PKGS     := ./... ./testdata/simcli/... ./testdata/golden ./testdata/realcli
GOFMT    ?= gofmt
BIN      := bin/switchyard
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
FUZZTIME ?= 60s

.PHONY: help build test lint cross bench fuzz chaos clean real-clis conformance docs

help: ## Show this list of targets
	@echo "Usage: make <target> [FUZZTIME=60s] [VERSION=...]"
	@echo
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## Build ./bin/switchyard, version-stamped from git describe (or "dev")
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/switchyard

# The chaos tests (build tag chaos; docs/GUARANTEES.md cites them) are
# compiled by no target but make chaos: lint vets them too, so they always
# build.
lint: ## go vet (also with the chaos tag), and fail if gofmt would change any file
	$(GO) vet $(PKGS)
	$(GO) vet -tags chaos $(PKGS)
	@unformatted="$$($(GOFMT) -l .)"; \
	if [ -n "$$unformatted" ]; then \
		echo "gofmt would change these files (run gofmt -w):"; \
		echo "$$unformatted"; \
		exit 1; \
	fi

# The hosts the seeds name besides linux/amd64: the module must build and
# vet for each (the runner's process identity and sandbox differ off Linux).
CROSS    := darwin/amd64 darwin/arm64 linux/arm64

cross: ## Build and vet the module for macOS (amd64, arm64) and linux/arm64
	@for target in $(CROSS); do \
		echo "cross: $$target"; \
		GOOS=$${target%/*} GOARCH=$${target#*/} $(GO) build ./... ; \
		GOOS=$${target%/*} GOARCH=$${target#*/} $(GO) vet ./... ; \
	done

test: lint cross real-clis-if-possible test-tools ## lint, cross-builds, then every test with the race detector (what CI runs)
	$(GO) test -race -timeout 30m $(PKGS)

# The conformance suite checks provider facts against the real CLIs that
# make real-clis installs. make test installs them when npm is here; without
# npm those tests skip and say so, except under CI=true, where they fail.
REALCLI_DIR_CMD = ./scripts/real-clis.sh | tail -n 1

real-clis: ## Install the pinned provider CLIs from npm into a cache dir (VERSIONS="pkg@v ..." to try other releases)
	@./scripts/real-clis.sh >/dev/null

# chromium, bubblewrap, socat, ripgrep, curl and jq, for the tests that
# drive them: installed when missing and this machine allows it.
.PHONY: test-tools
test-tools:
	@./scripts/test-tools.sh

.PHONY: real-clis-if-possible
real-clis-if-possible:
	@if command -v npm >/dev/null 2>&1; then \
		./scripts/real-clis.sh >/dev/null; \
	elif [ "$${CI:-}" = "true" ]; then \
		echo "make test: npm is missing and CI=true: the conformance suite needs the real CLIs"; exit 1; \
	else \
		echo "make test: npm is missing: the real-CLI conformance tests will skip (install nodejs and npm, then make real-clis)"; \
	fi

conformance: ## Run the real-CLI conformance suite (VERSIONS="@openai/codex@0.172.0 ..." checks other releases in one command)
	SWITCHYARD_REALCLI_DIR="$$($(REALCLI_DIR_CMD))" SWITCHYARD_REALCLI_VERSIONS="$${VERSIONS:-}" \
		$(GO) test -count=1 -run 'Conformance|RealCLIs' ./providers/... ./activities/... ./cmd/switchyard

bench: ## Run every benchmark with allocation counts
	$(GO) test -run '^$$' -bench . -benchmem ./...

fuzz: ## Run each fuzz target in the repo for FUZZTIME (default 60s)
	@targets="$$($(GO) test -list '^Fuzz' ./... | \
		awk '/^Fuzz/ {names = names " " $$1; next} \
		     /^ok[ \t]/ {n = split(names, a, " "); for (i = 1; i <= n; i++) print $$2, a[i]; names = ""}')"; \
	if [ -z "$$targets" ]; then echo "no fuzz targets"; exit 0; fi; \
	while read -r pkg name; do \
		echo "==> $$pkg $$name for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s "$$pkg"; \
	done <<< "$$targets"

chaos: ## Randomized crash matrix: serve, embedded server and cluster leader SIGKILLs (build tag chaos; minutes)
	SY_CHAOS_CLUSTER_ROUNDS=$${SY_CHAOS_CLUSTER_ROUNDS:-3} \
		$(GO) test -race -count=1 -tags chaos -run 'TestFaults' -timeout 60m -v ./cmd/switchyard ./events ./engine

# TestCLIReference fails when docs/cli differs from what the commands'
# help generates; -update makes it rewrite docs/cli instead.
docs: ## Regenerate the command reference in docs/cli from the commands' help
	$(GO) test -count=1 -run '^TestCLIReference$$' ./cmd/switchyard -update

clean: ## Remove build output
	rm -rf bin

.PHONY: demo

demo: ## Build, run a three-seat panel on the simulated CLIs, replay it (a few seconds once built; a cold build takes minutes)
	@echo "demo: building $(BIN) (a first build compiles NATS and every dependency: about 3 minutes on 2 cores, then cached)"
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/switchyard
	@echo "demo: building bin/simcli, the simulated provider CLIs"
	$(GO) build -o bin/simcli ./testdata/simcli
	@echo "demo: running the panel"
	./scripts/demo.sh

.PHONY: smoke-providers

smoke-providers: build ## One real, cheap round trip through every installed, signed-in provider CLI (SPENDS; never in CI)
	./scripts/smoke-providers.sh

.PHONY: bench-e2e

bench-e2e: build ## End-to-end lanes/s and runs/s with real processes against the bare spawn rate, and the client scenario (minutes; SMALL=1 for a smoke)
	$(GO) build -o bin/benchclient ./scripts/benchclient
	./scripts/bench-e2e.sh
