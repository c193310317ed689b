//! The property comparisons of CRD upgrade safety, as sigs.k8s.io/crdify
//! makes them (`pkg/validations/property/*.go`, `pkg/validations/compare.go`,
//! `pkg/validations/util.go`), on our YAML nodes.
//!
//! A CRD version's schema is flattened into its properties by path the way
//! crdify's `SchemaHas` walks it: `properties` (`^.spec.size`), `items`
//! (`^.spec.list.items`), `allOf`/`anyOf`/`oneOf` (`^.spec.x.oneOf[0]`),
//! `not`, `additionalProperties`, `patternProperties[k]`,
//! `additionalItems`, `definitions[k]`, `dependencies[k]`. Two versions of
//! one property are compared without their `properties` and `items` (those
//! are compared as properties of their own); every validation "handles"
//! its keyword, and whatever else differs is crdify's catch-all
//! `unhandled` change, an error in OLM v1's preflight.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde_json::{Map, Value as J};

use crate::yaml::{Node, Seg, Value};

/// Which crdify configuration the CRD comparison follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum CrdChecks {
    /// OLM v1's preflight (operator-controller `crdupgradesafety`
    /// `defaultConfig`): description changes not checked, enum values
    /// added allowed, served versions not compared when the new CRD
    /// converts by webhook, unhandled changes errors.
    #[default]
    OlmV1,
    /// crdify's own defaults: description changes and enum values added
    /// are errors, served versions are compared whatever the conversion.
    CrdifyDefaults,
}

impl CrdChecks {
    fn description(self) -> bool {
        self == CrdChecks::CrdifyDefaults
    }
    /// Whether enum values added are errors (crdify's default
    /// `additionPolicy: Disallow`; OLM v1 allows them).
    pub fn enum_additions(self) -> bool {
        self == CrdChecks::CrdifyDefaults
    }
    /// Whether the served-version comparison is skipped for a new CRD with
    /// `conversion.strategy: Webhook` (crdify `ConversionPolicyIgnore`).
    pub fn skip_served_with_webhook(self) -> bool {
        self == CrdChecks::OlmV1
    }
    /// The name, as `--crd-checks` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            CrdChecks::OlmV1 => "olm-v1",
            CrdChecks::CrdifyDefaults => "crdify-defaults",
        }
    }
}

/// One incompatible difference between two versions of a property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Change {
    /// Our rule id.
    pub rule: &'static str,
    /// crdify's validation name.
    pub crdify: &'static str,
    /// What changed.
    pub msg: String,
    /// The schema keyword to point at (none: the property itself).
    pub key: Option<String>,
}

fn seg(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

/// A schema's properties by crdify path, each with its node and where it
/// is written.
///
/// With `twin` (the same schema in the other CRD being compared), a property
/// whose content is the same as its twin's is left out with everything
/// below it: comparing equal schemas finds nothing, and doing it anyway was
/// most of `graph check`'s CPU on the community catalog, whose CRDs mostly
/// change a few fields from one bundle to the next.
pub(super) fn flatten<'a>(
    node: &'a Node,
    twin: Option<&Node>,
    segs: Vec<Seg>,
    path: String,
    out: &mut BTreeMap<String, (&'a Node, Vec<Seg>)>,
) {
    if twin.is_some_and(|t| node.same_content(t)) {
        return;
    }
    let child = |k: &str| {
        let mut s = segs.clone();
        s.push(seg(k));
        s
    };
    let is_map = |n: &Node| matches!(n.value, Value::Map(_));
    let twin_get = |k: &str| twin.and_then(|t| t.get(k));
    let twin_index = |k: &str, i: usize| match twin_get(k).map(|n| &n.value) {
        Some(Value::Seq(list)) => list.get(i),
        _ => None,
    };
    if let Some(items) = node.get("items") {
        match &items.value {
            Value::Map(_) => flatten(
                items,
                twin_get("items"),
                child("items"),
                format!("{path}.items"),
                out,
            ),
            Value::Seq(list) => {
                for (i, s) in list.iter().enumerate().filter(|(_, s)| is_map(s)) {
                    let mut p = child("items");
                    p.push(Seg::Index(i));
                    flatten(
                        s,
                        twin_index("items", i),
                        p,
                        format!("{path}.items[{i}]"),
                        out,
                    );
                }
            }
            _ => {}
        }
    }
    for k in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Seq(list)) = node.get(k).map(|n| &n.value) {
            for (i, s) in list.iter().enumerate().filter(|(_, s)| is_map(s)) {
                let mut p = child(k);
                p.push(Seg::Index(i));
                flatten(s, twin_index(k, i), p, format!("{path}.{k}[{i}]"), out);
            }
        }
    }
    for k in ["not", "additionalProperties", "additionalItems"] {
        if let Some(s) = node.get(k).filter(|s| is_map(s)) {
            flatten(s, twin_get(k), child(k), format!("{path}.{k}"), out);
        }
    }
    if let Some(Value::Map(props)) = node.get("properties").map(|n| &n.value) {
        let twins = twin_get("properties");
        for e in props.iter().filter(|e| is_map(&e.value)) {
            let mut s = child("properties");
            s.push(Seg::Key(e.key.clone()));
            let t = twins.and_then(|t| t.get(&e.key));
            flatten(&e.value, t, s, format!("{path}.{}", e.key), out);
        }
    }
    for k in ["patternProperties", "definitions", "dependencies"] {
        if let Some(Value::Map(m)) = node.get(k).map(|n| &n.value) {
            let twins = twin_get(k);
            for e in m.iter().filter(|e| is_map(&e.value)) {
                let mut s = child(k);
                s.push(Seg::Key(e.key.clone()));
                let t = twins.and_then(|t| t.get(&e.key));
                flatten(&e.value, t, s, format!("{path}.{k}[{}]", e.key), out);
            }
        }
    }
    out.insert(path, (node, segs));
}

