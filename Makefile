# ndfq: qualification harness for Node Declared Features (KEP-5328).
#   make e2e    builds what it needs, brings up $(TOPOLOGY), runs the suites, writes the report
#   make test   fast tests, no Docker
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c

TOPOLOGY             ?= skew-1.37
ARTIFACTS            ?= $(CURDIR)/_artifacts
KEEP_CLUSTER         ?= false
USE_EXISTING_CLUSTER ?= false
LABEL_FILTER         ?=
GINKGO_PROCS         ?= 2
GINKGO_TIMEOUT       ?= 85m
GINKGO_FLAGS         ?= $(if $(CI),--no-color,)
VERSION              ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

export TOPOLOGY ARTIFACTS KEEP_CLUSTER USE_EXISTING_CLUSTER

GO      ?= go
BIN     := $(CURDIR)/bin
NDFQ    := $(BIN)/ndfq
GINKGO  := $(BIN)/ginkgo
# The suites carry the e2e build tag: `go test ./...` never brings up a cluster.
UNIT_PKGS = ./...
export NDFQ_BIN := $(NDFQ)

.PHONY: all build test vet e2e host images cluster-up cluster-down clean

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

## test: unit tests and vet, no Docker, no cluster
test:
	$(GO) vet ./...
	$(GO) vet -tags e2e ./e2e/...
	$(GO) test -count=1 $(UNIT_PKGS)

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
