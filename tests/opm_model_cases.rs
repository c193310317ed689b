//! opm v1.73.0's own unit tests of catalog loading and model validation,
//! as command lines: `alpha/declcfg/declcfg_to_model_test.go`,
//! `alpha/model/model_test.go` and `alpha/declcfg/load_test.go` of
//! operator-framework/operator-registry. Each table case with a
//! command-line equivalent is a catalog written here (our fixtures, shaped
//! after the Go test's) and `olm-catalog validate` (model cases) or
//! `olm-catalog render` (load cases) run on it, expecting the Go test's
//! verdict and an error naming the same problem. docs/opm-tests.md counts
//! them and lists the cases left out, with the reason.

use crate::common;

use serde_json::{json, Value};

/// Where a case's catalog is written.
struct Catalog {
    dir: tempfile::TempDir,
}

impl Catalog {
    /// A catalog of one file, `catalog.json`, holding `objects`.
    fn of(objects: &[Value]) -> Catalog {
        let c = Catalog::files(&[]);
        let text: String = objects
            .iter()
            .map(|o| serde_json::to_string_pretty(o).expect("json") + "\n")
            .collect();
        std::fs::write(c.dir.path().join("catalog.json"), text).expect("write");
        c
    }

    /// A catalog of the given files (name, text).
    fn files(files: &[(&str, &str)]) -> Catalog {
        let dir = tempfile::tempdir().expect("tmp");
        for (name, text) in files {
            let p = dir.path().join(name);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent).expect("mkdir");
            }
            std::fs::write(p, text).expect("write");
        }
        Catalog { dir }
    }

    fn path(&self) -> &str {
        self.dir.path().to_str().expect("utf-8 path")
    }
}

/// `validate DIR -o json` (plus `extra` flags): exit code, the error
/// messages and the warning messages.
fn validate(c: &Catalog, extra: &[&str]) -> (i32, Vec<String>, Vec<String>) {
    let mut args = vec!["validate", c.path(), "-o", "json"];
    args.extend_from_slice(extra);
    let (code, out, err) = common::run(&args);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("json: {out}{err}"));
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let findings = v["reports"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["findings"].as_array().into_iter().flatten());
    for f in findings {
        let msg = f["message"].as_str().unwrap_or("").to_string();
        match f["level"].as_str() {
            Some("error") => errors.push(msg),
            Some("warning") => warnings.push(msg),
            _ => {}
        }
    }
    (code, errors, warnings)
}

/// What a case expects: opm accepts the catalog, or refuses it with an
/// error containing each of the texts.
enum Want {
    Pass,
    Fail(&'static [&'static str]),
}

