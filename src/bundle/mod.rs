//! Operator bundles: loading a bundle directory into a model.
//!
//! A bundle (`registry+v1`) is a directory with `manifests/` (a
//! ClusterServiceVersion, CRDs and other objects, as YAML, multi-document YAML
//! or JSON) and `metadata/annotations.yaml` (package, channels, default
//! channel, layout), optionally `metadata/dependencies.yaml` and
//! `metadata/properties.yaml`. See operator-registry's
//! `docs/design/operator-bundle.md`.
//!
//! Loading never fails on bad content: every problem found while reading
//! (unreadable file, YAML syntax, duplicate keys, a CSV split over several
//! documents, a symlink leaving the bundle, …) becomes a [`Finding`] in
//! [`Bundle::load_findings`], so `bundle validate` can report all of them at
//! once. Only an unusable directory is an [`Err`].
//!
//! Each manifest keeps both its located YAML tree (for diagnostics) and its
//! JSON (for the index and gRPC, which emit it as opm does).

pub(crate) mod csv;
pub mod csv_metadata;
mod gvk;
pub mod properties;

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::diag::{Finding, Location};
use crate::yaml::{self, Node, Seg, Span};

pub use csv::{
    ApiServiceDescription, ApiServiceDescriptions, CrdDescription, CrdDescriptions, Csv,
    CsvGraphSpec, CsvGraphView, CsvSpec, DecodeError, DeploymentSpec, Icon, Install, InstallMode,
    InstallSpec, Link, Maintainer, ObjectMeta, Permission, Provider, RelatedImage,
    WebhookDescription, CSV_GRAPH_KEYS,
};
pub use gvk::{ApiKey, Gvk};

/// Largest manifest or metadata file read; larger ones are reported, not read.
pub const MAX_FILE_SIZE: u64 = 64 * 1024 * 1024;

/// The annotation keys of `metadata/annotations.yaml` (and bundle image labels).
pub mod keys {
    /// Media type of the bundle, `registry+v1` or `plain+v0`.
    pub const MEDIATYPE: &str = "operators.operatorframework.io.bundle.mediatype.v1";
    /// Path of the manifests directory inside the bundle, `manifests/`.
    pub const MANIFESTS: &str = "operators.operatorframework.io.bundle.manifests.v1";
    /// Path of the metadata directory inside the bundle, `metadata/`.
    pub const METADATA: &str = "operators.operatorframework.io.bundle.metadata.v1";
    /// Package name.
    pub const PACKAGE: &str = "operators.operatorframework.io.bundle.package.v1";
    /// Comma-separated channels.
    pub const CHANNELS: &str = "operators.operatorframework.io.bundle.channels.v1";
    /// Default channel of the package.
    pub const DEFAULT_CHANNEL: &str = "operators.operatorframework.io.bundle.channel.default.v1";
}

/// Why a bundle could not be loaded at all.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The path does not exist or is not a directory.
    #[error("{path}: not a bundle directory: {reason}")]
    NotADirectory {
        /// The path given.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// An I/O error reading the directory itself.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// A file read from a bundle.
#[derive(Debug)]
pub struct SourceFile {
    /// Path inside the bundle, with `/` separators, e.g. `manifests/etcd.crd.yaml`.
    pub rel_path: String,
    /// Path to show to users: the bundle directory as given joined with `rel_path`.
    pub display_path: PathBuf,
    /// The text (UTF-8 checked).
    pub text: String,
}

impl SourceFile {
    /// A location in this file.
    pub fn location(&self, span: Span) -> Location {
        Location::new(&self.display_path, span, Some(&self.text))
    }
}

/// One Kubernetes object from `manifests/`.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The file it came from.
    pub file: Arc<SourceFile>,
    /// Index of the document within the file (0-based).
    pub doc_index: usize,
    /// The located YAML tree.
    pub root: Node,
    /// The same object as JSON, made on first use: graph checks of a whole
    /// catalog read only the tree, and skipping the copy saves a fifth of
    /// their time.
    json: std::sync::OnceLock<serde_json::Value>,
    /// `kind`, empty if missing.
    pub kind: String,
    /// `apiVersion`, empty if missing.
    pub api_version: String,
    /// `metadata.name`, empty if missing.
    pub name: String,
}

