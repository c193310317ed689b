//! ClusterServiceVersion checks: operator-framework/api `csv.go`,
//! `typecheck.go` and `annotations.go`, plus the CSV blind spots (version
//! syntax, self-replacement, unknown install modes and webhook types, …).

use std::collections::BTreeSet;

use super::rules::{finding, finding_hint};
use super::Context;
use crate::bundle::Manifest;
use crate::diag::Finding;
use crate::k8s_names::{self as names, Apimachinery::V0_26};
use crate::path;
use crate::semver_range::Range as SemverRange;
use crate::yaml::{Node, Seg, Value};

/// Install mode types OLM knows.
pub const INSTALL_MODES: &[&str] = &[
    "OwnNamespace",
    "SingleNamespace",
    "MultiNamespace",
    "AllNamespaces",
];

/// Webhook definition types OLM knows.
pub const WEBHOOK_TYPES: &[&str] = &[
    "ValidatingAdmissionWebhook",
    "MutatingAdmissionWebhook",
    "ConversionWebhook",
];

/// Annotation keys OLM reads case-sensitively (annotations.go).
const CASE_SENSITIVE_ANNOTATIONS: &[&str] = &[
    "olm.operatorGroup",
    "olm.operatorNamespace",
    "olm.targetNamespaces",
    "olm.providedAPIs",
    "olm.skipRange",
];

/// The warning text of operator-framework/api for a missing minKubeVersion.
const MIN_KUBE_VERSION_WARNING: &str = "csv.Spec.minKubeVersion is not informed. It is recommended you provide this information. \
Otherwise, it would mean that your operator project can be distributed and installed in any cluster version available, \
which is not necessarily the case for all projects.";

use crate::bundle::Gvk;

/// operator-framework/api's wording: the group version (no `/` for the
/// core group), then the kind.
fn gvk_string(g: &Gvk) -> String {
    if g.group.is_empty() {
        format!("{}, Kind={}", g.version, g.kind)
    } else {
        g.to_string()
    }
}

fn text(n: &Node) -> String {
    match &n.value {
        Value::Str(s) => s.clone(),
        Value::Null => String::new(),
        _ => n.raw().map(String::from).unwrap_or_default(),
    }
}

fn seq(n: Option<&Node>) -> &[Node] {
    match n.map(|n| &n.value) {
        Some(Value::Seq(items)) => items,
        _ => &[],
    }
}

/// The CSV name rule of csv.go: a DNS-1123 subdomain that is also a valid
/// label value (OLM labels objects with it).
fn csv_name_violations(name: &str) -> Vec<String> {
    let mut v = names::dns1123_subdomain(name);
    v.extend(names::label_value(name, V0_26));
    v
}

/// Runs the CSV checks on the bundle's first CSV.
pub fn check(ctx: &Context, out: &mut Vec<Finding>) {
    let Some(m) = ctx.bundle.csv_manifest() else {
        return;
    };
    // `ctx.csv` is the CSV when it decodes: decode it again only to say why
    // it does not (every bundle's CSV was decoded twice).
    if let Some(Err(e)) = ctx.csv.is_none().then(|| ctx.bundle.csv()).flatten() {
        out.push(
            finding(
                "csv-decode",
                format!("the ClusterServiceVersion does not decode: {e}"),
            )
            .at(m.location(&e.segments())),
        );
    }
    let root = &m.root;
    let name = m.name.as_str();
    let loc = |p: &[Seg]| m.location(p);

    if m.api_version.is_empty() {
        out.push(
            finding(
                "csv-api-version-missing",
                format!("({name}) 'apiVersion' is missing"),
            )
            .at(loc(&[])),
        );
    }

    // Names.
    let v = csv_name_violations(name);
    if !v.is_empty() {
        out.push(
            finding(
                "csv-name-invalid",
                format!("(metadata.name) `{name}` is invalid: {}", v.join("; ")),
            )
            .at(loc(&path!["metadata", "name"])),
        );
    }
    if let Some(rn) = root.at(&path!["spec", "replaces"]) {
        let replaces = text(rn);
        if !replaces.is_empty() {
            let v = csv_name_violations(&replaces);
            if !v.is_empty() {
                out.push(
                    finding(
                        "csv-replaces-invalid",
                        format!("spec.replaces `{replaces}` is invalid: {}", v.join("; ")),
                    )
                    .at(loc(&path!["spec", "replaces"])),
                );
            }
            if replaces == name {
                out.push(
                    finding_hint(
                        "csv-replaces-self",
                        format!("spec.replaces names this CSV itself (`{name}`), a cycle in the upgrade graph"),
                        "set spec.replaces to the CSV name of the previous bundle, or remove it",
                    )
                    .at(loc(&path!["spec", "replaces"])),
                );
            }
        }
    }
    for (i, s) in seq(root.at(&path!["spec", "skips"])).iter().enumerate() {
        if text(s) == name && !name.is_empty() {
            out.push(
                finding_hint(
                    "csv-skips-self",
                    format!("spec.skips lists this CSV itself (`{name}`)"),
                    "remove it from spec.skips",
                )
                .at(loc(&path!["spec", "skips", i])),
            );
        }
    }

    check_version(m, out);
    check_examples(m, out);
    check_install_modes(m, out);
    check_min_kube_version(m, out);
    check_mandatory_fields(m, out);
    check_annotation_names(m, out);
    check_install_strategy(m, out);
    check_webhooks_and_images(m, out);
}

