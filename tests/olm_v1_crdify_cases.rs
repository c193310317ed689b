//! kubernetes-sigs/crdify's own test tables and operator-controller's
//! `crdupgradesafety` preflight tests, ported to `bundle validate NEW
//! --previous OLD` (our fixtures: one CRD `widgets.example.com` per case,
//! written here). Each case keeps the upstream test's name and asserts what
//! that test asserts, as our rule ids (docs/graph.md maps them to crdify's
//! validations). The cases upstream has that cannot be ported, and why, are
//! in docs/olm-v1-tests.md.
//!
//! Upstream property tests call one validation with crdify's defaults; the
//! command runs them all, so a case asserts the rules it expects exactly,
//! crdify's catch-all `unhandled` included (the "different field changed,
//! not flagged" cases change `id`, which only `unhandled` covers).

use crate::common::{fixtures, run};

/// Which configuration a case runs under.
#[derive(Clone, Copy)]
enum Cfg {
    /// OLM v1's preflight (the default).
    Olm,
    /// `--crd-checks crdify-defaults`.
    Crdify,
}

/// A CRD with the given versions: (name, served, storage, `spec` schema as
/// flow YAML). `extra` goes under `spec` (indented two spaces), `status`
/// is the whole `status` block when not empty.
fn crd(scope: &str, versions: &[(&str, bool, bool, &str)], extra: &str, status: &str) -> String {
    let mut s = format!(
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {{kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}}
  scope: {scope}
{extra}  versions:
"
    );
    for (name, served, storage, spec) in versions {
        s.push_str(&format!(
            "  - name: {name}
    served: {served}
    storage: {storage}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {spec}
"
        ));
    }
    s.push_str(status);
    s
}

/// A one-version (v1) namespaced CRD whose `spec` has one property `field`
/// with schema `field` (flow YAML).
fn one(field: &str) -> String {
    crd(
        "Namespaced",
        &[(
            "v1",
            true,
            true,
            &format!("{{type: object, properties: {{field: {field}}}}}"),
        )],
        "",
        "",
    )
}

/// Writes a bundle whose CRD is `crd_text`, with a CSV that owns each of
/// its versions and is otherwise clean (so the run's exit code says
/// whether a CRD check failed), and the metadata of
/// fixtures/crd-safety/pkg/0.1.0.
fn bundle(dir: &std::path::Path, crd_text: &str) {
    let from = fixtures().join("crd-safety/pkg/0.1.0");
    for sub in ["manifests", "metadata"] {
        std::fs::create_dir_all(dir.join(sub)).expect("mkdir");
    }
    std::fs::copy(
        from.join("metadata/annotations.yaml"),
        dir.join("metadata/annotations.yaml"),
    )
    .expect("copy");
    let owned: String = crd_text
        .lines()
        .filter_map(|l| l.strip_prefix("  - name: "))
        .map(|version| {
            format!(
                "    - {{name: widgets.example.com, version: {version}, kind: Widget, \
displayName: Widget, description: A widget.}}\n"
            )
        })
        .collect();
    assert!(!owned.is_empty(), "no versions in {crd_text}");
    std::fs::write(
        dir.join("manifests/widget.clusterserviceversion.yaml"),
        format!(
            "apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: widget.v0.1.0
  annotations:
    alm-examples: '[]'
    capabilities: Basic Install
    categories: Developer Tools
spec:
  displayName: Widget
  description: Makes widgets.
  version: 0.1.0
  minKubeVersion: 1.25.0
  maturity: alpha
  keywords: [widget]
  provider: {{name: Example}}
  maintainers: [{{name: Example, email: ops@example.com}}]
  links: [{{name: Source, url: 'https://example.com/widget'}}]
  customresourcedefinitions:
    owned:
{owned}  installModes:
  - {{type: OwnNamespace, supported: true}}
  - {{type: SingleNamespace, supported: true}}
  - {{type: MultiNamespace, supported: false}}
  - {{type: AllNamespaces, supported: true}}
  install:
    strategy: deployment
    spec:
      deployments:
      - name: widget-controller
        spec:
          replicas: 1
          selector: {{matchLabels: {{app: widget}}}}
          template:
            metadata: {{labels: {{app: widget}}}}
            spec:
              serviceAccountName: widget
              containers:
              - name: manager
                image: quay.io/example/widget@sha256:0f5d3f7a2b1c4e6d8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f
"
        ),
    )
    .expect("write CSV");
    std::fs::write(dir.join("manifests/widgets.crd.yaml"), crd_text).expect("write");
}

