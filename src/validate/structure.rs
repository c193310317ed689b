//! Bundle layout, annotations, dependencies and the objects of `manifests/`:
//! operator-registry's `ValidateBundleFormat` and `ValidateBundleContent`
//! (which `operator-sdk bundle validate` runs before the API validators), plus
//! the layout blind spots they miss.

use super::rules::{finding, finding_hint};
use super::Context;
use crate::bundle::{keys, Manifest};
use crate::diag::{Finding, Location};
use crate::k8s_names::{self as names, Apimachinery::V0_26};
use crate::path;
use crate::semver_range::Range as SemverRange;
use crate::yaml::{Node, Value};

/// Kinds a registry+v1 bundle may hold (operator-registry
/// `pkg/lib/bundle/supported_resources.go`, with the console and network
/// kinds OLM added since).
pub const SUPPORTED_KINDS: &[&str] = &[
    "ClusterServiceVersion",
    "CustomResourceDefinition",
    "Secret",
    "ClusterRole",
    "ClusterRoleBinding",
    "ConfigMap",
    "ServiceAccount",
    "Service",
    "Role",
    "RoleBinding",
    "PrometheusRule",
    "ServiceMonitor",
    "PodDisruptionBudget",
    "PriorityClass",
    "VerticalPodAutoscaler",
    "ConsoleYAMLSample",
    "ConsoleQuickStart",
    "ConsoleCLIDownload",
    "ConsoleLink",
    "NetworkPolicy",
];

/// Runs the layout, annotation, dependency and object checks.
pub fn check(ctx: &Context, out: &mut Vec<Finding>) {
    check_layout(ctx, out);
    check_annotations(ctx, out);
    check_dependencies(ctx, out);
    check_properties(ctx, out);
    check_manifest_files(ctx, out);
    check_size(ctx, out);
    for m in &ctx.bundle.manifests {
        check_object(m, out);
    }
}

fn check_layout(ctx: &Context, out: &mut Vec<Finding>) {
    let dir = &ctx.bundle.dir;
    if !dir.join("metadata").is_dir() && ctx.bundle.annotations.is_none() {
        out.push(
            finding_hint(
                "bundle-no-metadata-dir",
                "the bundle has no metadata/ directory",
                "create metadata/annotations.yaml with the package and channel annotations",
            )
            .at(Location::file(dir)),
        );
    }
}

/// `manifests/`, `./manifests`, `manifests` all name the same directory.
fn normalize_dir(v: &str) -> &str {
    let v = v.trim();
    let v = v.strip_prefix("./").unwrap_or(v);
    let v = v.strip_prefix('/').unwrap_or(v);
    v.trim_end_matches('/')
}

