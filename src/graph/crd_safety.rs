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
//! Only what is needed is parsed: a bundle's CRD files are hashed, and a
//! file is parsed only when the other bundle of the pair has no file with
//! exactly the same bytes (an unchanged file cannot hold a change). Parsed
//! files are shared by content through a bounded cache and dropped after
//! the last edge that needs them; two files are compared once however many
//! edges (skip ranges make up to n² of them) ship that pair.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::crd_schema;
pub use super::crd_schema::CrdChecks;
use super::PackageGraph;
use crate::bundle::{Bundle, Manifest, RawFile};
use crate::diag::{Finding, Level, Location};
use crate::yaml::{Node, Seg, Span, Value};

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

/// One manifest file of a bundle that may hold CRDs: where it is and a
/// digest of its bytes. The bytes are not kept: a file is read again when
/// it must be parsed (most never are: an unchanged file cannot hold a
/// change), and the digest says whether two bundles ship the same file.
struct CrdFile {
    rel_path: String,
    path: PathBuf,
    digest: Digest,
    /// Its size when listed: what the cache charges for it once parsed.
    len: usize,
}

/// A SHA-256 of a file's bytes.
type Digest = [u8; 32];

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
        use sha2::Digest as _;
        let mdir = dir.join("manifests");
        let entries = std::fs::read_dir(&mdir).map_err(|e| super::Error::io(&mdir, e))?;
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        paths.sort();
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
            if !may_hold_crds(&bytes) {
                continue;
            }
            files.push(CrdFile {
                rel_path: format!("manifests/{name}"),
                digest: sha2::Sha256::digest(&bytes).into(),
                len: bytes.len(),
                path: p,
            });
        }
        Ok(BundleCrds {
            dir: dir.to_path_buf(),
            files,
        })
    }

    /// The path of file `i` as messages name it (the bundle directory as
    /// given, joined with the file's path in the bundle).
    fn shown(&self, i: usize) -> PathBuf {
        self.dir.join(&self.files[i].rel_path)
    }

    /// Whether `other` has a file with the same bytes as file `i`.
    fn has_copy_of(&self, other: &BundleCrds, i: usize) -> bool {
        other.files.iter().any(|o| o.digest == self.files[i].digest)
    }

    /// File `i` parsed, from `cache` or read and parsed now. Err: why it
    /// cannot be compared, naming the file.
    fn parse(&self, i: usize, cache: &CrdCache) -> Result<Arc<ParsedFile>, String> {
        let f = &self.files[i];
        let slot = cache.slot(f.digest, f.len);
        let parsed = slot.get_or_init(|| parse_crd_file(f));
        match parsed {
            Ok(_) => Ok(slot),
            Err((line, msg)) => Err(match line {
                Some(l) => format!("{}:{l}: {msg}", self.shown(i).display()),
                None => format!("{}: {msg}", self.shown(i).display()),
            }),
        }
    }
}

/// Whether a file's bytes may hold CRDs: it names the kind, and is not a
/// CSV that only names CRDs it owns.
fn may_hold_crds(bytes: &[u8]) -> bool {
    let crd = memchr::memmem::Finder::new(b"CustomResourceDefinition");
    let crd_kind = memchr::memmem::Finder::new(b"kind: CustomResourceDefinition");
    let csv_kind = memchr::memmem::Finder::new(b"ClusterServiceVersion");
    crd.find(bytes).is_some() && !(csv_kind.find(bytes).is_some() && crd_kind.find(bytes).is_none())
}

/// One CRD of a parsed file, with what is worked out from it alone once,
/// however many edges compare it: its served-version differences under
/// each [`CrdChecks`].
struct ParsedCrd {
    manifest: Manifest,
    served: [OnceLock<Vec<ServedIssue>>; 2],
}

/// The CRDs of a file, or why it cannot be read: (line, message), the file
/// named by whoever reports it (the same bytes may be in many bundles).
type ParsedFile = OnceLock<Result<Vec<ParsedCrd>, (Option<u32>, String)>>;