impl Manifest {
    /// The object as JSON (what opm stores and serves).
    pub fn json(&self) -> &serde_json::Value {
        self.json.get_or_init(|| self.root.to_json())
    }

    /// Where `path` points in this manifest.
    pub fn location(&self, path: &[Seg]) -> Location {
        self.file.location(self.root.locate(path))
    }

    /// Where the key at the end of `path` stands (or the nearest ancestor).
    pub fn key_location(&self, path: &[Seg]) -> Location {
        self.file.location(self.root.locate_key(path))
    }

    /// The API group of `apiVersion` (empty for the core group).
    pub fn group(&self) -> &str {
        self.api_version
            .rsplit_once('/')
            .map(|(g, _)| g)
            .unwrap_or("")
    }

    /// Whether this is a ClusterServiceVersion.
    pub fn is_csv(&self) -> bool {
        self.kind == "ClusterServiceVersion"
    }

    /// Whether this is a CustomResourceDefinition.
    pub fn is_crd(&self) -> bool {
        self.kind == "CustomResourceDefinition"
    }
}

/// A YAML file of `metadata/` with its parsed root.
#[derive(Debug, Clone)]
pub struct MetadataFile {
    /// The file.
    pub file: Arc<SourceFile>,
    /// The located root node.
    pub root: Node,
}

impl MetadataFile {
    /// Where `path` points in this file.
    pub fn location(&self, path: &[Seg]) -> Location {
        self.file.location(self.root.locate(path))
    }
}

/// `metadata/annotations.yaml`.
#[derive(Debug, Clone)]
pub struct Annotations {
    /// The file it came from, or `None` when taken from image labels.
    pub source: Option<MetadataFile>,
    /// The annotations, values as strings.
    pub values: BTreeMap<String, String>,
}

impl Annotations {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// The package name.
    pub fn package(&self) -> Option<&str> {
        self.get(keys::PACKAGE)
    }