// ---- reading keywords ----

fn get<'n>(x: Option<&'n Node>, k: &str) -> Option<&'n Node> {
    x.and_then(|x| x.get(k))
        .filter(|v| !matches!(v.value, Value::Null))
}

fn str_of<'n>(x: Option<&'n Node>, k: &str) -> &'n str {
    get(x, k).and_then(Node::as_str).unwrap_or("")
}

fn bool_of(x: Option<&Node>, k: &str) -> bool {
    matches!(get(x, k).map(|v| &v.value), Some(Value::Bool(true)))
}

fn number(x: Option<&Node>, k: &str) -> Option<f64> {
    match get(x, k).map(|n| &n.value) {
        Some(Value::Int(i)) => Some(*i as f64),
        Some(Value::UInt(u)) => Some(*u as f64),
        Some(Value::Float(f)) => Some(*f),
        _ => None,
    }
}

fn json_text(n: &Node) -> String {
    n.to_json().to_string()
}

fn list_text(x: Option<&Node>, k: &str) -> Vec<String> {
    match get(x, k).map(|r| &r.value) {
        Some(Value::Seq(items)) => items.iter().map(json_text).collect(),
        _ => Vec::new(),
    }
}

fn names(x: Option<&Node>, k: &str) -> Vec<String> {
    match get(x, k).map(|r| &r.value) {
        Some(Value::Seq(items)) => items
            .iter()
            .filter_map(|i| i.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    }
}

/// The comparisons of crdify's property validations between version `o`
/// and version `n` of a property (`n` None: the property is gone, compared
/// with an empty schema as crdify does). Every keyword a validation handles
/// is left out of the final `unhandled` comparison.
pub(super) fn field_changes(o: &Node, n: Option<&Node>, checks: CrdChecks) -> Vec<Change> {
    if n.is_some_and(|n| same_own_keywords(o, n, checks)) {
        return Vec::new();
    }
    let o = Some(o);
    let mut out = Vec::new();
    let mut push = |rule: &'static str, crdify: &'static str, msg: String, key: &str| {
        out.push(Change {
            rule,
            crdify,
            msg,
            key: Some(key.to_string()),
        })
    };
    // type
    let (ot, nt) = (str_of(o, "type"), str_of(n, "type"));
    if ot != nt {
        push(
            "crd-upgrade-type-changed",
            "type",
            format!("type changed from {ot:?} to {nt:?}"),
            "type",
        );
    }
    // required
    let old_required = names(o, "required");
    let added: Vec<String> = names(n, "required")
        .into_iter()
        .filter(|r| !old_required.contains(r))
        .collect();
    if !added.is_empty() {
        push(
            "crd-upgrade-required-added",
            "required",
            format!("new required fields {}", added.join(", ")),
            "required",
        );
    }
    // default
    match (get(o, "default"), get(n, "default")) {
        (None, Some(d)) => push(
            "crd-upgrade-default-changed",
            "default",
            format!("default {} added where there was none", json_text(d)),
            "default",
        ),
        (Some(d), None) => push(
            "crd-upgrade-default-changed",
            "default",
            format!("default {} removed", json_text(d)),
            "default",
        ),
        (Some(a), Some(b)) if a.to_json() != b.to_json() => push(
            "crd-upgrade-default-changed",
            "default",
            format!("default changed from {} to {}", json_text(a), json_text(b)),
            "default",
        ),
        _ => {}
    }
    // enum
    let (oe, ne) = (list_text(o, "enum"), list_text(n, "enum"));
    let gone: Vec<&str> = oe
        .iter()
        .filter(|v| !ne.contains(v))
        .map(String::as_str)
        .collect();
    let more: Vec<&str> = ne
        .iter()
        .filter(|v| !oe.contains(v))
        .map(String::as_str)
        .collect();
    if oe.is_empty() && !ne.is_empty() {
        push(
            "crd-upgrade-enum-restricted",
            "enum",
            format!("enum [{}] added where any value was allowed", ne.join(", ")),
            "enum",
        );
    } else if !gone.is_empty() {
        push(
            "crd-upgrade-enum-restricted",
            "enum",
            format!("enum values {} removed", gone.join(", ")),
            "enum",
        );
    } else if !more.is_empty() && checks.enum_additions() {
        push(
            "crd-upgrade-enum-restricted",
            "enum",
            format!("enum values {} added", more.join(", ")),
            "enum",
        );
    }
    // bounds: (key, rule, upper bound?)
    for (key, rule, upper) in [
        ("maximum", "crd-upgrade-maximum-tightened", true),
        ("minimum", "crd-upgrade-minimum-tightened", false),
        ("maxLength", "crd-upgrade-max-length-tightened", true),
        ("minLength", "crd-upgrade-min-length-tightened", false),
        ("maxItems", "crd-upgrade-max-items-tightened", true),
        ("minItems", "crd-upgrade-min-items-tightened", false),
        (
            "maxProperties",
            "crd-upgrade-max-properties-tightened",
            true,
        ),
        (
            "minProperties",
            "crd-upgrade-min-properties-tightened",
            false,
        ),
    ] {
        let msg = match (number(o, key), number(n, key)) {
            (None, Some(b)) => Some(format!("{key} {b} added where there was none")),
            (Some(a), Some(b)) if (upper && b < a) || (!upper && b > a) => Some(format!(
                "{key} {} from {a} to {b}",
                if upper { "decreased" } else { "increased" }
            )),
            _ => None,
        };
        if let Some(msg) = msg {
            push(rule, crdify_bound_name(key), msg, key);
        }
    }
    // pattern
    let (op, np) = (str_of(o, "pattern"), str_of(n, "pattern"));
    if op != np {
        let msg = match (op.is_empty(), np.is_empty()) {
            (true, _) => format!("pattern {np:?} added"),
            (false, true) => format!("pattern {op:?} removed"),
            (false, false) => format!("pattern changed from {op:?} to {np:?}"),
        };
        push("crd-upgrade-pattern-changed", "pattern", msg, "pattern");
    }
    // nullable
    let (on, nn) = (bool_of(o, "nullable"), bool_of(n, "nullable"));
    if on != nn {
        push(
            "crd-upgrade-nullable-changed",
            "nullable",
            format!("nullable changed from {on} to {nn}"),
            "nullable",
        );
    }
    // description
    let (od, nd) = (str_of(o, "description"), str_of(n, "description"));
    if checks.description() && od != nd {
        push(
            "crd-upgrade-description-changed",
            "description",
            format!("description changed from {} to {}", short(od), short(nd)),
            "description",
        );
    }
    // oneOf
    let one_of = |x: Option<&Node>| -> Vec<String> {
        match get(x, "oneOf").map(|v| v.to_json()) {
            Some(J::Array(a)) => a
                .iter()
                .map(|s| {
                    let mut s = norm(None, s);
                    if let J::Object(m) = &mut s {
                        for k in ["description", "title", "example", "externalDocs"] {
                            m.remove(k);
                        }
                    }
                    s.to_string()
                })
                .collect(),
            _ => Vec::new(),
        }
    };
    let (oo, no) = (one_of(o), one_of(n));
    let removed = oo.iter().filter(|s| !no.contains(s)).count();
    let added = no.iter().filter(|s| !oo.contains(s)).count();
    let msg = if oo.is_empty() && !no.is_empty() {
        Some("oneOf constraint added when there was none previously".to_string())
    } else if removed > 0 {
        Some(format!("allowed oneOf schemas removed ({removed})"))
    } else if added > 0 {
        Some(format!("allowed oneOf schemas added ({added})"))
    } else {
        None
    };
    if let Some(msg) = msg {
        push("crd-upgrade-one-of-changed", "oneOf", msg, "oneOf");
    }
    // unhandled: whatever else differs
    let (ro, rn) = (residual(o), residual(n));
    let mut what = Vec::new();
    let mut first_key = None;
    let keys: std::collections::BTreeSet<&String> = ro.keys().chain(rn.keys()).collect();
    for k in keys {
        let (a, b) = (ro.get(k), rn.get(k));
        if a == b {
            continue;
        }
        first_key.get_or_insert_with(|| k.clone());
        let text = |v: Option<&J>| v.map_or("none".to_string(), J::to_string);
        let (ta, tb) = (text(a), text(b));
        what.push(if ta.len() + tb.len() <= 80 {
            format!("{k} {ta} -> {tb}")
        } else {
            format!("{k} changed")
        });
    }
    if !what.is_empty() {
        out.push(Change {
            rule: "crd-upgrade-unhandled",
            crdify: "unhandled",
            msg: format!("unhandled changes found ({})", what.join("; ")),
            key: first_key.filter(|k| n.and_then(|n| n.get(k)).is_some()),
        });
    }
    out
}

/// Whether two versions of a property have the same content in every
/// keyword [`field_changes`] reads: all but `properties` and `items` (their
/// own properties, compared on their own), and `description` unless it is
/// checked. Such a pair has no change, and most pairs are such: a property
/// whose only differences are below it (every ancestor of a changed field).
/// Answering this without building JSON saves most of the comparison.
fn same_own_keywords(o: &Node, n: &Node, checks: CrdChecks) -> bool {
    let (Value::Map(oe), Value::Map(ne)) = (&o.value, &n.value) else {
        return false;
    };
    let own =
        |k: &str| k != "properties" && k != "items" && (checks.description() || k != "description");
    let own_count = |es: &[crate::yaml::Entry]| es.iter().filter(|e| own(&e.key)).count();
    own_count(oe) == own_count(ne)
        && oe
            .iter()
            .filter(|e| own(&e.key))
            .all(|e| n.get(&e.key).is_some_and(|x| x.same_content(&e.value)))
}

fn crdify_bound_name(key: &str) -> &'static str {
    match key {
        "maximum" => "maximum",
        "minimum" => "minimum",
        "maxLength" => "maxLength",
        "minLength" => "minLength",
        "maxItems" => "maxItems",
        "minItems" => "minItems",
        "maxProperties" => "maxProperties",
        _ => "minProperties",
    }
}

