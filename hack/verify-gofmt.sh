#!/usr/bin/env bash
# Fails, naming the files, when any Go file is not gofmt'ed.
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bin/*'))
if [ -n "${bad}" ]; then
  echo "not gofmt'ed (run gofmt -w on them):"
  echo "${bad}"
  exit 1
fi
