#!/usr/bin/env bash
# The whole-catalog jobs of issue 29 on one tree, one table:
#   validate  bundle validate -o json of every bundle folder, one call
#   check     graph check --catalog v4.18 -o json of every package (CRD
#             upgrade checks on), and the same with --no-crd-checks
#   add-img   index add from pushed bundle images: the bundles of the three
#             packages with the most bundles, built and pushed to a loopback
#             docker-registry first (not timed)
#   render    render of the whole-tree index (index add --keep-going
#             --permissive of every package first, not timed) to /dev/null
#   img       render IMAGE of a catalog image of the whole tree (migrate +
#             catalog build + push first, not timed): registry -> disk -> JSON
#   serve     ListBundles and the other calls against opm's own indexes
#             (../shared/opm-golden/sqlite/*, tests/python/bench_serve.py)
# For each timed job: hyperfine's median wall (RUNS runs after one warm-up)
# and one /usr/bin/time -v run's user and system CPU and peak RSS, and the
# input's MB/s at the median (input: the YAML of the folders read).
#
# Usage: scripts/bench-corpus.sh [TREE]   (default: the shared corpus)
#   TREE is a community-operators checkout (operators/, catalogs/v4.18/); a
#   larger one is made by `scripts/scale-corpus.py CORPUS OUT N`.
#   BIN=path   binary (default target/release/olm-catalog, built first)
#   RUNS=k     hyperfine runs per job (default 5)
#   SKIP="add-img img serve"   jobs to leave out
# Loopback only; temp files under one mktemp dir, removed at the end. Not part
# of the test suite, and nothing here is asserted: figures go to BENCHMARKS.md
# with the machine, the date and the load it prints.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tree="${1:-${OLM_CATALOG_CORPUS:-../shared/corpus/community-operators-prod}}"
[ -d "$tree/operators" ] || tree=/work/shared/corpus/community-operators-prod
tree=$(realpath "$tree")
if [ -z "${BIN:-}" ]; then
    cargo build --release --locked --quiet --bin olm-catalog || exit 2
    BIN=target/release/olm-catalog
fi
BIN=$(realpath "$BIN")
RUNS=${RUNS:-5}
SKIP=" ${SKIP:-} "
command -v hyperfine > /dev/null || { echo "hyperfine is needed (apt-get install hyperfine)"; exit 2; }
tmp=$(mktemp -d)
reg_pid=
trap '[ -n "$reg_pid" ] && kill "$reg_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
. scripts/lib/registry.sh

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr)"
echo "date: $(date -u '+%F %H:%M') UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "binary: $BIN"
echo "tree: $tree"
printf '%-10s %9s %8s %8s %9s %9s  %s\n' job median_s user_s sys_s peak_MiB MB/s note

# timed JOB BYTES NOTE CMD...: hyperfine median, then one /usr/bin/time -v run.
timed() {
    local job=$1 bytes=$2 note=$3
    shift 3
    case "$SKIP" in *" $job "*) return ;; esac
    hyperfine -N --runs "$RUNS" --warmup 1 -i --export-json "$tmp/h.json" --output=null \
        -- "$(printf '%q ' "$@")" > /dev/null 2>&1
    local med
    med=$(python3 -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["results"][0]["median"])' "$tmp/h.json")
    /usr/bin/time -v -o "$tmp/time" "$@" > /dev/null 2> "$tmp/err"
    local rc=$?
    local user sys peak
    user=$(awk -F': ' '/User time/ {print $2}' "$tmp/time")
    sys=$(awk -F': ' '/System time/ {print $2}' "$tmp/time")
    peak=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2 / 1024}' "$tmp/time")
    local rate=-
    [ "$bytes" -gt 0 ] && rate=$(awk -v b="$bytes" -v s="$med" 'BEGIN {printf "%.0f", b / 1e6 / s}')
    printf '%-10s %9s %8s %8s %9s %9s  %s (exit %s)\n' "$job" "$med" "$user" "$sys" "$peak" "$rate" "$note" "$rc"
    [ "$rc" -gt 1 ] && sed 's/^/     | /' "$tmp/err" | tail -5
}

cd "$tree"
folders=()
for d in operators/*/*/; do
    d=${d%/}
    if [ -d "$d/manifests" ]; then folders+=("$d"); elif [ -d "$d/bundle/manifests" ]; then folders+=("$d/bundle"); fi
