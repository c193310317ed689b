//! Image builds that end in a push: `bundle build` (one bundle, or many in
//! one call), `index build` (and `index add --tag`) and `catalog build`,
//! each optionally signed so that no tag moves without its signature; and
//! `bundle unpack`, a bundle image's files written to a directory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::oci::batch::{self, BundleJob, BundleOutcome, Destination, TagTemplate};
use crate::oci::build::{BaseImage, CatalogBase};
use crate::oci::progress::Progress;
use crate::oci::{self, BuildOptions, ImageRef, ImageSet, RegistryClient};
use crate::sign::{KeySigner, SignOptions};

use super::registry::RegistryOptions;
use super::{Error, Reporter};

/// Sign what is pushed: by digest, then the signature, then the tag.
#[derive(Clone)]
pub struct Signing {
    /// The key, already read (and decrypted).
    pub signer: Arc<KeySigner>,
    /// Annotations and signature format.
    pub options: SignOptions,
}

/// Refuses Docker media types for an OCI layout: containers/image (skopeo,
/// podman, buildah) finds only OCI manifests in a layout's `index.json`, so
/// such an image would be there but unreadable by the tools that read
/// layouts.
fn check_layout_format(dest: &ImageRef, build: &BuildOptions) -> Result<(), Error> {
    if build.format == oci::media::Format::Docker && matches!(dest, ImageRef::Layout { .. }) {
        return Err(Error::Usage(format!(
            "{dest}: an OCI layout holds OCI images (skopeo and podman read no Docker \
             manifests from one); build it with --format oci, or push to a registry for --format docker"
        )));
    }
    Ok(())
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("starting the async runtime", e))
}

/// Pushes `set` to `dest`; with `signing`, by digest, then the signature,
/// then the tag (see [`crate::sign::push_and_sign`]), and `reporter` hears
/// where the signature went. The digest pushed.
pub fn push(
    client: &RegistryClient,
    set: &ImageSet,
    dest: &ImageRef,
    signing: Option<&Signing>,
    reporter: &dyn Reporter,
) -> Result<String, Error> {
    let rt = runtime()?;
    push_on(&rt, client, set, dest, signing, reporter)
}

fn push_on(
    rt: &tokio::runtime::Runtime,
    client: &RegistryClient,
    set: &ImageSet,
    dest: &ImageRef,
    signing: Option<&Signing>,
    reporter: &dyn Reporter,
) -> Result<String, Error> {
    let mode = reporter.progress();
    match signing {
        None => rt
            .block_on(oci::push_image(client, set, dest, mode))
            .map_err(|e| Error::registry(e).context(format!("pushing {dest}"))),
        Some(s) => {
            let (digest, outcome) = rt
                .block_on(crate::sign::push_and_sign(
                    client,
                    set,
                    dest,
                    mode,
                    s.signer.as_ref(),
                    &s.options,
                ))
                .map_err(Error::sign)?;
            reporter.message(&format!("signed {dest}@{digest}: {}", outcome.stored_at));
            Ok(digest)
        }
    }
}

/// The base of an index or catalog image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Base {
    /// The project's own image, made from the running executable.
    SelfImage,
    /// No base: the catalog or database, label, entrypoint and command only.
    Scratch,
    /// A base image (registry or OCI layout; every platform of a
    /// multi-platform base gets the catalog).
    Image(ImageRef),
}

