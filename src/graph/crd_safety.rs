//! CRD upgrade safety: would OLM let a cluster move from one bundle's CRDs
//! to the next bundle's?
//!
//! OLM v1 (operator-controller) runs a preflight before every upgrade that
//! compares each CRD the new bundle ships with the CRD already on the
//! cluster (sigs.k8s.io/crdify's checks, configured in operator-controller's
//! `crdupgradesafety` preflight). A build-time tool can run the same
//! comparison between the two bundles of an upgrade edge: the old bundle's
//! CRDs are what the cluster holds after installing it.
//!
//! Checked, each under its own rule id (see [`RULES`]; the crdify
//! validation each follows is in docs/graph.md): scope changed, a stored
//! version removed, an existing field removed, and, for every property of
//! every version both CRDs define (flattened as crdify does, see
//! `crd_schema`), type changed, new required fields, default
//! added/changed/removed, enum values removed or an enum added, every bound
//! tightened, pattern changed, nullable changed, oneOf constraint changed,
//! and crdify's catch-all `unhandled` (any other difference). Then crdify's
//! served-version validator: every pair of served versions of the new CRD
//! compared the same way, less the differences the old CRD already had.
//! Ours besides crdify's: a served version no longer served.
//!
//! [`CrdChecks`] picks the configuration: OLM v1's preflight by default
//! (descriptions not checked, enum values added allowed, served versions
//! not compared when the new CRD converts by webhook), or crdify's own
//! defaults.
//!
//! Only what is needed is parsed: a bundle's CRD files are read as bytes,
//! and a file is parsed only when the other bundle of the pair has no file
//! with exactly the same bytes (an unchanged file cannot hold a change).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use super::crd_schema::CrdChecks;
use super::crd_schema::{self, Change};
use super::PackageGraph;
use crate::bundle::{Bundle, Manifest, RawFile};
use crate::diag::{Finding, Level, Location};
use crate::yaml::{Node, Seg, Value};

/// Every rule: id and what it means.
pub const RULES: &[(&str, &str)] = &[
    (
        "crd-upgrade-scope-changed",
        "a CRD's scope (Namespaced/Cluster) differs between the two bundles of an upgrade",
    ),
    (
        "crd-upgrade-stored-version-removed",
        "a version the old CRD stores objects in is not a version of the new CRD",
    ),
    (
        "crd-upgrade-served-version-removed",
        "a version the old CRD serves is not served by the new CRD, which has no conversion webhook",
    ),
    (
        "crd-upgrade-field-removed",
        "a field of the old CRD's schema is missing from the same version of the new CRD",
    ),
    (
        "crd-upgrade-type-changed",
        "a field's type differs between the two CRDs",
    ),
    (
        "crd-upgrade-required-added",
        "the new CRD requires a field the old one did not",
    ),
    (
        "crd-upgrade-default-changed",
        "a field's default was added, changed or removed",
    ),
    (
        "crd-upgrade-enum-restricted",
        "enum values were removed, or an enum was put on a field that had none",
    ),
    (
        "crd-upgrade-maximum-tightened",
        "maximum added or decreased",
    ),
    (
        "crd-upgrade-minimum-tightened",
        "minimum added or increased",
    ),
    (
        "crd-upgrade-max-length-tightened",
        "maxLength added or decreased",
    ),
    (
        "crd-upgrade-min-length-tightened",
        "minLength added or increased",
    ),
    (
        "crd-upgrade-max-items-tightened",
        "maxItems added or decreased",
    ),
    (
        "crd-upgrade-min-items-tightened",
        "minItems added or increased",
    ),
    (
        "crd-upgrade-max-properties-tightened",
        "maxProperties added or decreased",
    ),
    (
        "crd-upgrade-min-properties-tightened",
        "minProperties added or increased",
    ),
    (
        "crd-upgrade-pattern-changed",
        "a field's pattern was added, changed or removed",
    ),
    (
        "crd-upgrade-nullable-changed",
        "a field's nullable changed",
    ),
    (
        "crd-upgrade-description-changed",
        "a field's description changed (crdify-defaults only: OLM v1 does not check descriptions)",
    ),
    (
        "crd-upgrade-one-of-changed",
        "a oneOf constraint was put on a field, or oneOf schemas were removed or added (crdify `oneOf`)",
    ),
    (
        "crd-upgrade-unhandled",
        "a field changed in a way no other check covers (format, allOf/anyOf/not, x-kubernetes-*, exclusive bounds, multipleOf, uniqueItems, additionalProperties…): crdify's catch-all `unhandled`, an error in OLM v1",
    ),
    (
        "crd-served-version-incompatible",
        "two served versions of the new CRD differ incompatibly and the CRD has no conversion webhook (crdify's served-version validator), and the old CRD did not already have that difference",
    ),
    (
        "crd-upgrade-uncomparable",
        "the CRDs of the two bundles of an upgrade could not be compared (a bundle or CRD file that cannot be read)",
    ),
];