/// `bundle validate NEW --previous OLD -o json`: the CRD rules found, in
/// order, and their messages.
fn compare(old: &str, new: &str, cfg: Cfg) -> (Vec<String>, Vec<String>) {
    let t = tempfile::tempdir().expect("tmp");
    let (o, n) = (t.path().join("old"), t.path().join("new"));
    bundle(&o, old);
    bundle(&n, new);
    let mut args = vec![
        "bundle",
        "validate",
        n.to_str().expect("utf-8"),
        "--previous",
        o.to_str().expect("utf-8"),
        "-o",
        "json",
    ];
    if let Cfg::Crdify = cfg {
        args.extend(["--crd-checks", "crdify-defaults"]);
    }
    let (code, out, err) = run(&args);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| {
        panic!("{e}: {out}{err}");
    });
    let mut rules = Vec::new();
    let mut msgs = Vec::new();
    let mut errors = 0;
    let reports = v["reports"]
        .as_array()
        .unwrap_or_else(|| panic!("no reports array: {out}"));
    assert!(
        !reports.is_empty(),
        "the new bundle was not reported: {out}"
    );
    for r in reports {
        let findings = r["findings"]
            .as_array()
            .unwrap_or_else(|| panic!("a report without findings array: {out}"));
        for f in findings {
            let rule = f["rule"].as_str().unwrap_or("");
            if f["level"] == "error" {
                errors += 1;
            }
            if rule.starts_with("crd-") {
                rules.push(rule.to_string());
                msgs.push(f["message"].as_str().unwrap_or("").to_string());
            }
        }
    }
    // The fixtures are clean but for their CRDs: only the CRD checks'
    // errors fail the run, and they must.
    let crd_errors = reports
        .iter()
        .flat_map(|r| r["findings"].as_array().into_iter().flatten())
        .filter(|f| f["level"] == "error")
        .all(|f| f["rule"].as_str().is_some_and(|r| r.starts_with("crd-")));
    assert!(crd_errors, "a finding not about the CRD: {out}");
    assert_eq!(code, if errors > 0 { 1 } else { 0 }, "{out}{err}");
    // The report's own order is by place; the cases compare sets.
    rules.sort();
    msgs.sort();
    (rules, msgs)
}

