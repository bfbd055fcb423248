# ndfq: qualification harness for Node Declared Features (KEP-5328).
#   make e2e    builds what it needs, brings up $(TOPOLOGY), runs the suites, writes the report
#   make test   fast tests, no Docker
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c

# KUBERNETES_VERSION (e.g. 1.38.0-beta.0) replaces the control plane; alone it
# qualifies the next minor on the `next` topology.
KUBERNETES_VERSION   ?=
TOPOLOGY             ?= $(if $(KUBERNETES_VERSION),next,skew-1.37)
ARTIFACTS            ?= $(CURDIR)/_artifacts
KEEP_CLUSTER         ?= false
USE_EXISTING_CLUSTER ?= false
LABEL_FILTER         ?=
GINKGO_PROCS         ?= 2
GINKGO_TIMEOUT       ?= 85m
GINKGO_FLAGS         ?= $(if $(CI),--no-color,)
VERSION              ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

export TOPOLOGY KUBERNETES_VERSION ARTIFACTS KEEP_CLUSTER USE_EXISTING_CLUSTER

GO      ?= go
BIN     := $(CURDIR)/bin
NDFQ    := $(BIN)/ndfq
GINKGO  := $(BIN)/ginkgo
# The suites carry the e2e build tag: `go test ./...` never brings up a cluster.
UNIT_PKGS = ./...
export NDFQ_BIN := $(NDFQ)

# Linters, pinned; `go install pkg@version` builds each with its own go.mod.
ACTIONLINT_VERSION    ?= v1.7.12
GOLANGCI_LINT_VERSION ?= v2.15.0

.PHONY: all build test vet lint e2e host images cluster-up cluster-down clean

all: build

build: $(NDFQ) $(BIN)/ndfq-runc $(GINKGO)

# Binaries are rebuilt every time; go's build cache makes that cheap and
# keeps them in step with the tree.
.PHONY: $(NDFQ) $(BIN)/ndfq-runc $(GINKGO)
$(NDFQ):
	$(GO) build -trimpath -ldflags "-X main.version=$(VERSION)" -o $@ ./cmd/ndfq
$(BIN)/ndfq-runc:
	$(GO) build -trimpath -buildvcs=false -o $@ ./cmd/ndfq-runc
$(GINKGO):
	$(GO) build -o $@ github.com/onsi/ginkgo/v2/ginkgo

## test: unit tests, vet and the workflow linter, no Docker, no cluster
test: $(BIN)/actionlint
	$(GO) vet ./...
	$(GO) vet -tags e2e ./e2e/...
	$(BIN)/actionlint
	$(GO) test -count=1 $(UNIT_PKGS)

## lint: golangci-lint (.golangci.yaml) over the code and the suites, and actionlint
lint: $(BIN)/golangci-lint $(BIN)/actionlint
	$(BIN)/golangci-lint run ./...
	$(BIN)/golangci-lint run --build-tags e2e ./e2e/...
	$(BIN)/actionlint

$(BIN)/actionlint:
	GOBIN=$(BIN) $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)
$(BIN)/golangci-lint:
	GOBIN=$(BIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

## host: a Docker engine that can run kind nodes on this machine
host: $(NDFQ) $(BIN)/ndfq-runc
	$(NDFQ) host setup

## images: node images for $(TOPOLOGY) (content-addressed cache)
images: host
	$(NDFQ) images build --topology $(TOPOLOGY)

## e2e: images, cluster, suites, report
e2e: images $(GINKGO)
	mkdir -p $(ARTIFACTS)
	$(GINKGO) -v $(GINKGO_FLAGS) --tags e2e --procs=$(GINKGO_PROCS) --timeout=$(GINKGO_TIMEOUT) \
	  --label-filter='$(LABEL_FILTER)' \
	  --junit-report=junit.xml --json-report=report.json --output-dir=$(ARTIFACTS) \
	  ./e2e

## cluster-up / cluster-down: the topology without the suites
cluster-up: images
	$(NDFQ) cluster up --topology $(TOPOLOGY) --artifacts $(ARTIFACTS)
cluster-down: $(NDFQ)
	$(NDFQ) cluster down --topology $(TOPOLOGY) --artifacts $(ARTIFACTS)

clean:
	rm -rf $(BIN) $(ARTIFACTS)
