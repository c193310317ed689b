//! `render` of an index against opm render's rules (operator-registry
//! alpha/action/render.go: `sqliteToDeclcfg`, `populateDBRelatedImages`,
//! `moveBundleObjectsToEndOfPropertySlices`, the related-image sort;
//! alpha/declcfg/write.go: `WriteJSON`, `writeToEncoder`), with
//! expectations read from the index itself (render's input), and the round
//! trip sqlite → FBC → sqlite of a semver index with cleared content,
//! bundle images, a deprecated bundle and a substitute.
use crate::common;

use common::rows;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use rusqlite::Connection;
use serde_json::Value;

fn corpus_dirs(pkg: &str) -> Vec<PathBuf> {
    let root = common::corpus().join("operators").join(pkg);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("package dir")
        .map(|e| e.expect("e").path())
        .filter(|p| p.join("manifests").is_dir())
        .collect();
    out.sort();
    out
}

fn cli(args: &[&str], paths: &[&Path]) -> std::process::Output {
    Command::new(common::bin())
        .args(args)
        .args(paths)
        .output()
        .expect("run")
}

fn ok(o: std::process::Output) -> std::process::Output {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

fn add(db: &Path, args: &[&str], dirs: &[PathBuf]) {
    let mut a = vec!["index", "add", "--database"];
    let dbs = db.to_string_lossy().into_owned();
    a.push(&dbs);
    a.extend_from_slice(args);
    let paths: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    ok(cli(&a, &paths));
}

const PREFIX: &str = "example.invalid/b";

/// An index of three packages: semver mode with images (non-heads
/// cleared), replaces mode with images, replaces mode without.
fn build_index(db: &Path) {
    add(
        db,
        &["--mode", "semver", "--bundle-image-prefix", PREFIX],
        &corpus_dirs("machine-deletion-remediation"),
    );
    add(
        db,
        &["--mode", "replaces", "--bundle-image-prefix", PREFIX],
        &corpus_dirs("debezium-operator"),
    );
    add(db, &["--mode", "replaces"], &corpus_dirs("etcd"));
}

#[test]
fn render_of_an_index_follows_opm_render_rules() {
    let t = tempfile::tempdir().expect("tmp");
    let db = t.path().join("index.db");
    build_index(&db);
    let out = ok(cli(&["render", "-o", "json"], &[&db])).stdout;
    let text = String::from_utf8(out).expect("utf8");

    // WriteJSON: json.Encoder with four-space indent and no HTML escaping:
    // each object starts a line with `{`, ends with `}` and a newline, and
    // nested lines are indented by multiples of four spaces.
    assert!(text.starts_with("{\n") && text.ends_with("}\n"));
    for line in text.lines() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        assert_eq!(indent % 4, 0, "indent: {line}");
    }
    for esc in ["\\u003c", "\\u003e", "\\u0026"] {
        assert!(!text.contains(esc), "HTML-escaped {esc}");
    }
    // The skipRanges hold `<`/`>`: written as they are.
    let ranges = rows(
        &db,
        "SELECT skiprange FROM operatorbundle WHERE skiprange LIKE '%<%' OR skiprange LIKE '%>%'",
    );
    assert!(!ranges.is_empty());
    for r in &ranges {
        assert!(
            text.contains(&format!("\"skipRange\": \"{}\"", r[0])),
            "{r:?}"
        );
    }
    let objs: Vec<Value> = serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .map(|v| v.expect("json object"))
        .collect();

    // writeToEncoder: packages by name; per package its olm.package, its
    // channels by name, its bundles by name.
    let key = |o: &Value| -> (String, u8, String) {
        let schema = o["schema"].as_str().unwrap_or("");
        let rank = match schema {
            "olm.package" => 0,
            "olm.channel" => 1,
            "olm.bundle" => 2,
            _ => 3,
        };
        let pkg = if rank == 0 { &o["name"] } else { &o["package"] };
        (
            pkg.as_str().unwrap_or("").to_string(),
            rank,
            o["name"].as_str().unwrap_or("").to_string(),
        )
    };
    let keys: Vec<(String, u8, String)> = objs.iter().map(key).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "object order");
    let packages: BTreeSet<String> = rows(&db, "SELECT name FROM package")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(
        keys.iter()
            .filter(|k| k.1 == 0)
            .map(|k| k.0.clone())
            .collect::<BTreeSet<_>>(),
        packages
    );

    // Per bundle, from the index: relatedImages are the CSV's
    // spec.relatedImages (none once the csv column is cleared) plus every
    // related_image row not among them (no name), sorted by image; the
    // olm.bundle.object properties (one per stored manifest) come last.
    let c = Connection::open(&db).expect("open");
    let mut db_images: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in rows(&db, "SELECT operatorbundle_name, image FROM related_image") {
        db_images
            .entry(r[0].clone())
            .or_default()
            .insert(r[1].clone());
    }
    let bundles: Vec<&Value> = objs
        .iter()
        .filter(|o| o["schema"] == "olm.bundle")
        .collect();
    let in_channels = rows(&db, "SELECT DISTINCT operatorbundle_name FROM channel_entry WHERE operatorbundle_name IN (SELECT name FROM operatorbundle)");
    assert_eq!(bundles.len(), in_channels.len());
    let mut cleared_seen = 0;
    for b in bundles {
        let name = b["name"].as_str().expect("name");
        let (csv, bundle, path): (Option<String>, Option<String>, String) = c
            .query_row(
                "SELECT csv, bundle, coalesce(bundlepath,'') FROM operatorbundle WHERE name = ?",
                [name],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .expect("row");
        assert_eq!(b["image"].as_str().unwrap_or(""), path, "{name} image");
        let mut want: Vec<(String, String)> = Vec::new();
        if let Some(csv) = &csv {
            let v: Value = serde_json::from_str(csv).expect("csv json");
            for ri in v
                .pointer("/spec/relatedImages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                want.push((
                    ri["name"].as_str().unwrap_or("").to_string(),
                    ri["image"].as_str().unwrap_or("").to_string(),
                ));
            }
        } else {
            cleared_seen += 1;
        }
        for img in db_images.get(name).into_iter().flatten() {
            if !want.iter().any(|(_, i)| i == img) {
                want.push((String::new(), img.clone()));
            }
        }
        let got: Vec<(String, String)> = b["relatedImages"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|ri| {
                (
                    ri["name"].as_str().unwrap_or("").to_string(),
                    ri["image"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        let images: Vec<&String> = got.iter().map(|(_, i)| i).collect();
        let mut sorted_images = images.clone();
        sorted_images.sort();
        assert_eq!(
            images, sorted_images,
            "{name}: relatedImages sorted by image"
        );
        want.sort();
        let mut got_sorted = got.clone();
        got_sorted.sort();
        assert_eq!(got_sorted, want, "{name} relatedImages");

        let props: Vec<&str> = b["properties"]
            .as_array()
            .expect("properties")
            .iter()
            .map(|p| p["type"].as_str().unwrap_or(""))
            .collect();
        let is_obj = |t: &&str| *t == "olm.bundle.object" || *t == "olm.csv.metadata";
        if let Some(first) = props.iter().position(is_obj) {
            assert!(
                props[first..].iter().all(is_obj),
                "{name}: objects last: {props:?}"
            );
        }
        let stored = bundle
            .as_deref()
            .map(|s| {
                serde_json::Deserializer::from_str(s)
                    .into_iter::<Value>()
                    .count()
            })
            .unwrap_or(0);
        assert_eq!(
            props.iter().filter(|t| **t == "olm.bundle.object").count(),
            stored,
            "{name}: one olm.bundle.object per stored manifest"
        );
        assert_eq!(
            props.iter().filter(|t| **t == "olm.package").count(),
            1,
            "{name}"
        );
    }
    assert!(cleared_seen > 0, "the semver package has cleared bundles");
}

#[test]
fn render_refuses_a_file_of_another_type() {
    let t = tempfile::tempdir().expect("tmp");
    let bin = t.path().join("image.png");
    std::fs::write(&bin, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").expect("write");
    let txt = t.path().join("notes.txt");
    std::fs::write(&txt, "hello\n").expect("write");
    for f in [&bin, &txt] {
        let o = cli(&["render"], &[f]);
        assert_eq!(o.status.code(), Some(2));
        let msg = String::from_utf8_lossy(&o.stderr);
        assert!(
            msg.contains("unsupported file type") && msg.contains(&f.display().to_string()),
            "{msg}"
        );
    }
}

/// A copy of `src` as a substitute: CSV `name`/`version` bumped to
/// `new_version` and `olm.substitutesFor` naming the original.
fn substitute(
    src: &Path,
    to: &Path,
    old_name: &str,
    old_version: &str,
    new_version: &str,
) -> String {
    std::fs::create_dir_all(to).expect("mkdir");
    for sub in ["manifests", "metadata"] {
        std::fs::create_dir_all(to.join(sub)).expect("mkdir");
        for e in std::fs::read_dir(src.join(sub)).expect("dir") {
            let p = e.expect("e").path();
            std::fs::copy(&p, to.join(sub).join(p.file_name().expect("name"))).expect("copy");
        }
    }
    let new_name = old_name.replace(old_version, new_version);
    let csv = std::fs::read_dir(to.join("manifests"))
        .expect("manifests")
        .map(|e| e.expect("e").path())
        .find(|p| p.to_string_lossy().contains("clusterserviceversion"))
        .expect("csv");
    let text = std::fs::read_to_string(&csv).expect("read");
    let marker = "metadata:\n  annotations:\n";
    assert!(text.contains(marker));
    let text = text
        .replacen(
            marker,
            &format!("{marker}    olm.substitutesFor: {old_name}\n"),
            1,
        )
        .replace(
            &format!("  name: {old_name}\n"),
            &format!("  name: {new_name}\n"),
        )
        .replace(
            &format!("  version: {old_version}\n"),
            &format!("  version: {new_version}\n"),
        );
    std::fs::write(&csv, text).expect("write");
    new_name
}

#[test]
fn sqlite_to_fbc_to_sqlite_keeps_a_semver_index() {
    let t = tempfile::tempdir().expect("tmp");
    let db = t.path().join("a.db");
    build_index(&db);
    // A substitute for the semver package's head (--enable-alpha).
    let mdr = common::corpus().join("operators/machine-deletion-remediation/0.7.0");
    let sub = substitute(
        &mdr,
        &t.path().join("sub"),
        "machine-deletion-remediation.v0.7.0",
        "0.7.0",
        "0.7.1",
    );
    add(
        &db,
        &[
            "--mode",
            "semver",
            "--enable-alpha",
            "--bundle-image",
            &format!("{sub}={PREFIX}:sub"),
        ],
        &[t.path().join("sub")],
    );
    // A deprecated bundle (its tail truncated).
    let dep = format!("{PREFIX}:0.4.0");
    let dbs = db.to_string_lossy().into_owned();
    ok(cli(
        &[
            "index",
            "deprecatetruncate",
            "--database",
            &dbs,
            "--bundles",
            &dep,
        ],
        &[],
    ));
    // What the round trip must carry: cleared content, images, plurals,
    // the deprecated row, the substitute.
    assert!(!rows(&db, "SELECT name FROM operatorbundle WHERE csv IS NULL").is_empty());
    assert!(!rows(&db, "SELECT * FROM deprecated").is_empty());
    assert!(!rows(
        &db,
        "SELECT name FROM operatorbundle WHERE substitutesfor != ''"
    )
    .is_empty());

    let fbc = t.path().join("fbc");
    ok(cli(&["migrate"], &[&db, &fbc]));
    let db2 = t.path().join("b.db");
    let b2 = db2.to_string_lossy().into_owned();
    let fbcs = fbc.to_string_lossy().into_owned();
    ok(cli(
        &[
            "index",
            "add",
            "--database",
            &b2,
            "--enable-alpha",
            "--from-fbc",
            &fbcs,
        ],
        &[],
    ));
    for q in [
        // `bundle` is compared below: render gives the objects in opm
        // v1.73.0's order (sorted), not the manifests' order.
        "SELECT name, csv, coalesce(bundlepath,''), coalesce(skiprange,''), version, coalesce(substitutesfor,'') FROM operatorbundle",
        // Not carried by FBC: the `replaces` column of a deprecated bundle
        // (it names a truncated bundle; the entry, which FBC shows, lost
        // that edge), and the skips `addSubstitutesFor` gives a substitute
        // (`--from-fbc` reads a bundle's skips from its CSV when it has one).
        "SELECT name, coalesce(replaces,'') FROM operatorbundle WHERE name NOT IN (SELECT operatorbundle_name FROM deprecated)",
        "SELECT name, coalesce(skips,'') FROM operatorbundle WHERE coalesce(substitutesfor,'') = ''",
        "SELECT name, default_channel FROM package",
        "SELECT name, package_name, head_operatorbundle_name FROM channel",
        "SELECT e.channel_name, e.operatorbundle_name, coalesce(r.operatorbundle_name, ''), e.depth FROM channel_entry e LEFT JOIN channel_entry r ON r.entry_id = e.replaces",
        "SELECT group_name, version, kind, plural FROM api",
        "SELECT group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path FROM api_provider",
        "SELECT group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path FROM api_requirer",
        "SELECT image, operatorbundle_name FROM related_image",
        "SELECT type, value, operatorbundle_name FROM properties",
        "SELECT type, value, operatorbundle_name FROM dependencies",
        "SELECT operatorbundle_name FROM deprecated",
    ] {
        let (a, b) = (rows(&db, q), rows(&db2, q));
        let short = |r: &Vec<String>| -> Vec<String> {
            r.iter()
                .map(|c| c.chars().take(80).collect::<String>())
                .collect()
        };
        let only_a: Vec<Vec<String>> = a.difference(&b).map(short).collect();
        let only_b: Vec<Vec<String>> = b.difference(&a).map(short).collect();
        assert!(
            only_a.is_empty() && only_b.is_empty(),
            "{q}\nonly before: {only_a:#?}\nonly after: {only_b:#?}"
        );
    }
    let objects = |db: &Path| -> BTreeMap<String, Vec<String>> {
        rows(db, "SELECT name, coalesce(bundle, '') FROM operatorbundle")
            .into_iter()
            .map(|r| {
                let mut objs: Vec<String> = serde_json::Deserializer::from_str(&r[1])
                    .into_iter::<Value>()
                    .map(|v| v.expect("json").to_string())
                    .collect();
                objs.sort();
                (r[0].clone(), objs)
            })
            .collect()
    };
    assert_eq!(objects(&db), objects(&db2), "the same manifests per bundle");
}

/// `render … | head`: a reader that stops early is not an error.
#[test]
fn render_into_a_closed_pipe_is_quiet() {
    use std::io::Read;
    use std::process::Stdio;
    let catalog = common::corpus().join("catalogs/v4.18/koku-metrics-operator");
    let mut child = Command::new(common::bin())
        .arg("render")
        .arg(&catalog)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut first = [0u8; 100];
    child
        .stdout
        .take()
        .expect("stdout")
        .read_exact(&mut first)
        .expect("some output");
    // stdout is dropped here: the pipe is closed with ~700 KB unread.
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "{:?}", out.status);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// What the real opm built (`../shared/opm-golden/sqlite/*/index.db`: csv
/// and bundle as BLOBs, NULL content for non-heads in semver mode) is read
/// by every reader: `render` gives opm render's `render.json` item by item,
/// `migrate`, `index list` and `index export` work on it.
#[test]
fn readers_accept_opm_built_indexes_and_render_them_as_opm() {
    for pkg in ["etcd", "ack-ecr-controller"] {
        let dir = common::golden().join("sqlite").join(pkg);
        let db = dir.join("index.db");
        let o = ok(cli(&["render", "-o", "json"], &[&db]));
        common::assert_render_matches(
            &String::from_utf8_lossy(&o.stdout),
            &dir.join("render.json"),
            &[],
        );
        let tmp = tempfile::tempdir().expect("tempdir");
        let out = tmp.path().join("catalog");
        ok(cli(&["migrate"], &[&db, &out]));
        assert!(out.join(pkg).join("catalog.json").is_file());
        let o = ok(cli(
            &["index", "list", "bundles", "-o", "json", "--database"],
            &[&db],
        ));
        let listed: Value = serde_json::from_slice(&o.stdout).expect("json");
        let n = listed.as_array().map(Vec::len).unwrap_or(0);
        assert!(n > 0, "{listed}");
    }
    // Export writes the manifests opm stored (etcd keeps every bundle's);
    // opm stores olm.gvk dependency values as BLOBs too (etcd has none: one
    // is added the way opm writes it).
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("etcd.db");
    std::fs::copy(common::golden().join("sqlite/etcd/index.db"), &db).expect("copy");
    Connection::open(&db)
        .expect("open")
        .execute(
            "INSERT INTO dependencies VALUES ('olm.gvk', ?, 'etcdoperator.v0.9.4', '0.9.4', '127.0.0.1:5000/cop/etcd-bundle:0.9.4')",
            [br#"{"group":"example.com","kind":"Thing","version":"v1"}"#.to_vec()],
        )
        .expect("blob dependency");
    let out = tmp.path().join("export");
    ok(cli(
        &["index", "export", "--package", "etcd", "--to"],
        &[&out, Path::new("--database"), &db],
    ));
    assert!(out.join("etcd/0.9.4/manifests").is_dir());
}

/// The `olm.bundle` objects of a JSON stream, by name.
fn bundles_of(stream: &str) -> BTreeMap<String, Value> {
    common::json_stream(stream)
        .into_iter()
        .filter(|o| o["schema"] == "olm.bundle")
        .map(|o| (o["name"].as_str().expect("name").to_string(), o))
        .collect()
}

#[test]
fn migrate_level_bundle_object_to_csv_metadata_gives_the_pipelines_properties() {
    // The pipeline made catalogs/v4.18 from bundle images with this
    // migration: rendering each bundle directory with its image, then
    // migrating, must give the catalog's olm.csv.metadata (and properties).
    let catalog = common::corpus().join("catalogs/v4.18/kube-green");
    let want = bundles_of(&String::from_utf8_lossy(
        &ok(cli(&["render"], &[&catalog])).stdout,
    ));
    let t = tempfile::tempdir().expect("tmp");
    let fbc = t.path().join("old");
    std::fs::create_dir(&fbc).expect("mkdir");
    let mut stream = String::from("{\"schema\":\"olm.package\",\"name\":\"kube-green\"}\n");
    let mut migrated_by_render = String::new();
    let dirs = corpus_dirs("kube-green");
    assert_eq!(dirs.len(), want.len());
    for dir in &dirs {
        let b = bundles_of(&String::from_utf8_lossy(
            &ok(cli(&["render"], &[dir])).stdout,
        ));
        let name = b.keys().next().expect("one bundle").clone();
        let image = want[&name]["image"].as_str().expect("image").to_string();
        let plain =
            String::from_utf8_lossy(&ok(cli(&["render", "--bundle-image", &image], &[dir])).stdout)
                .into_owned();
        assert!(plain.contains("olm.bundle.object"));
        stream.push_str(&plain);
        migrated_by_render.push_str(&String::from_utf8_lossy(
            &ok(cli(
                &[
                    "render",
                    "--bundle-image",
                    &image,
                    "--migrate-level",
                    "bundle-object-to-csv-metadata",
                ],
                &[dir],
            ))
            .stdout,
        ));
    }
    std::fs::write(fbc.join("catalog.json"), &stream).expect("write");
    let out = t.path().join("new");
    ok(cli(
        &[
            "migrate",
            "--migrate-level",
            "bundle-object-to-csv-metadata",
        ],
        &[&fbc, &out],
    ));
    let migrated = bundles_of(
        &std::fs::read_to_string(out.join("kube-green/catalog.json")).expect("migrated"),
    );
    let by_render = bundles_of(&migrated_by_render);
    assert_eq!(migrated, by_render);
    let csv_meta = |b: &Value| -> Vec<Value> {
        b["properties"]
            .as_array()
            .expect("properties")
            .iter()
            .filter(|p| p["type"] == "olm.csv.metadata")
            .map(|p| p["value"].clone())
            .collect()
    };
    for (name, b) in &migrated {
        assert!(!b.to_string().contains("olm.bundle.object"), "{name}");
        assert_eq!(csv_meta(b), csv_meta(&want[name]), "{name}");
        let types = |b: &Value| -> Vec<String> {
            b["properties"]
                .as_array()
                .expect("properties")
                .iter()
                .map(|p| p["type"].as_str().expect("type").to_string())
                .collect()
        };
        assert_eq!(
            types(b).last().map(String::as_str),
            Some("olm.csv.metadata")
        );
        assert_eq!(
            types(b).into_iter().collect::<BTreeSet<_>>(),
            types(&want[name]).into_iter().collect::<BTreeSet<_>>(),
            "{name}"
        );
    }
    // Level none (the default) changes nothing; unknown levels are usage
    // errors; a bundle directory is no catalog.
    let none = t.path().join("none");
    ok(cli(&["migrate"], &[&fbc, &none]));
    assert_eq!(
        bundles_of(&std::fs::read_to_string(none.join("kube-green/catalog.json")).expect("none")),
        bundles_of(&stream)
    );
    // `all` runs every migration opm v1.73.0 has: the same result.
    let all = t.path().join("all");
    ok(cli(&["migrate", "--migrate-level", "all"], &[&fbc, &all]));
    assert_eq!(
        bundles_of(&std::fs::read_to_string(all.join("kube-green/catalog.json")).expect("all")),
        migrated
    );
    // split-icon came after v1.73.0: unknown, as it is to opm v1.73.0.
    for level in ["split-icon", "nonsense"] {
        let o = cli(
            &["migrate", "--migrate-level", level],
            &[&fbc, &t.path().join(level)],
        );
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(level), "{err}");
        assert!(!t.path().join(level).exists());
    }
    let o = cli(&["migrate"], &[&dirs[0], &t.path().join("b")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("a bundle directory"));
}

/// opm's `api_to_model` decodes an `olm.package` dependency row into
/// `property.Package` (Go's field matching: any case) and rebuilds
/// `olm.package.required` from its string fields, a missing one as "":
/// render must do the same, not copy the exact keys (nor write null).
#[test]
fn package_dependencies_render_from_their_decoded_fields() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let src = common::fixtures().join("bundles/good/memcached-operator-0.0.2");
    let cases = [
        (
            "value:\n    PackageName: etcd\n    Version: \">=0.9.0\"\n",
            serde_json::json!({"packageName": "etcd", "versionRange": ">=0.9.0"}),
        ),
        (
            "value:\n    packagename: etcd\n",
            serde_json::json!({"packageName": "etcd", "versionRange": ""}),
        ),
    ];
    for (i, (value, want)) in cases.iter().enumerate() {
        let bundle = tmp.path().join(format!("b{i}"));
        common::copy_dir(&src, &bundle);
        std::fs::write(
            bundle.join("metadata/dependencies.yaml"),
            format!("dependencies:\n- type: olm.package\n  {value}"),
        )
        .expect("dependencies.yaml");
        let db = tmp.path().join(format!("i{i}.db"));
        let db_s = db.to_str().expect("utf-8");
        ok(cli(
            &[
                "index",
                "add",
                "--database",
                db_s,
                "--mode",
                "semver",
                "--bundles",
            ],
            &[&bundle],
        ));
        let out = ok(cli(&["render", db_s], &[]));
        let objects = common::json_stream(&String::from_utf8_lossy(&out.stdout));
        let required: Vec<&Value> = objects
            .iter()
            .filter(|o| o["schema"] == "olm.bundle")
            .flat_map(|o| o["properties"].as_array().into_iter().flatten())
            .filter(|p| p["type"] == "olm.package.required")
            .map(|p| &p["value"])
            .collect();
        assert_eq!(required, vec![want], "case {i}");
    }
}
