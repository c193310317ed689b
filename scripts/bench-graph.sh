#!/usr/bin/env bash
# Benchmark: graphs and checks for every corpus package in one call
# (`olm-catalog graph check operators/*`), release build, median of N runs.
# Usage: scripts/bench-graph.sh [RUNS]   (OLM_CATALOG_CORPUS overrides the corpus path)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-11}
CORPUS=${OLM_CATALOG_CORPUS:-../../shared/corpus/community-operators-prod}
[ -d "$CORPUS/operators" ] || CORPUS=../shared/corpus/community-operators-prod
[ -d "$CORPUS/operators" ] || { echo "corpus not found; set OLM_CATALOG_CORPUS" >&2; exit 2; }
cargo build --release --quiet
BIN=target/release/olm-catalog
pkgs=("$CORPUS"/operators/*/)
echo "packages: ${#pkgs[@]}"
# Other builds on the machine skew the figure: record the load around the runs.
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
# Warm the page cache once; exit 1 (findings) is expected on the corpus.
"$BIN" graph check --catalog v4.18 -o json "${pkgs[@]}" >/dev/null || [ $? -eq 1 ]
times=()
for _ in $(seq "$RUNS"); do
  start=$(date +%s.%N)
  "$BIN" graph check --catalog v4.18 -o json "${pkgs[@]}" >/dev/null || [ $? -eq 1 ]
  end=$(date +%s.%N)
  times+=("$(echo "$end - $start" | bc -l)")
done
printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "median %.3f s over %d runs (min %.3f, max %.3f)\n", a[int((NR+1)/2)], NR, a[1], a[NR]}'
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
