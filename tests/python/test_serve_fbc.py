"""`olm-catalog serve FBC_DIR` over the corpus's real file-based catalogs,
checked with a grpcio client against answers worked out here from the
catalog files and opm's rules (pkg/cache, alpha/model):

- a channel's head is the one entry no other entry replaces or skips;
- GetBundle/GetBundleForChannel/GetBundleThatReplaces leave replaces and
  skips out, ListBundles has them and no csvJson/object for bundles with an image;
- provided APIs are the olm.gvk properties, required ones olm.gvk.required;
- what is not there is code UNKNOWN with opm's message.

Environment: OLM_CATALOG_BIN (the binary), OLM_CATALOG_FBC (catalog dir).
"""

import json
import os
import unittest

import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from servecommon import ServedCatalogTest, stubs

pb, _ = stubs()


def load_catalog(root):
    """Every FBC object under root, by schema."""
    out = {"olm.package": [], "olm.channel": [], "olm.bundle": [], "olm.deprecations": []}
    for dirpath, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            if not f.endswith((".yaml", ".yml", ".json")):
                continue
            with open(os.path.join(dirpath, f)) as fh:
                for doc in yaml.safe_load_all(fh):
                    if doc and doc.get("schema") in out:
                        out[doc["schema"]].append(doc)
    return out


class Model:
    """The catalog as opm's model sees it."""

    def __init__(self, cfg):
        self.packages = {p["name"]: p for p in cfg["olm.package"]}
        self.bundles = {(b["package"], b["name"]): b for b in cfg["olm.bundle"]}
        self.channels = {}  # (pkg, ch) -> {name: entry}
        for c in cfg["olm.channel"]:
            self.channels[(c["package"], c["name"])] = {e["name"]: e for e in c.get("entries", [])}
        self.heads = {}
        for key, entries in self.channels.items():
            incoming = set()
            for e in entries.values():
                if e.get("replaces"):
                    incoming.add(e["replaces"])
                incoming.update(e.get("skips") or [])
            heads = [n for n in entries if n not in incoming]
            assert len(heads) == 1, (key, heads)
            self.heads[key] = heads[0]

    def props(self, pkg, name, typ):
        return [p["value"] for p in self.bundles[(pkg, name)].get("properties", []) if p["type"] == typ]

    def version(self, pkg, name):
        return self.props(pkg, name, "olm.package")[0]["version"]

    def provided(self, pkg, name):
        return sorted((g["group"], g["version"], g["kind"]) for g in self.props(pkg, name, "olm.gvk"))

    def required(self, pkg, name):
        return sorted(
            (g["group"], g["version"], g["kind"]) for g in self.props(pkg, name, "olm.gvk.required")
        )

    def entries_for_bundle(self, pkg, ch, name, ignore_channel):
        e = self.channels[(pkg, ch)][name]
        rep = e.get("replaces", "")
        out = [(pkg, ch, name, rep)]
        for s in e.get("skips") or []:
            if s != rep and (ignore_channel or s in self.channels[(pkg, ch)]):
                out.append((pkg, ch, name, s))
        return out

    def all_gvks(self):
        out = set()
        for (pkg, name) in self.bundles:
            out.update(self.provided(pkg, name))
        return sorted(out)


def gvks(msgs):
    return sorted((g.group, g.version, g.kind) for g in msgs)


def entries(stream):
    return sorted((e.packageName, e.channelName, e.bundleName, e.replaces) for e in stream)


