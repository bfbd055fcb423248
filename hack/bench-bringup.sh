#!/usr/bin/env bash
# Bring-up against raw kind, side by side in one run, on the same rendered
# kind config and node images (issue 16):
#   1. `ndfq cluster up` once, untimed: builds or finds the images and
#      writes the rendered kind config (and its kubelet patch files);
#   2. `kind create cluster` with that config (kind's own CLI, the same
#      sigs.k8s.io/kind version ndfq links), timed, then deleted;
#   3. `ndfq cluster up` timed (kind create, pod network, all nodes Ready),
#      then deleted.
# Raw kind returns once the control plane is up; ndfq waits for every node
# Ready with a pod network, which kind's default CNI would do for it (and
# which cannot be had offline). Prints one line per step and the ratio.
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
TOPOLOGY="${TOPOLOGY:-skew-1.37}"
WORK="${WORK:-$(mktemp -d /tmp/ndfq-bench-XXXX)}"
make --no-print-directory build >/dev/null
GOBIN="$PWD/bin" "${GO:-go}" install sigs.k8s.io/kind
NAME=$(bin/ndfq topology validate "$TOPOLOGY" >/dev/null && echo "ndfq-${TOPOLOGY//./-}")

cleanup() { bin/kind delete cluster --name "$NAME" >/dev/null 2>&1 || true; }
trap cleanup EXIT

echo "== warm-up: ndfq cluster up (renders the config; images cached)"
bin/ndfq cluster up --topology "$TOPOLOGY" --artifacts "$WORK/warm" >/dev/null
bin/ndfq cluster down --name "$NAME" >/dev/null

seconds() {
  local s=$EPOCHREALTIME
  "$@" >"$WORK/step.log" 2>&1 || { cat "$WORK/step.log" >&2; echo "failed: $*" >&2; return 1; }
  awk -v a="$s" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'
}

raw=$(seconds bin/kind create cluster --name "$NAME" --config "$WORK/warm/$NAME.kind.yaml" --kubeconfig "$WORK/raw.kubeconfig" --retain)
echo "raw kind create: ${raw}s"
cleanup
ours=$(seconds bin/ndfq cluster up --topology "$TOPOLOGY" --artifacts "$WORK/ndfq")
echo "ndfq cluster up: ${ours}s (to all nodes Ready with a pod network)"
cleanup
awk -v a="$ours" -v b="$raw" 'BEGIN { printf "ratio: %.2f\n", a / b }'
