"""Dump every read RPC of a running `api.Registry` server the way the golden
dumps of ../shared/opm-golden were made (its README: "The dump format"), and
compare two dumps item by item.

The dump asks what OLM's client asks, in the same order of discovery:

- `health`: grpc.health.v1.Health/Check with service "Registry";
- `listPackages`, `listBundles`: every message of the stream;
- `packages[pkg]`: GetPackage for each listed package;
- `bundleForChannel[pkg/channel]`: GetBundleForChannel for each channel;
- `getBundle`, `bundleThatReplaces[pkg/channel/csv]`: for each ListBundles row;
- `channelEntriesThatReplace[csv]`: for each distinct ListBundles csvName;
- `channelEntriesThatProvide`, `latestChannelEntriesThatProvide`,
  `defaultBundleThatProvides[group/version/kind/plural]`: for each distinct
  providedApis entry of ListBundles.

Messages are written as Go's encoding/json writes the generated structs
(lowerCamelCase names, empty fields left out, enums as numbers); a failed
call is {"error": {"code": "<Go code name>", "message": ...}}. `csvJson` and
each `object` string are parsed and stored once under `blobs`, keyed by the
sha256 of their canonical JSON; every list of a message or stream is sorted
by canonical JSON.

Run against a server:  python3 opm_dump.py HOST:PORT [--out FILE] [--golden FILE [--fbc DIR]]
"""

import argparse
import base64
import hashlib
import json
import os
import sys

import grpc
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc

from servecommon import stubs

# Go's codes.Code.String() for each grpc.StatusCode.
GO_CODE = {
    "OK": "OK",
    "CANCELLED": "Canceled",
    "UNKNOWN": "Unknown",
    "INVALID_ARGUMENT": "InvalidArgument",
    "DEADLINE_EXCEEDED": "DeadlineExceeded",
    "NOT_FOUND": "NotFound",
    "ALREADY_EXISTS": "AlreadyExists",
    "PERMISSION_DENIED": "PermissionDenied",
    "RESOURCE_EXHAUSTED": "ResourceExhausted",
    "FAILED_PRECONDITION": "FailedPrecondition",
    "ABORTED": "Aborted",
    "OUT_OF_RANGE": "OutOfRange",
    "UNIMPLEMENTED": "Unimplemented",
    "INTERNAL": "Internal",
    "UNAVAILABLE": "Unavailable",
    "DATA_LOSS": "DataLoss",
    "UNAUTHENTICATED": "Unauthenticated",
}

SECTIONS = [
    "health",
    "listPackages",
    "listBundles",
    "packages",
    "bundleForChannel",
    "getBundle",
    "bundleThatReplaces",
    "channelEntriesThatReplace",
    "channelEntriesThatProvide",
    "latestChannelEntriesThatProvide",
    "defaultBundleThatProvides",
]

# Sections whose answers are api.Bundle messages (ListBundles: each value item).
BUNDLE_SECTIONS = ["getBundle", "bundleForChannel", "bundleThatReplaces", "defaultBundleThatProvides"]

# Fields the golden client (v1.26.5's generated structs) did not know: it
# could not record them, so they are not compared.
NOT_IN_GOLDEN_PROTO = {"deprecation"}