/// Runs a table: (upstream test name, old `field`, new `field`, config,
/// the rules expected).
fn table(cases: &[(&str, &str, &str, Cfg, &[&str])]) {
    let mut failed = Vec::new();
    for (name, old, new, cfg, want) in cases {
        let (got, msgs) = compare(&one(old), &one(new), *cfg);
        if got != *want {
            failed.push(format!("{name}: want {want:?}, got {got:?} {msgs:#?}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

const DEF: &[&str] = &["crd-upgrade-default-changed"];
const ENUM: &[&str] = &["crd-upgrade-enum-restricted"];
const UNH: &[&str] = &["crd-upgrade-unhandled"];
const NONE: &[&str] = &[];

/// crdify `pkg/validations/property/default_test.go` TestDefault.
#[test]
fn crdify_default() {
    use Cfg::*;
    table(&[
        (
            "no diff, not flagged",
            "{type: string, default: foo}",
            "{type: string, default: foo}",
            Crdify,
            NONE,
        ),
        (
            "new default value, flagged",
            "{type: string}",
            "{type: string, default: foo}",
            Crdify,
            DEF,
        ),
        (
            "default value removed, flagged",
            "{type: string, default: foo}",
            "{type: string}",
            Crdify,
            DEF,
        ),
        (
            "default value changed, flagged",
            "{type: string, default: foo}",
            "{type: string, default: bar}",
            Crdify,
            DEF,
        ),
        (
            "different field changed, not flagged",
            "{type: string, id: foo}",
            "{type: string, id: bar}",
            Crdify,
            UNH,
        ),
    ]);
}

/// crdify `enum_test.go` TestEnum; the addition policy `Allow` case is OLM
/// v1's configuration.
#[test]
fn crdify_enum() {
    use Cfg::*;
    table(&[
        (
            "no diff, not flagged",
            "{type: string, enum: [foo]}",
            "{type: string, enum: [foo]}",
            Crdify,
            NONE,
        ),
        (
            "new enum constraint, flagged",
            "{type: string, enum: []}",
            "{type: string, enum: [foo]}",
            Crdify,
            ENUM,
        ),
        (
            "new allowed enum value added, addition policy not set, flagged",
            "{type: string, enum: [foo]}",
            "{type: string, enum: [foo, bar]}",
            Crdify,
            ENUM,
        ),
        (
            "new allowed enum value added, addition policy set to Allow, not flagged",
            "{type: string, enum: [foo]}",
            "{type: string, enum: [foo, bar]}",
            Olm,
            NONE,
        ),
        (
            "removed enum value, flagged",
            "{type: string, enum: [foo, bar]}",
            "{type: string, enum: [foo]}",
            Crdify,
            ENUM,
        ),
        (
            "different field changed, not flagged",
            "{type: string, id: foo}",
            "{type: string, id: bar}",
            Crdify,
            UNH,
        ),
        (
            "different field changed with enum, not flagged",
            "{type: string, id: foo, enum: [foo]}",
            "{type: string, id: bar, enum: [foo]}",
            Crdify,
            UNH,
        ),
    ]);
}

/// crdify `max_test.go` and `min_test.go`: every bound, under both
/// configurations (OLM v1 does not configure them).
#[test]
fn crdify_max_and_min() {
    let mut cases: Vec<(String, String, String, Cfg, Vec<&str>)> = Vec::new();
    for (key, ty, rule, upper) in [
        ("maximum", "integer", "crd-upgrade-maximum-tightened", true),
        ("maxItems", "array", "crd-upgrade-max-items-tightened", true),
        (
            "maxLength",
            "string",
            "crd-upgrade-max-length-tightened",
            true,
        ),
        (
            "maxProperties",
            "object",
            "crd-upgrade-max-properties-tightened",
            true,
        ),
        ("minimum", "integer", "crd-upgrade-minimum-tightened", false),
        (
            "minItems",
            "array",
            "crd-upgrade-min-items-tightened",
            false,
        ),
        (
            "minLength",
            "string",
            "crd-upgrade-min-length-tightened",
            false,
        ),
        (
            "minProperties",
            "object",
            "crd-upgrade-min-properties-tightened",
            false,
        ),
    ] {
        let s = |n: Option<u32>| match n {
            Some(n) => format!("{{type: {ty}, {key}: {n}}}"),
            None => format!("{{type: {ty}}}"),
        };
        for cfg in [Cfg::Crdify, Cfg::Olm] {
            cases.push((
                format!("{key}: no diff, not flagged"),
                s(Some(10)),
                s(Some(10)),
                cfg,
                vec![],
            ));
            cases.push((
                format!("{key}: new constraint, flagged"),
                s(None),
                s(Some(10)),
                cfg,
                vec![rule],
            ));
            let (tighter, looser) = if upper { (10, 30) } else { (30, 10) };
            cases.push((
                format!("{key}: constraint tightened, flagged"),
                s(Some(20)),
                s(Some(tighter)),
                cfg,
                vec![rule],
            ));
            cases.push((
                format!("{key}: constraint loosened, not flagged"),
                s(Some(20)),
                s(Some(looser)),
                cfg,
                vec![],
            ));
            cases.push((
                format!("{key}: removed, not flagged"),
                s(Some(20)),
                s(None),
                cfg,
                vec![],
            ));
        }
    }
    let rows: Vec<(&str, &str, &str, Cfg, &[&str])> = cases
        .iter()
        .map(|(n, o, w, c, r)| (n.as_str(), o.as_str(), w.as_str(), *c, r.as_slice()))
        .collect();
    table(&rows);
}

/// crdify `nullable_test.go`, `pattern_test.go`, `required_test.go`,
/// `type_test.go`, `description_test.go`.
#[test]
fn crdify_nullable_pattern_required_type_description() {
    use Cfg::*;
    let null = &["crd-upgrade-nullable-changed"][..];
    let pat = &["crd-upgrade-pattern-changed"][..];
    table(&[
        (
            "nullable: no diff, not flagged",
            "{type: string, nullable: true}",
            "{type: string, nullable: true}",
            Crdify,
            NONE,
        ),
        (
            "nullable allowed, flagged by default",
            "{type: string}",
            "{type: string, nullable: true}",
            Olm,
            null,
        ),
        (
            "nullable removed, flagged",
            "{type: string, nullable: true}",
            "{type: string}",
            Olm,
            null,
        ),
        (
            "pattern: no diff, not flagged",
            "{type: string, pattern: '^[a-z]+$'}",
            "{type: string, pattern: '^[a-z]+$'}",
            Olm,
            NONE,
        ),
        (
            "pattern added, flagged",
            "{type: string}",
            "{type: string, pattern: '^[a-z]+$'}",
            Olm,
            pat,
        ),
        (
            "pattern changed, flagged",
            "{type: string, pattern: '^[a-z]+$'}",
            "{type: string, pattern: '^[A-Z]+$'}",
            Olm,
            pat,
        ),
        (
            "pattern removed, flagged by default",
            "{type: string, pattern: '^[a-z]+$'}",
            "{type: string}",
            Olm,
            pat,
        ),
        (
            "type: no diff, not flagged",
            "{type: string}",
            "{type: string}",
            Olm,
            NONE,
        ),
        (
            "type changed, flagged",
            "{type: string}",
            "{type: integer}",
            Olm,
            &["crd-upgrade-type-changed"],
        ),
        (
            "description: no diff, not flagged",
            "{type: string, description: a}",
            "{type: string, description: a}",
            Crdify,
            NONE,
        ),
        (
            "description changed, flagged",
            "{type: string, description: a}",
            "{type: string, description: b}",
            Crdify,
            &["crd-upgrade-description-changed"],
        ),
        (
            "description changed, OLM v1 enforcement None, not flagged",
            "{type: string, description: a}",
            "{type: string, description: b}",
            Olm,
            NONE,
        ),
    ]);
    // required_test.go: `required` lives on the parent.
    let req = |names: &str| {
        crd(
            "Namespaced",
            &[(
                "v1",
                true,
                true,
                &format!("{{type: object, required: [{names}], properties: {{a: {{type: string}}, b: {{type: string}}}}}}"),
            )],
            "",
            "",
        )
    };
    assert!(compare(&req("a"), &req("a"), Cfg::Olm).0.is_empty());
    assert_eq!(
        compare(&req("a"), &req("a, b"), Cfg::Olm).0,
        ["crd-upgrade-required-added"]
    );
    // A required name dropped loosens.
    assert!(compare(&req("a, b"), &req("a"), Cfg::Olm).0.is_empty());
}

/// crdify's `oneOf` validation (in the crdify operator-controller pins:
/// net new, removed and added subschemas all refused by default), and
/// operator-controller's TestUpgrade_OneOfRemoved / OneOfAdded.
#[test]
fn crdify_one_of() {
    use Cfg::*;
    let one_of = &["crd-upgrade-one-of-changed"][..];
    table(&[
        (
            "net new oneOf",
            "{type: object}",
            "{type: object, oneOf: [{required: [a]}]}",
            Olm,
            one_of,
        ),
        (
            "added oneOf, disallowed",
            "{type: object, oneOf: [{required: [a]}]}",
            "{type: object, oneOf: [{required: [a]}, {required: [b]}]}",
            Olm,
            one_of,
        ),
        (
            "oneOf subschema descriptions are not compared",
            "{type: object, oneOf: [{required: [a], description: x}]}",
            "{type: object, oneOf: [{required: [a], description: y}]}",
            Olm,
            NONE,
        ),
    ]);
    // Removing a subschema is also the removal of the field `oneOf[1]`.
    let (got, msgs) = compare(
        &one("{type: object, oneOf: [{required: [a]}, {required: [b]}]}"),
        &one("{type: object, oneOf: [{required: [a]}]}"),
        Olm,
    );
    assert!(
        got.contains(&"crd-upgrade-one-of-changed".to_string()),
        "{got:?}"
    );
    assert!(
        msgs.iter()
            .any(|m| m.contains("allowed oneOf schemas removed")),
        "{msgs:#?}"
    );
}

/// What OLM v1's preflight adds to crdify: changes no validation handles
/// are errors (`unhandled`); operator-controller's
/// TestUpgrade_UnhandledChanges_* (format "" -> "email") and the keywords
/// the issue lists.
#[test]
fn unhandled_changes_are_errors() {
    use Cfg::*;
    table(&[
        (
            "format added (operator-controller crd-unhandled)",
            "{type: string}",
            "{type: string, format: email}",
            Olm,
            UNH,
        ),
        (
            "allOf added",
            "{type: object}",
            "{type: object, allOf: [{required: [a]}]}",
            Olm,
            UNH,
        ),
        (
            "anyOf added",
            "{type: object}",
            "{type: object, anyOf: [{required: [a]}]}",
            Olm,
            UNH,
        ),
        (
            "not added",
            "{type: object}",
            "{type: object, not: {required: [a]}}",
            Olm,
            UNH,
        ),
        (
            "x-kubernetes-validations added",
            "{type: string}",
            "{type: string, x-kubernetes-validations: [{rule: 'self.size() > 1'}]}",
            Olm,
            UNH,
        ),
        (
            "x-kubernetes-preserve-unknown-fields set",
            "{type: object}",
            "{type: object, x-kubernetes-preserve-unknown-fields: true}",
            Olm,
            UNH,
        ),
        (
            "x-kubernetes-int-or-string set",
            "{type: string}",
            "{x-kubernetes-int-or-string: true, type: string}",
            Olm,
            UNH,
        ),
        (
            "exclusiveMaximum set",
            "{type: integer, maximum: 5}",
            "{type: integer, maximum: 5, exclusiveMaximum: true}",
            Olm,
            UNH,
        ),
        (
            "exclusiveMinimum set",
            "{type: integer, minimum: 5}",
            "{type: integer, minimum: 5, exclusiveMinimum: true}",
            Olm,
            UNH,
        ),
        (
            "multipleOf added",
            "{type: integer}",
            "{type: integer, multipleOf: 2}",
            Olm,
            UNH,
        ),
        (
            "uniqueItems set",
            "{type: array, items: {type: string}}",
            "{type: array, uniqueItems: true, items: {type: string}}",
            Olm,
            UNH,
        ),
        (
            "id changed",
            "{type: string, id: a}",
            "{type: string, id: b}",
            Olm,
            UNH,
        ),
        (
            "additionalProperties value schema changed: the map and its value both differ",
            "{type: object, additionalProperties: {type: string}}",
            "{type: object, additionalProperties: {type: string, format: date}}",
            Olm,
            &["crd-upgrade-unhandled", "crd-upgrade-unhandled"],
        ),
        (
            "written zero values are no change (false, empty string, empty list)",
            "{type: string}",
            "{type: string, uniqueItems: false, format: '', allOf: [], x-kubernetes-embedded-resource: false}",
            Olm,
            NONE,
        ),
        (
            "unknown keywords are dropped as Go drops them",
            "{type: string}",
            "{type: string, x-not-a-keyword: 1}",
            Olm,
            NONE,
        ),
        (
            "numbers compare as numbers",
            "{type: integer, multipleOf: 2}",
            "{type: integer, multipleOf: 2.0}",
            Olm,
            NONE,
        ),
    ]);
    let (_, msgs) = compare(
        &one("{type: string}"),
        &one("{type: string, format: email}"),
        Olm,
    );
    assert!(
        msgs[0].contains("unhandled changes found (format none -> \"email\")"),
        "{msgs:#?}"
    );
}

/// crdify `pkg/validations/crd/{scope,storedversionremoval,existingfieldremoval}`.
#[test]
fn crdify_crd_wide() {
    let spec = "{type: object, properties: {a: {type: string}}}";
    let v = |name: &'static str, storage: bool| (name, true, storage, spec);
    // scope_test.go
    let scoped = |s: &str| crd(s, &[v("v1", true)], "", "");
    assert!(compare(&scoped("Cluster"), &scoped("Cluster"), Cfg::Olm)
        .0
        .is_empty());
    assert_eq!(
        compare(&scoped("Cluster"), &scoped("Namespaced"), Cfg::Olm).0,
        ["crd-upgrade-scope-changed"]
    );
    // storedversionremoval_test.go: stored versions kept; one removed.
    let status = "status:\n  storedVersions: [v1alpha1, v1alpha2]\n";
    let both = crd(
        "Namespaced",
        &[v("v1alpha1", false), v("v1alpha2", true)],
        "",
        status,
    );
    assert!(compare(&both, &both, Cfg::Olm).0.is_empty());
    let (got, _) = compare(
        &both,
        &crd("Namespaced", &[v("v1alpha2", true)], "", ""),
        Cfg::Olm,
    );
    assert_eq!(got, ["crd-upgrade-stored-version-removed"]);
    // existingfieldremoval_test.go
    let with_b = crd(
        "Namespaced",
        &[(
            "v1alpha1",
            true,
            true,
            "{type: object, properties: {a: {type: string}, b: {type: string}}}",
        )],
        "",
        "",
    );
    let without_b = crd("Namespaced", &[v("v1alpha1", true)], "", "");
    assert!(compare(&with_b, &with_b, Cfg::Olm).0.is_empty());
    let (got, msgs) = compare(&with_b, &without_b, Cfg::Olm);
    assert_eq!(got, ["crd-upgrade-field-removed"], "{msgs:#?}");
    assert!(
        msgs[0].contains("version v1alpha1: field ^.spec.b removed"),
        "{msgs:#?}"
    );
    // "new version is added with the field removed, not flagged"
    let added_version = crd(
        "Namespaced",
        &[
            (
                "v1alpha1",
                true,
                true,
                "{type: object, properties: {a: {type: string}, b: {type: string}}}",
            ),
            ("v1alpha2", false, false, spec),
        ],
        "",
        "",
    );
    assert!(compare(&with_b, &added_version, Cfg::Olm).0.is_empty());
}

/// crdify `pkg/validators/version/served/served_test.go` and
/// operator-controller's conversion cases: the new CRD's served versions
/// compared pairwise, skipped with a conversion webhook under OLM v1
/// (`ConversionPolicyIgnore`), not under crdify's defaults (`None`), and
/// less what the old CRD already had.
#[test]
fn served_versions() {
    let s = |t: &str| format!("{{type: object, properties: {{field1: {{type: {t}}}}}}}");
    let (a, b) = (s("string"), s("integer"));
    let webhook = "  conversion:\n    strategy: Webhook\n    webhook:\n      conversionReviewVersions: [v1]\n      clientConfig: {url: 'https://example.com/convert'}\n";
    let none = "  conversion:\n    strategy: None\n";
    // The old CRD serves only v2 (the same v2 as the new one): the new
    // CRD's same-version comparison finds nothing; only the pair matters.
    let same = crd(
        "Namespaced",
        &[("v1", false, false, &a), ("v2", true, true, &b)],
        "",
        "",
    );
    let differ = |extra: &str| {
        crd(
            "Namespaced",
            &[("v1", true, false, &a), ("v2", true, true, &b)],
            extra,
            "",
        )
    };
    let served = "crd-served-version-incompatible";
    // webhook conversion with ignore policy should return empty results
    assert!(compare(&same, &differ(webhook), Cfg::Olm).0.is_empty());
    // no conversion webhook with ignore policy should still validate
    let (got, msgs) = compare(&same, &differ(""), Cfg::Olm);
    assert_eq!(got, [served], "{msgs:#?}");
    assert!(
        msgs[0].contains("served versions v1 -> v2: field ^.spec.field1: type: type changed from \"string\" to \"integer\""),
        "{msgs:#?}"
    );
    // non-webhook conversion with ignore policy should still validate
    assert_eq!(compare(&same, &differ(none), Cfg::Olm).0, [served]);
    // ConversionPolicyNone: validated even with a webhook
    assert_eq!(compare(&same, &differ(webhook), Cfg::Crdify).0, [served]);
    // Version pairs: one served version, or one not served: nothing.
    assert!(compare(&same, &same, Cfg::Olm).0.is_empty());
    // operator-controller: the same issue in old and new CRD is not
    // reported; a new one is.
    assert!(compare(&differ(""), &differ(""), Cfg::Olm).0.is_empty());
    let extra = crd(
        "Namespaced",
        &[
            (
                "v1",
                true,
                false,
                "{type: object, properties: {field1: {type: string}, extraField: {type: boolean}}}",
            ),
            (
                "v2",
                true,
                true,
                "{type: object, properties: {field1: {type: integer}, extraField: {type: string}}}",
            ),
        ],
        "",
        "",
    );
    let (got, msgs) = compare(&differ(""), &extra, Cfg::Olm);
    assert_eq!(got, [served], "{msgs:#?}");
    assert!(msgs[0].contains("^.spec.extraField: type:"), "{msgs:#?}");
    // Three served versions: pairs in Kubernetes order (v1alpha1 < v1beta1 < v1).
    let three = crd(
        "Namespaced",
        &[
            ("v1", true, true, &b),
            ("v1alpha1", true, false, &a),
            ("v1beta1", true, false, &a),
        ],
        "",
        "",
    );
    let only_v1 = crd("Namespaced", &[("v1", true, true, &b)], "", "");
    let (got, msgs) = compare(&only_v1, &three, Cfg::Olm);
    assert_eq!(got, [served, served], "{msgs:#?}");
    assert!(
        msgs.iter()
            .any(|m| m.contains("served versions v1alpha1 -> v1:")),
        "{msgs:#?}"
    );
    assert!(
        msgs.iter()
            .any(|m| m.contains("served versions v1beta1 -> v1:")),
        "{msgs:#?}"
    );
}

/// crdify's end-to-end goldens (`test/*/expected.json`, run with crdify's
/// defaults), each as the same change on our CRD.
#[test]
fn crdify_end_to_end_goldens() {
    use Cfg::*;
    let memcached = |size: &str, mode: &str| {
        format!("{{type: object, properties: {{size: {size}, mode: {mode}}}}}")
    };
    let base = memcached(
        "{type: integer, minimum: 1, description: Size defines the number}",
        "{type: string, default: Managed, enum: [Managed, Unmanaged]}",
    );
    let doc = |spec: &str| crd("Namespaced", &[("v1alpha1", true, true, spec)], "", "");
    let cases: &[(&str, String, Cfg, &[&str])] = &[
        (
            "defaultvaluechanged",
            memcached(
                "{type: integer, minimum: 1, description: Size defines the number}",
                "{type: string, default: Unmanaged, enum: [Managed, Unmanaged]}",
            ),
            Crdify,
            DEF,
        ),
        (
            "defaultvalueremoved",
            memcached(
                "{type: integer, minimum: 1, description: Size defines the number}",
                "{type: string, enum: [Managed, Unmanaged]}",
            ),
            Crdify,
            DEF,
        ),
        (
            "descriptionchanged",
            memcached(
                "{type: integer, minimum: 1, description: Size defines how many}",
                "{type: string, default: Managed, enum: [Managed, Unmanaged]}",
            ),
            Crdify,
            &["crd-upgrade-description-changed"],
        ),
        (
            "enumvalueadded",
            memcached(
                "{type: integer, minimum: 1, description: Size defines the number}",
                "{type: string, default: Managed, enum: [Managed, Unmanaged, FooBar]}",
            ),
            Crdify,
            ENUM,
        ),
        (
            "enumvalueremoved",
            memcached(
                "{type: integer, minimum: 1, description: Size defines the number}",
                "{type: string, default: Managed, enum: [Managed]}",
            ),
            Crdify,
            ENUM,
        ),
        (
            "existingfieldremoved",
            "{type: object, properties: {size: {type: integer, minimum: 1, description: Size defines the number}}}".to_string(),
            Crdify,
            &["crd-upgrade-field-removed"],
        ),
        (
            "minvalueincreased",
            memcached(
                "{type: integer, minimum: 10, description: Size defines the number}",
                "{type: string, default: Managed, enum: [Managed, Unmanaged]}",
            ),
            Crdify,
            &["crd-upgrade-minimum-tightened"],
        ),
        (
            "typechanged (with the format the golden also drops: unhandled)",
            memcached(
                "{type: string, minimum: 1, description: Size defines the number}",
                "{type: string, default: Managed, enum: [Managed, Unmanaged]}",
            ),
            Crdify,
            &["crd-upgrade-type-changed"],
        ),
        ("validchanges", base.clone(), Crdify, NONE),
    ];
    let mut failed = Vec::new();
    for (name, new, cfg, want) in cases {
        let (got, msgs) = compare(&doc(&base), &doc(new), *cfg);
        if got != *want {
            failed.push(format!("{name}: want {want:?}, got {got:?} {msgs:#?}"));
        }
    }
    // multipleincompatible: scope, required, enum added, minimum increased.
    let multi = crd(
        "Cluster",
        &[(
            "v1alpha1",
            true,
            true,
            "{type: object, required: [mode], properties: {size: {type: integer, minimum: 10, description: Size defines the number}, mode: {type: string, default: Managed, enum: [Managed, Unmanaged, FooBar]}}}",
        )],
        "",
        "",
    );
    let (mut got, _) = compare(&doc(&base), &multi, Crdify);
    got.sort();
    let mut want = vec![
        "crd-upgrade-scope-changed",
        "crd-upgrade-required-added",
        "crd-upgrade-enum-restricted",
        "crd-upgrade-minimum-tightened",
    ];
    want.sort();
    if got != want {
        failed.push(format!("multipleincompatible: want {want:?}, got {got:?}"));
    }
    // typechanged with a format: type and unhandled, as the golden.
    let port = |t: &str, f: &str| {
        doc(&format!(
            "{{type: object, properties: {{containerPort: {{type: {t}{f}}}}}}}"
        ))
    };
    let (got, _) = compare(
        &port("integer", ", format: int32"),
        &port("string", ""),
        Crdify,
    );
    if got != ["crd-upgrade-type-changed", "crd-upgrade-unhandled"] {
        failed.push(format!("typechanged: got {got:?}"));
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// `graph check --crd-checks`: 0.1.0 -> 0.2.0 of fixtures/crd-safety/pkg
/// adds an enum value, allowed by OLM v1, an error under crdify's
/// defaults.
#[test]
fn graph_check_takes_the_configuration() {
    let pkg = fixtures().join("crd-safety/pkg");
    let pkg = pkg.to_str().expect("utf-8");
    let enum_edges = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["graph", "check", "-o", "json", pkg];
        args.extend(extra);
        let (_, out, err) = run(&args);
        let v: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
        v["reports"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|r| r["findings"].as_array().cloned().unwrap_or_default())
            .filter(|f| f["rule"] == "crd-upgrade-enum-restricted")
            .map(|f| f["message"].as_str().unwrap_or("").to_string())
            .collect()
    };
    assert!(enum_edges(&[]).is_empty());
    assert!(enum_edges(&["--crd-checks", "olm-v1"]).is_empty());
    let crdify = enum_edges(&["--crd-checks", "crdify-defaults"]);
    assert!(
        crdify
            .iter()
            .any(|m| m.contains("widget.v0.1.0 -> widget.v0.2.0") && m.contains("added")),
        "{crdify:#?}"
    );
    let (code, _, err) = run(&["graph", "check", "--crd-checks", "nonsense", pkg]);
    assert_eq!(code, 2, "{err}");
}

/// `graph path --crd-checks`, the same option as `graph check`'s: the step
/// 0.1.0 -> 0.3.0 of fixtures/crd-safety/pkg adds an enum value and changes
/// a description, safe for OLM v1 (the enum value is listed as a safe
/// change) and unsafe under crdify's defaults (then not listed as safe).
#[test]
fn graph_path_takes_the_configuration() {
    let pkg = fixtures().join("crd-safety/pkg");
    let pkg = pkg.to_str().expect("utf-8");
    let step = |extra: &[&str]| -> (Vec<String>, Vec<String>) {
        let mut args = vec![
            "graph", "path", pkg, "--from", "0.1.0", "--olm", "v1", "-o", "json",
        ];
        args.extend(extra);
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{out}{err}");
        let v: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
        let c = &v["steps"][0]["crdChanges"];
        let strings = |x: &serde_json::Value, key: Option<&str>| -> Vec<String> {
            x.as_array()
                .into_iter()
                .flatten()
                .map(|f| match key {
                    Some(k) => f[k].as_str().unwrap_or("").to_string(),
                    None => f.as_str().unwrap_or("").to_string(),
                })
                .collect()
        };
        (
            strings(&c["unsafe"], Some("rule")),
            strings(&c["safe"], None),
        )
    };
    for extra in [&[][..], &["--crd-checks", "olm-v1"][..]] {
        let (rules, safe) = step(extra);
        assert!(
            rules.contains(&"crd-upgrade-maximum-tightened".to_string()),
            "{rules:?}"
        );
        assert!(
            !rules.contains(&"crd-upgrade-enum-restricted".to_string()),
            "{rules:?}"
        );
        assert!(
            !rules.contains(&"crd-upgrade-description-changed".to_string()),
            "{rules:?}"
        );
        assert!(
            safe.iter()
                .any(|s| s.contains("enum values \"Medium\" added")),
            "{safe:?}"
        );
    }
    let (rules, safe) = step(&["--crd-checks", "crdify-defaults"]);
    assert!(
        rules.contains(&"crd-upgrade-enum-restricted".to_string()),
        "{rules:?}"
    );
    assert!(
        rules.contains(&"crd-upgrade-description-changed".to_string()),
        "{rules:?}"
    );
    assert!(!safe.iter().any(|s| s.contains("enum values")), "{safe:?}");
    let (code, _, err) = run(&[
        "graph",
        "path",
        pkg,
        "--from",
        "0.1.0",
        "--crd-checks",
        "nonsense",
    ]);
    assert_eq!(code, 2, "{err}");
}