/// What goes into an index or catalog image.
#[derive(Clone, Copy, Debug)]
pub enum CatalogContent<'a> {
    /// An SQLite index database (`/database/index.db`).
    Database(&'a Path),
    /// A file-based catalog directory (`/configs`).
    Fbc(&'a Path),
}

/// How an index or catalog image is made and where it goes.
#[derive(Clone)]
pub struct CatalogImageOptions {
    /// The destination: a registry reference or an OCI layout.
    pub dest: ImageRef,
    /// The base.
    pub base: Base,
    /// Media types, platform (of a scratch image) and timestamps.
    pub build: BuildOptions,
    /// Sign the pushed image.
    pub signing: Option<Signing>,
}

/// Builds the index or catalog image of `content` on `opts.base` (read
/// through `client`), and pushes it to `opts.dest` (signed with
/// `opts.signing`). The digest pushed.
pub fn build_catalog_image(
    content: CatalogContent<'_>,
    opts: &CatalogImageOptions,
    client: &RegistryClient,
    reporter: &dyn Reporter,
) -> Result<String, Error> {
    check_layout_format(&opts.dest, &opts.build)?;
    let database = match content {
        CatalogContent::Database(path) => {
            let bytes = std::fs::read(path)
                .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
            if !bytes.starts_with(b"SQLite format 3\0") {
                return Err(Error::Source(format!(
                    "{} is not an SQLite database",
                    path.display()
                )));
            }
            Some(bytes)
        }
        CatalogContent::Fbc(_) => None,
    };
    let rt = runtime()?;
    let loaded: Option<BaseImage> = match &opts.base {
        Base::Image(src) => Some(
            rt.block_on(oci::load_base(client, src))
                .map_err(|e| Error::registry(e).context(format!("reading the base image {src}")))?,
        ),
        Base::SelfImage | Base::Scratch => None,
    };
    let base = match (&opts.base, &loaded) {
        (_, Some(b)) => CatalogBase::Image(b),
        (Base::Scratch, None) => CatalogBase::Scratch,
        _ => CatalogBase::Runtime(Box::new(
            oci::runtime::self_runtime_layer(opts.build.epoch).map_err(Error::build)?,
        )),
    };
    let set = match (content, &database) {
        (CatalogContent::Fbc(dir), _) => oci::build::build_catalog_image(dir, base, &opts.build)
            .map_err(|e| {
                Error::build(e).context(format!("building the catalog image of {}", dir.display()))
            })?,
        (CatalogContent::Database(_), Some(db)) => match base {
            CatalogBase::Runtime(layer) => {
                oci::build::build_runtime_index_image(db, *layer, &opts.build)
            }
            CatalogBase::Image(b) => oci::build_index_image(db, Some(b), &opts.build),
            CatalogBase::Scratch => oci::build_index_image(db, None, &opts.build),
        }
        .map_err(Error::build)?,
        (CatalogContent::Database(_), None) => {
            return Err(Error::Usage("no database was read".into()))
        }
    };
    push_on(
        &rt,
        client,
        &set,
        &opts.dest,
        opts.signing.as_ref(),
        reporter,
    )
}

/// Validates the file-based catalog at `dir` (as `olm-catalog validate`),
/// sorted: what `catalog build` checks before building.
pub fn validate_catalog(dir: &Path) -> crate::diag::Report {
    let findings = match crate::fbc::validate::validate_path(dir) {
        Ok(findings) => findings,
        Err(e) => vec![crate::diag::Finding::error("fbc-load", e.to_string())],
    };
    let mut report = crate::diag::Report {
        subject: dir.display().to_string(),
        findings,
    };
    report.sort();
    report
}

/// Where `bundle build` writes without a destination:
/// `oci:oci-images:bundle-<package>-<directory name>`. The package is in
/// the name so that two packages' bundles in directories of the same name
/// (`0.1.0/`) do not overwrite each other's image.
pub fn default_bundle_tag(
    dir: &Path,
    labels: &std::collections::BTreeMap<String, String>,
) -> String {
    let dir_name = dir
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "bundle".into());
    let name = match labels.get(crate::bundle::keys::PACKAGE) {
        Some(p) if !p.is_empty() => format!("bundle-{p}-{dir_name}"),
        _ => format!("bundle-{dir_name}"),
    };
    // An OCI tag: [A-Za-z0-9_][A-Za-z0-9._-]{0,127}.
    let tag: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(128)
        .collect();
    format!("oci:oci-images:{tag}")
}

/// Builds the bundle image of `dir` and pushes it to `dest` (default
/// [`default_bundle_tag`]), through a client made from `registry` for that
/// destination, signed with `signing`. The destination and digest.
pub fn build_bundle(
    dir: &Path,
    dest: Option<ImageRef>,
    build: &BuildOptions,
    registry: &RegistryOptions,
    signing: Option<&Signing>,
    reporter: &dyn Reporter,
) -> Result<(ImageRef, String), Error> {
    build_bundle_on(dir, dest, None, build, registry, signing, reporter)
}

