//! Index builds from the corpus checked table by table against what
//! operator-registry's rules give, with expectations derived here, from the
//! bundle directories and the corpus's real FBC catalogs, not from the
//! code under test:
//!
//! * the 7 packages with a `catalogs/v4.18/<pkg>/catalog.yaml` (all
//!   replaces mode: their `ci.yaml` sets no `updateGraph`), against
//!   `SemverPackageManifest` + `addPackageChannels` + `checkForBundles`
//!   (pkg/registry/populator.go, pkg/sqlite/load.go, pkg/lib/registry) and
//!   against the catalog, with every disagreement listed and explained;
//! * the 9 `updateGraph: semver-mode` packages against
//!   `BundleGraphLoader.AddBundleToGraph` + `AddPackageChannelsFromGraph`;
//! * the 16 `updateGraph: replaces-mode` packages: invariants, and opm's
//!   refusal exactly when a bundle would be pruned.
use crate::common;

use common::rows;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use rusqlite::Connection;
use serde_json::Value;

/// One bundle directory, read here with plain YAML parsing.
#[derive(Clone, Debug)]
struct Dir {
    dir: PathBuf,
    name: String,
    version: semver::Version,
    replaces: String,
    skips: Vec<String>,
    skip_range: String,
    channels: Vec<String>,
    default: Option<String>,
    /// (group, version, kind) of every CRD version and owned API service.
    provided: BTreeSet<(String, String, String)>,
    /// Required CRDs and API services.
    required: BTreeSet<(String, String, String)>,
    /// spec.relatedImages plus deployment container images.
    images: BTreeSet<String>,
    /// `spec.version` as written.
    version_raw: String,
    /// The plural of every provided and required API (CRD `spec.names.plural`,
    /// API service `name`, the `<plural>.<group>` of a required CRD's name).
    plurals: BTreeMap<(String, String, String), BTreeSet<String>>,
    /// bundleParser: the first `metadata/` file (by name) with a non-empty
    /// `properties` list, and likewise `dependencies`: (type, value).
    meta_props: Vec<(String, Value)>,
    meta_deps: Vec<(String, Value)>,
    /// The CSV's `olm.properties` annotation: (type, value).
    ann_props: Vec<(String, Value)>,
    /// `olm.substitutesFor`.
    substitutes_for: String,
    /// The CSV as parsed from YAML.
    csv: Value,
    /// (kind, metadata.name) of every manifest object.
    objects: Vec<(String, String)>,
    /// The directory name opm's image naming uses (`<version>` for
    /// `<version>/bundle/` layouts).
    dir_name: String,
}

/// The `(type, value)` items of the first `metadata/` file whose `key` list
/// is not empty (files in name order, whatever they are called).
fn first_meta_list(dir: &Path, key: &str) -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("metadata"))
        .expect("metadata")
        .map(|e| e.expect("e").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    for f in files {
        for doc in yaml_docs(&f) {
            if let Some(items) = doc.get(key).and_then(Value::as_array) {
                if !items.is_empty() {
                    return items
                        .iter()
                        .map(|i| {
                            (
                                s(i, "/type"),
                                i.get("value").cloned().unwrap_or(Value::Null),
                            )
                        })
                        .collect();
                }
            }
        }
    }
    Vec::new()
}

fn yaml_docs(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("read yaml");
    let mut out = Vec::new();
    for doc in yaml_serde::Deserializer::from_str(&text) {
        let v: Value = match serde::Deserialize::deserialize(doc) {
            Ok(v) => v,
            Err(_) => continue,
        };
        if !v.is_null() {
            out.push(v);
        }
    }
    out
}