fn parse_crd_file(f: &CrdFile) -> Result<Vec<ParsedCrd>, (Option<u32>, String)> {
    use sha2::Digest as _;
    let bytes = std::fs::read(&f.path).map_err(|e| (None, e.to_string()))?;
    if sha2::Sha256::digest(&bytes).as_slice() != f.digest {
        return Err((None, "the file changed while it was being checked".into()));
    }
    let dir = f
        .path
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new(""));
    let b = Bundle::from_files(
        dir,
        vec![RawFile {
            rel_path: f.rel_path.clone(),
            content: Ok(bytes),
        }],
    );
    if let Some(e) = b.load_findings.iter().find(|f| f.level == Level::Error) {
        let line = e.location.as_ref().map(|l| l.line).filter(|&l| l > 0);
        return Err((line, e.message.clone()));
    }
    Ok(b.manifests
        .into_iter()
        .filter(|m| m.is_crd())
        .map(|manifest| ParsedCrd {
            manifest,
            served: Default::default(),
        })
        .collect())
}

/// Parsed CRD files by the digest of their bytes, shared by every check
/// running in the process and bounded: a package's bundles mostly ship the
/// same CRD files, and a whole catalog's CRDs are gigabytes once parsed.
/// The least recently used files are dropped past the budget (those in use
/// stay alive with their users) and parsed again if needed again.
struct CrdCache {
    budget: usize,
    state: std::sync::Mutex<CacheState>,
}

#[derive(Default)]
struct CacheState {
    tick: u64,
    used: usize,
    slots: HashMap<Digest, (Arc<ParsedFile>, usize, u64)>,
}

/// What the parsed CRD files of all checks running at once may hold,
/// estimated: a parsed file is about six times its size (its text, kept for
/// the source lines of findings, and a tree three to five times the text).
/// Files are dropped as soon as no edge of their package needs them, so on
/// the whole community catalog this is never reached (its largest working
/// set, datadog-operator's, is about 45 MB of CRD text); it bounds a
/// package whose edges need more at once, at the cost of parsing again.
/// At a quarter of this, the catalog parsed 2.2x as much (BENCHMARKS.md).
const CRD_CACHE_BUDGET: usize = 256 << 20;

impl CrdCache {
    fn new(budget: usize) -> CrdCache {
        CrdCache {
            budget,
            state: Default::default(),
        }
    }

    /// The cache every check running now shares, made by the first and
    /// dropped with the last (nothing is held between runs).
    fn shared() -> Arc<CrdCache> {
        static SHARED: std::sync::Mutex<std::sync::Weak<CrdCache>> =
            std::sync::Mutex::new(std::sync::Weak::new());
        let mut weak = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = weak.upgrade() {
            return c;
        }
        let c = Arc::new(CrdCache::new(CRD_CACHE_BUDGET));
        *weak = Arc::downgrade(&c);
        c
    }

    /// The slot of the file with `digest` (`len` bytes), new and empty if
    /// the file is not held.
    fn slot(&self, digest: Digest, len: usize) -> Arc<ParsedFile> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.tick += 1;
        let tick = st.tick;
        if let Some(slot) = st.slots.get_mut(&digest) {
            slot.2 = tick;
            return slot.0.clone();
        }
        let slot = Arc::new(ParsedFile::new());
        let cost = len.saturating_mul(6);
        st.used += cost;
        st.slots.insert(digest, (slot.clone(), cost, tick));
        while st.used > self.budget && st.slots.len() > 1 {
            let Some(oldest) = st
                .slots
                .iter()
                .filter(|(d, _)| **d != digest)
                .min_by_key(|(_, s)| s.2)
                .map(|(d, _)| *d)
            else {
                break;
            };
            if let Some((_, c, _)) = st.slots.remove(&oldest) {
                st.used -= c;
            }
        }
        slot
    }

    /// Drops the file with `digest`: nothing will ask for it again.
    fn forget(&self, digest: &Digest) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, c, _)) = st.slots.remove(digest) {
            st.used -= c;
        }
    }
}

