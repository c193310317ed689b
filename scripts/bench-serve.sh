#!/usr/bin/env bash
# Benchmarks of `olm-catalog serve` for BENCHMARKS.md ("serve"): start to
# SERVING, resident memory, ListBundles and GetBundleForChannel medians.
#
#   scripts/bench-serve.sh             both corpus catalogs below
#   scripts/bench-serve.sh CATALOG     one catalog (index.db or FBC dir)
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
bin=target/release/olm-catalog
[ -x "$bin" ] || cargo build --release --locked --bin olm-catalog
bench() { python3 tests/python/bench_serve.py --bin "$bin" --catalog "$1"; }

if [ $# -gt 0 ]; then
    bench "$1"
    exit
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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
