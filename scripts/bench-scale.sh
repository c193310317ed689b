#!/usr/bin/env bash
# Scale benchmark (issue 20): the shared corpus's 32 packages copied under N
# names (scripts/scale-corpus.py: copy k is PACKAGE-ck, its CSVs renamed), and
# for each N, wall time and peak RSS (/usr/bin/time -v) of the whole-catalog
# steps, one call each:
#   add       index add --keep-going --permissive of every package directory
#   validate  bundle validate of every bundle folder
#   check     graph check --catalog v4.18 of every package directory
#   render    render of the index from add, to /dev/null
#   migrate   migrate of that index to an FBC directory
#   serve     serve of that index: time until SERVING, RSS idle after start
#   catalog   catalog build of the migrated FBC to an oci: layout (--base scratch)
#   push      bundle build of every bundle folder to a loopback docker-registry
#             (one process, --bundles-file, --jobs 8; needs /usr/bin/docker-registry,
#             skipped without it)
#
# Usage: scripts/bench-scale.sh [N...]   (default: 1 10 30)
#   BIN=path        binary (default target/release/olm-catalog, built first)
#   RUNS=k          runs per step and size, the median reported (default 1)
#   LIMIT=s         a step whose run at a size took longer than LIMIT/3 s is
#                   skipped at three times that size (default 240)
#   OLM_CATALOG_CORPUS=dir   the corpus (default ../shared/corpus/community-operators-prod)
# Prints one line per step and size: N bundles step wall_s peak_MiB exit.
# The scaled trees go to a temp dir, removed at the end (~45 MB on disk per
# copy beyond the first: CSVs and metadata are rewritten, the rest hard-linked).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
corpus="${OLM_CATALOG_CORPUS:-../shared/corpus/community-operators-prod}"
[ -d "$corpus/operators" ] || corpus=/work/shared/corpus/community-operators-prod
corpus=$(realpath "$corpus")
if [ -z "${BIN:-}" ]; then
    cargo build --release --locked --quiet --bin olm-catalog || exit 2
    BIN=target/release/olm-catalog
fi
BIN=$(realpath "$BIN")
RUNS=${RUNS:-1}
LIMIT=${LIMIT:-240}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1 10 30)
tmp=$(mktemp -d)
reg_pid=
trap '[ -n "$reg_pid" ] && kill "$reg_pid" 2>/dev/null; rm -rf "$tmp"' EXIT

. scripts/lib/registry.sh
echo "machine: $(nproc) cores, $(uname -sr), $(date -u '+%F %H:%M') UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "binary: $BIN"
printf '%-4s %-7s %-9s %9s %9s %s\n' N bundles step wall_s peak_MiB exit

declare -A last_wall last_n

# run STEP N BUNDLES CMD...: RUNS timed runs; prints the median wall and the
# largest peak RSS.
run() {
    local step=$1 n=$2 bundles=$3
    shift 3
    local prev=${last_wall[$step]:-} pn=${last_n[$step]:-}
    if [ -n "$prev" ] && awk -v w="$prev" -v p="$pn" -v n="$n" -v l="$LIMIT" 'BEGIN {exit !(w * n / p > l)}'; then
        printf '%-4s %-7s %-9s %9s %9s %s\n' "$n" "$bundles" "$step" skipped - "(${prev} s at N=$pn scales past ${LIMIT} s)"
        return
    fi
    local walls=() peak=0 rc=0
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -v -o "$tmp/time" timeout $((LIMIT + 60)) "$@" > /dev/null 2> "$tmp/err"
        rc=$?
        local w k
        w=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; print s}' "$tmp/time")
        k=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time")
        walls+=("$w")
        [ "$k" -gt "$peak" ] && peak=$k
    done
    local med
    med=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
    last_wall[$step]=$med
    last_n[$step]=$n
    printf '%-4s %-7s %-9s %9.2f %9.1f %s\n' "$n" "$bundles" "$step" "$med" "$(echo "$peak / 1024" | bc -l)" "$rc"
    if [ "$rc" -gt 1 ]; then
        sed 's/^/     | /' "$tmp/err" | tail -5
    fi
}

