//! Mirroring a catalog: every image it references (each bundle image and
//! every related image) copied by digest to another registry or to OCI
//! layouts, and what a disconnected cluster needs to use the copies: the
//! catalog with its references rewritten, an `oc image mirror` mapping and
//! an ImageDigestMirrorSet, as oc-mirror writes them.
//!
//! Names follow oc-mirror: an image of repository `HOST/PATH` goes to
//! `REGISTRY/PREFIX/PATH` (the source host dropped; Docker Hub's one-word
//! names keep their `library/`), or to the layout `DIR/PATH` for `oci:DIR`.
//! A source named by tag is resolved to its digest first and keeps its tag
//! at the destination; a source named by digest gets the tag made of the
//! first 16 hex digits of the digest, so that registry garbage collection
//! of untagged manifests does not remove it.
//!
//! With a public key, each bundle image's cosign signatures are checked
//! (through [`crate::sign`]) before it is copied; a bundle image with no
//! signature that verifies is a finding and is not copied, and the
//! signature image (`sha256-H.sig`) of one that verifies is copied along.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use base64::Engine as _;
use futures::StreamExt as _;
use serde::Serialize;
use serde_json::Value;

use crate::diag::Finding;
use crate::fbc::DeclarativeConfig;
use crate::oci::copy::{Copier, CopyStats, Resolved};
use crate::oci::progress::{human_bytes, Progress, ProgressMode};
use crate::oci::{ImageRef, OciError, RegistryClient, Repo};
use crate::sign::{signature_tag, KeyVerifier, PublicKey, Target, VerifyOptions};

/// Where a catalog's images are mirrored to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MirrorTarget {
    /// `REGISTRY[/PREFIX]`: repositories `REGISTRY/PREFIX/<source path>`.
    Registry {
        /// Registry host (and port).
        host: String,
        /// Repository path prefix, without leading or trailing `/`; may be empty.
        prefix: String,
    },
    /// `oci:DIR`: one OCI layout per source repository, `DIR/<source path>`.
    Layout {
        /// The directory holding the layouts.
        dir: PathBuf,
    },
}

impl FromStr for MirrorTarget {
    type Err = OciError;

    fn from_str(s: &str) -> Result<MirrorTarget, OciError> {
        let invalid = |reason: &str| OciError::InvalidReference {
            reference: s.to_string(),
            reason: reason.to_string(),
        };
        if let Some(dir) = s.strip_prefix("oci:") {
            if dir.is_empty() {
                return Err(invalid("no directory after `oci:`"));
            }
            return Ok(MirrorTarget::Layout {
                dir: PathBuf::from(dir),
            });
        }
        let plain = s
            .strip_prefix("docker://")
            .unwrap_or(s)
            .trim_end_matches('/');
        if plain.contains('@') {
            return Err(invalid(
                "a mirror destination is REGISTRY[/PREFIX], without a digest",
            ));
        }
        let (host, prefix) = plain.split_once('/').unwrap_or((plain, ""));
        if !(host.contains('.') || host.contains(':') || host == "localhost") {
            return Err(invalid(
                "the destination must start with a registry host (with a `.` or `:`, or `localhost`), e.g. mirror.example.com:5000/olm",
            ));
        }
        // The prefix must make valid repository names: check it through the
        // one reference parser, on a name below it.
        let probe = if prefix.is_empty() {
            format!("{host}/x")
        } else {
            format!("{host}/{prefix}/x")
        };
        match probe.parse::<ImageRef>() {
            Ok(ImageRef::Registry { reference, .. }) if reference == "latest" => {}
            Ok(_) => {
                return Err(invalid(
                    "a mirror destination is REGISTRY[/PREFIX], without a tag",
                ))
            }
            Err(OciError::InvalidReference { reason, .. }) => return Err(invalid(&reason)),
            Err(e) => return Err(e),
        }
        Ok(MirrorTarget::Registry {
            host: host.to_string(),
            prefix: prefix.to_string(),
        })
    }
}

