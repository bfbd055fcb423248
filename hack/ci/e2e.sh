#!/usr/bin/env bash
# ndfq's e2e entry point, in the style of kind's hack/ci/e2e.sh: the
# Makefile (`make e2e`), .ci/run and the GitHub workflow all come here.
#
#   1. validate the topology (nothing on the host changes for a bad one)
#   2. prepare the host (`ndfq host setup`: may apt-get install debootstrap
#      and docker.io, start dockerd, and register the runtime wrapper in
#      /etc/docker/daemon.json, which restarts dockerd once)
#   3. build node images (content-addressed cache under $NDFQ_CACHE)
#   4. run the Ginkgo suites, which bring the cluster up, run the specs,
#      write JUnit, the Ginkgo JSON report and report.md, and take the
#      cluster down unless KEEP_CLUSTER or USE_EXISTING_CLUSTER
#
# Honours ARTIFACTS, TOPOLOGY, KUBERNETES_VERSION, LABEL_FILTER, FOCUS,
# SKIP, GINKGO_PROCS, GINKGO_TIMEOUT, KEEP_CLUSTER, USE_EXISTING_CLUSTER,
# NDFQ_CACHE, NDFQ_INTERVAL_<NAME>, NDFQ_BENCH (true: the Bench specs may
# run; make bench) and E2E_STEPS: "all" (default),
# "prepare" (steps 1-3 only: the part that needs root, e.g. under sudo on a
# hosted runner) or "suites" (steps 1 and 4, after a prepare).
set -o errexit -o nounset -o pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "${REPO_ROOT}"

export ARTIFACTS="${ARTIFACTS:-${REPO_ROOT}/_artifacts}"
export KUBERNETES_VERSION="${KUBERNETES_VERSION:-}"
export TOPOLOGY="${TOPOLOGY:-$([ -n "${KUBERNETES_VERSION}" ] && echo next || echo skew-1.37)}"
export KEEP_CLUSTER="${KEEP_CLUSTER:-false}"
export USE_EXISTING_CLUSTER="${USE_EXISTING_CLUSTER:-false}"
LABEL_FILTER="${LABEL_FILTER:-}"
FOCUS="${FOCUS:-}"
SKIP="${SKIP:-}"
GINKGO_PROCS="${GINKGO_PROCS:-2}"
GINKGO_TIMEOUT="${GINKGO_TIMEOUT:-85m}"
E2E_STEPS="${E2E_STEPS:-all}"
case "${E2E_STEPS}" in
  all|prepare|suites) ;;
  *) echo "E2E_STEPS=${E2E_STEPS}: want all, prepare or suites" >&2; exit 2 ;;
esac

export NDFQ_BIN="${NDFQ_BIN:-${REPO_ROOT}/bin/ndfq}"
GINKGO="${REPO_ROOT}/bin/ginkgo"
if [ ! -x "${NDFQ_BIN}" ] || [ ! -x "${GINKGO}" ] || [ ! -x "${REPO_ROOT}/bin/ndfq-runc" ]; then
  make build
fi
mkdir -p "${ARTIFACTS}"

echo "== topology ${TOPOLOGY}${KUBERNETES_VERSION:+ with control plane ${KUBERNETES_VERSION}}"
"${NDFQ_BIN}" topology validate --suites "${TOPOLOGY}"

if [ "${E2E_STEPS}" != suites ]; then
  echo "== host setup"
  "${NDFQ_BIN}" host setup

  echo "== node images"
  "${NDFQ_BIN}" images build --topology "${TOPOLOGY}"

  echo "== the suite's Prometheus (signals claims), from source"
  "${NDFQ_BIN}" images prometheus >/dev/null
fi
[ "${E2E_STEPS}" = prepare ] && exit 0

echo "== suites (artifacts in ${ARTIFACTS})"
# A crashed run must not leave the last run's verdict where this one's goes.
rm -f "${ARTIFACTS}/report.md" "${ARTIFACTS}/junit.xml"
# Measurements (label Bench) are make bench's; make e2e never runs them.
if [ "${NDFQ_BENCH:-false}" != true ]; then
  LABEL_FILTER="${LABEL_FILTER:+(${LABEL_FILTER}) && }!Bench"
fi
ginkgo_args=(-v --tags e2e "--procs=${GINKGO_PROCS}" "--timeout=${GINKGO_TIMEOUT}"
  --junit-report=junit.xml --json-report=report.json "--output-dir=${ARTIFACTS}")
[ -n "${LABEL_FILTER}" ] && ginkgo_args+=("--label-filter=${LABEL_FILTER}")
[ -n "${FOCUS}" ] && ginkgo_args+=("--focus=${FOCUS}")
[ -n "${SKIP}" ] && ginkgo_args+=("--skip=${SKIP}")
[ "${CI:-}" = "true" ] && ginkgo_args+=(--no-color)
exec "${GINKGO}" "${ginkgo_args[@]}" ./e2e
