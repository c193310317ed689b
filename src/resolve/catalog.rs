//! The catalog as OLM's resolvers see it: per package its graph, per
//! bundle the APIs it provides and the dependencies it declares.

use std::collections::BTreeMap;
use std::path::Path;

use semver::Version;
use serde_json::Value;

use crate::fbc::DeclarativeConfig;
use crate::graph::PackageGraph;
use crate::semver_range::Range;

use crate::bundle::Gvk;

/// An API as the rehearsal's messages name it: `group/version Kind`.
pub(super) fn api_text(g: &Gvk) -> String {
    format!("{}/{} {}", g.group, g.version, g.kind)
}

/// A dependency a bundle declares; every form is a test on one bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// `olm.package.required`: a bundle of the package in the range.
    Package {
        /// Package name.
        name: String,
        /// blang range as written.
        range: String,
        /// The parsed range.
        parsed: Range,
    },
    /// `olm.gvk.required`: a bundle that provides the API.
    Gvk(Gvk),
    /// `olm.label.required`: a bundle with the label.
    Label(String),
    /// `olm.constraint` `all`: one bundle satisfying every part.
    All(Vec<Requirement>),
    /// `olm.constraint` `any`: one bundle satisfying some part.
    Any(Vec<Requirement>),
    /// `olm.constraint` `not`: one bundle satisfying no part.
    Not(Vec<Requirement>),
    /// `olm.constraint` `cel`: a bundle whose properties satisfy the rule.
    Cel {
        /// The compiled rule.
        program: crate::validate::cel::Program,
        /// The constraint's `failureMessage`.
        failure_message: String,
    },
    /// A dependency OLM v0 cannot read: it fails the whole resolution.
    Invalid(String),
}

impl Requirement {
    /// What it asks for, in words.
    pub fn describe(&self) -> String {
        let list = |rs: &[Requirement]| {
            rs.iter()
                .map(Requirement::describe)
                .collect::<Vec<_>>()
                .join("; ")
        };
        match self {
            Requirement::Package { name, range, .. } => {
                format!("package {name} in range {range}")
            }
            Requirement::Gvk(g) => format!("an operator providing {}", api_text(g)),
            Requirement::Label(l) => format!("an operator with label {l}"),
            Requirement::All(rs) => format!("one operator with all of ({})", list(rs)),
            Requirement::Any(rs) => format!("one operator with any of ({})", list(rs)),
            Requirement::Not(rs) => format!("an operator with none of ({})", list(rs)),
            Requirement::Cel {
                program,
                failure_message,
            } => {
                if failure_message.is_empty() {
                    format!("an operator satisfying the CEL rule {}", program.rule())
                } else {
                    format!(
                        "an operator satisfying the CEL rule {} ({failure_message})",
                        program.rule()
                    )
                }
            }
            Requirement::Invalid(why) => why.clone(),
        }
    }

    /// What it asks for in OLM v0's words: the `String()` of the resolver's
    /// predicate (operator-lifecycle-manager `cache/predicates.go`), which
    /// follows "bundle X requires an operator " in OLM's messages.
    pub fn olm_text(&self) -> String {
        let join = |rs: &[Requirement], sep: &str| {
            rs.iter()
                .map(Requirement::olm_text)
                .collect::<Vec<_>>()
                .join(sep)
        };
        match self {
            Requirement::Package { name, range, .. } => {
                format!("with package: {name} and with version in range: {range}")
            }
            Requirement::Gvk(g) => format!(
                "providing an API with group: {}, version: {}, kind: {}",
                g.group, g.version, g.kind
            ),
            Requirement::Label(l) => format!("with label: {l}"),
            Requirement::All(rs) => join(rs, " and "),
            Requirement::Any(rs) => join(rs, " or "),
            // OLM's wording: "a and not b" for not(a, b).
            Requirement::Not(rs) => join(rs, " and not "),
            Requirement::Cel {
                program,
                failure_message,
            } => format!(
                "with constraint: {:?} and message: {:?}",
                program.rule(),
                failure_message
            ),
            Requirement::Invalid(why) => why.clone(),
        }
    }

