#!/usr/bin/env bash
# Benchmarks of `olm-catalog serve` for BENCHMARKS.md ("serve"): start to
# SERVING, resident memory, ListBundles and GetBundleForChannel medians.
#   scripts/bench-serve.sh [CATALOG]   (default: the corpus's FBC catalogs)
set -euo pipefail
cd "$(dirname "$0")/.."
corpus="${OLM_CATALOG_CORPUS:-../shared/corpus/community-operators-prod}"
[ -d "$corpus" ] || corpus=/work/shared/corpus/community-operators-prod
catalog="${1:-$corpus/catalogs/v4.18}"
bin=target/release/olm-catalog
[ -x "$bin" ] || cargo build --release
exec python3 tests/python/bench_serve.py --bin "$bin" --catalog "$catalog"