/// The description of a rule, for SARIF.
pub fn rule_help(id: &str) -> Option<String> {
    RULES
        .iter()
        .find(|(r, _)| *r == id)
        .map(|(_, d)| d.to_string())
}

/// One manifest file of a bundle that may hold CRDs, parsed on first use.
struct CrdFile {
    rel_path: String,
    bytes: Vec<u8>,
    parsed: OnceLock<Result<Vec<Manifest>, String>>,
}

/// The CRD files of one bundle directory.
pub struct BundleCrds {
    dir: PathBuf,
    files: Vec<CrdFile>,
}

impl BundleCrds {
    /// Reads the files of `dir/manifests` that mention
    /// `CustomResourceDefinition` (a CSV file that only names CRDs is left
    /// out). Nothing is parsed yet.
    pub fn read(dir: &Path) -> Result<BundleCrds, super::Error> {
        let mdir = dir.join("manifests");
        let entries = std::fs::read_dir(&mdir).map_err(|e| super::Error::io(&mdir, e))?;
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        paths.sort();
        let crd = memchr::memmem::Finder::new(b"CustomResourceDefinition");
        let crd_kind = memchr::memmem::Finder::new(b"kind: CustomResourceDefinition");
        let csv_kind = memchr::memmem::Finder::new(b"ClusterServiceVersion");
        let mut files = Vec::new();
        for p in paths {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let lower = name.to_ascii_lowercase();
            if !(lower.ends_with(".yaml") || lower.ends_with(".yml") || lower.ends_with(".json")) {
                continue;
            }
            let bytes = std::fs::read(&p).map_err(|e| super::Error::io(&p, e))?;
            if crd.find(&bytes).is_none()
                || (csv_kind.find(&bytes).is_some() && crd_kind.find(&bytes).is_none())
            {
                continue;
            }
            files.push(CrdFile {
                rel_path: format!("manifests/{name}"),
                bytes,
                parsed: OnceLock::new(),
            });
        }
        Ok(BundleCrds {
            dir: dir.to_path_buf(),
            files,
        })
    }

    fn parse(&self, i: usize) -> &Result<Vec<Manifest>, String> {
        let f = &self.files[i];
        f.parsed.get_or_init(|| {
            let b = Bundle::from_files(
                &self.dir,
                vec![RawFile {
                    rel_path: f.rel_path.clone(),
                    content: Ok(f.bytes.clone()),
                }],
            );
            if let Some(e) = b.load_findings.iter().find(|f| f.level == Level::Error) {
                let at = e
                    .location
                    .as_ref()
                    .map(|l| {
                        if l.line > 0 {
                            format!("{}:{}: ", l.file.display(), l.line)
                        } else {
                            format!("{}: ", l.file.display())
                        }
                    })
                    .unwrap_or_default();
                return Err(format!("{at}{}", e.message));
            }
            Ok(b.manifests.into_iter().filter(|m| m.is_crd()).collect())
        })
    }
}

/// Compares two bundle directories: the findings of an upgrade from `old`
/// to `new`.
pub fn compare_dirs(old: &Path, new: &Path) -> Vec<Finding> {
    compare_dirs_with(old, new, CrdChecks::OlmV1)
}

/// [`compare_dirs`] under the given crdify configuration.
pub fn compare_dirs_with(old: &Path, new: &Path, checks: CrdChecks) -> Vec<Finding> {
    let label = format!("upgrade {} -> {}", old.display(), new.display());
    match (BundleCrds::read(old), BundleCrds::read(new)) {
        (Ok(o), Ok(n)) => compare_bundles(&o, &n, &label, checks),
        (Err(e), _) => vec![uncomparable(&label, &e.to_string(), old)],
        (_, Err(e)) => vec![uncomparable(&label, &e.to_string(), new)],
    }
}

fn uncomparable(label: &str, why: &str, at: &Path) -> Finding {
    Finding::warning(
        "crd-upgrade-uncomparable",
        format!("{label}: the CRDs cannot be compared: {why}"),
    )
    .at(Location::file(at))
}

/// Compares the CRDs of two bundles; `label` names the upgrade in messages.
pub fn compare_bundles(
    old: &BundleCrds,
    new: &BundleCrds,
    label: &str,
    checks: CrdChecks,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let new_crds = changed_crds(new, old, label, &mut out);
    if new_crds.is_empty() {
        return out;
    }
    let old_crds = changed_crds(old, new, label, &mut out);
    for n in &new_crds {
        if let Some(o) = old_crds.iter().find(|o| o.name == n.name) {
            compare_crds(o, n, label, checks, &mut out);
        }
    }
    out
}

