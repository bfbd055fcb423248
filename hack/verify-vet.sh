#!/usr/bin/env bash
# go vet over everything, the e2e-tagged suites included.
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO="${GO:-go}"
"${GO}" vet ./...
"${GO}" vet -tags e2e ./e2e/...
