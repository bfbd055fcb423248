#!/usr/bin/env bash
# The oracle against each release it was written from: fixtures' gate
# tables parsed against every minor's pkg/features/kube_features.go, and
# its declarations against that minor's own component-helpers registry
# (1.38 under the approved go1.27.3 toolchain). Downloads four Kubernetes
# releases into the Go module cache once (cached by module version), so it
# runs in `make verify`, not in `make test`. The same check holds any other
# release: `ndfq oracle check RELEASE` (fixtures.CheckRelease).
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
"${GO:-go}" vet -tags upstream ./fixtures/...
"${GO:-go}" test -count=1 -tags upstream -run 'TestTablesMatchTheirRelease|TestProbeInferenceMatchesItsRelease|TestCheckReleaseNamesADifference|TestRuntimesMatchTheirRelease' ./fixtures/