/// The CRDs of `b`'s files that `other` has no byte-identical copy of,
/// borrowed from `b`: parsed once however many edges `b` is on (a CRD tree
/// can be tens of MiB, so it is never copied per edge). Files that cannot
/// be parsed go to `out`.
fn changed_crds<'b>(
    b: &'b BundleCrds,
    other: &BundleCrds,
    label: &str,
    out: &mut Vec<Finding>,
) -> Vec<&'b Manifest> {
    let mut crds = Vec::new();
    for (i, f) in b.files.iter().enumerate() {
        if other.files.iter().any(|o| o.bytes == f.bytes) {
            continue;
        }
        match b.parse(i) {
            Ok(ms) => crds.extend(ms.iter()),
            Err(e) => out.push(uncomparable(label, e, &b.dir.join(&f.rel_path))),
        }
    }
    crds
}

/// Checks every upgrade edge of every channel of a graph built from bundle
/// directories (a graph from a file-based catalog has no CRD files: nothing
/// is checked). An edge found in several channels is checked once; an edge
/// from a newer to an older version (`graph-downgrade-edge`) is not.
pub fn check_graph(g: &PackageGraph) -> Vec<Finding> {
    check_graph_with(g, CrdChecks::OlmV1)
}

/// [`check_graph`] under the given crdify configuration.
pub fn check_graph_with(g: &PackageGraph, checks: CrdChecks) -> Vec<Finding> {
    check_graph_edges_with(g, checks)
        .into_iter()
        .flat_map(|e| e.findings)
        .collect()
}

/// The findings of [`check_graph`] for one upgrade edge (`from` -> `to`,
/// in whichever channels hold it).
#[derive(Clone, Debug)]
pub struct EdgeFindings {
    /// The bundle upgraded from.
    pub from: String,
    /// The bundle upgraded to.
    pub to: String,
    /// What names the edge in every message of `findings`: its channels,
    /// bundles and kind.
    pub label: String,
    /// What the comparison of their CRDs found (empty: nothing).
    pub findings: Vec<Finding>,
}

impl EdgeFindings {
    /// What `f`, one of `findings`, says beyond the edge: its message
    /// without the label it starts with (a picture or list of the edge's
    /// findings names the edge once).
    pub fn detail<'a>(&self, f: &'a Finding) -> &'a str {
        f.message
            .strip_prefix(self.label.as_str())
            .and_then(|m| m.strip_prefix(": "))
            .unwrap_or(&f.message)
    }
}

/// [`check_graph`], edge by edge, edges sorted by (from, to): what the
/// pictures of [`super::svg`] colour.
pub fn check_graph_edges(g: &PackageGraph) -> Vec<EdgeFindings> {
    check_graph_edges_with(g, CrdChecks::OlmV1)
}

/// [`check_graph_edges`] under the given crdify configuration.
pub fn check_graph_edges_with(g: &PackageGraph, checks: CrdChecks) -> Vec<EdgeFindings> {
    use rayon::prelude::*;
    // (from, to) -> (channels, kind)
    let mut pairs: BTreeMap<(String, String), (Vec<String>, &'static str)> = BTreeMap::new();
    for ch in &g.channels {
        for e in g.edges(ch) {
            // A downgrade edge is reported as graph-downgrade-edge; its
            // CRDs going back are not an upgrade.
            if let (Some(vf), Some(vt)) = (g.version(&e.from), g.version(&e.to)) {
                if crate::semver_range::compare(vf, vt) == std::cmp::Ordering::Greater {
                    continue;
                }
            }
            let slot = pairs
                .entry((e.from.clone(), e.to.clone()))
                .or_insert_with(|| (Vec::new(), e.kind.as_str()));
            if !slot.0.contains(&ch.name) {
                slot.0.push(ch.name.clone());
            }
        }
    }
    let dir_of = |name: &str| -> Option<PathBuf> {
        let file = &g.bundles.get(name)?.location.as_ref()?.file;
        let manifests = file.parent()?;
        (manifests.file_name()? == "manifests")
            .then(|| manifests.parent().map(Path::to_path_buf))?
    };
    let pairs: Vec<_> = pairs
        .into_iter()
        .filter_map(|((from, to), (chans, kind))| {
            let (df, dt) = (dir_of(&from)?, dir_of(&to)?);
            Some((from, to, chans, kind, df, dt))
        })
        .collect();
    // Each bundle's CRD files are read when the first edge that needs them
    // comes, shared by every edge on that bundle, and dropped after the
    // last one: memory follows the edges being checked, not the package
    // (a package of hundreds of bundles with MiBs of CRDs each).
    let mut uses: BTreeMap<&PathBuf, usize> = BTreeMap::new();
    for p in &pairs {
        *uses.entry(&p.4).or_default() += 1;
        *uses.entry(&p.5).or_default() += 1;
    }
    let held = SharedCrds {
        slots: uses
            .into_iter()
            .map(|(d, n)| (d, std::sync::Mutex::new((None, n))))
            .collect(),
    };
    pairs
        .par_iter()
        .map(|(from, to, chans, kind, df, dt)| {
            let label = format!(
                "channel{} {}: upgrade {from} -> {to} ({kind})",
                if chans.len() > 1 { "s" } else { "" },
                chans.join(", ")
            );
            let (old, new) = (held.take(df), held.take(dt));
            let findings = match (&*old, &*new) {
                (Ok(o), Ok(n)) => compare_bundles(o, n, &label, checks),
                (Err(e), _) => vec![uncomparable(&label, &e.to_string(), df)],
                (_, Err(e)) => vec![uncomparable(&label, &e.to_string(), dt)],
            };
            held.done(df);
            held.done(dt);
            EdgeFindings {
                from: from.clone(),
                to: to.clone(),
                label,
                findings,
            }
        })
        .collect()
}

/// A bundle's CRD files as read (or why they could not be).
type ReadCrds = std::sync::Arc<Result<BundleCrds, super::Error>>;

/// The CRD files of the bundles of one package's edges: each bundle's slot
/// holds its files while edges still need them, and how many still do.
struct SharedCrds<'a> {
    slots: BTreeMap<&'a PathBuf, std::sync::Mutex<(Option<ReadCrds>, usize)>>,
}