/// `1.2` → `1.2.0`, `v1` → `1.0.0`: what a tolerant parse would read.
fn strict_guess(v: &str) -> String {
    let v = v.trim().trim_start_matches('v');
    let mut parts: Vec<&str> = v.split('.').collect();
    while parts.len() < 3 {
        parts.push("0");
    }
    parts.join(".")
}

fn check_version(m: &Manifest, out: &mut Vec<Finding>) {
    let root = &m.root;
    let Some(vn) = root.at(&path!["spec", "version"]) else {
        out.push(
            finding_hint(
                "csv-version-missing",
                format!("({}) spec.version is not set", m.name),
                "set spec.version to the bundle's semantic version; semver upgrade modes and FBC need it",
            )
            .at(m.location(&path!["spec"])),
        );
        return;
    };
    let written = text(vn);
    let not_string = !matches!(vn.value, Value::Str(_));
    let parsed = semver::Version::parse(&written);
    match parsed {
        Err(e) => {
            let why = if not_string {
                format!("`{written}` was read as a {}", vn.type_name())
            } else {
                e.to_string()
            };
            // OLM reads spec.version with semver.ParseTolerant (a leading
            // `v`, missing minor or patch are accepted), but opm parses it
            // strictly when it adds the bundle to an index or renders it.
            const WHY: &str = "OLM itself accepts it (it parses spec.version tolerantly), but opm parses it strictly and refuses the bundle when building or rendering an index, and semver ordering of channels needs strict versions";
            let hint = if not_string {
                format!(
                    "quote it and give all of major.minor.patch, e.g. \"{}\": OLM decodes spec.version from a JSON string only, so it refuses this CSV, and opm refuses it too",
                    strict_guess(&written)
                )
            } else if written.starts_with('v') {
                format!("write `{}`: {WHY}", written.trim_start_matches('v'))
            } else if written.split('.').count() < 3 {
                format!("write all of major.minor.patch, quoted, e.g. \"1.2.0\": {WHY}")
            } else {
                format!("use a strict semantic version (https://semver.org): {WHY}")
            };
            out.push(
                finding_hint(
                    "csv-version-not-semver",
                    format!("spec.version `{written}` is not a strict semantic version: {why}"),
                    &hint,
                )
                .at(m.location(&path!["spec", "version"])),
            );
        }
        Ok(version) => {
            // The name's version part, when it has one that parses.
            if let Some((_, tail)) = m.name.split_once('.') {
                let tail = tail.trim_start_matches('v');
                if let Ok(name_version) = semver::Version::parse(tail) {
                    if name_version != version {
                        out.push(
                            finding_hint(
                                "csv-name-version-mismatch",
                                format!(
                                    "metadata.name `{}` says version {name_version} but spec.version is {version}",
                                    m.name
                                ),
                                "make the two agree; other bundles' spec.replaces refer to the name",
                            )
                            .at(m.location(&path!["metadata", "name"]))
                            .related(m.location(&path!["spec", "version"])),
                        );
                    }
                }
            }
        }
    }
}

