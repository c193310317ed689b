//! opm v1.73.0's own unit tests of property values, as command lines:
//! `alpha/property/property_test.go` of operator-framework/operator-registry.
//! opm decodes a bundle's properties with `property.Parse` when it turns a
//! catalog into its model (`opm validate`, `opm serve`), and deduplicates
//! them with `property.Deduplicate` when it renders a SQLite index; each
//! table case with a command-line equivalent is a catalog (or index) of
//! ours run through `olm-catalog validate` or `render`, expecting the Go
//! test's verdict. docs/opm-tests.md counts the cases and lists those left
//! out, with the reason.

use crate::common;

use serde_json::{json, Value};

/// A catalog of the package `foo` whose one bundle has the `olm.package`
/// property and then `extra` properties.
fn catalog(extra: &[Value]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let mut properties =
        vec![json!({"type": "olm.package", "value": {"packageName": "foo", "version": "0.1.0"}})];
    properties.extend_from_slice(extra);
    let objects = [
        json!({"schema": "olm.package", "name": "foo", "defaultChannel": "alpha"}),
        json!({"schema": "olm.channel", "package": "foo", "name": "alpha", "entries": [{"name": "foo.v0.1.0"}]}),
        json!({"schema": "olm.bundle", "package": "foo", "name": "foo.v0.1.0", "image": "foo-bundle:v0.1.0", "properties": properties}),
    ];
    let text: String = objects.iter().map(|o| o.to_string() + "\n").collect();
    std::fs::write(dir.path().join("catalog.json"), text).expect("write");
    dir
}

/// `validate DIR -o json`: exit code and the error messages.
fn validate(dir: &std::path::Path) -> (i32, Vec<String>) {
    let path = dir.to_str().expect("utf-8 path");
    let (code, out, err) = common::run(&["validate", path, "-o", "json"]);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("json: {out}{err}"));
    let errors = v["reports"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["findings"].as_array().into_iter().flatten())
        .filter(|f| f["level"] == "error")
        .map(|f| f["message"].as_str().unwrap_or("").to_string())
        .collect();
    (code, errors)
}