impl std::fmt::Display for MirrorTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MirrorTarget::Registry { host, prefix } if prefix.is_empty() => write!(f, "{host}"),
            MirrorTarget::Registry { host, prefix } => write!(f, "{host}/{prefix}"),
            MirrorTarget::Layout { dir } => write!(f, "oci:{}", dir.display()),
        }
    }
}

impl MirrorTarget {
    /// Where the image of `src` goes, with `reference` (tag or digest).
    pub fn destination(&self, src: &Repo, reference: &str) -> ImageRef {
        match self {
            MirrorTarget::Registry { host, prefix } => ImageRef::Registry {
                repo: Repo {
                    host: host.clone(),
                    name: if prefix.is_empty() {
                        src.name.clone()
                    } else {
                        format!("{prefix}/{}", src.name)
                    },
                },
                reference: reference.to_string(),
            },
            MirrorTarget::Layout { dir } => ImageRef::Layout {
                dir: dir.join(&src.name),
                reference: reference.to_string(),
            },
        }
    }

    /// The repository (or layout) `src` goes to, as text.
    pub fn repository(&self, src: &Repo) -> String {
        match self.destination(src, "latest") {
            ImageRef::Registry { repo, .. } => repo.to_string(),
            ImageRef::Layout { dir, .. } => format!("oci:{}", dir.display()),
        }
    }
}

/// A repository as people write it and as a cluster matches it: Docker
/// Hub's is `docker.io/…`, not the host requests go to.
pub fn repository_name(repo: &Repo) -> String {
    if repo.host == "index.docker.io" {
        format!("docker.io/{}", repo.name)
    } else {
        repo.to_string()
    }
}

/// The tag a source named by digest gets at the destination.
pub fn digest_tag(digest: &str) -> String {
    let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
    hex.chars().take(16).collect()
}

/// What a run should do.
pub struct MirrorOptions {
    /// Where the images go.
    pub target: MirrorTarget,
    /// Images copied at once.
    pub jobs: usize,
    /// Only resolve and check the destination; copy nothing.
    pub dry_run: bool,
    /// Check each bundle image's cosign signatures with this key first.
    pub verify_key: Option<PublicKey>,
    /// How progress is shown.
    pub progress: ProgressMode,
}

/// What happened to one image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImageStatus {
    /// Copied in this run (perhaps partly: the blobs already there were not).
    Copied,
    /// The destination had it already.
    Present,
    /// Dry run: it would be copied.
    WouldCopy,
    /// Not copied: its signature did not verify (`--verify-key`).
    Refused,
    /// Not copied: resolving or copying it failed.
    Failed,
}

impl ImageStatus {
    /// The word printed for it.
    pub fn as_str(self) -> &'static str {
        match self {
            ImageStatus::Copied => "copied",
            ImageStatus::Present => "present",
            ImageStatus::WouldCopy => "would copy",
            ImageStatus::Refused => "refused",
            ImageStatus::Failed => "failed",
        }
    }

    /// Whether the image is (or, in a dry run, would be) at the destination.
    pub fn at_destination(self) -> bool {
        matches!(
            self,
            ImageStatus::Copied | ImageStatus::Present | ImageStatus::WouldCopy
        )
    }
}

/// Whether an image is a bundle image or a related image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageRole {
    /// An `olm.bundle`'s `image`.
    Bundle,
    /// An entry of a bundle's `relatedImages`.
    Related,
    /// The cosign signature image of a bundle image.
    Signature,
}

/// One image of the catalog and what became of it.
#[derive(Debug, Clone, Serialize)]
pub struct MirroredImage {
    /// The reference as the catalog writes it.
    pub source: String,
    /// Bundle, related or signature image.
    pub role: ImageRole,
    /// The bundles that reference it.
    pub bundles: Vec<String>,
    /// The manifest digest (once resolved).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// `DEST@DIGEST`, what the rewritten catalog names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destination: Option<String>,
    /// The tag it has at the destination.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// What happened.
    pub status: ImageStatus,
    /// Why it failed or was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the copy did.
    pub copy: CopyStats,
    /// The source repository (`docker.io/…` for Docker Hub), for the
    /// mapping and the ImageDigestMirrorSet.
    #[serde(skip)]
    pub source_repository: Option<String>,
    /// The destination repository, likewise.
    #[serde(skip)]
    pub destination_repository: Option<String>,
}