fn check_annotations(ctx: &Context, out: &mut Vec<Finding>) {
    let bundle = ctx.bundle;
    let Some(ann) = &bundle.annotations else {
        if bundle.dir.join("metadata").is_dir() {
            out.push(
                finding_hint(
                    "annotations-missing",
                    "metadata/ has no annotations file",
                    "add metadata/annotations.yaml with an `annotations:` mapping of the operators.operatorframework.io.bundle.* keys",
                )
                .at(Location::file(bundle.dir.join("metadata"))),
            );
        }
        return;
    };
    let file_loc = || match &ann.source {
        Some(src) => src.location(&path!["annotations"]),
        None => Location::file(&bundle.dir),
    };
    let val_loc = |key: &str| ann.location(key).unwrap_or_else(file_loc);
    if ann.values.is_empty() && ann.source.is_some() {
        // The loader already reported the missing mapping.
        return;
    }
    for key in [
        keys::MEDIATYPE,
        keys::MANIFESTS,
        keys::METADATA,
        keys::PACKAGE,
        keys::CHANNELS,
    ] {
        if ann.get(key).is_none() {
            out.push(
                finding("annotation-missing", format!("missing annotation `{key}`")).at(file_loc()),
            );
        }
    }
    if let Some(mt) = ann.get(keys::MEDIATYPE) {
        if mt != "registry+v1" {
            out.push(
                finding_hint(
                    "annotation-mediatype-invalid",
                    format!(
                        "annotation `{}` is `{mt}`, expected `registry+v1`",
                        keys::MEDIATYPE
                    ),
                    "bundles with a ClusterServiceVersion are registry+v1",
                )
                .at(val_loc(keys::MEDIATYPE)),
            );
        }
    }
    for key in [keys::PACKAGE, keys::CHANNELS] {
        if let Some(v) = ann.get(key) {
            let empty = if key == keys::CHANNELS {
                ann.channels().is_empty()
            } else {
                v.trim().is_empty()
            };
            if empty {
                out.push(
                    finding(
                        "annotation-empty",
                        format!("annotation `{key}` must have a non-empty value"),
                    )
                    .at(val_loc(key)),
                );
            }
        }
    }
    match ann.default_channel() {
        None => out.push(
            finding_hint(
                "annotation-default-channel-missing",
                format!("annotation `{}` is not set", keys::DEFAULT_CHANNEL),
                "without it opm makes the first channel of the first bundle added the default; set it explicitly",
            )
            .at(file_loc()),
        ),
        Some(d) if d.trim().is_empty() => out.push(
            finding(
                "annotation-empty",
                format!("annotation `{}` must have a non-empty value", keys::DEFAULT_CHANNEL),
            )
            .at(val_loc(keys::DEFAULT_CHANNEL)),
        ),
        Some(d) => {
            let channels = ann.channels();
            if !channels.is_empty() && !channels.iter().any(|c| c == d.trim()) {
                out.push(
                    finding_hint(
                        "annotation-default-channel-not-in-channels",
                        format!(
                            "default channel `{d}` is not one of the bundle's channels ({})",
                            channels.join(", ")
                        ),
                        "opm makes it the package's default channel when this is the newest bundle, and fails if no bundle of the package is in that channel; add it to channels.v1 or pick one of them",
                    )
                    .at(val_loc(keys::DEFAULT_CHANNEL)),
                );
            }
        }
    }
    for (key, dir, rule) in [
        (
            keys::MANIFESTS,
            "manifests",
            "annotation-manifests-path-mismatch",
        ),
        (
            keys::METADATA,
            "metadata",
            "annotation-metadata-path-mismatch",
        ),
    ] {
        if let Some(v) = ann.get(key) {
            if normalize_dir(v) != dir {
                out.push(
                    finding_hint(
                        rule,
                        format!(
                            "annotation `{key}` is `{v}`, but the bundle keeps these files in `{dir}/`"
                        ),
                        &format!("set it to `{dir}/`: bundle image unpackers look for the files where it points"),
                    )
                    .at(val_loc(key)),
                );
            }
        }
    }
}

fn str_at<'a>(node: &'a Node, key: &str) -> Option<&'a str> {
    node.get(key).and_then(Node::as_str)
}