fn short(s: &str) -> String {
    let mut t: String = s.chars().take(60).collect();
    if t.len() < s.len() {
        t.push('…');
    }
    format!("{t:?}")
}

/// The keywords crdify's validations handle, left out of `unhandled`
/// (`properties` and `items` are compared as properties of their own).
const HANDLED: &[&str] = &[
    "type",
    "required",
    "default",
    "enum",
    "maximum",
    "minimum",
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "maxProperties",
    "minProperties",
    "pattern",
    "nullable",
    "description",
    "oneOf",
    "properties",
    "items",
];

/// A property without the keywords the validations handle, normalized.
fn residual(x: Option<&Node>) -> Map<String, J> {
    let Some(Value::Map(entries)) = x.map(|x| &x.value) else {
        return Map::new();
    };
    let mut m = Map::new();
    for e in entries
        .iter()
        .filter(|e| !HANDLED.contains(&e.key.as_str()))
    {
        if let Some(v) = norm_value(&e.key, &e.value.to_json()) {
            m.insert(e.key.clone(), v);
        }
    }
    m
}

/// A schema normalized as Go reads it into `JSONSchemaProps` and
/// `equality.Semantic` compares it: unknown keywords dropped, `null`,
/// `false`, `""`, `[]` and `{}` of non-pointer fields the same as absent,
/// numbers compared as numbers. `skip`: a keyword to leave out.
fn norm(skip: Option<&str>, v: &J) -> J {
    match v {
        J::Object(o) => {
            let mut m = Map::new();
            for (k, x) in o {
                if Some(k.as_str()) == skip {
                    continue;
                }
                if let Some(n) = norm_value(k, x) {
                    m.insert(k.clone(), n);
                }
            }
            J::Object(m)
        }
        other => other.clone(),
    }
}

