#!/usr/bin/env bash
# The shipped Prometheus rules: promtool's syntax check and its unit tests
# (config/prometheus/ndfq.rules.test.yaml); and the syntax of the e2e
# Prometheus's scrape configuration. promtool is built from the Prometheus
# release the Makefile pins (make bin/promtool).
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
promtool="$(realpath "${PROMTOOL:-bin/promtool}")"
"$promtool" check rules config/prometheus/ndfq.rules.yaml
(cd config/prometheus && "$promtool" test rules ndfq.rules.test.yaml)
# The e2e Prometheus's own configuration (the ConfigMap's prometheus.yml,
# 4 spaces in): its syntax only, since its token file exists in the pod.
scrape="$(mktemp)"
trap 'rm -f "$scrape"' EXIT
awk '/^  prometheus.yml: \|$/ {on=1; next} on && /^---$/ {exit} on {sub(/^    /, ""); print}' config/prometheus/e2e-prometheus.yaml >"$scrape"
"$promtool" check config --syntax-only "$scrape"