/// An image a CSV deployment uses that its bundle's `relatedImages` lacks.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct MissingRelatedImage {
    /// The package.
    pub package: String,
    /// The bundle.
    pub bundle: String,
    /// The image.
    pub image: String,
    /// Where the CSV uses it: `deployment D container C` (or `init
    /// container`, or `env RELATED_IMAGE_X`).
    pub used_by: String,
}

/// Counts of a run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MirrorSummary {
    /// Images considered.
    pub images: usize,
    /// Copied in this run.
    pub copied: usize,
    /// Already at the destination.
    pub present: usize,
    /// Dry run: would be copied.
    pub would_copy: usize,
    /// Refused (signature).
    pub refused: usize,
    /// Failed.
    pub failed: usize,
    /// Blobs uploaded or written.
    pub blobs_copied: u64,
    /// Blobs mounted from another repository of the destination.
    pub blobs_mounted: u64,
    /// Blobs the destination had.
    pub blobs_skipped: u64,
    /// Bytes uploaded or written.
    pub bytes_copied: u64,
}

/// The outcome of [`mirror`].
#[derive(Debug, Clone, Serialize)]
pub struct MirrorReport {
    /// `REGISTRY/PREFIX` or `oci:DIR`.
    pub destination: String,
    /// Whether this was a dry run.
    pub dry_run: bool,
    /// Every image, by source reference.
    pub images: Vec<MirroredImage>,
    /// Images CSV deployments use that `relatedImages` lacks.
    pub missing_related_images: Vec<MissingRelatedImage>,
    /// Bundles whose catalog entry carries no CSV install strategy (only
    /// `olm.csv.metadata`, or nothing), so their deployments were not checked.
    pub bundles_without_csv: Vec<String>,
    /// Problems: failures, refused signatures, missing related images.
    pub findings: Vec<Finding>,
    /// Counts.
    pub summary: MirrorSummary,
}

impl MirrorReport {
    /// Whether a finding is an error (a failed or refused image, a
    /// reference that does not parse).
    pub fn has_errors(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.level == crate::diag::Level::Error)
    }
}

/// One image to mirror, before resolving.
struct Wanted {
    source: String,
    parsed: ImageRef,
    role: ImageRole,
    bundles: BTreeSet<String>,
}

/// Every image `cfg` references: bundle images, then related images (an
/// image that is both counts as a bundle image), by reference text.
/// References that do not parse are findings.
fn collect(cfg: &DeclarativeConfig, findings: &mut Vec<Finding>) -> Vec<Wanted> {
    let mut by_ref: BTreeMap<String, Wanted> = BTreeMap::new();
    let mut add = |image: &str, role: ImageRole, bundle: &str, findings: &mut Vec<Finding>| {
        let image = image.trim();
        if image.is_empty() {
            return;
        }
        if let Some(w) = by_ref.get_mut(image) {
            w.bundles.insert(bundle.to_string());
            w.role = w.role.min(role);
            return;
        }
        let parsed = match image.parse::<ImageRef>() {
            Ok(p @ ImageRef::Registry { .. }) => p,
            Ok(ImageRef::Layout { .. }) => {
                findings.push(Finding::error(
                    "mirror-reference",
                    format!("bundle {bundle}: image {image} is an OCI layout, not a registry image; it is not mirrored"),
                ));
                return;
            }
            Err(e) => {
                findings.push(Finding::error(
                    "mirror-reference",
                    format!("bundle {bundle}: {e}; it is not mirrored"),
                ));
                return;
            }
        };
        by_ref.insert(
            image.to_string(),
            Wanted {
                source: image.to_string(),
                parsed,
                role,
                bundles: BTreeSet::from([bundle.to_string()]),
            },
        );
    };
    for b in &cfg.bundles {
        add(&b.image, ImageRole::Bundle, &b.name, findings);
        for r in &b.related_images {
            add(&r.image, ImageRole::Related, &b.name, findings);
        }
    }
    by_ref.into_values().collect()
}

