#!/usr/bin/env python3
"""PyYAML's reading of YAML texts, as JSON, for tests/yaml_differential.rs.

One process reads every input: each stdin line is a JSON object
{"id": ..., "path": FILE} or {"id": ..., "text": YAML}; each stdout line is
{"id": ..., "docs": [...]} or {"id": ..., "error": MESSAGE}, in input order.

PyYAML reads YAML 1.1 like go-yaml v2; its C loader is libyaml itself, of
which go-yaml v2 is a port (the first output line names the loader used). Values JSON cannot hold
as they are come out as {"\\u0000": KIND, ...} so that the Rust side sees
exactly what PyYAML built:

* mappings with a key that is not a string: {"\\u0000": "map", "pairs": [[k, v], ...]}
* timestamps (PyYAML builds datetimes): {"\\u0000": "timestamp", "text": as written}
* base-60 numbers (`1:20`): {"\\u0000": "base60", "text": ..., "value": number}
* NaN and infinities: {"\\u0000": "float", "text": "nan" | "inf" | "-inf"}
* !!binary: {"\\u0000": "binary", "text": the decoded bytes as UTF-8, lossy}
* sets: {"\\u0000": "set", "items": [...]}
"""

import json
import math
import sys

import yaml

# libyaml, which go-yaml v2 is a port of. PyYAML's Python scanner is stricter
# about tabs than libyaml and go-yaml; the test refuses to run with it.
BASE = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
TAG = "\u0000"


class Loader(BASE):
    pass


def tagged(kind, **fields):
    out = {TAG: kind}
    out.update(fields)
    return Tagged(out)


class Tagged:
    def __init__(self, value):
        self.value = value


def timestamp(loader, node):
    return tagged("timestamp", text=loader.construct_scalar(node))


def integer(loader, node):
    text = loader.construct_scalar(node)
    value = yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)
    if ":" in text:
        return tagged("base60", text=text, value=value)
    return value


def floating(loader, node):
    text = loader.construct_scalar(node)
    value = yaml.constructor.SafeConstructor.construct_yaml_float(loader, node)
    if ":" in text:
        return tagged("base60", text=text, value=value)
    return value


def binary(loader, node):
    data = yaml.constructor.SafeConstructor.construct_yaml_binary(loader, node)
    return tagged("binary", text=data.decode("utf-8", "replace"))


def aset(loader, node):
    return tagged("set", items=sorted(loader.construct_mapping(node).keys(), key=repr))


Loader.add_constructor("tag:yaml.org,2002:timestamp", timestamp)
Loader.add_constructor("tag:yaml.org,2002:int", integer)
Loader.add_constructor("tag:yaml.org,2002:float", floating)
Loader.add_constructor("tag:yaml.org,2002:binary", binary)
Loader.add_constructor("tag:yaml.org,2002:set", aset)


def plain(value):
    """`value` as JSON-ready data."""
    if isinstance(value, Tagged):
        return {k: plain(v) for k, v in value.value.items()}
    if isinstance(value, float):
        if math.isnan(value):
            return {TAG: "float", "text": "nan"}
        if math.isinf(value):
            return {TAG: "float", "text": "inf" if value > 0 else "-inf"}
        return value
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: plain(v) for k, v in value.items()}
        return {TAG: "map", "pairs": [[plain(k), plain(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def read(request):
    if "path" in request:
        with open(request["path"], "rb") as f:
            data = f.read()
    else:
        data = request["text"].encode("utf-8")
    return [plain(d) for d in yaml.load_all(data, Loader=Loader)]


def main():
    out = sys.stdout
    out.write(json.dumps({"loader": BASE.__name__}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            answer = {"id": request["id"], "docs": read(request)}
        except Exception as e:  # every failure is an answer, never a crash
            answer = {"id": request["id"], "error": "%s: %s" % (type(e).__name__, e)}
        out.write(json.dumps(answer, allow_nan=False) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
