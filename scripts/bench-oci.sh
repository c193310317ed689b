#!/usr/bin/env bash
# Benchmarks of the oci area (figures go to BENCHMARKS.md, section "oci").
#
#   scripts/bench-oci.sh [RUNS] [PUSH_JOBS] [PULL_CONCURRENCY]
#
# For each run, on a fresh loopback docker-registry (empty storage):
#   push: `olm-catalog bundle build DIR --tag 127.0.0.1:PORT/PKG-bundle:VERSION`
#         for every bundle of the corpus (PUSH_JOBS processes at a time);
#   pull: pulls and unpacks all those images into bundles (the pull+unpack
#         part of `index add`), PULL_CONCURRENCY at a time, with peak RSS.
# Prints each run and the medians. Needs: cargo, /usr/bin/docker-registry,
# GNU time (/usr/bin/time), curl.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
JOBS=${2:-4}
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

cargo build --release --quiet --bin olm-catalog
cargo bench --quiet --bench oci_pull --no-run 2>/dev/null
BIN=$(pwd)/target/release/olm-catalog
PULL=$(ls -t target/release/deps/oci_pull-* | grep -v '\.d$' | head -1)

tmp=$(mktemp -d)
reg_pid=
cleanup() { [ -n "$reg_pid" ] && kill "$reg_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

# Bundle directories: every parent of a manifests/ directory.
find "$corpus/operators" -type d -name manifests -printf '%h\n' | sort > "$tmp/dirs"
count=$(wc -l < "$tmp/dirs")
echo "bundles: $count  push jobs: $JOBS  pull concurrency: $CONC  runs: $RUNS"

start_registry() {
  local port storage
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  storage="$tmp/storage-$1"
  mkdir -p "$storage"
  cat > "$tmp/config.yml" <<YAML
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $storage
http:
  addr: 127.0.0.1:$port
YAML
  /usr/bin/docker-registry serve "$tmp/config.yml" > "$tmp/registry.log" 2>&1 &
  reg_pid=$!
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/v2/" > /dev/null && break; sleep 0.1; done
  HOST=127.0.0.1:$port
}

push_times=(); pull_times=(); pull_rss=()
for run in $(seq "$RUNS"); do
  start_registry "$run"
  : > "$tmp/jobs"; : > "$tmp/refs"
  while read -r dir; do
    rel=${dir#"$corpus/operators/"}
    pkg=${rel%%/*}; ver=${rel#*/}; ver=${ver%%/*}
    ref="$HOST/$pkg-bundle:$ver"
    printf '%s\n%s\n' "$dir" "$ref" >> "$tmp/jobs"
    echo "$ref" >> "$tmp/refs"
  done < "$tmp/dirs"
  t0=$(date +%s.%N)
  tr '\n' '\0' < "$tmp/jobs" | xargs -0 -P "$JOBS" -n 2 sh -c '"$0" bundle build "$1" --tag "$2" -q > /dev/null' "$BIN"
  t1=$(date +%s.%N)
  push=$(echo "$t1 - $t0" | bc)
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$PULL" "$tmp/refs" "$CONC" > "$tmp/pull.out"
  read -r pull rss < "$tmp/time"
  echo "run $run: push $push s; pull+unpack $pull s, peak RSS $((rss / 1024)) MiB ($(cat "$tmp/pull.out"))"
  push_times+=("$push"); pull_times+=("$pull"); pull_rss+=("$rss")
  kill "$reg_pid"; wait "$reg_pid" 2>/dev/null || true; reg_pid=
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "median push of $count bundles: $(median "${push_times[@]}") s"
echo "median pull+unpack of $count bundles: $(median "${pull_times[@]}") s, peak RSS $(( $(median "${pull_rss[@]}" | cut -d. -f1) / 1024 )) MiB"