/// Mirrors every image of `cfg` as `opts` says, through `client` (which
/// holds the credentials of the source registries and the destination).
/// One image that fails is a finding; the others go on.
pub async fn mirror(
    client: RegistryClient,
    cfg: &DeclarativeConfig,
    opts: &MirrorOptions,
) -> MirrorReport {
    let mut findings = Vec::new();
    let wanted = collect(cfg, &mut findings);
    let copier = Copier::new(client);
    let verifier = opts
        .verify_key
        .clone()
        .map(|k| Arc::new(KeyVerifier::new(k)));
    let progress = Arc::new(Progress::new(
        opts.progress,
        if opts.dry_run {
            "checking images"
        } else {
            "mirroring images"
        },
        wanted.len() as u64,
        false,
    ));
    let jobs = opts.jobs.max(1);
    let results: Vec<Vec<MirroredImage>> = futures::stream::iter(wanted)
        .map(|w| {
            let copier = copier.clone();
            let verifier = verifier.clone();
            let progress = progress.clone();
            async move {
                let out = mirror_one(&copier, w, opts, verifier.as_deref()).await;
                progress.inc(1);
                out
            }
        })
        .buffer_unordered(jobs)
        .collect()
        .await;
    progress.finish();
    let mut images: Vec<MirroredImage> = results.into_iter().flatten().collect();
    images.sort_by(|a, b| a.role.cmp(&b.role).then(a.source.cmp(&b.source)));
    for m in &images {
        if let Some(e) = &m.error {
            let rule = match m.status {
                ImageStatus::Refused => "mirror-signature",
                _ => "mirror-copy",
            };
            findings.push(Finding::error(
                rule,
                format!("{} (bundle {}): {e}", m.source, m.bundles.join(", ")),
            ));
        }
    }
    let (missing, without_csv) = missing_related_images(cfg);
    for m in &missing {
        findings.push(
            Finding::warning(
                "related-images-missing",
                format!(
                    "bundle {} (package {}): {} uses {}, which the bundle's relatedImages does not list: it is not mirrored, and a disconnected install cannot pull it",
                    m.bundle, m.package, m.used_by, m.image
                ),
            )
            .hint("list it in the CSV's spec.relatedImages (by digest) and rebuild the bundle"),
        );
    }
    let mut summary = MirrorSummary {
        images: images.len(),
        ..MirrorSummary::default()
    };
    for m in &images {
        match m.status {
            ImageStatus::Copied => summary.copied += 1,
            ImageStatus::Present => summary.present += 1,
            ImageStatus::WouldCopy => summary.would_copy += 1,
            ImageStatus::Refused => summary.refused += 1,
            ImageStatus::Failed => summary.failed += 1,
        }
        summary.blobs_copied += m.copy.blobs_copied;
        summary.blobs_mounted += m.copy.blobs_mounted;
        summary.blobs_skipped += m.copy.blobs_skipped;
        summary.bytes_copied += m.copy.bytes_copied;
    }
    MirrorReport {
        destination: opts.target.to_string(),
        dry_run: opts.dry_run,
        images,
        missing_related_images: missing,
        bundles_without_csv: without_csv,
        findings,
        summary,
    }
}

/// One line about an image, for progress and the text report.
pub fn describe(m: &MirroredImage) -> String {
    let to = m.destination.as_deref().unwrap_or("-");
    match m.status {
        ImageStatus::Copied => format!(
            "copied {} → {to} ({} blob(s), {}; {} already there, {} mounted)",
            m.source,
            m.copy.blobs_copied,
            human_bytes(m.copy.bytes_copied),
            m.copy.blobs_skipped,
            m.copy.blobs_mounted
        ),
        ImageStatus::Present => format!("present {} → {to}", m.source),
        ImageStatus::WouldCopy => format!("would copy {} → {to}", m.source),
        ImageStatus::Refused | ImageStatus::Failed => format!(
            "{} {}: {}",
            m.status.as_str(),
            m.source,
            m.error.as_deref().unwrap_or("")
        ),
    }
}