impl SharedCrds<'_> {
    /// The CRD files of `dir`, read on first use. The slot's lock is held
    /// while they are read, so each bundle is read once.
    fn take(&self, dir: &PathBuf) -> ReadCrds {
        let Some(slot) = self.slots.get(dir) else {
            return std::sync::Arc::new(BundleCrds::read(dir));
        };
        let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
        slot.0
            .get_or_insert_with(|| std::sync::Arc::new(BundleCrds::read(dir)))
            .clone()
    }

    /// One edge on `dir` is checked; the last drops its files.
    fn done(&self, dir: &PathBuf) {
        if let Some(slot) = self.slots.get(dir) {
            let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
            slot.1 = slot.1.saturating_sub(1);
            if slot.1 == 0 {
                slot.0 = None;
            }
        }
    }
}

// ---- reading a CRD ----

fn seg(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

fn with(base: &[Seg], more: &[&str]) -> Vec<Seg> {
    let mut v = base.to_vec();
    v.extend(more.iter().map(|k| seg(k)));
    v
}

fn map_get<'a>(n: Option<&'a Node>, key: &str) -> Option<&'a Node> {
    n.and_then(|n| n.get(key))
}

fn str_of(n: Option<&Node>) -> Option<&str> {
    n.and_then(Node::as_str)
}

fn bool_of(n: Option<&Node>) -> Option<bool> {
    match n.map(|n| &n.value) {
        Some(Value::Bool(b)) => Some(*b),
        _ => None,
    }
}

struct CrdVersion<'a> {
    name: String,
    served: bool,
    storage: bool,
    /// Where the version is written.
    path: Vec<Seg>,
    /// The schema root and its path.
    schema: Option<(&'a Node, Vec<Seg>)>,
}

struct CrdView<'a> {
    scope: String,
    versions: Vec<CrdVersion<'a>>,
    /// The storage version(s) and `status.storedVersions`.
    stored: BTreeSet<String>,
    webhook: bool,
}

impl<'a> CrdView<'a> {
    fn of(m: &'a Manifest) -> CrdView<'a> {
        let root = &m.root;
        let spec = root.get("spec");
        let v1beta1 = m.api_version.ends_with("/v1beta1");
        let scope = str_of(map_get(spec, "scope"))
            .map(String::from)
            .unwrap_or_else(|| {
                if v1beta1 {
                    "Namespaced".into()
                } else {
                    String::new()
                }
            });
        // v1beta1: a schema for every version at spec.validation.
        let top_schema = map_get(map_get(spec, "validation"), "openAPIV3Schema")
            .map(|n| (n, with(&[], &["spec", "validation", "openAPIV3Schema"])));
        let mut versions = Vec::new();
        if let Some(Value::Seq(items)) = map_get(spec, "versions").map(|n| &n.value) {
            for (i, v) in items.iter().enumerate() {
                let path = vec![seg("spec"), seg("versions"), Seg::Index(i)];
                let schema = map_get(map_get(Some(v), "schema"), "openAPIV3Schema")
                    .map(|n| (n, with(&path, &["schema", "openAPIV3Schema"])))
                    .or_else(|| top_schema.clone());
                versions.push(CrdVersion {
                    name: str_of(v.get("name")).unwrap_or("").to_string(),
                    served: bool_of(v.get("served")).unwrap_or(false),
                    storage: bool_of(v.get("storage")).unwrap_or(false),
                    path,
                    schema,
                });
            }
        }
        if versions.is_empty() {
            if let Some(name) = str_of(map_get(spec, "version")) {
                versions.push(CrdVersion {
                    name: name.to_string(),
                    served: true,
                    storage: true,
                    path: with(&[], &["spec", "version"]),
                    schema: top_schema,
                });
            }
        }
        let mut stored: BTreeSet<String> = versions
            .iter()
            .filter(|v| v.storage)
            .map(|v| v.name.clone())
            .collect();
        if let Some(Value::Seq(items)) =
            map_get(root.get("status"), "storedVersions").map(|n| &n.value)
        {
            stored.extend(items.iter().filter_map(|n| n.as_str().map(String::from)));
        }
        let webhook = str_of(map_get(map_get(spec, "conversion"), "strategy")) == Some("Webhook");
        CrdView {
            scope,
            versions,
            stored,
            webhook,
        }
    }

    fn version(&self, name: &str) -> Option<&CrdVersion<'a>> {
        self.versions.iter().find(|v| v.name == name)
    }
}