fn check_dependencies(ctx: &Context, out: &mut Vec<Finding>) {
    let Some(md) = &ctx.bundle.dependencies else {
        return;
    };
    let Some(Value::Seq(items)) = md.root.get("dependencies").map(|n| &n.value) else {
        out.push(
            finding(
                "dependency-invalid",
                format!("{} has no `dependencies` list", md.file.rel_path),
            )
            .at(md.location(&path!["dependencies"])),
        );
        return;
    };
    for (i, item) in items.iter().enumerate() {
        let here = |p: &[crate::yaml::Seg]| {
            let mut full = path!["dependencies", i].to_vec();
            full.extend_from_slice(p);
            md.location(&full)
        };
        let ty = str_at(item, "type").unwrap_or("");
        let value = item.get("value");
        let need = |field: &str, out: &mut Vec<Finding>| {
            let present = value
                .and_then(|v| v.get(field))
                .is_some_and(|n| !matches!(&n.value, Value::Null) && n.as_str() != Some(""));
            if !present {
                out.push(
                    finding(
                        "dependency-invalid",
                        format!("dependency {} of type `{ty}` has no `value.{field}`", i + 1),
                    )
                    .at(here(&path!["value"])),
                );
            }
        };
        match ty {
            "olm.package" => {
                need("packageName", out);
                match value.and_then(|v| v.get("version")) {
                    None => need("version", out),
                    Some(vn) => {
                        let text = vn
                            .as_str()
                            .map(String::from)
                            .unwrap_or_else(|| vn.raw().unwrap_or_default().to_string());
                        if let Err(e) = SemverRange::parse(&text) {
                            out.push(
                                finding_hint(
                                    "dependency-invalid",
                                    format!(
                                        "dependency {}: version range `{text}` is invalid: {e}",
                                        i + 1
                                    ),
                                    "write a blang/semver range such as `>=1.0.0 <2.0.0`",
                                )
                                .at(here(&path!["value", "version"])),
                            );
                        }
                    }
                }
            }
            "olm.gvk" => {
                for f in ["group", "version", "kind"] {
                    need(f, out);
                }
            }
            "olm.label" => need("label", out),
            "olm.constraint" => check_constraint(value, &here, i, out),
            _ => out.push(
                finding_hint(
                    "dependency-type-unsupported",
                    format!("dependency {} has unsupported type `{ty}`", i + 1),
                    "use olm.package, olm.gvk, olm.label or olm.constraint",
                )
                .at(here(&path!["type"])),
            ),
        }
    }
}

/// An `olm.constraint` dependency: operator-registry validates its CEL rule
/// the way OLM compiles it. A constraint may instead be a gvk, package,
/// all, any or not constraint; one with none of these is refused as having
/// no `cel` field.
fn check_constraint(
    value: Option<&Node>,
    here: &dyn Fn(&[crate::yaml::Seg]) -> crate::diag::Location,
    i: usize,
    out: &mut Vec<Finding>,
) {
    let has = |k: &str| {
        value
            .and_then(|v| v.get(k))
            .is_some_and(|n| !matches!(n.value, Value::Null))
    };
    if !has("cel") {
        if !["gvk", "package", "all", "any", "not"]
            .iter()
            .any(|k| has(k))
        {
            out.push(
                finding_hint(
                    "dependency-cel-missing",
                    format!("dependency {}: The CEL field is missing", i + 1),
                    "give the constraint a `cel: {rule: ...}` (or a gvk, package, all, any or not constraint)",
                )
                .at(here(&path!["value"])),
            );
        }
        return;
    }
    let rule_node = value.and_then(|v| v.get("cel")).and_then(|c| c.get("rule"));
    let rule = rule_node.and_then(Node::as_str).unwrap_or("");
    if rule.trim().is_empty() {
        out.push(
            finding(
                "dependency-cel-rule-missing",
                format!("dependency {}: The CEL expression is missing", i + 1),
            )
            .at(here(&path!["value", "cel"])),
        );
        return;
    }
    if let Err(e) = super::cel::check_rule(rule) {
        out.push(
            finding_hint(
                "dependency-cel-invalid",
                format!("dependency {}: Invalid CEL expression: {e}", i + 1),
                "the rule sees `properties` (a list of {type, value}) and `semver_compare(a, b)`, and must be a boolean",
            )
            .at(here(&path!["value", "cel", "rule"])),
        );
    }
}

