#!/usr/bin/env bash
# The main job on the shipped fixtures, with embedded defaults and no server:
# validate bundles, check the upgrade graph, pack a SQLite index, render it
# as FBC, build bundle and index images into an OCI image layout on disk,
# sign the index image with a fresh cosign key pair and verify it.
# Everything lands in ./demo-out (removed first).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --bin olm-catalog
bin="$PWD/target/release/olm-catalog"
out="$PWD/demo-out"
rm -rf "$out" && mkdir -p "$out"

step() { printf '\n== %s\n' "$*"; }

step "validate the good fixture bundles"
"$bin" bundle validate fixtures/bundles/good/*

step "validate a broken bundle (exit 1 expected; findings point at file and line)"
if "$bin" bundle validate fixtures/bundles/bad/blind-spots; then
    echo "expected findings" >&2; exit 1
fi

step "check and draw the upgrade graph of a package"
"$bin" graph check fixtures/graph/pkg-semver
"$bin" graph render fixtures/graph/pkg-semver -o mermaid

step "pack the package's bundles into a SQLite index (semver mode)"
"$bin" index add --database "$out/index.db" --mode semver fixtures/graph/pkg-semver/*/
"$bin" index list packages --database "$out/index.db"

step "render the index as a file-based catalog"
"$bin" render "$out/index.db" -o yaml > "$out/catalog.yaml"
"$bin" validate "$out/catalog.yaml"
echo "wrote $out/catalog.yaml"

step "build a bundle image and the index image into an OCI layout"
"$bin" bundle build fixtures/bundles/good/memcached-operator-0.0.2 --tag "oci:$out/oci:memcached-operator-v0.0.2"
"$bin" index build --database "$out/index.db" --tag "oci:$out/oci:index"

step "sign the index image and verify the signature"
export COSIGN_PASSWORD=demo
"$bin" sign generate-key-pair --output-prefix "$out/cosign"
"$bin" sign "oci:$out/oci:index" --key "$out/cosign.key"
"$bin" verify "oci:$out/oci:index" --key "$out/cosign.pub" > "$out/verified.json"
echo "verified: $out/verified.json"

step "done: $out"