done
printf '%s\n' "${folders[@]}" > "$tmp/folders"
yaml_bytes=$(cat "$tmp/folders" | xargs -I{} find {} -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' \) -printf '%s\n' | awk '{s += $1} END {print s + 0}')
pkgs=$(ls -d operators/*/ | wc -l)
echo "input: $pkgs packages, ${#folders[@]} bundle folders, $((yaml_bytes / 1000000)) MB of manifests and metadata"
# Warm the page cache: the figures are about the tool, not the disk.
xargs -a "$tmp/folders" -I{} cat -- {}/manifests/* {}/metadata/* > /dev/null 2>&1

# The folder list goes through bash: one argument of hyperfine's command
# line holds at most 128 KiB, and a scaled tree's list is megabytes (one
# exec's whole argument list may reach 2 MiB: a 45x tree's 34,920 folders
# still fit).
timed validate "$yaml_bytes" "${#folders[@]} folders" bash -c 'exec "$0" bundle validate -o json $(cat "$1")' "$BIN" "$tmp/folders"
timed check "$yaml_bytes" "$pkgs packages, CRD checks on" bash -c 'exec "$0" graph check --catalog v4.18 -o json operators/*/' "$BIN"
timed check-nocrd "$yaml_bytes" "the same, --no-crd-checks" bash -c 'exec "$0" graph check --catalog v4.18 --no-crd-checks -o json operators/*/' "$BIN"

db=$tmp/index.db
"$BIN" index add -d "$db" --keep-going --permissive -q operators/*/ > /dev/null 2>&1
cd "$root"
db_bytes=$(stat -c %s "$db")
out_bytes=$("$BIN" render "$db" | wc -c)
timed render "$db_bytes" "index $((db_bytes / 1000000)) MB -> $((out_bytes / 1000000)) MB of JSON (rate: of the db)" "$BIN" render "$db"

skipped() { case "$SKIP" in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
if [ -x /usr/bin/docker-registry ] && ! { skipped add-img && skipped img; }; then
    start_registry "$tmp/registry"; reg_pid=$REGISTRY_PID
    # The three packages with the most bundle folders, pushed as bundle images.
    top=$(sed 's#^operators/\([^/]*\)/.*#\1#' "$tmp/folders" | sort | uniq -c | sort -rn | head -3 | awk '{print $2}')
    : > "$tmp/jobs"
    : > "$tmp/refs"
    n_img=0
    while read -r d; do
        rel=${d#operators/}
        pkg=${rel%%/*}
        echo "$top" | grep -qx "$pkg" || continue
        ver=${rel#*/}
        ref="$HOST/$pkg-bundle:${ver//\//-}"
        printf '%s %s\n' "$tree/$d" "$ref" >> "$tmp/jobs"
        echo "$ref" >> "$tmp/refs"
        n_img=$((n_img + 1))
    done < "$tmp/folders"
    "$BIN" bundle build --bundles-file "$tmp/jobs" --jobs 8 -q > /dev/null 2>&1
    echo "pushed $n_img bundle images of: $(echo $top)"
    timed add-img 0 "$n_img bundle images -> new index" bash -c 'rm -f "$0"; exec "$1" index add -d "$0" --permissive --keep-going -q $(cat "$2")' "$tmp/img.db" "$BIN" "$tmp/refs"

    "$BIN" migrate "$db" "$tmp/fbc" > /dev/null 2>&1
    "$BIN" catalog build "$tmp/fbc" --tag "$HOST/bench/catalog:v1" --base scratch -q > /dev/null 2>&1
    layer=$(du -sb "$tmp/fbc" | cut -f1)
    timed img 0 "render IMAGE of the tree's catalog image ($((layer / 1000000)) MB unpacked)" "$BIN" render "$HOST/bench/catalog:v1"
fi

skipped serve || {
    for idx in "$root"/../shared/opm-golden/sqlite/*/index.db; do
        [ -f "$idx" ] || continue
        echo "serve $(basename "$(dirname "$idx")") (opm's own index):"
        python3 tests/python/bench_serve.py --bin "$BIN" --catalog "$idx" --runs 5 2>&1 | sed 's/^/   /'
    done
}
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
