//! Building bundle and index images in memory, reproducibly.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

use super::blob::BlobBody;
use super::layer::{BuiltLayer, LayerBuilder};
use super::media::{self, Descriptor, Format, ImageIndex, ImageManifest, Platform};
use super::{rfc3339, ImageRef, OciError};
use crate::bundle::{self, Bundle, RawFile};

/// The label naming where an index image keeps its database.
pub const INDEX_DB_LABEL: &str = "operators.operatorframework.io.index.database.v1";
/// Where the database is in an index image.
pub const INDEX_DB_PATH: &str = "/database/index.db";
/// The entrypoint of an index image: the project's binary in its base image.
pub const INDEX_ENTRYPOINT: &[&str] = &["/bin/olm-catalog"];
/// The default command of an index image.
pub const INDEX_CMD: &[&str] = &["serve", "/database/index.db", "--address", "0.0.0.0"];
/// The gRPC port OLM probes.
pub const INDEX_PORT: &str = "50051/tcp";
/// The label naming where a catalog image keeps its file-based catalog.
pub const CONFIGS_LABEL: &str = "operators.operatorframework.io.index.configs.v1";
/// Where the file-based catalog is in a catalog image.
pub const CONFIGS_PATH: &str = "/configs";
/// The command of a catalog image on the project's own base.
pub const CATALOG_CMD: &[&str] = &["serve", "/configs", "--address", "0.0.0.0"];
/// The entrypoint `opm generate dockerfile` writes.
pub const OPM_ENTRYPOINT: &[&str] = &["/bin/opm"];
/// The command of a catalog image on an opm base: what `opm generate
/// dockerfile` writes plus `--cache-enforce-integrity=false`. Its Dockerfile
/// pre-builds the cache with `RUN opm serve --cache-only`; building without
/// running anything, the image has no cache, and opm (which enforces the
/// cache's integrity by default when `--cache-dir` is given) would refuse to
/// start. So opm builds the cache in /tmp/cache when the pod starts.
pub const OPM_CMD: &[&str] = &[
    "serve",
    "/configs",
    "--cache-dir=/tmp/cache",
    "--cache-enforce-integrity=false",
];

/// What a catalog-carrying layer adds to an image's config.
#[derive(Debug, Clone, Copy)]
pub struct Payload<'a> {
    /// The label naming where the catalog is, and its value.
    pub label: (&'a str, &'a str),
    /// The entrypoint.
    pub entrypoint: &'a [&'a str],
    /// The command.
    pub cmd: &'a [&'a str],
    /// The history entry of the layer.
    pub created_by: &'a str,
}

/// The payload of an index image (database, `/bin/olm-catalog serve`).
pub const INDEX_PAYLOAD: Payload<'static> = Payload {
    label: (INDEX_DB_LABEL, INDEX_DB_PATH),
    entrypoint: INDEX_ENTRYPOINT,
    cmd: INDEX_CMD,
    created_by: "olm-catalog index build: ADD index.db /database/index.db",
};

/// How images are built.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// Media type family.
    pub format: Format,
    /// Timestamp of the config's `created`, history and every tar entry.
    pub epoch: u64,
    /// Platform of images built without a base.
    pub platform: Platform,
}

impl BuildOptions {
    /// OCI format, `SOURCE_DATE_EPOCH` (or 0) and `linux/amd64`.
    pub fn from_env() -> Result<BuildOptions, OciError> {
        Ok(BuildOptions {
            format: Format::Oci,
            epoch: super::source_date_epoch()?,
            platform: Platform {
                architecture: "amd64".into(),
                os: "linux".into(),
                os_version: None,
                os_features: None,
                variant: None,
            },
        })
    }
}

/// Where the bytes of a blob come from.
#[derive(Debug, Clone)]
pub enum BlobSource {
    /// Built here.
    Data(BlobBody),
    /// A blob of an existing image (a base image layer), fetched or mounted
    /// only when the destination lacks it.
    Image(ImageRef),
}

/// A blob to store.
#[derive(Debug, Clone)]
pub struct BlobItem {
    /// Its descriptor.
    pub descriptor: Descriptor,
    /// Its bytes.
    pub source: BlobSource,
}

/// A built image (or index of images), ready to push: blobs, then child
/// manifests by digest, then the top manifest under the tag.
#[derive(Debug, Clone)]
pub struct ImageSet {
    /// Layers and configs, each digest once.
    pub blobs: Vec<BlobItem>,
    /// Manifests an index points to (empty for a single image).
    pub children: Vec<(Descriptor, Vec<u8>)>,
    /// The manifest or index the tag names.
    pub top: Descriptor,
    /// Its bytes.
    pub top_bytes: Vec<u8>,
}