/// Each case: a name, the bundle's extra properties, and `None` when opm
/// accepts the catalog or the texts its error must contain.
type Case = (&'static str, Vec<Value>, Option<&'static [&'static str]>);

fn run_cases(cases: Vec<Case>) {
    let mut bad = Vec::new();
    for (name, extra, want) in cases {
        let dir = catalog(&extra);
        let (code, errors) = validate(dir.path());
        match want {
            None if code != 0 || !errors.is_empty() => {
                bad.push(format!("{name}: want pass, got exit {code}: {errors:#?}"))
            }
            None => {}
            Some(texts) => {
                if code != 1 {
                    bad.push(format!("{name}: want exit 1, got {code}: {errors:#?}"));
                }
                for t in texts {
                    if !errors.iter().any(|e| e.contains(t)) {
                        bad.push(format!("{name}: no error contains {t:?}: {errors:#?}"));
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn b64(data: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// TestValidate. `Property.Validate` is not called on any command path of
/// opm: what a catalog's property needs there is what `property.Parse`
/// needs, a value (any JSON for a type it does not know).
#[test]
fn property_validate() {
    run_cases(vec![
        (
            "Success/Valid",
            vec![json!({"type": "custom.type", "value": {}})],
            None,
        ),
        (
            // Go: no type and no value. On the command line a property
            // without a value fails to parse whatever its type.
            "Error/NoType",
            vec![json!({})],
            Some(&["value"]),
        ),
        (
            "Error/NoValue",
            vec![json!({"type": "custom.type"})],
            Some(&["value"]),
        ),
        (
            // Go: an empty RawMessage; a file cannot hold one, and a
            // property that leaves `value` out is the same bytes to opm.
            "Error/EmptyValue",
            vec![json!({"type": "custom.type"})],
            Some(&["value"]),
        ),
        (
            // What opm does on the command line with a property that has a
            // value and no type (Validate would refuse it, Parse keeps it as
            // a property of another type): the catalog is valid.
            "CommandLine/NoTypeWithValue",
            vec![
                json!({"value": {"a": 1}}),
                json!({"type": null, "value": [1]}),
            ],
            None,
        ),
    ]);
}

/// TestParse. Go's error cases give each type the bytes `{`, which no
/// catalog file can hold; here each gets a value of the wrong JSON type
/// (Go: `json: cannot unmarshal ...`), and "other" types, which take any
/// JSON, a missing value.
#[test]
fn property_parse() {
    let parse_error = |kind: &'static str| -> &'static [&'static str] {
        match kind {
            "olm.package" => &["parse property[1] of type \"olm.package\": cannot unmarshal string into an object"],
            "olm.package.required" => &["parse property[1] of type \"olm.package.required\": cannot unmarshal array into an object"],
            "olm.gvk" => &["parse property[1] of type \"olm.gvk\": cannot unmarshal number into an object"],
            "olm.gvk.required" => &["parse property[1] of type \"olm.gvk.required\": cannot unmarshal bool into an object"],
            _ => &["parse property[1] of type \"olm.bundle.object\": field \"data\": illegal base64 data"],
        }
    };
    run_cases(vec![
        (
            "Error/InvalidPackage",
            vec![json!({"type": "olm.package", "value": "{"})],
            Some(parse_error("olm.package")),
        ),
        (
            "Error/InvalidPackageRequired",
            vec![json!({"type": "olm.package.required", "value": ["{"]})],
            Some(parse_error("olm.package.required")),
        ),
        (
            "Error/InvalidGVK",
            vec![json!({"type": "olm.gvk", "value": 7})],
            Some(parse_error("olm.gvk")),
        ),
        (
            "Error/InvalidGVKRequired",
            vec![json!({"type": "olm.gvk.required", "value": true})],
            Some(parse_error("olm.gvk.required")),
        ),
        (
            "Error/InvalidBundleObject",
            vec![json!({"type": "olm.bundle.object", "value": {"data": "{"}})],
            Some(parse_error("olm.bundle.object")),
        ),
        (
            "Error/InvalidOther",
            vec![json!({"type": "otherType1"})],
            Some(&["value"]),
        ),
        (
            // Go's list has two olm.package properties, which Parse takes
            // and the model refuses (a bundle has exactly one); the rest is
            // Go's list.
            "Success/Valid",
            vec![
                json!({"type": "olm.package.required", "value": {"packageName": "package3", "versionRange": ">=1.0.0 <2.0.0-0"}}),
                json!({"type": "olm.package.required", "value": {"packageName": "package4", "versionRange": ">=2.0.0 <3.0.0-0"}}),
                json!({"type": "olm.gvk", "value": {"group": "group", "kind": "Kind1", "version": "v1"}}),
                json!({"type": "olm.gvk", "value": {"group": "group", "kind": "Kind2", "version": "v1"}}),
                json!({"type": "olm.gvk.required", "value": {"group": "other", "kind": "Kind3", "version": "v2"}}),
                json!({"type": "olm.gvk.required", "value": {"group": "other", "kind": "Kind4", "version": "v2"}}),
                json!({"type": "olm.bundle.object", "value": {"data": b64(b"testdata2")}}),
                json!({"type": "otherType1", "value": {"v": "otherValue1"}}),
                json!({"type": "otherType2", "value": ["otherValue2"]}),
            ],
            None,
        ),
    ]);
}

/// The Go types `property.Parse` decodes into, beyond the table of
/// TestParse: `olm.channel` (`Channel`, an int priority) and
/// `olm.csv.metadata` (`CSVMetadata`, operator-framework/api's typed
/// descriptions), where a value of the wrong type fails Go's decode.
#[test]
fn property_parse_typed_values() {
    run_cases(vec![
        (
            "Channel/PriorityNotAnInt",
            vec![json!({"type": "olm.channel", "value": {"channelName": "alpha", "priority": "1"}})],
            Some(&["field \"priority\": cannot unmarshal string into an int"]),
        ),
        (
            "Channel/PriorityFraction",
            vec![json!({"type": "olm.channel", "value": {"channelName": "alpha", "priority": 1.5}})],
            Some(&["field \"priority\": cannot unmarshal number 1.5 into an int"]),
        ),
        (
            // A whole float is an int to opm: it decodes the catalog into
            // interface{} (float64) and writes it again before Parse.
            "Channel/Valid",
            vec![json!({"type": "olm.channel", "value": {"channelName": "alpha", "priority": 2.0}})],
            None,
        ),
        (
            "CSVMetadata/KeywordsNotAList",
            vec![json!({"type": "olm.csv.metadata", "value": {"keywords": "database"}})],
            Some(&["field \"keywords\": cannot unmarshal string into a []string"]),
        ),
        (
            "CSVMetadata/InstallModeSupportedNotABool",
            vec![json!({"type": "olm.csv.metadata", "value": {"installModes": [{"type": "OwnNamespace", "supported": "true"}]}})],
            Some(&["field \"installModes.supported\": cannot unmarshal string into a bool"]),
        ),
        (
            "CSVMetadata/ContainerPortPastInt32",
            vec![json!({"type": "olm.csv.metadata", "value": {"apiServiceDefinitions": {"owned": [{"name": "a", "containerPort": 4294967296u64}]}}})],
            Some(&["field \"apiServiceDefinitions.owned.containerPort\": cannot unmarshal number 4294967296 into an int32"]),
        ),
        (
            "CSVMetadata/Valid",
            vec![json!({"type": "olm.csv.metadata", "value": {
                "annotations": {"capabilities": "Basic Install"},
                "crdDescriptions": {"owned": [{"name": "foos.x.io", "version": "v1", "kind": "Foo",
                    "specDescriptors": [{"path": "size", "x-descriptors": ["urn:alm:descriptor:com.tectonic.ui:podCount"], "value": {"any": [1]}}]}]},
                "installModes": [{"type": "OwnNamespace", "supported": true}],
                "keywords": ["database"],
                "maintainers": [{"name": "me", "email": "me@example.com"}],
                "provider": {"name": "me"},
                "unknownField": 5,
            }})],
            None,
        ),
    ]);
}

/// TestDeduplicate (`Identical`): rendering a SQLite index goes through
/// opm's model and `ConvertFromModel`, which keeps one of each identical
/// property. The index here is ours with the properties of one bundle
/// written twice more, as an index of another writer might hold them.
#[test]
fn property_deduplicate() {
    let t = tempfile::tempdir().expect("tmp");
    let db = t.path().join("index.db");
    let db_arg = db.to_str().expect("utf-8");
    let pkg = common::corpus().join("operators/etcd");
    let (code, _, err) = common::run(&["index", "add", "-d", db_arg, pkg.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{err}");
    let (code, clean, err) = common::run(&["render", db_arg]);
    assert_eq!(code, 0, "{err}");
    {
        let conn = rusqlite::Connection::open(&db).expect("open");
        let copied = conn
            .execute(
                "INSERT INTO properties SELECT * FROM properties WHERE operatorbundle_name = 'etcdoperator.v0.9.4'",
                [],
            )
            .expect("duplicate");
        assert!(copied >= 4, "{copied} properties copied");
        conn.execute(
            "INSERT INTO properties SELECT * FROM properties WHERE operatorbundle_name = 'etcdoperator.v0.9.4' AND type = 'olm.gvk'",
            [],
        )
        .expect("duplicate gvks");
    }
    let (code, doubled, err) = common::run(&["render", db_arg]);
    assert_eq!(code, 0, "{err}");
    assert!(
        doubled == clean,
        "render changed with duplicated property rows"
    );
}

/// TestBuild's `Success/Package-Release*` cases, as `render` of a bundle
/// directory shows them: opm builds the `olm.package` property from its Go
/// struct (`MustBuildPackageRelease`), so JSON output has `packageName`,
/// `version`, then `release`; YAML output, which opm makes through
/// sigs.k8s.io/yaml, has the keys sorted.
#[test]
fn property_build_package_release() {
    for release in ["1", "gamma", "gamma1"] {
        let t = tempfile::tempdir().expect("tmp");
        let dir = t.path().join("bundle");
        common::copy_dir(&common::corpus().join("operators/etcd/0.9.4"), &dir);
        let csv = dir.join("manifests/etcdoperator.v0.9.4.clusterserviceversion.yaml");
        let text = std::fs::read_to_string(&csv).expect("csv");
        let text = text.replacen(
            "\nspec:\n",
            &format!("\nspec:\n  release: {release:?}\n"),
            1,
        );
        std::fs::write(&csv, text).expect("write");
        let path = dir.to_str().expect("utf-8");
        let (code, json_out, err) = common::run(&["render", path]);
        assert_eq!(code, 0, "{err}");
        let want = format!(
            "\"type\": \"olm.package\",\n            \"value\": {{\n                \"packageName\": \"etcd\",\n                \"version\": \"0.9.4\",\n                \"release\": {release:?}\n            }}"
        );
        assert!(json_out.contains(&want), "release {release}: {json_out}");
        let (code, yaml_out, err) = common::run(&["render", path, "-o", "yaml"]);
        assert_eq!(code, 0, "{err}");
        assert!(
            yaml_out.contains(&format!(
                "packageName: etcd\n    release: {release:?}\n    version: 0.9.4\n"
            )) || yaml_out.contains(&format!(
                "packageName: etcd\n    release: {release}\n    version: 0.9.4\n"
            )),
            "release {release}: {yaml_out}"
        );
    }
}

/// The `bundle-object-to-csv-metadata` migration builds `olm.csv.metadata`
/// from opm's `CSVMetadata` struct (`MustBuildCSVMetadata`): JSON output
/// keeps the Go field order of the nested descriptions (`name`, `version`,
/// `kind`, ... of a CRD description; `type`, `supported` of an install
/// mode), and a catalog read back from that output has them sorted again.
#[test]
fn csv_metadata_is_written_in_go_struct_order() {
    use base64::Engine as _;
    let csv = json!({
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": "foo.v0.1.0"},
        "spec": {
            "version": "0.1.0",
            "installModes": [{"type": "OwnNamespace", "supported": true}],
            "maintainers": [{"name": "me", "email": "me@example.com"}],
            "customresourcedefinitions": {"owned": [{"name": "foos.x.io", "version": "v1", "kind": "Foo", "displayName": "Foo", "description": "d"}]},
        },
    });
    let data = base64::engine::general_purpose::STANDARD.encode(csv.to_string());
    let dir = catalog(&[json!({"type": "olm.bundle.object", "value": {"data": data}})]);
    let path = dir.path().to_str().expect("utf-8");
    let (code, out, err) = common::run(&[
        "render",
        path,
        "--migrate-level",
        "bundle-object-to-csv-metadata",
    ]);
    assert_eq!(code, 0, "{err}");
    let squeezed: String = out.split_whitespace().collect();
    for want in [
        r#"{"name":"foos.x.io","version":"v1","kind":"Foo","displayName":"Foo","description":"d"}"#,
        r#"{"type":"OwnNamespace","supported":true}"#,
        r#"{"name":"me","email":"me@example.com"}"#,
    ] {
        assert!(squeezed.contains(want), "{want}: {out}");
    }
    // Read back, the catalog's keys are sorted, as opm's loader sorts them.
    let again = tempfile::tempdir().expect("tmp");
    std::fs::write(again.path().join("catalog.json"), &out).expect("write");
    let (code, out, err) = common::run(&["render", again.path().to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{err}");
    let squeezed: String = out.split_whitespace().collect();
    assert!(
        squeezed.contains(r#"{"description":"d","displayName":"Foo","kind":"Foo","name":"foos.x.io","version":"v1"}"#),
        "{out}"
    );
}