/// Resolves, checks and copies one image (and, for a signed bundle image,
/// its signature image): one entry per image handled.
async fn mirror_one(
    copier: &Copier,
    w: Wanted,
    opts: &MirrorOptions,
    verifier: Option<&KeyVerifier>,
) -> Vec<MirroredImage> {
    let mut entry = MirroredImage {
        source: w.source.clone(),
        role: w.role,
        bundles: w.bundles.iter().cloned().collect(),
        digest: None,
        destination: None,
        tag: None,
        status: ImageStatus::Failed,
        error: None,
        copy: CopyStats::default(),
        source_repository: None,
        destination_repository: None,
    };
    let ImageRef::Registry { repo, reference } = &w.parsed else {
        entry.error = Some("not a registry image".into());
        return vec![entry];
    };
    entry.source_repository = Some(repository_name(repo));
    entry.destination_repository = Some(opts.target.repository(repo));
    let resolved = match copier.resolve(&w.parsed).await {
        Ok(r) => r,
        Err(e) => {
            entry.error = Some(format!("resolving it: {e}"));
            return vec![entry];
        }
    };
    let digest = resolved.digest.clone();
    let tag = if w.parsed.is_digest() {
        digest_tag(&digest)
    } else {
        reference.clone()
    };
    let src = w.parsed.with_reference(&digest);
    let dest = opts.target.destination(repo, &tag);
    entry.destination = Some(dest.with_reference(&digest).to_string());
    entry.tag = Some(tag);
    entry.digest = Some(digest.clone());

    let mut extra = Vec::new();
    let mut signature: Option<(ImageRef, ImageRef)> = None;
    if let (Some(verifier), ImageRole::Bundle) = (verifier, w.role) {
        match check_signature(copier, &src, verifier).await {
            Ok(()) => {
                let sig_tag = signature_tag(&digest);
                signature = Some((
                    w.parsed.with_reference(&sig_tag),
                    opts.target.destination(repo, &sig_tag),
                ));
            }
            Err(reason) => {
                entry.status = ImageStatus::Refused;
                entry.error = Some(reason);
                return vec![entry];
            }
        }
    }
    entry.status = match copy_or_check(copier, &src, &resolved, &dest, opts.dry_run).await {
        Ok((status, stats)) => {
            entry.copy = stats;
            status
        }
        Err(e) => {
            entry.error = Some(format!("copying it to {dest}: {e}"));
            ImageStatus::Failed
        }
    };
    if let (Some((sig_src, sig_dest)), true) = (signature, entry.status.at_destination()) {
        extra.push(mirror_signature(copier, &entry, sig_src, sig_dest, opts).await);
    }
    let mut out = vec![entry];
    out.extend(extra);
    out
}

/// Copies `src` (by digest) to `dest`, or in a dry run only looks whether
/// `dest` has it.
async fn copy_or_check(
    copier: &Copier,
    src: &ImageRef,
    resolved: &Resolved,
    dest: &ImageRef,
    dry_run: bool,
) -> Result<(ImageStatus, CopyStats), OciError> {
    if dry_run {
        let present = copier.has_manifest(dest, &resolved.digest).await?;
        let status = if present {
            ImageStatus::Present
        } else {
            ImageStatus::WouldCopy
        };
        return Ok((status, CopyStats::default()));
    }
    let stats = copier.copy_resolved(src, resolved, dest).await?;
    let status = if stats.already_present {
        ImageStatus::Present
    } else {
        ImageStatus::Copied
    };
    Ok((status, stats))
}

