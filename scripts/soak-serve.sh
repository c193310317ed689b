#!/usr/bin/env bash
# Soak run of `olm-catalog serve` (issue 29): 64 concurrent grpcio clients
# call every RPC for 60 s against the largest index opm built
# (../shared/opm-golden/sqlite), every answer compared with a first pass;
# prints p50/p99 latency per RPC, errors (must be 0) and the server's RSS at
# start and end (must stay flat). Loopback only; not part of the test suite.
#   scripts/soak-serve.sh [CATALOG] [CLIENTS] [SECONDS]
#   BIN=path   binary (default target/release/olm-catalog, built first)
set -euo pipefail
cd "$(dirname "$0")/.."
golden=../shared/opm-golden/sqlite
[ -d "$golden" ] || golden=/work/shared/opm-golden/sqlite
catalog=${1:-$(ls -S "$golden"/*/index.db | head -1)}
if [ -z "${BIN:-}" ]; then
    cargo build --release --locked --quiet --bin olm-catalog
    BIN=target/release/olm-catalog
fi
echo "machine: $(nproc) cores, $(uname -sr), $(date -u '+%F %H:%M') UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
exec python3 tests/python/soak_serve.py --bin "$BIN" --catalog "$catalog" \
    --clients "${2:-64}" --seconds "${3:-60}"