def canonical(v):
    """Keys sorted, compact, no HTML or non-ASCII escaping."""
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class Dumper:
    def __init__(self, channel, timeout=60):
        self.pb, grpc_mod = stubs()
        self.stub = grpc_mod.RegistryStub(channel)
        self.health = health_pb2_grpc.HealthStub(channel)
        self.timeout = timeout
        self.blobs = {}

    def blob(self, text):
        try:
            value = json.loads(text)
        except ValueError:
            return text  # not JSON: kept as the string it is
        key = hashlib.sha256(canonical(value).encode()).hexdigest()
        self.blobs[key] = value
        return {"$blob": key}

    def go_json(self, msg):
        """The message as Go's encoding/json writes the generated struct."""
        out = {}
        bundle = msg.DESCRIPTOR.name == "Bundle"
        for f in msg.DESCRIPTOR.fields:
            name = f.json_name
            value = getattr(msg, f.name)
            if is_repeated(f):
                if not len(value):
                    continue
                items = []
                for item in value:
                    if f.message_type is not None:
                        items.append(self.go_json(item))
                    elif bundle and f.name == "object":
                        items.append(self.blob(item))
                    else:
                        items.append(item)
                out[name] = sorted(items, key=canonical)
            elif f.message_type is not None:
                if msg.HasField(f.name):
                    out[name] = self.go_json(value)
            elif value:
                out[name] = self.blob(value) if bundle and f.name == "csvJson" else value
        return out

    def unary(self, call, req):
        try:
            return self.go_json(call(req, timeout=self.timeout))
        except grpc.RpcError as e:
            return error(e)

    def stream(self, call, req):
        try:
            return sorted((self.go_json(m) for m in call(req, timeout=self.timeout)), key=canonical)
        except grpc.RpcError as e:
            return error(e)

    def dump(self):
        pb = self.pb
        d = {s: {} for s in SECTIONS}
        try:
            r = self.health.Check(health_pb2.HealthCheckRequest(service="Registry"), timeout=self.timeout)
            d["health"]["value"] = {"status": r.status} if r.status else {}
        except grpc.RpcError as e:
            d["health"]["value"] = error(e)
        d["listPackages"]["value"] = self.stream(self.stub.ListPackages, pb.ListPackageRequest())
        bundles = self.stream(self.stub.ListBundles, pb.ListBundlesRequest())
        d["listBundles"]["value"] = bundles
        for p in value_list(d["listPackages"]["value"]):
            name = p.get("name", "")
            pkg = self.unary(self.stub.GetPackage, pb.GetPackageRequest(name=name))
            d["packages"][name] = pkg
            for c in pkg.get("channels", []):
                ch = c.get("name", "")
                d["bundleForChannel"][name + "/" + ch] = self.unary(
                    self.stub.GetBundleForChannel, pb.GetBundleInChannelRequest(pkgName=name, channelName=ch)
                )
        csvs, apis = set(), {}
        for b in value_list(bundles):
            pkg, ch, csv = b.get("packageName", ""), b.get("channelName", ""), b.get("csvName", "")
            key = "/".join((pkg, ch, csv))
            d["getBundle"][key] = self.unary(
                self.stub.GetBundle, pb.GetBundleRequest(pkgName=pkg, channelName=ch, csvName=csv)
            )
            d["bundleThatReplaces"][key] = self.unary(
                self.stub.GetBundleThatReplaces,
                pb.GetReplacementRequest(csvName=csv, pkgName=pkg, channelName=ch),
            )
            csvs.add(csv)
            for g in b.get("providedApis", []):
                gvkp = tuple(g.get(k, "") for k in ("group", "version", "kind", "plural"))
                apis["/".join(gvkp)] = gvkp
        for csv in sorted(csvs):
            d["channelEntriesThatReplace"][csv] = self.stream(
                self.stub.GetChannelEntriesThatReplace, pb.GetAllReplacementsRequest(csvName=csv)
            )
        for key, (g, v, k, plural) in sorted(apis.items()):
            req = dict(group=g, version=v, kind=k, plural=plural)
            d["channelEntriesThatProvide"][key] = self.stream(
                self.stub.GetChannelEntriesThatProvide, pb.GetAllProvidersRequest(**req)
            )
            d["latestChannelEntriesThatProvide"][key] = self.stream(
                self.stub.GetLatestChannelEntriesThatProvide, pb.GetLatestProvidersRequest(**req)
            )
            d["defaultBundleThatProvides"][key] = self.unary(
                self.stub.GetDefaultBundleThatProvides, pb.GetDefaultProviderRequest(**req)
            )
        d["blobs"] = dict(sorted(self.blobs.items()))
        return d


def is_repeated(f):
    """Newer protobuf has `is_repeated` and no `label`; older only `label`."""
    r = getattr(f, "is_repeated", None)
    return r if r is not None else f.label == f.LABEL_REPEATED


def error(e):
    return {"error": {"code": GO_CODE.get(e.code().name, e.code().name), "message": e.details() or ""}}


def value_list(v):
    return v if isinstance(v, list) else []


def dump(addr, timeout=60):
    with grpc.insecure_channel(addr, options=[("grpc.max_receive_message_length", 64 * 1024 * 1024)]) as ch:
        return Dumper(ch, timeout).dump()


