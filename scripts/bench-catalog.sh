#!/bin/sh
# Median wall time of `catalog build` of the largest shared catalog
# (catalogs/v4.18/koku-metrics-operator) to an OCI layout, N runs each:
# on the default base (runtime layer: the executable and its libraries,
# gzipped) and with --base scratch (validation + catalog layer only).
# Usage: scripts/bench-catalog.sh [BINARY] [N] [CATALOG_DIR]
set -eu
BIN=${1:-target/release/olm-catalog}
N=${2:-5}
CAT=${3:-${OLM_CATALOG_CORPUS:-../shared/corpus/community-operators-prod}/catalogs/v4.18/koku-metrics-operator}
BIN=$(realpath "$BIN")
CAT=$(realpath "$CAT")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ms() { s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
i=0; : > "$W/self.t"; : > "$W/scratch.t"
while [ $i -lt "$N" ]; do
  ms "$BIN" catalog build "$CAT" --tag "oci:$W/L:self$i" -q >> "$W/self.t"
  ms "$BIN" catalog build "$CAT" --tag "oci:$W/L:scratch$i" --base scratch -q >> "$W/scratch.t"
  i=$((i + 1))
done
# Reproducible: every run wrote the same two manifests.
test "$(grep -o '"digest":"[^"]*"' "$W/L/index.json" | sort -u | wc -l)" -eq 2
echo "catalog build $(basename "$CAT") ($(du -sh "$CAT" | cut -f1)), default base: median $(median < "$W/self.t") ms over $N runs"
echo "catalog build $(basename "$CAT"), --base scratch: median $(median < "$W/scratch.t") ms over $N runs"
echo "executable: $(du -h "$BIN" | cut -f1)"