    /// Whether bundle `b` satisfies it.
    pub(super) fn test(&self, b: &CatBundle) -> bool {
        match self {
            Requirement::Package { name, parsed, .. } => {
                b.package == *name && b.version.as_ref().is_some_and(|v| parsed.admits(v))
            }
            Requirement::Gvk(g) => b.provides.contains(g),
            Requirement::Label(l) => b.labels.contains(l),
            Requirement::All(rs) => rs.iter().all(|r| r.test(b)),
            Requirement::Any(rs) => rs.iter().any(|r| r.test(b)),
            Requirement::Not(rs) => !rs.iter().any(|r| r.test(b)),
            // An evaluation error counts as not satisfied, as in OLM.
            Requirement::Cel { program, .. } => program.evaluate(&b.properties).unwrap_or(false),
            Requirement::Invalid(_) => false,
        }
    }
}

/// A bundle with what the resolvers read of it.
#[derive(Clone, Debug, Default)]
pub struct CatBundle {
    /// Bundle (CSV) name.
    pub name: String,
    /// Package.
    pub package: String,
    /// Version, if semver.
    pub version: Option<Version>,
    /// Version as written.
    pub raw_version: String,
    /// `olm.gvk`: the APIs it provides.
    pub provides: Vec<Gvk>,
    /// `olm.label` values.
    pub labels: Vec<String>,
    /// Its dependencies.
    pub requires: Vec<Requirement>,
    /// The property types OLM v1 refuses (`olm.package.required`,
    /// `olm.gvk.required`, `olm.constraint`), as found.
    pub dependency_properties: Vec<String>,
    /// It carries `olm.deprecated`: OLM v0 never chooses it.
    pub deprecated: bool,
    /// Every property as `{type, value}`, what a CEL rule sees.
    pub properties: Vec<Value>,
}

/// A catalog: one graph per package and every bundle.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    /// What it was read from, for messages.
    pub source: String,
    /// Graphs by package name.
    pub graphs: BTreeMap<String, PackageGraph>,
    /// Bundles by package, then name (looked up without building a key:
    /// the v0 solver asks for a bundle at every step).
    pub bundles: BTreeMap<String, BTreeMap<String, CatBundle>>,
}

pub(super) fn str_field(v: &Value, k: &str) -> String {
    crate::gojson::struct_str(v, k).to_string()
}

fn gvk_of(v: &Value) -> Gvk {
    Gvk::from_json(v)
}

fn package_requirement(name: &str, range_text: &str, what: &str) -> Requirement {
    match Range::parse(range_text) {
        Ok(parsed) => Requirement::Package {
            name: name.to_string(),
            range: range_text.to_string(),
            parsed,
        },
        Err(e) => Requirement::Invalid(format!(
            "{what} for package {name} has versionRange {range_text:?}, which does not parse ({e}); OLM v0 fails the resolution"
        )),
    }
}

/// The fields an `olm.constraint` may have (operator-framework/api
/// `constraints.Constraint`, decoded with unknown fields refused).
const CONSTRAINT_FIELDS: &[&str] = &[
    "failureMessage",
    "gvk",
    "package",
    "all",
    "any",
    "not",
    "cel",
];

