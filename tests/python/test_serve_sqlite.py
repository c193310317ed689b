"""`olm-catalog serve index.db` checked with a grpcio client against the
answers `opm registry serve` (pkg/sqlite/query.go) gives for the small index
tests/serve_python.rs writes (see its comment for the graph).

Environment: OLM_CATALOG_BIN, OLM_CATALOG_SQLITE (the index).
"""

import json
import os
import unittest

from grpc_health.v1 import health_pb2, health_pb2_grpc

from servecommon import ServedCatalogTest, stubs

pb, _ = stubs()

E = "etcdoperator.v"
CLUSTER = ("etcd.database.coreos.com", "v1beta2", "EtcdCluster")
BACKUP = ("etcd.database.coreos.com", "v1beta2", "EtcdBackup")
OTHER = ("other.io", "v1", "Other")


def entries(stream):
    return sorted((e.packageName, e.channelName, e.bundleName, e.replaces) for e in stream)


def gvks(msgs):
    return sorted((g.group, g.version, g.kind, g.plural) for g in msgs)


class SqliteServeTest(ServedCatalogTest):
    @classmethod
    def setUpClass(cls):
        cls.serve(os.environ["OLM_CATALOG_SQLITE"])

    def test_health(self):
        r = health_pb2_grpc.HealthStub(self.channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        self.assertEqual(r.status, health_pb2.HealthCheckResponse.SERVING)

    def test_packages(self):
        self.assertEqual([p.name for p in self.stub.ListPackages(pb.ListPackageRequest())], ["etcd", "other"])
        p = self.stub.GetPackage(pb.GetPackageRequest(name="etcd"))
        self.assertEqual(p.defaultChannelName, "alpha")
        self.assertEqual(sorted((c.name, c.csvName) for c in p.channels), [("alpha", E + "0.9.2"), ("beta", E + "0.9.0")])
        self.assert_unknown(lambda: self.stub.GetPackage(pb.GetPackageRequest(name="nope")), "package nope not found")

    def test_get_bundle(self):
        b = self.stub.GetBundle(pb.GetBundleRequest(pkgName="etcd", channelName="alpha", csvName=E + "0.9.2"))
        self.assertEqual((b.csvName, b.packageName, b.channelName, b.version), (E + "0.9.2", "etcd", "alpha", "0.9.2"))
        self.assertEqual(b.bundlePath, "quay.io/coreos/etcd-operator@sha256:92")
        self.assertEqual(b.skipRange, ">=0.9.0 <0.9.2")
        # GetBundle leaves replaces and skips out (the query does not select them).
        self.assertEqual((b.replaces, list(b.skips)), ("", []))
        self.assertEqual(len(b.object), 2)
        csv = json.loads(b.csvJson)
        self.assertEqual(csv["kind"], "ClusterServiceVersion")
        # Objects are re-marshalled the way Go does: HTML characters escaped.
        self.assertIn("\\u003c2\\u003e", b.csvJson)
        self.assertEqual(b.object[1], b.csvJson)
        self.assertEqual(
            gvks(b.providedApis),
            sorted([CLUSTER + ("etcdclusters",), BACKUP + ("etcdbackups",)]),
        )
        self.assertEqual(list(b.requiredApis), [])
        self.assertEqual(sorted(p.type for p in b.properties), ["olm.gvk", "olm.gvk", "olm.package"])
        o = self.stub.GetBundle(pb.GetBundleRequest(pkgName="other", channelName="stable", csvName="other.v1.0.0"))
        self.assertEqual(gvks(o.requiredApis), [CLUSTER + ("etcdclusters",)])
        self.assertEqual(sorted(d.type for d in o.dependencies), ["olm.gvk", "olm.package"])
        self.assert_unknown(
            lambda: self.stub.GetBundle(pb.GetBundleRequest(pkgName="etcd", channelName="alpha", csvName="x")),
            "no entry found for etcd alpha x",
        )

    def test_bundle_for_channel(self):
        # opm's query selects the head's name and its `csv` column only
        # (NULL in this index).
        b = self.stub.GetBundleForChannel(pb.GetBundleInChannelRequest(pkgName="etcd", channelName="beta"))
        self.assertEqual(b, pb.Bundle(csvName=E + "0.9.0"))
        self.assert_unknown(
            lambda: self.stub.GetBundleForChannel(pb.GetBundleInChannelRequest(pkgName="etcd", channelName="nope")),
            "no entry found for etcd nope",
        )

    def test_replaces_across_skips(self):
        r = lambda n: entries(self.stub.GetChannelEntriesThatReplace(pb.GetAllReplacementsRequest(csvName=n)))
        self.assertEqual(r(E + "0.9.0"), [("etcd", "alpha", E + "0.9.2", E + "0.9.0")])
        self.assertEqual(r(E + "0.9.1"), [("etcd", "alpha", E + "0.9.2", E + "0.9.1")])
        self.assertEqual(
            r(E + "0.6.1"),
            [("etcd", "alpha", E + "0.9.0", E + "0.6.1"), ("etcd", "beta", E + "0.9.0", E + "0.6.1")],
        )
        self.assert_unknown(lambda: r(E + "0.9.2"), "no channel entries found that replace " + E + "0.9.2")
        b = self.stub.GetBundleThatReplaces(pb.GetReplacementRequest(csvName=E + "0.9.1", pkgName="etcd", channelName="alpha"))
        self.assertEqual(b.csvName, E + "0.9.2")
        b = self.stub.GetBundleThatReplaces(pb.GetReplacementRequest(csvName=E + "0.6.1", pkgName="etcd", channelName="beta"))
        self.assertEqual((b.csvName, b.channelName), (E + "0.9.0", "beta"))
        self.assert_unknown(
            lambda: self.stub.GetBundleThatReplaces(pb.GetReplacementRequest(csvName=E + "0.9.2", pkgName="etcd", channelName="alpha")),
            "no entry found for etcd alpha",
        )

    def test_providers(self):
        g, v, k = CLUSTER
        got = entries(self.stub.GetChannelEntriesThatProvide(pb.GetAllProvidersRequest(group=g, version=v, kind=k)))
        self.assertEqual(
            got,
            sorted([
                ("etcd", "alpha", E + "0.9.2", E + "0.9.1"),
                ("etcd", "alpha", E + "0.9.2", E + "0.9.0"),
                ("etcd", "alpha", E + "0.9.0", E + "0.6.1"),
                ("etcd", "alpha", E + "0.6.1", ""),
                ("etcd", "beta", E + "0.9.0", E + "0.6.1"),
                ("etcd", "beta", E + "0.6.1", ""),
            ]),
        )
        latest = entries(self.stub.GetLatestChannelEntriesThatProvide(pb.GetLatestProvidersRequest(group=g, version=v, kind=k)))
        self.assertEqual([e[:3] for e in latest], [("etcd", "alpha", E + "0.9.2"), ("etcd", "beta", E + "0.9.0")])
        # Two alpha entries of depth 0 (the skip and the replaces edge): SQLite may pick either.
        self.assertIn(latest[0][3], (E + "0.9.1", E + "0.9.0"))
        self.assertEqual(latest[1][3], E + "0.6.1")
        d = self.stub.GetDefaultBundleThatProvides(pb.GetDefaultProviderRequest(group=g, version=v, kind=k))
        self.assertEqual((d.packageName, d.channelName, d.csvName), ("etcd", "alpha", E + "0.9.2"))
        o = self.stub.GetDefaultBundleThatProvides(pb.GetDefaultProviderRequest(group=OTHER[0], version=OTHER[1], kind=OTHER[2]))
        self.assertEqual((o.packageName, o.channelName, o.csvName), ("other", "stable", "other.v1.0.0"))
        self.assert_unknown(
            lambda: self.stub.GetChannelEntriesThatProvide(pb.GetAllProvidersRequest(group="x", version="v1", kind="K")),
            "no channel entries found that provide x v1 K",
        )
        self.assert_unknown(
            lambda: self.stub.GetLatestChannelEntriesThatProvide(pb.GetLatestProvidersRequest(group="x", version="v1", kind="K")),
            "no channel entries found that provide x v1 K",
        )
        self.assert_unknown(
            lambda: self.stub.GetDefaultBundleThatProvides(pb.GetDefaultProviderRequest(group="x", version="v1", kind="K")),
            "no entry found that provides x v1 K",
        )

    def test_list_bundles(self):
        got = {(b.packageName, b.channelName, b.csvName): b for b in self.stub.ListBundles(pb.ListBundlesRequest())}
        self.assertEqual(
            sorted(got),
            sorted([
                ("etcd", "alpha", E + "0.9.2"),
                ("etcd", "alpha", E + "0.9.0"),
                ("etcd", "alpha", E + "0.6.1"),
                ("etcd", "beta", E + "0.9.0"),
                ("etcd", "beta", E + "0.6.1"),
                ("other", "stable", "other.v1.0.0"),
            ]),
        )
        head = got[("etcd", "alpha", E + "0.9.2")]
        # listBundlesQuery follows replaces links from the entries of least
        # depth: both of the head's depth-0 entries (to 0.9.1 and 0.9.0) are
        # such links, and it reports the largest replaced name, no skips.
        self.assertEqual((head.replaces, list(head.skips)), (E + "0.9.1", []))
        self.assertEqual((head.csvJson, list(head.object)), ("", []))
        # APIs from the olm.gvk rows: no plural.
        self.assertEqual(gvks(head.providedApis), sorted([CLUSTER + ("",), BACKUP + ("",)]))
        self.assertEqual(got[("etcd", "alpha", E + "0.9.0")].replaces, E + "0.6.1")
        # No skip entry: no skips (not one empty skip).
        self.assertEqual(list(got[("etcd", "beta", E + "0.6.1")].skips), [])
        other = got[("other", "stable", "other.v1.0.0")]
        self.assertEqual(json.loads(other.csvJson)["metadata"]["name"], "other.v1.0.0")
        self.assertEqual(len(other.dependencies), 2)


if __name__ == "__main__":
    unittest.main()
