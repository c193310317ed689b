#!/usr/bin/env bash
# Benchmark: `olm-catalog bundle validate` over every corpus folder
# (operators/*/*, 786 folders) in one call. Prints the median wall time
# (hyperfine if installed, else a loop of runs) and the peak RSS
# (/usr/bin/time -v). Target: <= 2 s wall and <= 300 MiB on 2 cores.
#
# Usage: scripts/bench-validate.sh [RUNS]   (OLM_CATALOG_CORPUS overrides the corpus)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"
corpus="${OLM_CATALOG_CORPUS:-$(cd .. && pwd)/shared/corpus/community-operators-prod}"
if [ ! -d "$corpus/operators" ]; then
    for base in .. ../.. ../../..; do
        if [ -d "$base/shared/corpus/community-operators-prod/operators" ]; then
            corpus="$(cd "$base/shared/corpus/community-operators-prod" && pwd)"
            break
        fi
    done
fi
[ -d "$corpus/operators" ] || { echo "corpus not found (set OLM_CATALOG_CORPUS)" >&2; exit 2; }

cargo build --release --bin olm-catalog
bin=target/release/olm-catalog
mapfile -t dirs < <(find "$corpus/operators" -mindepth 2 -maxdepth 2 -type d | sort)
# As tests/validate_corpus.rs: a version folder whose bundle sits in
# VERSION/bundle/ (rabbitmq-messaging-topology-operator) is validated there.
for i in "${!dirs[@]}"; do
    d="${dirs[$i]}"
    if [ ! -d "$d/manifests" ] && [ ! -d "$d/metadata" ] && [ -d "$d/bundle/manifests" ]; then
        dirs[$i]="$d/bundle"
    fi
done
echo "folders: ${#dirs[@]}  cores: $(nproc)  $(uname -sr)  $(date -u +%F)"


# Warm the page cache so the figure is about validation, not the disk.
"$bin" bundle validate -o json "${dirs[@]}" > /dev/null || true

if command -v hyperfine > /dev/null; then
    list="$(mktemp)"
    printf '%s\n' "${dirs[@]}" > "$list"
    hyperfine --runs "$runs" --warmup 1 -i --export-json /tmp/bench-validate.json \
        "xargs -a $list -d '\n' $bin bundle validate -o json > /dev/null"
    python3 -c "import json; r=json.load(open('/tmp/bench-validate.json'))['results'][0]; print(f\"median wall: {r['median']:.3f} s\")"
    rm -f "$list"
else
    times=()
    for _ in $(seq "$runs"); do
        start=$(date +%s.%N)
        "$bin" bundle validate -o json "${dirs[@]}" > /dev/null || true
        end=$(date +%s.%N)
        times+=("$(echo "$end - $start" | bc)")
    done
    printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "median wall: %.3f s\n", m}'
fi

/usr/bin/time -v "$bin" bundle validate -o json "${dirs[@]}" 2> /tmp/bench-validate.time > /dev/null || true
awk -F: '/Maximum resident set size/ {printf "peak RSS: %.1f MiB\n", $2/1024}' /tmp/bench-validate.time