fn num(v: &J) -> J {
    match v.as_f64().and_then(serde_json::Number::from_f64) {
        Some(n) => J::Number(n),
        None => v.clone(),
    }
}

/// One keyword of a schema, normalized; None when Go would hold its zero
/// value (or does not know the keyword).
fn norm_value(k: &str, v: &J) -> Option<J> {
    if v.is_null() {
        return None;
    }
    let empty = |v: &J| match v {
        J::Array(a) => a.is_empty(),
        J::Object(o) => o.is_empty(),
        _ => false,
    };
    match k {
        "id" | "$schema" | "description" | "type" | "format" | "title" | "pattern" => {
            (v != &J::String(String::new())).then(|| v.clone())
        }
        "exclusiveMaximum"
        | "exclusiveMinimum"
        | "uniqueItems"
        | "nullable"
        | "x-kubernetes-embedded-resource"
        | "x-kubernetes-int-or-string" => (v != &J::Bool(false)).then(|| v.clone()),
        "$ref"
        | "default"
        | "example"
        | "x-kubernetes-preserve-unknown-fields"
        | "x-kubernetes-list-type"
        | "x-kubernetes-map-type" => Some(v.clone()),
        "maximum" | "minimum" | "multipleOf" | "maxLength" | "minLength" | "maxItems"
        | "minItems" | "maxProperties" | "minProperties" => Some(num(v)),
        "enum" | "required" | "x-kubernetes-list-map-keys" => (!empty(v)).then(|| v.clone()),
        "allOf" | "anyOf" | "oneOf" => match v {
            J::Array(a) if !a.is_empty() => {
                Some(J::Array(a.iter().map(|s| norm(None, s)).collect()))
            }
            _ => None,
        },
        "properties" | "patternProperties" | "definitions" | "dependencies" => match v {
            J::Object(o) if !o.is_empty() => Some(J::Object(
                o.iter()
                    .map(|(name, s)| (name.clone(), norm(None, s)))
                    .collect(),
            )),
            _ => None,
        },
        "not" | "items" | "additionalProperties" | "additionalItems" => match v {
            J::Array(a) => Some(J::Array(a.iter().map(|s| norm(None, s)).collect())),
            other => Some(norm(None, other)),
        },
        "externalDocs" => Some(norm_plain(v)),
        "x-kubernetes-validations" => match v {
            J::Array(a) if !a.is_empty() => Some(J::Array(a.iter().map(norm_plain).collect())),
            _ => None,
        },
        _ => None,
    }
}

