# Shield — build, run and test. `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
BIN := bin/shield
STATE_DIR ?= ./var
PROTOC_GEN_GO_VERSION := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.5.1
TOOLS := $(CURDIR)/bin/tools
TEST_TIMEOUT ?= 25m
FUZZTIME ?= 60s
BENCHCOUNT ?= 5

.PHONY: help deps build run test test-race test-race-core bench bench-opa load chaos fuzz proto lint corpus deb analyze clean test-clients promtool-check test-browser

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

deps: ## install missing Debian packages (root) or print the apt-get line
	@deploy/dev/ensure-deps.sh

build: deps ## build bin/shield
	$(GO) build -ldflags "-X main.version=$$(git describe --tags --always --dirty 2>/dev/null || echo dev)" -o $(BIN) ./cmd/shield

run: build ## serve the embedded default bundle on $(STATE_DIR)/shield.sock, metrics on 127.0.0.1:9464
	$(BIN) serve --state-dir $(STATE_DIR) --metrics-listen 127.0.0.1:9464

test: deps ## run every test
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

test-race-core: deps ## the decision path's concurrent packages under the race detector (CI runs this)
	$(GO) test -count=1 -race -timeout $(TEST_TIMEOUT) ./shield/ ./shield/approval/ ./shield/server/ ./shield/shadow/ ./shield/proxy/... ./shield/judge/ ./audit/... ./policy/ ./policy/celrules/ ./policy/regoeval/ ./agent/...

test-browser: deps ## the web console end to end in headless Chromium (Debian's chromium, chromedp)
	@command -v chromium >/dev/null || deploy/dev/ensure-deps.sh chromium
	$(GO) test -count=1 -tags browser -run '^TestConsole' -timeout 5m ./shield/server/

test-race: deps ## run every test under the race detector (slower)
	$(GO) test -count=1 -race -timeout 40m ./...

bench: deps ## in-process table: pipeline miss/hit, normaliser, each tier gated and ungated (BENCHCOUNT=5)
	@echo "machine: $$(nproc) CPUs ($$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), load average $$(cut -d' ' -f1-3 /proc/loadavg)"
	@set -o pipefail; { $(GO) test -run '^$$' -bench 'BenchmarkPipeline|BenchmarkTiers' -benchmem -count $(BENCHCOUNT) ./policy/activate/; \
	  $(GO) test -run '^$$' -bench 'BenchmarkGate' -benchmem -count $(BENCHCOUNT) ./policy/gate/; } | deploy/dev/benchtable.sh

test-clients: deps ## real Claude Code and Codex (npm, cached in .cache/test-clients) offline behind Shield's hooks and proxies
	deploy/test-clients/hooks.sh
	deploy/test-clients/proxies.sh
	deploy/test-clients/guard.sh

load: build ## over the wire: shield serve as its own process, 1/16/64/256 in flight, repeated and unique (LOAD_DURATION per row)
	deploy/dev/load.sh shield $(BIN)

bench-opa: build ## the same load against opa run --server on the default bundle's Rego (opa built from the Go module proxy)
	@test -x $(TOOLS)/opa || GOBIN=$(TOOLS) $(GO) install github.com/open-policy-agent/opa@$$($(GO) list -m -f '{{.Version}}' github.com/open-policy-agent/opa)
	deploy/dev/load.sh opa $(BIN) $(TOOLS)/opa

chaos: deps ## replay the hardening review's attack classes at full size against the real binary (CHAOS_SEED=N)
	set -o pipefail; CHAOS_FULL=1 $(GO) test -count=1 -v -timeout 60m -run '^TestChaos' ./deploy/chaos/ 2>&1 | grep -v '^=== RUN'

corpus: build ## recall and false-positive rate of the default bundle on the development corpus
	$(BIN) eval --corpus ../shared/corpus/dev.jsonl

fuzz: deps ## run each fuzz target for FUZZTIME (default 60s)
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; done

proto: ## regenerate Go from proto/ with pinned generators (protoc from Debian's protobuf-compiler)
	@deploy/dev/ensure-deps.sh protobuf-compiler libprotobuf-dev
	GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	PATH=$(TOOLS):$$PATH protoc -I proto \
	  --go_out=. --go_opt=module=github.com/shieldsec/shield \
	  --go-grpc_out=. --go-grpc_opt=module=github.com/shieldsec/shield \
	  $$(find proto -name '*.proto' | sort)

deb: deps ## build bin/shield and the .deb into dist/ (nfpm), then check it
	deploy/deb/build.sh dist
	deploy/deb/check.sh "$$(ls -t dist/shield_*.deb | head -1)"

analyze: ## systemd-analyze security score of the unit (2.0 or lower expected)
	systemd-analyze security --offline=true deploy/systemd/shield.service | tail -1

PROMTOOL_VERSION := v0.316.0
promtool-check: ## promtool check + unit tests of deploy/prometheus rules (promtool built from the Go module proxy; skipped, saying so, if it cannot be)
	@if [ ! -x $(TOOLS)/promtool ] && ! GOBIN=$(TOOLS) $(GO) install github.com/prometheus/prometheus/cmd/promtool@$(PROMTOOL_VERSION); then \
	  echo "promtool-check: SKIPPED: promtool $(PROMTOOL_VERSION) could not be built from the Go module proxy"; exit 0; fi; \
	$(TOOLS)/promtool check rules deploy/prometheus/shield-alerts.yml && \
	cd deploy/prometheus && $(TOOLS)/promtool test rules shield-alerts.test.yml

lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean: ## remove build output
	rm -rf bin dist