# serve_once N BUNDLES DB: seconds until SERVING and RSS 2 s after it.
serve_once() {
    python3 - "$BIN" "$3" <<'EOF'
import os, sys, time
sys.path.insert(0, "tests/python")
from bench_serve import start, rss_mib
proc, _, took = start(sys.argv[1], sys.argv[2])
try:
    time.sleep(2)
    print("%.3f %.1f" % (took, rss_mib(proc.pid)))
finally:
    proc.kill()
    proc.wait()
EOF
}

for n in "${sizes[@]}"; do
    tree=$tmp/corpus-$n
    python3 scripts/scale-corpus.py "$corpus" "$tree" "$n" 2> /dev/null || { echo "scale-corpus failed for N=$n"; exit 2; }
    cd "$tree"
    folders=()
    for d in operators/*/*/; do
        d=${d%/}
        if [ -d "$d/manifests" ]; then folders+=("$d"); elif [ -d "$d/bundle/manifests" ]; then folders+=("$d/bundle"); fi
    done
    bundles=${#folders[@]}
    # Warm the page cache: the figures are about the tool, not the disk.
    cat operators/*/*/*/* > /dev/null 2>&1
    db=$tmp/index-$n.db
    rm -f "$db"
    run add "$n" "$bundles" bash -c 'rm -f "$0"; exec "$1" index add -d "$0" --keep-going --permissive -q operators/*/' "$db" "$BIN"
    [ -f "$db" ] || "$BIN" index add -d "$db" --keep-going --permissive -q operators/*/ > /dev/null 2>&1
    run validate "$n" "$bundles" "$BIN" bundle validate -o json "${folders[@]}"
    run check "$n" "$bundles" "$BIN" graph check --catalog v4.18 -o json operators/*/
    cd "$root"
    run render "$n" "$bundles" "$BIN" render "$db"
    run migrate "$n" "$bundles" bash -c 'rm -rf "$0"; exec "$1" migrate "$2" "$0"' "$tmp/fbc-$n" "$BIN" "$db"
    [ -d "$tmp/fbc-$n" ] || "$BIN" migrate "$db" "$tmp/fbc-$n" > /dev/null 2>&1
    starts=() rss=()
    for _ in $(seq "$RUNS"); do
        read -r s r < <(serve_once "$n" "$bundles" "$db")
        starts+=("$s") rss+=("$r")
    done
    printf '%-4s %-7s %-9s %9.2f %9.1f %s\n' "$n" "$bundles" serve \
        "$(printf '%s\n' "${starts[@]}" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')" \
        "$(printf '%s\n' "${rss[@]}" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')" "(idle RSS 2 s after SERVING)"
    run catalog "$n" "$bundles" bash -c 'rm -rf "$0"; exec "$1" catalog build "$2" --tag "oci:$0:scale" --base scratch -q' "$tmp/layout-$n" "$BIN" "$tmp/fbc-$n"
    if [ -x /usr/bin/docker-registry ]; then
        start_registry "$tmp/registry-$n"; reg_pid=$REGISTRY_PID
        : > "$tmp/jobs"
        for d in "${folders[@]}"; do
            rel=${d#operators/}
            pkg=${rel%%/*} ver=${rel#*/}
            printf '%s %s\n' "$tree/$d" "$HOST/$pkg-bundle:${ver//\//-}" >> "$tmp/jobs"
        done
        run push "$n" "$bundles" "$BIN" bundle build --bundles-file "$tmp/jobs" --jobs 8 -q
        kill "$reg_pid"; wait "$reg_pid" 2> /dev/null; reg_pid=
        rm -rf "$tmp/registry-$n"
    fi
    echo "     index $(du -h "$db" | cut -f1), FBC $(du -sh "$tmp/fbc-$n" | cut -f1), load $(cut -d' ' -f1-3 /proc/loadavg)"
    rm -rf "$tree" "$tmp/fbc-$n" "$tmp/layout-$n" "$db"
done