fn provided_apis(m: &Manifest, out: &mut Vec<Finding>) -> BTreeSet<Gvk> {
    let root = &m.root;
    let mut provided = BTreeSet::new();
    let owned = seq(root.at(&path!["spec", "customresourcedefinitions", "owned"]));
    for (i, o) in owned.iter().enumerate() {
        let name = o.get("name").map(text).unwrap_or_default();
        let Some((_, group)) = name.split_once('.') else {
            out.push(
                finding(
                    "csv-owned-crd-name-invalid",
                    format!("couldn't parse plural.group from crd name: {name}"),
                )
                .at(m.location(&path![
                    "spec",
                    "customresourcedefinitions",
                    "owned",
                    i,
                    "name"
                ])),
            );
            continue;
        };
        provided.insert(Gvk::new(
            group,
            o.get("version").map(text).unwrap_or_default(),
            o.get("kind").map(text).unwrap_or_default(),
        ));
    }
    for a in seq(root.at(&path!["spec", "apiservicedefinitions", "owned"])) {
        provided.insert(Gvk::new(
            a.get("group").map(text).unwrap_or_default(),
            a.get("version").map(text).unwrap_or_default(),
            a.get("kind").map(text).unwrap_or_default(),
        ));
    }
    provided
}

fn check_examples(m: &Manifest, out: &mut Vec<Finding>) {
    let root = &m.root;
    let ann_path = path!["metadata", "annotations"];
    let annotations = root.at(&ann_path);
    let empty = match annotations.map(|a| &a.value) {
        Some(Value::Map(e)) => e.is_empty(),
        _ => true,
    };
    if empty {
        out.push(
            finding(
                "csv-annotations-missing",
                format!("({}) annotations not found", m.name),
            )
            .at(m.location(&path!["metadata"])),
        );
        return;
    }
    let alm = root.at(&path!["metadata", "annotations", "alm-examples"]);
    let olm = root.at(&path!["metadata", "annotations", "olm.examples"]);
    let (node, key) = match (alm, olm) {
        (None, None) => {
            out.push(
                finding_hint(
                    "csv-examples-missing",
                    format!("({}) example annotations not found", m.name),
                    "add an alm-examples annotation: a JSON list with one example object per owned API",
                )
                .at(m.location(&ann_path)),
            );
            return;
        }
        (Some(a), Some(_)) => {
            out.push(
                finding(
                    "csv-examples-both",
                    format!("({}) both `alm-examples` and `olm.examples` are present. Checking only `alm-examples`", m.name),
                )
                .at(m.key_location(&path!["metadata", "annotations", "olm.examples"])),
            );
            (a, "alm-examples")
        }
        (Some(a), None) => (a, "alm-examples"),
        (None, Some(o)) => (o, "olm.examples"),
    };
    let here = m.location(&path!["metadata", "annotations", key]);
    let examples = text(node);
    let mut parsed: BTreeSet<Gvk> = BTreeSet::new();
    if !examples.trim().is_empty() {
        let json: serde_json::Value = match serde_json::from_str(&examples) {
            Ok(j) => j,
            Err(e) => {
                out.push(
                    finding(
                        "csv-examples-invalid",
                        format!("invalid example: `{key}` is not valid JSON: {e}"),
                    )
                    .at(here),
                );
                return;
            }
        };
        let items: Vec<&serde_json::Value> = match &json {
            serde_json::Value::Array(a) => a.iter().collect(),
            serde_json::Value::Null => Vec::new(),
            _ => {
                out.push(
                    finding_hint(
                        "csv-examples-invalid",
                        format!("error decoding example CustomResource: `{key}` must be a JSON list of objects"),
                        "wrap the example object in [ ]",
                    )
                    .at(here),
                );
                return;
            }
        };
        for (i, item) in items.iter().enumerate() {
            let kind = item.get("kind").and_then(|k| k.as_str()).unwrap_or("");
            let Some(obj) = item.as_object().filter(|_| !kind.is_empty()) else {
                out.push(
                    finding(
                        "csv-examples-invalid",
                        format!(
                            "error decoding example CustomResource: item {} of `{key}` has no kind",
                            i + 1
                        ),
                    )
                    .at(here.clone()),
                );
                return;
            };
            let api = obj.get("apiVersion").and_then(|v| v.as_str()).unwrap_or("");
            let (g, v) = api.rsplit_once('/').unwrap_or(("", api));
            parsed.insert(Gvk::new(g, v, kind));
        }
    }
    let provided = provided_apis(m, out);
    for ex in parsed.difference(&provided) {
        out.push(
            finding_hint(
                "csv-example-without-api",
                format!("example {} must have a provided API", gvk_string(ex)),
                "every example's apiVersion and kind must match an owned CRD or API service of the CSV",
            )
            .at(here.clone()),
        );
    }
    for api in provided.difference(&parsed) {
        out.push(
            finding(
                "csv-api-without-example",
                format!(
                    "provided API {} should have an example annotation",
                    gvk_string(api)
                ),
            )
            .at(here.clone()),
        );
    }
}