    /// The channels, split on commas and trimmed, empty entries dropped.
    pub fn channels(&self) -> Vec<String> {
        self.get(keys::CHANNELS)
            .map(|c| {
                c.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The default channel.
    pub fn default_channel(&self) -> Option<&str> {
        self.get(keys::DEFAULT_CHANNEL)
    }

    /// Where the annotation `key` is set (or the file), for findings.
    pub fn location(&self, key: &str) -> Option<Location> {
        self.source
            .as_ref()
            .map(|s| s.location(&[Seg::from("annotations"), Seg::from(key)]))
    }
}

/// A loaded bundle.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// The bundle directory as given (or an image reference).
    pub dir: PathBuf,
    /// Every object of `manifests/`, ordered by file name then document.
    pub manifests: Vec<Manifest>,
    /// `metadata/annotations.yaml`, if present and readable.
    pub annotations: Option<Annotations>,
    /// `metadata/dependencies.yaml`, if present.
    pub dependencies: Option<MetadataFile>,
    /// `metadata/properties.yaml`, if present.
    pub properties: Option<MetadataFile>,
    /// Other files of `metadata/` (names inside the bundle).
    pub other_metadata: Vec<String>,
    /// Problems found while reading.
    pub load_findings: Vec<Finding>,
    /// Files of `manifests/` with their number of non-empty documents.
    pub manifest_files: Vec<(Arc<SourceFile>, usize)>,
    /// Total size in bytes of everything read.
    pub size: u64,
}

/// A file handed to [`Bundle::from_files`]: its path inside the bundle and
/// its bytes, or why it could not be read.
pub struct RawFile {
    /// Path inside the bundle with `/` separators.
    pub rel_path: String,
    /// Content, or the finding that explains why there is none.
    pub content: Result<Vec<u8>, Finding>,
}

impl Bundle {
    /// Loads the bundle directory `dir`.
    pub fn load_dir(dir: &Path) -> Result<Bundle, LoadError> {
        let meta = fs::metadata(dir).map_err(|e| LoadError::NotADirectory {
            path: dir.to_path_buf(),
            reason: e.to_string(),
        })?;
        if !meta.is_dir() {
            return Err(LoadError::NotADirectory {
                path: dir.to_path_buf(),
                reason: "it is a file; give the directory that holds manifests/ and metadata/"
                    .into(),
            });
        }
        // The bundle's real path, needed only to judge symbolic links (most
        // bundles have none: canonicalizing costs a readlink per component).
        let root = std::cell::OnceCell::new();
        let root = || -> Result<&PathBuf, LoadError> {
            if let Some(r) = root.get() {
                return Ok(r);
            }
            let r = fs::canonicalize(dir).map_err(|e| LoadError::Io {
                path: dir.to_path_buf(),
                source: e,
            })?;
            Ok(root.get_or_init(|| r))
        };
        let mut files = Vec::new();
        let mut findings = Vec::new();
        for sub in ["manifests", "metadata"] {
            let path = dir.join(sub);
            // A manifests/ or metadata/ that is a symbolic link must stay
            // inside the bundle, like the files in it.
            if let Ok(lmeta) = fs::symlink_metadata(&path) {
                if lmeta.file_type().is_symlink() {
                    match fs::canonicalize(&path) {
                        Ok(target) if target.starts_with(root()?) => {}
                        Ok(target) => {
                            findings.push(
                                Finding::error(
                                    "symlink-outside-bundle",
                                    format!(
                                        "{sub}/ is a symbolic link to {}, outside the bundle; it was not read",
                                        target.display()
                                    ),
                                )
                                .at(Location::file(&path))
                                .hint("bundle images hold plain directories: copy the files into the bundle"),
                            );
                            continue;
                        }
                        Err(e) => {
                            findings.push(
                                Finding::error(
                                    "bundle-unreadable",
                                    format!("{sub}/ is a broken symbolic link: {e}"),
                                )
                                .at(Location::file(&path)),
                            );
                            continue;
                        }
                    }
                }
            }
            let entries = match fs::read_dir(&path) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
                    findings.push(
                        Finding::error(
                            "file-not-regular",
                            format!("{sub} is a file, not a directory; it was not read"),
                        )
                        .at(Location::file(&path))
                        .hint(format!("a bundle holds its files in a {sub}/ directory")),
                    );
                    continue;
                }
                Err(e) => {
                    findings.push(
                        Finding::error("io-error", format!("cannot read {sub}/: {e}"))
                            .at(Location::file(&path)),
                    );
                    continue;
                }
            };
            let mut names: Vec<_> = entries.filter_map(Result::ok).collect();
            names.sort_by_key(|e| e.file_name());
            for entry in names {
                let name = entry.file_name().to_string_lossy().into_owned();
                let rel = format!("{sub}/{name}");
                let full = entry.path();
                let Ok(ftype) = entry.file_type() else {
                    continue;
                };
                if ftype.is_symlink() {
                    match fs::canonicalize(&full) {
                        Ok(target) if target.starts_with(root()?) => {}
                        Ok(target) => {
                            findings.push(
                                Finding::error(
                                    "symlink-outside-bundle",
                                    format!(
                                        "{rel} is a symbolic link to {}, outside the bundle; it was not read",
                                        target.display()
                                    ),
                                )
                                .at(Location::file(&full))
                                .hint("bundle images hold plain files: copy the file into the bundle"),
                            );
                            continue;
                        }
                        Err(e) => {
                            findings.push(
                                Finding::error(
                                    "bundle-unreadable",
                                    format!("{rel} is a broken symbolic link: {e}"),
                                )
                                .at(Location::file(&full)),
                            );
                            continue;
                        }
                    }
                }
                // A regular file (the directory entry says so) needs no stat
                // here: read_capped checks its type and size on the open file.
                if !ftype.is_file() {
                    let meta = match fs::metadata(&full) {
                        Ok(m) => m,
                        Err(e) => {
                            findings.push(
                                Finding::error("io-error", format!("cannot read {rel}: {e}"))
                                    .at(Location::file(&full)),
                            );
                            continue;
                        }
                    };
                    if meta.is_dir() {
                        // opm reads only the top level of manifests/.
                        findings.push(
                            Finding::warning(
                                "manifest-subdirectory-ignored",
                                format!("{rel}/ is a directory; opm reads only files directly in {sub}/, so it is ignored"),
                            )
                            .at(Location::file(&full)),
                        );
                        continue;
                    }
                    if !meta.is_file() {
                        findings.push(not_regular(&rel, &meta).at(Location::file(&full)));
                        continue;
                    }
                }
                let content = read_capped(&full);
                files.push(RawFile {
                    rel_path: rel,
                    content: content.map_err(|f| f.at(Location::file(&full))),
                });
            }
        }
        if !dir.join("manifests").is_dir() {
            findings.push(
                Finding::error(
                    "bundle-no-manifests-dir",
                    "the bundle has no manifests/ directory",
                )
                .at(Location::file(dir))
                .hint("a registry+v1 bundle holds its objects in manifests/ and its annotations in metadata/annotations.yaml"),
            );
        }
        let mut bundle = Bundle::from_files(dir, files);
        findings.append(&mut bundle.load_findings);
        bundle.load_findings = findings;
        Ok(bundle)
    }