/// [`build_bundle`] on the base image `base` (a registry reference or OCI
/// layout, read through the same client; `None`: FROM scratch): the base's
/// layers and config, then the bundle layer and labels
/// ([`oci::build::build_bundle_image_on`]). An explicit credential goes to
/// the destination's registry, else the base's.
pub fn build_bundle_on(
    dir: &Path,
    dest: Option<ImageRef>,
    base: Option<&ImageRef>,
    build: &BuildOptions,
    registry: &RegistryOptions,
    signing: Option<&Signing>,
    reporter: &dyn Reporter,
) -> Result<(ImageRef, String), Error> {
    let building = |loaded: Option<&oci::build::BaseImage>| {
        oci::build_bundle_image_on(dir, loaded, build).map_err(|e| {
            Error::build(e).context(format!("building the bundle image of {}", dir.display()))
        })
    };
    let rt = runtime()?;
    let (built, dest, client) = match base {
        None => {
            let built = building(None)?;
            let dest = bundle_dest(dest, dir, &built)?;
            check_layout_format(&dest, build)?;
            let hosts = match &registry.credential {
                Some(_) => super::registry::credential_host_of(&dest)?,
                None => Vec::new(),
            };
            (built, dest, super::registry::client(registry, &hosts)?)
        }
        Some(src) => {
            let hosts = match &registry.credential {
                Some(_) => {
                    super::registry::credential_hosts(dest.as_ref(), std::slice::from_ref(src))?
                }
                None => Vec::new(),
            };
            let client = super::registry::client(registry, &hosts)?;
            let loaded = rt
                .block_on(oci::load_base(&client, src))
                .map_err(|e| Error::registry(e).context(format!("reading the base image {src}")))?;
            let built = building(Some(&loaded))?;
            let dest = bundle_dest(dest, dir, &built)?;
            check_layout_format(&dest, build)?;
            (built, dest, client)
        }
    };
    let digest = push_on(&rt, &client, &built.image, &dest, signing, reporter)?;
    Ok((dest, digest))
}

/// `dest`, or the default tag of the bundle `built` from `dir`.
fn bundle_dest(
    dest: Option<ImageRef>,
    dir: &Path,
    built: &oci::BundleImage,
) -> Result<ImageRef, Error> {
    match dest {
        Some(d) => Ok(d),
        None => default_bundle_tag(dir, &built.labels)
            .parse()
            .map_err(|e| Error::Usage(format!("{e}"))),
    }
}

/// Reads a bundle list: `DIR` or `DIR REF` per line (`#` comments, blank
/// lines skipped); a line without REF goes to `template`. `name` is what
/// errors call the list (its path).
pub fn parse_bundle_list(
    text: &str,
    name: &str,
    template: Option<&TagTemplate>,
) -> Result<Vec<BundleJob>, Error> {
    let mut jobs = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = format!("{name}:{}", n + 1);
        let fields: Vec<&str> = line.split_whitespace().collect();
        let dest = match fields.as_slice() {
            [_] => match template {
                Some(t) => Destination::Template(t.clone()),
                None => {
                    return Err(Error::Usage(format!(
                        "{at}: `{line}` has no REF; add one (`DIR REF`) or pass --tag-template"
                    )))
                }
            },
            [_, r] => Destination::Ref(
                r.parse()
                    .map_err(|e| Error::registry(e).context(at.clone()))?,
            ),
            _ => {
                return Err(Error::Usage(format!(
                    "{at}: expected `DIR` or `DIR REF`, got {} fields (directories with spaces are not supported here)",
                    fields.len()
                )))
            }
        };
        jobs.push(BundleJob {
            dir: PathBuf::from(fields[0]),
            dest,
        });
    }
    Ok(jobs)
}

