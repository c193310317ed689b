"""`olm-catalog serve` compared with what the real opm answered
(../shared/opm-golden, see its README): every read RPC is asked as the
golden dumps were made (opm_dump.py) and compared item by item; every
difference is reported with its section and key.

- GoldenSqliteEtcd, GoldenSqliteAckEcr: opm's own index.db files (built by
  opm v1.26.5 `index add`), served directly; answers of `opm registry serve`.
- GoldenFbcKubeGreen, GoldenFbcKepler: the corpus's catalogs/v4.18 FBC;
  answers of `opm serve`, as opm v1.73.0 gives them for bundles that carry
  `olm.csv.metadata` (opm_dump.expect_v1_73).

Environment: OLM_CATALOG_BIN (the binary), OLM_CATALOG_GOLDEN (opm-golden
dir), OLM_CATALOG_FBC (the corpus's catalogs/v4.18), and optionally
OLM_CATALOG_DUMP_DIR (where our dumps are written, to look at).
"""

import json
import os
import unittest

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

import opm_dump
from servecommon import Server


def env(name):
    v = os.environ.get(name)
    if not v:
        raise RuntimeError("%s must be set" % name)
    return v


class GoldenCase:
    """One catalog served and dumped once; the tests compare that dump."""

    kind = None  # "sqlite" or "fbc"
    package = None

    @classmethod
    def setUpClass(cls):
        golden_dir = os.path.join(env("OLM_CATALOG_GOLDEN"), cls.kind, cls.package)
        with open(os.path.join(golden_dir, "dump.json")) as fh:
            cls.golden = json.load(fh)
        if cls.kind == "sqlite":
            cls.catalog = os.path.join(golden_dir, "index.db")
        else:
            cls.catalog = os.path.join(env("OLM_CATALOG_FBC"), cls.package)
            cls.golden = opm_dump.expect_v1_73(cls.golden, cls.catalog)
        cls.server = Server(cls.catalog).start()
        try:
            cls.server.wait_serving()
            cls.dump = opm_dump.dump(cls.server.addr)
            cls.channel = cls.server.channel()
        except Exception:
            cls.server.stop()
            raise
        out = os.environ.get("OLM_CATALOG_DUMP_DIR")
        if out:
            os.makedirs(out, exist_ok=True)
            with open(os.path.join(out, "%s-%s.json" % (cls.kind, cls.package)), "w") as fh:
                json.dump(cls.dump, fh, indent=1, sort_keys=True)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        cls.server.stop()

    def test_every_rpc_answers_as_opm(self):
        diffs = opm_dump.compare(self.dump, self.golden)
        self.assertEqual(
            diffs, [], "%d differences from opm's answers:\n%s" % (len(diffs), "\n".join(diffs))
        )

    def test_dump_asked_every_golden_item(self):
        # The dump discovers its keys from our own answers; make sure the
        # comparison had something to compare in every section.
        for section in opm_dump.SECTIONS:
            self.assertTrue(self.golden.get(section), section)
            self.assertTrue(self.dump.get(section), section)

    def test_health_serving_for_any_service(self):
        health = health_pb2_grpc.HealthStub(self.channel)
        for svc in ("Registry", "", "api.Registry", "no.such.Service"):
            r = health.Check(health_pb2.HealthCheckRequest(service=svc), timeout=5)
            self.assertEqual(r.status, health_pb2.HealthCheckResponse.SERVING, svc)
        watch = health.Watch(health_pb2.HealthCheckRequest(service="Registry"), timeout=5)
        self.assertEqual(next(watch).status, health_pb2.HealthCheckResponse.SERVING)
        watch.cancel()
        with self.assertRaises(grpc.RpcError) as ctx:
            next(watch)
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.CANCELLED)


class GoldenSqliteEtcd(GoldenCase, unittest.TestCase):
    kind, package = "sqlite", "etcd"


class GoldenSqliteAckEcr(GoldenCase, unittest.TestCase):
    kind, package = "sqlite", "ack-ecr-controller"


class GoldenFbcKubeGreen(GoldenCase, unittest.TestCase):
    kind, package = "fbc", "kube-green"


class GoldenFbcKepler(GoldenCase, unittest.TestCase):
    kind, package = "fbc", "kepler-operator"


class ExpectV173(unittest.TestCase):
    """The golden transformation itself, on a small case worked by hand."""

    def test_csv_metadata_becomes_csv_json(self):
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "c.yaml"), "w") as fh:
                fh.write(
                    "schema: olm.package\nname: p\ndefaultChannel: a\ndescription: pkg desc\n"
                    "icon: {base64data: 'AA\n  AA', mediatype: image/png}\n---\n"
                    "schema: olm.bundle\nname: p.v1.0.0\npackage: p\nimage: q/p:1\n"
                    "relatedImages: [{name: op, image: q/op:1}]\nproperties: []\n"
                )
            meta = {"displayName": "P", "Keywords": ["k"], "provider": {"name": "acme"},
                    "crdDescriptions": {"owned": [{"name": "ps.x", "version": "v1", "kind": "P",
                                                   "specDescriptors": [{"path": "a", "value": None}],
                                                   "unknown": 1}]}}
            props = [{"type": "olm.csv.metadata", "value": json.dumps(meta)},
                     {"type": "olm.package", "value": '{"packageName":"p","version":"1.0.0"}'}]
            b = {"csvName": "p.v1.0.0", "packageName": "p", "channelName": "a", "bundlePath": "q/p:1",
                 "version": "1.0.0", "properties": props}
            golden = {"getBundle": {"p/a/p.v1.0.0": dict(b)}, "listBundles": {"value": [dict(b)]}}
            out = opm_dump.expect_v1_73(golden, d)
        listed = out["listBundles"]["value"][0]
        self.assertEqual(listed["properties"], props[1:])
        self.assertNotIn("csvJson", listed)
        got = out["getBundle"]["p/a/p.v1.0.0"]
        self.assertEqual(got["properties"], props[1:])
        self.assertEqual(got["object"], [got["csvJson"]])
        csv = out["blobs"][got["csvJson"]["$blob"]]
        self.assertEqual(
            csv,
            {
                "kind": "ClusterServiceVersion",
                "apiVersion": "operators.coreos.com/v1alpha1",
                "metadata": {"name": "p.v1.0.0", "creationTimestamp": None},
                "spec": {
                    "install": {"strategy": "deployment", "spec": {"deployments": None}},
                    "version": "1.0.0",
                    "customresourcedefinitions": {
                        "owned": [{"name": "ps.x", "version": "v1", "kind": "P",
                                   "specDescriptors": [{"path": "a", "value": None}]}]
                    },
                    "apiservicedefinitions": {},
                    "displayName": "P",
                    "description": "pkg desc",
                    "keywords": ["k"],
                    "provider": {"name": "acme"},
                    "icon": [{"base64data": "AAAA", "mediatype": "image/png"}],
                    "cleanup": {"enabled": False},
                    "relatedImages": [{"name": "op", "image": "q/op:1"}],
                },
                "status": {"cleanup": {}},
            },
        )


if __name__ == "__main__":
    unittest.main()