/// A plain struct (ExternalDocumentation, ValidationRule): empty strings
/// and nulls are absent.
fn norm_plain(v: &J) -> J {
    match v {
        J::Object(o) => J::Object(
            o.iter()
                .filter(|(_, x)| !x.is_null() && *x != &J::String(String::new()))
                .map(|(k, x)| (k.clone(), x.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Kubernetes' `version.CompareKubeAwareVersionStrings`: GA above beta
/// above alpha, then by major and minor; names that are not Kubernetes
/// versions sort below, in reverse lexical order.
pub(super) fn kube_version_cmp(a: &str, b: &str) -> Ordering {
    fn parse(v: &str) -> Option<(u8, u64, u64)> {
        let rest = v.strip_prefix('v')?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let major: u64 = rest[..digits].parse().ok()?;
        let tail = &rest[digits..];
        if tail.is_empty() {
            return Some((2, major, 0));
        }
        let (kind, minor) = if let Some(m) = tail.strip_prefix("alpha") {
            (0, m)
        } else if let Some(m) = tail.strip_prefix("beta") {
            (1, m)
        } else {
            return None;
        };
        if minor.is_empty() || !minor.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        Some((kind, major, minor.parse().ok()?))
    }
    if a == b {
        return Ordering::Equal;
    }
    match (parse(a), parse(b)) {
        (None, None) => b.cmp(a),
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => x.cmp(&y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_aware_order() {
        let mut v = vec!["v1", "v2beta1", "v1alpha1", "v1beta2", "foo", "v10", "bar"];
        v.sort_by(|a, b| kube_version_cmp(a, b));
        assert_eq!(
            v,
            ["foo", "bar", "v1alpha1", "v1beta2", "v2beta1", "v1", "v10"]
        );
    }
}
