#!/usr/bin/env bash
# The test command: installs what the tests need (idempotent), then runs the
# whole suite (unit, integration, corpus, real registry, gRPC client) in one
# cargo invocation.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-deps.sh
cargo test --locked "$@"
