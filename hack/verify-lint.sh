#!/usr/bin/env bash
# golangci-lint (.golangci.yaml) over the code and the suites, and
# actionlint over the workflows; both pinned in the Makefile, built from
# the module proxy into bin/.
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
make "${PWD}/bin/golangci-lint" "${PWD}/bin/actionlint"
bin/golangci-lint run ./...
bin/golangci-lint run --build-tags e2e ./e2e/...
bin/actionlint