// ---- comparing ----

struct Ctx<'a> {
    old: &'a Manifest,
    new: &'a Manifest,
    label: &'a str,
    out: &'a mut Vec<Finding>,
    /// Where each line starts in the old and new files, made on the first
    /// finding ([`Manifest::location`] scans the text for every location:
    /// slow on a CRD of megabytes with hundreds of findings).
    lines: Option<(Vec<usize>, Vec<usize>)>,
}

fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1))
        .collect()
}

fn locate(m: &Manifest, starts: &[usize], path: &[Seg]) -> Location {
    let span = m.root.locate(path);
    let mut loc = Location::new(&m.file.display_path, span, None);
    let text = &m.file.text;
    let line = span.line as usize;
    if line > 0 {
        if let Some(&start) = starts.get(line - 1) {
            let end = starts.get(line).map(|e| e - 1).unwrap_or(text.len());
            loc.source_line = text
                .get(start..end.max(start))
                .map(|l| l.trim_end_matches('\r').to_string());
        }
    }
    loc
}

const REFUSED: &str = "OLM v1 refuses this upgrade (CRD upgrade-safety preflight); OLM v0 may break clients or stored objects";

impl Ctx<'_> {
    fn emit(&mut self, rule: &str, msg: String, new_at: &[Seg], old_at: &[Seg]) {
        let (old, new) = (self.old, self.new);
        let (ol, nl) = self
            .lines
            .get_or_insert_with(|| (line_starts(&old.file.text), line_starts(&new.file.text)));
        let hint = if rule == "crd-upgrade-served-version-removed" {
            "OLM v1's preflight (crdify) does not check this, and the API server allows it; clients of that version break"
        } else {
            REFUSED
        };
        let f = Finding::error(
            rule,
            format!("{}: CRD {}: {msg}", self.label, self.new.name),
        )
        .at(locate(new, nl, new_at))
        .related(locate(old, ol, old_at))
        .hint(hint);
        self.out.push(f);
    }

    /// A finding about two places of the new CRD (served versions).
    fn emit_new(&mut self, rule: &str, msg: String, at: &[Seg], also: &[Seg]) {
        let (old, new) = (self.old, self.new);
        let (_, nl) = self
            .lines
            .get_or_insert_with(|| (line_starts(&old.file.text), line_starts(&new.file.text)));
        let f = Finding::error(rule, format!("{}: CRD {}: {msg}", self.label, self.new.name))
            .at(locate(new, nl, at))
            .related(locate(new, nl, also))
            .hint("OLM v1 refuses this upgrade (CRD upgrade-safety preflight, served versions): objects read through one served version and written through the other break without a conversion webhook");
        self.out.push(f);
    }
}

/// The flattened schema of a version: crdify path -> (node, where).
type Flat<'a> = BTreeMap<String, (&'a Node, Vec<Seg>)>;

fn flat<'a>(v: &CrdVersion<'a>) -> Option<Flat<'a>> {
    flat_against(v, None)
}

/// [`flat`], leaving out the properties whose content `twin` (the same
/// version in the other CRD) has too ([`crd_schema::flatten`]).
fn flat_against<'a>(v: &CrdVersion<'a>, twin: Option<&CrdVersion>) -> Option<Flat<'a>> {
    let (node, segs) = v.schema.as_ref()?;
    let twin = twin.and_then(|t| t.schema.as_ref()).map(|(n, _)| *n);
    let mut out = BTreeMap::new();
    crd_schema::flatten(node, twin, segs.clone(), "^".into(), &mut out);
    Some(out)
}

/// Whether two versions have schemas of the same content (a version with
/// no schema has nothing to compare either way).
fn same_schema(a: &CrdVersion, b: &CrdVersion) -> bool {
    match (&a.schema, &b.schema) {
        (Some((x, _)), Some((y, _))) => x.same_content(y),
        _ => false,
    }
}

fn with_key(segs: &[Seg], key: &Option<String>) -> Vec<Seg> {
    let mut v = segs.to_vec();
    if let Some(k) = key {
        v.push(Seg::Key(k.clone()));
    }
    v
}