    /// Builds a bundle from files already read (a directory, an image layer).
    /// `dir` is what to call the bundle in messages.
    pub fn from_files(dir: &Path, files: Vec<RawFile>) -> Bundle {
        let mut bundle = Bundle {
            dir: dir.to_path_buf(),
            manifests: Vec::new(),
            annotations: None,
            dependencies: None,
            properties: None,
            other_metadata: Vec::new(),
            load_findings: Vec::new(),
            manifest_files: Vec::new(),
            size: 0,
        };
        let mut files = files;
        files.sort_by(|a, b| a.rel_path.cmp(&b.rel_path));
        for raw in files {
            let display = dir.join(&raw.rel_path);
            let bytes = match raw.content {
                Ok(b) => b,
                Err(f) => {
                    bundle.load_findings.push(f);
                    continue;
                }
            };
            bundle.size += bytes.len() as u64;
            let text = match String::from_utf8(bytes) {
                Ok(t) => t,
                Err(e) => {
                    let span = yaml::position_of_byte(e.as_bytes(), e.utf8_error().valid_up_to());
                    bundle.load_findings.push(
                        Finding::error(
                            "file-not-utf8",
                            format!("{} is not valid UTF-8", raw.rel_path),
                        )
                        .at(Location::new(&display, span, None))
                        .hint("Kubernetes manifests must be UTF-8 text"),
                    );
                    continue;
                }
            };
            let file = Arc::new(SourceFile {
                rel_path: raw.rel_path.clone(),
                display_path: display,
                text,
            });
            if raw.rel_path.starts_with("manifests/") {
                bundle.add_manifest_file(file);
            } else if raw.rel_path.starts_with("metadata/") {
                bundle.add_metadata_file(file);
            }
        }
        bundle
    }

    fn parse_file(&mut self, file: &Arc<SourceFile>) -> Option<Vec<yaml::Document>> {
        if file.text.trim().is_empty() {
            self.load_findings.push(
                Finding::warning("file-empty", format!("{} is empty", file.rel_path))
                    .at(Location::file(&file.display_path)),
            );
            return None;
        }
        match yaml::parse_documents(&file.text) {
            Ok(docs) => {
                for doc in &docs {
                    for dup in &doc.duplicate_keys {
                        self.load_findings.push(
                            Finding::warning(
                                "yaml-duplicate-key",
                                format!(
                                    "key `{}` appears twice in one mapping; the value at line {} is silently dropped",
                                    dup.key, dup.first.line
                                ),
                            )
                            .at(file.location(dup.second))
                            .related(file.location(dup.first))
                            .hint("remove one of the two keys"),
                        );
                    }
                }
                Some(docs)
            }
            Err(mut e) => {
                if e.message.contains("tab") {
                    // The parser names the scalar it was reading; point at the tab itself.
                    if let Some(span) = first_tab_from(&file.text, e.span.line) {
                        e.span = span;
                    }
                }
                let hint = if file.text.contains('\t') && e.message.contains("tab") {
                    "YAML forbids tabs for indentation; use spaces"
                } else {
                    "opm and operator-sdk would report this file as missing or unparsable"
                };
                self.load_findings.push(
                    Finding::error(
                        "yaml-syntax",
                        format!("{} is not valid YAML: {}", file.rel_path, e.message),
                    )
                    .at(file.location(e.span))
                    .hint(hint),
                );
                None
            }
        }
    }