/// What comparing two CRDs found, without the edge: which of the two
/// bundles' files each place is in, so that every edge whose bundles ship
/// the same two files takes it as it is.
struct Emitted {
    rule: &'static str,
    /// After the edge's label.
    msg: String,
    hint: &'static str,
    at: Spot,
    related: Spot,
}

/// A place in the old or the new file of a comparison.
struct Spot {
    in_new: bool,
    line: u32,
    column: u32,
    end_column: u32,
    source_line: Option<String>,
}

/// Comparisons done for one package, by the two files and CRDs compared
/// (old file, its CRD, new file, its CRD): skip ranges make many edges of
/// the same two files.
/// By (old file, new file), then by the CRDs' places in them.
type Memo = std::sync::Mutex<HashMap<(Digest, Digest), HashMap<(usize, usize), MemoCell>>>;
type MemoCell = Arc<OnceLock<Vec<Emitted>>>;

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
    let found = compare_bundles_in(old, new, label, checks, &CrdCache::shared(), None);
    Found::findings(found, label)
}

/// What comparing the CRDs of an edge found, before it is made into
/// [`Finding`]s: a comparison's results stay shared with every edge that
/// ships the same two files (each finding has its own message, paths and
/// source lines: a package's tens of thousands of them, made while its
/// CRDs are still parsed, were most of its peak memory).
enum Found {
    /// A finding as it is (a file that cannot be read).
    Finding(Finding),
    /// What comparing two CRDs found, on an edge whose old and new files
    /// are at these paths.
    Compared {
        emitted: MemoCell,
        old_path: PathBuf,
        new_path: PathBuf,
    },
}

impl Found {
    /// How many findings this is.
    fn len(&self) -> usize {
        match self {
            Found::Finding(_) => 1,
            Found::Compared { emitted, .. } => emitted.get().map_or(0, Vec::len),
        }
    }

    /// The findings of `found`, on the edge `label`, in a vector of their
    /// exact number.
    fn findings(found: Vec<Found>, label: &str) -> Vec<Finding> {
        let mut out = Vec::with_capacity(found.iter().map(Found::len).sum());
        for f in found {
            f.write_into(label, &mut out);
        }
        out
    }

    /// Appends the findings to `out`, on the edge `label`.
    fn write_into(self, label: &str, out: &mut Vec<Finding>) {
        match self {
            Found::Finding(f) => out.push(f),
            Found::Compared {
                emitted,
                old_path,
                new_path,
            } => {
                let emitted = emitted.get().map_or(&[][..], Vec::as_slice);
                out.extend(
                    emitted
                        .iter()
                        .map(|e| e.finding(label, &old_path, &new_path)),
                );
            }
        }
    }
}

/// [`compare_bundles`] with parsed files from `cache`, and comparisons of
/// the same two files from `memo` when given.
fn compare_bundles_in(
    old: &BundleCrds,
    new: &BundleCrds,
    label: &str,
    checks: CrdChecks,
    cache: &CrdCache,
    memo: Option<&Memo>,
) -> Vec<Found> {
    let mut out = Vec::new();
    let new_files = changed_files(new, old, label, cache, &mut out);
    if new_files.is_empty() {
        return out;
    }
    let old_files = changed_files(old, new, label, cache, &mut out);
    for (ni, nf) in &new_files {
        for (nk, n) in crds_of(nf).iter().enumerate() {
            let found = old_files.iter().find_map(|(oi, of)| {
                let crds = crds_of(of);
                let ok = crds
                    .iter()
                    .position(|o| o.manifest.name == n.manifest.name)?;
                Some((*oi, ok, &crds[ok]))
            });
            let Some((oi, ok, o)) = found else {
                continue;
            };
            let cell = match memo {
                Some(memo) => {
                    let files = (old.files[oi].digest, new.files[*ni].digest);
                    memo.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .entry(files)
                        .or_default()
                        .entry((ok, nk))
                        .or_default()
                        .clone()
                }
                None => MemoCell::default(),
            };
            if cell.get_or_init(|| compare_crds(o, n, checks)).is_empty() {
                continue;
            }
            out.push(Found::Compared {
                emitted: cell,
                old_path: old.shown(oi),
                new_path: new.shown(*ni),
            });
        }
    }
    out
}