fn s(v: &Value, p: &str) -> String {
    v.pointer(p)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn read_dir_bundle(dir: &Path) -> Dir {
    let ann = yaml_docs(&dir.join("metadata/annotations.yaml"))
        .into_iter()
        .next()
        .expect("annotations");
    let a = |k: &str| {
        ann.pointer(&format!("/annotations/{}", k.replace('/', "~1")))
            .and_then(Value::as_str)
            .map(String::from)
    };
    let mut csv = Value::Null;
    let mut provided = BTreeSet::new();
    let mut plurals: BTreeMap<(String, String, String), BTreeSet<String>> = BTreeMap::new();
    let mut objects = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("manifests"))
        .expect("manifests")
        .map(|e| e.expect("e").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    for f in files {
        for doc in yaml_docs(&f) {
            if doc.get("kind").is_some() {
                objects.push((s(&doc, "/kind"), s(&doc, "/metadata/name")));
            }
            match doc.get("kind").and_then(Value::as_str) {
                Some("ClusterServiceVersion") => csv = doc,
                Some("CustomResourceDefinition") => {
                    let g = s(&doc, "/spec/group");
                    let k = s(&doc, "/spec/names/kind");
                    let mut versions: Vec<String> = doc
                        .pointer("/spec/versions")
                        .and_then(Value::as_array)
                        .map(|vs| vs.iter().map(|v| s(v, "/name")).collect())
                        .unwrap_or_default();
                    if versions.is_empty() {
                        versions.push(s(&doc, "/spec/version"));
                    }
                    for v in versions {
                        plurals
                            .entry((g.clone(), v.clone(), k.clone()))
                            .or_default()
                            .insert(s(&doc, "/spec/names/plural"));
                        provided.insert((g.clone(), v, k.clone()));
                    }
                }
                _ => {}
            }
        }
    }
    let gvk = |v: &Value| (s(v, "/group"), s(v, "/version"), s(v, "/kind"));
    let list = |p: &str| {
        csv.pointer(p)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    for o in list("/spec/apiservicedefinitions/owned") {
        plurals.entry(gvk(&o)).or_default().insert(s(&o, "/name"));
        provided.insert(gvk(&o));
    }
    let mut required = BTreeSet::new();
    for r in list("/spec/customresourcedefinitions/required") {
        let name = s(&r, "/name");
        let (plural, group) = name.split_once('.').unwrap_or(("", ""));
        let key = (group.to_string(), s(&r, "/version"), s(&r, "/kind"));
        plurals
            .entry(key.clone())
            .or_default()
            .insert(plural.to_string());
        required.insert(key);
    }
    for r in list("/spec/apiservicedefinitions/required") {
        plurals.entry(gvk(&r)).or_default().insert(s(&r, "/name"));
        required.insert(gvk(&r));
    }
    let ann_props: Vec<(String, Value)> = csv
        .pointer("/metadata/annotations/olm.properties")
        .and_then(Value::as_str)
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|p| {
            (
                s(p, "/type"),
                p.get("value").cloned().unwrap_or(Value::Null),
            )
        })
        .collect();
    let named = if dir.file_name().is_some_and(|n| n == "bundle") {
        dir.parent().unwrap_or(dir)
    } else {
        dir
    };
    let dir_name = named
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut images = BTreeSet::new();
    for ri in list("/spec/relatedImages") {
        let i = s(&ri, "/image");
        if !i.is_empty() {
            images.insert(i);
        }
    }
    for d in list("/spec/install/spec/deployments") {
        for kind in ["containers", "initContainers"] {
            for c in d
                .pointer(&format!("/spec/template/spec/{kind}"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
            {
                let i = s(&c, "/image");
                if !i.is_empty() {
                    images.insert(i);
                }
            }
        }
    }
    let version_raw = s(&csv, "/spec/version");
    let csv_name = s(&csv, "/metadata/name");
    Dir {
        dir: dir.to_path_buf(),
        name: csv_name,
        version: semver::Version::parse(&version_raw).expect("semver version"),
        replaces: s(&csv, "/spec/replaces"),
        skips: list("/spec/skips")
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect(),
        skip_range: s(&csv, "/metadata/annotations/olm.skipRange"),
        channels: a("operators.operatorframework.io.bundle.channels.v1")
            .unwrap_or_default()
            .split(',')
            .map(String::from)
            .collect(),
        default: a("operators.operatorframework.io.bundle.channel.default.v1")
            .filter(|d| !d.is_empty()),
        provided,
        required,
        images,
        plurals,
        meta_props: first_meta_list(dir, "properties"),
        meta_deps: first_meta_list(dir, "dependencies"),
        ann_props,
        substitutes_for: s(&csv, "/metadata/annotations/olm.substitutesFor"),
        objects,
        dir_name,
        version_raw,
        csv,
    }
}

fn package_dirs(pkg: &str) -> Vec<Dir> {
    let mut out: Vec<Dir> = common::package_bundle_dirs(pkg)
        .iter()
        .map(|p| read_dir_bundle(p))
        .collect();
    for d in &out {
        assert!(
            d.version.build.is_empty(),
            "{}: build metadata would need opm's build-id comparison",
            d.name
        );
    }
    out.sort_by(|a, b| a.version.cmp(&b.version));
    out
}

fn update_graph(pkg: &str) -> Option<String> {
    let ci = common::corpus().join("operators").join(pkg).join("ci.yaml");
    let v = yaml_docs(&ci).into_iter().next()?;
    v.get("updateGraph")
        .and_then(Value::as_str)
        .map(String::from)
}

/// A channel_entry row: bundle, depth, the bundle its `replaces` entry names.
type Row = (String, i64, Option<usize>);

/// What opm's replaces mode writes for one batch of `dirs` into an empty
/// index (SemverPackageManifest, then addPackageChannels).
struct ReplacesExpect {
    heads: BTreeMap<String, String>,
    default: String,
    rows: BTreeMap<String, Vec<Row>>,
    /// checkForBundles: (bundle, channel) not reachable from the head.
    pruned: Vec<(String, String)>,
}

fn expect_replaces(dirs: &[Dir]) -> ReplacesExpect {
    let by: BTreeMap<&str, &Dir> = dirs.iter().map(|d| (d.name.as_str(), d)).collect();
    // Heads: the highest version listing each channel; default: from the
    // highest version that names one; a single channel is the default.
    let mut heads: BTreeMap<String, &Dir> = BTreeMap::new();
    let mut default = String::new();
    for d in dirs {
        for c in &d.channels {
            let replace = heads.get(c).is_none_or(|h| d.version >= h.version);
            if replace {
                heads.insert(c.clone(), d);
            }
        }
        if let Some(x) = &d.default {
            default = x.clone();
        }
    }
    if heads.len() == 1 {
        default = heads.keys().next().expect("one").clone();
    }
    let mut rows = BTreeMap::new();
    for (c, h) in &heads {
        // Head at depth 0; each skip adds a skipped row and a row of the
        // current bundle replacing it, one depth each; then the replaced
        // bundle one deeper, which the current row replaces.
        let mut r: Vec<Row> = vec![(h.name.clone(), 0, None)];
        let mut cur = h.name.clone();
        let mut cur_row = 0;
        let mut depth = 1;
        loop {
            let b = by[cur.as_str()];
            for s in &b.skips {
                r.push((s.clone(), depth, None));
                r.push((cur.clone(), depth, Some(r.len() - 1)));
                depth += 1;
            }
            if b.replaces.is_empty() {
                break;
            }
            r.push((b.replaces.clone(), depth, None));
            let id = r.len() - 1;
            r[cur_row].2 = Some(id);
            assert!(
                by.contains_key(b.replaces.as_str()),
                "{} replaces a bundle the corpus lacks",
                b.name
            );
            cur = b.replaces.clone();
            cur_row = id;
            depth += 1;
        }
        rows.insert(c.clone(), r);
    }
    let mut pruned = Vec::new();
    for d in dirs {
        for c in &d.channels {
            if !rows[c].iter().any(|(n, _, _)| *n == d.name) {
                pruned.push((d.name.clone(), c.clone()));
            }
        }
    }
    ReplacesExpect {
        heads: heads
            .into_iter()
            .map(|(c, d)| (c, d.name.clone()))
            .collect(),
        default,
        rows,
        pruned,
    }
}

fn run(args: &[&str], db: &Path, dirs: &[Dir]) -> std::process::Output {
    Command::new(common::bin())
        .args(["index", "add", "--database"])
        .arg(db)
        .args(args)
        .args(dirs.iter().map(|d| &d.dir))
        .output()
        .expect("run")
}

fn ok(o: &std::process::Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn v(x: &[&str]) -> Vec<String> {
    x.iter().map(|s| s.to_string()).collect()
}

/// Entries as (channel, bundle, replaced bundle via the entry ids, depth).
const ENTRIES: &str = "SELECT e.channel_name, e.operatorbundle_name, coalesce(r.operatorbundle_name, ''), e.depth FROM channel_entry e LEFT JOIN channel_entry r ON r.entry_id = e.replaces";

fn expected_entries(rows: &BTreeMap<String, Vec<Row>>) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    for (c, r) in rows {
        for (n, d, rep) in r {
            out.insert(vec![
                c.clone(),
                n.clone(),
                rep.map(|i| r[i].0.clone()).unwrap_or_default(),
                d.to_string(),
            ]);
        }
    }
    out
}

/// A JSON column decoded (Go's encoder escapes `<>&`; compare values).
fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// A JSON value with sorted keys, for comparing as text.
fn canon(v: &Value) -> String {
    serde_json::to_string(v).expect("json")
}

/// The rows opm's `addOperatorBundle`, `addAPIs`, `addDependencies` and
/// `addBundleProperties` write for each bundle of `dirs`, derived from the
/// bundle directories, checked table by table: operatorbundle (name,
/// version, skiprange, replaces, skips, substitutesfor, bundlepath; csv and
/// bundle present, holding the CSV and every manifest, unless `cleared`
/// names the bundle), api (with plurals), api_provider, api_requirer (with
/// the composite key to operatorbundle), related_image, properties,
/// dependencies.
fn check_tables(
    db: &Path,
    pkg: &str,
    dirs: &[Dir],
    image_of: &dyn Fn(&Dir) -> String,
    cleared: &BTreeSet<String>,
) {
    let c = Connection::open(db).expect("open");
    let want_ob: BTreeSet<Vec<String>> = dirs
        .iter()
        .map(|d| {
            vec![
                d.name.clone(),
                d.version_raw.clone(),
                image_of(d),
                d.skip_range.clone(),
                d.replaces.clone(),
                d.skips.join(","),
                d.substitutes_for.clone(),
                (!cleared.contains(&d.name)).to_string(),
            ]
        })
        .collect();
    let ob = rows(
        db,
        "SELECT name, version, coalesce(bundlepath,''), coalesce(skiprange,''), coalesce(replaces,''), coalesce(skips,''), coalesce(substitutesfor,''),
         CASE WHEN csv IS NULL AND bundle IS NULL THEN 'false' WHEN csv IS NOT NULL AND bundle IS NOT NULL THEN 'true' ELSE 'mixed' END FROM operatorbundle",
    );
    assert_eq!(ob, want_ob, "{pkg} operatorbundle");
    let gvks = |set: &BTreeSet<(String, String, String)>| -> BTreeSet<Vec<String>> {
        set.iter()
            .map(|(g, v, k)| vec![g.clone(), v.clone(), k.clone()])
            .collect()
    };
    // api: one row per group/version/kind any bundle provides or requires,
    // with a plural one of them gives.
    let mut plurals: BTreeMap<(String, String, String), BTreeSet<String>> = BTreeMap::new();
    for d in dirs {
        for (k, ps) in &d.plurals {
            plurals
                .entry(k.clone())
                .or_default()
                .extend(ps.iter().cloned());
        }
    }
    let api = rows(db, "SELECT group_name, version, kind, plural FROM api");
    let api_keys: BTreeSet<(String, String, String)> = api
        .iter()
        .map(|r| (r[0].clone(), r[1].clone(), r[2].clone()))
        .collect();
    let want_keys: BTreeSet<(String, String, String)> = dirs
        .iter()
        .flat_map(|d| d.provided.iter().chain(&d.required).cloned())
        .collect();
    assert_eq!(api_keys, want_keys, "{pkg} api");
    for r in &api {
        let k = (r[0].clone(), r[1].clone(), r[2].clone());
        assert!(
            plurals.get(&k).is_some_and(|p| p.contains(&r[3])),
            "{pkg} api {k:?}: plural {} not among {:?}",
            r[3],
            plurals.get(&k)
        );
    }
    for d in dirs {
        let q = |sql: &str| {
            let mut st = c.prepare(sql).expect("prepare");
            let n = st.column_count();
            st.query_map([&d.name], |r| {
                Ok((0..n)
                    .map(|i| match r.get_ref(i).expect("col") {
                        rusqlite::types::ValueRef::Null => "NULL".to_string(),
                        rusqlite::types::ValueRef::Text(t) => {
                            String::from_utf8_lossy(t).into_owned()
                        }
                        rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                        other => format!("{other:?}"),
                    })
                    .collect::<Vec<String>>())
            })
            .expect("query")
            .collect::<Result<BTreeSet<_>, _>>()
            .expect("rows")
        };
        let path = match image_of(d) {
            p if p.is_empty() => "NULL".to_string(),
            p => p,
        };
        let key = vec![d.version_raw.clone(), path.clone()];
        for (table, set) in [("api_provider", &d.provided), ("api_requirer", &d.required)] {
            let got = q(&format!(
                "SELECT group_name, version, kind FROM {table} WHERE operatorbundle_name = ?"
            ));
            assert_eq!(got, gvks(set), "{pkg} {} {table}", d.name);
            let keys = q(&format!("SELECT DISTINCT operatorbundle_version, operatorbundle_path FROM {table} WHERE operatorbundle_name = ?"));
            if !set.is_empty() {
                assert_eq!(keys, [key.clone()].into(), "{pkg} {} {table} key", d.name);
            }
        }
        let img = q("SELECT image FROM related_image WHERE operatorbundle_name = ?");
        // opm's Bundle.Images: the bundle image itself too.
        let mut want_img: BTreeSet<Vec<String>> =
            d.images.iter().map(|i| vec![i.clone()]).collect();
        if path != "NULL" {
            want_img.insert(vec![path.clone()]);
        }
        assert_eq!(img, want_img, "{pkg} {} related_image", d.name);

        // properties: the metadata list, olm.package of the annotations'
        // package (always: opm v1.73.0's bundleParser derives it whatever
        // the list holds), the CSV annotation's, one olm.gvk per provided API.
        let mut want_props: BTreeSet<(String, String)> = d
            .meta_props
            .iter()
            .map(|(t, v)| (t.clone(), canon(v)))
            .collect();
        want_props.insert((
            "olm.package".into(),
            canon(&serde_json::json!({"packageName": pkg, "version": d.version_raw})),
        ));
        want_props.extend(d.ann_props.iter().map(|(t, v)| (t.clone(), canon(v))));
        for (g, v, k) in &d.provided {
            want_props.insert((
                "olm.gvk".into(),
                canon(&serde_json::json!({"group": g, "kind": k, "version": v})),
            ));
        }
        let props: BTreeSet<(String, String)> =
            q("SELECT type, value FROM properties WHERE operatorbundle_name = ?")
                .into_iter()
                .map(|r| (r[0].clone(), canon(&json(&r[1]))))
                .collect();
        assert_eq!(props, want_props, "{pkg} {} properties", d.name);
        let keys = q("SELECT DISTINCT operatorbundle_version, operatorbundle_path FROM properties WHERE operatorbundle_name = ?");
        assert_eq!(
            keys,
            [key.clone()].into(),
            "{pkg} {} properties key",
            d.name
        );

        // dependencies: the metadata list plus one olm.gvk per required API.
        let mut want_deps: BTreeSet<(String, String)> = d
            .meta_deps
            .iter()
            .map(|(t, v)| (t.clone(), canon(v)))
            .collect();
        for (g, v, k) in &d.required {
            want_deps.insert((
                "olm.gvk".into(),
                canon(&serde_json::json!({"group": g, "kind": k, "version": v})),
            ));
        }
        let deps: BTreeSet<(String, String)> =
            q("SELECT type, value FROM dependencies WHERE operatorbundle_name = ?")
                .into_iter()
                .map(|r| (r[0].clone(), canon(&json(&r[1]))))
                .collect();
        assert_eq!(deps, want_deps, "{pkg} {} dependencies", d.name);

        // csv and bundle: the CSV and every manifest object, as JSON.
        if !cleared.contains(&d.name) {
            let (csv, bundle): (String, String) = c
                .query_row(
                    "SELECT csv, bundle FROM operatorbundle WHERE name = ?",
                    [&d.name],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .expect("csv");
            assert!(
                csv.ends_with('\n'),
                "{pkg} {}: json.Encoder adds a newline",
                d.name
            );
            assert_eq!(json(&csv), d.csv, "{pkg} {} csv", d.name);
            let mut objs: Vec<(String, String)> = serde_json::Deserializer::from_str(&bundle)
                .into_iter::<Value>()
                .map(|v| {
                    let v = v.expect("bundle object");
                    (s(&v, "/kind"), s(&v, "/metadata/name"))
                })
                .collect();
            let mut want = d.objects.clone();
            objs.sort();
            want.sort();
            assert_eq!(objs, want, "{pkg} {} bundle objects", d.name);
        }
    }
}

/// The catalog's objects by schema.
struct Catalog {
    default: String,
    /// channel → {(bundle, replaces)}.
    channels: BTreeMap<String, BTreeSet<(String, String)>>,
    /// channel → bundle → skipRange.
    skip_ranges: BTreeMap<String, String>,
    bundles: BTreeMap<String, Value>,
}

fn catalog(pkg: &str) -> Catalog {
    let p = common::corpus()
        .join("catalogs/v4.18")
        .join(pkg)
        .join("catalog.yaml");
    let mut c = Catalog {
        default: String::new(),
        channels: BTreeMap::new(),
        skip_ranges: BTreeMap::new(),
        bundles: BTreeMap::new(),
    };
    for o in yaml_docs(&p) {
        match o.get("schema").and_then(Value::as_str) {
            Some("olm.package") => c.default = s(&o, "/defaultChannel"),
            Some("olm.channel") => {
                let mut es = BTreeSet::new();
                for e in o["entries"].as_array().expect("entries") {
                    es.insert((s(e, "/name"), s(e, "/replaces")));
                    if !s(e, "/skipRange").is_empty() {
                        c.skip_ranges.insert(s(e, "/name"), s(e, "/skipRange"));
                    }
                }
                c.channels.insert(s(&o, "/name"), es);
            }
            Some("olm.bundle") => {
                c.bundles.insert(s(&o, "/name"), o);
            }
            _ => {}
        }
    }
    c
}

fn props<'a>(b: &'a Value, t: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    b["properties"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(move |p| p["type"] == t)
        .map(|p| &p["value"])
}

/// Where a catalog's channel (or default channel) and opm's replaces-mode
/// reading of the bundle directories disagree, and why. Each entry is
/// checked to still disagree, so the list stays true.
const EXCEPTIONS: &[(&str, &str, &str)] = &[
    ("ecr-secret-operator", "alpha", "the catalog's basic template wires alpha 0.3.2 -> 0.4.0 -> 0.4.1 -> 0.5.0 and lists 0.3.2/0.4.x in alpha, but their CSVs replace nothing (0.4.1 replaces 0.4.0) and are annotated channels v0.3/v0.4; 0.5.1 and 0.6.0 are not released to the v4.18 catalog yet, and 0.6.0, the highest version in alpha, replaces nothing, so opm heads alpha with 0.6.0 alone and prunes 0.5.0 and 0.5.1"),
    ("ecr-secret-operator", "v0.3", "channel from the annotations of 0.3.2; the template has only alpha"),
    ("ecr-secret-operator", "v0.4", "channel from the annotations of 0.4.0/0.4.1; the template has only alpha"),
    ("kepler-operator", "dev-preview", "channel from the annotations of 0.8.0-0.10.0, which the v4.18 catalog does not carry; the template has only alpha"),
    ("multi-nic-cni-operator", "alpha", "the template chains alpha 1.0.2 -> 1.2.1 -> ... -> 1.3.1; the CSVs of 1.2.8, 1.2.9 and 1.3.1 replace nothing and 1.3.0 replaces 1.2.2, so opm heads alpha with 1.3.1 alone and prunes the rest"),
    ("multi-nic-cni-operator", "beta", "the template adds 1.2.7 (annotated alpha-1.2, replacing nothing) to beta as the head"),
    ("multi-nic-cni-operator", "stable", "the template adds 1.2.4 (annotated stable-1.2), 1.2.5 and 1.2.6 (annotated alpha-1.2) to stable; their CSVs replace nothing"),
    ("multi-nic-cni-operator", "stable-1.2", "channel from the annotations of 1.2.4; the template folds it into stable"),
    ("multi-nic-cni-operator", "alpha-1.2", "channel from the annotations of 1.2.5-1.2.7; the template folds them into stable and beta"),
    ("multi-nic-cni-operator", "(default)", "the highest version, 1.3.1, annotates default channel alpha; the template sets stable"),
    ("rabbitmq-messaging-topology-operator", "stable", "the v4.18 catalog starts stable at 1.12.1 and leaves out 1.18.3, 1.19.0 and 1.19.1, pending releases (their release-config.yaml) on a side branch (1.19.1 -> 1.19.0 -> 1.18.3 -> 1.18.2) that 1.19.2 bypasses by replacing 1.18.2; opm follows the CSVs from 1.19.3 down to 1.8.0 and prunes that branch"),
    ("trident-operator", "stable", "the template chains stable 24.2.0 -> ... -> 26.2.1; no CSV has spec.replaces, so opm heads stable with 26.2.1 alone and prunes the other 11"),
];

fn exception(pkg: &str, channel: &str) -> Option<&'static str> {
    EXCEPTIONS
        .iter()
        .find(|(p, c, _)| *p == pkg && *c == channel)
        .map(|e| e.2)
}

#[test]
fn catalog_packages_replaces_mode_table_by_table() {
    let cats: Vec<String> = {
        let mut v: Vec<String> = std::fs::read_dir(common::corpus().join("catalogs/v4.18"))
            .expect("catalogs")
            .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(cats.len(), 7, "{cats:?}");
    let mut used_exceptions = BTreeSet::new();
    for pkg in &cats {
        // None of them sets updateGraph: the community pipeline's default,
        // replaces mode.
        assert_eq!(update_graph(pkg), None, "{pkg}");
        let dirs = package_dirs(pkg);
        let cat = catalog(pkg);
        let want = expect_replaces(&dirs);
        let t = tempfile::tempdir().expect("tmp");
        let db = t.path().join("index.db");
        // Record the images the real catalog uses; bundles not released to
        // it get a made-up one.
        let image_of = |d: &Dir| -> String {
            cat.bundles
                .get(&d.name)
                .map(|b| s(b, "/image"))
                .unwrap_or_else(|| format!("example.invalid/pending/{pkg}:{}", d.version))
        };
        let mut args: Vec<String> = vec!["--mode".into(), "replaces".into()];
        for d in &dirs {
            args.push(format!("--bundle-image={}={}", d.name, image_of(d)));
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        // opm refuses exactly when checkForBundles finds a pruned bundle.
        let o = run(&argv, &db, &dirs);
        if want.pruned.is_empty() {
            ok(&o);
        } else {
            assert!(!o.status.success(), "{pkg}: opm would refuse this add");
            let msg = String::from_utf8_lossy(&o.stderr);
            assert!(
                msg.contains(&format!("add prunes {} bundle(s)", want.pruned.len())),
                "{pkg}: {msg}"
            );
            // The first few are named, the rest counted.
            let named = want
                .pruned
                .iter()
                .filter(|(b, c)| msg.contains(&format!("{b} from channel {c}")))
                .count();
            assert_eq!(named, want.pruned.len().min(5), "{pkg}: {msg}");
            if want.pruned.len() > 5 {
                assert!(
                    msg.contains(&format!("and {} more", want.pruned.len() - 5)),
                    "{pkg}: {msg}"
                );
            }
            assert!(!db.exists(), "{pkg}: a refused add leaves no database");
            let mut permissive = argv.clone();
            permissive.push("--permissive");
            ok(&run(&permissive, &db, &dirs));
        }

        // package, channel, channel_entry.
        assert_eq!(
            rows(&db, "SELECT name, default_channel FROM package"),
            [vec![pkg.clone(), want.default.clone()]].into(),
            "{pkg}"
        );
        let heads: BTreeSet<Vec<String>> = want
            .heads
            .iter()
            .map(|(c, h)| vec![c.clone(), h.clone()])
            .collect();
        assert_eq!(
            rows(&db, "SELECT name, head_operatorbundle_name FROM channel"),
            heads,
            "{pkg}"
        );
        assert_eq!(rows(&db, ENTRIES), expected_entries(&want.rows), "{pkg}");

        // Against the catalog, channel by channel.
        for (c, r) in &want.rows {
            let index_edges: BTreeSet<(String, String)> = r
                .iter()
                .filter(|(n, _, _)| dirs.iter().any(|d| d.name == *n))
                .map(|(n, _, rep)| {
                    // The chain replaces (not a skip pair's synthetic row).
                    let skips = &dirs.iter().find(|d| d.name == *n).expect("d").skips;
                    let target = rep.map(|i| r[i].0.clone()).unwrap_or_default();
                    (
                        n.clone(),
                        if skips.contains(&target) {
                            String::new()
                        } else {
                            target
                        },
                    )
                })
                .fold(BTreeMap::<String, String>::new(), |mut m, (n, t)| {
                    let e = m.entry(n).or_default();
                    if e.is_empty() {
                        *e = t;
                    }
                    m
                })
                .into_iter()
                .collect();
            match (cat.channels.get(c), exception(pkg, c)) {
                (Some(ce), None) => assert_eq!(&index_edges, ce, "{pkg} channel {c}"),
                (Some(ce), Some(why)) => {
                    assert_ne!(
                        &index_edges, ce,
                        "{pkg} {c}: exception no longer needed: {why}"
                    );
                    used_exceptions.insert((pkg.clone(), c.clone()));
                }
                (None, Some(_)) => {
                    used_exceptions.insert((pkg.clone(), c.clone()));
                }
                (None, None) => {
                    panic!("{pkg}: channel {c} is not in the catalog and has no recorded reason")
                }
            }
        }
        for c in cat.channels.keys() {
            assert!(
                want.rows.contains_key(c),
                "{pkg}: catalog channel {c} not in the index"
            );
        }
        match exception(pkg, "(default)") {
            None => assert_eq!(want.default, cat.default, "{pkg} default channel"),
            Some(why) => {
                assert_ne!(want.default, cat.default, "{pkg}: {why}");
                used_exceptions.insert((pkg.clone(), "(default)".into()));
            }
        }

        // operatorbundle: name, version, image, skipRange, the CSV's
        // replaces/skips; per bundle rows of the API and property tables.
        let ob = rows(
            &db,
            "SELECT name, version, bundlepath, coalesce(skiprange,''), coalesce(replaces,''), coalesce(skips,'') FROM operatorbundle",
        );
        let want_ob: BTreeSet<Vec<String>> = dirs
            .iter()
            .map(|d| {
                vec![
                    d.name.clone(),
                    d.version.to_string(),
                    image_of(d),
                    d.skip_range.clone(),
                    d.replaces.clone(),
                    d.skips.join(","),
                ]
            })
            .collect();
        assert_eq!(ob, want_ob, "{pkg} operatorbundle");
        for d in &dirs {
            let q = |sql: &str| rows(&db, &sql.replace("{B}", &d.name));
            let gvks = |set: &BTreeSet<(String, String, String)>| -> BTreeSet<Vec<String>> {
                set.iter()
                    .map(|(g, v, k)| vec![g.clone(), v.clone(), k.clone()])
                    .collect()
            };
            let prov = q("SELECT group_name, version, kind FROM api_provider WHERE operatorbundle_name = '{B}'");
            assert_eq!(prov, gvks(&d.provided), "{pkg} {} api_provider", d.name);
            let req = q("SELECT group_name, version, kind FROM api_requirer WHERE operatorbundle_name = '{B}'");
            assert_eq!(req, gvks(&d.required), "{pkg} {} api_requirer", d.name);
            // The API rows carry the bundle's version and image (the
            // composite key to operatorbundle).
            let keys = q("SELECT DISTINCT operatorbundle_version, operatorbundle_path FROM api_provider WHERE operatorbundle_name = '{B}'");
            if !d.provided.is_empty() {
                assert_eq!(keys, [vec![d.version.to_string(), image_of(d)]].into());
            }
            let img = q("SELECT image FROM related_image WHERE operatorbundle_name = '{B}'");
            // opm's Bundle.Images: the bundle image itself too.
            let mut want_img: BTreeSet<Vec<String>> =
                d.images.iter().map(|i| vec![i.clone()]).collect();
            if !image_of(d).is_empty() {
                want_img.insert(vec![image_of(d)]);
            }
            assert_eq!(img, want_img, "{pkg} {} related_image", d.name);
            let types = q("SELECT DISTINCT type FROM properties WHERE operatorbundle_name = '{B}'");
            let mut want_types: BTreeSet<Vec<String>> = [v(&["olm.package"])].into();
            if !d.provided.is_empty() {
                want_types.insert(v(&["olm.gvk"]));
            }
            assert_eq!(types, want_types, "{pkg} {} property types", d.name);
            let pk = q("SELECT value FROM properties WHERE type = 'olm.package' AND operatorbundle_name = '{B}'");
            assert_eq!(
                pk,
                [vec![format!(
                    r#"{{"packageName":"{pkg}","version":"{}"}}"#,
                    d.version
                )]]
                .into()
            );
            let gv: BTreeSet<Vec<String>> = q("SELECT value FROM properties WHERE type = 'olm.gvk' AND operatorbundle_name = '{B}'")
                .into_iter()
                .map(|r| {
                    let x: Value = serde_json::from_str(&r[0]).expect("gvk json");
                    vec![s(&x, "/group"), s(&x, "/version"), s(&x, "/kind")]
                })
                .collect();
            assert_eq!(gv, gvks(&d.provided), "{pkg} {} olm.gvk", d.name);
            let deps: BTreeSet<Vec<String>> =
                q("SELECT type, value FROM dependencies WHERE operatorbundle_name = '{B}'");
            let want_deps: BTreeSet<Vec<String>> = d
                .required
                .iter()
                .map(|(g, ver, k)| {
                    vec![
                        "olm.gvk".to_string(),
                        format!(r#"{{"group":"{g}","kind":"{k}","version":"{ver}"}}"#),
                    ]
                })
                .collect();
            let deps_gvk: BTreeSet<Vec<String>> =
                deps.iter().filter(|r| r[0] == "olm.gvk").cloned().collect();
            assert_eq!(deps_gvk, want_deps, "{pkg} {} olm.gvk dependencies", d.name);

            // The released bundles: the catalog (rendered from the bundle
            // images) says the same.
            let Some(cb) = cat.bundles.get(&d.name) else {
                continue;
            };
            let cat_gvk: BTreeSet<(String, String, String)> = props(cb, "olm.gvk")
                .map(|x| (s(x, "/group"), s(x, "/version"), s(x, "/kind")))
                .collect();
            assert_eq!(cat_gvk, d.provided, "{pkg} {} catalog olm.gvk", d.name);
            let cat_req: BTreeSet<(String, String, String)> = props(cb, "olm.gvk.required")
                .map(|x| (s(x, "/group"), s(x, "/version"), s(x, "/kind")))
                .collect();
            assert_eq!(
                cat_req, d.required,
                "{pkg} {} catalog olm.gvk.required",
                d.name
            );
            let cat_pkg: Vec<String> = props(cb, "olm.package")
                .map(|x| format!("{}@{}", s(x, "/packageName"), s(x, "/version")))
                .collect();
            assert_eq!(cat_pkg, vec![format!("{pkg}@{}", d.version)]);
            // olm.package.required in FBC is a dependencies row of type
            // olm.package with the range as "version".
            // (Go's encoder writes `>` as \u003e: compare decoded values.)
            let pkg_deps: BTreeSet<(String, String)> = deps
                .iter()
                .filter(|r| r[0] == "olm.package")
                .map(|r| {
                    let x: Value = serde_json::from_str(&r[1]).expect("dep json");
                    (s(&x, "/packageName"), s(&x, "/version"))
                })
                .collect();
            let cat_pkg_deps: BTreeSet<(String, String)> = props(cb, "olm.package.required")
                .map(|x| (s(x, "/packageName"), s(x, "/versionRange")))
                .collect();
            assert_eq!(
                pkg_deps, cat_pkg_deps,
                "{pkg} {} olm.package dependencies",
                d.name
            );
            let cat_images: BTreeSet<String> = cb["relatedImages"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|i| s(i, "/image"))
                .filter(|i| *i != s(cb, "/image"))
                .collect();
            assert!(
                cat_images.is_subset(&d.images),
                "{pkg} {}: catalog relatedImages {cat_images:?} not all in {:?}",
                d.name,
                d.images
            );
            if let Some(sr) = cat.skip_ranges.get(&d.name) {
                assert_eq!(*sr, d.skip_range, "{pkg} {} skipRange", d.name);
            }
        }
        check_tables(&db, pkg, &dirs, &image_of, &BTreeSet::new());
        // Nothing was deprecated.
        assert_eq!(
            rows(&db, "SELECT * FROM deprecated"),
            BTreeSet::new(),
            "{pkg}"
        );
        assert_eq!(
            rows(&db, "PRAGMA foreign_key_check"),
            BTreeSet::new(),
            "{pkg}"
        );
    }
    let all: BTreeSet<(String, String)> = EXCEPTIONS
        .iter()
        .map(|(p, c, _)| (p.to_string(), c.to_string()))
        .collect();
    assert_eq!(used_exceptions, all, "every recorded exception is used");
}

/// What opm's semver mode gives, bundle after bundle in version order
/// (BundleGraphLoader.AddBundleToGraph: the new bundle replaces the highest
/// lower version in each of its channels and the lowest higher one now
/// replaces it; AddPackageChannelsFromGraph writes the chain from the head
/// at depth 0, one deeper per step). Returns channel → versions high to low.
fn expect_semver(dirs: &[Dir]) -> (BTreeMap<String, Vec<String>>, String) {
    let mut chans: BTreeMap<String, Vec<&Dir>> = BTreeMap::new();
    let mut default = String::new();
    for d in dirs {
        for c in &d.channels {
            chans.entry(c.clone()).or_default().push(d);
        }
        if let Some(x) = &d.default {
            default = x.clone();
        }
    }
    let out = chans
        .into_iter()
        .map(|(c, mut ds)| {
            ds.sort_by(|a, b| b.version.cmp(&a.version));
            (c, ds.into_iter().map(|d| d.name.clone()).collect())
        })
        .collect();
    (out, default)
}

/// `--bundle-image-prefix example.invalid/b`: `<prefix>:<dir name>`.
fn prefix_image(d: &Dir) -> String {
    format!("example.invalid/b:{}", d.dir_name)
}

#[test]
fn semver_mode_packages_follow_opm_semver_rules() {
    let corpus = common::corpus().join("operators");
    let mut pkgs: Vec<String> = std::fs::read_dir(&corpus)
        .expect("operators")
        .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
        .filter(|p| update_graph(p).as_deref() == Some("semver-mode"))
        .collect();
    pkgs.sort();
    assert_eq!(pkgs.len(), 9, "{pkgs:?}");
    for pkg in &pkgs {
        let dirs = package_dirs(pkg);
        let (chains, default) = expect_semver(&dirs);
        let t = tempfile::tempdir().expect("tmp");
        let db = t.path().join("index.db");
        ok(&run(
            &[
                "--mode",
                "semver",
                "--bundle-image-prefix",
                "example.invalid/b",
            ],
            &db,
            &dirs,
        ));
        assert_eq!(
            rows(&db, "SELECT p.name, p.default_channel, m.add_mode FROM package p LEFT JOIN olm_catalog_package m ON m.package_name = p.name"),
            [vec![pkg.clone(), default.clone(), "semver".into()]].into(),
            "{pkg}"
        );
        let mut want_entries = BTreeSet::new();
        let mut want_heads = BTreeSet::new();
        for (c, chain) in &chains {
            want_heads.insert(vec![c.clone(), chain[0].clone()]);
            for (i, n) in chain.iter().enumerate() {
                want_entries.insert(vec![
                    c.clone(),
                    n.clone(),
                    chain.get(i + 1).cloned().unwrap_or_default(),
                    i.to_string(),
                ]);
            }
        }
        assert_eq!(
            rows(&db, "SELECT name, head_operatorbundle_name FROM channel"),
            want_heads,
            "{pkg}"
        );
        assert_eq!(rows(&db, ENTRIES), want_entries, "{pkg}");
        // ClearNonHeadBundles: only channel heads keep csv and bundle.
        let heads: BTreeSet<String> = want_heads.iter().map(|h| h[1].clone()).collect();
        let with_content: BTreeSet<String> = rows(
            &db,
            "SELECT name FROM operatorbundle WHERE csv IS NOT NULL AND bundle IS NOT NULL",
        )
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
        assert_eq!(with_content, heads, "{pkg}");
        assert_eq!(
            rows(&db, "SELECT count(*) FROM operatorbundle"),
            [vec![dirs.len().to_string()]].into()
        );
        let cleared: BTreeSet<String> = dirs
            .iter()
            .map(|d| d.name.clone())
            .filter(|n| !heads.contains(n))
            .collect();
        check_tables(&db, pkg, &dirs, &prefix_image, &cleared);
    }
}

#[test]
fn replaces_mode_packages_keep_opm_invariants() {
    let corpus = common::corpus().join("operators");
    let mut pkgs: Vec<String> = std::fs::read_dir(&corpus)
        .expect("operators")
        .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
        .filter(|p| update_graph(p).as_deref() == Some("replaces-mode"))
        .collect();
    pkgs.sort();
    assert_eq!(pkgs.len(), 16, "{pkgs:?}");
    let mut refused = Vec::new();
    for pkg in &pkgs {
        let dirs = package_dirs(pkg);
        let want = expect_replaces(&dirs);
        let t = tempfile::tempdir().expect("tmp");
        let db = t.path().join("index.db");
        let o = run(&["--mode", "replaces"], &db, &dirs);
        assert_eq!(
            o.status.success(),
            want.pruned.is_empty(),
            "{pkg}: refused iff a bundle is pruned ({:?}): {}",
            want.pruned,
            String::from_utf8_lossy(&o.stderr)
        );
        if !want.pruned.is_empty() {
            refused.push(pkg.clone());
            ok(&run(&["--mode", "replaces", "--permissive"], &db, &dirs));
        }
        assert_eq!(rows(&db, ENTRIES), expected_entries(&want.rows), "{pkg}");
        // Directories without an image: empty bundlepath, every bundle
        // keeps its manifests in replaces mode.
        check_tables(&db, pkg, &dirs, &|_| String::new(), &BTreeSet::new());
        let c = Connection::open(&db).expect("open");
        // Every replaces edge points at an entry of the same channel.
        let dangling: i64 = c
            .query_row(
                "SELECT count(*) FROM channel_entry e LEFT JOIN channel_entry r ON r.entry_id = e.replaces
                 WHERE e.replaces IS NOT NULL AND (r.entry_id IS NULL OR r.channel_name != e.channel_name OR r.package_name != e.package_name)",
                [],
                |r| r.get(0),
            )
            .expect("q");
        assert_eq!(dangling, 0, "{pkg}");
        for (ch, head) in rows(&db, "SELECT name, head_operatorbundle_name FROM channel")
            .into_iter()
            .map(|r| (r[0].clone(), r[1].clone()))
        {
            // Exactly one head: the only bundle no entry of the channel
            // replaces, at depth 0, the minimum.
            let unreplaced = rows(
                &db,
                &format!(
                    "SELECT DISTINCT operatorbundle_name FROM channel_entry WHERE channel_name = '{ch}'
                     AND operatorbundle_name NOT IN (SELECT r.operatorbundle_name FROM channel_entry e JOIN channel_entry r ON r.entry_id = e.replaces WHERE e.channel_name = '{ch}')"
                ),
            );
            assert_eq!(unreplaced, [vec![head.clone()]].into(), "{pkg} {ch}");
            let top = rows(
                &db,
                &format!("SELECT operatorbundle_name FROM channel_entry WHERE channel_name = '{ch}' AND depth = (SELECT min(depth) FROM channel_entry WHERE channel_name = '{ch}')"),
            );
            assert_eq!(top, [vec![head.clone()]].into(), "{pkg} {ch}");
            // Depth never decreases along an edge, and grows along the
            // replaces chain.
            let bad: i64 = c
                .query_row(
                    "SELECT count(*) FROM channel_entry e JOIN channel_entry r ON r.entry_id = e.replaces WHERE e.channel_name = ? AND r.depth < e.depth",
                    [&ch],
                    |r| r.get(0),
                )
                .expect("q");
            assert_eq!(bad, 0, "{pkg} {ch}");
        }
        // Every bundle of the package is in a channel or was reported pruned.
        let stranded: BTreeSet<String> = rows(
            &db,
            "SELECT name FROM operatorbundle WHERE name NOT IN (SELECT operatorbundle_name FROM channel_entry)",
        )
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
        let pruned: BTreeSet<String> = want
            .pruned
            .iter()
            .map(|(b, _)| b.clone())
            .filter(|b| !want.rows.values().flatten().any(|(n, _, _)| n == b))
            .collect();
        assert_eq!(stranded, pruned, "{pkg}");
        // Replaces mode keeps every bundle's manifests.
        assert_eq!(
            rows(
                &db,
                "SELECT count(*) FROM operatorbundle WHERE csv IS NULL OR bundle IS NULL"
            ),
            [v(&["0"])].into(),
            "{pkg}"
        );
    }
    // Not every package fails: the check is not vacuous either way.
    assert!(
        !refused.is_empty() && refused.len() < pkgs.len(),
        "{refused:?}"
    );
}
