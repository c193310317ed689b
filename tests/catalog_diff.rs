//! `catalog diff` on two revisions of real catalogs: indexes built from the
//! corpus before and after a release, and the shared v4.18 catalog before
//! and after a set of edits.
use crate::common;
use olm_catalog::fbc::DeclarativeConfig;
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8")
}

#[test]
fn two_index_revisions_of_a_corpus_package() {
    // The new revision: kube-green without its newest bundle (0.7.1), and
    // 0.7.0 also in a new default channel `beta`.
    let t = tempfile::tempdir().expect("tmp");
    let new_dirs = t.path().join("kube-green");
    for d in common::package_bundle_dirs("kube-green") {
        let name = d.file_name().expect("name").to_owned();
        if name != "0.7.1" {
            common::copy_dir(&d, &new_dirs.join(name));
        }
    }
    let ann = new_dirs.join("0.7.0/metadata/annotations.yaml");
    let text = std::fs::read_to_string(&ann).expect("annotations");
    let text = text.replace(
        "operators.operatorframework.io.bundle.channels.v1: alpha\n",
        "operators.operatorframework.io.bundle.channels.v1: alpha,beta\n  operators.operatorframework.io.bundle.channel.default.v1: beta\n",
    );
    assert!(text.contains("alpha,beta"), "{text}");
    std::fs::write(&ann, text).expect("write");
    let build = |db: &Path, dirs: Vec<std::path::PathBuf>| {
        let mut args: Vec<String> = ["index", "add", "--database", s(db), "--mode", "replaces"]
            .iter()
            .map(|a| a.to_string())
            .collect();
        args.extend(dirs.iter().map(|d| s(d).to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (c, _, err) = common::run(&args);
        assert_eq!(c, 0, "{err}");
    };
    let old_db = t.path().join("old.db");
    let new_db = t.path().join("new.db");
    build(&old_db, common::package_bundle_dirs("kube-green"));
    let mut dirs: Vec<_> = std::fs::read_dir(&new_dirs)
        .expect("dirs")
        .map(|e| e.expect("entry").path())
        .collect();
    dirs.sort();
    build(&new_db, dirs);

    let (c, out, err) = common::run(&["catalog", "diff", s(&old_db), s(&new_db)]);
    assert_eq!(c, 1, "{err}");
    assert_eq!(
        out,
        "package changed: kube-green
  default channel: alpha -> beta
  channel added: beta (head kube-green.v0.7.0; 9 entries)
  channel changed: alpha
    head: kube-green.v0.7.1 -> kube-green.v0.7.0
    entry removed: kube-green.v0.7.1
  bundle removed: kube-green.v0.7.1
0 package(s) added, 0 removed, 1 changed
"
    );
    let (c, md, _) = common::run(&["catalog", "diff", s(&old_db), s(&new_db), "-o", "markdown"]);
    assert_eq!(c, 1);
    assert_eq!(
        md,
        "## Catalog changes

0 package(s) added, 0 removed, 1 changed.

### `kube-green`

- Default channel: `alpha` → `beta`
- Channel added: `beta` (head `kube-green.v0.7.0`, 9 entries)
- Channel `alpha`:
  - head `kube-green.v0.7.1` → `kube-green.v0.7.0`
  - removed `kube-green.v0.7.1`

```mermaid
graph LR
  classDef added fill:#dafbe1,stroke:#1a7f37,stroke-width:2px
  classDef removed fill:#ffebe9,stroke:#cf222e,stroke-dasharray:4 3,color:#6e7781
  classDef other fill:#f6f8fa,stroke:#8c959f,stroke-dasharray:2 2,color:#6e7781
  n0[\"kube-green.v0.3.0\"]
  n1[\"kube-green.v0.3.1\"]
  n2[\"kube-green.v0.4.0\"]
  n3[\"kube-green.v0.4.1\"]
  n4[\"kube-green.v0.5.0\"]
  n5[\"kube-green.v0.5.1\"]
  n6[\"kube-green.v0.5.2\"]
  n7[\"kube-green.v0.6.0\"]
  n8[\"kube-green.v0.7.0\"]
  n9[\"<del>kube-green.v0.7.1</del>\"]:::removed
  n0 -- replaces --> n1
  n1 -- replaces --> n2
  n2 -- replaces --> n3
  n3 -- replaces --> n4
  n4 -- replaces --> n5
  n5 -- replaces --> n6
  n6 -- replaces --> n7
  n7 -- replaces --> n8
  n8 -. \"<del>replaces</del>\" .-> n9
  linkStyle 8 stroke:#cf222e,stroke-width:2px,stroke-dasharray:4 3
```

- Bundles removed: `kube-green.v0.7.1`

"
    );
    // The other way round: the release added.
    let (c, out, _) = common::run(&["catalog", "diff", s(&new_db), s(&old_db)]);
    assert_eq!(c, 1);
    assert!(
        out.contains("  channel removed: beta (head kube-green.v0.7.0)\n"),
        "{out}"
    );
    assert!(
        out.contains("    entry added: kube-green.v0.7.1 (replaces kube-green.v0.7.0)\n"),
        "{out}"
    );
    assert!(out.contains("  bundle added: kube-green.v0.7.1\n"), "{out}");
    // An index and the same index: equal, exit 0.
    let (c, out, _) = common::run(&["catalog", "diff", s(&old_db), s(&old_db)]);
    assert_eq!((c, out.as_str()), (0, "no differences\n"));
}

#[test]
fn the_v418_catalog_before_and_after_edits() {
    let v418 = common::corpus().join("catalogs/v4.18");
    let mut cfg = DeclarativeConfig::load_path(&v418).expect("catalog");
    // Release-note material: a removed bundle, a new default channel, a
    // changed skipRange, a new image digest, a deprecation, a new package.
    cfg.bundles.retain(|b| b.name != "kube-green.v0.7.1");
    for c in &mut cfg.channels {
        c.entries.retain(|e| e.name != "kube-green.v0.7.1");
        for e in &mut c.entries {
            if e.name == "trident-operator.v24.10.0" {
                e.skip_range = ">=24.2.0 <24.10.0".into();
            }
        }
    }
    for p in &mut cfg.packages {
        if p.name == "multi-nic-cni-operator" {
            p.default_channel = "beta".into();
        }
    }
    for b in &mut cfg.bundles {
        if b.name == "ecr-secret-operator.v0.5.0" {
            b.image = "quay.io/example/ecr-secret-operator@sha256:0000".into();
        }
    }
    cfg.push_object(serde_json::json!({"schema":"olm.deprecations","package":"kepler-operator","entries":[
        {"reference":{"schema":"olm.bundle","name":"kepler-operator.v0.20.0"},"message":"kepler-operator.v0.20.0 is deprecated"}]}))
        .expect("deprecation");
    cfg.push_object(
        serde_json::json!({"schema":"olm.package","name":"zz-new","defaultChannel":"stable"}),
    )
    .expect("package");
    cfg.push_object(serde_json::json!({"schema":"olm.channel","name":"stable","package":"zz-new","entries":[{"name":"zz-new.v1.0.0"}]}))
        .expect("channel");
    cfg.push_object(serde_json::json!({"schema":"olm.bundle","name":"zz-new.v1.0.0","package":"zz-new","image":"quay.io/example/zz:1",
        "properties":[{"type":"olm.package","value":{"packageName":"zz-new","version":"1.0.0"}}]}))
        .expect("bundle");
    let t = tempfile::tempdir().expect("tmp");
    let new = t.path().join("new");
    olm_catalog::fbc::write::write_dir(&cfg, olm_catalog::fbc::write::OutputFormat::Json, &new)
        .expect("write");
    let (c, out, err) = common::run(&["catalog", "diff", s(&v418), s(&new)]);
    assert_eq!(c, 1, "{err}");
    assert_eq!(
        out,
        "package added: zz-new (default channel stable; channels stable; 1 bundle(s))
package changed: ecr-secret-operator
  bundle changed: ecr-secret-operator.v0.5.0: image quay.io/community-operator-pipeline-prod/ecr-secret-operator@sha256:0843807a61d1888b77d64c24fa4f43e57196539bf2b76bc4d9526489d9a9b05f -> quay.io/example/ecr-secret-operator@sha256:0000
package changed: kepler-operator
  deprecation added: olm.bundle kepler-operator.v0.20.0: kepler-operator.v0.20.0 is deprecated
package changed: kube-green
  channel changed: alpha
    head: kube-green.v0.7.1 -> kube-green.v0.7.0
    entry removed: kube-green.v0.7.1
  bundle removed: kube-green.v0.7.1
package changed: multi-nic-cni-operator
  default channel: stable -> beta
package changed: trident-operator
  channel changed: stable
    entry changed: trident-operator.v24.10.0: replaces trident-operator.v24.6.0 -> replaces trident-operator.v24.6.0, skipRange >=24.2.0 <24.10.0
1 package(s) added, 0 removed, 5 changed
"
    );
    let (c, json, _) = common::run(&["catalog", "diff", s(&v418), s(&new), "-o", "json"]);
    assert_eq!(c, 1);
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["addedPackages"][0]["name"], "zz-new");
    assert_eq!(v["removedPackages"], serde_json::json!([]));
    let kg = &v["changedPackages"][2];
    assert_eq!(kg["name"], "kube-green");
    assert_eq!(
        kg["removedBundles"],
        serde_json::json!(["kube-green.v0.7.1"])
    );
    assert_eq!(
        kg["changedChannels"][0]["head"],
        serde_json::json!({"old": "kube-green.v0.7.1", "new": "kube-green.v0.7.0"})
    );
    assert_eq!(
        v["changedPackages"][3]["defaultChannel"],
        serde_json::json!({"old": "stable", "new": "beta"})
    );
    // The same catalog in another format (JSON files vs YAML) is equal.
    let same = t.path().join("same");
    let orig = DeclarativeConfig::load_path(&v418).expect("catalog");
    olm_catalog::fbc::write::write_dir(&orig, olm_catalog::fbc::write::OutputFormat::Json, &same)
        .expect("write");
    let (c, out, _) = common::run(&["catalog", "diff", s(&v418), s(&same), "-o", "markdown"]);
    assert_eq!(
        (c, out.as_str()),
        (0, "## Catalog changes\n\nNo differences.\n")
    );
    // A source that is not there is an I/O error, exit 2.
    let (c, _, err) = common::run(&["catalog", "diff", s(&v418), "/nonexistent/catalog"]);
    assert_eq!(c, 2);
    assert!(err.contains("loading /nonexistent/catalog"), "{err}");
}

#[test]
fn an_opm_index_and_opms_render_of_it_are_the_same_catalog() {
    // opm renders bundle properties in another order than it stores them;
    // order is not a change, so the index opm built and the FBC opm
    // rendered from it do not differ.
    for pkg in ["etcd", "ack-ecr-controller"] {
        let dir = common::golden().join("sqlite").join(pkg);
        let (c, out, err) = common::run(&[
            "catalog",
            "diff",
            s(&dir.join("index.db")),
            s(&dir.join("render.json")),
        ]);
        assert_eq!((c, out.as_str()), (0, "no differences\n"), "{pkg}: {err}");
    }
    // A real difference is still seen: the golden etcd index against its
    // render without the alpha channel.
    let dir = common::golden().join("sqlite/etcd");
    let mut cfg = DeclarativeConfig::default();
    let text = std::fs::read_to_string(dir.join("render.json")).expect("render.json");
    cfg.parse_str(&text, &dir.join("render.json"))
        .expect("parse");
    cfg.channels.retain(|c| c.name != "alpha");
    let t = tempfile::tempdir().expect("tmp");
    olm_catalog::fbc::write::write_dir(&cfg, olm_catalog::fbc::write::OutputFormat::Json, t.path())
        .expect("write");
    let (c, out, _) = common::run(&["catalog", "diff", s(&dir.join("index.db")), s(t.path())]);
    assert_eq!(c, 1);
    assert_eq!(
        out,
        "package changed: etcd\n  channel removed: alpha (head etcdoperator.v0.6.1)\n0 package(s) added, 0 removed, 1 changed\n"
    );
}
