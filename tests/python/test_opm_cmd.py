"""The CMD lines of opm-built images, run through a link named `opm` to
the olm-catalog binary, answered through OLM's gRPC client and compared
with the real opm's golden dumps (../shared/opm-golden, see
test_serve_golden.py for the comparison):

- index images (`opm index add` builds them): `opm registry serve
  --database /database/index.db`, here on opm's own etcd index;
- catalog images (`opm generate dockerfile` writes them): the builder
  stage's `opm serve /configs --cache-dir=/tmp/cache --cache-only`, then
  the CMD `opm serve /configs --cache-dir=/tmp/cache` (integrity enforced,
  opm's default), here on the corpus's kube-green catalog.

Environment: as test_serve_golden.py (OLM_CATALOG_BIN, OLM_CATALOG_GOLDEN,
OLM_CATALOG_FBC).
"""

import hashlib
import os
import shutil
import subprocess
import tempfile
import unittest

import test_serve_golden as golden
from servecommon import Server, binary


class OpmServer(Server):
    """The server started by an image's CMD, through an `opm` link."""

    def __init__(self, catalog, *extra):
        super().__init__(catalog, *extra)
        self.catalog = catalog
        self.dir = tempfile.mkdtemp(prefix="olm-catalog-opm-")
        opm = os.path.join(self.dir, "opm")
        os.symlink(binary(), opm)
        self.cache = None
        if catalog.endswith(".db"):
            with open(catalog, "rb") as f:
                self.db_digest = hashlib.sha256(f.read()).hexdigest()
            self.cmd = [opm, "registry", "serve", "--database", catalog, "-p", "0",
                        "-t", os.path.join(self.dir, "termination-log")]
        else:
            self.cache = os.path.join(self.dir, "cache")
            cache = "--cache-dir=" + self.cache
            built = subprocess.run([opm, "serve", catalog, cache, "--cache-only"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   text=True, timeout=120)
            if built.returncode != 0:
                raise RuntimeError("opm serve --cache-only failed: %s" % built.stderr)
            self.cmd = [opm, "serve", catalog, cache, "-p", "0"]

    def stop(self):
        super().stop()
        shutil.rmtree(self.dir, True)


class OpmCase(golden.GoldenCase):
    @classmethod
    def setUpClass(cls):
        saved = golden.Server
        golden.Server = OpmServer
        try:
            super().setUpClass()
        finally:
            golden.Server = saved


class OpmRegistryServeEtcd(OpmCase, unittest.TestCase):
    kind, package = "sqlite", "etcd"

    def test_database_is_not_written(self):
        # opm registry serve may migrate the database it is given; ours
        # serves it read-only, so the golden file is byte for byte as it was.
        with open(self.server.catalog, "rb") as f:
            now = hashlib.sha256(f.read()).hexdigest()
        self.assertEqual(now, self.server.db_digest)


class OpmServeKubeGreen(OpmCase, unittest.TestCase):
    kind, package = "fbc", "kube-green"

    def test_cache_only_left_a_cache_the_server_started_from(self):
        # The builder stage's --cache-only wrote the cache; the CMD, with
        # integrity enforced, refuses to start without a matching one, so
        # answers at all mean it was there and current.
        entries = os.listdir(self.server.cache)
        self.assertTrue(entries, "--cache-only wrote nothing")


if __name__ == "__main__":
    unittest.main()