/// operator-registry's property checks: a property (same type and value)
/// listed twice in the CSV's `olm.properties` annotation, twice in
/// `metadata/properties.yaml`, or in both. OLM merges the two lists.
fn check_properties(ctx: &Context, out: &mut Vec<Finding>) {
    let key = |t: &serde_json::Value| {
        (
            t.get("type")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string(),
            t.get("value").map(|v| v.to_string()).unwrap_or_default(),
        )
    };
    let mut from_csv: Vec<(String, String)> = Vec::new();
    if let Some(m) = ctx.bundle.csv_manifest() {
        // Read from the located tree, not from a JSON copy of the whole CSV.
        let ann = m
            .root
            .at(&path!["metadata", "annotations", "olm.properties"])
            .and_then(Node::as_str);
        if let Some(list) = ann.and_then(|a| serde_json::from_str::<serde_json::Value>(a).ok()) {
            let here = m.location(&path!["metadata", "annotations", "olm.properties"]);
            for item in list.as_array().map(Vec::as_slice).unwrap_or_default() {
                let k = key(item);
                if from_csv.contains(&k) {
                    out.push(
                        finding(
                            "property-duplicate-in-csv-annotation",
                            format!(
                                "property (type {}, value {}) is duplicated in the CSV's olm.properties annotation",
                                k.0, k.1
                            ),
                        )
                        .at(here.clone()),
                    );
                } else {
                    from_csv.push(k);
                }
            }
        }
    }
    let Some(md) = &ctx.bundle.properties else {
        return;
    };
    let json = md.root.to_json();
    let items = json
        .get("properties")
        .and_then(|v| v.as_array())
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut seen: Vec<(String, String)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let k = key(item);
        let here = md.location(&path!["properties", i]);
        if seen.contains(&k) {
            out.push(
                finding(
                    "property-duplicate-in-properties-file",
                    format!(
                        "property (type {}, value {}) is duplicated in {}",
                        k.0, k.1, md.file.rel_path
                    ),
                )
                .at(here),
            );
            continue;
        }
        if from_csv.contains(&k) {
            out.push(
                finding_hint(
                    "property-in-csv-and-properties-file",
                    format!(
                        "property (type {}, value {}) is defined both in {} and in the CSV's olm.properties annotation",
                        k.0, k.1, md.file.rel_path
                    ),
                    "keep it only in metadata/properties.yaml",
                )
                .at(here),
            );
        }
        seen.push(k);
    }
}

fn check_manifest_files(ctx: &Context, out: &mut Vec<Finding>) {
    let bundle = ctx.bundle;
    let csvs: Vec<&Manifest> = bundle.csvs().collect();
    if csvs.is_empty() && bundle.dir.join("manifests").is_dir() {
        let broken: Vec<&str> = bundle
            .load_findings
            .iter()
            .filter(|f| {
                matches!(
                    f.rule.as_str(),
                    "yaml-syntax" | "file-not-utf8" | "file-too-large"
                )
            })
            .filter_map(|f| f.location.as_ref())
            .filter(|l| l.file.starts_with(bundle.dir.join("manifests")))
            .filter_map(|l| l.file.file_name().and_then(|n| n.to_str()))
            .collect();
        let f = finding(
            "csv-missing",
            "no ClusterServiceVersion found in manifests/".to_string(),
        );
        let f = if broken.is_empty() {
            f.hint("a registry+v1 bundle needs exactly one object of kind ClusterServiceVersion")
        } else {
            f.hint(format!(
                "{} could not be read (see its own error); the CSV may be in it. operator-sdk reports this only as \"unable to find a csv\"",
                broken.join(", ")
            ))
        };
        out.push(f.at(Location::file(bundle.dir.join("manifests"))));
    }
    for extra in csvs.iter().skip(1) {
        out.push(
            finding(
                "csv-multiple",
                format!(
                    "a second ClusterServiceVersion `{}`; a bundle holds exactly one",
                    extra.name
                ),
            )
            .at(extra.location(&path!["kind"]))
            .related(csvs[0].location(&path!["kind"])),
        );
    }
    for (file, count) in &bundle.manifest_files {
        if *count < 2 {
            continue;
        }
        let docs: Vec<&Manifest> = bundle
            .manifests
            .iter()
            .filter(|m| std::sync::Arc::ptr_eq(&m.file, file))
            .collect();
        if docs.iter().any(|m| m.is_csv()) {
            out.push(
                finding_hint(
                    "csv-file-multiple-documents",
                    format!(
                        "{} holds {count} documents and one is the ClusterServiceVersion; opm and operator-sdk read one object per file, so which one they see is an accident",
                        file.rel_path
                    ),
                    "put each object in its own file",
                )
                .at(docs[1].location(&[])),
            );
            continue;
        }
        for m in docs.iter().skip(1) {
            let api = m.is_crd() || m.is_csv();
            let rule = if api {
                "manifest-extra-document-dropped-api"
            } else {
                "manifest-extra-document"
            };
            out.push(
                finding_hint(
                    rule,
                    format!(
                        "document {} of {} ({} `{}`) is silently dropped: opm reads one object per file",
                        m.doc_index + 1,
                        file.rel_path,
                        if m.kind.is_empty() { "object" } else { &m.kind },
                        m.name
                    ),
                    "put each object in its own file",
                )
                .at(m.location(&[])),
            );
        }
    }
}