# --- opm v1.73.0's answer for FBC bundles with olm.csv.metadata ----------------
#
# v1.26.5 (which made the golden FBC dumps) sends an `olm.csv.metadata`
# property as it is and no csvJson; v1.73.0 (pkg/api/model_to_api.go) leaves
# the property out and, when the bundle has no CSV of its own, sends a CSV
# built from it: a v1alpha1.ClusterServiceVersion with the metadata's fields,
# the bundle's name, version and related images, the package's icon (and
# description when the metadata has none), marshalled by encoding/json. Here
# that CSV is built from the Go type definitions (operator-framework/api
# v0.45.0), as the value encoding/json would write: which fields are written
# when empty, which are left out.

STR, BOOL, INT, RAW, MAP = "string", "bool", "int", "raw", "map[string]string"


def lst(t):
    return ("list", t)


def st(*fields):
    """A struct: (json name, type, omitempty) per field, in Go order."""
    return ("struct", fields)


APP_LINK = st(("name", STR, True), ("url", STR, True))
MAINTAINER = st(("name", STR, True), ("email", STR, True))
GVK = st(("group", STR, False), ("version", STR, False), ("kind", STR, False))
INSTALL_MODE = st(("type", STR, False), ("supported", BOOL, False))
RESOURCE_REF = st(("name", STR, False), ("kind", STR, False), ("version", STR, False))
DESCRIPTOR = st(
    ("path", STR, False),
    ("displayName", STR, True),
    ("description", STR, True),
    ("x-descriptors", lst(STR), True),
    ("value", RAW, True),
)
DESCRIPTORS = (
    ("resources", lst(RESOURCE_REF), True),
    ("statusDescriptors", lst(DESCRIPTOR), True),
    ("specDescriptors", lst(DESCRIPTOR), True),
    ("actionDescriptors", lst(DESCRIPTOR), True),
)
CRD_DESCRIPTION = st(
    ("name", STR, False),
    ("version", STR, False),
    ("kind", STR, False),
    ("displayName", STR, True),
    ("description", STR, True),
    *DESCRIPTORS,
)
API_SERVICE_DESCRIPTION = st(
    ("name", STR, False),
    ("group", STR, False),
    ("version", STR, False),
    ("kind", STR, False),
    ("deploymentName", STR, True),
    ("containerPort", INT, True),
    ("displayName", STR, True),
    ("description", STR, True),
    *DESCRIPTORS,
)
CRDS = st(("owned", lst(CRD_DESCRIPTION), True), ("required", lst(CRD_DESCRIPTION), True))
API_SERVICES = st(("owned", lst(API_SERVICE_DESCRIPTION), True), ("required", lst(API_SERVICE_DESCRIPTION), True))

# property.CSVMetadata: the JSON names the metadata is read with.
CSV_METADATA = {
    "annotations": MAP,
    "apiServiceDefinitions": API_SERVICES,
    "crdDescriptions": CRDS,
    "description": STR,
    "displayName": STR,
    "installModes": lst(INSTALL_MODE),
    "keywords": lst(STR),
    "labels": MAP,
    "links": lst(APP_LINK),
    "maintainers": lst(MAINTAINER),
    "maturity": STR,
    "minKubeVersion": STR,
    "nativeAPIs": lst(GVK),
    "provider": APP_LINK,
}

MISSING = object()


def go_field(obj, name):
    """encoding/json matches keys exactly first, then case-insensitively."""
    if not isinstance(obj, dict):
        return MISSING
    if name in obj:
        return obj[name]
    for k, v in obj.items():
        if k.lower() == name.lower():
            return v
    return MISSING


def go_marshal(t, v):
    """(present, value): what encoding/json writes for a Go value of type t
    decoded from JSON value v (MISSING: the zero value); present is False
    when omitempty would leave it out (decided by the caller)."""
    if t == STR:
        return "" if v is MISSING or v is None else v
    if t == BOOL:
        return False if v is MISSING or v is None else v
    if t == INT:
        return 0 if v is MISSING or v is None else v
    if t == RAW:
        return v  # json.RawMessage keeps what it was given, null included
    if t == MAP:
        return None if v is MISSING or v is None else dict(v)
    if t[0] == "list":
        if v is MISSING or v is None:
            return None
        return [go_marshal(t[1], x) for x in v]
    if t[0] == "struct":
        out = {}
        for name, ft, omitempty in t[1]:
            fv = go_field(v, name) if v is not MISSING and v is not None else MISSING
            if omitempty and is_empty(ft, fv):
                continue
            out[name] = go_marshal(ft, fv)
        return out
    raise ValueError(t)


