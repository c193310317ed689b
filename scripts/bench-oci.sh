#!/usr/bin/env bash
# Benchmarks of the oci area (figures go to BENCHMARKS.md, section "oci").
#
#   scripts/bench-oci.sh [RUNS] [PUSH_JOBS] [PULL_CONCURRENCY]
#
# For each run, on a fresh loopback docker-registry (empty storage):
#   push:      one `olm-catalog bundle build --bundles-file LIST --jobs PUSH_JOBS`
#              of every bundle of the corpus (LIST: `DIR 127.0.0.1:PORT/PKG-bundle:VERSION`);
#   index add: `olm-catalog index add --permissive` of those image references
#              into a NEW database: pull, unpack and load into SQLite, with
#              peak RSS. The three gitlab-runner `VERSION/certification`
#              bundles are left out, as scripts/bench-index.sh leaves them out
#              (they repeat CSVs of other bundles); --permissive because opm
#              refuses the whole corpus in replaces mode (see bench-index.sh);
#   pull:      pulls and unpacks the same images into bundles (the pull+unpack
#              part of `index add` alone, benches/oci_pull.rs),
#              PULL_CONCURRENCY at a time, with peak RSS.
# Prints each run, the medians and the load average. Needs: cargo,
# /usr/bin/docker-registry, GNU time (/usr/bin/time), curl, bc.
# BIN=path/to/olm-catalog skips the release build of the binary; PULL_BENCH=0
# skips the pull+unpack bench (and its build).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
JOBS=${2:-8}
CONC=${3:-16}

corpus=${OLM_CATALOG_CORPUS:-}
if [ -z "$corpus" ]; then
  d=$(pwd)
  while [ "$d" != / ]; do
    d=$(dirname "$d")
    if [ -d "$d/shared/corpus/community-operators-prod" ]; then corpus="$d/shared/corpus/community-operators-prod"; break; fi
  done
fi
[ -d "$corpus/operators" ] || { echo "corpus not found (set OLM_CATALOG_CORPUS)" >&2; exit 2; }

if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --bin olm-catalog
  BIN=$(pwd)/target/release/olm-catalog
fi
PULL=
if [ "${PULL_BENCH:-1}" != 0 ] && cargo bench --quiet --bench oci_pull --no-run 2>/dev/null; then
  PULL=$(ls -t target/release/deps/oci_pull-* | grep -v '\.d$' | head -1)
fi

tmp=$(mktemp -d)
reg_pid=
cleanup() { [ -n "$reg_pid" ] && kill "$reg_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

# Bundle directories: every parent of a manifests/ directory.
find "$corpus/operators" -type d -name manifests -printf '%h\n' | sort > "$tmp/dirs"
count=$(wc -l < "$tmp/dirs")
echo "bundles: $count  push jobs: $JOBS  pull concurrency: $CONC  runs: $RUNS  binary: $BIN"

. scripts/lib/registry.sh

push_times=(); add_times=(); add_rss=(); pull_times=(); pull_rss=(); loads=()
for run in $(seq "$RUNS"); do
  start_registry "$tmp/registry-$run"; reg_pid=$REGISTRY_PID
  : > "$tmp/jobs"; : > "$tmp/refs"; : > "$tmp/index-refs"
  while read -r dir; do
    rel=${dir#"$corpus/operators/"}
    pkg=${rel%%/*}; ver=${rel#*/}; ver=${ver//\//-}
    ref="$HOST/$pkg-bundle:$ver"
    printf '%s %s\n' "$dir" "$ref" >> "$tmp/jobs"
    echo "$ref" >> "$tmp/refs"
    case "$rel" in */certification) ;; *) echo "$ref" >> "$tmp/index-refs" ;; esac
  done < "$tmp/dirs"
  load=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(date +%s.%N)
  "$BIN" bundle build --bundles-file "$tmp/jobs" --jobs "$JOBS" -q > "$tmp/push.out"
  t1=$(date +%s.%N)
  push=$(echo "$t1 - $t0" | bc)
  [ "$(wc -l < "$tmp/push.out")" -eq "$count" ] || { echo "push: $(wc -l < "$tmp/push.out") of $count pushed" >&2; exit 1; }
  rm -f "$tmp/new.db"
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$BIN" index add -d "$tmp/new.db" --permissive -q \
    --bundles-file "$tmp/index-refs" > /dev/null 2> "$tmp/add.err" || { cat "$tmp/add.err" >&2; exit 1; }
  read -r add arss < "$tmp/time"
  line="run $run: load $load; push $push s; index add of $(wc -l < "$tmp/index-refs") refs $add s, peak RSS $((arss / 1024)) MiB"
  if [ -n "$PULL" ]; then
    /usr/bin/time -f '%e %M' -o "$tmp/time" "$PULL" "$tmp/refs" "$CONC" > "$tmp/pull.out"
    read -r pull rss < "$tmp/time"
    line="$line; pull+unpack $pull s, peak RSS $((rss / 1024)) MiB"
    pull_times+=("$pull"); pull_rss+=("$rss")
  fi
  echo "$line"
  push_times+=("$push"); add_times+=("$add"); add_rss+=("$arss"); loads+=("$load")
  kill "$reg_pid"; wait "$reg_pid" 2>/dev/null || true; reg_pid=
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "median push of $count bundles: $(median "${push_times[@]}") s"
echo "median index add (new database): $(median "${add_times[@]}") s, peak RSS $(( $(median "${add_rss[@]}" | cut -d. -f1) / 1024 )) MiB"
if [ -n "$PULL" ]; then
  echo "median pull+unpack of $count bundles: $(median "${pull_times[@]}") s, peak RSS $(( $(median "${pull_rss[@]}" | cut -d. -f1) / 1024 )) MiB"
fi
echo "load average at the start of each run: ${loads[*]}"