/// Checks a batch of bundle jobs before anything is built: at least one,
/// and no given reference twice (templated ones are checked as they are
/// made, since they need the bundle).
pub fn check_bundle_jobs(jobs: &[BundleJob]) -> Result<(), Error> {
    if jobs.is_empty() {
        return Err(Error::Usage("no bundles given".into()));
    }
    let mut seen: std::collections::HashMap<String, &PathBuf> = Default::default();
    for job in jobs {
        if let Destination::Ref(r) = &job.dest {
            if let Some(first) = seen.insert(r.to_string(), &job.dir) {
                return Err(Error::Usage(format!(
                    "{r} is the destination of both {} and {}",
                    first.display(),
                    job.dir.display()
                )));
            }
        }
    }
    Ok(())
}

/// The registries a batch of bundle jobs pushes to, as far as known before
/// building: those of given references, and the registry part of
/// `template` when it has no placeholder. An explicit credential goes to
/// these.
pub fn bundle_job_hosts(jobs: &[BundleJob], template: Option<&str>) -> Vec<String> {
    let mut hosts: Vec<String> = jobs
        .iter()
        .filter_map(|j| match &j.dest {
            Destination::Ref(ImageRef::Registry { repo, .. }) => Some(repo.host.clone()),
            _ => None,
        })
        .collect();
    if let Some(t) = template {
        if let Some(host) = t.split('/').next().filter(|h| {
            !h.contains('{') && (h.contains('.') || h.contains(':') || *h == "localhost")
        }) {
            hosts.push(host.to_string());
        }
    }
    hosts.sort();
    hosts.dedup();
    hosts
}

/// Builds and pushes a batch of bundles, `concurrency` at a time, each
/// signed with `signing` before its tag moves; `on_outcome` hears each
/// bundle in the order of `jobs`. One bundle that fails does not stop the
/// others. How many were pushed and how many failed.
pub fn build_bundles(
    jobs: Vec<BundleJob>,
    build: &BuildOptions,
    client: &RegistryClient,
    signing: Option<&Signing>,
    concurrency: usize,
    progress: Arc<Progress>,
    mut on_outcome: impl FnMut(&BundleOutcome),
) -> Result<(usize, usize), Error> {
    for job in &jobs {
        if let Destination::Ref(d) = &job.dest {
            check_layout_format(d, build)?;
        }
    }
    let rt = runtime()?;
    let mut pushed = 0usize;
    let mut failed = 0usize;
    rt.block_on(async {
        use futures::StreamExt as _;
        let before_tag = signing
            .map(|s| crate::sign::sign_before_tag(client, s.signer.clone(), s.options.clone()));
        let mut outcomes = std::pin::pin!(batch::push_bundles_with(
            client,
            jobs,
            build,
            concurrency.max(1),
            progress,
            before_tag,
        ));
        while let Some(o) = outcomes.next().await {
            if o.result.is_ok() {
                pushed += 1;
            } else {
                failed += 1;
            }
            on_outcome(&o);
        }
    });
    Ok((pushed, failed))
}

/// Pulls the image `reference` (a registry reference or `oci:DIR:TAG`)
/// through a client made from `registry` and writes every file of its
/// layers into a new temporary directory (removed when the returned
/// [`tempfile::TempDir`] is dropped): where `opm alpha bundle validate`
/// looks at a bundle image.
pub fn unpack_image_to_temp(
    reference: &str,
    registry: &RegistryOptions,
) -> Result<(tempfile::TempDir, oci::UnpackedImage), Error> {
    let image: ImageRef = reference.parse().map_err(Error::registry)?;
    let hosts = match &registry.credential {
        Some(_) => super::registry::credential_host_of(&image)?,
        None => Vec::new(),
    };
    let client = super::registry::client(registry, &hosts)?;
    let tmp = tempfile::Builder::new()
        .prefix("bundle-")
        .tempdir()
        .map_err(|e| Error::io("creating a temporary directory", e))?;
    let unpacked = runtime()?
        .block_on(oci::unpack_image(
            &client,
            reference,
            tmp.path(),
            &oci::layer::UnpackLimits::default(),
        ))
        .map_err(|e| Error::registry(e).context(format!("unpacking {reference}")))?;
    Ok((tmp, unpacked))
}

