#!/usr/bin/env bash
# Load test of `olm-catalog serve` on loopback: 50 concurrent gRPC clients
# calling ListBundles and GetBundle for 30 s; fails on any error, prints
# latency percentiles. Not part of `cargo test` (takes 30 s).
#   scripts/load-serve.sh [CATALOG] [CLIENTS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
corpus="${OLM_CATALOG_CORPUS:-../shared/corpus/community-operators-prod}"
[ -d "$corpus" ] || corpus=/work/shared/corpus/community-operators-prod
catalog="${1:-$corpus/catalogs/v4.18}"
bin=target/release/olm-catalog
[ -x "$bin" ] || cargo build --release
exec python3 tests/python/load_serve.py --bin "$bin" --catalog "$catalog" \
  --clients "${2:-50}" --seconds "${3:-30}"