impl ImageSet {
    fn push_blob(&mut self, item: BlobItem) {
        if !self
            .blobs
            .iter()
            .any(|b| b.descriptor.digest == item.descriptor.digest)
        {
            self.blobs.push(item);
        }
    }

    /// Total bytes of blobs and manifests.
    pub fn total_size(&self) -> u64 {
        self.blobs.iter().map(|b| b.descriptor.size).sum::<u64>()
            + self.children.iter().map(|c| c.0.size).sum::<u64>()
            + self.top.size
    }
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> OciError {
    OciError::Invalid {
        what: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// What [`bundle_layer`] read besides the layer: the files opm reads for
/// the labels and the CSV, so they need no second read.
struct BundleFiles {
    layer: LayerBuilder,
    /// Files directly in `metadata/`.
    metadata: Vec<RawFile>,
    /// Files directly in `manifests/` that mention a ClusterServiceVersion.
    csv_candidates: Vec<(String, Vec<u8>)>,
}

/// Reads the files of `manifests/` and `metadata/` (recursively; symbolic
/// links are followed only when they stay inside the bundle) into a layer.
fn bundle_layer(dir: &Path) -> Result<BundleFiles, OciError> {
    let root = std::fs::canonicalize(dir).map_err(|e| io_err(dir, e))?;
    let mut out = BundleFiles {
        layer: LayerBuilder::new(),
        metadata: Vec::new(),
        csv_candidates: Vec::new(),
    };
    for sub in ["manifests", "metadata"] {
        let top = dir.join(sub);
        if !top.is_dir() {
            continue;
        }
        out.layer.dir(sub);
        for entry in walkdir::WalkDir::new(&top).sort_by_file_name() {
            let entry = entry.map_err(|e| io_err(&top, e))?;
            let path = entry.path();
            let rel = path.strip_prefix(dir).map_err(|e| io_err(path, e))?;
            let rel_str = rel
                .to_str()
                .ok_or_else(|| io_err(path, "file name is not UTF-8"))?
                .replace(std::path::MAIN_SEPARATOR, "/");
            let ftype = entry.file_type();
            let target_meta = if ftype.is_symlink() {
                let target = std::fs::canonicalize(path)
                    .map_err(|e| io_err(path, format!("broken symbolic link: {e}")))?;
                if !target.starts_with(&root) {
                    return Err(io_err(
                        path,
                        format!(
                            "symbolic link to {}, outside the bundle; copy the file into the bundle",
                            target.display()
                        ),
                    ));
                }
                std::fs::metadata(&target).map_err(|e| io_err(path, e))?
            } else {
                entry.metadata().map_err(|e| io_err(path, e))?
            };
            if target_meta.is_dir() {
                if entry.depth() > 0 {
                    out.layer.dir(&rel_str);
                }
                continue;
            }
            if !target_meta.is_file() {
                return Err(io_err(path, "not a regular file"));
            }
            if target_meta.len() > bundle::MAX_FILE_SIZE {
                return Err(io_err(
                    path,
                    format!(
                        "{} bytes is over the {} byte limit for a bundle file",
                        target_meta.len(),
                        bundle::MAX_FILE_SIZE
                    ),
                ));
            }
            let data = std::fs::read(path).map_err(|e| io_err(path, e))?;
            // opm reads only the top level of manifests/ and metadata/.
            if entry.depth() == 1 {
                if sub == "metadata" {
                    out.metadata.push(RawFile {
                        rel_path: rel_str.clone(),
                        content: Ok(data.clone()),
                    });
                } else if contains(&data, b"ClusterServiceVersion") {
                    out.csv_candidates.push((rel_str.clone(), data.clone()));
                }
            }
            out.layer.file(&rel_str, data, 0o644);
        }
    }
    Ok(out)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn history(epoch: u64, created_by: &str) -> Value {
    json!({"created": rfc3339(epoch), "created_by": created_by})
}

fn single_image(
    set: &mut ImageSet,
    config: &Value,
    layers: Vec<Descriptor>,
    format: Format,
) -> (Descriptor, Vec<u8>) {
    let config_bytes = media::to_json_bytes(config);
    let config_desc = Descriptor::of(format.config(), &config_bytes);
    set.push_blob(BlobItem {
        descriptor: config_desc.clone(),
        source: BlobSource::Data(BlobBody::from(config_bytes)),
    });
    let manifest = ImageManifest {
        schema_version: 2,
        media_type: Some(format.manifest().to_string()),
        artifact_type: None,
        config: config_desc,
        layers,
        subject: None,
        annotations: None,
    };
    let bytes = media::to_json_bytes(&manifest);
    (Descriptor::of(format.manifest(), &bytes), bytes)
}

/// ` (message)` of the first error met while reading `bundle`, or nothing.
fn first_error(bundle: &Bundle) -> String {
    bundle
        .load_findings
        .iter()
        .find(|f| f.level == crate::diag::Level::Error)
        .map(|f| format!(" ({})", f.message))
        .unwrap_or_default()
}

/// A built bundle image.
#[derive(Debug, Clone)]
pub struct BundleImage {
    /// The image, ready to push.
    pub image: ImageSet,
    /// Its labels: the annotations of `metadata/annotations.yaml`.
    pub labels: BTreeMap<String, String>,
    dir: std::path::PathBuf,
    csv_candidates: Vec<(String, Vec<u8>)>,
}

impl BundleImage {
    /// The package name (`operators.operatorframework.io.bundle.package.v1`).
    pub fn package(&self) -> &str {
        self.labels
            .get(bundle::keys::PACKAGE)
            .map(String::as_str)
            .unwrap_or_default()
    }

    /// `spec.version` of the bundle's ClusterServiceVersion. Only the CSV
    /// file is parsed, and only when this is asked.
    pub fn csv_version(&self) -> Result<String, OciError> {
        let files = self
            .csv_candidates
            .iter()
            .map(|(rel_path, data)| RawFile {
                rel_path: rel_path.clone(),
                content: Ok(data.clone()),
            })
            .collect();
        let parsed = Bundle::from_files(&self.dir, files);
        let invalid = |reason: String| OciError::Invalid {
            what: self.dir.join("manifests").display().to_string(),
            reason,
        };
        let csv = parsed
            .csv_manifest()
            .ok_or_else(|| invalid(format!("no ClusterServiceVersion{}", first_error(&parsed))))?;
        csv.json()
            .pointer("/spec/version")
            .and_then(|v| v.as_str())
            .filter(|v| !v.is_empty())
            .map(String::from)
            .ok_or_else(|| {
                invalid(format!(
                    "the ClusterServiceVersion in {} has no spec.version",
                    csv.file.rel_path
                ))
            })
    }
}

/// Builds the bundle image of the bundle directory `dir`: one layer with
/// `manifests/` and `metadata/`, the annotations of
/// `metadata/annotations.yaml` as labels. Only the metadata files are
/// parsed (the manifests are copied as they are: validating them is
/// `bundle validate`'s job).
pub fn build_bundle_image(dir: &Path, opts: &BuildOptions) -> Result<BundleImage, OciError> {
    build_bundle_image_on(dir, None, opts)
}

/// [`build_bundle_image`] on `base`: the base's layers, then the bundle
/// layer; the base's config (entrypoint, command, environment, user) kept,
/// the bundle's annotations added to its labels, as `docker build` of a
/// `bundle.Dockerfile` whose `FROM` is the base does. Every platform of a
/// multi-platform base gets the layer and the result is an index. Without
/// a base, the image is [`build_bundle_image`]'s.
pub fn build_bundle_image_on(
    dir: &Path,
    base: Option<&BaseImage>,
    opts: &BuildOptions,
) -> Result<BundleImage, OciError> {
    let meta = std::fs::metadata(dir).map_err(|e| io_err(dir, e))?;
    if !meta.is_dir() {
        return Err(io_err(
            dir,
            "not a directory; give the directory that holds manifests/ and metadata/",
        ));
    }
    if !dir.join("manifests").is_dir() {
        return Err(OciError::Invalid {
            what: dir.display().to_string(),
            reason: "no manifests/ directory".into(),
        });
    }
    let files = bundle_layer(dir)?;
    let metadata = Bundle::from_files(dir, files.metadata);
    let labels: BTreeMap<String, String> = match &metadata.annotations {
        Some(a) if a.package().is_some_and(|p| !p.is_empty()) => a.values.clone(),
        _ => {
            let why = first_error(&metadata);
            return Err(OciError::Invalid {
                what: dir.join("metadata/annotations.yaml").display().to_string(),
                reason: format!(
                    "no `annotations` with {}{why} — a bundle image carries them as labels; run `olm-catalog bundle validate {}`",
                    bundle::keys::PACKAGE,
                    dir.display()
                ),
            });
        }
    };
    let built = files.layer.build(opts.epoch)?;
    if let Some(base) = base {
        let image = layer_on_base(built, Some(base), opts, &|config, diff_id, what| {
            bundle_config(config, diff_id, opts, what, &labels)
        })?;
        return Ok(BundleImage {
            image,
            labels,
            dir: dir.to_path_buf(),
            csv_candidates: files.csv_candidates,
        });
    }
    let config = json!({
        "architecture": opts.platform.architecture,
        "os": opts.platform.os,
        "created": rfc3339(opts.epoch),
        "config": {"Labels": labels},
        "rootfs": {"type": "layers", "diff_ids": [built.diff_id]},
        "history": [history(opts.epoch, "olm-catalog bundle build: COPY manifests/ metadata/ /")],
    });
    let mut set = empty_set();
    let layer_desc = layer_item(&mut set, built, opts.format);
    let (top, top_bytes) = single_image(&mut set, &config, vec![layer_desc], opts.format);
    set.top = top;
    set.top_bytes = top_bytes;
    Ok(BundleImage {
        image: set,
        labels,
        dir: dir.to_path_buf(),
        csv_candidates: files.csv_candidates,
    })
}

fn empty_set() -> ImageSet {
    ImageSet {
        blobs: Vec::new(),
        children: Vec::new(),
        top: Descriptor::of("", b""),
        top_bytes: Vec::new(),
    }
}

fn layer_item(set: &mut ImageSet, built: BuiltLayer, format: Format) -> Descriptor {
    let desc = Descriptor {
        media_type: format.layer_gzip().to_string(),
        digest: built.digest,
        size: built.blob.len(),
        platform: None,
        annotations: None,
    };
    set.push_blob(BlobItem {
        descriptor: desc.clone(),
        source: BlobSource::Data(built.blob),
    });
    desc
}

/// One image of a base: its manifest and config (and, in an index, the
/// descriptor with its platform).
#[derive(Debug, Clone)]
pub struct BaseEntry {
    /// The index entry (platform, annotations), or the manifest's own.
    pub descriptor: Descriptor,
    /// The manifest.
    pub manifest: ImageManifest,
    /// The config JSON.
    pub config: Value,
}

/// A base image: one image or every platform of an index.
#[derive(Debug, Clone)]
pub struct BaseImage {
    /// Where it came from (its blobs are fetched or mounted from there).
    pub source: ImageRef,
    /// Whether it was an index (then the result is an index too).
    pub is_index: bool,
    /// Its images.
    pub entries: Vec<BaseEntry>,
}

fn index_config(
    base: Option<&Value>,
    diff_id: &str,
    opts: &BuildOptions,
    what: &str,
    payload: &Payload,
) -> Result<Value, OciError> {
    let start = match base {
        Some(c) => c.clone(),
        None => {
            let mut c = scratch_config(opts);
            if let Some(v) = &opts.platform.variant {
                c["variant"] = json!(v);
            }
            c
        }
    };
    layered_config(
        start,
        diff_id,
        opts,
        what,
        payload.created_by,
        |cfg, labels| {
            labels.insert(payload.label.0.into(), json!(payload.label.1));
            cfg.insert("Entrypoint".into(), json!(payload.entrypoint));
            cfg.insert("Cmd".into(), json!(payload.cmd));
            let ports = cfg.entry("ExposedPorts").or_insert_with(|| json!({}));
            if ports.is_null() {
                *ports = json!({});
            }
            if let Some(p) = ports.as_object_mut() {
                p.insert(INDEX_PORT.into(), json!({}));
            }
        },
    )
}

/// The config of a one-platform image made from nothing.
fn scratch_config(opts: &BuildOptions) -> Value {
    json!({
        "architecture": opts.platform.architecture,
        "os": opts.platform.os,
        "config": {},
        "rootfs": {"type": "layers", "diff_ids": []},
        "history": [],
    })
}

/// `config` (a base's, or [`scratch_config`]) with one more layer: `created`
/// set, `edit` applied to its `config` object and that object's `Labels`,
/// `diff_id` appended to `rootfs.diff_ids`, and a history entry saying
/// `created_by`. Errors name the image `what`.
fn layered_config(
    mut config: Value,
    diff_id: &str,
    opts: &BuildOptions,
    what: &str,
    created_by: &str,
    edit: impl FnOnce(&mut serde_json::Map<String, Value>, &mut serde_json::Map<String, Value>),
) -> Result<Value, OciError> {
    let invalid = |reason: &str| OciError::Invalid {
        what: format!("config of {what}"),
        reason: reason.to_string(),
    };
    let obj = config
        .as_object_mut()
        .ok_or_else(|| invalid("not a JSON object"))?;
    obj.insert("created".into(), json!(rfc3339(opts.epoch)));
    let cfg = obj.entry("config").or_insert_with(|| json!({}));
    if cfg.is_null() {
        *cfg = json!({});
    }
    let cfg = cfg
        .as_object_mut()
        .ok_or_else(|| invalid("`config` is not an object"))?;
    let mut labels = match cfg.remove("Labels") {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(invalid("`config.Labels` is not an object")),
    };
    edit(cfg, &mut labels);
    cfg.insert("Labels".into(), Value::Object(labels));
    let rootfs = obj
        .entry("rootfs")
        .or_insert_with(|| json!({"type": "layers", "diff_ids": []}));
    rootfs
        .get_mut("diff_ids")
        .and_then(Value::as_array_mut)
        .ok_or_else(|| invalid("`rootfs.diff_ids` is not a list"))?
        .push(json!(diff_id));
    let hist = obj.entry("history").or_insert_with(|| json!([]));
    if hist.is_null() {
        *hist = json!([]);
    }
    hist.as_array_mut()
        .ok_or_else(|| invalid("`history` is not a list"))?
        .push(history(opts.epoch, created_by));
    Ok(config)
}

/// Builds an index image: `base` (or nothing) plus a layer holding the
/// database at `/database/index.db`, the database label, and the
/// entrypoint and command that serve it. For a multi-platform base, every
/// platform gets the layer and the result is an index.
pub fn build_index_image(
    database: &[u8],
    base: Option<&BaseImage>,
    opts: &BuildOptions,
) -> Result<ImageSet, OciError> {
    let mut layer = LayerBuilder::new();
    layer.file("database/index.db", database.to_vec(), 0o644);
    let built = layer.build(opts.epoch)?;
    build_on_base(built, &INDEX_PAYLOAD, base, opts)
}

/// `base` (or nothing) plus the layer `built`, with the label, entrypoint
/// and command of `payload`; for a multi-platform base, every platform gets
/// the layer and the result is an index.
pub fn build_on_base(
    built: BuiltLayer,
    payload: &Payload,
    base: Option<&BaseImage>,
    opts: &BuildOptions,
) -> Result<ImageSet, OciError> {
    layer_on_base(built, base, opts, &|config, diff_id, what| {
        index_config(config, diff_id, opts, what, payload)
    })
}

/// The config of an image made of a base config (`None`: scratch), a layer
/// of diff id `diff_id`, for the image called `what` in errors.
type ConfigFn<'a> = dyn Fn(Option<&Value>, &str, &str) -> Result<Value, OciError> + 'a;

/// The bundle image's config on a base: the base's, with `created`, the
/// annotations added to its labels, the layer and its history entry.
fn bundle_config(
    base: Option<&Value>,
    diff_id: &str,
    opts: &BuildOptions,
    what: &str,
    labels: &BTreeMap<String, String>,
) -> Result<Value, OciError> {
    let start = base.cloned().unwrap_or_else(|| scratch_config(opts));
    layered_config(
        start,
        diff_id,
        opts,
        what,
        "olm-catalog bundle build: COPY manifests/ metadata/ /",
        |_, have| {
            for (k, v) in labels {
                have.insert(k.clone(), json!(v));
            }
        },
    )
}

/// `base` (or nothing) plus the layer `built`, each image's config made by
/// `config` from the base's.
fn layer_on_base(
    built: BuiltLayer,
    base: Option<&BaseImage>,
    opts: &BuildOptions,
    config: &ConfigFn<'_>,
) -> Result<ImageSet, OciError> {
    let make_config = config;
    let diff_id = built.diff_id.clone();
    let mut set = empty_set();
    let db_layer = layer_item(&mut set, built, opts.format);
    let Some(base) = base else {
        let config = make_config(None, &diff_id, "scratch")?;
        let (top, bytes) = single_image(&mut set, &config, vec![db_layer], opts.format);
        set.top = top;
        set.top_bytes = bytes;
        return Ok(set);
    };
    let mut children = Vec::new();
    for entry in &base.entries {
        let what = match &entry.descriptor.platform {
            Some(p) => format!("{} ({})", base.source, p.name()),
            None => base.source.to_string(),
        };
        let diff_ids = entry
            .config
            .pointer("/rootfs/diff_ids")
            .and_then(Value::as_array)
            .map(Vec::len);
        if diff_ids != Some(entry.manifest.layers.len()) {
            return Err(OciError::Invalid {
                what: format!("base image {what}"),
                reason: format!(
                    "its config lists {} rootfs.diff_ids for {} layers",
                    diff_ids.unwrap_or(0),
                    entry.manifest.layers.len()
                ),
            });
        }
        let mut layers = Vec::new();
        for l in &entry.manifest.layers {
            if opts.format == Format::Docker && l.media_type == media::OCI_LAYER_ZSTD {
                return Err(OciError::Invalid {
                    what: format!("base image {what}"),
                    reason: format!(
                        "layer {} is zstd-compressed, which Docker manifests cannot name; build with --format oci",
                        l.digest
                    ),
                });
            }
            let mut d = l.clone();
            d.media_type = opts.format.convert_layer(&l.media_type);
            set.push_blob(BlobItem {
                descriptor: d.clone(),
                source: BlobSource::Image(base.source.clone()),
            });
            layers.push(d);
        }
        layers.push(db_layer.clone());
        let config = make_config(Some(&entry.config), &diff_id, &what)?;
        let (mut desc, bytes) = single_image(&mut set, &config, layers, opts.format);
        desc.platform = entry.descriptor.platform.clone();
        desc.annotations = entry.descriptor.annotations.clone();
        children.push((desc, bytes));
    }
    if base.is_index {
        let index = ImageIndex {
            schema_version: 2,
            media_type: Some(opts.format.index().to_string()),
            manifests: children.iter().map(|c| c.0.clone()).collect(),
            annotations: None,
        };
        let bytes = media::to_json_bytes(&index);
        set.top = Descriptor::of(opts.format.index(), &bytes);
        set.top_bytes = bytes;
        set.children = children;
    } else {
        let (mut desc, bytes) = children
            .into_iter()
            .next()
            .ok_or_else(|| OciError::Invalid {
                what: format!("base image {}", base.source),
                reason: "has no image".into(),
            })?;
        desc.platform = None;
        desc.annotations = None;
        set.top = desc;
        set.top_bytes = bytes;
    }
    Ok(set)
}

/// Builds an index image on the project's own runtime layer (see
/// [`super::runtime`]): that layer (the `olm-catalog` executable and what it
/// needs to start), then the database layer; user 65532, the entrypoint and
/// command that serve the database, the platform of the runtime layer. What
/// `index build` makes without `--base`.
pub fn build_runtime_index_image(
    database: &[u8],
    runtime: super::runtime::RuntimeLayer,
    opts: &BuildOptions,
) -> Result<ImageSet, OciError> {
    let mut layer = LayerBuilder::new();
    layer.file("database/index.db", database.to_vec(), 0o644);
    let built = layer.build(opts.epoch)?;
    build_on_runtime(built, &INDEX_PAYLOAD, runtime, opts)
}

/// The runtime layer, then `built`, with the config of `payload`.
pub fn build_on_runtime(
    built: BuiltLayer,
    payload: &Payload,
    runtime: super::runtime::RuntimeLayer,
    opts: &BuildOptions,
) -> Result<ImageSet, OciError> {
    let diff_id = built.diff_id.clone();
    let mut set = empty_set();
    let runtime_diff_id = runtime.layer.diff_id.clone();
    let runtime_desc = layer_item(&mut set, runtime.layer, opts.format);
    let db_layer = layer_item(&mut set, built, opts.format);
    let mut base = json!({
        "architecture": runtime.platform.architecture,
        "os": runtime.platform.os,
        "config": {
            "User": super::runtime::RUNTIME_USER,
            "Env": ["PATH=/bin"],
        },
        "rootfs": {"type": "layers", "diff_ids": [runtime_diff_id]},
        "history": [history(
            opts.epoch,
            "olm-catalog: ADD olm-catalog, grpc_health_probe and shared libraries (default base)",
        )],
    });
    if let Some(v) = &runtime.platform.variant {
        base["variant"] = json!(v);
    }
    let config = index_config(Some(&base), &diff_id, opts, "the default base", payload)?;
    let (top, bytes) = single_image(&mut set, &config, vec![runtime_desc, db_layer], opts.format);
    set.top = top;
    set.top_bytes = bytes;
    Ok(set)
}

/// Reads the file-based catalog directory `dir` into a layer under
/// `configs/`, as `ADD DIR /configs` does: every file (hidden ones and
/// `.indexignore` too, which the catalog loader reads), sorted; symbolic
/// links are followed when they stay inside `dir`.
pub fn catalog_layer(dir: &Path, epoch: u64) -> Result<BuiltLayer, OciError> {
    let root = std::fs::canonicalize(dir).map_err(|e| io_err(dir, e))?;
    if !root.is_dir() {
        return Err(io_err(
            dir,
            "not a directory; give the file-based catalog's root",
        ));
    }
    let top = CONFIGS_PATH.trim_start_matches('/');
    let mut layer = LayerBuilder::new();
    layer.dir(top);
    for entry in walkdir::WalkDir::new(&root)
        .follow_links(true)
        .sort_by_file_name()
    {
        let entry = entry.map_err(|e| io_err(dir, e))?;
        let path = entry.path();
        if entry.depth() == 0 {
            continue;
        }
        let real = std::fs::canonicalize(path).map_err(|e| io_err(path, e))?;
        if !real.starts_with(&root) {
            return Err(io_err(
                path,
                format!(
                    "symbolic link to {}, outside the catalog; copy the file into it",
                    real.display()
                ),
            ));
        }
        let rel = path.strip_prefix(&root).map_err(|e| io_err(path, e))?;
        let rel = rel
            .to_str()
            .ok_or_else(|| io_err(path, "file name is not UTF-8"))?
            .replace(std::path::MAIN_SEPARATOR, "/");
        let name = format!("{top}/{rel}");
        if entry.file_type().is_dir() {
            layer.dir(&name);
        } else if entry.file_type().is_file() {
            layer.file_from_disk(&name, path, 0o644);
        } else {
            return Err(io_err(path, "not a regular file or directory"));
        }
    }
    // A whole catalog's files and its compressed layer can be GiBs: the
    // files are read one at a time and the layer goes to a temporary file.
    layer.build_spooled(epoch)
}

/// What a catalog image is built on.
pub enum CatalogBase<'a> {
    /// The project's own image (see [`super::runtime`]): serves /configs.
    Runtime(Box<super::runtime::RuntimeLayer>),
    /// A base image: an opm image (entrypoint `/bin/opm`, as `opm generate
    /// dockerfile` writes it), or one whose entrypoint is olm-catalog.
    Image(&'a BaseImage),
    /// Nothing: the catalog, label, entrypoint and command only.
    Scratch,
}

/// Whether a base image's entrypoint is olm-catalog rather than opm.
fn base_runs_olm_catalog(base: &BaseImage) -> bool {
    base.entries.iter().all(|e| {
        e.config
            .pointer("/config/Entrypoint/0")
            .and_then(Value::as_str)
            .is_some_and(|p| p.ends_with("/olm-catalog"))
    })
}

/// The history line of the catalog layer.
const CATALOG_CREATED_BY: &str = "olm-catalog catalog build: ADD catalog /configs";

/// Builds a catalog image of the file-based catalog in `dir`: its base plus
/// a layer with the catalog under `/configs`, the label
/// `operators.operatorframework.io.index.configs.v1=/configs` and the
/// entrypoint and command that serve it (olm-catalog's on the project's own
/// base or a base whose entrypoint is olm-catalog; opm's otherwise). The
/// catalog is not validated here (the command does it first).
pub fn build_catalog_image(
    dir: &Path,
    base: CatalogBase,
    opts: &BuildOptions,
) -> Result<ImageSet, OciError> {
    let built = catalog_layer(dir, opts.epoch)?;
    let ours = Payload {
        label: (CONFIGS_LABEL, CONFIGS_PATH),
        entrypoint: INDEX_ENTRYPOINT,
        cmd: CATALOG_CMD,
        created_by: CATALOG_CREATED_BY,
    };
    match base {
        CatalogBase::Runtime(runtime) => build_on_runtime(built, &ours, *runtime, opts),
        CatalogBase::Scratch => build_on_base(built, &ours, None, opts),
        CatalogBase::Image(b) if base_runs_olm_catalog(b) => {
            build_on_base(built, &ours, Some(b), opts)
        }
        CatalogBase::Image(b) => {
            let opm = Payload {
                entrypoint: OPM_ENTRYPOINT,
                cmd: OPM_CMD,
                ..ours
            };
            build_on_base(built, &opm, Some(b), opts)
        }
    }
}

/// Why [`catalog_dockerfile`] wrote nothing: opm v1.73.0's
/// `GenerateDockerfile.validate` (`alpha/action/generate_dockerfile.go`),
/// with its messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DockerfileError {
    /// No base image was given (`-i ""`).
    #[error("base image is unset")]
    BaseImageUnset,
    /// The catalog directory has no name (`/`).
    #[error("index directory is unset")]
    IndexDirUnset,
}

/// The base image that makes [`catalog_dockerfile`] write a binary-less
/// final stage (no entrypoint; the CatalogSource extracts the content).
pub const SCRATCH: &str = "scratch";

/// The Dockerfile opm v1.73.0's `generate dockerfile` writes
/// (`alpha/action/generate_dockerfile.go`, byte for byte): a builder stage
/// on `builder_image` that adds the catalog directory named `index_dir`
/// (beside the Dockerfile) at /configs and pre-builds the serve cache, then
/// `base_image` (entrypoint /bin/opm and `serve /configs
/// --cache-dir=/tmp/cache`, or, for `scratch`, a note on the CatalogSource
/// settings) with /configs and /tmp/cache copied from the builder, the
/// configs label and `extra_labels` (sorted by key, as Go's template ranges
/// over a map).
pub fn catalog_dockerfile(
    base_image: &str,
    builder_image: &str,
    index_dir: &str,
    extra_labels: &BTreeMap<String, String>,
) -> Result<String, DockerfileError> {
    if base_image.is_empty() {
        return Err(DockerfileError::BaseImageUnset);
    }
    if index_dir.is_empty() {
        return Err(DockerfileError::IndexDirUnset);
    }
    let mut out = format!(
        "# The builder image is expected to contain\n\
         # /bin/opm (with serve subcommand)\n\
         FROM {builder_image} as builder\n\n\
         # Copy FBC root into image at /configs and pre-populate serve cache\n\
         ADD {index_dir} /configs\n\
         RUN [\"/bin/opm\", \"serve\", \"/configs\", \"--cache-dir=/tmp/cache\", \"--cache-only\"]\n\n\
         FROM {base_image}\n"
    );
    if base_image != SCRATCH {
        out.push_str(
            "# The base image is expected to contain\n\
             # /bin/opm (with serve subcommand) and /bin/grpc_health_probe\n\n\
             # Configure the entrypoint and command\n\
             ENTRYPOINT [\"/bin/opm\"]\n\
             CMD [\"serve\", \"/configs\", \"--cache-dir=/tmp/cache\"]\n",
        );
    } else {
        out.push_str(
            "# OLMv0 CatalogSources that use binary-less images must set:\n\
             # spec:\n\
             #   grpcPodConfig:\n\
             #     extractContent:\n\
             #       catalogDir: /configs\n\
             #       cacheDir: /tmp/cache\n",
        );
    }
    out.push_str(&format!(
        "\nCOPY --from=builder /configs /configs\n\
         COPY --from=builder /tmp/cache /tmp/cache\n\n\
         # Set FBC-specific label for the location of the FBC root directory\n\
         # in the image\n\
         LABEL {CONFIGS_LABEL}=/configs"
    ));
    if !extra_labels.is_empty() {
        out.push_str("\n\n# Set other custom labels");
        for (k, v) in extra_labels {
            out.push_str(&format!("\nLABEL \"{k}\"=\"{v}\""));
        }
    }
    out.push('\n');
    Ok(out)
}

/// The Dockerfile opm's `index add|rm|prune|... --generate` writes
/// (`pkg/containertools/dockerfilegenerator.go`): `binary_image` (opm's
/// default when empty) with the database at `database_path` (relative to
/// the build context) added as /database/index.db, served by `opm
/// registry serve`.
pub fn index_dockerfile(binary_image: &str, database_path: &str) -> String {
    let base = if binary_image.is_empty() {
        DEFAULT_OPM_IMAGE
    } else {
        binary_image
    };
    format!(
        "FROM {base}\n\
         LABEL {INDEX_DB_LABEL}={INDEX_DB_PATH}\n\
         ADD {database_path} /database/index.db\n\
         EXPOSE 50051\n\
         ENTRYPOINT [\"/bin/opm\"]\n\
         CMD [\"registry\", \"serve\", \"--database\", \"/database/index.db\"]\n"
    )
}

/// opm's default base and builder image
/// (`containertools.DefaultBinarySourceImage`).
pub const DEFAULT_OPM_IMAGE: &str = "quay.io/operator-framework/opm:latest";
