"""A catalogd API client (urllib, nothing of the server's code) checking
`olm-catalog serve --http` against the catalog files it serves.

Environment: OLM_CATALOG_HTTP (base URL), OLM_CATALOG_FBC_DIR (the catalog
directory served), optionally OLM_CATALOG_GRPC (HOST:PORT of the gRPC API
served by the same process, checked against the HTTP answers).
Run by tests/serve_http.rs; by hand: python3 tests/python/catalogd_client.py.
"""

import gzip
import itertools
import json
import os
import sys
import unittest
import urllib.error
import urllib.parse
import urllib.request

import yaml

BASE = os.environ.get("OLM_CATALOG_HTTP", "")
FBC_DIR = os.environ.get("OLM_CATALOG_FBC_DIR", "")
GRPC = os.environ.get("OLM_CATALOG_GRPC", "")


def catalog_objects(root):
    """Every object of the catalog, files in path order (as Go's fs.WalkDir)."""
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        for f in filenames:
            if f.endswith((".yaml", ".yml", ".json")):
                files.append(os.path.relpath(os.path.join(dirpath, f), root))
    files.sort(key=lambda p: p.split(os.sep))
    out = []
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8") as fh:
            text = fh.read()
        if text.lstrip().startswith("{"):
            dec = json.JSONDecoder()
            i = 0
            while True:
                while i < len(text) and text[i].isspace():
                    i += 1
                if i >= len(text):
                    break
                obj, i = dec.raw_decode(text, i)
                out.append(obj)
        else:
            out.extend(d for d in yaml.safe_load_all(text) if d is not None)
    return [as_go(o) for o in out]


def get(path, headers=None, method="GET"):
    """(status, headers, body) without raising on 3xx/4xx/5xx."""
    req = urllib.request.Request(BASE + path, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def as_go(v):
    """A value as Go's float64 numbers leave it (big integers lose digits)."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int):
        return v if abs(v) < 2**53 else float(v)
    if isinstance(v, float):
        return float(int(v)) if v.is_integer() and abs(v) >= 2**53 else v
    if isinstance(v, list):
        return [as_go(x) for x in v]
    return {k: as_go(x) for k, x in v.items()}


def lines(body):
    return [as_go(json.loads(l)) for l in body.decode("utf-8").splitlines()]


def numbers_go_keeps(v):
    """True when every number is one Go's float64 writes as Python writes it."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return True
    if isinstance(v, int):
        return abs(v) < 2**53
    if isinstance(v, float):
        return False
    if isinstance(v, list):
        return all(numbers_go_keeps(x) for x in v)
    return all(numbers_go_keeps(x) for x in v.values())


class CatalogdApi(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.objects = catalog_objects(FBC_DIR)
        status, headers, body = get("/api/v1/all")
        assert status == 200, status
        cls.all_headers = headers
        cls.all_body = body

    def test_all_is_the_catalog_in_order(self):
        self.assertEqual(self.all_headers["Content-Type"], "application/jsonl")
        self.assertEqual(lines(self.all_body), self.objects)
        # One compact object per line, keys sorted, no HTML escaping.
        for line, obj in zip(self.all_body.decode("utf-8").splitlines(), self.objects):
            if numbers_go_keeps(obj):
                self.assertEqual(
                    line, json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                )

    def test_metas_every_filter_combination(self):
        seen = set()
        for obj in self.objects:
            triple = {k: obj.get(k, "") for k in ("schema", "package", "name")}
            for n in range(0, 4):
                for keys in itertools.combinations(("schema", "package", "name"), n):
                    q = {k: triple[k] for k in keys if triple[k]}
                    key = tuple(sorted(q.items()))
                    if key in seen:
                        continue
                    seen.add(key)
                    status, headers, body = get("/api/v1/metas?" + urllib.parse.urlencode(q))
                    self.assertEqual(status, 200, q)
                    self.assertEqual(headers["Content-Type"], "application/jsonl")
                    if not q:
                        want = self.objects
                    else:
                        want = [
                            o
                            for o in self.objects
                            if o.get("schema")
                            and all(o.get(k, "") == v for k, v in q.items())
                        ]
                    self.assertEqual(lines(body), want, q)
        status, _, body = get("/api/v1/metas?schema=no.such.schema")
        self.assertEqual((status, body), (200, b""))
        status, _, body = get("/api/v1/metas?limit=1")
        self.assertEqual((status, body), (400, b"400 Bad Request\n"))

    def test_gzip(self):
        status, headers, body = get("/api/v1/all", {"Accept-Encoding": "gzip"})
        self.assertEqual(status, 200)
        if len(self.all_body) >= 1024:
            self.assertEqual(headers["Content-Encoding"], "gzip")
            self.assertEqual(gzip.decompress(body), self.all_body)
        self.assertEqual(headers["Vary"], "Accept-Encoding")
        status, headers, body = get("/api/v1/all", {"Accept-Encoding": "identity"})
        self.assertIsNone(headers["Content-Encoding"])
        self.assertEqual(body, self.all_body)

    def test_not_modified_and_head(self):
        lm = self.all_headers["Last-Modified"]
        for path in ("/api/v1/all", "/api/v1/metas?schema=olm.package"):
            status, headers, body = get(path, {"If-Modified-Since": lm})
            self.assertEqual((status, body), (304, b""), path)
            status, headers, body = get(path, {"If-Modified-Since": "Thu, 01 Jan 2004 00:00:00 GMT"})
            self.assertEqual(status, 200, path)
            self.assertTrue(body)
            status, headers, body = get(path, method="HEAD")
            self.assertEqual((status, body), (200, b""), path)
            self.assertEqual(headers["Content-Type"], "application/jsonl")
        _, headers, _ = get("/api/v1/all", method="HEAD")
        self.assertEqual(int(headers["Content-Length"]), len(self.all_body))

    def test_errors(self):
        self.assertEqual(get("/api/v1/nothing")[0], 404)
        status, _, body = get("/api/v1/all", method="POST")
        self.assertEqual((status, body), (405, b"Method Not Allowed\n"))

    @unittest.skipUnless(GRPC, "no gRPC server given")
    def test_grpc_answers_for_the_same_catalog(self):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import grpc
        import servecommon

        pb2, pb2_grpc = servecommon.stubs()
        with grpc.insecure_channel(GRPC) as ch:
            stub = pb2_grpc.RegistryStub(ch)
            names = sorted(p.name for p in stub.ListPackages(pb2.ListPackageRequest(), timeout=30))
            bundles = sorted(
                (b.packageName, b.channelName, b.csvName)
                for b in stub.ListBundles(pb2.ListBundlesRequest(), timeout=30)
            )
        _, _, body = get("/api/v1/metas?schema=olm.package")
        self.assertEqual(names, sorted(o["name"] for o in lines(body)))
        _, _, body = get("/api/v1/metas?schema=olm.channel")
        want = sorted(
            (c["package"], c["name"], e["name"]) for c in lines(body) for e in c["entries"]
        )
        self.assertEqual(bundles, want)


if __name__ == "__main__":
    if not BASE or not FBC_DIR:
        sys.exit("set OLM_CATALOG_HTTP and OLM_CATALOG_FBC_DIR")
    unittest.main(argv=[sys.argv[0], "-v"])