/// Runs each case; every mismatch is reported at once.
fn run_cases(cases: Vec<(&str, Vec<Value>, Want)>) {
    let mut bad = Vec::new();
    for (name, objects, want) in cases {
        let c = Catalog::of(&objects);
        let (code, errors, _) = validate(&c, &[]);
        match want {
            Want::Pass if code != 0 || !errors.is_empty() => {
                bad.push(format!("{name}: want pass, got exit {code}: {errors:#?}"))
            }
            Want::Fail(texts) => {
                if code != 1 {
                    bad.push(format!("{name}: want exit 1, got {code}: {errors:#?}"));
                }
                for t in texts {
                    if !errors.iter().any(|e| e.contains(t)) {
                        bad.push(format!("{name}: no error contains {t:?}: {errors:#?}"));
                    }
                }
            }
            Want::Pass => {}
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

// The helpers of opm's declcfg helpers_test.go, as FBC objects.

const SVG_SMALL_CIRCLE: &str =
    "<svg viewBox=\"0 0 10 10\"><circle cx=\"5\" cy=\"5\" r=\"2\"/></svg>";

fn b64(data: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// `newTestPackage`: a package with an SVG icon.
fn package(name: &str, default_channel: &str) -> Value {
    json!({
        "schema": "olm.package",
        "name": name,
        "defaultChannel": default_channel,
        "icon": {"base64data": b64(SVG_SMALL_CIRCLE.as_bytes()), "mediatype": "image/svg+xml"},
        "description": format!("{name} operator"),
    })
}

/// `newTestChannel`.
fn channel(package: &str, name: &str, entries: Value) -> Value {
    json!({"schema": "olm.channel", "name": name, "package": package, "entries": entries})
}

fn package_property(package: &str, version: &str) -> Value {
    json!({"type": "olm.package", "value": {"packageName": package, "version": version}})
}

fn release_property(package: &str, version: &str, release: &str) -> Value {
    json!({"type": "olm.package", "value": {"packageName": package, "version": version, "release": release}})
}

fn bundle_object(data: &str) -> Value {
    json!({"type": "olm.bundle.object", "value": {"data": b64(data.as_bytes())}})
}

/// `newTestBundle`: `<pkg>.v<version>`, image `<pkg>-bundle:v<version>`, an
/// `olm.package` property and two `olm.bundle.object`s (a CSV and a CRD),
/// the bundle image as a related image.
fn bundle(package: &str, version: &str) -> Value {
    let name = format!("{package}.v{version}");
    let image = format!("{package}-bundle:v{version}");
    let csv = format!(
        "{{\"kind\": \"ClusterServiceVersion\", \"apiVersion\": \"operators.coreos.com/v1alpha1\", \"metadata\":{{\"name\":{name:?}}}}}"
    );
    json!({
        "schema": "olm.bundle",
        "name": name,
        "package": package,
        "image": image,
        "properties": [
            package_property(package, version),
            bundle_object(&csv),
            bundle_object("{\"kind\": \"CustomResourceDefinition\", \"apiVersion\": \"apiextensions.k8s.io/v1\"}"),
        ],
        "relatedImages": [{"name": "bundle", "image": image}],
    })
}

/// A bundle changed by `f`.
fn with(mut b: Value, f: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Value {
    if let Some(m) = b.as_object_mut() {
        f(m);
    }
    b
}

/// The package `foo` with channel `alpha` holding `foo.v0.1.0`: most cases
/// of TestConvertToModel start from it.
fn foo(bundle: Value) -> Vec<Value> {
    vec![
        package("foo", "alpha"),
        channel("foo", "alpha", json!([{"name": "foo.v0.1.0"}])),
        bundle,
    ]
}

fn owner_package() -> Value {
    with(package("foo", "alpha"), |m| {
        m.insert(
            "properties".into(),
            json!([{"type": "owner", "value": {"group": "abc.com", "name": "admin"}}]),
        );
    })
}

fn deprecation(package: &str, entries: Value) -> Value {
    json!({"schema": "olm.deprecations", "package": package, "entries": entries})
}

/// `foo` with package properties and the given deprecations (the
/// Error/Deprecation/* cases).
fn foo_deprecated(deprecations: Vec<Value>) -> Vec<Value> {
    let mut objects = vec![
        owner_package(),
        channel("foo", "alpha", json!([{"name": "foo.v0.1.0"}])),
        bundle("foo", "0.1.0"),
    ];
    objects.extend(deprecations);
    objects
}

const SHA: &str = "abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234";

/// alpha/declcfg/declcfg_to_model_test.go, TestConvertToModel.
#[test]
fn declcfg_to_model_convert_to_model() {
    use Want::*;
    let image = |img: String| {
        move |m: &mut serde_json::Map<String, Value>| {
            m.insert("image".into(), json!(img));
        }
    };
    let props = |p: Value| {
        move |m: &mut serde_json::Map<String, Value>| {
            m.insert("properties".into(), p);
        }
    };
    let cases: Vec<(&str, Vec<Value>, Want)> = vec![
        (
            "Error/PackageNoName",
            vec![
                package("", "alpha"),
                json!({"schema": "olm.bundle", "name": "foo.v0.1.0"}),
            ],
            Fail(&["config contains package with no name"]),
        ),
        (
            "Error/BundleMissingPackageName",
            vec![
                package("foo", "alpha"),
                json!({"schema": "olm.bundle", "name": "foo.v0.1.0"}),
            ],
            Fail(&["package name must be set for bundle \"foo.v0.1.0\""]),
        ),
        (
            "Error/BundleUnknownPackage",
            vec![package("foo", "alpha"), bundle("bar", "0.1.0")],
            Fail(&["unknown package \"bar\" for bundle \"bar.v0.1.0\""]),
        ),
        (
            "Error/BundleMissingChannel",
            vec![package("foo", "alpha"), bundle("foo", "0.1.0")],
            Fail(&["package \"foo\", bundle \"foo.v0.1.0\" not found in any channel entries"]),
        ),
        (
            // Go's case gives a property the bytes `{`; in a file the
            // nearest is a property without a value (Go: no bytes, the
            // same "unexpected end of JSON input").
            "Error/BundleInvalidProperties",
            foo(with(bundle("foo", "0.1.0"), |m| {
                if let Some(Value::Array(p)) = m.get_mut("properties") {
                    p.push(json!({"type": "olm.foo"}));
                }
            })),
            Fail(&["missing field `value`"]),
        ),
        (
            "Error/BundlePackageMismatch",
            foo(with(
                bundle("foo", "0.1.0"),
                props(json!([package_property("foooperator", "0.1.0")])),
            )),
            Fail(&["package \"foo\" does not match \"olm.package\" property \"foooperator\""]),
        ),
        (
            "Error/BundleInvalidVersion",
            foo(with(
                bundle("foo", "0.1.0"),
                props(json!([package_property("foo", "0.1.0.1")])),
            )),
            Fail(&["error parsing bundle \"foo.v0.1.0\" version \"0.1.0.1\""]),
        ),
        (
            "Error/BundleMissingVersion",
            vec![package("foo", "alpha"), bundle("foo", "")],
            Fail(&["error parsing bundle \"foo.v\" version \"\": Version string empty"]),
        ),
        (
            "Error/PackageMissingDefaultChannel",
            vec![
                package("foo", ""),
                channel("foo", "bar", json!([{"name": "foo.v0.1.0"}])),
                bundle("foo", "0.1.0"),
            ],
            Fail(&["invalid package \"foo\"", "default channel must be set"]),
        ),
        (
            "Error/PackageNonExistentDefaultChannel",
            vec![package("foo", "bar"), channel("foo", "bar", json!([]))],
            Fail(&["invalid channel \"bar\"", "channel must contain at least one bundle"]),
        ),
        (
            "Error/BundleMissingPackageProperty",
            foo(with(bundle("foo", "0.1.0"), props(json!([])))),
            Fail(&["package \"foo\" bundle \"foo.v0.1.0\" must have exactly 1 \"olm.package\" property, found 0"]),
        ),
        (
            "Error/BundleMultiplePackageProperty",
            foo(with(
                bundle("foo", "0.1.0"),
                props(json!([
                    package_property("foo", "0.1.0"),
                    package_property("foo", "0.1.0")
                ])),
            )),
            Fail(&["package \"foo\" bundle \"foo.v0.1.0\" must have exactly 1 \"olm.package\" property, found 2"]),
        ),
        (
            "Success/BundleWithDataButMissingImage",
            foo(with(bundle("foo", "0.1.0"), image(String::new()))),
            Pass,
        ),
        (
            "Error/ChannelEntryWithoutBundle",
            vec![
                package("foo", "alpha"),
                channel("foo", "alpha", json!([{"name": "foo.v0.1.0"}])),
            ],
            Fail(&["no olm.bundle blobs found in package \"foo\" for olm.channel entries [foo.v0.1.0]"]),
        ),
        (
            "Error/BundleWithoutChannelEntry",
            vec![
                package("foo", "alpha"),
                channel("foo", "alpha", json!([{"name": "foo.v0.1.0"}])),
                bundle("foo", "0.2.0"),
            ],
            Fail(&["package \"foo\", bundle \"foo.v0.2.0\" not found in any channel entries"]),
        ),
        (
            "Error/ChannelMissingName",
            vec![
                package("foo", "alpha"),
                channel("foo", "", json!([{"name": "foo.v0.1.0"}])),
                bundle("foo", "0.2.0"),
            ],
            Fail(&["package \"foo\" contains channel with no name"]),
        ),
        (
            "Error/ChannelMissingPackageName",
            vec![
                package("foo", "alpha"),
                channel("", "alpha", json!([{"name": "foo.v0.1.0"}])),
                bundle("foo", "0.2.0"),
            ],
            Fail(&["unknown package \"\" for channel \"alpha\""]),
        ),
        (
            "Error/ChannelNonExistentPackage",
            vec![
                package("foo", "alpha"),
                channel("non-existent", "alpha", json!([{"name": "foo.v0.1.0"}])),
                bundle("foo", "0.1.0"),
            ],
            Fail(&["unknown package \"non-existent\" for channel \"alpha\""]),
        ),
        (
            "Error/ChannelDuplicateEntry",
            vec![
                package("foo", "alpha"),
                channel(
                    "foo",
                    "alpha",
                    json!([{"name": "foo.v0.1.0"}, {"name": "foo.v0.1.0"}]),
                ),
                bundle("foo", "0.1.0"),
            ],
            Fail(&["invalid package \"foo\", channel \"alpha\": duplicate entry \"foo.v0.1.0\""]),
        ),
        (
            "Error/DuplicatePackage",
            vec![
                package("foo", "alpha"),
                package("foo", "alpha"),
                channel("foo", "alpha", json!([{"name": "foo.v0.1.0"}])),
                bundle("foo", "0.1.0"),
            ],
            Fail(&["duplicate package \"foo\""]),
        ),
        (
            "Error/PackageBreaksRFC1123",
            vec![
                package("foo.bar", "alpha"),
                channel("foo", "alpha", json!([{"name": "foo.v0.1.0"}])),
                bundle("foo", "0.1.0"),
            ],
            Fail(&["invalid package name \"foo.bar\": [must not contain dots]"]),
        ),
        (
            "Error/DuplicateChannel",
            vec![
                package("foo", "alpha"),
                channel("foo", "alpha", json!([{"name": "foo.v0.1.0"}])),
                channel("foo", "alpha", json!([{"name": "foo.v0.1.0"}])),
                bundle("foo", "0.1.0"),
            ],
            Fail(&["package \"foo\" has duplicate channel \"alpha\""]),
        ),
        (
            "Error/DuplicateBundle",
            vec![
                package("foo", "alpha"),
                channel("foo", "alpha", json!([{"name": "foo.v0.1.0"}])),
                bundle("foo", "0.1.0"),
                bundle("foo", "0.1.0"),
            ],
            Fail(&["package \"foo\" has duplicate bundle \"foo.v0.1.0\""]),
        ),
        ("Success/ValidModel", foo(bundle("foo", "0.1.0")), Pass),
        (
            "Success/ValidModelWithChannelProperties",
            vec![
                package("foo", "alpha"),
                with(
                    channel("foo", "alpha", json!([{"name": "foo.v0.1.0"}])),
                    |m| {
                        m.insert(
                            "properties".into(),
                            json!([{"type": "user", "value": {"group": "xyz.com", "name": "account"}}]),
                        );
                    },
                ),
                bundle("foo", "0.1.0"),
            ],
            Pass,
        ),
        (
            "Success/ValidModelWithPackageProperties",
            foo_deprecated(vec![]),
            Pass,
        ),
        (
            "Error/Deprecation/UnspecifiedPackage",
            foo_deprecated(vec![json!({"schema": "olm.deprecations"})]),
            Fail(&["package name must be set for deprecation item 0"]),
        ),
        (
            "Error/Deprecation/OutOfBoundsBundle",
            foo_deprecated(vec![deprecation(
                "foo",
                json!([{"reference": {"schema": "olm.bundle", "name": "foo.v2.0.0"}, "message": "foo.v2.0.0 doesn't exist in the first place"}]),
            )]),
            Fail(&["cannot deprecate bundle \"foo.v2.0.0\" for package \"foo\": bundle not found"]),
        ),
        (
            "Error/Deprecation/OutOfBoundsPackage",
            foo_deprecated(vec![json!({"schema": "olm.deprecations", "package": "nyarl"})]),
            Fail(&["cannot apply deprecations to an unknown package \"nyarl\""]),
        ),
        (
            "Error/Deprecation/MultiplePerPackage",
            foo_deprecated(vec![
                deprecation(
                    "foo",
                    json!([{"reference": {"schema": "olm.channel", "name": "alpha"}, "message": "no more alpha channel"}]),
                ),
                deprecation(
                    "foo",
                    json!([{"reference": {"schema": "olm.bundle", "name": "foo.v0.1.0"}, "message": "foo.v0.1.0 is dead.  do another thing"}]),
                ),
            ]),
            Fail(&["expected a maximum of one deprecation per package: \"foo\""]),
        ),
        (
            "Error/Deprecation/BadRefSchema",
            foo_deprecated(vec![deprecation(
                "foo",
                json!([{"reference": {"schema": "badschema", "name": "foo.v2.0.0"}, "message": "foo.v2.0.0 doesn't exist in the first place"}]),
            )]),
            Fail(&[
                "cannot deprecate object",
                "\"badschema\"",
                "referenced by entry 0 for package \"foo\": object schema unknown",
            ]),
        ),
        (
            "Error/Deprecation/DuplicateRef",
            foo_deprecated(vec![deprecation(
                "foo",
                json!([
                    {"reference": {"schema": "olm.bundle", "name": "foo.v0.1.0"}, "message": "foo.v0.1.0 is bad"},
                    {"reference": {"schema": "olm.bundle", "name": "foo.v0.1.0"}, "message": "foo.v0.1.0 is bad"}
                ]),
            )]),
            Fail(&["duplicate deprecation entry", "\"foo.v0.1.0\"", "for package \"foo\""]),
        ),
        (
            "Error/InvalidReleaseVersion",
            foo(with(
                bundle("foo", "0.1.0"),
                props(json!([release_property("foo", "0.1.0", "!!!")])),
            )),
            Fail(&["error parsing bundle \"foo.v0.1.0\" release version \"!!!\": invalid release \"!!!\": segment 0: Invalid character(s) found in prerelease \"!!!\""]),
        ),
        (
            "Error/InvalidBundleNormalizedName",
            vec![
                package("foo", "alpha"),
                channel("foo", "alpha", json!([{"name": "foo.v0.1.0-alpha.1.0.0"}])),
                with(bundle("foo", "0.1.0"), |m| {
                    m.insert(
                        "properties".into(),
                        json!([release_property("foo", "0.1.0", "alpha.1.0.0")]),
                    );
                    m.insert("name".into(), json!("foo.v0.1.0-alpha.1.0.0"));
                }),
            ],
            Fail(&["invalid bundle \"foo.v0.1.0-alpha.1.0.0\"", "name \"foo.v0.1.0-alpha.1.0.0\" does not match normalized name \"foo-v0.1.0-alpha.1.0.0\""]),
        ),
        (
            "Success/ValidBundleReleaseVersion",
            vec![
                package("foo", "alpha"),
                channel("foo", "alpha", json!([{"name": "foo-v0.1.0-alpha.1.0.0"}])),
                with(bundle("foo", "0.1.0"), |m| {
                    m.insert(
                        "properties".into(),
                        json!([release_property("foo", "0.1.0", "alpha.1.0.0")]),
                    );
                    m.insert("name".into(), json!("foo-v0.1.0-alpha.1.0.0"));
                }),
            ],
            Pass,
        ),
        (
            "Error/BundleReleaseWithBuildMetadata",
            vec![
                package("foo", "alpha"),
                channel("foo", "alpha", json!([{"name": "foo.v0.1.0+alpha.1.0.0-0.0.1"}])),
                with(bundle("foo", "0.1.0"), |m| {
                    m.insert(
                        "properties".into(),
                        json!([release_property("foo", "0.1.0+alpha.1.0.0", "0.0.1")]),
                    );
                    m.insert("name".into(), json!("foo.v0.1.0+alpha.1.0.0-0.0.1"));
                }),
            ],
            Fail(&[
                "name \"foo.v0.1.0+alpha.1.0.0-0.0.1\" does not match normalized name \"foo-v0.1.0+alpha.1.0.0-0.0.1\"",
                "cannot use build metadata in version with a release version",
            ]),
        ),
        (
            "Error/BundleImageInvalidPullSpecUnsupportedDigestSsha256",
            foo(with(
                bundle("foo", "0.1.0"),
                image(format!(
                    "quay.io/operator-framework/foo-bundle@ssha256:{SHA}abcd1234"
                )),
            )),
            Fail(&["invalid image pull spec", "unsupported digest algorithm"]),
        ),
        (
            "Error/BundleImageInvalidPullSpecUnsupportedDigestMd5",
            foo(with(
                bundle("foo", "0.1.0"),
                image(
                    "quay.io/operator-framework/foo-bundle@md5:abcd1234abcd1234abcd1234abcd1234"
                        .into(),
                ),
            )),
            Fail(&["invalid image pull spec", "unsupported digest algorithm"]),
        ),
        (
            "Error/BundleRelatedImageInvalidPullSpecSsha256",
            foo(with(bundle("foo", "0.1.0"), |m| {
                m.insert(
                    "relatedImages".into(),
                    json!([
                        {"name": "bundle", "image": "foo-bundle:v0.1.0"},
                        {"name": "operator", "image": format!("quay.io/operator-framework/my-operator@ssha256:{SHA}abcd1234")}
                    ]),
                );
            })),
            Fail(&["relatedImages[1].image: invalid image pull spec"]),
        ),
        (
            "Success/BundleImageValidSha256Digest",
            foo(with(bundle("foo", "0.1.0"), |m| {
                let img = format!("quay.io/operator-framework/foo-bundle@sha256:{SHA}");
                m.insert("image".into(), json!(img));
                m.insert(
                    "relatedImages".into(),
                    json!([{"name": "bundle", "image": img}]),
                );
            })),
            Pass,
        ),
        (
            "Success/BundleImageValidTagWithDigest",
            foo(with(bundle("foo", "0.1.0"), |m| {
                let img = format!("quay.io/operator-framework/foo-bundle:v0.1.0@sha256:{SHA}");
                m.insert("image".into(), json!(img));
                m.insert(
                    "relatedImages".into(),
                    json!([{"name": "bundle", "image": img}]),
                );
            })),
            Pass,
        ),
    ];
    assert_eq!(cases.len(), 41);
    run_cases(cases);
}

// alpha/model/model_test.go: the package `anakin` of makePackageChannelBundle.

/// A bundle of `anakin` named `name`, at `version`, with image
/// `anakin-operator:v<version>` and a GVK property.
fn anakin(name: &str, version: &str) -> Value {
    json!({
        "schema": "olm.bundle",
        "name": name,
        "package": "anakin",
        "image": format!("anakin-operator:v{version}"),
        "properties": [
            package_property("anakin", version),
            {"type": "olm.gvk", "value": {"group": "skywalker.me", "kind": "PodRacer", "version": "v1alpha1"}}
        ],
    })
}

/// The package `anakin` (default channel `light`) with channel `light` of
/// `entries` and the given bundles.
fn anakin_catalog(entries: Value, bundles: Vec<Value>) -> Vec<Value> {
    let mut objects = vec![
        json!({"schema": "olm.package", "name": "anakin", "defaultChannel": "light"}),
        channel("anakin", "light", entries),
    ];
    objects.extend(bundles);
    objects
}

/// `makePackageChannelBundle`: light = anakin.v0.0.1 <- anakin.v0.0.2.
fn anakin_valid() -> Vec<Value> {
    anakin_catalog(
        json!([{"name": "anakin.v0.0.1"}, {"name": "anakin.v0.0.2", "replaces": "anakin.v0.0.1"}]),
        vec![
            anakin("anakin.v0.0.1", "0.0.1"),
            anakin("anakin.v0.0.2", "0.0.2"),
        ],
    )
}

/// The channel `light` of `entries`, each entry's bundle generated (names
/// `anakin.v<version>`).
fn anakin_channel(entries: Value) -> Vec<Value> {
    let bundles = entries
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["name"].as_str())
        .map(|n| anakin(n, n.trim_start_matches("anakin.v")))
        .collect();
    anakin_catalog(entries, bundles)
}

/// A bundle of `anakin` at the head of `light` (replacing anakin.v0.0.2)
/// changed by `f`: the Bundle/* cases check one bundle.
fn anakin_head(f: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Vec<Value> {
    let mut objects = anakin_valid();
    if let Some(Value::Array(entries)) = objects[1].get_mut("entries") {
        entries.push(json!({"name": "anakin.v0.1.0", "replaces": "anakin.v0.0.2"}));
    }
    objects.push(with(anakin("anakin.v0.1.0", "0.1.0"), f));
    objects
}

/// alpha/model/model_test.go: TestChannelHead, TestValidReplacesChain and
/// TestValidators, each case as a catalog whose model has that problem.
#[test]
fn model_channel_head_replaces_chain_and_validators() {
    use Want::*;
    let entry_of = |m: &mut serde_json::Map<String, Value>, key: &str, v: Value| {
        m.insert(key.into(), v);
    };
    let cases: Vec<(&str, Vec<Value>, Want)> = vec![
        // TestChannelHead
        (
            "ChannelHead/Success/Valid",
            anakin_channel(json!([
                {"name": "anakin.v0.0.1"},
                {"name": "anakin.v0.0.2"},
                {"name": "anakin.v0.0.3", "replaces": "anakin.v0.0.1", "skips": ["anakin.v0.0.2"]}
            ])),
            Pass,
        ),
        (
            "ChannelHead/Error/NoChannelHead",
            anakin_channel(json!([
                {"name": "anakin.v0.0.1", "replaces": "anakin.v0.0.3"},
                {"name": "anakin.v0.0.3", "replaces": "anakin.v0.0.1", "skips": ["anakin.v0.0.2"]}
            ])),
            Fail(&["no channel head found in graph"]),
        ),
        (
            "ChannelHead/Error/MultipleChannelHeads",
            anakin_channel(json!([
                {"name": "anakin.v0.0.1"},
                {"name": "anakin.v0.0.3", "replaces": "anakin.v0.0.1", "skips": ["anakin.v0.0.2"]},
                {"name": "anakin.v0.0.4", "replaces": "anakin.v0.0.1"}
            ])),
            Fail(&["multiple channel heads found in graph: anakin.v0.0.3, anakin.v0.0.4"]),
        ),
        // TestValidReplacesChain
        (
            "ReplacesChain/Success/Valid",
            anakin_channel(json!([
                {"name": "anakin.v0.0.1"},
                {"name": "anakin.v0.0.2", "skips": ["anakin.v0.0.1"]},
                {"name": "anakin.v0.0.3", "skips": ["anakin.v0.0.2"]},
                {"name": "anakin.v0.0.4", "replaces": "anakin.v0.0.3"}
            ])),
            Pass,
        ),
        (
            "ReplacesChain/Error/CycleNoHops",
            anakin_channel(json!([
                {"name": "anakin.v0.0.4", "replaces": "anakin.v0.0.4"},
                {"name": "anakin.v0.0.5", "replaces": "anakin.v0.0.4"}
            ])),
            Fail(&["detected cycle in replaces chain of upgrade graph: anakin.v0.0.4 -> anakin.v0.0.4"]),
        ),
        (
            "ReplacesChain/Error/CycleMultipleHops",
            anakin_channel(json!([
                {"name": "anakin.v0.0.1", "replaces": "anakin.v0.0.3"},
                {"name": "anakin.v0.0.2", "replaces": "anakin.v0.0.1"},
                {"name": "anakin.v0.0.3", "replaces": "anakin.v0.0.2"},
                {"name": "anakin.v0.0.4", "replaces": "anakin.v0.0.3"}
            ])),
            Fail(&["detected cycle in replaces chain of upgrade graph: anakin.v0.0.3 -> anakin.v0.0.2 -> anakin.v0.0.1 -> anakin.v0.0.3"]),
        ),
        (
            "ReplacesChain/Error/Stranded",
            anakin_channel(json!([
                {"name": "anakin.v0.0.1"},
                {"name": "anakin.v0.0.2", "replaces": "anakin.v0.0.1"},
                {"name": "anakin.v0.0.3", "skips": ["anakin.v0.0.2"]}
            ])),
            Fail(&["channel contains one or more stranded bundles: anakin.v0.0.1"]),
        ),
        (
            "ReplacesChain/Error/SkippedReplacesStranded",
            anakin_channel(json!([
                {"name": "anakin.v0.0.1"},
                {"name": "anakin.v0.0.2", "replaces": "anakin.v0.0.1"},
                {"name": "anakin.v0.0.3", "replaces": "anakin.v0.0.2", "skips": ["anakin.v0.0.2"]}
            ])),
            Fail(&["channel contains one or more stranded bundles: anakin.v0.0.1"]),
        ),
        // TestValidators
        ("Model/Success/Valid", anakin_valid(), Pass),
        (
            "Model/Error/InvalidPackage",
            {
                let mut o = anakin_valid();
                o[0]["defaultChannel"] = json!("not-found");
                o
            },
            Fail(&["invalid package \"anakin\""]),
        ),
        ("Package/Success/Valid", anakin_valid(), Pass),
        (
            "Package/Error/NoName",
            {
                let mut o = anakin_valid();
                o[0]["name"] = json!("");
                o
            },
            Fail(&["config contains package with no name"]),
        ),
        (
            "Package/Error/NoChannels",
            vec![json!({"schema": "olm.package", "name": "anakin",
                "icon": {"base64data": b64(SVG_SMALL_CIRCLE.as_bytes()), "mediatype": "image/svg+xml"}})],
            Fail(&["package must contain at least one channel"]),
        ),
        (
            "Package/Error/DuplicateBundleVersions",
            anakin_catalog(
                json!([
                    {"name": "anakin.v0.0.1"},
                    {"name": "anakin.v0.0.2", "replaces": "anakin.v0.0.1"},
                    {"name": "anakin.v1.0.1", "replaces": "anakin.v0.0.2"},
                    {"name": "anakin.v1.0.2", "replaces": "anakin.v1.0.1"}
                ]),
                vec![
                    anakin("anakin.v0.0.1", "0.0.1"),
                    anakin("anakin.v0.0.2", "0.0.1"),
                    anakin("anakin.v1.0.1", "1.0.1"),
                    anakin("anakin.v1.0.2", "1.0.1"),
                ],
            ),
            Fail(&["duplicate versions found in bundles: [{0.0.1: [anakin.v0.0.1, anakin.v0.0.2]} {1.0.1: [anakin.v1.0.1, anakin.v1.0.2]}]"]),
        ),
        (
            "Package/Error/DuplicateBundleVersionsReleases",
            anakin_catalog(
                json!([
                    {"name": "anakin.v0.0.1"},
                    {"name": "anakin.v0.0.2", "replaces": "anakin.v0.0.1"},
                    {"name": "anakin-v0.0.1-100", "replaces": "anakin.v0.0.2"},
                    {"name": "anakin.v0.0.2-100", "replaces": "anakin-v0.0.1-100"}
                ]),
                vec![
                    anakin("anakin.v0.0.1", "0.0.1"),
                    anakin("anakin.v0.0.2", "0.0.1"),
                    with(anakin("anakin-v0.0.1-100", "0.0.1"), |m| {
                        m.insert("properties".into(), json!([release_property("anakin", "0.0.1", "100")]));
                    }),
                    with(anakin("anakin.v0.0.2-100", "0.0.1"), |m| {
                        m.insert("properties".into(), json!([release_property("anakin", "0.0.1", "100")]));
                    }),
                ],
            ),
            Fail(&["duplicate versions found in bundles: [{0.0.1: [anakin.v0.0.1, anakin.v0.0.2]} {0.0.1-100: [anakin-v0.0.1-100, anakin.v0.0.2-100]}]"]),
        ),
        (
            "Package/Error/BundleReleaseNormalizedName",
            anakin_catalog(
                json!([{"name": "anakin.v0.0.1.alpha1"}]),
                vec![with(anakin("anakin.v0.0.1.alpha1", "0.0.1"), |m| {
                    m.insert("properties".into(), json!([release_property("anakin", "0.0.1", "alpha1")]));
                })],
            ),
            Fail(&["name \"anakin.v0.0.1.alpha1\" does not match normalized name \"anakin-v0.0.1-alpha1\""]),
        ),
        (
            "Package/Error/NoDefaultChannel",
            {
                let mut o = anakin_valid();
                o[0]["defaultChannel"] = json!("");
                o
            },
            Fail(&["default channel must be set"]),
        ),
        (
            "Package/Error/InvalidChannel",
            anakin_catalog(json!([]), vec![]),
            Fail(&["invalid channel \"light\""]),
        ),
        (
            "Package/Error/DefaultChannelNotInChannelMap",
            {
                let mut o = anakin_valid();
                o[0]["defaultChannel"] = json!("not-found");
                o
            },
            Fail(&["default channel \"not-found\" not found in channels list"]),
        ),
        (
            "Icon/Success/ValidSVG",
            {
                let mut o = anakin_valid();
                o[0]["icon"] = json!({"base64data": b64(SVG_SMALL_CIRCLE.as_bytes()), "mediatype": "image/svg+xml"});
                o
            },
            Pass,
        ),
        (
            "Icon/Success/ValidPNG",
            {
                let mut o = anakin_valid();
                o[0]["icon"] = json!({"base64data": b64(&[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a]), "mediatype": "image/png"});
                o
            },
            Pass,
        ),
        (
            "Icon/Success/ValidJPEG",
            {
                let mut o = anakin_valid();
                o[0]["icon"] = json!({"base64data": b64(&[0xff, 0xd8, 0xff, 0xe0]), "mediatype": "image/jpeg"});
                o
            },
            Pass,
        ),
        ("Icon/Success/Nil", anakin_valid(), Pass),
        ("Channel/Success/Valid", anakin_valid(), Pass),
        (
            "Channel/Error/NoName",
            {
                let mut o = anakin_valid();
                o[1]["name"] = json!("");
                o
            },
            Fail(&["contains channel with no name"]),
        ),
        (
            "Channel/Error/NoPackage",
            {
                let mut o = anakin_valid();
                if let Some(m) = o[1].as_object_mut() {
                    m.remove("package");
                }
                o
            },
            Fail(&["unknown package \"\" for channel \"light\""]),
        ),
        (
            "Channel/Error/NoBundles",
            anakin_catalog(json!([]), vec![]),
            Fail(&["channel must contain at least one bundle"]),
        ),
        (
            "Channel/Error/InvalidHead",
            anakin_channel(json!([{"name": "anakin.v0.0.0"}, {"name": "anakin.v0.0.1"}])),
            Fail(&["multiple channel heads found in graph: anakin.v0.0.0, anakin.v0.0.1"]),
        ),
        (
            "Channel/Error/InvalidBundle",
            anakin_catalog(
                json!([{"name": "anakin.v0.0.0"}]),
                vec![json!({"schema": "olm.bundle", "name": "anakin.v0.0.0", "package": "anakin"})],
            ),
            Fail(&["invalid bundle \"anakin.v0.0.0\""]),
        ),
        (
            "Bundle/Success/Valid",
            anakin_head(|m| {
                entry_of(m, "image", json!("registry.io/image"));
            }),
            Pass,
        ),
        (
            "Bundle/Success/ReplacesNotInChannel",
            anakin_catalog(
                json!([{"name": "anakin.v0.1.0", "replaces": "anakin.v0.0.0"}]),
                vec![anakin("anakin.v0.1.0", "0.1.0")],
            ),
            Pass,
        ),
        (
            "Bundle/Success/NoBundleImage/HaveBundleData",
            anakin_head(|m| {
                entry_of(m, "image", json!(""));
                if let Some(Value::Array(p)) = m.get_mut("properties") {
                    p.push(bundle_object("testdata"));
                }
            }),
            Pass,
        ),
        (
            "Bundle/Error/NoBundleImage",
            anakin_head(|m| entry_of(m, "image", json!(""))),
            Fail(&["bundle image must be set"]),
        ),
        (
            "Bundle/Error/NoName",
            anakin_head(|m| entry_of(m, "name", json!(""))),
            Fail(&["name must be set"]),
        ),
        (
            "Bundle/Error/NoChannel",
            {
                let mut o = anakin_valid();
                o.push(anakin("anakin.v0.1.0", "0.1.0"));
                o
            },
            Fail(&["bundle \"anakin.v0.1.0\" not found in any channel entries"]),
        ),
        (
            "Bundle/Error/NoPackage",
            anakin_head(|m| {
                m.remove("package");
            }),
            Fail(&["package name must be set for bundle \"anakin.v0.1.0\""]),
        ),
        (
            // Go's value is no bytes at all: in a file, no `value`.
            "Bundle/Error/InvalidProperty",
            anakin_head(|m| {
                if let Some(Value::Array(p)) = m.get_mut("properties") {
                    p.push(json!({"type": "broken"}));
                }
            }),
            Fail(&["missing field `value`"]),
        ),
        (
            "Bundle/Error/EmptySkipsValue",
            {
                let mut o = anakin_head(|_| {});
                o[1]["entries"][2]["skips"] = json!([""]);
                o
            },
            Fail(&["skip[0] is empty"]),
        ),
        ("Bundle/Success/EmptySkipRange", anakin_head(|_| {}), Pass),
        (
            "Bundle/Success/ValidSkipRange",
            {
                let mut o = anakin_head(|_| {});
                o[1]["entries"][2]["skipRange"] = json!(">=1.0.0 <2.0.0");
                o
            },
            Pass,
        ),
        (
            "Bundle/Error/InvalidSkipRange/LeadingV",
            {
                let mut o = anakin_head(|_| {});
                o[1]["entries"][2]["skipRange"] = json!(">v0.1.0");
                o
            },
            Fail(&["invalid skipRange \">v0.1.0\""]),
        ),
        (
            "Bundle/Error/InvalidSkipRange/LeadingZero",
            {
                let mut o = anakin_head(|_| {});
                o[1]["entries"][2]["skipRange"] = json!(">1.00.1");
                o
            },
            Fail(&["invalid skipRange \">1.00.1\""]),
        ),
        (
            "Bundle/Error/MissingPackage",
            anakin_head(|m| {
                entry_of(m, "properties", json!([]));
            }),
            Fail(&["must have exactly 1 \"olm.package\" property"]),
        ),
        (
            "Bundle/Error/MultiplePackages",
            anakin_head(|m| {
                entry_of(
                    m,
                    "properties",
                    json!([package_property("anakin", "0.1.0"), package_property("anakin", "0.2.0")]),
                );
            }),
            Fail(&["must have exactly 1 \"olm.package\" property"]),
        ),
        (
            "RelatedImage/Success/Valid",
            anakin_head(|m| {
                entry_of(m, "relatedImages", json!([{"name": "foo", "image": "bar"}]));
            }),
            Pass,
        ),
    ];
    assert_eq!(cases.len(), 45);
    run_cases(cases);
}

/// model_test.go's RelatedImage/Error/NoImage: `RelatedImage.Validate`
/// refuses an empty image, but opm's model validation never calls it (a
/// TODO in model.go: production indexes have such images). So `validate`
/// passes it with a warning, and `--strict` fails it.
#[test]
fn model_related_image_without_image_is_a_warning() {
    let c = Catalog::of(&anakin_head(|m| {
        m.insert(
            "relatedImages".into(),
            json!([{"name": "foo", "image": ""}]),
        );
    }));
    let (code, errors, warnings) = validate(&c, &[]);
    assert_eq!((code, errors.len()), (0, 0), "{errors:?}");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("relatedImages[0] has no image")),
        "{warnings:?}"
    );
    let (code, errors, _) = validate(&c, &["--strict"]);
    assert_eq!(code, 1);
    assert!(
        errors.iter().any(|e| e.contains("relatedImages[0]")),
        "{errors:?}"
    );
}

// alpha/declcfg/load_test.go: loading, seen through `render DIR`.

/// `render DIR -o json`: exit code, the objects, stderr.
fn render(path: &str) -> (i32, Vec<Value>, String) {
    let (code, out, err) = common::run(&["render", path, "-o", "json"]);
    let objects = if code == 0 {
        common::json_stream(&out)
    } else {
        Vec::new()
    };
    (code, objects, err)
}

/// How many objects of each schema: (packages, channels, bundles,
/// deprecations, others).
fn counts(objects: &[Value]) -> (usize, usize, usize, usize, usize) {
    let n = |s: &str| objects.iter().filter(|o| o["schema"] == s).count();
    let known = [
        "olm.package",
        "olm.channel",
        "olm.bundle",
        "olm.deprecations",
    ];
    let others = objects
        .iter()
        .filter(|o| !known.iter().any(|k| o["schema"] == *k))
        .count();
    (
        n("olm.package"),
        n("olm.channel"),
        n("olm.bundle"),
        n("olm.deprecations"),
        others,
    )
}

/// The files of load_test.go's invalidFS (our text, same problems).
const INVALID_FILES: &[(&str, &str)] = &[
    (
        "invalid-bundle.json",
        "{\"schema\": \"olm.bundle\",\"relatedImages\": {}}",
    ),
    (
        "invalid-package.json",
        "{\"schema\": \"olm.package\",\"name\": {}}",
    ),
    ("no-schema.yaml", "hello: world"),
    ("invalid-format.txt", "[This is not yaml or json.}"),
    ("not-object.json", "[]"),
];

/// A directory shaped like load_test.go's validFS: an `.indexignore` that
/// keeps only JSON and YAML files but CSVs, a README and a CSV it
/// excludes, two packages with bundles, a file of objects without names
/// and of an unknown schema, and a deprecations file.
fn valid_fs() -> Catalog {
    let mut pkgs = String::new();
    for o in [
        package("cockroachdb", "stable-5.x"),
        bundle("cockroachdb", "2.0.9"),
        bundle("cockroachdb", "2.1.1"),
        bundle("cockroachdb", "5.0.3"),
    ] {
        pkgs.push_str(&serde_json::to_string_pretty(&o).expect("json"));
        pkgs.push('\n');
    }
    let etcd = "---\nschema: olm.package\nname: etcd\ndefaultChannel: singlenamespace-alpha\n\
---\nschema: olm.bundle\npackage: etcd\nname: etcdoperator.v0.9.0\nimage: quay.io/operatorhubio/etcd:v0.9.0\nproperties:\n- type: olm.package\n  value: {packageName: etcd, version: 0.9.0}\n\
---\nschema: olm.bundle\npackage: etcd\nname: etcdoperator.v0.9.2\nimage: quay.io/operatorhubio/etcd:v0.9.2\nproperties:\n- type: olm.package\n  value: {packageName: etcd, version: 0.9.2}\n";
    Catalog::files(&[
        (
            ".indexignore",
            "*\n!*.json\n!*.yaml\n\n*.clusterserviceversion.yaml",
        ),
        ("cockroachdb.json", &pkgs),
        ("etcd.yaml", etcd),
        (
            "etcdoperator.v0.6.1.clusterserviceversion.yaml",
            "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: etcdoperator.v0.6.1\n",
        ),
        (
            "README.md",
            "# Valid Declarative Config\n\nThis README is no catalog content: the .indexignore excludes it.\n",
        ),
        (
            "unrecognized-schema.json",
            "{\"schema\":\"olm.package\"}{\"schema\":\"unexpected\"}{\"schema\":\"olm.bundle\"}",
        ),
        (
            "deprecations.yaml",
            "---\nschema: olm.deprecations\npackage: kiali\nentries:\n- reference:\n    schema: olm.bundle\n    name: kiali-operator.v1.68.0\n  message: |\n    kiali-operator.v1.68.0 is deprecated.\n- reference:\n    schema: olm.package\n  message: |\n    package kiali is end of life.\n",
        ),
    ])
}

/// load_test.go TestLoadReader, TestWalkMetasFS, TestLoadFS and
/// TestLoadFile: which directories and files load, and what they hold.
#[test]
fn load_reader_walk_metas_load_fs_and_load_file() {
    let mut bad = Vec::new();
    // Each file of invalidFS on its own (TestLoadReader's and TestLoadFile's
    // Error/* cases), then the whole directory (Error/Invalid).
    for (name, text) in INVALID_FILES {
        let c = Catalog::files(&[(name, text)]);
        let (code, _, err) = render(c.path());
        if code == 0 || !err.contains(name) {
            bad.push(format!(
                "{name}: want a load error naming the file, got {code}: {err}"
            ));
        }
        let (code, errors, _) = validate(&c, &[]);
        if code != 1 || !errors.iter().any(|e| !e.is_empty()) {
            bad.push(format!(
                "validate {name}: want exit 1 with the load error, got {code}: {errors:?}"
            ));
        }
    }
    let all = Catalog::files(INVALID_FILES);
    let (code, _, err) = render(all.path());
    if code == 0 {
        bad.push(format!("invalidFS: want a load error, got {code}: {err}"));
    }
    // Error/NonExistentDir.
    let (code, _, err) = render("/nonexistent/dir");
    if code != 2 {
        bad.push(format!("NonExistentDir: want exit 2, got {code}: {err}"));
    }
    // Success/UnrecognizedSchema: objects without a name load; one of an
    // unknown schema is kept.
    let c = Catalog::files(&[(
        "unrecognized-schema.json",
        "{\"schema\":\"olm.package\"}{\"schema\":\"unexpected\"}{\"schema\":\"olm.bundle\"}",
    )]);
    let (code, objects, err) = render(c.path());
    if (code, counts(&objects)) != (0, (1, 0, 1, 0, 1)) {
        bad.push(format!(
            "UnrecognizedSchema: got {code} {:?}: {err}",
            counts(&objects)
        ));
    }
    // Success/ValidFile/Deprecations.
    let v = valid_fs();
    let one = Catalog::files(&[(
        "deprecations.yaml",
        &std::fs::read_to_string(v.dir.path().join("deprecations.yaml")).expect("read"),
    )]);
    let (code, objects, err) = render(one.path());
    if (code, counts(&objects)) != (0, (0, 0, 0, 1, 0)) {
        bad.push(format!(
            "ValidFile/Deprecations: got {code} {:?}: {err}",
            counts(&objects)
        ));
    }
    // Success/ValidFile (etcd.yaml alone).
    let one = Catalog::files(&[(
        "etcd.yaml",
        &std::fs::read_to_string(v.dir.path().join("etcd.yaml")).expect("read"),
    )]);
    let (code, objects, err) = render(one.path());
    if (code, counts(&objects)) != (0, (1, 0, 2, 0, 0)) {
        bad.push(format!(
            "ValidFile: got {code} {:?}: {err}",
            counts(&objects)
        ));
    }
    // Success/ValidDir: the .indexignore keeps README.md and the CSV out;
    // 3 packages (one without a name), 6 bundles, 1 deprecation, 1 other.
    let (code, objects, err) = render(v.path());
    if (code, counts(&objects)) != (0, (3, 0, 6, 1, 1)) {
        bad.push(format!(
            "ValidDir: got {code} {:?}: {err}",
            counts(&objects)
        ));
    }
    let nameless = objects
        .iter()
        .filter(|o| o["schema"] == "olm.package" && o["name"] == "")
        .count();
    if nameless != 1 {
        bad.push(format!(
            "ValidDir: want one package without a name, got {nameless}"
        ));
    }
    // Without the .indexignore the README is content, and not FBC.
    std::fs::remove_file(v.dir.path().join(".indexignore")).expect("rm");
    let (code, _, err) = render(v.path());
    if code == 0 || !err.contains("README.md") {
        bad.push(format!(
            "ValidDir without .indexignore: want README.md refused, got {code}: {err}"
        ));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The loading rules issue #28 names beyond the Go tables: `entries: null`
/// in `olm.deprecations` (what Go writes for an empty list), the place of
/// a refused JSON object, a file that is not text, and `.indexignore`
/// files in subdirectories.
#[test]
fn loading_rules_of_opm() {
    // entries: null is no entries.
    let mut objects = foo(bundle("foo", "0.1.0"));
    objects.push(json!({"schema": "olm.deprecations", "package": "foo", "entries": null}));
    let c = Catalog::of(&objects);
    let (code, errors, _) = validate(&c, &[]);
    assert_eq!((code, errors.len()), (0, 0), "{errors:?}");

    // A refused object of a JSON stream is placed at its own line.
    let c = Catalog::files(&[(
        "c.json",
        "{\"schema\": \"olm.package\", \"name\": \"p\"}\n\n  {\"schema\": \"olm.channel\", \"name\": 5}\n",
    )]);
    let (code, out, _) = common::run(&["validate", c.path()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("c.json:3:3"), "{out}");

    // Bytes that are not text: refused as neither JSON nor YAML, named.
    let c = Catalog::files(&[("logo.png", "")]);
    std::fs::write(
        c.dir.path().join("logo.png"),
        [0x89, b'P', b'N', b'G', 0xff, 0xfe],
    )
    .expect("write");
    let (code, out, _) = common::run(&["validate", c.path()]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("logo.png") && out.contains("neither JSON nor YAML"),
        "{out}"
    );

    // An .indexignore in a subdirectory applies below it only.
    let mut files: Vec<(String, String)> = Vec::new();
    for (i, o) in foo(bundle("foo", "0.1.0")).iter().enumerate() {
        files.push((format!("foo/{i}.json"), o.to_string()));
    }
    files.push(("foo/.indexignore".into(), "notes.txt\n".into()));
    files.push(("foo/notes.txt".into(), "not a catalog\n".into()));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let c = Catalog::files(&refs);
    let (code, errors, _) = validate(&c, &[]);
    assert_eq!((code, errors.len()), (0, 0), "{errors:?}");
    std::fs::write(c.dir.path().join("notes.txt"), "not a catalog\n").expect("write");
    let (code, errors, _) = validate(&c, &[]);
    assert_eq!(code, 1, "{errors:?}");
}

/// Every opm-built index of ../shared/opm-golden: our render of it, our
/// migrate of it and opm's own render of it validate without errors.
#[test]
fn golden_indexes_render_and_migrate_then_validate() {
    let sqlite = common::golden().join("sqlite");
    let mut dirs: Vec<_> = std::fs::read_dir(&sqlite)
        .expect("golden sqlite")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("index.db").is_file())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty());
    for dir in dirs {
        let db = dir.join("index.db");
        let db = db.to_str().expect("utf-8");
        let name = dir.display().to_string();
        // render → validate
        let (code, out, err) = common::run(&["render", db, "-o", "json"]);
        assert_eq!(code, 0, "{name}: {err}");
        let rendered = Catalog::files(&[("catalog.json", &out)]);
        let (code, errors, _) = validate(&rendered, &[]);
        assert_eq!(
            (code, errors.len()),
            (0, 0),
            "render of {name}: {errors:#?}"
        );
        // migrate → validate
        let migrated = tempfile::tempdir().expect("tmp");
        let out_dir = migrated.path().join("catalog");
        let (code, _, err) = common::run(&["migrate", db, out_dir.to_str().expect("utf-8")]);
        assert_eq!(code, 0, "{name}: {err}");
        let (code, out, err) = common::run(&["validate", out_dir.to_str().expect("utf-8")]);
        assert_eq!(code, 0, "migrate of {name}: {out}{err}");
        // opm's own render → validate
        let golden = dir.join("render.json");
        if golden.is_file() {
            let text = std::fs::read_to_string(&golden).expect("read");
            let theirs = Catalog::files(&[("catalog.json", &text)]);
            let (code, errors, _) = validate(&theirs, &[]);
            assert_eq!(
                (code, errors.len()),
                (0, 0),
                "opm's render of {name}: {errors:#?}"
            );
        }
    }
}

/// `serve` refuses what `validate` refuses (opm's serve converts the
/// catalog to its model too): a stranded bundle, which the registry's own
/// checks let through, stops the load.
#[test]
fn serve_refuses_what_validate_refuses() {
    let c = Catalog::of(&anakin_channel(json!([
        {"name": "anakin.v0.0.1"},
        {"name": "anakin.v0.0.2", "replaces": "anakin.v0.0.1"},
        {"name": "anakin.v0.0.3", "skips": ["anakin.v0.0.2"]}
    ])));
    let e = olm_catalog::serve::CatalogSource::Fbc(c.dir.path().to_path_buf())
        .load()
        .err()
        .expect("a stranded bundle must not load");
    let text = olm_catalog::diag::with_causes(&e);
    assert!(text.contains("stranded bundles: anakin.v0.0.1"), "{text}");
    let valid = Catalog::of(&anakin_valid());
    assert!(
        olm_catalog::serve::CatalogSource::Fbc(valid.dir.path().to_path_buf())
            .load()
            .is_ok()
    );
}
