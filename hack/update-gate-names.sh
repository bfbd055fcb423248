#!/usr/bin/env bash
# Writes fixtures/gatenames/<minor>.txt from each Sources release: every
# feature gate name its components accept. `make verify` checks them.
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
NDFQ_UPDATE_GATE_NAMES=1 "${GO:-go}" test -count=1 -tags upstream -run 'TestUpdateGateNames' ./fixtures/
