//! opm's bundle commands that have no native twin: `opm alpha bundle
//! generate` (pkg/lib/bundle/generate.go at opm v1.73.0), which writes a
//! manifests directory's `metadata/annotations.yaml` and a
//! `bundle.Dockerfile`, and the verdict of opm's bundle image validator
//! (pkg/lib/bundle/validate.go) on an unpacked bundle.

use std::path::{Path, PathBuf};

use super::Error;

/// The annotation keys of a bundle (pkg/lib/bundle/constants.go), in the
/// order opm's `GenerateDockerfile` writes their labels.
pub const MEDIATYPE_LABEL: &str = "operators.operatorframework.io.bundle.mediatype.v1";
/// The manifests directory label.
pub const MANIFESTS_LABEL: &str = "operators.operatorframework.io.bundle.manifests.v1";
/// The metadata directory label.
pub const METADATA_LABEL: &str = "operators.operatorframework.io.bundle.metadata.v1";
/// The package label.
pub const PACKAGE_LABEL: &str = "operators.operatorframework.io.bundle.package.v1";
/// The channels label.
pub const CHANNELS_LABEL: &str = "operators.operatorframework.io.bundle.channels.v1";
/// The default channel label.
pub const CHANNEL_DEFAULT_LABEL: &str = "operators.operatorframework.io.bundle.channel.default.v1";

/// What `opm alpha bundle generate` is given.
#[derive(Clone, Debug, Default)]
pub struct GenerateOptions {
    /// The directory holding the bundle's manifests (`-d`), relative to
    /// `work_dir` or absolute.
    pub directory: PathBuf,
    /// The package (`-p`); read from the package manifest beside the
    /// bundle directories when `None` or empty.
    pub package: Option<String>,
    /// The channels, comma-separated (`-c`); read as the package is.
    pub channels: Option<String>,
    /// The default channel (`-e`).
    pub default_channel: Option<String>,
    /// Where the manifests are copied to and the metadata written
    /// (`-u/--output-dir`), instead of beside `directory`.
    pub output_dir: Option<PathBuf>,
    /// The `FROM` of `bundle.Dockerfile` (`--base-image`; default
    /// `scratch`).
    pub base_image: Option<String>,
    /// Replace an existing `annotations.yaml`, `bundle.Dockerfile` and
    /// copied manifests; without it an existing `annotations.yaml` must
    /// agree (opm's ValidateAnnotations).
    pub overwrite: bool,
    /// The directory `bundle.Dockerfile` is written in and relative paths
    /// start from (opm: the current directory).
    pub work_dir: PathBuf,
}

/// What [`generate`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    /// The bundle directory: the parent of `manifests/` and `metadata/`.
    pub root: PathBuf,
    /// The `bundle.Dockerfile`.
    pub dockerfile: PathBuf,
    /// The `FROM` of the Dockerfile.
    pub base_image: String,
    /// The annotations (the image's labels), in the Dockerfile's order.
    pub labels: Vec<(String, String)>,
}

/// Why opm's bundle generation refused a directory. The text is opm's.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GenerateError {
    /// The manifests directory does not exist.
    #[error("stat {}: no such file or directory", .0.display())]
    Missing(PathBuf),
    /// The manifests directory has no file.
    #[error("The directory {} contains no yaml files", .0.display())]
    NoFiles(PathBuf),
    /// A file of the manifests directory could not be read.
    #[error("Unable to read file {} in bundle", .0.display())]
    Unreadable(PathBuf),
    /// Package or channels were not given and could not be read from a
    /// package manifest.
    #[error("please manually input channels and packageName, error interpreting bundle from directory {}, {reason}", dir.display())]
    Interpret {
        /// The manifests directory.
        dir: PathBuf,
        /// Why.
        reason: InferError,
    },
    /// The package manifest puts the bundle in no channel.
    #[error("error interpreting channels, please manually input channels instead")]
    NoChannels,
    /// An existing `annotations.yaml` disagrees (without overwrite).
    #[error("[{}]", .0.join(", "))]
    Annotations(Vec<String>),
}

/// Why the package and channels of a bundle could not be read from its
/// package manifest (opm's `bundleDirInterpreter`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InferError {
    /// The bundle's own CSV.
    #[error("error loading CSV from bundle directory, {0}")]
    BundleCsv(CsvError),
    /// The package directory could not be read.
    #[error("error reading from {} directory", .0.display())]
    PackageDir(PathBuf),
    /// The CSV of another bundle of the package.
    #[error("error getting CSVs from bundles in the package directory, {0}")]
    PackageCsvs(CsvError),
    /// No package manifest beside the bundle directories.
    #[error("error parsing package.yaml file in the package root directory, valid PackageManifest YAML file not found in {}", .0.display())]
    NoPackageManifest(PathBuf),
}