/// Copies the `.sig` signature image of a bundle image that verified.
async fn mirror_signature(
    copier: &Copier,
    bundle: &MirroredImage,
    sig_src: ImageRef,
    sig_dest: ImageRef,
    opts: &MirrorOptions,
) -> MirroredImage {
    let mut entry = MirroredImage {
        source: sig_src.to_string(),
        role: ImageRole::Signature,
        bundles: bundle.bundles.clone(),
        digest: None,
        destination: None,
        tag: None,
        status: ImageStatus::Failed,
        error: None,
        copy: CopyStats::default(),
        source_repository: bundle.source_repository.clone(),
        destination_repository: bundle.destination_repository.clone(),
    };
    let resolved = match copier.resolve(&sig_src).await {
        Ok(r) => r,
        Err(e) => {
            entry.error = Some(format!("resolving the signature image: {e}"));
            return entry;
        }
    };
    let digest = resolved.digest.clone();
    entry.digest = Some(digest.clone());
    entry.destination = Some(sig_dest.with_reference(&digest).to_string());
    let (ImageRef::Registry { reference, .. } | ImageRef::Layout { reference, .. }) = &sig_dest;
    entry.tag = Some(reference.clone());
    match copy_or_check(copier, &sig_src, &resolved, &sig_dest, opts.dry_run).await {
        Ok((status, stats)) => {
            entry.status = status;
            entry.copy = stats;
        }
        Err(e) => entry.error = Some(format!("copying the signature image to {sig_dest}: {e}")),
    }
    entry
}

/// `Ok` when at least one cosign signature of `src` verifies with the key;
/// otherwise why not (unsigned, or every signature rejected).
async fn check_signature(
    copier: &Copier,
    src: &ImageRef,
    verifier: &KeyVerifier,
) -> Result<(), String> {
    let target = Target::new(copier.client(), src);
    let report = target
        .verify(verifier, &VerifyOptions::default())
        .await
        .map_err(|e| format!("checking its signatures: {e:#}"))?;
    if !report.verified.is_empty() {
        return Ok(());
    }
    // A registry without the referrers API is not a rejected signature.
    let rejected: Vec<String> = report
        .rejected
        .iter()
        .filter(|r| r.source != "referrers")
        .map(|r| format!("{}: {}", r.source, r.reason))
        .collect();
    if rejected.is_empty() {
        Err("unsigned: no cosign signature found (--verify-key); not copied".into())
    } else {
        Err(format!(
            "no signature verifies with the --verify-key key ({}); not copied",
            rejected.join("; ")
        ))
    }
}

/// The CSV of a bundle as JSON, from what the catalog carries: the CSV
/// read with the catalog (an index or bundle render), or an
/// `olm.bundle.object` property holding it. `None` when the catalog has
/// neither (`olm.csv.metadata` has no install strategy).
fn bundle_csv(b: &crate::fbc::Bundle) -> Option<Value> {
    if let Some(text) = b.csv_json.as_deref().filter(|t| !t.trim().is_empty()) {
        if let Ok(v) = serde_json::from_str::<Value>(text) {
            return Some(v);
        }
    }
    for p in b
        .properties
        .iter()
        .filter(|p| p.kind == "olm.bundle.object")
    {
        let Some(data) = p.field("data").and_then(Value::as_str) else {
            continue;
        };
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data.trim()) else {
            continue;
        };
        if let Ok(v) = serde_json::from_slice::<Value>(&bytes) {
            if v.get("kind").and_then(Value::as_str) == Some("ClusterServiceVersion") {
                return Some(v);
            }
        }
    }
    None
}

/// Images a CSV's deployments use: containers, init containers and
/// `RELATED_IMAGE_*` environment variables (the convention operators use
/// to name their operands), each with where it is used.
fn deployment_images(csv: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let deployments = csv
        .pointer("/spec/install/spec/deployments")
        .and_then(Value::as_array);
    for d in deployments.into_iter().flatten() {
        let dname = d.get("name").and_then(Value::as_str).unwrap_or("?");
        let Some(pod) = d.pointer("/spec/template/spec") else {
            continue;
        };
        for (list, what) in [
            ("initContainers", "init container"),
            ("containers", "container"),
        ] {
            for c in pod
                .get(list)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let cname = c.get("name").and_then(Value::as_str).unwrap_or("?");
                if let Some(img) = c.get("image").and_then(Value::as_str) {
                    out.push((
                        img.to_string(),
                        format!("deployment {dname} {what} {cname}"),
                    ));
                }
                for e in c.get("env").and_then(Value::as_array).into_iter().flatten() {
                    let name = e.get("name").and_then(Value::as_str).unwrap_or("");
                    if let (true, Some(v)) = (
                        name.starts_with("RELATED_IMAGE_"),
                        e.get("value").and_then(Value::as_str),
                    ) {
                        out.push((
                            v.to_string(),
                            format!("deployment {dname} {what} {cname} env {name}"),
                        ));
                    }
                }
            }
        }
    }
    out
}

