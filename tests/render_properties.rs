//! One derivation of a bundle's properties: what `graph`'s render (the
//! pipeline's `olm.bundle`) and `index`'s record (the SQLite rows) say
//! about every bundle of the corpus is the same set of properties, read
//! back the way opm's SQLite-to-FBC render reads the rows.
use crate::common;

use std::collections::BTreeSet;

use olm_catalog::bundle::Bundle;
use olm_catalog::graph::render_bundle;
use olm_catalog::index::record::BundleRecord;
use serde_json::{json, Value};

/// (type, value as sorted compact JSON)
type Props = BTreeSet<(String, String)>;

fn canon(v: &Value) -> String {
    serde_json::to_string(v).expect("json")
}

fn parse(s: &str) -> Value {
    serde_json::from_str(s).expect("a row's value is JSON")
}

/// The FBC properties the index rows stand for: `olm.gvk` rows, the last
/// `olm.package` row, other rows as they are; `olm.gvk` dependencies as
/// `olm.gvk.required`, `olm.package` ones as `olm.package.required`,
/// other dependencies as they are.
fn from_record(r: &BundleRecord) -> Props {
    let mut out = Props::new();
    let mut package = None;
    for (t, v) in &r.properties {
        match t.as_str() {
            "olm.package" => package = Some(canon(&parse(v))),
            _ => {
                out.insert((t.clone(), canon(&parse(v))));
            }
        }
    }
    out.insert(("olm.package".into(), package.expect("an olm.package row")));
    for (t, v) in &r.dependencies {
        let v = parse(v);
        match t.as_str() {
            "olm.gvk" => out.insert(("olm.gvk.required".into(), canon(&v))),
            "olm.package" => out.insert((
                "olm.package.required".into(),
                canon(&json!({"packageName": v["packageName"], "versionRange": v["version"]})),
            )),
            _ => out.insert((t.clone(), canon(&v))),
        };
    }
    out
}

fn from_fbc(b: &olm_catalog::fbc::Bundle) -> Props {
    b.properties
        .iter()
        .filter(|p| p.kind != "olm.csv.metadata" && p.kind != "olm.bundle.object")
        .map(|p| (p.kind.clone(), canon(&p.value)))
        .collect()
}

