//! A rehearsal of what OLM would do with a Subscription (OLM v0) or a
//! ClusterExtension (OLM v1) against a catalog: what it installs first,
//! which dependencies it pulls in, every upgrade it takes after, and, when
//! it cannot install, which constraint fails and why.
//!
//! **OLM v0** (operator-lifecycle-manager `pkg/controller/registry/resolver`):
//! the Subscription's candidates are the entries of its channel (every
//! channel, default first, when none is named) in replaces-chain order,
//! head first, or only `startingCSV` when given. Each bundle's
//! `olm.package.required`, `olm.gvk.required`, `olm.label.required` and
//! `olm.constraint` properties are dependencies; the candidates for one are
//! the catalog's bundles that satisfy it, ordered as the resolver's
//! `sortBundles` does (default channels first, then package name, then
//! channel name; head first in a channel; only bundles on a replaces
//! chain). No two chosen bundles may be of one package or provide one GVK.
//! The solver takes the most preferred candidate of each choice and backs
//! off to the next when a later choice cannot be satisfied, so a head whose
//! dependencies fail makes OLM install an older entry: the rehearsal says
//! so. After the install every Subscription (the dependencies get their
//! own, on the channel they came from) moves one replaces/skips/skipRange
//! hop at a time while the whole set stays satisfiable; with
//! `installPlanApproval: Manual` it stops after the install.
//!
//! **OLM v1** (operator-controller `resolve/catalog.go`): the candidates
//! are the package's bundles in any of `channels` (all bundles when none is
//! given) whose version satisfies `version` (Masterminds syntax,
//! [`super::masterminds`]), non-deprecated first, highest version first.
//! Once installed, with the default `upgradeConstraintPolicy:
//! CatalogProvided` only successors ([`super::successors::v1_successors`])
//! or the installed version qualify; `SelfCertified` lifts that. A bundle
//! with dependency properties is refused (`NoDependencyValidation`).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

use semver::Version;
use serde_json::Value;

use super::successors::{self, Olm};
use super::{EdgeKind, PackageGraph};
use crate::fbc::DeclarativeConfig;
use crate::semver_range::{self as range, Range};

// ---- the catalog as the resolvers see it ----

/// A group/version/kind.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Gvk {
    /// API group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

impl std::fmt::Display for Gvk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{} {}", self.group, self.version, self.kind)
    }
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
    /// A dependency OLM v0 cannot read (it fails the resolution) or that
    /// this rehearsal does not model (`cel`).
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
            Requirement::Gvk(g) => format!("an operator providing {g}"),
            Requirement::Label(l) => format!("an operator with label {l}"),
            Requirement::All(rs) => format!("one operator with all of ({})", list(rs)),
            Requirement::Any(rs) => format!("one operator with any of ({})", list(rs)),
            Requirement::Not(rs) => format!("an operator with none of ({})", list(rs)),
            Requirement::Invalid(why) => why.clone(),
        }
    }

    /// Whether bundle `b` satisfies it.
    fn test(&self, b: &CatBundle) -> bool {
        match self {
            Requirement::Package { name, parsed, .. } => {
                b.package == *name && b.version.as_ref().is_some_and(|v| parsed.admits(v))
            }
            Requirement::Gvk(g) => b.provides.contains(g),
            Requirement::Label(l) => b.labels.contains(l),
            Requirement::All(rs) => rs.iter().all(|r| r.test(b)),
            Requirement::Any(rs) => rs.iter().any(|r| r.test(b)),
            Requirement::Not(rs) => !rs.iter().any(|r| r.test(b)),
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
}

/// A catalog: one graph per package and every bundle.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    /// What it was read from, for messages.
    pub source: String,
    /// Graphs by package name.
    pub graphs: BTreeMap<String, PackageGraph>,
    /// Bundles by (package, name).
    pub bundles: BTreeMap<(String, String), CatBundle>,
}

