#!/bin/sh
# Median time of the optional validation suites over the corpus bundles.
# Usage: scripts/bench-optional.sh [corpus-dir]   (PROFILE=release for release figures)
set -eu
cd "$(dirname "$0")/.."
if [ "${PROFILE:-dev}" = release ]; then
  cargo run -q --release --example bench_optional -- "$@"
else
  cargo run -q --example bench_optional -- "$@"
fi
