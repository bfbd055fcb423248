# ndfq: qualification harness for Node Declared Features (KEP-5328).
#   make e2e    builds what it needs, brings up $(TOPOLOGY), runs the suites, writes the report
#   make test   fast tests, no Docker
#   make bench  the scheduler and probe measurements on simulated fleets, and the
#               whole-fleet probe on the live topology (median of 5)
#   make verify the oracle against each Kubernetes release (downloads them)
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
FOCUS                ?=
SKIP                 ?=
GINKGO_PROCS         ?= 2
GINKGO_TIMEOUT       ?= 85m
# A release's semver tag; a checkout says the nearest tag (v0.1.0-3-gabc) or dev.
VERSION              ?= $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || echo dev)
IMAGE_REPO           ?= ghcr.io/ndfq/ndfq
DIST                 ?= $(CURDIR)/_dist

export TOPOLOGY KUBERNETES_VERSION ARTIFACTS KEEP_CLUSTER USE_EXISTING_CLUSTER LABEL_FILTER FOCUS SKIP GINKGO_PROCS GINKGO_TIMEOUT

GO      ?= go
BIN     := $(CURDIR)/bin
NDFQ    := $(BIN)/ndfq
GINKGO  := $(BIN)/ginkgo
# The suites carry the e2e build tag: `go test ./...` never brings up a cluster.
UNIT_PKGS = ./...
export NDFQ_BIN := $(NDFQ)
export NDFQ_PROBE_IMAGE := $(BIN)/ndfq-image.tar
export NDFQ_PROBE_JOB   := $(BIN)/probe-job.yaml

# Linters, pinned; `go install pkg@version` builds each with its own go.mod.
ACTIONLINT_VERSION    ?= v1.7.12
# promtool and the e2e cluster's Prometheus: one release, built from source.
PROMETHEUS_VERSION    ?= v0.316.0
GOLANGCI_LINT_VERSION ?= v2.15.0

.PHONY: all build test verify lint validate e2e host images cluster-up cluster-down clean

all: build

build: $(NDFQ) $(BIN)/kubectl-ndfq $(BIN)/ndfq-runc $(GINKGO)

# The same binary as a kubectl plugin: `kubectl ndfq probe` with bin/ on PATH.
$(BIN)/kubectl-ndfq: $(NDFQ)
	ln -sf ndfq $@

# Binaries are rebuilt every time; go's build cache makes that cheap and
# keeps them in step with the tree.
.PHONY: $(NDFQ) $(BIN)/ndfq-runc $(GINKGO)
# Static (no cgo): the same binary goes into ndfq's own image (probe-image).
$(NDFQ):
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-X github.com/ndfq/ndfq/internal/buildinfo.Version=$(VERSION)" -o $@ ./cmd/ndfq
$(BIN)/ndfq-runc:
	$(GO) build -trimpath -buildvcs=false -o $@ ./cmd/ndfq-runc
$(GINKGO):
	$(GO) build -o $@ github.com/onsi/ginkgo/v2/ginkgo

## probe-image: ndfq's own image (a static binary, no Docker build) and the
## probe Job of config/job/ running it by digest (bin/probe-job.yaml)
.PHONY: probe-image
probe-image: $(NDFQ)
	$(NDFQ) images probe-image --binary $(NDFQ) --output $(NDFQ_PROBE_IMAGE) --repo $(IMAGE_REPO) --job-manifest $(NDFQ_PROBE_JOB)

## release: VERSION=vX.Y.Z writes $(DIST): archives for linux and darwin on
## amd64 and arm64, checksums.txt, the image's OCI archive (one index for both
## linux architectures), the krew manifest and the Job with the image by digest
.PHONY: release release-push
release:
	$(GO) run ./hack/release --version $(VERSION) --dist $(DIST) --image-repo $(IMAGE_REPO)
	cd $(DIST) && sha256sum -c checksums.txt

## release-push: the released image to IMAGE_REPO (docker login first), read back by digest
release-push: $(NDFQ)
	$(NDFQ) images push --from $(DIST)/ndfq-image_$(VERSION).oci.tar --to $(IMAGE_REPO)

## test: format, vet and unit tests (the workflow's rules included); no
## Docker, no cluster, nothing to build or download beyond ndfq's modules
test:
	hack/verify-gofmt.sh
	GO=$(GO) hack/verify-vet.sh
	GO=$(GO) hack/verify-spec-tree.sh
	$(GO) test -count=1 $(UNIT_PKGS)

## verify: the oracle against each Kubernetes release it was written from
## (downloads those releases once), the alert rules' promtool tests and
## actionlint; CI runs it after make test
verify: $(BIN)/actionlint $(BIN)/promtool
	GO=$(GO) hack/verify-oracle.sh
	PROMTOOL=$(BIN)/promtool hack/verify-rules.sh
	$(BIN)/actionlint

## lint: golangci-lint (.golangci.yaml) over the code and the suites, and actionlint
lint:
	hack/verify-lint.sh

$(BIN)/actionlint:
	GOBIN=$(BIN) $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)
$(BIN)/promtool:
	GOBIN=$(BIN) $(GO) install -trimpath github.com/prometheus/prometheus/cmd/promtool@$(PROMETHEUS_VERSION)
$(BIN)/golangci-lint:
	GOBIN=$(BIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

## validate: the topology alone, before anything touches the host
validate: $(NDFQ)
	$(NDFQ) topology validate $(TOPOLOGY)

## host: a Docker engine that can run kind nodes on this machine
host: validate $(BIN)/ndfq-runc
	$(NDFQ) host setup

## images: node images for $(TOPOLOGY) (content-addressed cache)
images: host
	$(NDFQ) images build --topology $(TOPOLOGY)

## e2e: validate, host, images, cluster, suites, report (hack/ci/e2e.sh)
e2e: build probe-image
	hack/ci/e2e.sh

## bench: measurements, not claims: the scheduler's cost of the plugin on kwok
## fleets and the probe on simulated fleets, at BENCH_SIZES nodes; JSON and
## markdown tables (bench-*.json, bench-*.md) in ARTIFACTS
BENCH_SIZES ?= 1000,5000
.PHONY: bench
bench: build probe-image
	NDFQ_BENCH=true LABEL_FILTER='Bench || scale' NDFQ_BENCH_SIZES=$(BENCH_SIZES) NDFQ_SCALE_SIZES=$(BENCH_SIZES) hack/ci/e2e.sh

## cluster-up / cluster-down: the topology without the suites
cluster-up: images
	$(NDFQ) cluster up --topology $(TOPOLOGY) --artifacts $(ARTIFACTS)
cluster-down: $(NDFQ)
	$(NDFQ) cluster down --topology $(TOPOLOGY) --artifacts $(ARTIFACTS)

clean:
	rm -rf $(BIN) $(ARTIFACTS) $(DIST)