/// An `olm.constraint` value (operator-framework/api `constraints.Parse`,
/// then the resolver's `convertConstraints`).
fn constraint_requirement(v: &Value) -> Requirement {
    if let Some(obj) = v.as_object() {
        if let Some(k) = obj
            .keys()
            .find(|k| !CONSTRAINT_FIELDS.contains(&k.as_str()))
        {
            return Requirement::Invalid(format!(
                "parse olm.constraint: json: unknown field {k:?} (OLM v0 fails the resolution)"
            ));
        }
    }
    let list = |k: &str| -> Vec<Requirement> {
        v.get(k)
            .and_then(|x| x.get("constraints"))
            .and_then(Value::as_array)
            .map(|a| a.iter().map(constraint_requirement).collect())
            .unwrap_or_default()
    };
    if let Some(g) = v.get("gvk") {
        Requirement::Gvk(gvk_of(g))
    } else if let Some(p) = v.get("package") {
        package_requirement(
            &str_field(p, "packageName"),
            &str_field(p, "versionRange"),
            "olm.constraint package",
        )
    } else if v.get("all").is_some() {
        Requirement::All(list("all"))
    } else if v.get("any").is_some() {
        Requirement::Any(list("any"))
    } else if v.get("not").is_some() {
        Requirement::Not(list("not"))
    } else if let Some(c) = v.get("cel") {
        let rule = str_field(c, "rule");
        match crate::validate::cel::Program::compile(&rule) {
            Ok(program) => Requirement::Cel {
                program,
                failure_message: str_field(v, "failureMessage"),
            },
            Err(e) => Requirement::Invalid(format!(
                "convert olm.constraint to resolver predicate: the cel rule {rule:?} does not compile: {e} (OLM v0 fails the resolution)"
            )),
        }
    } else {
        Requirement::Invalid(
            "convert olm.constraint to resolver predicate: constraint is empty (OLM v0 fails the resolution)".into(),
        )
    }
}

impl CatBundle {
    /// A bundle read from its properties (FBC `properties`).
    pub fn from_properties(name: &str, package: &str, props: &[crate::fbc::Property]) -> CatBundle {
        let mut cb = CatBundle {
            name: name.to_string(),
            package: package.to_string(),
            ..CatBundle::default()
        };
        for p in props {
            let v = &p.value;
            cb.properties
                .push(serde_json::json!({"type": p.kind, "value": v}));
            match p.kind.as_str() {
                "olm.package" => {
                    cb.raw_version = str_field(v, "version");
                    cb.version = Version::parse(&cb.raw_version).ok();
                    if cb.package.is_empty() {
                        cb.package = str_field(v, "packageName");
                    }
                }
                "olm.gvk" => cb.provides.push(gvk_of(v)),
                "olm.label" => cb.labels.push(str_field(v, "label")),
                "olm.deprecated" => cb.deprecated = true,
                "olm.gvk.required" => {
                    cb.dependency_properties.push(p.kind.clone());
                    cb.requires.push(Requirement::Gvk(gvk_of(v)));
                }
                "olm.package.required" => {
                    cb.dependency_properties.push(p.kind.clone());
                    cb.requires.push(package_requirement(
                        &str_field(v, "packageName"),
                        &str_field(v, "versionRange"),
                        "olm.package.required",
                    ));
                }
                "olm.label.required" => {
                    cb.requires.push(Requirement::Label(str_field(v, "label")));
                }
                "olm.constraint" => {
                    cb.dependency_properties.push(p.kind.clone());
                    cb.requires.push(constraint_requirement(v));
                }
                _ => {}
            }
        }
        cb
    }
}

impl Catalog {
    /// Reads a catalog; `source` names it in messages.
    pub fn from_fbc(cfg: &DeclarativeConfig, source: &str) -> Catalog {
        let graphs = PackageGraph::from_fbc(cfg, Path::new(source))
            .into_iter()
            .map(|g| (g.package.clone(), g))
            .collect();
        let mut bundles: BTreeMap<String, BTreeMap<String, CatBundle>> = BTreeMap::new();
        for b in &cfg.bundles {
            let cb = CatBundle::from_properties(&b.name, &b.package, &b.properties);
            bundles
                .entry(cb.package.clone())
                .or_default()
                .insert(cb.name.clone(), cb);
        }
        Catalog {
            source: source.to_string(),
            graphs,
            bundles,
        }
    }

    pub(super) fn bundle(&self, package: &str, name: &str) -> Option<&CatBundle> {
        self.bundles.get(package)?.get(name)
    }

    pub(super) fn version_text(&self, package: &str, name: &str) -> String {
        self.bundle(package, name)
            .map(|b| b.raw_version.clone())
            .unwrap_or_default()
    }