fn str_field(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

fn gvk_of(v: &Value) -> Gvk {
    Gvk {
        group: str_field(v, "group"),
        version: str_field(v, "version"),
        kind: str_field(v, "kind"),
    }
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

/// An `olm.constraint` value (operator-framework/api `constraints.Parse`).
fn constraint_requirement(v: &Value) -> Requirement {
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
    } else if v.get("cel").is_some() {
        Requirement::Invalid(format!(
            "an olm.constraint cel rule ({}), which this rehearsal does not evaluate",
            v.get("cel")
                .and_then(|c| c.get("rule"))
                .and_then(Value::as_str)
                .unwrap_or("?")
        ))
    } else {
        Requirement::Invalid(
            "an olm.constraint with no known constraint type (OLM v0 fails the resolution)".into(),
        )
    }
}

impl Catalog {
    /// Reads a catalog; `source` names it in messages.
    pub fn from_fbc(cfg: &DeclarativeConfig, source: &str) -> Catalog {
        let graphs = PackageGraph::from_fbc(cfg, Path::new(source))
            .into_iter()
            .map(|g| (g.package.clone(), g))
            .collect();
        let mut bundles = BTreeMap::new();
        for b in &cfg.bundles {
            let mut cb = CatBundle {
                name: b.name.clone(),
                package: b.package.clone(),
                ..CatBundle::default()
            };
            for p in &b.properties {
                let v = &p.value;
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
            bundles.insert((cb.package.clone(), cb.name.clone()), cb);
        }
        Catalog {
            source: source.to_string(),
            graphs,
            bundles,
        }
    }

    fn bundle(&self, package: &str, name: &str) -> Option<&CatBundle> {
        self.bundles.get(&(package.to_string(), name.to_string()))
    }

    fn version_text(&self, package: &str, name: &str) -> String {
        self.bundle(package, name)
            .map(|b| b.raw_version.clone())
            .unwrap_or_default()
    }

    /// The channels of every package in OLM v0's dependency order: default
    /// channels first, then by package name, then by channel name.
    fn channels_in_v0_order(&self) -> Vec<(&PackageGraph, &super::Channel)> {
        let mut out: Vec<(&PackageGraph, &super::Channel)> = self
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

// ---- what was asked ----

/// A Subscription (operators.coreos.com/v1alpha1), the fields OLM v0's
/// resolver reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Subscription {
    /// `metadata.name`.
    pub name: String,
    /// `spec.name`: the package.
    pub package: String,
    /// `spec.channel` (empty: any channel, the default first).
    pub channel: String,
    /// `spec.startingCSV`.
    pub starting_csv: String,
    /// `spec.installPlanApproval` (`Automatic` unless `Manual`).
    pub install_plan_approval: String,
    /// `spec.source`: the CatalogSource named (informative).
    pub source: String,
}

/// A ClusterExtension (olm.operatorframework.io/v1, or the older flat
/// v1alpha1 spec), the fields operator-controller's resolver reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterExtension {
    /// `metadata.name`.
    pub name: String,
    /// `packageName`.
    pub package: String,
    /// `version`: a Masterminds constraint (empty: any).
    pub version: String,
    /// `channels` (empty: every bundle of the package).
    pub channels: Vec<String>,
    /// `upgradeConstraintPolicy`: `CatalogProvided` (default) or `SelfCertified`.
    pub upgrade_constraint_policy: String,
}

fn read_yaml(text: &str, file: &Path) -> Result<Value, String> {
    let mut docs = Vec::new();
    for d in yaml_serde::Deserializer::from_str(text) {
        let v: Value =
            serde::Deserialize::deserialize(d).map_err(|e| format!("{}: {e}", file.display()))?;
        if !v.is_null() {
            docs.push(v);
        }
    }
    match docs.len() {
        1 => Ok(docs.remove(0)),
        0 => Err(format!("{}: no YAML document", file.display())),
        n => Err(format!(
            "{}: {n} YAML documents; give one object",
            file.display()
        )),
    }
}

fn check_kind(v: &Value, want: &str, file: &Path) -> Result<(), String> {
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
    if !kind.is_empty() && kind != want {
        return Err(format!(
            "{}: kind is {kind}, expected {want}",
            file.display()
        ));
    }
    if v.get("spec").is_none_or(|s| !s.is_object()) {
        return Err(format!("{}: {want} has no spec", file.display()));
    }
    Ok(())
}

fn string_at(v: &Value, path: &[&str], file: &Path) -> Result<String, String> {
    let mut cur = v;
    for k in path {
        match cur.get(k) {
            Some(x) => cur = x,
            None => return Ok(String::new()),
        }
    }
    match cur {
        Value::String(s) => Ok(s.clone()),
        Value::Null => Ok(String::new()),
        other => Err(format!(
            "{}: {} must be a string, not {other}",
            file.display(),
            path.join(".")
        )),
    }
}

impl Subscription {
    /// Reads a Subscription from YAML; errors name the file and field.
    pub fn parse(text: &str, file: &Path) -> Result<Subscription, String> {
        let v = read_yaml(text, file)?;
        check_kind(&v, "Subscription", file)?;
        let s = |p: &[&str]| string_at(&v, p, file);
        let sub = Subscription {
            name: s(&["metadata", "name"])?,
            package: s(&["spec", "name"])?,
            channel: s(&["spec", "channel"])?,
            starting_csv: s(&["spec", "startingCSV"])?,
            install_plan_approval: s(&["spec", "installPlanApproval"])?,
            source: s(&["spec", "source"])?,
        };
        if sub.package.is_empty() {
            return Err(format!(
                "{}: spec.name (the package) is missing",
                file.display()
            ));
        }
        if !matches!(
            sub.install_plan_approval.as_str(),
            "" | "Automatic" | "Manual"
        ) {
            return Err(format!(
                "{}: spec.installPlanApproval is {:?}; it must be Automatic or Manual",
                file.display(),
                sub.install_plan_approval
            ));
        }
        Ok(sub)
    }
}

impl ClusterExtension {
    /// Reads a ClusterExtension from YAML: `spec.source.catalog` (v1), else
    /// the v1alpha1 fields directly under `spec`.
    pub fn parse(text: &str, file: &Path) -> Result<ClusterExtension, String> {
        let v = read_yaml(text, file)?;
        check_kind(&v, "ClusterExtension", file)?;
        let base: &[&str] = if v.pointer("/spec/source/catalog").is_some() {
            &["spec", "source", "catalog"]
        } else {
            &["spec"]
        };
        let at = |k: &str| {
            let mut p = base.to_vec();
            p.push(k);
            string_at(&v, &p, file)
        };
        let mut channels = Vec::new();
        let mut node = &v;
        for k in base {
            node = &node[*k];
        }
        match node.get("channels") {
            Some(Value::Array(a)) => {
                for c in a {
                    match c.as_str() {
                        Some(s) => channels.push(s.to_string()),
                        None => {
                            return Err(format!(
                                "{}: {}.channels must be a list of strings",
                                file.display(),
                                base.join(".")
                            ))
                        }
                    }
                }
            }
            Some(Value::Null) | None => {}
            Some(_) => {
                return Err(format!(
                    "{}: {}.channels must be a list of strings",
                    file.display(),
                    base.join(".")
                ))
            }
        }
        // v1alpha1 had one `channel`.
        let one = at("channel")?;
        if !one.is_empty() {
            channels.push(one);
        }
        let ce = ClusterExtension {
            name: string_at(&v, &["metadata", "name"], file)?,
            package: at("packageName")?,
            version: at("version")?,
            channels,
            upgrade_constraint_policy: at("upgradeConstraintPolicy")?,
        };
        if ce.package.is_empty() {
            return Err(format!(
                "{}: {}.packageName is missing",
                file.display(),
                base.join(".")
            ));
        }
        if !matches!(
            ce.upgrade_constraint_policy.as_str(),
            "" | "CatalogProvided" | "SelfCertified"
        ) {
            return Err(format!(
                "{}: upgradeConstraintPolicy is {:?}; it must be CatalogProvided or SelfCertified",
                file.display(),
                ce.upgrade_constraint_policy
            ));
        }
        Ok(ce)
    }
}

// ---- the result ----

/// A bundle the rehearsal installs.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Placed {
    /// Bundle name.
    pub bundle: String,
    /// Its package.
    pub package: String,
    /// Its version.
    pub version: String,
    /// The channel it comes from (OLM v1: the first selected channel that
    /// lists it; empty when it is in none).
    pub channel: String,
    /// For a dependency: the bundle that needs it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required_by: Option<String>,
    /// For a dependency: what it satisfies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requirement: Option<String>,
}

/// A candidate OLM prefers but cannot install, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PassedOver {
    /// Bundle name.
    pub bundle: String,
    /// Why not.
    pub reason: String,
}

