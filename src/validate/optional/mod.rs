//! The optional suites of `operator-sdk bundle validate --select-optional`:
//! operatorhub, good-practices, alpha-deprecated-apis, standard categories
//! and capabilities.
//!
//! The rules and their levels are those of operator-framework/api
//! `pkg/validation/internal/` (`operatorhub.go`, `operatorhubv2.go`,
//! `good_practices.go`, `removed_apis.go`, `standardcategories.go`,
//! `standardcapabilities.go`). Where the reference folds several objects into
//! one message, a finding is reported here per offending value, so that each
//! points at its file, line and column. Rules that go beyond the reference say
//! so in their documentation.
//!
//! Like the reference's `operatorhub` validator (deprecated there in favour of
//! `operatorhub/v2` + `standardcategories` + `standardcapabilities`, whose
//! union it is), the `operatorhub` suite also runs the category, capability
//! and removed-API checks; their findings keep the rule ids of the suite that
//! owns them, and run once however many selected suites include them.
//!
//! The `multiarch` suite reads the platforms of the CSV's images through the
//! [`multiarch::ImagePlatforms`] the caller puts in
//! [`super::Options::image_platforms`] (the CLI uses the OCI registry client).

pub mod deprecated_apis;
pub mod good_practices;
pub(crate) mod goparse;
pub mod multiarch;
pub mod operatorhub;
pub mod rules;
pub mod standard;

use std::borrow::Cow;

use super::Context;
use crate::bundle::Manifest;
use crate::diag::Finding;
use crate::yaml::{Node, Seg, Value};

/// The optional suites that run offline: name (as given to
/// `--select-optional`) and a one-line description.
pub const SUITES: &[(&str, &str)] = &[
    (
        "operatorhub",
        "OperatorHub.io metadata: provider, maintainers, links, icon, version, minKubeVersion, \
         UI fields; includes standard-categories, standard-capabilities and alpha-deprecated-apis",
    ),
    (
        "good-practices",
        "operator-framework good practices: resource requests, CRD descriptions, channel naming, \
         RBAC to create CRDs, bundle name convention",
    ),
    (
        "alpha-deprecated-apis",
        "Kubernetes APIs removed in 1.16 to 1.32 used by objects or CSV permissions \
         (errors when --k8s-version or minKubeVersion is at or past the removal)",
    ),
    (
        "standard-categories",
        "CSV `categories` annotation holds only OperatorHub's standard categories \
         (or those of $OPERATOR_BUNDLE_CATEGORIES)",
    ),
    (
        "standard-capabilities",
        "CSV `capabilities` annotation is one of OperatorHub's capability levels",
    ),
];

/// The suite that reads registries, kept out of [`SUITES`] (the suites that
/// run offline, which "all" selects) and picked only by name.
pub const MULTIARCH: (&str, &str) = (
    "multiarch",
    "the images of the CSV provide the os/arch pairs of its operatorframework.io/arch.* and \
     os.* labels, and the labels name what the operator image supports (reads the registries)",
);

/// Which checks a run selects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Selection {
    operatorhub: bool,
    good_practices: bool,
    deprecated_apis: bool,
    categories: bool,
    capabilities: bool,
    multiarch: bool,
}

impl Selection {
    fn any(&self) -> bool {
        self.operatorhub
            || self.good_practices
            || self.deprecated_apis
            || self.categories
            || self.capabilities
            || self.multiarch
    }
}

/// Reads suite names, accepting operator-sdk's spellings too
/// (`name=operatorhub`, `operatorhubv2`, `standardcategories`, …). Unknown
/// names are returned.
fn select(names: &[String]) -> (Selection, Vec<String>) {
    let mut sel = Selection::default();
    let mut unknown = Vec::new();
    for raw in names {
        let name = raw.trim();
        let name = name.strip_prefix("name=").unwrap_or(name);
        let norm: String = name
            .chars()
            .filter(|c| !matches!(c, '-' | '_' | '/' | ' '))
            .flat_map(char::to_lowercase)
            .collect();
        match norm.as_str() {
            "operatorhub" | "operatorhubv2" => {
                sel.operatorhub = true;
                sel.categories = true;
                sel.capabilities = true;
                sel.deprecated_apis = true;
            }
            "goodpractices" => sel.good_practices = true,
            "alphadeprecatedapis" | "deprecatedapis" => sel.deprecated_apis = true,
            "standardcategories" => sel.categories = true,
            "standardcapabilities" => sel.capabilities = true,
            "multiarch" => sel.multiarch = true,
            "all" | "suite=operatorframework" => {
                sel = Selection {
                    operatorhub: true,
                    good_practices: true,
                    deprecated_apis: true,
                    categories: true,
                    capabilities: true,
                    multiarch: sel.multiarch,
                }
            }
            "" => {}
            _ => unknown.push(raw.clone()),
        }
    }
    (sel, unknown)
}