    fn add_manifest_file(&mut self, file: Arc<SourceFile>) {
        let Some(docs) = self.parse_file(&file) else {
            self.manifest_files.push((file, 0));
            return;
        };
        let mut count = 0;
        for (i, doc) in docs.into_iter().enumerate() {
            if matches!(doc.root.value, yaml::Value::Null) {
                continue;
            }
            if !matches!(doc.root.value, yaml::Value::Map(_)) {
                self.load_findings.push(
                    Finding::error(
                        "manifest-not-an-object",
                        format!(
                            "document {} of {} is a {}, not a Kubernetes object",
                            i + 1,
                            file.rel_path,
                            doc.root.type_name()
                        ),
                    )
                    .at(file.location(doc.root.span)),
                );
                continue;
            }
            let text_of = |n: Option<&Node>| n.and_then(Node::as_str).unwrap_or("").to_string();
            let root = &doc.root;
            self.manifests.push(Manifest {
                file: file.clone(),
                doc_index: i,
                kind: text_of(root.get("kind")),
                api_version: text_of(root.get("apiVersion")),
                name: text_of(root.get("metadata").and_then(|m| m.get("name"))),
                root: doc.root,
                json: std::sync::OnceLock::new(),
            });
            count += 1;
        }
        self.manifest_files.push((file, count));
    }

    fn add_metadata_file(&mut self, file: Arc<SourceFile>) {
        let lower = file.rel_path.to_ascii_lowercase();
        if !(lower.ends_with(".yaml") || lower.ends_with(".yml") || lower.ends_with(".json")) {
            self.other_metadata.push(file.rel_path.clone());
            return;
        }
        let Some(mut docs) = self.parse_file(&file) else {
            return;
        };
        if docs.is_empty() {
            return;
        }
        let root = docs.swap_remove(0).root;
        let md = MetadataFile {
            file: file.clone(),
            root,
        };
        let base = file.rel_path.trim_start_matches("metadata/");
        match base {
            "annotations.yaml" | "annotations.yml" => self.set_annotations(md),
            "dependencies.yaml" | "dependencies.yml" | "dependencies.json" => {
                self.dependencies = Some(md)
            }
            "properties.yaml" | "properties.yml" | "properties.json" => self.properties = Some(md),
            _ => {
                // operator-registry takes annotations from any metadata file
                // with a top-level `annotations` key when annotations.yaml is absent.
                if self.annotations.is_none() && md.root.get("annotations").is_some() {
                    self.set_annotations(md);
                } else {
                    self.other_metadata.push(file.rel_path.clone());
                }
            }
        }
    }

    fn set_annotations(&mut self, md: MetadataFile) {
        let mut values = BTreeMap::new();
        match md.root.get("annotations").map(|n| &n.value) {
            Some(yaml::Value::Map(entries)) => {
                for e in entries {
                    let v = match &e.value.value {
                        yaml::Value::Str(s) => s.clone(),
                        yaml::Value::Null => String::new(),
                        _ => e
                            .value
                            .raw()
                            .map(String::from)
                            .unwrap_or_else(|| e.value.to_json().to_string()),
                    };
                    values.insert(e.key.clone(), v);
                }
            }
            _ => self.load_findings.push(
                Finding::error(
                    "annotations-missing",
                    format!("{} has no `annotations` mapping", md.file.rel_path),
                )
                .at(md.file.location(md.root.span))
                .hint("the file must look like `annotations:` followed by `key: value` lines"),
            ),
        }
        self.annotations = Some(Annotations {
            source: Some(md),
            values,
        });
    }

    /// Uses image labels as annotations (a bundle image without
    /// `metadata/annotations.yaml`, or whose labels take precedence).
    pub fn set_label_annotations(&mut self, labels: &BTreeMap<String, String>) {
        let values: BTreeMap<String, String> = labels
            .iter()
            .filter(|(k, _)| k.starts_with("operators.operatorframework.io."))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if self.annotations.is_none() && !values.is_empty() {
            self.annotations = Some(Annotations {
                source: None,
                values,
            });
        }
    }

    /// The ClusterServiceVersion manifests (a valid bundle has exactly one).
    pub fn csvs(&self) -> impl Iterator<Item = &Manifest> {
        self.manifests.iter().filter(|m| m.is_csv())
    }