/// One served-version difference: (pair, property, crdify rule, message)
/// identifies it (crdify subtracts the old CRD's by these), then where.
type ServedIssue = (
    (String, String, &'static str, String),
    Change,
    Vec<Seg>,
    Vec<Seg>,
);

/// crdify's served-version validator on one CRD: every pair of served
/// versions (ordered Kubernetes-aware, lower -> higher) compared as two
/// versions of one property.
fn served_issues(view: &CrdView, checks: CrdChecks) -> Vec<ServedIssue> {
    let mut served: Vec<&CrdVersion> = view.versions.iter().filter(|v| v.served).collect();
    if served.len() < 2 {
        return Vec::new();
    }
    served.sort_by(|a, b| crd_schema::kube_version_cmp(&a.name, &b.name));
    // Flattened when a pair needs it: versions that share a schema need none.
    let flats: Vec<std::cell::OnceCell<Option<Flat>>> =
        served.iter().map(|_| std::cell::OnceCell::new()).collect();
    let mut out = Vec::new();
    for i in 0..served.len() {
        for j in i + 1..served.len() {
            if same_schema(served[i], served[j]) {
                continue;
            }
            let lo = flats[i].get_or_init(|| flat(served[i]));
            let hi = flats[j].get_or_init(|| flat(served[j]));
            let (Some(lo), Some(hi)) = (lo, hi) else {
                continue;
            };
            let pair = format!("{} -> {}", served[i].name, served[j].name);
            let hi_root = hi.get("^").map(|(_, s)| s.clone()).unwrap_or_default();
            for (path, (onode, osegs)) in lo {
                let n = hi.get(path);
                for c in crd_schema::field_changes(onode, n.map(|x| x.0), checks) {
                    let at = match n {
                        Some((_, nsegs)) => with_key(nsegs, &c.key),
                        None => hi_root.clone(),
                    };
                    let also = with_key(osegs, &c.key);
                    out.push((
                        (pair.clone(), path.clone(), c.crdify, c.msg.clone()),
                        c,
                        at,
                        also,
                    ));
                }
            }
        }
    }
    out
}

fn compare_crds(
    old: &Manifest,
    new: &Manifest,
    label: &str,
    checks: CrdChecks,
    out: &mut Vec<Finding>,
) {
    let (o, n) = (CrdView::of(old), CrdView::of(new));
    let mut c = Ctx {
        old,
        new,
        label,
        out,
        lines: None,
    };
    let scope_at = with(&[], &["spec", "scope"]);
    if o.scope != n.scope {
        c.emit(
            "crd-upgrade-scope-changed",
            format!("scope changed from {:?} to {:?}", o.scope, n.scope),
            &scope_at,
            &scope_at,
        );
    }
    let versions_at = with(&[], &["spec", "versions"]);
    for s in &o.stored {
        if n.version(s).is_none() {
            let old_at = o.version(s).map(|v| v.path.clone()).unwrap_or_default();
            c.emit(
                "crd-upgrade-stored-version-removed",
                format!(
                    "stored version {s} removed: objects stored as {s} could no longer be read"
                ),
                &versions_at,
                &old_at,
            );
        }
    }
    if !n.webhook {
        for ov in o.versions.iter().filter(|v| v.served) {
            let nv = n.version(&ov.name);
            if nv.is_some_and(|v| v.served) || (nv.is_none() && o.stored.contains(&ov.name)) {
                continue; // served, or already reported as a stored version removed
            }
            c.emit(
                "crd-upgrade-served-version-removed",
                format!(
                    "served version {} {}",
                    ov.name,
                    if nv.is_some() {
                        "is no longer served"
                    } else {
                        "removed"
                    }
                ),
                &nv.map(|v| with(&v.path, &["served"]))
                    .unwrap_or(versions_at.clone()),
                &with(&ov.path, &["served"]),
            );
        }
    }
    for ov in &o.versions {
        let Some(nv) = n.version(&ov.name) else {
            continue;
        };
        // Two copies of one schema have no field to report, and flattening
        // them was most of `graph check`'s CPU on the community catalog,
        // where most versions keep their schema from one bundle to the next.
        if same_schema(ov, nv) {
            continue;
        }
        let (Some(of), Some(nf)) = (flat_against(ov, Some(nv)), flat(nv)) else {
            continue;
        };
        let mut removed: Vec<&String> = Vec::new();
        for (path, (onode, osegs)) in &of {
            let Some((nnode, nsegs)) = nf.get(path) else {
                // Report only the outermost removed field (crdify's
                // existingFieldRemoval names each; its comparison of the
                // removed field with an empty schema repeats the removal).
                if !removed.iter().any(|r| {
                    path.strip_prefix(r.as_str())
                        .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
                }) {
                    removed.push(path);
                    let parent = &osegs[..osegs.len().saturating_sub(2)];
                    let root = nf.get("^").map(|(_, s)| s.clone()).unwrap_or_default();
                    let parent_path = parent_in(&nf, parent, root);
                    c.emit(
                        "crd-upgrade-field-removed",
                        format!("version {}: field {path} removed", ov.name),
                        &parent_path,
                        osegs,
                    );
                }
                continue;
            };
            for ch in crd_schema::field_changes(onode, Some(nnode), checks) {
                c.emit(
                    ch.rule,
                    format!("version {}: field {path}: {}", ov.name, ch.msg),
                    &with_key(nsegs, &ch.key),
                    &match &ch.key {
                        Some(k) if onode.get(k).is_some() => with_key(osegs, &ch.key),
                        _ => osegs.clone(),
                    },
                );
            }
        }
    }
    // Served versions of the new CRD against each other, less what the old
    // CRD already had (crdify `served.Validator`).
    if !(n.webhook && checks.skip_served_with_webhook()) {
        let new_issues = served_issues(&n, checks);
        if !new_issues.is_empty() {
            let known: BTreeSet<_> = served_issues(&o, checks)
                .into_iter()
                .map(|(k, ..)| k)
                .collect();
            for ((pair, path, crdify, _), ch, at, also) in new_issues {
                if known.contains(&(pair.clone(), path.clone(), crdify, ch.msg.clone())) {
                    continue;
                }
                c.emit_new(
                    "crd-served-version-incompatible",
                    format!("served versions {pair}: field {path}: {crdify}: {}", ch.msg),
                    &at,
                    &also,
                );
            }
        }
    }
}

/// Where to point in the new CRD for a field it lacks: the new schema's
/// node at the old parent's path, if present, else the schema root.
fn parent_in(nf: &Flat, old_parent: &[Seg], root: Vec<Seg>) -> Vec<Seg> {
    nf.values()
        .find(|(_, s)| schema_tail(s) == schema_tail(old_parent))
        .map(|(_, s)| s.clone())
        .unwrap_or(root)
}

/// The part of a schema path below `openAPIV3Schema`.
fn schema_tail(s: &[Seg]) -> &[Seg] {
    match s
        .iter()
        .position(|x| matches!(x, Seg::Key(k) if k == "openAPIV3Schema"))
    {
        Some(i) => &s[i + 1..],
        None => s,
    }
}

fn json_text(n: &Node) -> String {
    n.to_json().to_string()
}

// ---- for `graph path`: one edge, and what it adds safely ----

/// [`compare_dirs`] with the upgrade named by `label` in messages.
pub fn compare_dirs_labelled(old: &Path, new: &Path, label: &str) -> Vec<Finding> {
    compare_dirs_labelled_with(old, new, label, CrdChecks::OlmV1)
}

/// [`compare_dirs_labelled`] under the configuration `checks`.
pub fn compare_dirs_labelled_with(
    old: &Path,
    new: &Path,
    label: &str,
    checks: CrdChecks,
) -> Vec<Finding> {
    match (BundleCrds::read(old), BundleCrds::read(new)) {
        (Ok(o), Ok(n)) => compare_bundles(&o, &n, label, checks),
        (Err(e), _) => vec![uncomparable(label, &e.to_string(), old)],
        (_, Err(e)) => vec![uncomparable(label, &e.to_string(), new)],
    }
}

/// The safe changes from `old`'s CRDs to `new`'s, one line each: CRDs
/// added or no longer shipped, versions added, fields added (the outermost
/// of each new subtree) and enum values added. Files with the same bytes in
/// both bundles are not parsed. Err when a bundle or CRD file cannot be
/// read (the unsafe comparison reports that file).
pub fn safe_changes_dirs(old: &Path, new: &Path) -> Result<Vec<String>, super::Error> {
    safe_changes_dirs_with(old, new, CrdChecks::OlmV1)
}

/// [`safe_changes_dirs`] under `checks`: with crdify's defaults enum values
/// added are unsafe (reported by the comparison), so not listed here.
pub fn safe_changes_dirs_with(
    old: &Path,
    new: &Path,
    checks: CrdChecks,
) -> Result<Vec<String>, super::Error> {
    let (o, n) = (BundleCrds::read(old)?, BundleCrds::read(new)?);
    let changed = |a: &BundleCrds, b: &BundleCrds| -> Result<Vec<Manifest>, super::Error> {
        let mut out = Vec::new();
        for i in 0..a.files.len() {
            if b.files.iter().any(|f| f.bytes == a.files[i].bytes) {
                continue;
            }
            out.extend(a.parse(i).clone().map_err(super::Error::Crd)?);
        }
        Ok(out)
    };
    let (oc, nc) = (changed(&o, &n)?, changed(&n, &o)?);
    let mut out = Vec::new();
    for m in &nc {
        let Some(old_m) = oc.iter().find(|x| x.name == m.name) else {
            let view = CrdView::of(m);
            let versions: Vec<&str> = view.versions.iter().map(|v| v.name.as_str()).collect();
            out.push(format!(
                "CRD {} added (versions {})",
                m.name,
                versions.join(", ")
            ));
            continue;
        };
        let (ov, nv) = (CrdView::of(old_m), CrdView::of(m));
        for v in &nv.versions {
            let Some(old_v) = ov.version(&v.name) else {
                out.push(format!(
                    "CRD {}: version {} added{}",
                    m.name,
                    v.name,
                    if v.served {
                        " (served)"
                    } else {
                        " (not served)"
                    }
                ));
                continue;
            };
            let (Some((os, osegs)), Some((ns, nsegs))) = (&old_v.schema, &v.schema) else {
                continue;
            };
            let (mut of, mut nf) = (BTreeMap::new(), BTreeMap::new());
            crd_schema::flatten(os, None, osegs.clone(), "^".into(), &mut of);
            crd_schema::flatten(ns, None, nsegs.clone(), "^".into(), &mut nf);
            let mut added: Vec<&String> = Vec::new();
            for path in nf.keys() {
                if of.contains_key(path)
                    || added.iter().any(|a| {
                        path.strip_prefix(a.as_str())
                            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
                    })
                {
                    continue;
                }
                added.push(path);
            }
            if !added.is_empty() {
                out.push(format!(
                    "CRD {} version {}: field{} {} added",
                    m.name,
                    v.name,
                    if added.len() > 1 { "s" } else { "" },
                    added
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            for (path, (nnode, _)) in &nf {
                let Some((onode, _)) = of.get(path) else {
                    continue;
                };
                let enums = |x: &Node| -> Vec<String> {
                    match x.get("enum").map(|r| &r.value) {
                        Some(Value::Seq(items)) => items.iter().map(json_text).collect(),
                        _ => Vec::new(),
                    }
                };
                let (oe, ne) = (enums(onode), enums(nnode));
                if oe.is_empty() || checks.enum_additions() {
                    continue;
                }
                let more: Vec<&String> = ne.iter().filter(|v| !oe.contains(v)).collect();
                if !more.is_empty() {
                    out.push(format!(
                        "CRD {} version {}: field {path}: enum values {} added",
                        m.name,
                        v.name,
                        more.iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
        }
    }
    for m in &oc {
        if !nc.iter().any(|x| x.name == m.name) && !n_has_crd(&n, &m.name) {
            out.push(format!(
                "CRD {} is no longer shipped (OLM leaves it on the cluster)",
                m.name
            ));
        }
    }
    Ok(out)
}

/// Whether any CRD file of `b` names a CRD `name` (a cheap byte search,
/// for CRDs in files that were not parsed because they did not change).
fn n_has_crd(b: &BundleCrds, name: &str) -> bool {
    let f = memchr::memmem::Finder::new(name.as_bytes());
    b.files.iter().any(|x| f.find(&x.bytes).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(text: &str) -> Manifest {
        let b = Bundle::from_files(
            Path::new("b"),
            vec![RawFile {
                rel_path: "manifests/crd.yaml".into(),
                content: Ok(text.as_bytes().to_vec()),
            }],
        );
        b.manifests.into_iter().find(|m| m.is_crd()).expect("a CRD")
    }

    fn rules(old: &str, new: &str) -> Vec<String> {
        let mut out = Vec::new();
        compare_crds(&crd(old), &crd(new), "t", CrdChecks::OlmV1, &mut out);
        out.into_iter().map(|f| f.rule).collect()
    }

    const V1BETA1: &str = "apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata:
  name: a.example.com
spec:
  group: example.com
  version: v1
  validation:
    openAPIV3Schema:
      type: object
      properties:
        spec:
          type: object
          properties:
            a:
              type: string
            b:
              type: string
";

    /// v1beta1: one version from `spec.version`, its schema from
    /// `spec.validation`, scope `Namespaced` when not written.
    #[test]
    fn v1beta1_to_v1() {
        let v1 = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: a.example.com
spec:
  group: example.com
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              a:
                type: string
";
        assert_eq!(rules(V1BETA1, v1), ["crd-upgrade-field-removed"]);
        assert!(rules(V1BETA1, V1BETA1).is_empty());
    }

    /// A version no longer served is allowed when a conversion webhook
    /// serves the new CRD; without it, it is a finding.
    #[test]
    fn served_version_and_conversion_webhook() {
        let old = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: a.example.com
spec:
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: false
  - name: v1
    served: true
    storage: true
";
        let unserved = old.replacen("served: true", "served: false", 1);
        assert_eq!(
            rules(old, &unserved),
            ["crd-upgrade-served-version-removed"]
        );
        let webhook = format!("{unserved}  conversion:\n    strategy: Webhook\n");
        assert!(rules(old, &webhook).is_empty());
        let dropped = old.replacen(
            "  - name: v1alpha1\n    served: true\n    storage: false\n",
            "",
            1,
        );
        assert_eq!(rules(old, &dropped), ["crd-upgrade-served-version-removed"]);
    }
}