/// One upgrade.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Upgrade {
    /// Resolution round (OLM v0: every Subscription moves at most one hop
    /// per round; OLM v1: one per reconcile).
    pub round: usize,
    /// Package upgraded.
    pub package: String,
    /// Installed bundle.
    pub from: String,
    /// Bundle upgraded to.
    pub to: String,
    /// Which field of `to` admits `from` (none under SelfCertified).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<EdgeKind>,
    /// The channel whose entry admits it.
    pub channel: String,
    /// Dependencies installed with it.
    pub new_dependencies: Vec<Placed>,
    /// More preferred candidates passed over.
    pub passed_over: Vec<PassedOver>,
}

/// What OLM would do.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rehearsal {
    /// Whose rules.
    pub olm: Olm,
    /// `Subscription` or `ClusterExtension`.
    pub kind: String,
    /// Its `metadata.name`.
    pub name: String,
    /// The package asked for.
    pub package: String,
    /// The catalog.
    pub catalog: String,
    /// Whether OLM can install it.
    pub installable: bool,
    /// What OLM installs first: the bundle, then its dependencies.
    pub install: Vec<Placed>,
    /// The first of `install` was given as installed already (OLM v1
    /// `--installed`): the rehearsal starts from it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub already_installed: bool,
    /// Bundles OLM prefers over the one installed but cannot install.
    pub passed_over: Vec<PassedOver>,
    /// Every upgrade after, in order.
    pub upgrades: Vec<Upgrade>,
    /// Why it stops (or why nothing installs).
    pub end: String,
    /// Notes: approval, refused upgrades, what is not modelled.
    pub notes: Vec<String>,
}

// ---- OLM v0 ----

/// A bundle chosen by the solver.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Chosen {
    package: String,
    name: String,
    channel: String,
    required_by: Option<String>,
    requirement: Option<String>,
}

/// A dependency still to satisfy.
#[derive(Clone, Debug)]
struct Pending {
    owner: String,
    owner_package: String,
    index: usize,
}

const SEARCH_BUDGET: usize = 50_000;

struct V0<'a> {
    cat: &'a Catalog,
    /// Channel orders, computed once: (package, channel) -> chain or error.
    orders: BTreeMap<(String, String), Result<Vec<String>, String>>,
    budget: usize,
    /// In an upgrade round: the bundles other Subscriptions may move to in
    /// the same resolution (their one-hop successors), by package.
    movable: BTreeMap<String, Vec<String>>,
    /// Every channel in the resolver's dependency order.
    channel_order: Vec<(&'a PackageGraph, &'a super::Channel)>,
    /// Candidates by requirement (its description), computed once.
    memo: std::cell::RefCell<BTreeMap<String, Result<Vec<Chosen>, String>>>,
}

impl<'a> V0<'a> {
    fn new(cat: &'a Catalog) -> V0<'a> {
        let mut orders = BTreeMap::new();
        for g in cat.graphs.values() {
            for c in &g.channels {
                orders.insert(
                    (g.package.clone(), c.name.clone()),
                    successors::v0_channel_order(&g.package, c)
                        .map(|v| v.into_iter().map(String::from).collect()),
                );
            }
        }
        V0 {
            cat,
            orders,
            budget: SEARCH_BUDGET,
            movable: BTreeMap::new(),
            channel_order: cat.channels_in_v0_order(),
            memo: Default::default(),
        }
    }

    fn requirement(&self, p: &Pending) -> Option<&'a Requirement> {
        self.cat
            .bundle(&p.owner_package, &p.owner)
            .and_then(|b| b.requires.get(p.index))
    }

    /// The candidates for a requirement, in the resolver's order.
    fn candidates(&self, req: &Requirement) -> Result<Vec<Chosen>, String> {
        let key = req.describe();
        if let Some(hit) = self.memo.borrow().get(&key) {
            return hit.clone();
        }
        let found = self.find_candidates(req);
        self.memo.borrow_mut().insert(key, found.clone());
        found
    }

    fn find_candidates(&self, req: &Requirement) -> Result<Vec<Chosen>, String> {
        let mut out: Vec<Chosen> = Vec::new();
        for &(g, ch) in &self.channel_order {
            let matching = ch.entries.iter().any(|e| {
                self.cat
                    .bundle(&g.package, &e.name)
                    .is_some_and(|b| req.test(b))
            });
            if !matching {
                continue;
            }
            let order = match &self.orders[&(g.package.clone(), ch.name.clone())] {
                Ok(o) => o,
                Err(e) => return Err(format!("OLM v0 cannot order the candidates: {e}")),
            };
            for n in order {
                if out.iter().any(|c| c.package == g.package && c.name == *n) {
                    continue;
                }
                if self.cat.bundle(&g.package, n).is_some_and(|b| req.test(b)) {
                    out.push(Chosen {
                        package: g.package.clone(),
                        name: n.clone(),
                        channel: ch.name.clone(),
                        required_by: None,
                        requirement: None,
                    });
                }
            }
        }
        Ok(out)
    }

    /// Why no bundle of the catalog can satisfy `req`.
    fn why_none(&self, req: &Requirement) -> String {
        match req {
            Requirement::Package {
                name,
                range,
                parsed,
            } => {
                let Some(g) = self.cat.graphs.get(name) else {
                    return format!("the catalog has no package {name}");
                };
                let mut versions: Vec<(&Version, &str)> = g
                    .bundles
                    .values()
                    .filter_map(|b| b.version.as_ref().map(|v| (v, b.name.as_str())))
                    .collect();
                versions.sort_by(|a, b| range::compare(a.0, b.0));
                let in_range: Vec<&str> = versions
                    .iter()
                    .filter(|(v, _)| parsed.admits(v))
                    .map(|(_, n)| *n)
                    .collect();
                if in_range.is_empty() {
                    let all: Vec<String> = versions.iter().map(|(v, _)| v.to_string()).collect();
                    format!(
                        "package {name} has no version in {range}; it has {}",
                        if all.is_empty() {
                            "none".to_string()
                        } else {
                            all.join(", ")
                        }
                    )
                } else {
                    format!(
                        "package {name} has {} in {range}, but not on the replaces chain of any channel (OLM v0 considers only those)",
                        in_range.join(", ")
                    )
                }
            }
            Requirement::Gvk(gvk) => {
                let off_chain: Vec<&str> = self
                    .cat
                    .bundles
                    .values()
                    .filter(|b| b.provides.contains(gvk))
                    .map(|b| b.name.as_str())
                    .collect();
                if off_chain.is_empty() {
                    format!("no bundle in the catalog provides {gvk}")
                } else {
                    format!(
                        "only {} provide{} {gvk}, and not on the replaces chain of any channel (OLM v0 considers only those)",
                        off_chain.join(", "),
                        if off_chain.len() == 1 { "s" } else { "" }
                    )
                }
            }
            Requirement::Label(l) => format!("no bundle in the catalog has label {l}"),
            Requirement::Invalid(why) => why.clone(),
            other => format!("no bundle in the catalog is {}", other.describe()),
        }
    }