fn corpus_bundle_dirs() -> Vec<std::path::PathBuf> {
    let ops = common::corpus().join("operators");
    let mut pkgs: Vec<String> = std::fs::read_dir(&ops)
        .expect("operators/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    pkgs.sort();
    pkgs.iter()
        .flat_map(|p| common::package_bundle_dirs(p))
        .collect()
}

#[test]
fn graph_render_and_index_record_give_the_same_properties_for_every_corpus_bundle() {
    let mut compared = 0;
    let mut differ = Vec::new();
    for dir in corpus_bundle_dirs() {
        let b = Bundle::load_dir(&dir).expect("loads");
        let image = "example.com/b:v1";
        let (fbc, rec) = (
            render_bundle::bundle_to_fbc(&b, image),
            BundleRecord::from_bundle(&b, image),
        );
        let (fbc, rec) = match (fbc, rec) {
            (Ok(f), Ok(r)) => (f, r),
            // The index refuses more than render does (no channels, two
            // CSVs, a bad olm.properties annotation); render refusing a
            // bundle the index takes would be two rules.
            (Err(e), Ok(_)) => panic!("{}: render refuses, the index takes it: {e}", dir.display()),
            _ => continue,
        };
        compared += 1;
        let (a, r) = (from_fbc(&fbc), from_record(&rec));
        if a != r {
            differ.push(format!(
                "{}:\n  render only: {:?}\n  index only: {:?}",
                dir.display(),
                a.difference(&r).collect::<Vec<_>>(),
                r.difference(&a).collect::<Vec<_>>()
            ));
        }
        // The index's api rows are the same APIs.
        let provided: BTreeSet<String> = rec
            .provided
            .iter()
            .map(|k| canon(&k.gvk.to_json()))
            .collect();
        let gvks: BTreeSet<String> = a
            .iter()
            .filter(|(t, _)| t == "olm.gvk")
            .map(|(_, v)| v.clone())
            .collect();
        assert!(
            provided.is_subset(&gvks),
            "{}: provided APIs {provided:?} not all among olm.gvk {gvks:?}",
            dir.display()
        );
        assert_eq!(fbc.package, rec.package, "{}", dir.display());
        assert_eq!(fbc.name, rec.name, "{}", dir.display());
    }
    assert!(compared > 700, "compared {compared}");
    assert!(
        differ.is_empty(),
        "{} differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

/// opm v1.73.0's rules where the two paths used to disagree: the package
/// of the annotations wins over a `metadata/properties.yaml` olm.package
/// in render and both are rows of the index; a `v1` CRD's stray
/// `spec.version` is no API; a dependency of another type (olm.constraint)
/// is a property of the rendered bundle; `dependencies` in a file not
/// called dependencies.yaml count.
#[test]
fn properties_follow_opm_where_the_two_paths_disagreed() {
    let t = tempfile::tempdir().expect("tmp");
    let d = t.path();
    std::fs::create_dir_all(d.join("manifests")).expect("mkdir");
    std::fs::create_dir_all(d.join("metadata")).expect("mkdir");
    std::fs::write(
        d.join("manifests/csv.yaml"),
        "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: p.v1.0.0\n  annotations:\n    olm.properties: '[{\"type\": \"olm.maxOpenShiftVersion\", \"value\": \"4.16\"}]'\nspec:\n  version: 1.0.0\n",
    )
    .expect("write");
    std::fs::write(
        d.join("manifests/crd.yaml"),
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ws.example.com\nspec:\n  group: example.com\n  version: v0\n  names: {kind: W, plural: ws}\n  versions:\n  - {name: v1, served: true, storage: true}\n  - {name: v2, served: false, storage: false}\n",
    )
    .expect("write");
    std::fs::write(
        d.join("metadata/annotations.yaml"),
        "annotations:\n  operators.operatorframework.io.bundle.package.v1: p\n  operators.operatorframework.io.bundle.channels.v1: stable\n",
    )
    .expect("write");
    std::fs::write(
        d.join("metadata/properties.yaml"),
        "properties:\n- type: olm.package\n  value: {packageName: other, version: 0.0.1}\ndependencies:\n- type: olm.constraint\n  value: {failureMessage: x, cel: {rule: 'true'}}\n",
    )
    .expect("write");
    let b = Bundle::load_dir(d).expect("loads");
    let fbc = render_bundle::bundle_to_fbc(&b, "example.com/p:v1").expect("renders");
    let rec = BundleRecord::from_bundle(&b, "example.com/p:v1").expect("record");
    let props = from_fbc(&fbc);
    let want: Props = [
        (
            "olm.constraint",
            json!({"cel": {"rule": "true"}, "failureMessage": "x"}),
        ),
        (
            "olm.gvk",
            json!({"group": "example.com", "kind": "W", "version": "v1"}),
        ),
        (
            "olm.gvk",
            json!({"group": "example.com", "kind": "W", "version": "v2"}),
        ),
        ("olm.maxOpenShiftVersion", json!("4.16")),
        (
            "olm.package",
            json!({"packageName": "p", "version": "1.0.0"}),
        ),
    ]
    .into_iter()
    .map(|(t, v)| (t.to_string(), canon(&v)))
    .collect();
    assert_eq!(props, want);
    assert_eq!(rec.package, "p");
    let packages: Vec<&str> = rec
        .properties
        .iter()
        .filter(|(t, _)| t == "olm.package")
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(
        packages,
        [
            r#"{"packageName":"other","version":"0.0.1"}"#,
            r#"{"packageName":"p","version":"1.0.0"}"#
        ]
    );
    assert_eq!(from_record(&rec), want);
}
