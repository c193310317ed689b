#!/bin/sh
# Index benchmarks over the corpus: full build, one incremental add, render.
# Usage: scripts/bench-index.sh [path/to/olm-catalog]   (build it first)
# --permissive: in replaces mode opm refuses the whole corpus ("add prunes
# bundle": FBC-era packages keep their graph in catalog templates, not in
# the CSVs), so the build keeps those bundles in no channel, as opm --permissive.
set -eu
BIN=${1:-target/release/olm-catalog}
C=${OLM_CATALOG_CORPUS:-../shared/corpus/community-operators-prod}/operators
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
for d in "$C"/*/*/; do d=${d%/}
  if [ -d "$d/manifests" ]; then echo "$d"; elif [ -d "$d/bundle/manifests" ]; then echo "$d/bundle"; fi
done > "$T/all.list"
echo "bundles: $(wc -l < "$T/all.list")"
for i in 1 2 3 4 5; do rm -f "$T/all.db"; /usr/bin/time -f "build %e s %M KiB" "$BIN" index add -d "$T/all.db" --permissive --bundles-file "$T/all.list" 2>&1 | grep '^build'; done
grep -v 'etcd/0.9.4$' "$T/all.list" > "$T/most.list"; "$BIN" index add -d "$T/most.db" --permissive --bundles-file "$T/most.list" 2>/dev/null
for i in 1 2 3 4 5; do cp "$T/most.db" "$T/inc.db"; /usr/bin/time -f "add-one %e s %M KiB" "$BIN" index add -d "$T/inc.db" "$C/etcd/0.9.4" 2>&1 | grep '^add-one'; done
for i in 1 2 3 4 5; do /usr/bin/time -f "render %e s %M KiB" "$BIN" render "$T/all.db" 2>&1 >/dev/null | grep '^render'; done