/// The files of `b` that `other` has no byte-identical copy of, parsed
/// (from `cache`: a CRD tree can be tens of MiB, so it is parsed once for
/// every bundle that ships it while it is held). Files that cannot be
/// parsed go to `out`.
fn changed_files(
    b: &BundleCrds,
    other: &BundleCrds,
    label: &str,
    cache: &CrdCache,
    out: &mut Vec<Found>,
) -> Vec<(usize, Arc<ParsedFile>)> {
    let mut files = Vec::new();
    for i in 0..b.files.len() {
        if b.has_copy_of(other, i) {
            continue;
        }
        match b.parse(i, cache) {
            Ok(p) => files.push((i, p)),
            Err(e) => out.push(Found::Finding(uncomparable(label, &e, &b.shown(i)))),
        }
    }
    files
}

/// The CRDs of a file [`BundleCrds::parse`] gave (none if it failed).
fn crds_of(p: &ParsedFile) -> &[ParsedCrd] {
    p.get()
        .and_then(|r| r.as_ref().ok())
        .map_or(&[], Vec::as_slice)
}

impl Emitted {
    /// The finding on the edge `label`, whose old and new files are at
    /// these paths.
    fn finding(&self, label: &str, old_path: &Path, new_path: &Path) -> Finding {
        let loc = |s: &Spot| Location {
            file: if s.in_new { new_path } else { old_path }.to_path_buf(),
            line: s.line,
            column: s.column,
            end_column: s.end_column,
            source_line: s.source_line.clone(),
        };
        Finding::error(self.rule, format!("{label}: {}", self.msg))
            .at(loc(&self.at))
            .related(loc(&self.related))
            .hint(self.hint)
    }
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
    let mut out = Vec::new();
    check_graph_into(g, checks, &mut out);
    out
}

/// [`check_graph_with`], appending to `out`.
pub(crate) fn check_graph_into(g: &PackageGraph, checks: CrdChecks, out: &mut Vec<Finding>) {
    let edges = compare_edges(g, checks);
    // Sized once: a package's findings can be tens of thousands. They are
    // made only now, with every CRD of the package dropped.
    out.reserve_exact(edges.iter().flat_map(|e| &e.found).map(Found::len).sum());
    for e in edges {
        for f in e.found {
            f.write_into(&e.label, out);
        }
    }
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
    compare_edges(g, checks)
        .into_iter()
        .map(|e| {
            let findings = Found::findings(e.found, &e.label);
            EdgeFindings {
                from: e.from,
                to: e.to,
                label: e.label,
                findings,
            }
        })
        .collect()
}

/// What comparing the CRDs of one edge found, not yet made into findings.
struct EdgeFound {
    from: String,
    to: String,
    label: String,
    found: Vec<Found>,
}