fn is_rbac(kind: &str) -> bool {
    matches!(
        kind,
        "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding"
    )
}

fn check_object(m: &Manifest, out: &mut Vec<Finding>) {
    // A CSV without apiVersion is reported by csv-api-version-missing.
    if m.kind.is_empty() || (m.api_version.is_empty() && !m.is_csv()) {
        let what = if m.kind.is_empty() {
            "kind"
        } else {
            "apiVersion"
        };
        out.push(
            finding(
                "manifest-kind-missing",
                format!("{} has no `{what}`", m.file.rel_path),
            )
            .at(m.location(&[])),
        );
        if m.kind.is_empty() {
            return;
        }
    }
    if !SUPPORTED_KINDS.contains(&m.kind.as_str()) {
        out.push(
            finding_hint(
                "manifest-kind-unsupported",
                format!(
                    "{} is not a supported type for a registry+v1 bundle ({})",
                    m.kind, m.file.rel_path
                ),
                "OLM installs only CSVs, CRDs, RBAC, Services, ServiceAccounts, ConfigMaps, Secrets, monitoring and console objects from a bundle",
            )
            .at(m.location(&path!["kind"])),
        );
        return;
    }
    let meta = m.root.get("metadata");
    // Go decodes metadata into ObjectMeta (opm's validateKubectlable, the
    // API server): a string field given a number, boolean, list or mapping
    // fails the whole object.
    for field in ["name", "generateName", "namespace"] {
        let Some(node) = meta.and_then(|md| md.get(field)) else {
            continue;
        };
        let json_type = match &node.value {
            Value::Null | Value::Str(_) => continue,
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::UInt(_) | Value::Float(_) => "number",
            Value::Seq(_) => "array",
            Value::Map(_) => "object",
        };
        out.push(
            finding(
                "object-metadata-invalid",
                format!(
                    "{} `metadata.{field}` is not a string (json: cannot unmarshal {json_type} into Go struct field ObjectMeta.metadata.{field} of type string)",
                    m.kind
                ),
            )
            .at(m.location(&path!["metadata", field])),
        );
    }
    let name = meta.and_then(|md| md.get("name"));
    let generate = meta.and_then(|md| md.get("generateName"));
    if name.and_then(Node::as_str).unwrap_or("").is_empty()
        && generate.and_then(Node::as_str).unwrap_or("").is_empty()
    {
        out.push(
            finding(
                "object-metadata-invalid",
                format!(
                    "{} `metadata.name`: name or generateName is required",
                    m.kind
                ),
            )
            .at(m.location(&path!["metadata", "name"])),
        );
    } else if let Some(n) = name.and_then(Node::as_str) {
        // CSV and CRD names are checked by their own rules.
        if !m.is_csv() && !m.is_crd() {
            let violations = if is_rbac(&m.kind) {
                names::path_segment_name(n)
            } else if m.kind == "Service" {
                names::dns1035_label(n)
            } else {
                names::dns1123_subdomain(n)
            };
            if !violations.is_empty() {
                out.push(
                    finding(
                        "resource-name-invalid",
                        format!(
                            "{} name `{n}` is invalid: {}",
                            m.kind,
                            violations.join("; ")
                        ),
                    )
                    .at(m.location(&path!["metadata", "name"])),
                );
            }
        }
    }
    if let Some(ns) = meta
        .and_then(|md| md.get("namespace"))
        .and_then(Node::as_str)
    {
        let v = names::dns1123_label(ns, V0_26);
        if !ns.is_empty() && !v.is_empty() {
            out.push(
                finding(
                    "object-metadata-invalid",
                    format!(
                        "{} `metadata.namespace` `{ns}` is invalid: {}",
                        m.kind,
                        v.join("; ")
                    ),
                )
                .at(m.location(&path!["metadata", "namespace"])),
            );
        }
    }
    for field in ["labels", "annotations"] {
        let Some(Value::Map(entries)) = meta.and_then(|md| md.get(field)).map(|n| &n.value) else {
            continue;
        };
        for e in entries {
            let kv = names::qualified_name(&e.key, V0_26);
            if !kv.is_empty() {
                out.push(
                    finding(
                        "object-metadata-invalid",
                        format!(
                            "{} `metadata.{field}` key `{}` is invalid: {}",
                            m.kind,
                            e.key,
                            kv.join("; ")
                        ),
                    )
                    .at(m.key_location(&path![
                        "metadata",
                        field,
                        e.key.as_str()
                    ])),
                );
            }
            if field == "labels" {
                let text = e
                    .value
                    .as_str()
                    .map(String::from)
                    .or_else(|| e.value.raw().map(String::from))
                    .unwrap_or_default();
                let vv = names::label_value(&text, V0_26);
                if !vv.is_empty() {
                    out.push(
                        finding(
                            "object-metadata-invalid",
                            format!(
                                "{} label `{}` has an invalid value `{text}`: {}",
                                m.kind,
                                e.key,
                                vv.join("; ")
                            ),
                        )
                        .at(m.location(&path![
                            "metadata",
                            field,
                            e.key.as_str()
                        ])),
                    );
                }
            }
        }
    }
}

