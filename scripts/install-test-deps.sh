#!/usr/bin/env bash
# Installs everything the test suite needs on Debian: a real OCI registry
# (CNCF distribution, Debian's docker-registry), skopeo to read images back,
# htpasswd for the auth tests, openssl for the TLS tests' certificates, curl
# for the HTTP API tests of `serve --http`, chromium (headless) to look at
# the SVG pictures and HTML pages the way a reader's browser does, and
# the Python gRPC client used to test `serve` (a client nobody here wrote).
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
need=()
for pkg in docker-registry skopeo apache2-utils openssl curl chromium; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# The package may start a registry service on :5000; the tests start their
# own on free ports and need none running.
$SUDO pkill -f '^/usr/bin/docker-registry serve /etc/docker/registry' 2>/dev/null || true
if [ -f tests/python/requirements.txt ]; then
    python3 -m pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt
fi
