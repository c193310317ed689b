#!/usr/bin/env bash
# Side-by-side figures against opm (issue 38 items 4 and 5), on packages of
# a community-operators-prod tree:
#   - `index add` from pushed bundle images: our CPU against `opm registry
#     add -c none --use-http` (opm's in-process puller, no daemon) on the
#     same images of a loopback docker-registry, interleaved, median of RUNS;
#   - ListBundles of the index opm built, served by `opm registry serve` and
#     by `olm-catalog serve` at once (tests/python/bench_serve_vs_opm.py).
#
#   scripts/bench-vs-opm.sh OPM TREE PACKAGE...    e.g.
#   scripts/bench-vs-opm.sh /work/opm-bin/opm /work/cop strimzi-kafka-operator project-quay
#
# OPM is a binary you have (nothing here builds or fetches it; BENCHMARKS.md
# says which version the figures are of). Bundle images are built and pushed
# by `olm-catalog bundle build`; both tools read the same images. Each add is
# --permissive for both tools: opm and we refuse project-quay's channels
# otherwise ("add prunes bundle").
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 3 ] || { echo "usage: $0 OPM TREE PACKAGE..." >&2; exit 2; }
opm=$1 tree=$2; shift 2
runs=${RUNS:-3}
profile=${OLM_CATALOG_PROFILE:-release}
cargo build --quiet --profile "$profile" --locked --bin olm-catalog
cargo bench --quiet --profile "$profile" --locked --bench serve_rpc --no-run
bin=$PWD/target/$profile/olm-catalog
native=$(ls -t "$PWD"/target/"$profile"/deps/serve_rpc-* | grep -v '\.d$' | head -1)
. scripts/lib/registry.sh
work=$(mktemp -d)
trap 'kill "${REGISTRY_PID:-}" 2>/dev/null; rm -rf "$work"' EXIT
start_registry "$work/registry"

cpu() { # "user+sys seconds" of a command, its output dropped
    /usr/bin/time -f "%U %S" -o "$work/time" "$@" > /dev/null 2>&1 || true
    awk '{ printf "%.2f", $1 + $2 }' "$work/time"
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

for pkg in "$@"; do
    dirs=()
    for d in "$tree/operators/$pkg"/*/; do [ -d "$d/manifests" ] && dirs+=("${d%/}"); done
    "$bin" bundle build -q --tag-template "$HOST/{package}-bundle:v{version}" "${dirs[@]}" > /dev/null
    curl -fs "http://$HOST/v2/$pkg-bundle/tags/list" |
        python3 -c 'import json, sys; print("\n".join(json.load(sys.stdin)["tags"]))' |
        sort -V | sed "s|^|$HOST/$pkg-bundle:|" > "$work/$pkg.list"
    n=$(wc -l < "$work/$pkg.list")
    ours=() theirs=()
    for _ in $(seq "$runs"); do
        rm -f "$work/opm.db" "$work/ours.db"
        theirs+=("$(cpu "$opm" registry add -c none --use-http --permissive -d "$work/opm.db" \
            -b "$(paste -sd, "$work/$pkg.list")")")
        ours+=("$(cpu "$bin" index add -q --permissive -d "$work/ours.db" $(cat "$work/$pkg.list"))")
    done
    o=$(printf '%s\n' "${ours[@]}" | median) t=$(printf '%s\n' "${theirs[@]}" | median)
    echo "== $pkg: $n images"
    echo "index add CPU (user+sys), median of $runs: opm ${t} s [${theirs[*]}], ours ${o} s [${ours[*]}]," \
        "ours/opm $(awk -v o="$o" -v t="$t" 'BEGIN { printf "%.3f", o / t }')x"
    python3 tests/python/bench_serve_vs_opm.py --bin "$bin" --opm "$opm" --catalog "$work/opm.db" --runs 30 \
        --native "$native" |
        sed 1d
done