    /// Why `cand` cannot join `chosen`, if it cannot.
    fn conflict(&self, chosen: &[Chosen], cand: &Chosen) -> Option<String> {
        if let Some(c) = chosen
            .iter()
            .find(|c| c.package == cand.package && c.name != cand.name)
        {
            return Some(format!(
                "package {} is already {} (one bundle per package)",
                cand.package, c.name
            ));
        }
        let b = self.cat.bundle(&cand.package, &cand.name)?;
        for c in chosen {
            if c.name == cand.name && c.package == cand.package {
                continue;
            }
            let Some(other) = self.cat.bundle(&c.package, &c.name) else {
                continue;
            };
            if let Some(g) = b.provides.iter().find(|g| other.provides.contains(g)) {
                return Some(format!(
                    "{} already provides {g} (one provider per API)",
                    c.name
                ));
            }
        }
        None
    }

    /// Satisfies every pending dependency, choosing in the resolver's
    /// preference order and backing off on failure.
    fn search(
        &mut self,
        chosen: Vec<Chosen>,
        mut queue: VecDeque<Pending>,
    ) -> Result<Vec<Chosen>, String> {
        let Some(p) = queue.pop_front() else {
            return Ok(chosen);
        };
        if self.budget == 0 {
            return Err(format!(
                "the rehearsal gave up after {SEARCH_BUDGET} solver steps"
            ));
        }
        self.budget -= 1;
        let Some(req) = self.requirement(&p) else {
            return self.search(chosen, queue);
        };
        let lead = format!("{} requires {}", p.owner, req.describe());
        if let Requirement::Invalid(why) = req {
            return Err(format!("{}: {why}", p.owner));
        }
        if chosen.iter().any(|c| {
            self.cat
                .bundle(&c.package, &c.name)
                .is_some_and(|b| req.test(b))
        }) {
            return self.search(chosen, queue);
        }
        let cands = self.candidates(req).map_err(|e| format!("{lead}: {e}"))?;
        if cands.is_empty() {
            return Err(format!("{lead}: {}", self.why_none(req)));
        }
        let mut failures: Vec<(String, String)> = Vec::new();
        for mut c in cands {
            // Another Subscription may move its package to `c` in the same
            // resolution; everything is then checked again.
            let moves = chosen
                .iter()
                .any(|x| x.package == c.package && x.name != c.name)
                && self
                    .movable
                    .get(&c.package)
                    .is_some_and(|m| m.contains(&c.name));
            let base: Vec<Chosen> = if moves {
                chosen
                    .iter()
                    .filter(|x| x.package != c.package)
                    .cloned()
                    .collect()
            } else {
                chosen.clone()
            };
            if let Some(why) = self.conflict(&base, &c) {
                failures.push((c.name.clone(), why));
                continue;
            }
            let mut next = base;
            let mut q = queue.clone();
            if moves {
                if let Some(x) = chosen.iter().find(|x| x.package == c.package) {
                    c.channel = x.channel.clone();
                    c.required_by = x.required_by.clone();
                    c.requirement = x.requirement.clone();
                }
                q = VecDeque::from(self.all_pending(&next));
            } else {
                c.required_by = Some(p.owner.clone());
                c.requirement = Some(req.describe());
            }
            if let Some(b) = self.cat.bundle(&c.package, &c.name) {
                for i in 0..b.requires.len() {
                    q.push_back(Pending {
                        owner: c.name.clone(),
                        owner_package: c.package.clone(),
                        index: i,
                    });
                }
            }
            let name = c.name.clone();
            next.push(c);
            match self.search(next, q) {
                Ok(done) => return Ok(done),
                Err(e) => failures.push((name, e)),
            }
        }
        Err(combine(&lead, failures))
    }

    /// Every dependency of every bundle of `chosen`.
    fn all_pending(&self, chosen: &[Chosen]) -> Vec<Pending> {
        let mut out = Vec::new();
        for x in chosen {
            if let Some(b) = self.cat.bundle(&x.package, &x.name) {
                for i in 0..b.requires.len() {
                    out.push(Pending {
                        owner: x.name.clone(),
                        owner_package: x.package.clone(),
                        index: i,
                    });
                }
            }
        }
        out
    }

    /// Installs one of `cands` (most preferred first) into `base`, with
    /// its dependencies and those of everything in `base`.
    fn place(
        &mut self,
        base: &[Chosen],
        cands: Vec<Chosen>,
    ) -> (Option<Vec<Chosen>>, Vec<PassedOver>) {
        let mut passed = Vec::new();
        for c in cands {
            let mut chosen: Vec<Chosen> = base
                .iter()
                .filter(|b| b.package != c.package)
                .cloned()
                .collect();
            if let Some(why) = self.conflict(&chosen, &c) {
                passed.push(PassedOver {
                    bundle: c.name.clone(),
                    reason: why,
                });
                continue;
            }
            // Dependencies no bundle of the catalog can satisfy are named
            // all at once, not only the first the search meets.
            let hopeless: Vec<String> = self
                .cat
                .bundle(&c.package, &c.name)
                .map(|b| {
                    b.requires
                        .iter()
                        .filter(|req| {
                            !chosen.iter().any(|x| {
                                self.cat
                                    .bundle(&x.package, &x.name)
                                    .is_some_and(|xb| req.test(xb))
                            }) && self.candidates(req).is_ok_and(|v| v.is_empty())
                        })
                        .map(|req| match req {
                            Requirement::Invalid(why) => format!("{}: {why}", c.name),
                            _ => format!(
                                "{} requires {}: {}",
                                c.name,
                                req.describe(),
                                self.why_none(req)
                            ),
                        })
                        .collect()
                })
                .unwrap_or_default();
            if !hopeless.is_empty() {
                passed.push(PassedOver {
                    bundle: c.name.clone(),
                    reason: hopeless.join("; "),
                });
                continue;
            }
            chosen.push(c.clone());
            let queue = VecDeque::from(self.all_pending(&chosen));
            self.budget = SEARCH_BUDGET;
            match self.search(chosen, queue) {
                Ok(done) => return (Some(done), passed),
                Err(e) => passed.push(PassedOver {
                    bundle: c.name.clone(),
                    reason: e,
                }),
            }
        }
        (None, passed)
    }
}