    /// The first ClusterServiceVersion, if any.
    pub fn csv_manifest(&self) -> Option<&Manifest> {
        self.csvs().next()
    }

    /// The first error met while reading the bundle (a file that is not
    /// valid YAML, say) as `FILE:LINE:COLUMN: message`, or `FILE: message`
    /// when it has no line. A CSV that does not parse is reported as this,
    /// not as a missing CSV.
    pub fn first_load_error(&self) -> Option<String> {
        let f = self
            .load_findings
            .iter()
            .find(|f| f.level == crate::diag::Level::Error)?;
        // "manifests/x.yaml is not valid YAML: ..." names the file the
        // location names already.
        let said_once = |file: &Path| -> String {
            match f.message.split_once(' ') {
                Some((first, rest)) if file.ends_with(first) => {
                    rest.strip_prefix("is ").unwrap_or(rest).to_string()
                }
                _ => f.message.clone(),
            }
        };
        Some(match &f.location {
            Some(l) if l.line > 0 && l.column > 0 => {
                format!(
                    "{}:{}:{}: {}",
                    l.file.display(),
                    l.line,
                    l.column,
                    said_once(&l.file)
                )
            }
            Some(l) if l.line > 0 => {
                format!("{}:{}: {}", l.file.display(), l.line, said_once(&l.file))
            }
            Some(l) => format!("{}: {}", l.file.display(), said_once(&l.file)),
            None => format!("{}: {}", self.dir.display(), f.message),
        })
    }

    /// The typed view of the CSV, or why it does not decode.
    pub fn csv(&self) -> Option<Result<Csv, csv::DecodeError>> {
        self.csv_manifest().map(|m| Csv::from_node(&m.root))
    }

    /// The CustomResourceDefinitions.
    pub fn crds(&self) -> impl Iterator<Item = &Manifest> {
        self.manifests.iter().filter(|m| m.is_crd())
    }

    /// The package name from the annotations.
    pub fn package(&self) -> Option<&str> {
        self.annotations.as_ref().and_then(|a| a.package())
    }

    /// The channels from the annotations.
    pub fn channels(&self) -> Vec<String> {
        self.annotations
            .as_ref()
            .map(|a| a.channels())
            .unwrap_or_default()
    }

    /// The default channel from the annotations.
    pub fn default_channel(&self) -> Option<&str> {
        self.annotations.as_ref().and_then(|a| a.default_channel())
    }

    /// The properties of `metadata/properties.yaml` as `(type, value)` JSON.
    pub fn metadata_properties(&self) -> Vec<(String, serde_json::Value)> {
        type_value_list(self.properties.as_ref(), "properties")
    }

    /// The dependencies of `metadata/dependencies.yaml` as `(type, value)` JSON.
    pub fn metadata_dependencies(&self) -> Vec<(String, serde_json::Value)> {
        type_value_list(self.dependencies.as_ref(), "dependencies")
    }
}