/// Runs the optional suites named in `ctx.options.optional`.
pub fn run(ctx: &Context, out: &mut Vec<Finding>) {
    let (sel, unknown) = select(&ctx.options.optional);
    for name in unknown {
        let known: Vec<&str> = SUITES.iter().map(|(n, _)| *n).collect();
        out.push(
            Finding::error(
                "optional-suite-unknown",
                format!("there is no optional suite named `{name}`"),
            )
            .hint(format!("the optional suites are: {}", known.join(", "))),
        );
    }
    if !sel.any() {
        return;
    }
    // Every reference suite stops at "Bundle csv is nil"; the default suite
    // already reports a missing CSV, so nothing is added here.
    let Some(csv) = ctx.bundle.csv_manifest() else {
        return;
    };
    if sel.operatorhub {
        operatorhub::check(ctx, csv, out);
    }
    if sel.categories {
        standard::check_categories(csv, out);
    }
    if sel.capabilities {
        standard::check_capabilities(csv, out);
    }
    if sel.deprecated_apis {
        deprecated_apis::check(ctx, csv, out);
    }
    if sel.good_practices {
        good_practices::check(ctx, csv, out);
    }
    if sel.multiarch {
        multiarch::check(csv, ctx.options.image_platforms.as_deref(), out);
    }
}

/// The text of a scalar as Go would decode it into a string field: the
/// string itself, or a number or boolean as written; `None` for null, a
/// missing value or a collection.
pub(crate) fn scalar(node: Option<&Node>) -> Option<Cow<'_, str>> {
    let node = node?;
    match &node.value {
        Value::Str(s) => Some(Cow::Borrowed(s)),
        Value::Null | Value::Seq(_) | Value::Map(_) => None,
        _ => node.raw().map(Cow::Borrowed),
    }
}

/// [`scalar`] at `path` of a manifest, `""` when absent (Go's zero value).
pub(crate) fn text_at<'a>(m: &'a Manifest, path: &[Seg]) -> Cow<'a, str> {
    scalar(m.root.at(path)).unwrap_or(Cow::Borrowed(""))
}

/// The items of a sequence, or nothing if `node` is not one.
pub(crate) fn items(node: Option<&Node>) -> &[Node] {
    match node.map(|n| &n.value) {
        Some(Value::Seq(items)) => items,
        _ => &[],
    }
}

/// The strings of a sequence of scalars (other items skipped).
pub(crate) fn strings(node: Option<&Node>) -> Vec<(usize, Cow<'_, str>)> {
    items(node)
        .iter()
        .enumerate()
        .filter_map(|(i, n)| scalar(Some(n)).map(|s| (i, s)))
        .collect()
}

/// Builds a path from a base and more segments.
pub(crate) fn join(base: &[Seg], more: &[Seg]) -> Vec<Seg> {
    let mut p = base.to_vec();
    p.extend_from_slice(more);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_accepts_operator_sdk_spellings() {
        let (s, unknown) = select(&["name=operatorhub".into(), "good_practices".into()]);
        assert!(s.operatorhub && s.categories && s.capabilities && s.deprecated_apis);
        assert!(s.good_practices);
        assert!(unknown.is_empty());
        let (s, unknown) = select(&["standardcategories".into(), "nope".into()]);
        assert!(s.categories && !s.capabilities && !s.operatorhub);
        assert_eq!(unknown, vec!["nope".to_string()]);
        for (name, _) in SUITES {
            let (s, unknown) = select(&[name.to_string()]);
            assert!(s.any() && unknown.is_empty(), "{name}");
        }
    }
}
