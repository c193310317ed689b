//! CustomResourceDefinition checks: apiextensions-apiserver's
//! `ValidateCustomResourceDefinition`, as operator-framework/api's CRD
//! validator runs it on v1 and v1beta1 CRDs.
//!
//! That validator first applies the CRD defaults (`SetDefaults_CustomResourceDefinition`:
//! singular from kind, listKind from kind + `List`, conversion strategy `None`;
//! for v1beta1 also scope `Namespaced`, `versions` from `version`, review
//! versions `[v1beta1]` and `preserveUnknownFields: true`), converts to the
//! internal type (which, for v1, hoists a schema, subresources or columns that
//! every version shares to the top level) and then drops every finding whose
//! field path holds `openAPIV3Schema` or `status`. So schema rules
//! (structural schemas, CEL, list-map keys, …), `status.acceptedNames`,
//! `status.storedVersions` and `scale.statusReplicasPath` are not reported,
//! here as there. What is left is checked here, each group under its own rule
//! id, located at the value the API server would name.

use std::collections::BTreeSet;

use super::rules::{finding, finding_hint};
use crate::bundle::Manifest;
use crate::diag::Finding;
use crate::k8s_names as names;
use crate::path;
use crate::yaml::{path_to_string, Entry, Node, Seg, Value};

/// Column types the API server accepts in `additionalPrinterColumns`.
const COLUMN_TYPES: &[&str] = &["boolean", "date", "integer", "number", "string"];
/// Column formats the API server accepts.
const COLUMN_FORMATS: &[&str] = &[
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
];
/// ConversionReview versions a webhook may be asked for.
const REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];
/// The annotation that protected API groups need.
const API_APPROVED: &str = "api-approved.kubernetes.io";

/// The value of `key` in a mapping as Go's encoding/json finds it: a key
/// that matches the field name ignoring case counts (`JSONPath` sets
/// `jsonPath`), and of several such keys the last one wins.
fn field<'a>(node: &'a Node, key: &str) -> Option<&'a Entry> {
    match &node.value {
        Value::Map(entries) => entries
            .iter()
            .rev()
            .find(|e| e.key.eq_ignore_ascii_case(key)),
        _ => None,
    }
}

fn get<'a>(node: &'a Node, key: &str) -> Option<&'a Node> {
    field(node, key).map(|e| &e.value)
}

/// [`Node::at`] with keys matched as Go decodes them.
fn at_fold<'a>(root: &'a Node, path: &[Seg]) -> Option<&'a Node> {
    let mut node = root;
    for seg in path {
        node = match (seg, &node.value) {
            (Seg::Key(k), Value::Map(_)) => get(node, k)?,
            (Seg::Index(i), Value::Seq(items)) => items.get(*i)?,
            _ => return None,
        };
    }
    Some(node)
}

/// `path` with each key spelled as the document spells it, as far as it
/// exists, so messages and locations name what was written.
fn resolve(root: &Node, path: &[Seg]) -> Vec<Seg> {
    let mut node = Some(root);
    path.iter()
        .map(|seg| match (seg, node) {
            (Seg::Key(k), Some(n)) => match field(n, k) {
                Some(e) => {
                    node = Some(&e.value);
                    Seg::Key(e.key.clone())
                }
                None => {
                    node = None;
                    seg.clone()
                }
            },
            (Seg::Index(i), Some(n)) => {
                node = match &n.value {
                    Value::Seq(items) => items.get(*i),
                    _ => None,
                };
                seg.clone()
            }
            (_, None) => seg.clone(),
        })
        .collect()
}