class FbcServeTest(ServedCatalogTest):
    @classmethod
    def setUpClass(cls):
        root = os.environ["OLM_CATALOG_FBC"]
        cls.model = Model(load_catalog(root))
        assert cls.model.packages, "no packages under " + root
        cls.serve(root)

    def check_bundle(self, b, pkg, ch, name, trimmed=True):
        m = self.model
        entry = m.channels[(pkg, ch)][name]
        raw = m.bundles[(pkg, name)]
        self.assertEqual((b.csvName, b.packageName, b.channelName), (name, pkg, ch))
        self.assertEqual(b.bundlePath, raw.get("image", ""))
        self.assertEqual(b.version, m.version(pkg, name))
        self.assertEqual(b.skipRange, entry.get("skipRange", ""))
        self.assertEqual(gvks(b.providedApis), m.provided(pkg, name))
        self.assertEqual(gvks(b.requiredApis), m.required(pkg, name))
        want_props = [
            (p["type"], p["value"])
            for p in raw.get("properties", [])
            if p["type"] not in ("olm.bundle.object", "olm.csv.metadata")
        ]
        self.assertEqual([(p.type, json.loads(p.value)) for p in b.properties], want_props)
        want_deps = [("olm.gvk", v) for v in m.props(pkg, name, "olm.gvk.required")] + [
            ("olm.package", {"packageName": v["packageName"], "version": v["versionRange"]})
            for v in m.props(pkg, name, "olm.package.required")
        ]
        self.assertEqual(
            sorted((d.type, json.dumps(json.loads(d.value), sort_keys=True)) for d in b.dependencies),
            sorted((t, json.dumps(v, sort_keys=True)) for t, v in want_deps),
        )
        if trimmed:
            self.assertEqual(b.replaces, "")
            self.assertEqual(list(b.skips), [])
            meta = m.props(pkg, name, "olm.csv.metadata")
            if meta:
                csv = json.loads(b.csvJson)
                self.assertEqual(csv["kind"], "ClusterServiceVersion")
                self.assertEqual(csv["metadata"]["name"], name)
                self.assertEqual(csv["spec"]["displayName"], meta[0].get("displayName", ""))
                self.assertEqual(csv["spec"]["install"]["strategy"], "deployment")
                self.assertEqual(list(b.object), [b.csvJson])
        else:
            self.assertEqual(b.replaces, entry.get("replaces", ""))
            self.assertEqual(list(b.skips), entry.get("skips") or [])

    def test_health_serving(self):
        health = health_pb2_grpc.HealthStub(self.channel)
        for svc in ("", "api.Registry"):
            r = health.Check(health_pb2.HealthCheckRequest(service=svc), timeout=5)
            self.assertEqual(r.status, health_pb2.HealthCheckResponse.SERVING, svc)

    def test_reflection_lists_services(self):
        refl = reflection_pb2_grpc.ServerReflectionStub(self.channel)
        reqs = [
            reflection_pb2.ServerReflectionRequest(list_services=""),
            reflection_pb2.ServerReflectionRequest(file_containing_symbol="api.Registry"),
        ]
        answers = list(refl.ServerReflectionInfo(iter(reqs), timeout=10))
        names = {s.name for s in answers[0].list_services_response.service}
        self.assertTrue(
            {"api.Registry", "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"} <= names,
            names,
        )
        from google.protobuf import descriptor_pb2

        fd = descriptor_pb2.FileDescriptorProto.FromString(
            answers[1].file_descriptor_response.file_descriptor_proto[0]
        )
        self.assertEqual(fd.package, "api")
        methods = {m.name for s in fd.service for m in s.method}
        self.assertIn("GetLatestChannelEntriesThatProvide", methods)
        self.assertEqual(len(methods), 10)

    def test_list_packages(self):
        got = [p.name for p in self.stub.ListPackages(pb.ListPackageRequest(), timeout=10)]
        self.assertEqual(sorted(got), sorted(self.model.packages))

    def test_get_package_heads_and_default_channel(self):
        for name, p in self.model.packages.items():
            r = self.stub.GetPackage(pb.GetPackageRequest(name=name), timeout=10)
            self.assertEqual(r.name, name)
            self.assertEqual(r.defaultChannelName, p["defaultChannel"])
            want = sorted((ch, self.model.heads[(pkg, ch)]) for (pkg, ch) in self.model.channels if pkg == name)
            self.assertEqual(sorted((c.name, c.csvName) for c in r.channels), want)
        self.assert_unknown(
            lambda: self.stub.GetPackage(pb.GetPackageRequest(name="no-such-package"), timeout=10),
            'package "no-such-package" not found',
        )

    def test_get_bundle_every_entry(self):
        for (pkg, ch), ents in self.model.channels.items():
            for name in ents:
                b = self.stub.GetBundle(pb.GetBundleRequest(pkgName=pkg, channelName=ch, csvName=name), timeout=10)
                self.check_bundle(b, pkg, ch, name)
        pkg, ch = next(iter(self.model.channels))
        self.assert_unknown(
            lambda: self.stub.GetBundle(pb.GetBundleRequest(pkgName=pkg, channelName=ch, csvName="x.v9"), timeout=10),
            'package "%s", channel "%s", bundle "x.v9" not found' % (pkg, ch),
        )
        self.assert_unknown(
            lambda: self.stub.GetBundle(pb.GetBundleRequest(pkgName=pkg, channelName="nope", csvName="x"), timeout=10),
            'package "%s", channel "nope" not found' % pkg,
        )

    def test_get_bundle_for_channel_is_head(self):
        for (pkg, ch), head in self.model.heads.items():
            b = self.stub.GetBundleForChannel(pb.GetBundleInChannelRequest(pkgName=pkg, channelName=ch), timeout=10)
            self.check_bundle(b, pkg, ch, head)
        self.assert_unknown(
            lambda: self.stub.GetBundleForChannel(pb.GetBundleInChannelRequest(pkgName="nope", channelName="a"), timeout=10),
            'package "nope" not found',
        )

    def test_replacements_across_skips(self):
        m = self.model
        names = {n for (_, n) in m.bundles}
        for target in sorted(names):
            want = []
            for (pkg, ch), ents in m.channels.items():
                for n, e in ents.items():
                    rep = e.get("replaces", "")
                    if rep == target:
                        want.append((pkg, ch, n, rep))
                    for s in e.get("skips") or []:
                        if s == target and s != rep:
                            want.append((pkg, ch, n, rep))
            req = pb.GetAllReplacementsRequest(csvName=target)
            if want:
                self.assertEqual(entries(self.stub.GetChannelEntriesThatReplace(req, timeout=10)), sorted(want), target)
            else:
                self.assert_unknown(
                    lambda: self.stub.GetChannelEntriesThatReplace(req, timeout=10),
                    "no channel entries found that replace " + target,
                )
        for (pkg, ch), ents in m.channels.items():
            for target in ents:
                replacing = [n for n, e in ents.items() if e.get("replaces") == target or target in (e.get("skips") or [])]
                req = pb.GetReplacementRequest(csvName=target, pkgName=pkg, channelName=ch)
                if replacing:
                    b = self.stub.GetBundleThatReplaces(req, timeout=10)
                    # opm picks any of them (map order); each is a right answer.
                    self.assertIn(b.csvName, replacing)
                    self.check_bundle(b, pkg, ch, b.csvName)
                else:
                    self.assert_unknown(
                        lambda: self.stub.GetBundleThatReplaces(req, timeout=10),
                        'no entry found for package "%s", channel "%s"' % (pkg, ch),
                    )

    def test_providers(self):
        m = self.model
        for g in m.all_gvks():
            want_all, want_latest = [], []
            for (pkg, ch), ents in m.channels.items():
                for n in ents:
                    if g in m.provided(pkg, n):
                        want_all += m.entries_for_bundle(pkg, ch, n, True)
                head = m.heads[(pkg, ch)]
                if g in m.provided(pkg, head):
                    want_latest += m.entries_for_bundle(pkg, ch, head, False)
            grp, ver, kind = g
            got = entries(self.stub.GetChannelEntriesThatProvide(pb.GetAllProvidersRequest(group=grp, version=ver, kind=kind), timeout=10))
            self.assertEqual(got, sorted(want_all), g)
            req = pb.GetLatestProvidersRequest(group=grp, version=ver, kind=kind)
            dreq = pb.GetDefaultProviderRequest(group=grp, version=ver, kind=kind)
            if want_latest:
                self.assertEqual(entries(self.stub.GetLatestChannelEntriesThatProvide(req, timeout=10)), sorted(want_latest), g)
                defaults = sorted(e for e in want_latest if m.packages[e[0]]["defaultChannel"] == e[1])
                if defaults:
                    b = self.stub.GetDefaultBundleThatProvides(dreq, timeout=10)
                    self.assertEqual((b.packageName, b.channelName, b.csvName), defaults[0][:3])
                    self.check_bundle(b, *defaults[0][:3])
                else:
                    self.assert_unknown(
                        lambda: self.stub.GetDefaultBundleThatProvides(dreq, timeout=10),
                        'no entry found that provides group:"%s" version:"%s" kind:"%s"' % g,
                    )
            else:
                msg = 'no channel entries found that provide group:"%s" version:"%s" kind:"%s"' % g
                self.assert_unknown(lambda: self.stub.GetLatestChannelEntriesThatProvide(req, timeout=10), msg)
                self.assert_unknown(lambda: self.stub.GetDefaultBundleThatProvides(dreq, timeout=10), msg)
        self.assert_unknown(
            lambda: self.stub.GetChannelEntriesThatProvide(pb.GetAllProvidersRequest(group="no", version="v1", kind="K"), timeout=10),
            'no channel entries found that provide group:"no" version:"v1" kind:"K"',
        )

    def test_list_bundles_one_per_bundle_and_channel(self):
        got = list(self.stub.ListBundles(pb.ListBundlesRequest(), timeout=30))
        keys = [(b.packageName, b.channelName, b.csvName) for b in got]
        want = sorted((pkg, ch, n) for (pkg, ch), ents in self.model.channels.items() for n in ents)
        self.assertEqual(sorted(keys), want)
        for b in got:
            self.check_bundle(b, b.packageName, b.channelName, b.csvName, trimmed=False)
            if b.bundlePath:
                self.assertEqual(b.csvJson, "")
                self.assertEqual(list(b.object), [])


if __name__ == "__main__":
    unittest.main()