    /// The channels of every package in OLM v0's dependency order: default
    /// channels first, then by package name, then by channel name.
    pub(super) fn channels_in_v0_order(&self) -> Vec<(&PackageGraph, &crate::graph::Channel)> {
        let mut out: Vec<(&PackageGraph, &crate::graph::Channel)> = self
            .graphs
            .values()
            .flat_map(|g| g.channels.iter().map(move |c| (g, c)))
            .collect();
        out.sort_by(|(ga, ca), (gb, cb)| {
            let da = ga.default_channel == ca.name;
            let db = gb.default_channel == cb.name;
            db.cmp(&da)
                .then_with(|| ga.package.cmp(&gb.package))
                .then_with(|| ca.name.cmp(&cb.name))
        });
        out
    }
}

// ---- ClusterCatalogs (OLM v1) and the `NAME=...` command-line forms ----

/// The label every ClusterCatalog carries with its own name
/// (operator-controller sets it; selectors often use it).
pub const CATALOG_NAME_LABEL: &str = "olm.operatorframework.io/metadata.name";

/// A ClusterCatalog as OLM v1 resolves across them: its name, priority
/// (`spec.priority`, higher wins), labels (with
/// [`CATALOG_NAME_LABEL`]) and content.
#[derive(Clone, Debug)]
pub struct ClusterCatalog<'a> {
    /// `metadata.name`.
    pub name: String,
    /// `spec.priority` (default 0).
    pub priority: i32,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// What it serves.
    pub catalog: &'a Catalog,
    /// `spec.availabilityMode` is `Available` (the default). operator-controller's
    /// `CatalogWalker` leaves an `Unavailable` catalog out of resolution.
    pub available: bool,
}

impl<'a> ClusterCatalog<'a> {
    /// A catalog named `name`, priority 0, with only its name label.
    pub fn new(name: &str, catalog: &'a Catalog) -> ClusterCatalog<'a> {
        let mut labels = BTreeMap::new();
        labels.insert(CATALOG_NAME_LABEL.to_string(), name.to_string());
        ClusterCatalog {
            name: name.to_string(),
            priority: 0,
            labels,
            catalog,
            available: true,
        }
    }
}

/// Splits `NAME=REST` (`--catalog NAME=SOURCE`, `--catalog-priority
/// NAME=N`, `--catalog-labels NAME=k=v,...`); the error names the flag.
pub fn split_named<'s>(flag: &str, arg: &'s str) -> Result<(&'s str, &'s str), String> {
    match arg.split_once('=') {
        Some((name, rest)) if !name.is_empty() => Ok((name, rest)),
        _ => Err(format!("{flag} {arg:?}: expected NAME=VALUE")),
    }
}

/// `--catalog-priority NAME=N`.
pub fn parse_priority(arg: &str) -> Result<(String, i32), String> {
    let (name, n) = split_named("--catalog-priority", arg)?;
    let n: i32 = n.trim().parse().map_err(|e| {
        format!("--catalog-priority {arg:?}: the priority must be an integer ({e})")
    })?;
    Ok((name.to_string(), n))
}

/// `--catalog-labels NAME=k=v,k2=v2`.
pub fn parse_labels(arg: &str) -> Result<(String, BTreeMap<String, String>), String> {
    let (name, rest) = split_named("--catalog-labels", arg)?;
    let mut labels = BTreeMap::new();
    for kv in rest.split(',').filter(|s| !s.trim().is_empty()) {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(format!("--catalog-labels {arg:?}: {kv:?} is not KEY=VALUE"));
        };
        labels.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok((name.to_string(), labels))
}

/// `--catalog-availability NAME=Available|Unavailable` (a ClusterCatalog's
/// `spec.availabilityMode`, operator-controller `api/v1` `AvailabilityMode`):
/// whether the catalog is available.
pub fn parse_availability(arg: &str) -> Result<(String, bool), String> {
    let (name, mode) = split_named("--catalog-availability", arg)?;
    match mode.trim() {
        "Available" => Ok((name.to_string(), true)),
        "Unavailable" => Ok((name.to_string(), false)),
        other => Err(format!(
            "--catalog-availability {arg:?}: {other:?} is not Available or Unavailable"
        )),
    }
}