fn text(n: Option<&Node>) -> String {
    match n.map(|n| &n.value) {
        Some(Value::Str(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(_) => n.and_then(|n| n.raw()).unwrap_or_default().to_string(),
    }
}

fn seq(n: Option<&Node>) -> &[Node] {
    match n.map(|n| &n.value) {
        Some(Value::Seq(items)) => items,
        _ => &[],
    }
}

/// Whether a field is set to something other than null (a Go pointer or
/// slice that is not nil).
fn present(n: Option<&Node>) -> bool {
    n.is_some_and(|n| !matches!(n.value, Value::Null))
}

fn is_true(n: Option<&Node>) -> bool {
    matches!(n.map(|n| &n.value), Some(Value::Bool(true)))
}

fn p(segs: &[Seg], more: &[Seg]) -> Vec<Seg> {
    let mut v = segs.to_vec();
    v.extend_from_slice(more);
    v
}

fn quoted_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|s| format!("\"{s}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One CRD under check.
struct Crd<'a> {
    m: &'a Manifest,
    v1: bool,
    out: &'a mut Vec<Finding>,
}

impl<'a> Crd<'a> {
    /// Borrowed from the manifest, not from `self`: a rule can walk a
    /// version's schema while it records findings (copying the versions to
    /// do so was ~4% of `bundle validate` on the community catalog).
    fn at(&self, path: &[Seg]) -> Option<&'a Node> {
        at_fold(&self.m.root, path)
    }

    /// A finding of `rule` at `path`, in the API server's words.
    fn bad(&mut self, rule: &str, path: &[Seg], msg: impl AsRef<str>) {
        let shown = path_to_string(&resolve(&self.m.root, path));
        self.bad_shown(rule, path, &shown, msg.as_ref(), None);
    }

    fn bad_hint(&mut self, rule: &str, path: &[Seg], msg: impl AsRef<str>, hint: &str) {
        let shown = path_to_string(&resolve(&self.m.root, path));
        self.bad_shown(rule, path, &shown, msg.as_ref(), Some(hint));
    }

    /// A finding located at `path` that names the field as `shown` (the API
    /// server writes map keys as `annotations[key]`).
    fn bad_shown(&mut self, rule: &str, path: &[Seg], shown: &str, msg: &str, hint: Option<&str>) {
        let path = &resolve(&self.m.root, path);
        let message = format!("CRD `{}`: {shown}: {msg}", self.m.name);
        let f = match hint {
            Some(h) => finding_hint(rule, message, h),
            None => finding(rule, message),
        };
        // A field that is not written (a required one, or a default the
        // validator applied) is located at the key of the nearest ancestor
        // that is, such as `spec:`, not at that ancestor's first child.
        let location = if at_fold(&self.m.root, path).is_some() {
            self.m.location(path)
        } else {
            let mut n = path.len();
            while n > 0 && at_fold(&self.m.root, &path[..n]).is_none() {
                n -= 1;
            }
            self.m.key_location(&path[..n])
        };
        self.out.push(f.at(location));
    }
}

/// Runs the CRD checks on one manifest (ignored unless it is a CRD).
pub fn check(m: &Manifest, out: &mut Vec<Finding>) {
    if !m.is_crd() {
        return;
    }
    let v1 = match m.api_version.as_str() {
        "apiextensions.k8s.io/v1" => true,
        "apiextensions.k8s.io/v1beta1" => false,
        other => {
            out.push(
                finding(
                    "crd-api-version-unsupported",
                    format!("Unsupported api version of CRD: {other}"),
                )
                .at(m.location(&path!["apiVersion"])),
            );
            return;
        }
    };
    let mut c = Crd { m, v1, out };
    check_name_and_group(&mut c);
    check_names(&mut c);
    check_scope(&mut c);
    check_versions(&mut c);
    check_columns_and_subresources(&mut c);
    if !v1 {
        check_per_version_exclusive(&mut c);
    }
    check_preserve_unknown_fields(&mut c);
    check_conversion(&mut c);
    check_api_approval(&mut c);
}

fn check_name_and_group(c: &mut Crd) {
    let group = text(c.at(&path!["spec", "group"]));
    let plural = text(c.at(&path!["spec", "names", "plural"]));
    let name = c.m.name.clone();
    if name.is_empty() {
        c.bad(
            "crd-name-invalid",
            &path!["metadata", "name"],
            "Required value: name or generateName is required",
        );
    } else {
        let mut v = names::dns1123_subdomain(&name);
        let required = format!("{plural}.{group}");
        if name != required {
            v.push(format!(
                "must be spec.names.plural+\".\"+spec.group (`{required}`)"
            ));
        }
        if !v.is_empty() {
            c.bad(
                "crd-name-invalid",
                &path!["metadata", "name"],
                format!("Invalid value: \"{name}\": {}", v.join(", ")),
            );
        }
    }
    let gpath = path!["spec", "group"];
    if group.is_empty() {
        c.bad("crd-group-invalid", &gpath, "Required value");
    } else {
        let v = names::dns1123_subdomain(&group);
        if !v.is_empty() {
            c.bad(
                "crd-group-invalid",
                &gpath,
                format!("Invalid value: \"{group}\": {}", v.join(",")),
            );
        } else if !group.contains('.') {
            c.bad(
                "crd-group-invalid",
                &gpath,
                format!("Invalid value: \"{group}\": should be a domain with at least one dot"),
            );
        }
    }
}

fn check_names(c: &mut Crd) {
    let base = path!["spec", "names"];
    let get = |c: &Crd, k: &str| text(c.at(&p(&base, &path![k])));
    let plural = get(c, "plural");
    let kind = get(c, "kind");
    // The defaults the validator applies before validating.
    let mut singular = get(c, "singular");
    if singular.is_empty() {
        singular = kind.to_lowercase();
    }
    let mut list_kind = get(c, "listKind");
    if list_kind.is_empty() && !kind.is_empty() {
        list_kind = format!("{kind}List");
    }
    let rule = "crd-names-invalid";
    for (key, value) in [
        ("plural", &plural),
        ("singular", &singular),
        ("kind", &kind),
        ("listKind", &list_kind),
    ] {
        if value.is_empty() {
            c.bad(rule, &p(&base, &path![key]), "Required value");
        }
    }
    for (key, value, lower) in [
        ("plural", &plural, false),
        ("singular", &singular, false),
        ("kind", &kind, true),
        ("listKind", &list_kind, true),
    ] {
        if value.is_empty() {
            continue;
        }
        let checked = if lower {
            value.to_lowercase()
        } else {
            value.clone()
        };
        let v = names::dns1035_label(&checked);
        if !v.is_empty() {
            let prefix = if lower {
                "may have mixed case, but should otherwise match: "
            } else {
                ""
            };
            c.bad(
                rule,
                &p(&base, &path![key]),
                format!("Invalid value: \"{value}\": {prefix}{}", v.join(",")),
            );
        }
    }
    for list in ["shortNames", "categories"] {
        let lpath = p(&base, &path![list]);
        let items: Vec<String> = seq(c.at(&lpath)).iter().map(|n| text(Some(n))).collect();
        for (i, item) in items.iter().enumerate() {
            let v = names::dns1035_label(item);
            if !v.is_empty() {
                c.bad(
                    rule,
                    &p(&lpath, &path![i]),
                    format!("Invalid value: \"{item}\": {}", v.join(",")),
                );
            }
        }
    }
    if !kind.is_empty() && kind == list_kind {
        c.bad(
            rule,
            &p(&base, &path!["listKind"]),
            format!("Invalid value: \"{list_kind}\": kind and listKind may not be the same"),
        );
    }
}

fn check_scope(c: &mut Crd) {
    let scope = text(c.at(&path!["spec", "scope"]));
    // v1beta1 defaults a missing scope to Namespaced.
    if scope.is_empty() && !c.v1 {
        return;
    }
    if scope.is_empty() {
        c.bad(
            "crd-scope-invalid",
            &path!["spec", "scope"],
            "Required value",
        );
    } else if scope != "Namespaced" && scope != "Cluster" {
        c.bad(
            "crd-scope-invalid",
            &path!["spec", "scope"],
            format!(
                "Unsupported value: \"{scope}\": supported values: {}",
                quoted_list(&["Cluster", "Namespaced"])
            ),
        );
    }
}

fn check_versions(c: &mut Crd) {
    let vpath = path!["spec", "versions"];
    let items = seq(c.at(&vpath));
    let top = text(c.at(&path!["spec", "version"]));
    let rule = "crd-versions-invalid";
    if items.is_empty() {
        // v1beta1 makes one served storage version of `spec.version`.
        if c.v1 || top.is_empty() {
            c.bad(
                rule,
                &vpath,
                "Invalid value: []: must have exactly one version marked as storage version",
            );
        } else {
            let v = names::dns1035_label(&top);
            if !v.is_empty() {
                c.bad(
                    rule,
                    &path!["spec", "version"],
                    format!("Invalid value: \"{top}\": {}", v.join(",")),
                );
            }
        }
        return;
    }
    let mut seen = BTreeSet::new();
    let mut storage = 0;
    for (i, ver) in items.iter().enumerate() {
        let name = text(get(ver, "name"));
        let npath = p(&vpath, &path![i, "name"]);
        let v = names::dns1035_label(&name);
        if !v.is_empty() {
            c.bad(
                rule,
                &npath,
                format!("Invalid value: \"{name}\": {}", v.join(",")),
            );
        }
        if !seen.insert(name.clone()) {
            c.bad(
                rule,
                &npath,
                format!("Invalid value: \"{name}\": must contain unique version names"),
            );
        }
        if is_true(get(ver, "storage")) {
            storage += 1;
        }
        check_deprecation_warning(c, ver, &p(&vpath, &path![i]));
    }
    if storage != 1 {
        c.bad_hint(
            rule,
            &vpath,
            format!("Invalid value: {storage} storage versions: must have exactly one version marked as storage version"),
            "set `storage: true` on exactly one entry of spec.versions",
        );
    }
    if !c.v1 && !top.is_empty() {
        let v = names::dns1035_label(&top);
        if !v.is_empty() {
            c.bad(
                rule,
                &path!["spec", "version"],
                format!("Invalid value: \"{top}\": {}", v.join(",")),
            );
        }
        let first = text(get(&items[0], "name"));
        if first != top {
            c.bad(
                rule,
                &path!["spec", "version"],
                format!(
                    "Invalid value: \"{top}\": must match the first version in spec.versions (`{first}`)"
                ),
            );
        }
    }
}

fn check_deprecation_warning(c: &mut Crd, ver: &Node, vpath: &[Seg]) {
    let Some(w) = get(ver, "deprecationWarning") else {
        return;
    };
    if matches!(w.value, Value::Null) {
        return;
    }
    let rule = "crd-deprecation-warning-invalid";
    let wpath = p(vpath, &path!["deprecationWarning"]);
    let warning = text(Some(w));
    if !is_true(get(ver, "deprecated")) {
        c.bad_hint(
            rule,
            &wpath,
            format!("Invalid value: \"{warning}\": can only be set for deprecated versions"),
            "add `deprecated: true` to this version, or remove the warning",
        );
        return;
    }
    let mut why = Vec::new();
    if warning.len() > 256 {
        why.push("must be <= 256 characters long".to_string());
    }
    if warning.is_empty() {
        why.push("must not be an empty string".to_string());
    }
    if let Some((i, _)) = warning
        .char_indices()
        .find(|(_, ch)| ch.is_control() || !is_printable(*ch))
    {
        why.push(format!(
            "must only contain printable UTF-8 characters; non-printable character found at index {i}"
        ));
    }
    for w in why {
        c.bad(rule, &wpath, format!("Invalid value: \"{warning}\": {w}"));
    }
}

/// Go's `unicode.IsPrint` for the characters a YAML string can hold: letters,
/// marks, numbers, punctuation, symbols and the ASCII space; other spaces
/// (tabs, line breaks, NBSP, …) are not printable.
fn is_printable(ch: char) -> bool {
    ch == ' ' || !(ch.is_whitespace() || ch.is_control() || is_format_char(ch))
}

/// Unicode format characters (category Cf) that show up in copied text.
fn is_format_char(ch: char) -> bool {
    matches!(ch, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{00ad}')
}

/// The places columns and subresources can be written: per version, and for
/// v1beta1 also at the top level.
fn column_and_subresource_owners(c: &Crd) -> Vec<Vec<Seg>> {
    let mut owners = Vec::new();
    if !c.v1 {
        owners.push(path!["spec"].to_vec());
    }
    for i in 0..seq(c.at(&path!["spec", "versions"])).len() {
        owners.push(path!["spec", "versions", i].to_vec());
    }
    owners
}

fn check_columns_and_subresources(c: &mut Crd) {
    // v1 spells it jsonPath, v1beta1 JSONPath; Go's decoder takes either.
    let json_path_key = if c.v1 { "jsonPath" } else { "JSONPath" };
    for owner in column_and_subresource_owners(c) {
        let cols = p(&owner, &path!["additionalPrinterColumns"]);
        let n = seq(c.at(&cols)).len();
        for j in 0..n {
            let col = p(&cols, &path![j]);
            check_column(c, &col, json_path_key);
        }
        let scale = p(&owner, &path!["subresources", "scale"]);
        if present(c.at(&scale)) {
            check_scale(c, &scale);
        }
    }
}

fn check_column(c: &mut Crd, col: &[Seg], json_path_key: &str) {
    let rule = "crd-printer-column-invalid";
    let get = |c: &Crd, k: &str| text(c.at(&p(col, &path![k])));
    if get(c, "name").is_empty() {
        c.bad(rule, &p(col, &path!["name"]), "Required value");
    }
    let types = COLUMN_TYPES.join(",");
    let ty = get(c, "type");
    if ty.is_empty() {
        c.bad(
            rule,
            &p(col, &path!["type"]),
            format!("Required value: must be one of {types}"),
        );
    } else if !COLUMN_TYPES.contains(&ty.as_str()) {
        c.bad(
            rule,
            &p(col, &path!["type"]),
            format!("Invalid value: \"{ty}\": must be one of {types}"),
        );
    }
    let format = get(c, "format");
    if !format.is_empty() && !COLUMN_FORMATS.contains(&format.as_str()) {
        c.bad(
            rule,
            &p(col, &path!["format"]),
            format!(
                "Invalid value: \"{format}\": must be one of {}",
                COLUMN_FORMATS.join(",")
            ),
        );
    }
    let jp = get(c, json_path_key);
    let jpath = p(col, &path![json_path_key]);
    if jp.is_empty() {
        c.bad(rule, &jpath, "Required value");
    } else if let Some(why) = simple_json_path(&jp) {
        c.bad(rule, &jpath, format!("Invalid value: \"{jp}\": {why}"));
    }
}

/// `validateSimpleJSONPath`: what is wrong with a column or scale path.
fn simple_json_path(s: &str) -> Option<&'static str> {
    if s.is_empty() {
        Some("must not be empty")
    } else if !s.starts_with('.') {
        Some("must be a simple json path starting with .")
    } else {
        None
    }
}

fn check_scale(c: &mut Crd, scale: &[Seg]) {
    let rule = "crd-scale-subresource-invalid";
    let spec_path = p(scale, &path!["specReplicasPath"]);
    let spec = text(c.at(&spec_path));
    if spec.is_empty() {
        c.bad(rule, &spec_path, "Required value");
    } else if let Some(why) = simple_json_path(&spec) {
        c.bad(
            rule,
            &spec_path,
            format!("Invalid value: \"{spec}\": {why}"),
        );
    } else if !spec.starts_with(".spec.") {
        c.bad(
            rule,
            &spec_path,
            format!("Invalid value: \"{spec}\": should be a json path under .spec"),
        );
    }
    // statusReplicasPath findings name a field with "status" in it, which the
    // reference drops.
    let sel_path = p(scale, &path!["labelSelectorPath"]);
    let sel = text(c.at(&sel_path));
    if !sel.is_empty() {
        if let Some(why) = simple_json_path(&sel) {
            c.bad(rule, &sel_path, format!("Invalid value: \"{sel}\": {why}"));
        } else if !sel.starts_with(".spec.") && !sel.starts_with(".status.") {
            c.bad(
                rule,
                &sel_path,
                format!(
                    "Invalid value: \"{sel}\": should be a json path under either .spec or .status"
                ),
            );
        }
    }
}

/// v1beta1 only: top-level `validation`, `subresources` and
/// `additionalPrinterColumns` exclude per-version ones, and per-version ones
/// may not all be equal. (v1 has no top-level fields: its conversion to the
/// internal type hoists what all versions share, so these never fire.)
fn check_per_version_exclusive(c: &mut Crd) {
    let rule = "crd-per-version-conflict";
    let versions = seq(c.at(&path!["spec", "versions"]));
    let per = |k: &str| -> Vec<Option<serde_json::Value>> {
        versions
            .iter()
            .map(|v| get(v, k).filter(|n| present(Some(n))).map(Node::to_json))
            .collect()
    };
    let schemas = per("schema");
    let subresources = per("subresources");
    let columns: Vec<Option<serde_json::Value>> = per("additionalPrinterColumns")
        .into_iter()
        .map(|c| c.filter(|v| v.as_array().is_some_and(|a| !a.is_empty())))
        .collect();
    let top = |c: &Crd, k: &str| present(c.at(&path!["spec", k]));
    let hint = "use either the top-level field or the per-version fields, not both";
    if top(c, "validation") && schemas.iter().any(Option::is_some) {
        c.bad_hint(
            rule,
            &path!["spec", "validation"],
            "Forbidden: top-level and per-version schemas are mutually exclusive",
            hint,
        );
    }
    if top(c, "subresources") && subresources.iter().any(Option::is_some) {
        c.bad_hint(
            rule,
            &path!["spec", "subresources"],
            "Forbidden: top-level and per-version subresources are mutually exclusive",
            hint,
        );
    }
    let top_cols = !seq(c.at(&path!["spec", "additionalPrinterColumns"])).is_empty();
    if top_cols && columns.iter().any(Option::is_some) {
        c.bad_hint(
            rule,
            &path!["spec", "additionalPrinterColumns"],
            "Forbidden: top-level and per-version additionalPrinterColumns are mutually exclusive",
            hint,
        );
    }
    let identical = |vals: &[Option<serde_json::Value>]| {
        !vals.is_empty() && vals.iter().all(|v| v.is_some() && *v == vals[0])
    };
    for (vals, what, top_name) in [
        (&schemas, "schemas", "validation"),
        (&subresources, "subresources", "subresources"),
        (
            &columns,
            "additionalPrinterColumns",
            "additionalPrinterColumns",
        ),
    ] {
        if identical(vals) {
            c.bad_hint(
                rule,
                &path!["spec", "versions"],
                format!("Invalid value: per-version {what} may not all be set to identical values (top-level {top_name} should be used instead)"),
                &format!("in apiextensions.k8s.io/v1beta1, write one spec.{top_name} instead, or move the CRD to apiextensions.k8s.io/v1"),
            );
        }
    }
}

/// Where the first `default` of the CRD's schemas is, if any.
fn first_default(c: &Crd) -> Option<Vec<Seg>> {
    let mut roots = Vec::new();
    if !c.v1 {
        roots.push(path!["spec", "validation", "openAPIV3Schema"].to_vec());
    }
    for i in 0..seq(c.at(&path!["spec", "versions"])).len() {
        roots.push(path!["spec", "versions", i, "schema", "openAPIV3Schema"].to_vec());
    }
    roots.into_iter().find_map(|r| {
        let node = c.at(&r)?;
        schema_default(node, r)
    })
}

/// A depth-first search for the `default` keyword through the subschemas of
/// a JSONSchemaProps (a property called `default` is not the keyword).
fn schema_default(node: &Node, here: Vec<Seg>) -> Option<Vec<Seg>> {
    if let Some(e) = field(node, "default") {
        if !matches!(e.value.value, Value::Null) {
            return Some(p(&here, &path!["default"]));
        }
    }
    let Value::Map(entries) = &node.value else {
        return None;
    };
    for e in entries {
        let child = p(&here, &path![e.key.as_str()]);
        let found = match e.key.to_ascii_lowercase().as_str() {
            "properties" | "patternproperties" | "definitions" | "dependencies" => {
                match &e.value.value {
                    Value::Map(props) => props.iter().find_map(|pe| {
                        schema_default(&pe.value, p(&child, &path![pe.key.as_str()]))
                    }),
                    _ => None,
                }
            }
            "items"
            | "additionalitems"
            | "additionalproperties"
            | "not"
            | "allof"
            | "anyof"
            | "oneof" => match &e.value.value {
                Value::Seq(items) => items
                    .iter()
                    .enumerate()
                    .find_map(|(i, n)| schema_default(n, p(&child, &path![i]))),
                Value::Map(_) => schema_default(&e.value, child),
                _ => None,
            },
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The effective `spec.preserveUnknownFields`: v1beta1 defaults it to true.
fn preserve_unknown_fields(c: &Crd) -> bool {
    match c
        .at(&path!["spec", "preserveUnknownFields"])
        .map(|n| &n.value)
    {
        Some(Value::Bool(b)) => *b,
        _ => !c.v1,
    }
}

fn check_preserve_unknown_fields(c: &mut Crd) {
    let rule = "crd-preserve-unknown-fields-invalid";
    let puf = path!["spec", "preserveUnknownFields"];
    let set = preserve_unknown_fields(c);
    if set {
        if let Some(d) = first_default(c) {
            let loc = c.m.location(&d);
            c.bad_hint(
                rule,
                &puf,
                format!(
                    "Invalid value: true: must be false in order to use defaults in the schema (a default at {})",
                    path_to_string(&d)
                ),
                if c.v1 {
                    "remove spec.preserveUnknownFields"
                } else {
                    "set spec.preserveUnknownFields: false (apiextensions.k8s.io/v1beta1 defaults it to true)"
                },
            );
            if let Some(last) = c.out.last_mut() {
                last.related.push(loc);
            }
        }
    }
    // `validatePreserveUnknownFields` runs on every CRD, after the v1beta1
    // default: a v1beta1 CRD that does not say `false` is refused too.
    if set {
        let hint = if c.v1 {
            "remove spec.preserveUnknownFields, and mark the open parts of the schema with x-kubernetes-preserve-unknown-fields: true"
        } else if is_true(c.at(&puf)) {
            "set spec.preserveUnknownFields: false with a structural schema (x-kubernetes-preserve-unknown-fields: true on its open parts), or move the CRD to apiextensions.k8s.io/v1"
        } else {
            "apiextensions.k8s.io/v1beta1 defaults spec.preserveUnknownFields to true; set it to false with a structural schema (x-kubernetes-preserve-unknown-fields: true on its open parts), or move the CRD to apiextensions.k8s.io/v1"
        };
        c.bad_hint(
            rule,
            &puf,
            "Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
            hint,
        );
    }
}

fn check_conversion(c: &mut Crd) {
    let rule = "crd-conversion-invalid";
    let base = path!["spec", "conversion"];
    // Defaulting makes an absent conversion `strategy: None`.
    if !present(c.at(&base)) {
        return;
    }
    let spath = p(&base, &path!["strategy"]);
    let strategy = text(c.at(&spath));
    // Where the client config and review versions live in each apiVersion.
    let (cc_path, rv_path) = if c.v1 {
        (
            p(&base, &path!["webhook", "clientConfig"]),
            p(&base, &path!["webhook", "conversionReviewVersions"]),
        )
    } else {
        (
            p(&base, &path!["webhookClientConfig"]),
            p(&base, &path!["conversionReviewVersions"]),
        )
    };
    if strategy.is_empty() {
        c.bad(rule, &spath, "Required value");
    } else if strategy != "None" && strategy != "Webhook" {
        c.bad(
            rule,
            &spath,
            format!(
                "Unsupported value: \"{strategy}\": supported values: {}",
                quoted_list(&["None", "Webhook"])
            ),
        );
    }
    if !strategy.is_empty() && strategy != "None" && preserve_unknown_fields(c) {
        c.bad_hint(
            rule,
            &spath,
            format!("Invalid value: \"{strategy}\": must be None if spec.preserveUnknownFields is true"),
            if c.v1 {
                "remove spec.preserveUnknownFields"
            } else {
                "set spec.preserveUnknownFields: false (apiextensions.k8s.io/v1beta1 defaults it to true)"
            },
        );
    }
    if strategy == "Webhook" {
        if !present(c.at(&cc_path)) {
            c.bad(
                rule,
                &cc_path,
                "Required value: required when strategy is set to Webhook",
            );
        } else {
            check_client_config(c, &cc_path);
        }
        let reviews: Vec<String> = seq(c.at(&rv_path)).iter().map(|n| text(Some(n))).collect();
        // v1beta1 defaults empty review versions to [v1beta1].
        if reviews.is_empty() {
            if c.v1 {
                c.bad_hint(
                    rule,
                    &rv_path,
                    "Required value",
                    "list the ConversionReview versions the webhook understands, e.g. [v1]",
                );
            }
        } else {
            check_review_versions(c, &rv_path, &reviews);
        }
    } else {
        if present(c.at(&cc_path)) {
            c.bad(
                rule,
                &cc_path,
                "Forbidden: should not be set when strategy is not set to Webhook",
            );
        }
        if !seq(c.at(&rv_path)).is_empty() {
            c.bad(
                rule,
                &rv_path,
                "Forbidden: should not be set when strategy is not set to Webhook",
            );
        }
    }
}

fn check_review_versions(c: &mut Crd, rv_path: &[Seg], reviews: &[String]) {
    let rule = "crd-conversion-invalid";
    let mut seen = BTreeSet::new();
    for (i, v) in reviews.iter().enumerate() {
        let ipath = p(rv_path, &path![i]);
        if !seen.insert(v.as_str()) {
            c.bad(
                rule,
                &ipath,
                format!("Invalid value: \"{v}\": duplicate version"),
            );
            continue;
        }
        for why in names::dns1035_label(v) {
            c.bad(rule, &ipath, format!("Invalid value: \"{v}\": {why}"));
        }
    }
    if !reviews
        .iter()
        .any(|v| REVIEW_VERSIONS.contains(&v.as_str()))
    {
        c.bad(
            rule,
            rv_path,
            format!(
                "Invalid value: {:?}: must include at least one of {}",
                reviews,
                REVIEW_VERSIONS.join(", ")
            ),
        );
    }
}

fn check_client_config(c: &mut Crd, cc: &[Seg]) {
    let rule = "crd-conversion-invalid";
    let url_path = p(cc, &path!["url"]);
    let svc_path = p(cc, &path!["service"]);
    let has_url = present(c.at(&url_path));
    let has_svc = present(c.at(&svc_path));
    if has_url == has_svc {
        c.bad(
            rule,
            cc,
            "Required value: exactly one of url or service is required",
        );
        return;
    }
    if has_url {
        let url = text(c.at(&url_path));
        for why in webhook_url(&url) {
            c.bad(rule, &url_path, format!("Invalid value: \"{url}\": {why}"));
        }
        return;
    }
    let name = text(c.at(&p(&svc_path, &path!["name"])));
    if name.is_empty() {
        c.bad(
            rule,
            &p(&svc_path, &path!["name"]),
            "Required value: service name is required",
        );
    }
    let ns = text(c.at(&p(&svc_path, &path!["namespace"])));
    if ns.is_empty() {
        c.bad(
            rule,
            &p(&svc_path, &path!["namespace"]),
            "Required value: service namespace is required",
        );
    }
    // An absent port is 443 (the API server defaults it).
    let port_path = p(&svc_path, &path!["port"]);
    if let Some(port) = c.at(&port_path).filter(|n| present(Some(n))) {
        let ok = matches!(port.value, Value::Int(n) if (1..=65535).contains(&n));
        if !ok {
            let written = text(Some(port));
            c.bad(
                rule,
                &port_path,
                format!("Invalid value: {written}: port is not valid: must be between 1 and 65535, inclusive"),
            );
        }
    }
    let path_path = p(&svc_path, &path!["path"]);
    if present(c.at(&path_path)) {
        let url_path = text(c.at(&path_path));
        for why in service_path(&url_path) {
            c.bad(
                rule,
                &path_path,
                format!("Invalid value: \"{url_path}\": {why}"),
            );
        }
    }
}

/// `ValidateWebhookURL` with https forced: what is wrong with a webhook URL.
fn webhook_url(u: &str) -> Vec<String> {
    let mut why = Vec::new();
    let Some((scheme, rest)) = u.split_once("://") else {
        return vec![
            "host must be specified".into(),
            "scheme must be https".into(),
        ];
    };
    if scheme != "https" {
        why.push(format!(
            "'https' is the only allowed URL scheme; found \"{scheme}\""
        ));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    if host.is_empty() {
        why.push("host must be specified".into());
    }
    if authority.contains('@') {
        why.push("user information is not permitted in the URL".into());
    }
    if rest.contains('#') {
        why.push("fragments are not permitted in the URL".into());
    }
    if rest.contains('?') {
        why.push("query parameters are not permitted in the URL".into());
    }
    why
}

/// `ValidateWebhookService`'s path rules.
fn service_path(path: &str) -> Vec<String> {
    if path == "/" || path.is_empty() {
        return Vec::new();
    }
    if path == "//" {
        return vec!["segment[0] may not be empty".into()];
    }
    let mut why = Vec::new();
    if !path.starts_with('/') {
        why.push("must start with a '/'".into());
    }
    let mut rest = path.get(1..).unwrap_or("");
    if let Some(stripped) = rest.strip_suffix('/') {
        rest = stripped;
    }
    for (i, step) in rest.split('/').enumerate() {
        if step.is_empty() {
            why.push(format!("segment[{i}] may not be empty"));
            continue;
        }
        for v in names::dns1123_subdomain(step) {
            why.push(format!("segment[{i}]: {v}"));
        }
    }
    why
}

/// Kubernetes-owned API groups need an approval annotation (`validateAPIApproval`
/// runs on the internal type, so on v1beta1 CRDs as well).
fn is_protected_group(group: &str) -> bool {
    group == "k8s.io"
        || group == "kubernetes.io"
        || group.ends_with(".k8s.io")
        || group.ends_with(".kubernetes.io")
}

fn check_api_approval(c: &mut Crd) {
    let group = text(c.at(&path!["spec", "group"]));
    if !is_protected_group(&group) {
        return;
    }
    let rule = "crd-api-approval-missing";
    let apath = path!["metadata", "annotations", API_APPROVED];
    let see = "see https://github.com/kubernetes/enhancements/pull/1111";
    // Annotations are a map: its keys match exactly, unlike struct fields.
    let shown = format!("metadata.annotations[{API_APPROVED}]");
    // An empty value counts as missing (`GetAPIApprovalState`).
    match c.m.root.at(&apath).filter(|n| !text(Some(n)).is_empty()) {
        None => c.bad_shown(
            rule,
            &apath,
            &shown,
            &format!("Required value: protected groups must have approval annotation \"{API_APPROVED}\", {see}"),
            Some("API groups ending in k8s.io or kubernetes.io belong to Kubernetes; use your own domain as the group"),
        ),
        Some(n) => {
            let v = text(Some(n));
            if !v.starts_with("unapproved") && !is_request_uri(&v) {
                c.bad_shown(
                    rule,
                    &apath,
                    &shown,
                    &format!("Invalid value: \"{v}\": protected groups must have approval annotation \"{API_APPROVED}\" with either a URL or a reason starting with \"unapproved\", {see}"),
                    None,
                );
            }
        }
    }
}

/// Go's `url.ParseRequestURI` accepting: an absolute URL (`scheme:` then
/// more) or an absolute path.
fn is_request_uri(s: &str) -> bool {
    if s.starts_with('/') {
        return true;
    }
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|ch| ch.is_ascii_alphabetic())
        && chars.all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '+' | '-' | '.'))
        && !rest.is_empty()
        && !s.contains(' ')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhook_urls() {
        assert!(webhook_url("https://example.com/convert").is_empty());
        assert!(!webhook_url("http://example.com/convert").is_empty());
        assert!(!webhook_url("https://u@example.com/").is_empty());
        assert!(!webhook_url("https://example.com/?a=b").is_empty());
        assert!(!webhook_url("example.com/convert").is_empty());
    }

    #[test]
    fn service_paths() {
        assert!(service_path("/convert").is_empty());
        assert!(service_path("/").is_empty());
        assert!(!service_path("convert").is_empty());
        assert!(!service_path("/a//b").is_empty());
        assert!(!service_path("/Convert").is_empty());
    }

    #[test]
    fn request_uris() {
        assert!(is_request_uri(
            "https://github.com/kubernetes/enhancements/pull/1111"
        ));
        assert!(is_request_uri("/path"));
        assert!(!is_request_uri("approved"));
    }

    #[test]
    fn printable() {
        assert!(is_printable('a') && is_printable(' ') && is_printable('é'));
        assert!(!is_printable('\t') && !is_printable('\u{200b}'));
    }
}