/// A reference in one spelling (`nginx` and `docker.io/library/nginx:latest`
/// are the same image), or the text itself when it does not parse.
fn canonical(image: &str) -> String {
    image
        .trim()
        .parse::<ImageRef>()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| image.trim().to_string())
}

/// Images CSV deployments use that their bundle's `relatedImages` lacks,
/// and the bundles whose CSV the catalog does not carry.
pub fn missing_related_images(cfg: &DeclarativeConfig) -> (Vec<MissingRelatedImage>, Vec<String>) {
    let mut missing = BTreeSet::new();
    let mut without = BTreeSet::new();
    for b in &cfg.bundles {
        let Some(csv) = bundle_csv(b) else {
            without.insert(b.name.clone());
            continue;
        };
        let listed: BTreeSet<String> = b
            .related_images
            .iter()
            .map(|r| canonical(&r.image))
            .chain(std::iter::once(canonical(&b.image)))
            .collect();
        for (image, used_by) in deployment_images(&csv) {
            if image.trim().is_empty() || listed.contains(&canonical(&image)) {
                continue;
            }
            missing.insert(MissingRelatedImage {
                package: b.package.clone(),
                bundle: b.name.clone(),
                image,
                used_by,
            });
        }
    }
    (missing.into_iter().collect(), without.into_iter().collect())
}

/// `cfg` with every bundle image and related image that is at the
/// destination rewritten to its copy, by digest. Others stay as they were.
pub fn rewrite_catalog(cfg: &DeclarativeConfig, report: &MirrorReport) -> DeclarativeConfig {
    let moved: BTreeMap<&str, &str> = report
        .images
        .iter()
        .filter(|m| m.role != ImageRole::Signature && m.status.at_destination())
        .filter_map(|m| Some((m.source.as_str(), m.destination.as_deref()?)))
        .collect();
    let mut out = cfg.clone();
    let swap = |s: &mut String| {
        if let Some(to) = moved.get(s.trim()) {
            *s = to.to_string();
        }
    };
    for b in &mut out.bundles {
        swap(&mut b.image);
        for r in &mut b.related_images {
            swap(&mut r.image);
        }
    }
    out
}

/// The `oc image mirror` mapping: `SOURCE@DIGEST=DESTINATION:TAG` per image
/// at the destination, sorted.
pub fn mapping(report: &MirrorReport) -> String {
    let mut lines = BTreeSet::new();
    for m in report.images.iter().filter(|m| m.status.at_destination()) {
        let (Some(src_repo), Some(dst_repo), Some(digest), Some(tag)) = (
            &m.source_repository,
            &m.destination_repository,
            &m.digest,
            &m.tag,
        ) else {
            continue;
        };
        lines.insert(format!("{src_repo}@{digest}={dst_repo}:{tag}"));
    }
    lines.into_iter().map(|l| l + "\n").collect()
}