fn check_install_modes(m: &Manifest, out: &mut Vec<Finding>) {
    let root = &m.root;
    let modes = seq(root.at(&path!["spec", "installModes"]));
    if modes.is_empty() {
        out.push(
            finding_hint(
                "csv-install-modes-missing",
                format!("({}) install modes not found", m.name),
                "list the four install modes (OwnNamespace, SingleNamespace, MultiNamespace, AllNamespaces) with supported: true or false",
            )
            .at(m.location(&path!["spec", "installModes"])),
        );
        return;
    }
    let mut seen = BTreeSet::new();
    let mut any_supported = false;
    for (i, mode) in modes.iter().enumerate() {
        let ty = mode.get("type").map(text).unwrap_or_default();
        let supported = matches!(
            mode.get("supported").map(|s| &s.value),
            Some(Value::Bool(true))
        );
        // operator-framework/api's validateInstallModes never fills its set,
        // so it reports no duplicate and counts every supported entry.
        any_supported |= supported;
        if !seen.insert(ty.clone()) {
            out.push(
                finding_hint(
                    "csv-install-modes-duplicate",
                    format!("({}) install mode type `{ty}` appears twice", m.name),
                    "OLM builds a set of install modes and fails the CSV (reason InvalidInstallModes) when a type repeats; keep one entry per type",
                )
                .at(m.location(&path!["spec", "installModes", i, "type"])),
            );
        }
        if !INSTALL_MODES.contains(&ty.as_str()) {
            let near = INSTALL_MODES.iter().find(|k| {
                k.eq_ignore_ascii_case(&ty)
                    || k.trim_end_matches('s')
                        .eq_ignore_ascii_case(ty.trim_end_matches('s'))
            });
            let hint = match near {
                Some(k) => format!("did you mean `{k}`? OLM treats an unknown type as unsupported"),
                None => format!(
                    "use one of {}; OLM treats an unknown type as unsupported",
                    INSTALL_MODES.join(", ")
                ),
            };
            out.push(
                finding_hint(
                    "csv-install-mode-unknown",
                    format!("unknown install mode type `{ty}`"),
                    &hint,
                )
                .at(m.location(&path!["spec", "installModes", i, "type"])),
            );
        }
    }
    let has_conversion = seq(root.at(&path!["spec", "webhookdefinitions"]))
        .iter()
        .any(|w| !seq(w.get("conversionCRDs")).is_empty());
    if has_conversion {
        let only_all = modes.iter().all(|mode| {
            let ty = mode.get("type").map(text).unwrap_or_default();
            let supported = matches!(
                mode.get("supported").map(|s| &s.value),
                Some(Value::Bool(true))
            );
            if ty == "AllNamespaces" {
                supported
            } else {
                !supported
            }
        });
        if !only_all {
            out.push(
                finding(
                    "csv-conversion-webhook-install-modes",
                    format!("({}) only AllNamespaces InstallModeType is supported when conversionCRDs is present", m.name),
                )
                .at(m.location(&path!["spec", "installModes"])),
            );
        }
    }
    if !any_supported {
        out.push(
            finding(
                "csv-install-modes-none-supported",
                format!("({}) none of InstallModeTypes are supported", m.name),
            )
            .at(m.location(&path!["spec", "installModes"])),
        );
    }
}