/// One message for a choice none of whose candidates works: the cause
/// itself when every candidate fails for the same reason.
fn combine(lead: &str, failures: Vec<(String, String)>) -> String {
    let first = failures.first().map(|f| f.1.clone()).unwrap_or_default();
    if failures.iter().all(|f| f.1 == first) && failures.len() > 1 {
        // The same deeper cause for every candidate is the cause; the same
        // conflict needs the requirement it blocks.
        return if first.contains(" requires ") {
            first
        } else {
            format!("{lead}: {first}")
        };
    }
    match failures.as_slice() {
        [(n, why)] => format!("{lead}: its only candidate {n} cannot be installed: {why}"),
        _ => {
            let shown: Vec<String> = failures
                .iter()
                .take(4)
                .map(|(n, why)| format!("{n}: {why}"))
                .collect();
            let more = if failures.len() > 4 {
                format!("; and {} more", failures.len() - 4)
            } else {
                String::new()
            };
            format!(
                "{lead}: none of its {} candidates can be installed ({}{more})",
                failures.len(),
                shown.join("; ")
            )
        }
    }
}

fn placed(cat: &Catalog, c: &Chosen) -> Placed {
    Placed {
        bundle: c.name.clone(),
        package: c.package.clone(),
        version: cat.version_text(&c.package, &c.name),
        channel: c.channel.clone(),
        required_by: c.required_by.clone(),
        requirement: c.requirement.clone(),
    }
}