/// Largest gzip-compressed bundle (operator-framework/api `max_bundle_size`,
/// 1 MiB): OLM stages an unpacked bundle in one ConfigMap, and Kubernetes
/// objects are limited to about 1 MiB. The check has compared the compressed
/// size since opm 1.17.5 and OLM 0.19.0.
pub const MAX_BUNDLE_SIZE: u64 = 1 << 20;

/// Share of [`MAX_BUNDLE_SIZE`] above which the reference warns.
const WARN_SHARE: f64 = 0.85;

/// Sizes as operator-framework/api writes them: decimal units, one decimal
/// (`948.6 kB`, `1.0 MB`).
pub fn format_bytes(b: u64) -> String {
    const UNIT: u64 = 1000;
    if b < UNIT {
        return format!("{b} B");
    }
    let (mut div, mut exp) = (UNIT, 0usize);
    let mut n = b / UNIT;
    while n >= UNIT {
        div *= UNIT;
        exp += 1;
        n /= UNIT;
    }
    let prefix = "kMGTPE".as_bytes()[exp.min(5)] as char;
    format!("{:.1} {prefix}B", b as f64 / div as f64)
}

/// The gzip-compressed size of every file read from the bundle, at `level`
/// (6 is Go's `gzip.DefaultCompression`, what the reference measures with).
fn compressed_size(b: &crate::bundle::Bundle, level: u32) -> u64 {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
    let metadata = [
        b.annotations.as_ref().and_then(|a| a.source.as_ref()),
        b.dependencies.as_ref(),
        b.properties.as_ref(),
    ];
    let texts = b
        .manifest_files
        .iter()
        .map(|(f, _)| f.text.as_str())
        .chain(metadata.into_iter().flatten().map(|m| m.file.text.as_str()));
    for t in texts {
        if gz.write_all(t.as_bytes()).is_err() {
            return b.size;
        }
    }
    gz.finish().map(|v| v.len() as u64).unwrap_or(b.size)
}