fn type_value_list(md: Option<&MetadataFile>, key: &str) -> Vec<(String, serde_json::Value)> {
    let Some(md) = md else { return Vec::new() };
    let json = md.root.to_json();
    json.get(key)
        .and_then(|v| v.as_array())
        .map(|items| {
            items
                .iter()
                .map(|i| {
                    (
                        i.get("type")
                            .and_then(|t| t.as_str())
                            .unwrap_or("")
                            .to_string(),
                        i.get("value").cloned().unwrap_or(serde_json::Value::Null),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The first tab on or after 1-based `line`, as a one-character span.
fn first_tab_from(text: &str, line: u32) -> Option<Span> {
    text.lines()
        .enumerate()
        .skip((line as usize).saturating_sub(1))
        .find_map(|(i, l)| {
            l.chars().position(|c| c == '\t').map(|col| Span {
                line: i as u32 + 1,
                column: col as u32 + 1,
                end_line: i as u32 + 1,
                end_column: col as u32 + 2,
            })
        })
}

/// The finding for a FIFO, socket or device where a file was expected.
fn not_regular(rel: &str, meta: &fs::Metadata) -> Finding {
    #[cfg(unix)]
    let kind = {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            "a named pipe (FIFO)"
        } else if t.is_socket() {
            "a socket"
        } else if t.is_block_device() || t.is_char_device() {
            "a device"
        } else {
            "not a regular file"
        }
    };
    #[cfg(not(unix))]
    let kind = {
        let _ = meta;
        "not a regular file"
    };
    Finding::error(
        "file-not-regular",
        format!("{rel} is {kind}; only regular files are read"),
    )
    .hint("a bundle holds plain files; reading a pipe or device could block or never end")
}

/// Reads a file, refusing files over [`MAX_FILE_SIZE`] before reading them.
#[allow(clippy::result_large_err)] // a Finding is what callers report
fn read_capped(path: &Path) -> Result<Vec<u8>, Finding> {
    // O_NONBLOCK: a FIFO swapped in after the directory was listed must not
    // block the open; the fstat below then refuses it.
    let mut opts = fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let f = opts
        .open(path)
        .map_err(|e| Finding::error("io-error", format!("cannot read {}: {e}", path.display())))?;
    let meta = f
        .metadata()
        .map_err(|e| Finding::error("io-error", format!("cannot read {}: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(not_regular(&path.display().to_string(), &meta));
    }
    let len = meta.len();
    if len > MAX_FILE_SIZE {
        return Err(Finding::error(
            "file-too-large",
            format!(
                "{} is {} MiB, over the {} MiB limit for one manifest; it was not read",
                path.display(),
                len / (1024 * 1024),
                MAX_FILE_SIZE / (1024 * 1024)
            ),
        ));
    }
    let mut buf = Vec::with_capacity(len as usize);
    // The file may grow between stat and read: cap the read as well.
    f.take(MAX_FILE_SIZE + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Finding::error("io-error", format!("cannot read {}: {e}", path.display())))?;
    if buf.len() as u64 > MAX_FILE_SIZE {
        return Err(Finding::error(
            "file-too-large",
            format!(
                "{} grew past the size limit while being read",
                path.display()
            ),
        ));
    }
    Ok(buf)
}

/// Whether a relative path stays inside its root (no `..`, not absolute).
pub fn is_contained(rel: &Path) -> bool {
    rel.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(rel: &str, text: &str) -> RawFile {
        RawFile {
            rel_path: rel.into(),
            content: Ok(text.as_bytes().to_vec()),
        }
    }

    #[test]
    fn loads_files_into_model() {
        let b = Bundle::from_files(
            Path::new("b"),
            vec![
                raw(
                    "manifests/csv.yaml",
                    "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: op.v1.0.0\nspec:\n  version: 1.0.0\n",
                ),
                raw("manifests/two.yaml", "kind: A\n---\nkind: B\n"),
                raw(
                    "metadata/annotations.yaml",
                    "annotations:\n  operators.operatorframework.io.bundle.package.v1: op\n  operators.operatorframework.io.bundle.channels.v1: alpha, beta\n",
                ),
            ],
        );
        assert!(b.load_findings.is_empty(), "{:?}", b.load_findings);
        assert_eq!(b.manifests.len(), 3);
        assert_eq!(b.package(), Some("op"));
        assert_eq!(b.channels(), vec!["alpha", "beta"]);
        let csv = b.csv().expect("has csv").expect("decodes");
        assert_eq!(csv.spec.version.as_deref(), Some("1.0.0"));
        let loc = b
            .csv_manifest()
            .expect("csv")
            .location(&crate::path!["spec", "version"]);
        assert_eq!(loc.line, 6);
        assert_eq!(loc.file, Path::new("b/manifests/csv.yaml"));
    }

    #[test]
    fn bad_files_become_findings() {
        let b = Bundle::from_files(
            Path::new("b"),
            vec![
                raw("manifests/bad.yaml", "a: [1\n"),
                raw("manifests/empty.yaml", ""),
                RawFile {
                    rel_path: "manifests/bin.yaml".into(),
                    content: Ok(vec![b'a', b':', 0xff]),
                },
            ],
        );
        let rules: Vec<_> = b.load_findings.iter().map(|f| f.rule.as_str()).collect();
        assert!(rules.contains(&"yaml-syntax"));
        assert!(rules.contains(&"file-empty"));
        assert!(rules.contains(&"file-not-utf8"));
    }
}