fn names_list(items: &[&str]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

/// A Subscription, tracked through the rounds.
struct SubState {
    package: String,
    /// Channel asked for (empty: any).
    channel: String,
    current: String,
}

/// A Subscription's one-hop candidates, most preferred first, with the
/// field that admits each.
fn sub_successors(pg: &PackageGraph, s: &SubState) -> Result<Vec<(Chosen, EdgeKind)>, String> {
    let cur_version = pg.version(&s.current).cloned();
    let chans: Vec<&super::Channel> = if s.channel.is_empty() {
        let mut cs: Vec<&super::Channel> = pg.channels.iter().collect();
        cs.sort_by_key(|c| (c.name != pg.default_channel, c.name.clone()));
        cs
    } else {
        pg.channel(&s.channel).into_iter().collect()
    };
    let mut succ: Vec<(Chosen, EdgeKind)> = Vec::new();
    for ch in chans {
        for c in successors::v0_candidates(pg, ch, &s.current, cur_version.as_ref())? {
            if !succ.iter().any(|(x, _)| x.name == c.name) {
                succ.push((
                    Chosen {
                        package: pg.package.clone(),
                        name: c.name,
                        channel: c.channel,
                        required_by: None,
                        requirement: None,
                    },
                    c.kind,
                ));
            }
        }
    }
    Ok(succ)
}

/// Rehearses a Subscription against a catalog under OLM v0's rules.
pub fn rehearse_subscription(cat: &Catalog, sub: &Subscription) -> Rehearsal {
    let mut r = Rehearsal {
        olm: Olm::V0,
        kind: "Subscription".into(),
        name: sub.name.clone(),
        package: sub.package.clone(),
        catalog: cat.source.clone(),
        installable: false,
        install: Vec::new(),
        already_installed: false,
        passed_over: Vec::new(),
        upgrades: Vec::new(),
        end: String::new(),
        notes: Vec::new(),
    };
    let Some(g) = cat.graphs.get(&sub.package) else {
        let pkgs: Vec<&str> = cat.graphs.keys().map(String::as_str).collect();
        r.end = format!(
            "no operators found in package {} in the catalog referenced by subscription {}: the catalog has no package {} (packages: {})",
            sub.package,
            sub.name,
            sub.package,
            names_list(&pkgs)
        );
        return r;
    };
    let channels: Vec<&super::Channel> = if sub.channel.is_empty() {
        let mut cs: Vec<&super::Channel> = g.channels.iter().collect();
        cs.sort_by_key(|c| (c.name != g.default_channel, c.name.clone()));
        cs
    } else {
        match g.channel(&sub.channel) {
            Some(c) => vec![c],
            None => {
                let names: Vec<&str> = g.channels.iter().map(|c| c.name.as_str()).collect();
                r.end = format!(
                    "no operators found in channel {} of package {} in the catalog referenced by subscription {}: the package has channels {}",
                    sub.channel,
                    sub.package,
                    sub.name,
                    names_list(&names)
                );
                return r;
            }
        }
    };
    let mut v0 = V0::new(cat);
    // The Subscription's own candidates.
    let mut cands: Vec<Chosen> = Vec::new();
    for ch in &channels {
        let names: Vec<String> = if sub.starting_csv.is_empty() {
            match &v0.orders[&(g.package.clone(), ch.name.clone())] {
                Ok(o) => o.clone(),
                Err(e) => {
                    r.end = format!("OLM v0 cannot resolve subscription {}: {e}", sub.name);
                    return r;
                }
            }
        } else {
            ch.entries
                .iter()
                .filter(|e| e.name == sub.starting_csv)
                .map(|e| e.name.clone())
                .take(1)
                .collect()
        };
        for n in names {
            if !cands.iter().any(|c| c.name == n) {
                cands.push(Chosen {
                    package: g.package.clone(),
                    name: n,
                    channel: ch.name.clone(),
                    required_by: None,
                    requirement: None,
                });
            }
        }
    }
    if cands.is_empty() {
        r.end = if !sub.starting_csv.is_empty() {
            let holder: Vec<&str> = g
                .channels
                .iter()
                .filter(|c| c.entry(&sub.starting_csv).is_some())
                .map(|c| c.name.as_str())
                .collect();
            format!(
                "no operators found with name {} in channel {} of package {} in the catalog referenced by subscription {}{}",
                sub.starting_csv,
                sub.channel,
                sub.package,
                sub.name,
                if holder.is_empty() {
                    format!(": the package has no bundle {}", sub.starting_csv)
                } else {
                    format!(": it is in channel {}", holder.join(", "))
                }
            )
        } else {
            format!(
                "no operators found in channel {} of package {}: the channel has no entries",
                sub.channel, sub.package
            )
        };
        return r;
    }
    let (result, passed) = v0.place(&[], cands);
    r.passed_over = passed;
    let Some(mut installed) = result else {
        r.end = match r.passed_over.as_slice() {
            [one] => format!("constraints not satisfiable: {}", one.reason),
            many => format!(
                "constraints not satisfiable: subscription {} can install none of its {} candidates (each is passed over above)",
                sub.name,
                many.len()
            ),
        };
        return r;
    };
    r.installable = true;
    r.install = installed.iter().map(|c| placed(cat, c)).collect();
    if !sub.starting_csv.is_empty() {
        r.notes.push(format!(
            "startingCSV {}: OLM installs it, then upgrades from it",
            sub.starting_csv
        ));
    }
    // Every Subscription: the one asked for, then one per dependency (OLM
    // creates them on the dependency's channel).
    let mut subs: Vec<SubState> = installed
        .iter()
        .map(|c| SubState {
            package: c.package.clone(),
            channel: if c.package == sub.package {
                sub.channel.clone()
            } else {
                c.channel.clone()
            },
            current: c.name.clone(),
        })
        .collect();
    let manual = sub.install_plan_approval == "Manual";
    let mut round = 0;
    let mut held: BTreeMap<String, String> = BTreeMap::new();
    let mut loop_end: Option<String> = None;
    let mut seen: BTreeSet<(String, String)> = installed
        .iter()
        .map(|c| (c.package.clone(), c.name.clone()))
        .collect();
    loop {
        round += 1;
        if round > 500 {
            r.notes
                .push("stopped after 500 rounds of upgrades".to_string());
            break;
        }
        let mut moved = false;
        // What holds a Subscription back is what the last round found.
        held.clear();
        for i in 0..subs.len() {
            let Some(pg) = cat.graphs.get(&subs[i].package) else {
                continue;
            };
            let cur = subs[i].current.clone();
            let succ = match sub_successors(pg, &subs[i]) {
                Ok(s) => s,
                Err(e) => {
                    held.insert(pg.package.clone(), format!("OLM v0 cannot resolve: {e}"));
                    continue;
                }
            };
            // The other Subscriptions may take their own next hop in the
            // same resolution.
            v0.movable = subs
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .filter_map(|(_, s)| {
                    let og = cat.graphs.get(&s.package)?;
                    let names = sub_successors(og, s)
                        .ok()?
                        .into_iter()
                        .map(|(c, _)| c.name)
                        .collect();
                    Some((s.package.clone(), names))
                })
                .collect();
            if succ.is_empty() {
                continue;
            }
            if manual {
                r.notes.push(format!(
                    "installPlanApproval is Manual: OLM stops here; the InstallPlan for {} -> {} waits for approval (as did the install's own)",
                    cur, succ[0].0.name
                ));
                r.end = format!(
                    "waiting for approval of the upgrade {cur} -> {}",
                    succ[0].0.name
                );
                return r;
            }
            let kinds: BTreeMap<String, EdgeKind> =
                succ.iter().map(|(c, k)| (c.name.clone(), *k)).collect();
            let (result, passed) = v0.place(&installed, succ.into_iter().map(|x| x.0).collect());
            let Some(next) = result else {
                held.insert(
                    pg.package.clone(),
                    format!(
                        "{} stays at {cur}: {}",
                        pg.package,
                        passed
                            .iter()
                            .map(|p| if p.reason.starts_with(&p.bundle) {
                                p.reason.clone()
                            } else {
                                format!("{}: {}", p.bundle, p.reason)
                            })
                            .collect::<Vec<_>>()
                            .join("; ")
                    ),
                );
                continue;
            };
            held.remove(&pg.package);
            let Some(to) = next.iter().find(|c| c.package == pg.package).cloned() else {
                continue;
            };
            let before: BTreeSet<&str> = installed.iter().map(|c| c.package.as_str()).collect();
            let new_deps: Vec<Chosen> = next
                .iter()
                .filter(|c| c.package != pg.package && !before.contains(c.package.as_str()))
                .cloned()
                .collect();
            r.upgrades.push(Upgrade {
                round,
                package: pg.package.clone(),
                from: cur.clone(),
                to: to.name.clone(),
                kind: kinds.get(&to.name).copied(),
                channel: to.channel.clone(),
                new_dependencies: new_deps.iter().map(|c| placed(cat, c)).collect(),
                passed_over: passed,
            });
            // Other packages the same resolution moved a hop.
            for c in &next {
                let Some(was) = installed
                    .iter()
                    .find(|x| x.package == c.package && x.package != pg.package)
                else {
                    continue;
                };
                if was.name == c.name {
                    continue;
                }
                let kind = cat.graphs.get(&c.package).and_then(|og| {
                    let s = subs.iter().find(|s| s.package == c.package)?;
                    sub_successors(og, s)
                        .ok()?
                        .into_iter()
                        .find(|(x, _)| x.name == c.name)
                        .map(|(_, k)| k)
                });
                r.upgrades.push(Upgrade {
                    round,
                    package: c.package.clone(),
                    from: was.name.clone(),
                    to: c.name.clone(),
                    kind,
                    channel: c.channel.clone(),
                    new_dependencies: Vec::new(),
                    passed_over: Vec::new(),
                });
                if let Some(s) = subs.iter_mut().find(|s| s.package == c.package) {
                    s.current = c.name.clone();
                }
            }
            for d in &new_deps {
                if !subs.iter().any(|s| s.package == d.package) {
                    subs.push(SubState {
                        package: d.package.clone(),
                        channel: d.channel.clone(),
                        current: d.name.clone(),
                    });
                }
            }
            subs[i].current = to.name.clone();
            installed = next;
            moved = true;
        }
        if !moved {
            break;
        }
        // A bundle installed before and reached again: the edges loop.
        let mut looped = None;
        for u in r.upgrades.iter().filter(|u| u.round == round) {
            if !seen.insert((u.package.clone(), u.to.clone())) {
                looped = Some(u.to.clone());
            }
            for d in &u.new_dependencies {
                seen.insert((d.package.clone(), d.bundle.clone()));
            }
        }
        if let Some(again) = looped {
            loop_end = Some(format!(
                "the upgrades loop back to {again}, installed before: the upgrade edges form a cycle (a downgrade edge); the rehearsal stops"
            ));
            break;
        }
    }
    r.notes.extend(held.into_values());
    if let Some(e) = loop_end {
        r.end = e;
        return r;
    }
    let main = subs
        .iter()
        .find(|s| s.package == sub.package)
        .map(|s| s.current.clone())
        .unwrap_or_default();
    let main_channel = installed
        .iter()
        .find(|c| c.package == sub.package)
        .map(|c| c.channel.clone())
        .unwrap_or_default();
    let is_head = g
        .channel(&main_channel)
        .and_then(|c| c.head().ok())
        .is_some_and(|h| h.name == main);
    r.end = if is_head {
        format!("{main} is the head of channel {main_channel}; no more upgrades")
    } else {
        format!("{main} is the last bundle OLM reaches in channel {main_channel}")
    };
    r
}

// ---- OLM v1 ----

/// The channels of `g` that list bundle `name`, among `selected` (all when
/// empty).
fn channel_of(g: &PackageGraph, selected: &[String], name: &str) -> String {
    g.channels
        .iter()
        .filter(|c| selected.is_empty() || selected.contains(&c.name))
        .find(|c| c.entry(name).is_some())
        .map(|c| c.name.clone())
        .unwrap_or_default()
}

/// operator-controller's `NoDependencyValidation`.
fn v1_refusal(b: &CatBundle) -> Option<String> {
    b.dependency_properties.first().map(|p| {
        format!(
            "bundle {:?} has a dependency declared via property {p:?} which is currently not supported",
            b.name
        )
    })
}

/// Rehearses a ClusterExtension against a catalog under OLM v1's rules.
/// With `installed` (a version or bundle name of the package), the
/// ClusterExtension has that bundle installed already (say, before its
/// `version` or the catalog changed) and the rehearsal reconciles from it.
pub fn rehearse_cluster_extension(
    cat: &Catalog,
    ce: &ClusterExtension,
    installed: Option<&str>,
) -> Rehearsal {
    let mut r = Rehearsal {
        olm: Olm::V1,
        kind: "ClusterExtension".into(),
        name: ce.name.clone(),
        package: ce.package.clone(),
        catalog: cat.source.clone(),
        installable: false,
        install: Vec::new(),
        already_installed: false,
        passed_over: Vec::new(),
        upgrades: Vec::new(),
        end: String::new(),
        notes: Vec::new(),
    };
    let mut describe = format!("no bundles found for package {:?}", ce.package);
    if !ce.version.is_empty() {
        describe.push_str(&format!(" matching version {:?}", ce.version));
    }
    if !ce.channels.is_empty() {
        describe.push_str(&format!(" in channels [{}]", ce.channels.join(" ")));
    }
    let constraint = if ce.version.is_empty() {
        None
    } else {
        match super::masterminds::Constraint::parse(&ce.version) {
            Ok(c) => Some(c),
            Err(e) => {
                r.end = format!("desired version range {:?} is invalid: {e}", ce.version);
                return r;
            }
        }
    };
    let Some(g) = cat.graphs.get(&ce.package) else {
        let pkgs: Vec<&str> = cat.graphs.keys().map(String::as_str).collect();
        r.end = format!(
            "{describe}: the catalog has no package {} (packages: {})",
            ce.package,
            names_list(&pkgs)
        );
        return r;
    };
    let selected: Vec<&super::Channel> = g
        .channels
        .iter()
        .filter(|c| ce.channels.is_empty() || ce.channels.contains(&c.name))
        .collect();
    let in_scope =
        |name: &str| ce.channels.is_empty() || selected.iter().any(|c| c.entry(name).is_some());
    let in_range = |name: &str| {
        constraint
            .as_ref()
            .is_none_or(|c| g.version(name).is_some_and(|v| c.admits(v)))
    };
    let mut pool: Vec<&str> = g
        .bundles
        .keys()
        .map(String::as_str)
        .filter(|n| in_scope(n) && in_range(n))
        .collect();
    successors::sort_v1(g, &mut pool, |n| n);
    let given = match installed {
        None => None,
        Some(x) => match super::path::resolve(g, x) {
            Ok((n, _)) if g.bundles.contains_key(&n) => Some(n),
            _ => {
                let mut vs: Vec<&Version> = g
                    .bundles
                    .values()
                    .filter_map(|b| b.version.as_ref())
                    .collect();
                vs.sort_by(|a, b| range::compare(a, b));
                r.end = format!(
                    "installed {x} is not a bundle of package {} (versions: {})",
                    g.package,
                    vs.iter()
                        .map(|v| v.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                return r;
            }
        },
    };
    let Some(first) = given
        .clone()
        .or_else(|| pool.first().map(|s| s.to_string()))
    else {
        let scoped: Vec<&str> = g
            .bundles
            .keys()
            .map(String::as_str)
            .filter(|n| in_scope(n))
            .collect();
        let why = if ce.channels.iter().any(|c| g.channel(c).is_none()) {
            let names: Vec<&str> = g.channels.iter().map(|c| c.name.as_str()).collect();
            format!("the package has channels {}", names_list(&names))
        } else {
            let mut vs: Vec<&Version> = scoped.iter().filter_map(|n| g.version(n)).collect();
            vs.sort_by(|a, b| range::compare(a, b));
            format!(
                "the {} has versions {}",
                if ce.channels.is_empty() {
                    "package"
                } else {
                    "selected channels"
                },
                names_list(
                    &vs.iter()
                        .map(|v| v.to_string())
                        .collect::<Vec<_>>()
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                )
            )
        };
        r.end = format!("{describe}: {why}");
        return r;
    };
    if let Some(why) = cat
        .bundle(&g.package, &first)
        .and_then(v1_refusal)
        .filter(|_| given.is_none())
    {
        r.end = format!("validating bundle {first:?}: {why}");
        r.notes.push(
            "OLM v1 does not resolve dependencies: a bundle that declares any is refused".into(),
        );
        return r;
    }
    r.installable = true;
    r.install.push(Placed {
        bundle: first.clone(),
        package: g.package.clone(),
        version: cat.version_text(&g.package, &first),
        channel: channel_of(g, &ce.channels, &first),
        required_by: None,
        requirement: None,
    });
    r.already_installed = given.is_some();
    let self_certified = ce.upgrade_constraint_policy == "SelfCertified";
    if self_certified {
        r.notes.push(
            "upgradeConstraintPolicy SelfCertified: no successor rule; OLM v1 installs the highest version the filters admit and moves to any other the catalog later offers".into(),
        );
    }
    let mut cur = first;
    let mut round = 0;
    loop {
        round += 1;
        if round > 500 {
            r.notes.push("stopped after 500 upgrades".into());
            break;
        }
        let succ = if self_certified {
            Vec::new()
        } else {
            successors::v1_successors(g, &selected, &cur, g.version(&cur))
        };
        let mut cands: Vec<&str> = succ
            .iter()
            .map(|c| c.name.as_str())
            .filter(|n| in_scope(n) && in_range(n))
            .collect();
        if self_certified {
            cands = pool.clone();
        }
        // Staying is always allowed (the installed version, in scope).
        if in_scope(&cur) && in_range(&cur) && !cands.contains(&cur.as_str()) {
            cands.push(&cur);
        }
        successors::sort_v1(g, &mut cands, |n| n);
        let Some(next) = cands.first().map(|s| s.to_string()) else {
            r.end = format!(
                "error upgrading from currently installed version {:?}: {describe}",
                cat.version_text(&g.package, &cur)
            );
            return r;
        };
        if next == cur {
            let deprecated_succ: Vec<&str> = succ
                .iter()
                .map(|c| c.name.as_str())
                .filter(|n| in_scope(n) && in_range(n) && *n != cur)
                .collect();
            r.end = if deprecated_succ.is_empty() {
                format!("{cur} has no successor the filters admit; OLM v1 keeps it")
            } else {
                format!(
                    "OLM v1 keeps {cur}: its successors ({}) are deprecated or not higher",
                    deprecated_succ.join(", ")
                )
            };
            break;
        }
        if let Some(why) = cat.bundle(&g.package, &next).and_then(v1_refusal) {
            r.end = format!("the upgrade {cur} -> {next} fails: validating bundle {next:?}: {why}");
            r.notes.push(
                "OLM v1 does not resolve dependencies: a bundle that declares any is refused"
                    .into(),
            );
            break;
        }
        let edge = succ.iter().find(|c| c.name == next);
        r.upgrades.push(Upgrade {
            round,
            package: g.package.clone(),
            from: cur.clone(),
            to: next.clone(),
            kind: edge.map(|c| c.kind),
            channel: edge
                .map(|c| c.channel.clone())
                .unwrap_or_else(|| channel_of(g, &ce.channels, &next)),
            new_dependencies: Vec::new(),
            passed_over: Vec::new(),
        });
        cur = next;
    }
    r
}

// ---- text ----

/// The rehearsal as text, one fact a line.
pub fn render_text(r: &Rehearsal) -> String {
    let mut out = String::new();
    let head = format!(
        "OLM {} rehearsal of {} {} (package {}) against {}",
        r.olm.as_str(),
        r.kind,
        if r.name.is_empty() {
            "<unnamed>"
        } else {
            &r.name
        },
        r.package,
        r.catalog
    );
    out.push_str(&head);
    out.push('\n');
    for p in &r.passed_over {
        out.push_str(&format!("  passed over {}: {}\n", p.bundle, p.reason));
    }
    if !r.installable {
        out.push_str(&format!("  not installable: {}\n", r.end));
        for n in &r.notes {
            out.push_str(&format!("  note: {n}\n"));
        }
        return out;
    }
    for (i, p) in r.install.iter().enumerate() {
        let chan = if p.channel.is_empty() {
            String::new()
        } else {
            format!(", channel {}", p.channel)
        };
        if i == 0 {
            out.push_str(&format!(
                "  {} {} ({} {}{chan})\n",
                if r.already_installed {
                    "installed already:"
                } else {
                    "install"
                },
                p.bundle,
                p.package,
                p.version
            ));
        } else {
            out.push_str(&format!(
                "  install dependency {} ({} {}{chan}) for {}: {}\n",
                p.bundle,
                p.package,
                p.version,
                p.required_by.as_deref().unwrap_or("?"),
                p.requirement.as_deref().unwrap_or("?")
            ));
        }
    }
    for u in &r.upgrades {
        let why = match u.kind {
            Some(k) => format!("{}, channel {}", k.as_str(), u.channel),
            None => "SelfCertified".to_string(),
        };
        out.push_str(&format!(
            "  {}. upgrade {}: {} -> {} ({why})\n",
            u.round, u.package, u.from, u.to
        ));
        for p in &u.passed_over {
            out.push_str(&format!("     passed over {}: {}\n", p.bundle, p.reason));
        }
        for d in &u.new_dependencies {
            out.push_str(&format!(
                "     with new dependency {} ({} {}) for {}: {}\n",
                d.bundle,
                d.package,
                d.version,
                d.required_by.as_deref().unwrap_or("?"),
                d.requirement.as_deref().unwrap_or("?")
            ));
        }
    }
    if r.upgrades.is_empty() {
        out.push_str("  no upgrades\n");
    }
    out.push_str(&format!("  end: {}\n", r.end));
    for n in &r.notes {
        out.push_str(&format!("  note: {n}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscription_and_cluster_extension_parse() {
        let f = Path::new("s.yaml");
        let s = Subscription::parse(
            "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: a\nspec:\n  name: pkg\n  channel: stable\n  installPlanApproval: Manual\n",
            f,
        )
        .expect("sub");
        assert_eq!((s.package.as_str(), s.channel.as_str()), ("pkg", "stable"));
        assert!(
            Subscription::parse("kind: Subscription\nspec:\n  channel: x\n", f)
                .expect_err("no package")
                .contains("spec.name")
        );
        let ce = ClusterExtension::parse(
            "apiVersion: olm.operatorframework.io/v1\nkind: ClusterExtension\nmetadata:\n  name: e\nspec:\n  source:\n    sourceType: Catalog\n    catalog:\n      packageName: pkg\n      version: '>=1.0.0 <2.0.0'\n      channels: [stable]\n",
            f,
        )
        .expect("ce");
        assert_eq!(ce.channels, ["stable"]);
        let old = ClusterExtension::parse(
            "kind: ClusterExtension\nspec:\n  packageName: pkg\n  version: 1.2.x\n  upgradeConstraintPolicy: SelfCertified\n",
            f,
        )
        .expect("v1alpha1");
        assert_eq!(old.version, "1.2.x");
        assert!(ClusterExtension::parse("kind: Subscription\nspec: {}\n", f).is_err());
    }
}