/// Why a bundle directory's CSV could not be read (opm's
/// `ReadCSVFromBundleDirectory`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CsvError {
    /// The directory could not be read.
    #[error("error reading bundle directory {}", .0.display())]
    ReadDir(PathBuf),
    /// Two files hold a CSV.
    #[error("more than one ClusterServiceVersion is found in bundle")]
    Several,
    /// No file holds one.
    #[error("no ClusterServiceVersion object found in {}", .0.display())]
    NotFound(PathBuf),
}

impl From<GenerateError> for Error {
    fn from(e: GenerateError) -> Error {
        Error::Generate(e)
    }
}

/// `opm alpha bundle generate` (`GenerateFunc`): writes
/// `metadata/annotations.yaml` beside the manifests directory (or under
/// `output_dir`, with the manifests copied there) and `bundle.Dockerfile`
/// in `work_dir`, text for text as opm writes them.
pub fn generate(opts: &GenerateOptions) -> Result<Generated, Error> {
    let given = |v: &Option<String>| v.clone().filter(|v| !v.is_empty());
    let base_image = opts
        .base_image
        .clone()
        .unwrap_or_else(|| "scratch".to_string());
    let cwd = clean(&opts.work_dir);
    let directory = clean(&cwd.join(&opts.directory));
    let output_dir = opts
        .output_dir
        .as_ref()
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| clean(&cwd.join(d)));
    if !directory.exists() {
        return Err(GenerateError::Missing(directory).into());
    }
    let media_type = media_type(&directory)?;
    let (mut package, mut channels, mut default_channel) = (
        given(&opts.package),
        given(&opts.channels),
        given(&opts.default_channel),
    );
    if package.is_none() || channels.is_none() {
        // opm reads them from the package manifest beside the bundle.
        let inferred =
            infer_from_package_dir(&directory).map_err(|reason| GenerateError::Interpret {
                dir: directory.clone(),
                reason,
            })?;
        if channels.is_none() {
            if inferred.channels.is_empty() {
                return Err(GenerateError::NoChannels.into());
            }
            channels = Some(inferred.channels.join(","));
        }
        if package.is_none() {
            package = Some(inferred.package);
        }
        if default_channel.is_none() {
            default_channel = Some(inferred.default_channel);
        }
    }
    let package = package.unwrap_or_default();
    let channels = channels.unwrap_or_default();
    let default_channel = default_channel.unwrap_or_default();
    // GenerateAnnotations: yaml.v3 with 2-space indent, keys sorted.
    let mut annotations: Vec<(&str, &str)> = vec![
        (MEDIATYPE_LABEL, media_type),
        (MANIFESTS_LABEL, "manifests/"),
        (METADATA_LABEL, "metadata/"),
        (PACKAGE_LABEL, &package),
        (CHANNELS_LABEL, &channels),
    ];
    if !default_channel.is_empty() {
        annotations.push((CHANNEL_DEFAULT_LABEL, &default_channel));
    }
    let mut sorted = annotations.clone();
    sorted.sort();
    let mut yaml = String::from("annotations:\n");
    for (k, v) in &sorted {
        yaml.push_str(&format!("  {k}: {}\n", yaml_scalar(v)));
    }
    // CopyYamlOutput: the metadata directory beside the manifests one, or,
    // with --output-dir, both under it (the manifests copied there).
    let (parent, manifests) = match &output_dir {
        None => (
            directory.parent().unwrap_or(&directory).to_path_buf(),
            directory.clone(),
        ),
        Some(out) => {
            let manifests = out.join("manifests");
            copy_manifest_dir(&directory, &manifests, opts.overwrite)?;
            (out.clone(), manifests)
        }
    };
    let metadata = parent.join("metadata");
    std::fs::create_dir_all(&metadata)
        .map_err(|e| Error::io(format!("creating {}", metadata.display()), e))?;
    let annotations_file = metadata.join("annotations.yaml");
    if opts.overwrite || !annotations_file.exists() {
        std::fs::write(&annotations_file, yaml)
            .map_err(|e| Error::io(format!("writing {}", annotations_file.display()), e))?;
    } else {
        check_annotations(&annotations_file, &sorted)?;
    }
    // GenerateDockerfile.
    let mut dockerfile = format!("FROM {base_image}\n\n");
    for (k, v) in &annotations {
        dockerfile.push_str(&format!("LABEL {k}={v}\n"));
    }
    if !default_channel.is_empty() {
        dockerfile.push('\n');
    }
    dockerfile.push_str(&format!(
        "COPY {} /manifests/\nCOPY {} /metadata/\n",
        relative(&cwd, &manifests),
        relative(&cwd, &metadata)
    ));
    let out = cwd.join("bundle.Dockerfile");
    if opts.overwrite || !out.exists() {
        std::fs::write(&out, dockerfile)
            .map_err(|e| Error::io(format!("writing {}", out.display()), e))?;
    }
    Ok(Generated {
        root: parent,
        dockerfile: out,
        base_image,
        labels: annotations
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    })
}