/// Pulls the bundle image `reference` as [`unpack_image_to_temp`] does,
/// runs `check` on the temporary directory (opm validates the bundle
/// there; pass `|_| Ok(())` for no check), then copies its content into
/// `out`: what `opm alpha bundle unpack` does. `out` is made first if it
/// is missing; files already in it are kept unless the image has the same
/// path. When the pull or `check` fails, nothing is written to `out`.
pub fn unpack_bundle_image(
    reference: &str,
    out: &Path,
    registry: &RegistryOptions,
    check: &mut dyn FnMut(&Path) -> Result<(), Error>,
) -> Result<oci::UnpackedImage, Error> {
    let shown = out.display();
    match std::fs::metadata(out) {
        Ok(m) if !m.is_dir() => {
            return Err(Error::Destination(format!(
                "out {shown} is not a directory"
            )));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir_all(out)
            .map_err(|e| Error::io(format!("creating the output directory {shown}"), e))?,
        Err(e) => return Err(Error::io(format!("reading {shown}"), e)),
    }
    let (tmp, unpacked) = unpack_image_to_temp(reference, registry)?;
    check(tmp.path())?;
    copy_tree(tmp.path(), out)?;
    Ok(unpacked)
}

/// Copies the content of `from` into `to` (both directories): directories
/// merged; a file or symbolic link replaces what is at its path (a link or
/// file there is removed first, so nothing is written through a link of
/// `to`). Errors name the path.
fn copy_tree(from: &Path, to: &Path) -> Result<(), Error> {
    let entries =
        std::fs::read_dir(from).map_err(|e| Error::io(format!("reading {}", from.display()), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(format!("reading {}", from.display()), e))?;
        let src = entry.path();
        let dest = to.join(entry.file_name());
        let kind = entry
            .file_type()
            .map_err(|e| Error::io(format!("reading {}", src.display()), e))?;
        if std::fs::symlink_metadata(&dest).is_ok_and(|m| !m.is_dir()) {
            std::fs::remove_file(&dest)
                .map_err(|e| Error::io(format!("replacing {}", dest.display()), e))?;
        }
        if kind.is_dir() {
            std::fs::create_dir_all(&dest)
                .map_err(|e| Error::io(format!("creating {}", dest.display()), e))?;
            copy_tree(&src, &dest)?;
        } else if kind.is_symlink() {
            let target = std::fs::read_link(&src)
                .map_err(|e| Error::io(format!("reading {}", src.display()), e))?;
            std::os::unix::fs::symlink(&target, &dest)
                .map_err(|e| Error::io(format!("writing {}", dest.display()), e))?;
        } else {
            std::fs::copy(&src, &dest)
                .map_err(|e| Error::io(format!("writing {}", dest.display()), e))?;
        }
    }
    Ok(())
}

/// Whether the container tool `tool` (docker, podman) is on PATH and its
/// daemon, if it has one, answers (`TOOL info` succeeds).
pub fn container_tool_answers(tool: &str) -> bool {
    std::process::Command::new(tool)
        .arg("info")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Hands the image `layout_tag` of the OCI layout `layout` to the
/// container tool `tool` as `tag`: written as a docker-archive next to the
/// layout, then `TOOL load -i ARCHIVE`. What opm's builds leave in the
/// tool's local store, made without its daemon building anything.
pub fn load_into_container_tool(
    layout: &Path,
    layout_tag: &str,
    tag: &str,
    tool: &str,
) -> Result<(), Error> {
    let dir = tempfile::tempdir().map_err(|e| Error::io("making a directory for the image", e))?;
    let archive = dir.path().join("image.tar");
    oci::Layout::new(layout)
        .write_docker_archive(layout_tag, tag, &archive)
        .map_err(Error::build)?;
    let out = std::process::Command::new(tool)
        .arg("load")
        .arg("-i")
        .arg(&archive)
        .output()
        .map_err(|e| Error::io(format!("running {tool} load"), e))?;
    if !out.status.success() {
        return Err(Error::Destination(format!(
            "{tool} load -i {}: {}",
            archive.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}