fn check_min_kube_version(m: &Manifest, out: &mut Vec<Finding>) {
    let node = m.root.at(&path!["spec", "minKubeVersion"]);
    let v = node.map(text).unwrap_or_default();
    if v.trim().is_empty() {
        out.push(
            finding(
                "csv-min-kube-version-missing",
                format!("({}) {MIN_KUBE_VERSION_WARNING}", m.name),
            )
            .at(m.location(&path!["spec", "minKubeVersion"])),
        );
    } else if semver::Version::parse(&v).is_err() {
        out.push(
            finding_hint(
                "csv-min-kube-version-invalid",
                format!(
                    "({}) csv.Spec.MinKubeVersion has an invalid value: {v}",
                    m.name
                ),
                "write a full semantic version such as \"1.25.0\"",
            )
            .at(m.location(&path!["spec", "minKubeVersion"])),
        );
    }
}

fn is_empty(n: Option<&Node>) -> bool {
    match n.map(|n| &n.value) {
        None | Some(Value::Null) => true,
        Some(Value::Str(s)) => s.is_empty(),
        Some(Value::Seq(s)) => s.is_empty(),
        Some(Value::Map(e)) => e.is_empty(),
        _ => false,
    }
}

/// Whether a value decodes to Go's zero value (`reflect.Value.IsZero`), with
/// mappings read as structs: null, "", false and 0 are zero, a mapping is
/// zero when all its values are, and a sequence is never zero (even `[]`
/// decodes to a non-nil slice).
fn go_zero(n: Option<&Node>) -> bool {
    match n.map(|n| &n.value) {
        None | Some(Value::Null) => true,
        Some(Value::Str(s)) => s.is_empty(),
        Some(Value::Bool(b)) => !b,
        Some(Value::Int(i)) => *i == 0,
        Some(Value::UInt(u)) => *u == 0,
        Some(Value::Float(f)) => *f == 0.0,
        Some(Value::Seq(_)) => false,
        Some(Value::Map(entries)) => entries.iter().all(|e| go_zero(Some(&e.value))),
    }
}

/// typecheck.go: walking the CSV struct, a field whose JSON tag has no
/// `omitempty` and whose value is Go's zero value is an error (`Status`
/// excepted); structs are walked into only when they are not zero. For a CSV
/// that means spec, spec.displayName, spec.install, spec.install.strategy
/// and, once spec.install.spec is set, spec.install.spec.deployments. (The
/// reference's old warnings for empty optional fields are gone upstream.)
fn check_mandatory_fields(m: &Manifest, out: &mut Vec<Finding>) {
    let root = &m.root;
    let mut missing = |p: &[Seg], field: &str, value: &str| {
        out.push(
            finding(
                "csv-field-missing",
                format!("Field {field}, Value {value}: required field missing"),
            )
            .at(m.location(p)),
        );
    };
    if go_zero(root.get("spec")) {
        missing(&path!["spec"], "Spec", "struct");
        return;
    }
    if go_zero(root.at(&path!["spec", "displayName"])) {
        missing(&path!["spec", "displayName"], "Spec.DisplayName", "field");
    }
    // The install strategy is zero when its name is empty and none of its
    // spec's lists is set (not even to []).
    let install_spec = |k: &str| root.at(&path!["spec", "install", "spec", k]);
    let spec_set = ["deployments", "permissions", "clusterPermissions"]
        .iter()
        .any(|k| !matches!(install_spec(k).map(|n| &n.value), None | Some(Value::Null)));
    let strategy = root.at(&path!["spec", "install", "strategy"]);
    if go_zero(strategy) && !spec_set {
        missing(&path!["spec", "install"], "Spec.InstallStrategy", "struct");
        return;
    }
    if go_zero(strategy) {
        missing(
            &path!["spec", "install", "strategy"],
            "Spec.InstallStrategy.StrategyName",
            "field",
        );
    }
    if spec_set
        && matches!(
            install_spec("deployments").map(|n| &n.value),
            None | Some(Value::Null)
        )
    {
        missing(
            &path!["spec", "install", "spec", "deployments"],
            "Spec.InstallStrategy.StrategySpec.DeploymentSpecs",
            "field",
        );
    }
}