/// The comparisons of [`check_graph_edges`], edges sorted by (from, to).
fn compare_edges(g: &PackageGraph, checks: CrdChecks) -> Vec<EdgeFound> {
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
    let mut pairs: Vec<_> = pairs
        .into_iter()
        .enumerate()
        .filter_map(|(i, ((from, to), (chans, kind)))| {
            let (df, dt) = (dir_of(&from)?, dir_of(&to)?);
            Some((i, from, to, chans, kind, df, dt))
        })
        .collect();
    // Edges taken by upgrade-from version, then to: a file stays in use
    // over neighbouring edges, so the cache holds what is needed next.
    let version_order = |a: &str, b: &str| match (g.version(a), g.version(b)) {
        (Some(x), Some(y)) => crate::semver_range::compare(x, y),
        _ => std::cmp::Ordering::Equal,
    };
    pairs.sort_by(|a, b| version_order(&a.1, &b.1).then_with(|| version_order(&a.2, &b.2)));
    // Every bundle's CRD files are listed and hashed once (no bytes are
    // kept); the files that differ along an edge are parsed through the
    // shared, bounded cache, and each comparison of the same two files is
    // made once (skip ranges give a package of n bundles up to n² edges,
    // over a few distinct files).
    let dirs: BTreeSet<&PathBuf> = pairs.iter().flat_map(|p| [&p.5, &p.6]).collect();
    let listed: HashMap<&PathBuf, Result<BundleCrds, super::Error>> = dirs
        .into_par_iter()
        .map(|d| (d, BundleCrds::read(d)))
        .collect();
    // Which files each edge may parse (those the other bundle has no copy
    // of: old ones, new ones), and how many edges still may: a file no
    // edge needs any more is dropped from the cache at once, and so are
    // the comparisons of two files no edge will compare again.
    let needs: Vec<(Vec<Digest>, Vec<Digest>)> = pairs
        .iter()
        .map(|p| match (&listed[&p.5], &listed[&p.6]) {
            (Ok(o), Ok(n)) => {
                let changed = |a: &BundleCrds, b: &BundleCrds| {
                    (0..a.files.len())
                        .filter(|&i| !a.has_copy_of(b, i))
                        .map(|i| a.files[i].digest)
                        .collect::<Vec<_>>()
                };
                (changed(o, n), changed(n, o))
            }
            _ => Default::default(),
        })
        .collect();
    let mut left = Remaining::default();
    for (olds, news) in &needs {
        for d in olds.iter().chain(news) {
            *left.files.entry(*d).or_default() += 1;
        }
        for o in olds {
            for n in news {
                *left.pairs.entry((*o, *n)).or_default() += 1;
            }
        }
    }
    let remaining = std::sync::Mutex::new(left);
    let cache = CrdCache::shared();
    let memo = Memo::default();
    let mut edges: Vec<(usize, EdgeFound)> = pairs
        .par_iter()
        .zip(&needs)
        .map(|((i, from, to, chans, kind, df, dt), needs)| {
            let label = format!(
                "channel{} {}: upgrade {from} -> {to} ({kind})",
                if chans.len() > 1 { "s" } else { "" },
                chans.join(", ")
            );
            let found = match (&listed[df], &listed[dt]) {
                (Ok(o), Ok(n)) => compare_bundles_in(o, n, &label, checks, &cache, Some(&memo)),
                (Err(e), _) => vec![Found::Finding(uncomparable(&label, &e.to_string(), df))],
                (_, Err(e)) => vec![Found::Finding(uncomparable(&label, &e.to_string(), dt))],
            };
            let mut left = remaining.lock().unwrap_or_else(|p| p.into_inner());
            let (olds, news) = needs;
            for d in olds.iter().chain(news) {
                if Remaining::done(&mut left.files, d) {
                    cache.forget(d);
                }
            }
            for o in olds {
                for n in news {
                    if Remaining::done(&mut left.pairs, &(*o, *n)) {
                        memo.lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .remove(&(*o, *n));
                    }
                }
            }
            drop(left);
            let edge = EdgeFound {
                from: from.clone(),
                to: to.clone(),
                label,
                found,
            };
            (*i, edge)
        })
        .collect();
    edges.sort_by_key(|(i, _)| *i);
    edges.into_iter().map(|(_, e)| e).collect()
}

/// How many edges of a package still need each file, and each pair of
/// files compared.
#[derive(Default)]
struct Remaining {
    files: HashMap<Digest, usize>,
    pairs: HashMap<(Digest, Digest), usize>,
}