def is_empty(t, v):
    """encoding/json's omitempty: false, 0, "", nil or empty slice/map; never a struct."""
    if isinstance(t, tuple) and t[0] == "struct":
        return False
    if t == RAW:
        return v is MISSING
    if v is MISSING or v is None:
        return True
    return v in ("", 0, False) if t in (STR, INT, BOOL) else len(v) == 0


def csv_from_metadata(meta, name, version, icon, related_images, package_description):
    """The CSV v1.73.0's ConvertModelBundleToAPIBundle builds, as parsed JSON."""

    def field(key, omitempty=True):
        t = CSV_METADATA[key]
        v = go_field(meta, key)
        if omitempty and is_empty(t, v):
            return None
        return go_marshal(t, v)

    metadata = {"name": name, "creationTimestamp": None}
    for key in ("labels", "annotations"):
        if field(key) is not None:
            metadata[key] = field(key)
    spec = {
        "install": {"strategy": "deployment", "spec": {"deployments": None}},
        "version": version,
        "customresourcedefinitions": field("crdDescriptions", False),
        "apiservicedefinitions": field("apiServiceDefinitions", False),
        "displayName": field("displayName", False),
        "provider": field("provider", False),
        "cleanup": {"enabled": False},
    }
    for src, dst in (
        ("maturity", "maturity"),
        ("nativeAPIs", "nativeAPIs"),
        ("minKubeVersion", "minKubeVersion"),
        ("keywords", "keywords"),
        ("maintainers", "maintainers"),
        ("links", "links"),
        ("installModes", "installModes"),
    ):
        v = field(src)
        if v is not None:
            spec[dst] = v
    description = field("description") or package_description
    if description:
        spec["description"] = description
    if icon:
        spec["icon"] = [{"base64data": icon[0], "mediatype": icon[1]}]
    if related_images:
        spec["relatedImages"] = [{"name": n, "image": i} for n, i in related_images]
    return {
        "kind": "ClusterServiceVersion",
        "apiVersion": "operators.coreos.com/v1alpha1",
        "metadata": metadata,
        "spec": spec,
        "status": {"cleanup": {}},
    }


class _GoYamlLoader(yaml.SafeLoader):
    """YAML as sigs.k8s.io/yaml reads catalog files for the values used
    here: timestamps stay strings."""


_GoYamlLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_fbc(root):
    """(packages by name, bundles by (package, name)) of an FBC directory."""
    packages, bundles = {}, {}
    paths = [root] if os.path.isfile(root) else [
        os.path.join(dp, f)
        for dp, _, fs in sorted(os.walk(root))
        for f in sorted(fs)
        if f.endswith((".yaml", ".yml", ".json"))
    ]
    for path in paths:
        with open(path) as fh:
            for doc in yaml.load_all(fh, Loader=_GoYamlLoader):
                if not isinstance(doc, dict):
                    continue
                if doc.get("schema") == "olm.package":
                    packages[doc.get("name")] = doc
                elif doc.get("schema") == "olm.bundle":
                    bundles[(doc.get("package"), doc.get("name"))] = doc
    return packages, bundles


def expect_v1_73(golden, fbc_dir):
    """The golden FBC dump as opm v1.73.0 answers it: see the comment above."""
    packages, bundles = load_fbc(fbc_dir)
    out = json.loads(json.dumps(golden))
    blobs = out.setdefault("blobs", {})

    def convert(b, listed):
        if not isinstance(b, dict) or "error" in b:
            return
        props = b.get("properties", [])
        metas = [p for p in props if p.get("type") == "olm.csv.metadata"]
        if not metas:
            return
        rest = [p for p in props if p.get("type") != "olm.csv.metadata"]
        if rest:
            b["properties"] = rest
        else:
            b.pop("properties", None)
        # ListBundles sends no manifests for a bundle that has an image.
        if "csvJson" in b or len(metas) != 1 or (listed and b.get("bundlePath")):
            return
        pkg = packages.get(b.get("packageName"), {})
        fb = bundles.get((b.get("packageName"), b.get("csvName")), {})
        icon = None
        if isinstance(pkg.get("icon"), dict):
            raw = pkg["icon"].get("base64data") or ""
            data = base64.b64encode(base64.b64decode("".join(raw.split()))).decode()
            icon = (data, pkg["icon"].get("mediatype") or "")
        csv = csv_from_metadata(
            json.loads(metas[0]["value"]),
            b.get("csvName", ""),
            b.get("version", ""),
            icon,
            [(r.get("name") or "", r.get("image") or "") for r in fb.get("relatedImages") or []],
            pkg.get("description") or "",
        )
        key = hashlib.sha256(canonical(csv).encode()).hexdigest()
        blobs[key] = csv
        b["csvJson"] = {"$blob": key}
        if not b.get("object"):
            b["object"] = [{"$blob": key}]

    for b in value_list(out.get("listBundles", {}).get("value")):
        convert(b, True)
    for section in BUNDLE_SECTIONS:
        for b in out.get(section, {}).values():
            convert(b, False)
    return out