fn check_annotation_names(m: &Manifest, out: &mut Vec<Finding>) {
    let Some(Value::Map(entries)) = m
        .root
        .at(&path!["metadata", "annotations"])
        .map(|n| &n.value)
    else {
        return;
    };
    for e in entries {
        if let Some(known) = CASE_SENSITIVE_ANNOTATIONS
            .iter()
            .find(|k| k.eq_ignore_ascii_case(&e.key) && **k != e.key)
        {
            out.push(
                finding(
                    "csv-annotation-case",
                    format!(
                        "provided annotation {} uses wrong case and should be {known} instead",
                        e.key
                    ),
                )
                .at(m.key_location(&path![
                    "metadata",
                    "annotations",
                    e.key.as_str()
                ])),
            );
        }
        if e.key == "olm.properties" {
            out.push(
                finding(
                    "csv-olm-properties-annotation",
                    "found olm.properties annotation, please define these properties in metadata/properties.yaml instead",
                )
                .at(m.key_location(&path!["metadata", "annotations", "olm.properties"])),
            );
        }
        if e.key == "olm.skipRange" {
            let range = text(&e.value);
            if let Err(err) = SemverRange::parse(&range) {
                out.push(
                    finding_hint(
                        "csv-skip-range-invalid",
                        format!("olm.skipRange `{range}` is not a valid semver range: {err}"),
                        "write a blang/semver range such as `>=1.0.0 <1.3.0`; OLM fails to resolve the package otherwise",
                    )
                    .at(m.location(&path!["metadata", "annotations", "olm.skipRange"])),
                );
            }
        }
    }
}

fn check_install_strategy(m: &Manifest, out: &mut Vec<Finding>) {
    let deployments = seq(m.root.at(&path!["spec", "install", "spec", "deployments"]));
    for (i, d) in deployments.iter().enumerate() {
        let name = d.get("name").map(text).unwrap_or_default();
        if name.is_empty() {
            out.push(
                finding_hint(
                    "csv-deployment-name-missing",
                    format!(
                        "deployment {} of spec.install.spec.deployments has no name",
                        i + 1
                    ),
                    "OLM creates a Deployment of this name; the install fails without one",
                )
                .at(m.location(&path![
                    "spec",
                    "install",
                    "spec",
                    "deployments",
                    i,
                    "name"
                ])),
            );
            continue;
        }
        let v = names::dns1123_subdomain(&name);
        if !v.is_empty() {
            out.push(
                finding(
                    "resource-name-invalid",
                    format!("deployment name `{name}` is invalid: {}", v.join("; ")),
                )
                .at(m.location(&path![
                    "spec",
                    "install",
                    "spec",
                    "deployments",
                    i,
                    "name"
                ])),
            );
        }
    }
}

fn check_webhooks_and_images(m: &Manifest, out: &mut Vec<Finding>) {
    for (i, w) in seq(m.root.at(&path!["spec", "webhookdefinitions"]))
        .iter()
        .enumerate()
    {
        let ty = w.get("type").map(text).unwrap_or_default();
        if !WEBHOOK_TYPES.contains(&ty.as_str()) {
            out.push(
                finding_hint(
                    "csv-webhook-type-unknown",
                    format!("webhook definition {} has unknown type `{ty}`", i + 1),
                    &format!("use one of {}", WEBHOOK_TYPES.join(", ")),
                )
                .at(m.location(&path!["spec", "webhookdefinitions", i, "type"])),
            );
        }
    }
    for (i, r) in seq(m.root.at(&path!["spec", "relatedImages"]))
        .iter()
        .enumerate()
    {
        if is_empty(r.get("image")) {
            let name = r.get("name").map(text).unwrap_or_default();
            out.push(
                finding_hint(
                    "csv-related-image-missing",
                    format!("related image {} (`{name}`) has no image", i + 1),
                    "set `image:` to a pullable reference, preferably by digest; mirroring tools fail on an empty one",
                )
                .at(m.location(&path!["spec", "relatedImages", i])),
            );
        }
    }
}
