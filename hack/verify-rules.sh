#!/usr/bin/env bash
# The shipped Prometheus rules: promtool's syntax check and its unit tests
# (config/prometheus/ndfq.rules.test.yaml). promtool is built from the
# Prometheus release the Makefile pins (make bin/promtool).
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
promtool="$(realpath "${PROMTOOL:-bin/promtool}")"
"$promtool" check rules config/prometheus/ndfq.rules.yaml
(cd config/prometheus && "$promtool" test rules ndfq.rules.test.yaml)