/// The compressed size the size rules judge, or `None` where it is surely
/// under the warning threshold.
///
/// Level 6 is what the reference measures with, and it was two fifths of
/// `bundle validate`'s CPU on the whole community catalog (470 of its 7,068
/// bundles are over 85% of the limit uncompressed; none is near it
/// compressed). Level 1 runs ~4.5x faster and never compressed one of
/// those 470 bundles to less than 1.25x of what level 6 made of it (nor
/// less than 1.2x of Go's own level 6): a bundle that fits under the
/// threshold at level 1 fits at level 6, so only the others pay for level 6,
/// and every size printed is still level 6's.
fn judged_compressed_size(b: &crate::bundle::Bundle, warn_at: f64) -> Option<u64> {
    if compressed_size(b, 1) as f64 <= warn_at {
        return None;
    }
    Some(compressed_size(b, 6))
}

fn check_size(ctx: &Context, out: &mut Vec<Finding>) {
    let b = ctx.bundle;
    let size = b.size;
    let warn_at = MAX_BUNDLE_SIZE as f64 * WARN_SHARE;
    // gzip does not grow text past 85% of the limit when it starts below it.
    if (size as f64) <= warn_at {
        return;
    }
    let Some(compressed) = judged_compressed_size(b, warn_at) else {
        return;
    };
    let here = || Location::file(&b.dir);
    if compressed > MAX_BUNDLE_SIZE {
        out.push(
            finding_hint(
                "bundle-size-exceeded",
                format!(
                    "maximum bundle compressed size with gzip size exceeded: size=~{} , max={}. Bundle uncompressed size is {}",
                    format_bytes(compressed),
                    format_bytes(MAX_BUNDLE_SIZE),
                    format_bytes(size)
                ),
                "OLM unpacks a bundle into one ConfigMap (at most ~1 MiB); shrink the CRD schemas (descriptions) or the icon",
            )
            .at(here()),
        );
    } else if compressed as f64 > warn_at {
        out.push(
            finding(
                "bundle-size-near-limit",
                format!(
                    "nearing maximum bundle compressed size with gzip: size=~{} , max={}. Bundle uncompressed size is {}",
                    format_bytes(compressed),
                    format_bytes(MAX_BUNDLE_SIZE),
                    format_bytes(size)
                ),
            )
            .at(here()),
        );
    }
}

/// Files larger than this are not opened when looking for stray CSVs (a CSV
/// is at most a few MiB; the bundle itself must fit in 1 MiB compressed).
const STRAY_MAX_FILE: u64 = 16 * 1024 * 1024;
/// How deep and how wide the look for stray CSVs goes: a bundle folder holds
/// a handful of files beside manifests/ and metadata/ (tests/, Dockerfiles).
const STRAY_MAX_DEPTH: usize = 8;
const STRAY_MAX_ENTRIES: usize = 10_000;

