"""`olm-catalog serve index.db` over a SQLite index built from the corpus's
real file-based catalogs (`olm-catalog index add --from-fbc`), checked with a
grpcio client against answers worked out here from the catalog files and
opm's SQLite rules:

- channel entries are laid out as operator-registry's `addPackageChannels`
  (pkg/sqlite/load.go) lays them out: walking from the head along
  `replaces`, each bundle on the walk gets a real entry (depth 0 for the
  head, then one more per step), and each skip a dummy entry for the
  skipped bundle plus an entry of the walking bundle that replaces it;
- the queries are those of pkg/sqlite/query.go: GetBundle-style answers
  leave replaces and skips out and read plurals from the `api` table,
  GetBundleForChannel sends the head's name and stored `csv` only,
  GetLatestChannelEntriesThatProvide keeps the least deep row per channel,
  GetDefaultBundleThatProvides the first (package, channel) group of a
  default channel, ListBundles one message per (bundle, channel) pair with
  replaces and skips from the channel entries (`listBundlesQuery`) and APIs
  without plurals;
- a bundle the catalog gives no olm.bundle.object for has a NULL `bundle`
  column, so it is never a default provider;
- what is not there is code UNKNOWN with opm's message (plain Go errors).

Environment: OLM_CATALOG_BIN, OLM_CATALOG_FBC (catalog dir the index was
built from), OLM_CATALOG_SQLITE (the index).
"""

import json
import os
import unittest

from grpc_health.v1 import health_pb2, health_pb2_grpc

from servecommon import ServedCatalogTest, stubs
from test_serve_fbc import Model, load_catalog

pb, _ = stubs()


def entry_graph(model, pkg, ch):
    """The channel_entry rows opm writes for one channel, in insertion order:
    [bundle, index of the row it replaces or None, depth]."""
    ents = model.channels[(pkg, ch)]
    head = model.heads[(pkg, ch)]
    rows = [[head, None, 0]]
    current = 0
    name, depth, seen = head, 1, set()
    while name in ents and name not in seen:
        seen.add(name)
        e = ents[name]
        for skip in e.get("skips") or []:
            rows.append([skip, None, depth])
            rows.append([name, len(rows) - 1, depth])
            depth += 1
        rep = e.get("replaces") or ""
        if not rep:
            break
        rows.append([rep, None, depth])
        rows[current][1] = len(rows) - 1
        current = len(rows) - 1
        name = rep
        depth += 1
    return rows


def entry_rows(model, pkg, ch):
    """entry_graph's rows as (bundle, replaced bundle or "", depth)."""
    rows = entry_graph(model, pkg, ch)
    return [(b, rows[r][0] if r is not None else "", d) for b, r, d in rows]


def listed_edges(model, pkg, ch):
    """What opm's ListBundles (listBundlesQuery) reports per bundle of a
    channel: {bundle: (replaces, sorted skips)}. Its `replaces` follow the
    replaces links from the entries of least depth (every head is at depth
    0), the largest replaced name per bundle; every other link is a skip."""
    rows = entry_graph(model, pkg, ch)
    chain, todo = set(), [i for i, r in enumerate(rows) if r[2] == 0]
    while todo:
        i = todo.pop()
        if i not in chain:
            chain.add(i)
            if rows[i][1] is not None:
                todo.append(rows[i][1])
    out = {}
    for i, (b, r, _) in enumerate(rows):
        reps, skips = out.setdefault(b, ([], []))
        if r is not None:
            (reps if i in chain else skips).append(rows[r][0])
    return {b: (max(reps) if reps else "", sorted(skips)) for b, (reps, skips) in out.items()}


def gvks(msgs):
    return sorted((g.group, g.version, g.kind) for g in msgs)


def entries(stream):
    return sorted((e.packageName, e.channelName, e.bundleName, e.replaces) for e in stream)


def norm(kv):
    return sorted((t, json.dumps(json.loads(v), sort_keys=True)) for t, v in kv)