# --- comparison ---------------------------------------------------------------


def resolve(v, blobs):
    """Blob references replaced by what they reference, message-level lists
    sorted again (their order is by reference, not by content), fields the
    golden client could not see dropped."""
    if isinstance(v, dict):
        if set(v) == {"$blob"}:
            return {"$json": blobs.get(v["$blob"], "<blob %s missing>" % v["$blob"])}
        return {k: resolve(x, blobs) for k, x in v.items() if k not in NOT_IN_GOLDEN_PROTO}
    if isinstance(v, list):
        return sorted((resolve(x, blobs) for x in v), key=canonical)
    return v


def short(v, n=300):
    s = canonical(v)
    return s if len(s) <= n else s[:n] + "...(%d chars)" % len(s)


def differences(ours, golden, path, out, limit=20):
    """Where two values differ: one line per difference (path, ours, golden)."""
    if len(out) >= limit:
        return
    if isinstance(ours, dict) and isinstance(golden, dict):
        for k in sorted(set(ours) | set(golden)):
            p = path + "." + k
            if k not in ours:
                out.append("%s: missing from ours; golden %s" % (p, short(golden[k])))
            elif k not in golden:
                out.append("%s: ours %s; not in golden" % (p, short(ours[k])))
            else:
                differences(ours[k], golden[k], p, out, limit)
            if len(out) >= limit:
                return
    elif isinstance(ours, list) and isinstance(golden, list):
        if len(ours) == len(golden):
            for i, (a, b) in enumerate(zip(ours, golden)):
                differences(a, b, "%s[%d]" % (path, i), out, limit)
        else:
            a = {canonical(x): x for x in ours}
            b = {canonical(x): x for x in golden}
            for k in sorted(set(a) - set(b)):
                out.append("%s: ours has %s; golden does not" % (path, short(a[k])))
            for k in sorted(set(b) - set(a)):
                out.append("%s: golden has %s; ours does not" % (path, short(b[k])))
    elif ours != golden or type(ours) is not type(golden):
        out.append("%s: ours %s; golden %s" % (path, short(ours), short(golden)))


def compare(ours, golden):
    """Every difference between two dumps, as "section[key] path: ...", item by item."""
    out = []
    for section in SECTIONS:
        a, b = ours.get(section, {}), golden.get(section, {})
        for key in sorted(set(a) | set(b)):
            where = "%s[%s]" % (section, key)
            if key not in a:
                out.append("%s: missing from ours; golden %s" % (where, short(resolve(b[key], golden.get("blobs", {})))))
            elif key not in b:
                out.append("%s: ours %s; not in golden" % (where, short(resolve(a[key], ours.get("blobs", {})))))
            else:
                ra = resolve(a[key], ours.get("blobs", {}))
                rb = resolve(b[key], golden.get("blobs", {}))
                if ra != rb:
                    found = []
                    differences(ra, rb, where, found)
                    out.extend(found or ["%s: differs" % where])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("addr", help="HOST:PORT of the server")
    ap.add_argument("--out", help="write the dump here")
    ap.add_argument("--golden", help="compare with this dump.json")
    ap.add_argument("--fbc", help="the FBC directory served: expect opm v1.73.0's csv.metadata answers")
    args = ap.parse_args()
    d = dump(args.addr)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(d, fh, indent=1, sort_keys=True)
    if args.golden:
        with open(args.golden) as fh:
            golden = json.load(fh)
        if args.fbc:
            golden = expect_v1_73(golden, args.fbc)
        diffs = compare(d, golden)
        for line in diffs:
            print(line)
        print("%d differences" % len(diffs), file=sys.stderr)
        sys.exit(1 if diffs else 0)
    if not args.out:
        json.dump(d, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