/// opm's `ValidateAnnotations`: each expected annotation, with its value,
/// in the existing file.
fn check_annotations(file: &Path, expected: &[(&str, &str)]) -> Result<(), Error> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| Error::io(format!("reading {}", file.display()), e))?;
    let existing: yaml_serde::Value = yaml_serde::from_str(&text)
        .map_err(|e| Error::bundle(e.to_string()).context(format!("parsing {}", file.display())))?;
    let mut errs = Vec::new();
    for (k, v) in expected {
        match existing["annotations"][*k].as_str() {
            None => errs.push(format!("Missing field: {k}")),
            Some(have) if have != *v => errs.push(format!(
                "Expect field {k:?} to have value {v:?} instead of {have:?}"
            )),
            Some(_) => {}
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(GenerateError::Annotations(errs).into())
    }
}

/// opm's `GetMediaType`: helm for a chart directory, registry+v1 when a
/// file of the directory (not its subdirectories) is a
/// ClusterServiceVersion, else plain; no file at all is an error.
fn media_type(dir: &Path) -> Result<&'static str, Error> {
    let mut files = Vec::new();
    let read_err = |e| Error::io(format!("reading {}", dir.display()), e);
    for entry in std::fs::read_dir(dir).map_err(read_err)? {
        let entry = entry.map_err(read_err)?;
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            files.push(entry.path());
        }
    }
    if files.is_empty() {
        return Err(GenerateError::NoFiles(dir.to_path_buf()).into());
    }
    if dir.join("Chart.yaml").is_file() {
        return Ok("helm");
    }
    for f in &files {
        let text = std::fs::read_to_string(f)
            .map_err(|_| Error::from(GenerateError::Unreadable(f.clone())))?;
        if first_document(&text).is_some_and(|v| v["kind"] == "ClusterServiceVersion") {
            return Ok("registry+v1");
        }
    }
    Ok("plain")
}

/// A string as yaml.v3 writes it: plain when it reads back as the same
/// string, else double-quoted.
fn yaml_scalar(v: &str) -> String {
    let plain = !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/+,-".contains(c))
        && v.starts_with(|c: char| c.is_ascii_alphabetic())
        && !matches!(
            v.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n"
        );
    if plain {
        v.to_string()
    } else {
        serde_json::to_string(v).unwrap_or_else(|_| format!("{v:?}"))
    }
}

/// What opm's `bundleDirInterpreter` reads from a package-manifest layout
/// (`PKG/x.package.yaml` beside one directory per bundle).
struct InferredBundle {
    package: String,
    channels: Vec<String>,
    default_channel: String,
}

/// The first YAML or JSON document of a text, as opm's decoders read one
/// (`YAMLOrJSONDecoder.Decode` once).
fn first_document(text: &str) -> Option<yaml_serde::Value> {
    let doc = yaml_serde::Deserializer::from_str(text).next()?;
    serde::Deserialize::deserialize(doc).ok()
}

/// [`first_document`] of a file; `None` when it cannot be read either.
fn first_document_of(path: &Path) -> Option<yaml_serde::Value> {
    first_document(&std::fs::read_to_string(path).ok()?)
}