impl Remaining {
    /// One use of `key` is over: whether it was the last.
    fn done<K: std::hash::Hash + Eq>(counts: &mut HashMap<K, usize>, key: &K) -> bool {
        match counts.get_mut(key) {
            Some(n) if *n > 1 => {
                *n -= 1;
                false
            }
            Some(_) => {
                counts.remove(key);
                true
            }
            None => false,
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
    out: Vec<Emitted>,
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

/// Where `path` is in `m` (the new file's or the old's, `in_new`).
fn locate(m: &Manifest, starts: &[usize], path: &[Seg], in_new: bool) -> Spot {
    spot(m, starts, m.root.locate(path), in_new)
}

/// The place `span` of `m` (the new file's or the old's, `in_new`), with
/// its source line.
fn spot(m: &Manifest, starts: &[usize], span: Span, in_new: bool) -> Spot {
    let loc = Location::new("", span, None);
    let text = &m.file.text;
    let line = span.line as usize;
    let source_line = (line > 0)
        .then(|| starts.get(line - 1))
        .flatten()
        .and_then(|&start| {
            let end = starts.get(line).map(|e| e - 1).unwrap_or(text.len());
            text.get(start..end.max(start))
                .map(|l| l.trim_end_matches('\r').to_string())
        });
    Spot {
        in_new,
        line: loc.line,
        column: loc.column,
        end_column: loc.end_column,
        source_line,
    }
}

const REFUSED: &str = "OLM v1 refuses this upgrade (CRD upgrade-safety preflight); OLM v0 may break clients or stored objects";

impl Ctx<'_> {
    fn lines(&mut self) -> &(Vec<usize>, Vec<usize>) {
        let (old, new) = (self.old, self.new);
        self.lines
            .get_or_insert_with(|| (line_starts(&old.file.text), line_starts(&new.file.text)))
    }

    fn emit(&mut self, rule: &'static str, msg: String, new_at: &[Seg], old_at: &[Seg]) {
        let (old, new) = (self.old, self.new);
        let (ol, nl) = self.lines();
        let (at, related) = (
            locate(new, nl, new_at, true),
            locate(old, ol, old_at, false),
        );
        let hint = if rule == "crd-upgrade-served-version-removed" {
            "OLM v1's preflight (crdify) does not check this, and the API server allows it; clients of that version break"
        } else {
            REFUSED
        };
        self.out.push(Emitted {
            rule,
            msg: format!("CRD {}: {msg}", new.name),
            hint,
            at,
            related,
        });
    }

    /// A finding about two places of the new CRD (served versions).
    fn emit_new(&mut self, rule: &'static str, msg: String, at: Span, also: Span) {
        let new = self.new;
        let (_, nl) = self.lines();
        let (at, related) = (spot(new, nl, at, true), spot(new, nl, also, true));
        self.out.push(Emitted {
            rule,
            msg: format!("CRD {}: {msg}", new.name),
            hint: "OLM v1 refuses this upgrade (CRD upgrade-safety preflight, served versions): objects read through one served version and written through the other break without a conversion webhook",
            at,
            related,
        });
    }
}

/// The flattened schema of a version: crdify path -> (node, where).
type Flat<'a> = BTreeMap<String, (&'a Node, Vec<Seg>)>;

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

/// One served-version difference of a CRD: (pair, property, crdify rule,
/// message) identifies it (crdify subtracts the old CRD's by these), then
/// where it is in the CRD. Kept with the parsed CRD for as long as it is,
/// so small: places as spans, not schema paths (a CRD of megabytes can
/// have thousands of these, and paths of a dozen keys each).
struct ServedIssue {
    /// `lower -> higher`, shared by the pair's issues.
    pair: Arc<str>,
    path: String,
    crdify: &'static str,
    msg: String,
    at: Span,
    also: Span,
}

impl ServedIssue {
    /// What identifies the issue.
    fn key(&self) -> (&str, &str, &str, &str) {
        (&self.pair, &self.path, self.crdify, &self.msg)
    }
}

/// crdify's served-version validator on one CRD: every pair of served
/// versions (ordered Kubernetes-aware, lower -> higher) compared as two
/// versions of one property.
fn served_issues(m: &Manifest, view: &CrdView, checks: CrdChecks) -> Vec<ServedIssue> {
    let mut served: Vec<&CrdVersion> = view.versions.iter().filter(|v| v.served).collect();
    if served.len() < 2 {
        return Vec::new();
    }
    served.sort_by(|a, b| crd_schema::kube_version_cmp(&a.name, &b.name));
    let mut out = Vec::new();
    for i in 0..served.len() {
        for j in i + 1..served.len() {
            if same_schema(served[i], served[j]) {
                continue;
            }
            // Each of the pair flattened less what the other has the same.
            let (Some(lo), Some(hi)) = (
                flat_against(served[i], Some(served[j])),
                flat_against(served[j], Some(served[i])),
            ) else {
                continue;
            };
            let pair: Arc<str> = format!("{} -> {}", served[i].name, served[j].name).into();
            let hi_root = m.root.locate(hi.get("^").map_or(&[][..], |(_, s)| s));
            for (path, (onode, osegs)) in &lo {
                let n = hi.get(path);
                for c in crd_schema::field_changes(onode, n.map(|x| x.0), checks) {
                    let at = match n {
                        Some((_, nsegs)) => m.root.locate(&with_key(nsegs, &c.key)),
                        None => hi_root,
                    };
                    out.push(ServedIssue {
                        pair: pair.clone(),
                        path: path.clone(),
                        crdify: c.crdify,
                        msg: c.msg,
                        at,
                        also: m.root.locate(&with_key(osegs, &c.key)),
                    });
                }
            }
        }
    }
    out
}

/// What an upgrade from CRD `old` to CRD `new` breaks, each place in the
/// old or the new file.
fn compare_crds(old_crd: &ParsedCrd, new_crd: &ParsedCrd, checks: CrdChecks) -> Vec<Emitted> {
    let (old, new) = (&old_crd.manifest, &new_crd.manifest);
    let (o, n) = (CrdView::of(old), CrdView::of(new));
    let mut c = Ctx {
        old,
        new,
        out: Vec::new(),
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
        // Each side leaves out what is the same in the other: an old
        // property kept is looked up in the new side by its path, and its
        // twin there differs from it, so it is kept too.
        let (Some(of), Some(nf)) = (flat_against(ov, Some(nv)), flat_against(nv, Some(ov))) else {
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
        // Each CRD's own served-version differences are worked out once,
        // however many edges it is on.
        let slot = checks as usize;
        let new_issues = new_crd.served[slot].get_or_init(|| served_issues(new, &n, checks));
        if !new_issues.is_empty() {
            let known: BTreeSet<_> = old_crd.served[slot]
                .get_or_init(|| served_issues(old, &o, checks))
                .iter()
                .map(ServedIssue::key)
                .collect();
            for issue in new_issues {
                if known.contains(&issue.key()) {
                    continue;
                }
                let ServedIssue {
                    pair,
                    path,
                    crdify,
                    msg,
                    at,
                    also,
                } = issue;
                c.emit_new(
                    "crd-served-version-incompatible",
                    format!("served versions {pair}: field {path}: {crdify}: {msg}"),
                    *at,
                    *also,
                );
            }
        }
    }
    c.out
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
    let cache = CrdCache::shared();
    let changed = |a: &BundleCrds, b: &BundleCrds| -> Result<Vec<Arc<ParsedFile>>, super::Error> {
        let mut out = Vec::new();
        for i in 0..a.files.len() {
            if !a.has_copy_of(b, i) {
                out.push(a.parse(i, &cache).map_err(super::Error::Crd)?);
            }
        }
        Ok(out)
    };
    let (old_files, new_files) = (changed(&o, &n)?, changed(&n, &o)?);
    let oc: Vec<&Manifest> = old_files
        .iter()
        .flat_map(|p| crds_of(p))
        .map(|c| &c.manifest)
        .collect();
    let nc: Vec<&Manifest> = new_files
        .iter()
        .flat_map(|p| crds_of(p))
        .map(|c| &c.manifest)
        .collect();
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
    b.files
        .iter()
        .any(|x| std::fs::read(&x.path).is_ok_and(|bytes| f.find(&bytes).is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(text: &str) -> ParsedCrd {
        let b = Bundle::from_files(
            Path::new("b"),
            vec![RawFile {
                rel_path: "manifests/crd.yaml".into(),
                content: Ok(text.as_bytes().to_vec()),
            }],
        );
        let manifest = b.manifests.into_iter().find(|m| m.is_crd()).expect("a CRD");
        ParsedCrd {
            manifest,
            served: Default::default(),
        }
    }

    fn rules(old: &str, new: &str) -> Vec<String> {
        compare_crds(&crd(old), &crd(new), CrdChecks::OlmV1)
            .into_iter()
            .map(|f| f.rule.to_string())
            .collect()
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