class SqliteCorpusServeTest(ServedCatalogTest):
    @classmethod
    def setUpClass(cls):
        cls.model = Model(load_catalog(os.environ["OLM_CATALOG_FBC"]))
        m = cls.model
        assert m.packages
        cls.rows = {key: entry_rows(m, *key) for key in m.channels}
        cls.listed = {key: listed_edges(m, *key) for key in m.channels}
        cls.serve(os.environ["OLM_CATALOG_SQLITE"])

    def in_index(self, pkg, name):
        return (pkg, name) in self.model.bundles

    def want_properties(self, pkg, name):
        raw = self.model.bundles[(pkg, name)]
        return [
            (p["type"], json.dumps(p["value"]))
            for p in raw.get("properties", [])
            if p["type"]
            not in ("olm.bundle.object", "olm.csv.metadata", "olm.gvk.required", "olm.package.required")
        ]

    def want_dependencies(self, pkg, name):
        m = self.model
        return [("olm.gvk", json.dumps(v)) for v in m.props(pkg, name, "olm.gvk.required")] + [
            ("olm.package", json.dumps({"packageName": v["packageName"], "version": v["versionRange"]}))
            for v in m.props(pkg, name, "olm.package.required")
        ]

    def skip_ranges(self, pkg, name):
        return {
            ents[name].get("skipRange", "")
            for (p, _), ents in self.model.channels.items()
            if p == pkg and name in ents
        }

    def check_bundle(self, b, pkg, ch, name, listed=False):
        m = self.model
        raw = m.bundles[(pkg, name)]
        self.assertEqual((b.csvName, b.packageName, b.channelName), (name, pkg, ch))
        self.assertEqual(b.bundlePath, raw.get("image", ""))
        self.assertEqual(b.version, m.version(pkg, name))
        self.assertIn(b.skipRange, self.skip_ranges(pkg, name))
        self.assertEqual(gvks(b.providedApis), m.provided(pkg, name))
        self.assertEqual(gvks(b.requiredApis), m.required(pkg, name))
        if listed:
            # ListBundles builds its APIs from the olm.gvk rows: no plural.
            self.assertFalse(any(g.plural for g in list(b.providedApis) + list(b.requiredApis)), name)
        else:
            # GetBundle-style calls read every plural from the api table.
            self.assertTrue(all(g.plural for g in list(b.providedApis) + list(b.requiredApis)), name)
        self.assertEqual(norm((p.type, p.value) for p in b.properties), norm(self.want_properties(pkg, name)))
        self.assertEqual(norm((d.type, d.value) for d in b.dependencies), norm(self.want_dependencies(pkg, name)))
        # These catalogs carry olm.csv.metadata, not objects: the index has
        # no manifests for them, so none are sent.
        self.assertEqual((b.csvJson, list(b.object)), ("", []))
        if not listed:
            self.assertEqual((b.replaces, list(b.skips)), ("", []))
        else:
            self.assertEqual((b.replaces, sorted(b.skips)), self.listed[(pkg, ch)][name], (pkg, ch, name))

    def test_health(self):
        r = health_pb2_grpc.HealthStub(self.channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        self.assertEqual(r.status, health_pb2.HealthCheckResponse.SERVING)

    def test_packages_heads_and_default_channels(self):
        m = self.model
        got = [p.name for p in self.stub.ListPackages(pb.ListPackageRequest(), timeout=10)]
        self.assertEqual(sorted(got), sorted(m.packages))
        for name, p in m.packages.items():
            r = self.stub.GetPackage(pb.GetPackageRequest(name=name), timeout=10)
            self.assertEqual(r.defaultChannelName, p["defaultChannel"])
            want = sorted((ch, m.heads[(pkg, ch)]) for (pkg, ch) in m.channels if pkg == name)
            self.assertEqual(sorted((c.name, c.csvName) for c in r.channels), want)
        self.assert_unknown(
            lambda: self.stub.GetPackage(pb.GetPackageRequest(name="nope"), timeout=10), "package nope not found"
        )

    def test_get_bundle_and_channel_heads(self):
        m = self.model
        for (pkg, ch), rows in self.rows.items():
            for name in sorted({r[0] for r in rows if self.in_index(pkg, r[0])}):
                b = self.stub.GetBundle(pb.GetBundleRequest(pkgName=pkg, channelName=ch, csvName=name), timeout=10)
                self.check_bundle(b, pkg, ch, name)
            b = self.stub.GetBundleForChannel(pb.GetBundleInChannelRequest(pkgName=pkg, channelName=ch), timeout=10)
            # opm's query selects the head's name and its stored `csv` only;
            # these catalogs carry no objects, so the index stores no CSV.
            self.assertEqual(b, pb.Bundle(csvName=m.heads[(pkg, ch)]), (pkg, ch))
        self.assert_unknown(
            lambda: self.stub.GetBundle(pb.GetBundleRequest(pkgName="a", channelName="b", csvName="c"), timeout=10),
            "no entry found for a b c",
        )
        self.assert_unknown(
            lambda: self.stub.GetBundleForChannel(pb.GetBundleInChannelRequest(pkgName="a", channelName="b"), timeout=10),
            "no entry found for a b",
        )

    def test_replacements(self):
        names = {r[0] for rows in self.rows.values() for r in rows} | {n for (_, n) in self.model.bundles}
        for target in sorted(names):
            want = sorted(
                {(pkg, ch, b, target) for (pkg, ch), rows in self.rows.items() for (b, rep, _) in rows if rep == target}
            )
            req = pb.GetAllReplacementsRequest(csvName=target)
            if want:
                self.assertEqual(entries(self.stub.GetChannelEntriesThatReplace(req, timeout=10)), want, target)
            else:
                self.assert_unknown(
                    lambda: self.stub.GetChannelEntriesThatReplace(req, timeout=10),
                    "no channel entries found that replace " + target,
                )
        for (pkg, ch), rows in self.rows.items():
            for target in sorted({r[0] for r in rows}):
                replacing = {b for (b, rep, _) in rows if rep == target and self.in_index(pkg, b)}
                req = pb.GetReplacementRequest(csvName=target, pkgName=pkg, channelName=ch)
                if replacing:
                    b = self.stub.GetBundleThatReplaces(req, timeout=10)
                    self.assertIn(b.csvName, replacing)
                    self.check_bundle(b, pkg, ch, b.csvName)
                else:
                    self.assert_unknown(
                        lambda: self.stub.GetBundleThatReplaces(req, timeout=10),
                        "no entry found for %s %s" % (pkg, ch),
                    )

    def test_providers(self):
        m = self.model
        for g in m.all_gvks():
            grp, ver, kind = g
            providing = {
                key: [r for r in rows if self.in_index(key[0], r[0]) and g in m.provided(key[0], r[0])]
                for key, rows in self.rows.items()
            }
            want_all = sorted({(pkg, ch, b, rep) for (pkg, ch), rows in providing.items() for (b, rep, _) in rows})
            got = entries(
                self.stub.GetChannelEntriesThatProvide(pb.GetAllProvidersRequest(group=grp, version=ver, kind=kind), timeout=10)
            )
            self.assertEqual(got, want_all, g)
            # MIN(depth) per (package, channel): the first row of least depth.
            latest = {}
            for key in sorted(providing):
                rows = providing[key]
                if rows:
                    best = min(rows, key=lambda r: r[2])
                    latest[key] = (key[0], key[1], best[0], best[1])
            req = pb.GetLatestProvidersRequest(group=grp, version=ver, kind=kind)
            self.assertEqual(entries(self.stub.GetLatestChannelEntriesThatProvide(req, timeout=10)), sorted(latest.values()), g)
            defaults = [latest[k] for k in sorted(latest) if m.packages[k[0]]["defaultChannel"] == k[1]]
            dreq = pb.GetDefaultProviderRequest(group=grp, version=ver, kind=kind)
            # opm's query answers "no entry" when the chosen bundle's
            # `bundle` column is NULL: what the index holds for a bundle the
            # catalog gives no olm.bundle.object for.
            if defaults and self.model.props(defaults[0][0], defaults[0][2], "olm.bundle.object"):
                b = self.stub.GetDefaultBundleThatProvides(dreq, timeout=10)
                self.assertEqual((b.packageName, b.channelName, b.csvName), defaults[0][:3])
                self.check_bundle(b, *defaults[0][:3])
            else:
                self.assert_unknown(
                    lambda: self.stub.GetDefaultBundleThatProvides(dreq, timeout=10),
                    "no entry found that provides %s %s %s" % g,
                )
        self.assert_unknown(
            lambda: list(self.stub.GetLatestChannelEntriesThatProvide(pb.GetLatestProvidersRequest(group="no", version="v1", kind="K"), timeout=10)),
            "no channel entries found that provide no v1 K",
        )

    def test_list_bundles(self):
        got = list(self.stub.ListBundles(pb.ListBundlesRequest(), timeout=30))
        keys = sorted((b.packageName, b.channelName, b.csvName) for b in got)
        # Every row of a bundle in the index counts, dummy skip rows included.
        want = sorted(
            {(pkg, ch, b) for (pkg, ch), rows in self.rows.items() for (b, _, _) in rows if self.in_index(pkg, b)}
        )
        self.assertEqual(keys, want)
        for b in got:
            self.check_bundle(b, b.packageName, b.channelName, b.csvName, listed=True)


if __name__ == "__main__":
    unittest.main()