/// ClusterServiceVersion files in the bundle folder outside `manifests/`
/// (and `metadata/`), rule `bundle-csv-outside-manifests`.
///
/// operator-framework/api's loader (`manifests.GetBundleFromDir`, what
/// `operator-sdk bundle validate` loads the folder with) walks the whole
/// folder, skipping hidden entries, and takes the folder of every file whose
/// first document is a CSV as the bundle's manifests folder: a CSV beside
/// `manifests/` makes it read the bundle folder itself, which fails ("bundle
/// manifests dir contains directory"), and a CSV deeper down replaces the
/// real one. opm reads only `manifests/`, so such a file is also not the CSV
/// the bundle ships. Only bundle folders on disk have such files; images
/// hold only `manifests/` and `metadata/`.
pub fn stray_csvs(dir: &std::path::Path) -> Vec<Finding> {
    let mut out = Vec::new();
    let hidden = |name: &std::ffi::OsStr| name.to_string_lossy().starts_with('.');
    // The folder's own entries are listed here rather than by the walk, so
    // that manifests/ and metadata/ are never opened a second time.
    let mut top: Vec<std::fs::DirEntry> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(Result::ok)
            .filter(|e| {
                let name = e.file_name();
                !hidden(&name) && name != "manifests" && name != "metadata"
            })
            .collect(),
        Err(_) => return out,
    };
    top.sort_by_key(|e| e.file_name());
    // Files in walk order (each directory's entries sorted by name, depth
    // first), with whether they stand in the folder itself.
    let mut files: Vec<(std::path::PathBuf, bool)> = Vec::new();
    let mut seen = 0usize;
    for entry in top {
        seen += 1;
        let Ok(ftype) = entry.file_type() else {
            continue;
        };
        if ftype.is_file() {
            files.push((entry.path(), true));
        } else if ftype.is_dir() {
            let walk = walkdir::WalkDir::new(entry.path())
                .min_depth(1)
                .max_depth(STRAY_MAX_DEPTH - 1)
                .follow_links(false)
                .sort_by_file_name()
                .into_iter()
                .filter_entry(|e| !hidden(e.file_name()));
            for e in walk.take(STRAY_MAX_ENTRIES.saturating_sub(seen)) {
                seen += 1;
                let Ok(e) = e else { continue };
                if e.file_type().is_file() {
                    files.push((e.into_path(), false));
                }
            }
        }
        if seen >= STRAY_MAX_ENTRIES {
            break;
        }
    }
    for (path, beside) in files {
        let Some(text) = read_small_text(&path) else {
            continue;
        };
        if !text.contains("ClusterServiceVersion") {
            continue;
        }
        let Ok(docs) = crate::yaml::parse_documents(&text) else {
            continue;
        };
        // The loader decodes only the first document of a file.
        let Some(doc) = docs.first() else { continue };
        let kind = doc.root.at(&path!["kind"]);
        if !matches!(kind.map(|k| &k.value), Some(Value::Str(k)) if k == "ClusterServiceVersion") {
            continue;
        }
        let rel = path
            .strip_prefix(dir)
            .unwrap_or(&path)
            .display()
            .to_string();
        let why = if beside {
            "operator-sdk bundle validate (operator-framework/api's loader) then reads the bundle folder itself as the manifests folder and fails on its subdirectories"
        } else {
            "operator-sdk bundle validate (operator-framework/api's loader) then reads that folder as the bundle's manifests, instead of or besides manifests/"
        };
        out.push(
            finding_hint(
                "bundle-csv-outside-manifests",
                format!("{rel} is a ClusterServiceVersion outside manifests/: {why}"),
                "opm packs only manifests/ and metadata/, so this is not the CSV the bundle ships: remove it, or move it into manifests/ if it is the bundle's CSV",
            )
            .at(Location::new(
                &path,
                doc.root.locate(&path!["kind"]),
                Some(&text),
            )),
        );
    }
    out
}

/// The text of a regular file of at most [`STRAY_MAX_FILE`] bytes, or
/// `None` (too large, unreadable, not UTF-8, or not a regular file when
/// opened: the file is opened without blocking and checked again).
fn read_small_text(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let f = opts.open(path).ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.len() > STRAY_MAX_FILE {
        return None;
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    f.take(STRAY_MAX_FILE).read_to_end(&mut buf).ok()?;
    String::from_utf8(buf).ok()
}

#[cfg(test)]
mod size_tests {
    use super::*;

    #[test]
    fn bytes_are_written_like_the_reference() {
        // The figures of operator-framework/api's bundle size test.
        assert_eq!(format_bytes(MAX_BUNDLE_SIZE - 100_000), "948.6 kB");
        assert_eq!(format_bytes(MAX_BUNDLE_SIZE), "1.0 MB");
        assert_eq!(format_bytes((MAX_BUNDLE_SIZE - 100_000) * 10), "9.5 MB");
        assert_eq!(format_bytes(2 * MAX_BUNDLE_SIZE), "2.1 MB");
        assert_eq!(format_bytes(999), "999 B");
    }
}
