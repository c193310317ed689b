#!/usr/bin/env bash
# Benchmark of `catalog mirror` (figures go to BENCHMARKS.md, section
# "catalog mirror").
#
#   scripts/bench-mirror.sh [RUNS] [JOBS] [BUNDLES]
#
# Once: two loopback docker-registries (source, destination); the first
# BUNDLES (default 100) bundle directories of the corpus built and pushed to
# the source (`bundle build --bundles-file`); a catalog of them (`index add
# --permissive`, then `migrate` to FBC) whose relatedImages are cut down to
# the bundle images, as the corpus's related images live on the internet.
# Then RUNS times, each into new repositories of the destination:
#   mirror:   `catalog mirror FBC --to DEST/runN -j JOBS` (resolve every tag,
#             copy every image, write catalog/mapping/IDMS);
#   again:    the same command once more (everything there: copies nothing);
#   skopeo:   `skopeo copy --all --preserve-digests` of the same images by
#             digest, one after the other, and JOBS at a time (xargs -P).
# Prints each run, the medians and the load average. Needs: cargo,
# /usr/bin/docker-registry, skopeo, curl, bc, python3.
# BIN=path/to/olm-catalog skips the release build of the binary.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
JOBS=${2:-8}
BUNDLES=${3:-100}

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

tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT

. scripts/lib/registry.sh
start_registry "$tmp/src"; pids+=("$REGISTRY_PID"); SRC=$HOST
start_registry "$tmp/dst"; pids+=("$REGISTRY_PID"); DST=$HOST

# The first BUNDLES bundle directories (certification copies left out, as
# scripts/bench-index.sh does).
find "$corpus/operators" -type d -name manifests -printf '%h\n' | grep -v '/certification$' \
  | sort | head -n "$BUNDLES" > "$tmp/dirs"
: > "$tmp/jobs"
while read -r dir; do
  rel=${dir#"$corpus/operators/"}
  pkg=${rel%%/*}; ver=${rel#*/}; ver=${ver//\//-}
  printf '%s %s\n' "$dir" "$SRC/$pkg-bundle:$ver" >> "$tmp/jobs"
done < "$tmp/dirs"
"$BIN" bundle build --bundles-file "$tmp/jobs" --jobs 8 -q > "$tmp/pushed"
cut -d' ' -f2 "$tmp/jobs" > "$tmp/refs"
"$BIN" index add -d "$tmp/index.db" --mode semver --permissive -q --bundles-file "$tmp/refs" > /dev/null
"$BIN" migrate "$tmp/index.db" "$tmp/fbc" > /dev/null
python3 - "$tmp/fbc" <<'PY'
import json, pathlib, sys
for f in pathlib.Path(sys.argv[1]).glob("*/catalog.json"):
    dec, text, objs, i = json.JSONDecoder(), f.read_text(), [], 0
    while i < len(text):
        while i < len(text) and text[i].isspace(): i += 1
        if i >= len(text): break
        o, i = dec.raw_decode(text, i); objs.append(o)
    for o in objs:
        if o.get("schema") == "olm.bundle":
            o["relatedImages"] = [{"name": "", "image": o["image"]}]
    f.write_text("".join(json.dumps(o, indent=4) + "\n" for o in objs))
PY
# The images by digest, for skopeo: REF@DIGEST from the push output.
sed 's/:[^:/@]*@/@/' "$tmp/pushed" > "$tmp/by-digest"
n=$(wc -l < "$tmp/by-digest")
echo "bundles pushed: $n  catalog bundles: $(cat "$tmp"/fbc/*/catalog.json | grep -c '"schema": "olm.bundle"')  jobs: $JOBS  runs: $RUNS  binary: $BIN"

mirror_t=(); again_t=(); sk_seq=(); sk_par=(); loads=()
for run in $(seq "$RUNS"); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(date +%s.%N)
  "$BIN" catalog mirror "$tmp/fbc" --to "$DST/run$run" --output-dir "$tmp/out$run" -j "$JOBS" -q -o json > "$tmp/report$run.json" 2> /dev/null
  t1=$(date +%s.%N)
  "$BIN" catalog mirror "$tmp/fbc" --to "$DST/run$run" --output-dir "$tmp/out$run" -j "$JOBS" -q -o json > "$tmp/again$run.json" 2> /dev/null
  t2=$(date +%s.%N)
  copied=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["copied"])' "$tmp/report$run.json")
  recopied=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["copied"])' "$tmp/again$run.json")
  # skopeo, one image after the other.
  t3=$(date +%s.%N)
  while read -r ref; do
    path=${ref#"$SRC/"}; path=${path%@*}
    skopeo copy -q --all --preserve-digests --src-tls-verify=false --dest-tls-verify=false \
      "docker://$ref" "docker://$DST/skopeo-seq$run/$path:copy"
  done < "$tmp/by-digest"
  t4=$(date +%s.%N)
  # skopeo, JOBS at a time.
  xargs -P "$JOBS" -I{} sh -c 'ref="$1"; path=${ref#"$2/"}; path=${path%@*}; skopeo copy -q --all --preserve-digests --src-tls-verify=false --dest-tls-verify=false "docker://$ref" "docker://$3/$path:copy"' _ {} "$SRC" "$DST/skopeo-par$run" < "$tmp/by-digest"
  t5=$(date +%s.%N)
  m=$(echo "$t1 - $t0" | bc); a=$(echo "$t2 - $t1" | bc)
  s=$(echo "$t4 - $t3" | bc); p=$(echo "$t5 - $t4" | bc)
  echo "run $run: load $load; mirror $m s ($copied copied); again $a s ($recopied copied); skopeo one by one $s s; skopeo -P $JOBS $p s"
  mirror_t+=("$m"); again_t+=("$a"); sk_seq+=("$s"); sk_par+=("$p"); loads+=("$load")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "median catalog mirror of $n images: $(median "${mirror_t[@]}") s; second run (nothing to copy): $(median "${again_t[@]}") s"
echo "median skopeo copy of the same images: one by one $(median "${sk_seq[@]}") s, $JOBS at a time $(median "${sk_par[@]}") s"
echo "load average at the start of each run: ${loads[*]}"
