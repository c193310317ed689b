#!/usr/bin/env bash
# Checks that the library builds with each feature set a user may pick
# (Cargo.toml [features]; docs/architecture.md, "Using the library"):
# nothing (validate only), sqlite, registry, serve; and that the public API
# (rustdoc of the default set) names no rusqlite type. The default set (all,
# with the binary) is what scripts/test.sh builds.
#
# Not part of scripts/test.sh: each set resolves its dependencies with other
# features, so each is a separate build of them (1.5 to 7 minutes each on
# 2 cores on a warm target/). Run it after touching Cargo.toml, build.rs,
# src/lib.rs, a module's imports of another module or a public signature
# of `index`.
set -euo pipefail
cd "$(dirname "$0")/.."
# Warnings fail the check too (dead code behind a missing cfg), read from
# the output rather than set with RUSTFLAGS, which would rebuild every crate.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for features in "" sqlite registry serve; do
    echo "== cargo check --lib --no-default-features --features '$features'" >&2
    cargo check --locked --lib --no-default-features --features "$features" 2>&1 | tee "$log" >&2
    if grep -q '^warning' "$log"; then
        echo "check-features: warnings with features '$features'" >&2
        exit 1
    fi
done
# The crate docs' links must resolve without the optional modules too.
echo "== cargo doc --no-deps --no-default-features" >&2
cargo doc --locked --no-deps --no-default-features 2>&1 | tee "$log" >&2
if grep -q '^warning' "$log"; then
    echo "check-features: doc warnings without default features" >&2
    exit 1
fi
# No rusqlite type in the public API (issue 16): the index's connections,
# transactions and rows stay crate-private. rustdoc links every public
# type it shows, so a rusqlite type anywhere in a public signature (a field,
# an argument, a return type, a trait impl) shows up as a `rusqlite::` path.
echo "== cargo doc --no-deps --lib (no rusqlite in the public API)" >&2
# Pages of items that were public once stay behind otherwise.
rm -rf target/doc/olm_catalog
cargo doc --locked --no-deps --lib 2>&1 | tee "$log" >&2
if grep -rlE 'rusqlite::|/rusqlite/' target/doc/olm_catalog; then
    echo "check-features: rusqlite types in the public API (the pages above)" >&2
    exit 1
fi
