# Everyday tasks; `make help` lists them. CI runs `make test`'s command
# through .ci/run.

GO      ?= go
GOBIN   ?= $(shell $(GO) env GOPATH)/bin
PKG     := github.com/kvbench/kvbench/bench

VERSION ?= $(or $(shell git describe --tags --dirty 2>/dev/null | sed 's/^v//'),dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo none)
DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -s -w -X $(PKG).Version=$(VERSION) -X $(PKG).Commit=$(COMMIT) -X $(PKG).Date=$(DATE)

STATICCHECK_VERSION ?= v0.8.2
GORELEASER_VERSION  ?= v2.15.1
STATICCHECK ?= $(or $(shell command -v staticcheck 2>/dev/null),$(GOBIN)/staticcheck)
GORELEASER  ?= $(or $(shell command -v goreleaser 2>/dev/null),$(GOBIN)/goreleaser)

.DEFAULT_GOAL := build
.PHONY: build test lint bench snapshot release-check clean help

build: ## bin/kvbench with version, commit and date stamped in
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/kvbench .

test: ## what CI runs (.ci/run)
	$(GO) vet ./... && $(GO) test -race ./... && $(GO) test -run '^$$' -bench . -benchtime 100x ./bench/sender ./bench/stats ./sim

lint: $(STATICCHECK) ## gofmt check, go vet, staticcheck
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt -l:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

bench: ## every benchmark, briefly
	$(GO) test -bench . -run '^$$' -benchtime 200ms ./...

snapshot: $(GORELEASER) ## release archives for every platform into dist/, nothing published
	KVBENCH_COMMIT=$(COMMIT) $(GORELEASER) release --snapshot --clean

release-check: $(GORELEASER) ## validate .goreleaser.yaml
	$(GORELEASER) check

$(GOBIN)/staticcheck:
	$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

$(GOBIN)/goreleaser:
	$(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)

clean: ## remove bin/ and dist/
	rm -rf bin dist

help: ## this list
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'