/// A bundle directory's CSV (`ReadCSVFromBundleDirectory`): the one file
/// of the directory whose first document is a ClusterServiceVersion;
/// (name, replaces and skips).
fn read_csv(dir: &Path) -> Result<(String, Vec<String>), CsvError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|_| CsvError::ReadDir(dir.to_path_buf()))?
        .filter_map(Result::ok)
        .filter(|e| !e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    files.sort();
    let mut found = None;
    for f in files {
        let Some(doc) = first_document_of(&f) else {
            continue;
        };
        if doc["kind"].as_str() != Some("ClusterServiceVersion") {
            continue;
        }
        if found.is_some() {
            return Err(CsvError::Several);
        }
        let name = doc["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let mut edges: Vec<String> = doc["spec"]["skips"]
            .as_sequence()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        if let Some(r) = doc["spec"]["replaces"].as_str().filter(|r| !r.is_empty()) {
            edges.push(r.to_string());
        }
        found = Some((name, edges));
    }
    found.ok_or_else(|| CsvError::NotFound(dir.to_path_buf()))
}

/// opm's `NewBundleDirInterperter`: the bundle's CSV, the package manifest
/// of the directory above, and the channels whose graph (from each
/// channel's `currentCSV` through every `replaces` and `skips` of the
/// package's bundle directories) holds the bundle, sorted.
fn infer_from_package_dir(bundle_dir: &Path) -> Result<InferredBundle, InferError> {
    let (csv_name, _) = read_csv(bundle_dir).map_err(InferError::BundleCsv)?;
    let pkg_dir = bundle_dir.join("..");
    let mut entries: Vec<(PathBuf, bool)> = std::fs::read_dir(&pkg_dir)
        .map_err(|_| InferError::PackageDir(pkg_dir.clone()))?
        .filter_map(Result::ok)
        .map(|e| (e.path(), e.file_type().is_ok_and(|t| t.is_dir())))
        .collect();
    entries.sort();
    let mut edges: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for (dir, _) in entries.iter().filter(|(_, is_dir)| *is_dir) {
        let (name, e) = read_csv(dir).map_err(InferError::PackageCsvs)?;
        edges.insert(name, e);
    }
    let manifest = entries
        .iter()
        .filter(|(_, is_dir)| !*is_dir)
        .filter_map(|(f, _)| first_document_of(f))
        .find(|d| d["packageName"].as_str().is_some_and(|n| !n.is_empty()))
        .ok_or_else(|| InferError::NoPackageManifest(pkg_dir.clone()))?;
    let mut channels = Vec::new();
    for ch in manifest["channels"].as_sequence().into_iter().flatten() {
        let (Some(name), Some(head)) = (ch["name"].as_str(), ch["currentCSV"].as_str()) else {
            continue;
        };
        let mut seen = std::collections::BTreeSet::new();
        let mut todo = vec![head.to_string()];
        while let Some(n) = todo.pop() {
            if seen.insert(n.clone()) {
                todo.extend(edges.get(&n).into_iter().flatten().cloned());
            }
        }
        if seen.contains(&csv_name) {
            channels.push(name.to_string());
        }
    }
    channels.sort();
    Ok(InferredBundle {
        package: manifest["packageName"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        channels,
        default_channel: manifest["defaultChannel"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    })
}

/// opm's `copyManifestDir`: the files of `from` into `to` (made if
/// missing; an existing file kept unless `overwrite`), and, as opm does,
/// each subdirectory's files into `to/<from's name>`.
fn copy_manifest_dir(from: &Path, to: &Path, overwrite: bool) -> Result<(), Error> {
    std::fs::create_dir_all(to).map_err(|e| Error::io(format!("creating {}", to.display()), e))?;
    let mut entries: Vec<(PathBuf, bool)> = std::fs::read_dir(from)
        .map_err(|e| Error::io(format!("reading {}", from.display()), e))?
        .filter_map(Result::ok)
        .map(|e| (e.path(), e.file_type().is_ok_and(|t| t.is_dir())))
        .collect();
    entries.sort();
    for (path, is_dir) in entries {
        let Some(name) = path.file_name() else {
            continue;
        };
        if is_dir {
            let nested = to.join(from.file_name().unwrap_or_default());
            copy_manifest_dir(&path, &nested, overwrite)?;
            continue;
        }
        let dest = to.join(name);
        if dest.exists() && !overwrite {
            continue;
        }
        std::fs::copy(&path, &dest).map_err(|e| {
            Error::io(
                format!("copying {} to {}", path.display(), dest.display()),
                e,
            )
        })?;
    }
    Ok(())
}

/// Go's `filepath.Clean` of an absolute path: `.` and `..` resolved
/// lexically.
fn clean(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Go's `filepath.Rel(base, target)` of two clean absolute paths, with
/// forward slashes.
fn relative(base: &Path, target: &Path) -> String {
    let b: Vec<_> = base.components().collect();
    let t: Vec<_> = target.components().collect();
    let common = b.iter().zip(&t).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = std::iter::repeat_n("..".to_string(), b.len() - common).collect();
    parts.extend(
        t[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

/// Rules of the native validator that opm's image validator does not run
/// as errors (pkg/lib/bundle/validate.go at v1.73.0 runs
/// operator-registry's own bundle validator, pkg/lib/validation, not
/// operator-framework/api's): a CRD the CSV does not own is a warning there
/// (validate_test.go, "extra crd": no error), and duplicate CRDs, service
/// account conflicts and the bundle size are not checked.
const NOT_IN_OPM_IMAGE_VALIDATOR: &[&str] = &[
    "bundle-crd-not-in-csv",
    "bundle-crd-duplicate",
    "bundle-service-account-conflict",
    "bundle-size-exceeded",
];

/// Whether opm's `ValidateBundleFormat`/`ValidateBundleContent` (with the
/// optional validators `bundle_objects` says) fail on `f`: errors of the
/// reference and loading rules, operator-framework/api's object rules
/// with `bundle-objects`, and the optional suites run; never the blind
/// spots (rules opm does not have).
fn fails_opm(f: &crate::diag::Finding, bundle_objects: bool) -> bool {
    use crate::validate::rules::{self, Origin};
    if f.level != crate::diag::Level::Error || NOT_IN_OPM_IMAGE_VALIDATOR.contains(&f.rule.as_str())
    {
        return false;
    }
    match rules::rule(&f.rule).map(|r| r.origin) {
        Some(Origin::BlindSpot) => false,
        Some(Origin::NotSdkDefault) => bundle_objects,
        // The reference and loading rules, and the optional suites asked for.
        _ => true,
    }
}

/// Whether a rule is one of opm's `ValidateBundleFormat` (layout,
/// annotations, dependencies) rather than `ValidateBundleContent`.
fn is_format_rule(rule: &str) -> bool {
    rule.starts_with("annotation")
        || rule.starts_with("dependency")
        || matches!(rule, "bundle-no-manifests-dir" | "bundle-no-metadata-dir")
}

/// Which of opm's validation stages failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValidationStage {
    /// `ValidateBundleFormat`: layout, annotations, dependencies.
    Format,
    /// `ValidateBundleContent`: the manifests.
    Content,
}

impl ValidationStage {
    /// opm's word for the stage (`bundle format|content validation failed`).
    pub fn as_str(self) -> &'static str {
        match self {
            ValidationStage::Format => "format",
            ValidationStage::Content => "content",
        }
    }
}

/// opm's image validator failed a bundle: its `ValidationError` text.
#[derive(Debug, thiserror::Error)]
#[error("Bundle validation errors: {}", .errors.join(","))]
pub struct OpmValidationError {
    /// The stage that failed (opm stops after the format checks when they
    /// fail).
    pub stage: ValidationStage,
    /// Each failing finding: `FILE:LINE: message [rule]`, the file inside
    /// the bundle.
    pub errors: Vec<String>,
}

/// Validates the unpacked bundle `dir` as opm's image validator does with
/// `optional` (opm's `--optional-validators`: comma-separated,
/// `operatorhub` and `bundle-objects`; other names ignored, as opm's
/// `parseOptions` does): the native validator's findings, of which those
/// opm would report decide.
pub fn validate_as_opm(dir: &Path, optional: &str) -> Result<(), OpmValidationError> {
    let keys: Vec<&str> = optional.split(',').map(str::trim).collect();
    let mut options = crate::validate::Options::default();
    if keys.contains(&"operatorhub") {
        options.optional.push("operatorhub".to_string());
    }
    let bundle_objects = keys.contains(&"bundle-objects");
    let report = crate::validate::validate_dir(dir, &options);
    let failing: Vec<&crate::diag::Finding> = report
        .findings
        .iter()
        .filter(|f| fails_opm(f, bundle_objects))
        .collect();
    let format: Vec<_> = failing
        .iter()
        .copied()
        .filter(|f| is_format_rule(&f.rule))
        .collect();
    let (stage, shown) = if format.is_empty() {
        (ValidationStage::Content, failing)
    } else {
        (ValidationStage::Format, format)
    };
    if shown.is_empty() {
        return Ok(());
    }
    let errors = shown
        .iter()
        .map(|f| {
            let place = f.location.as_ref().map(|l| {
                let file = l.file.strip_prefix(dir).unwrap_or(&l.file).display();
                if l.line > 0 {
                    format!("{file}:{}: ", l.line)
                } else {
                    format!("{file}: ")
                }
            });
            format!("{}{} [{}]", place.unwrap_or_default(), f.message, f.rule)
        })
        .collect();
    Err(OpmValidationError { stage, errors })
}
