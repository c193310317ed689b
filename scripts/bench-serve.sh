#!/usr/bin/env bash
# Benchmarks of `olm-catalog serve` for BENCHMARKS.md ("serve"): start to
# SERVING, resident memory, ListBundles and GetBundleForChannel medians.
#
#   scripts/bench-serve.sh             both corpus catalogs below
#   scripts/bench-serve.sh CATALOG     one catalog (index.db or FBC dir)
#   KEEP_DB=FILE scripts/bench-serve.sh   also keeps the corpus index as FILE
#   scripts/bench-serve.sh --golden    the index.db files the real opm built
#                                      (../shared/opm-golden/sqlite/*), and the
#                                      FBC catalogs its fbc/ dumps came from;
#                                      Python client only (no native build)
#
# Latencies come from two clients: Python grpcio (what the tests use) and a
# native tonic client (benches/serve_rpc.rs). The Python client's own cost
# per streamed message dominates a ListBundles of ~1000 messages, so the
# native figure is the server's.
#
# The corpus catalogs: its file-based catalogs (catalogs/v4.18), and a SQLite
# index of every corpus bundle directory, built here with one `index add`
# per package so that each bundle records an image reference
# (`--bundle-image-prefix`), as every index opm builds does (opm only adds
# bundle images), in the mode its ci.yaml names (`--keep-content`: every
# bundle keeps its manifests, the larger index). `--permissive`: see
# scripts/bench-index.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus="${OLM_CATALOG_CORPUS:-../shared/corpus/community-operators-prod}"
[ -d "$corpus" ] || corpus=/work/shared/corpus/community-operators-prod
# OLM_CATALOG_PROFILE=profiling measures the release code with symbols (perf).
profile=${OLM_CATALOG_PROFILE:-release}
cargo build --quiet --profile "$profile" --locked --bin olm-catalog
if [ "${1:-}" = --golden ]; then
    golden="${OLM_CATALOG_GOLDEN:-../shared/opm-golden}"
    [ -d "$golden" ] || golden=/work/shared/opm-golden
    for db in "$golden"/sqlite/*/index.db; do
        echo "== opm-built index $db ($(du -h "$db" | cut -f1))"
        python3 tests/python/bench_serve.py --bin "target/$profile/olm-catalog" --catalog "$db"
    done
    for dir in "$golden"/fbc/*/; do
        fbc="$corpus/catalogs/v4.18/$(basename "$dir")"
        echo "== FBC $fbc"
        python3 tests/python/bench_serve.py --bin "target/$profile/olm-catalog" --catalog "$fbc"
    done
    exit
fi
cargo bench --quiet --profile "$profile" --locked --bench serve_rpc --no-run
bin=target/$profile/olm-catalog
native=$(ls -t target/"$profile"/deps/serve_rpc-* | grep -v '\.d$' | head -1)
bench() { python3 tests/python/bench_serve.py --bin "$bin" --native "$native" --catalog "$1"; }

if [ $# -gt 0 ]; then
    bench "$1"
    exit
fi

tmp=$(mktemp -d)
trap '[ -n "${KEEP_DB:-}" ] && cp "$tmp/corpus.db" "$KEEP_DB"; rm -rf "$tmp"' EXIT
n=0
for pkg in "$corpus"/operators/*/; do
    pkg=${pkg%/}
    list="$tmp/$(basename "$pkg").list"
    for d in "$pkg"/*/; do
        d=${d%/}
        if [ -d "$d/manifests" ]; then echo "$d"; elif [ -d "$d/bundle/manifests" ]; then echo "$d/bundle"; fi
    done > "$list"
    [ -s "$list" ] || continue
    n=$((n + $(wc -l < "$list")))
    mode=replaces
    grep -qs 'updateGraph: *semver-mode' "$pkg/ci.yaml" && mode=semver
    "$bin" index add -q -d "$tmp/corpus.db" --permissive --mode "$mode" --keep-content \
        --bundle-image-prefix "quay.io/community-operators/$(basename "$pkg")" \
        --bundles-file "$list" 2>/dev/null
done
echo "== SQLite index of $n corpus bundle directories ($(du -h "$tmp/corpus.db" | cut -f1))"
bench "$tmp/corpus.db"
echo
echo "== file-based catalogs ($corpus/catalogs/v4.18)"
bench "$corpus/catalogs/v4.18"