/// An ImageDigestMirrorSet (config.openshift.io/v1) with one entry per
/// source repository, as oc-mirror writes it; `None` for a layout
/// destination, which a cluster cannot pull from.
pub fn image_digest_mirror_set(report: &MirrorReport) -> Option<String> {
    if report.destination.starts_with("oci:") {
        return None;
    }
    let mut mirrors: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for m in report
        .images
        .iter()
        .filter(|m| m.role != ImageRole::Signature && m.status.at_destination())
    {
        if let (Some(s), Some(d)) = (&m.source_repository, &m.destination_repository) {
            mirrors.entry(s).or_default().insert(d);
        }
    }
    let entries: Vec<Value> = mirrors
        .into_iter()
        .map(|(source, to)| serde_json::json!({"mirrors": to.into_iter().collect::<Vec<_>>(), "source": source}))
        .collect();
    let doc = serde_json::json!({
        "apiVersion": "config.openshift.io/v1",
        "kind": "ImageDigestMirrorSet",
        "metadata": {"name": "idms-operator-0"},
        "spec": {"imageDigestMirrors": entries},
    });
    Some(crate::goyaml::to_string(&doc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_and_map_names_as_oc_mirror() {
        let t: MirrorTarget = "mirror.example.com:5000/olm/ops".parse().expect("target");
        let src = Repo {
            host: "quay.io".into(),
            name: "org/operator".into(),
        };
        assert_eq!(
            t.destination(&src, "v1").to_string(),
            "mirror.example.com:5000/olm/ops/org/operator:v1"
        );
        let hub: ImageRef = "nginx:1.25".parse().expect("ref");
        let ImageRef::Registry { repo, .. } = hub else {
            panic!("registry ref")
        };
        assert_eq!(repository_name(&repo), "docker.io/library/nginx");
        assert_eq!(
            t.repository(&repo),
            "mirror.example.com:5000/olm/ops/library/nginx"
        );
        let bare: MirrorTarget = "localhost:5000".parse().expect("bare host");
        assert_eq!(bare.repository(&src), "localhost:5000/org/operator");
        let oci: MirrorTarget = "oci:/tmp/m".parse().expect("oci");
        assert_eq!(oci.repository(&src), "oci:/tmp/m/org/operator");
        for bad in [
            "justaname",
            "quay.io/Upper/x",
            "quay.io/me@sha256:00",
            "quay.io/me:v1",
            "oci:",
        ] {
            assert!(bad.parse::<MirrorTarget>().is_err(), "{bad}");
        }
        assert_eq!(
            digest_tag("sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
            "0123456789abcdef"
        );
    }

    #[test]
    fn deployment_images_missing_from_related_images() {
        let csv = serde_json::json!({
            "kind": "ClusterServiceVersion",
            "spec": {"install": {"spec": {"deployments": [{
                "name": "op",
                "spec": {"template": {"spec": {
                    "initContainers": [{"name": "init", "image": "quay.io/a/init:v1"}],
                    "containers": [{"name": "manager", "image": "quay.io/a/op:v1",
                        "env": [{"name": "RELATED_IMAGE_DB", "value": "docker.io/library/postgres:16"},
                                {"name": "OTHER", "value": "quay.io/not/an-operand:v1"}]}]
                }}}
            }]}}}
        });
        let data = base64::engine::general_purpose::STANDARD.encode(csv.to_string());
        let mut b = crate::fbc::Bundle {
            schema: "olm.bundle".into(),
            name: "a.v1".into(),
            package: "a".into(),
            image: "quay.io/a/bundle:v1".into(),
            ..Default::default()
        };
        b.properties.push(crate::fbc::Property::new(
            "olm.bundle.object",
            serde_json::json!({ "data": data }),
        ));
        b.related_images.push(crate::fbc::RelatedImage {
            name: "op".into(),
            image: "quay.io/a/op:v1".into(),
        });
        // `postgres:16` is the same image as docker.io/library/postgres:16.
        b.related_images.push(crate::fbc::RelatedImage {
            name: "db".into(),
            image: "postgres:16".into(),
        });
        let mut meta_only = b.clone();
        meta_only.name = "a.v0".into();
        meta_only.properties.clear();
        let cfg = DeclarativeConfig {
            bundles: vec![b, meta_only],
            ..Default::default()
        };
        let (missing, without) = missing_related_images(&cfg);
        assert_eq!(
            missing
                .iter()
                .map(|m| (m.image.as_str(), m.used_by.as_str()))
                .collect::<Vec<_>>(),
            [("quay.io/a/init:v1", "deployment op init container init")]
        );
        assert_eq!(without, ["a.v0"]);
    }
}
