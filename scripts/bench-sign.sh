#!/bin/sh
# Median wall time of `sign` and `verify` on an OCI layout (no network), N runs.
# Usage: scripts/bench-sign.sh [BINARY] [N]
set -eu
BIN=${1:-target/release/olm-catalog}
N=${2:-9}
BIN=$(realpath "$BIN")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cd "$W"
export COSIGN_PASSWORD=bench
"$BIN" sign generate-key-pair >/dev/null 2>&1
mkdir -p L/blobs/sha256
put() { d=$(printf '%s' "$1" | sha256sum | cut -d' ' -f1); printf '%s' "$1" > "L/blobs/sha256/$d"; echo "$d"; }
C=$(put '{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}')
M="{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\",\"size\":79,\"digest\":\"sha256:$C\"},\"layers\":[]}"
MD=$(put "$M")
echo '{"imageLayoutVersion":"1.0.0"}' > L/oci-layout
echo "{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"sha256:$MD\",\"size\":${#M},\"annotations\":{\"org.opencontainers.image.ref.name\":\"v1\"}}]}" > L/index.json
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ms() { s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
i=0; : > sign.t; : > verify.t
while [ $i -lt "$N" ]; do
  ms "$BIN" sign oci:L:v1 --key cosign.key -a run=$i >> sign.t
  ms "$BIN" verify oci:L:v1 --key cosign.pub >> verify.t
  i=$((i + 1))
done
"$BIN" verify oci:L:v1 --key cosign.pub > /dev/null  # fails the script (set -e) if nothing verified
echo "sign (decrypt key + sign + write, layout): median $(median < sign.t) ms over $N runs"
echo "verify (all signatures, layout; $N signatures at the end): median $(median < verify.t) ms over $N runs"
