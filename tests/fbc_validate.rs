//! `validate` on real and broken catalogs.
use crate::common;

use std::process::Command;

#[test]
fn corpus_catalogs_validate_and_broken_ones_do_not() {
    for pkg in ["kube-green", "kepler-operator", "koku-metrics-operator"] {
        let dir = common::corpus().join("catalogs/v4.18").join(pkg);
        let o = Command::new(common::bin())
            .arg("validate")
            .arg(&dir)
            .output()
            .expect("run");
        assert!(
            o.status.success(),
            "{pkg}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
    let t = tempfile::tempdir().expect("tmp");
    std::fs::write(
        t.path().join("c.yaml"),
        "schema: olm.package\nname: p\ndefaultChannel: missing\n---\nschema: olm.channel\nname: a\npackage: p\nentries:\n- name: p.v1\n- name: p.v2\n---\nschema: olm.bundle\nname: p.v1\npackage: p\nimage: x\nproperties:\n- type: olm.package\n  value: {packageName: p, version: 1.0.0}\n",
    )
    .expect("write");
    let o = Command::new(common::bin())
        .arg("validate")
        .arg(t.path())
        .arg("--format")
        .arg("json")
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("not found in channels list"), "{out}");
    assert!(out.contains("multiple channel heads"), "{out}");
    assert!(
        out.contains("\\\"p.v2\\\" not found in package") || out.contains("p.v2"),
        "{out}"
    );
}

#[test]
fn render_of_a_bundle_dir_is_go_indented_json() {
    let dir = common::corpus().join("operators/etcd/0.9.4");
    let o = Command::new(common::bin())
        .arg("render")
        .arg(&dir)
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("{\n    \"schema\": \"olm.bundle\",\n    \"name\": \"etcdoperator.v0.9.4\",\n    \"package\": \"etcd\",\n    \"image\": \"\",\n    \"properties\": ["), "{}", &out[..200.min(out.len())]);
    assert!(out.contains("\"type\": \"olm.bundle.object\""));
}
