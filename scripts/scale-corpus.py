#!/usr/bin/env python3
"""Builds a scaled copy of the shared corpus for scripts/bench-scale.sh.

    scripts/scale-corpus.py SRC OUT N

SRC is a community-operators checkout (operators/, catalogs/v4.18/). OUT gets
operators/ and catalogs/v4.18/ holding every package N times: copy 1 under
its own name, copy k > 1 as PACKAGE-ck. A copy is a distinct package:

- the package name is renamed where a package is named (annotations.yaml's
  package annotation, `package:`, `packageName:` and the package's `name:`
  in dependencies, properties, catalog templates and the rendered catalog);
- CSV names are renamed wherever they appear (metadata.name, spec.replaces,
  spec.skips, FBC entries and bundles, templates): `etcdoperator.v0.9.4`
  becomes `etcdoperator-c3.v0.9.4`. The name stems are the parts before the
  first dot of every CSV name, replaces and skips of the package; a stem is
  renamed where it starts a token (after a space, quote, bracket, comma or
  colon) and a dot follows, so image references (`.../stem@sha256:...`) keep
  their text.

Everything else (CRDs, other manifests, icons) is hard-linked, not copied:
the copies share their CRD groups and kinds and their images. Benchmark
data only: it is not a faithful catalog.
"""

import os
import re
import sys

import yaml

try:
    Loader = yaml.CSafeLoader
except AttributeError:  # PyYAML without libyaml
    Loader = yaml.SafeLoader

CSV_KIND = re.compile(r"^kind:\s*['\"]?ClusterServiceVersion", re.M)
PACKAGE_KEYS = r"(?:package|packageName|name|operators\.operatorframework\.io\.bundle\.package\.v1)"


def csv_names(path):
    """CSV name, replaces and skips of a CSV file (empty if not one)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if not CSV_KIND.search(text):
        return []
    out = []
    try:
        for doc in yaml.load_all(text, Loader=Loader):
            if not isinstance(doc, dict) or doc.get("kind") != "ClusterServiceVersion":
                continue
            out.append((doc.get("metadata") or {}).get("name") or "")
            spec = doc.get("spec") or {}
            out.append(spec.get("replaces") or "")
            out.extend(str(s) for s in (spec.get("skips") or []))
    except yaml.YAMLError:
        return []
    return [n for n in out if n]


def is_text_to_rewrite(rel):
    """Files whose text names the package or its CSVs."""
    base = os.path.basename(rel)
    if base in ("annotations.yaml", "annotations.yml", "dependencies.yaml", "properties.yaml", "release-config.yaml"):
        return True
    return "catalog-templates" in rel.split(os.sep)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ops = os.path.join(src, "operators")
    cats = os.path.join(src, "catalogs", "v4.18")
    for pkg in sorted(os.listdir(ops)):
        pdir = os.path.join(ops, pkg)
        if not os.path.isdir(pdir):
            continue
        files = []
        for root, _, names in os.walk(pdir):
            for name in names:
                files.append(os.path.relpath(os.path.join(root, name), pdir))
        stems = set()
        rewrite = {}
        for rel in files:
            p = os.path.join(pdir, rel)
            names = csv_names(p) if rel.endswith((".yaml", ".yml", ".json")) else []
            if names:
                stems.update(x.split(".", 1)[0] for x in names)
                rewrite[rel] = p
            elif is_text_to_rewrite(rel):
                rewrite[rel] = p
        catalog = os.path.join(cats, pkg)
        cat_files = sorted(os.listdir(catalog)) if os.path.isdir(catalog) else []
        stem_re = None
        if stems:
            alt = "|".join(re.escape(s) for s in sorted(stems, key=len, reverse=True))
            stem_re = re.compile(r"(?<=[\s'\"\[,:])(" + alt + r")(?=\.)")
        pkg_re = re.compile(r"(?m)^(\s*(?:-\s+)?" + PACKAGE_KEYS + r":\s*['\"]?)" + re.escape(pkg) + r"(['\"]?\s*)$")

        def renamed(text, suffix):
            if stem_re is not None:
                text = stem_re.sub(lambda m: m.group(1) + suffix, text)
            return pkg_re.sub(lambda m: m.group(1) + pkg + suffix + m.group(2), text)

        texts = {}
        for rel, p in rewrite.items():
            with open(p, encoding="utf-8", errors="surrogateescape") as f:
                texts[rel] = f.read()
        cat_texts = {}
        for c in cat_files:
            with open(os.path.join(catalog, c), encoding="utf-8", errors="surrogateescape") as f:
                cat_texts[c] = f.read()
        for k in range(1, n + 1):
            suffix = "" if k == 1 else "-c%d" % k
            name = pkg + suffix
            dst = os.path.join(out, "operators", name)
            for rel in files:
                d = os.path.join(dst, rel)
                os.makedirs(os.path.dirname(d), exist_ok=True)
                if rel in texts and suffix:
                    with open(d, "w", encoding="utf-8", errors="surrogateescape") as f:
                        f.write(renamed(texts[rel], suffix))
                else:
                    os.link(os.path.join(pdir, rel), d)
            for c, text in cat_texts.items():
                d = os.path.join(out, "catalogs", "v4.18", name, c)
                os.makedirs(os.path.dirname(d), exist_ok=True)
                with open(d, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(renamed(text, suffix))
        print("%s: %d file(s), %d rewritten, stems %s" % (pkg, len(files), len(rewrite), ",".join(sorted(stems))), file=sys.stderr)


if __name__ == "__main__":
    main()
