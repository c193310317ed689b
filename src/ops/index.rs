//! The `index` commands on a database: add (bundle directories, package
//! directories, bundle images or an FBC), rm, prune, prune-stranded,
//! deprecatetruncate and export.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::graph::modes::Mode;
use crate::index::record::{BundleRecord, ImageNaming};
use crate::index::{self, Index};
use crate::index::{AddReport, LeftOut};
use crate::oci::progress::ProgressMode;
use crate::oci::RegistryClient;

use super::{chain_text, Error, Reporter};

/// Bundle images pulled at once.
const PULL_CONCURRENCY: usize = 16;

/// Runs `f` in one write transaction of `idx`; an [`Error`] raised inside
/// comes out as it was, the index's own as [`Error::Index`].
fn write<T>(
    idx: &mut Index,
    f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, Error>,
) -> Result<T, Error> {
    idx.write(f)
}

/// What to add to an index.
#[derive(Clone, Debug, Default)]
pub struct AddOptions {
    /// The database (created if missing; a new one is put in place only
    /// when the add succeeds).
    pub database: PathBuf,
    /// How channels are wired. `None`: each package in its package
    /// directory's ci.yaml `updateGraph` mode, else the mode it was added
    /// with, else replaces.
    pub mode: Option<Mode>,
    /// Bundle directories, package directories (holding version folders and
    /// ci.yaml) or bundle image references, in order.
    pub bundles: Vec<PathBuf>,
    /// How bundle directories' images are recorded (the bundlepath column).
    pub naming: ImageNaming,
    /// Keep the csv and bundle columns of bundles that head no channel.
    pub keep_content: bool,
    /// Keep an add that leaves bundles in no channel (opm `--permissive`).
    pub permissive: bool,
    /// Allow `olm.substitutesFor` (opm `--enable-alpha`).
    pub enable_alpha: bool,
    /// Leave out what cannot be added (and what needs it), add the rest.
    pub keep_going: bool,
    /// opm's `--overwrite-latest`: a bundle whose CSV name is in the index
    /// (as a channel head added from an image) replaces it.
    pub overwrite_latest: bool,
    /// Add this file-based catalog instead of `bundles`.
    pub from_fbc: Option<PathBuf>,
}

/// What an add did.
#[derive(Clone, Debug)]
pub enum Added {
    /// Packages imported from a file-based catalog.
    Fbc {
        /// The packages added.
        packages: Vec<String>,
    },
    /// Bundles added.
    Bundles(AddReport),
}

/// The outcome of [`add`].
#[derive(Clone, Debug)]
pub struct AddOutcome {
    /// What was added.
    pub added: Added,
    /// One line saying what was added ("added 3 bundle(s) to 1 package(s): etcd").
    pub summary: String,
    /// What the user should know: for an FBC, what SQLite cannot hold; for
    /// `permissive`, the bundles kept in no channel.
    pub warnings: Vec<String>,
}

impl AddOutcome {
    /// What `keep_going` left out (empty otherwise).
    pub fn left_out(&self) -> &[LeftOut] {
        match &self.added {
            Added::Bundles(r) => &r.left_out,
            Added::Fbc { .. } => &[],
        }
    }
}

/// The entries of `bundles` that are image references (pulled, not read
/// from disk): what the registry client of an add must reach.
pub fn bundle_images(bundles: &[PathBuf]) -> Vec<String> {
    bundles
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| crate::oci::looks_like_image_ref(p))
        .collect()
}

/// Adds bundles (or an FBC) to the index at `opts.database`, all in one
/// transaction, as `opm index add` / `opm registry add` do. Bundle images
/// are pulled through `client` (required when `opts.bundles` holds image
/// references), a few at a time, each dropped once recorded; package
/// directories are read one at a time, so memory holds one package.
pub fn add(
    opts: &AddOptions,
    client: Option<&RegistryClient>,
    reporter: &dyn Reporter,
) -> Result<AddOutcome, Error> {
    let fbc = match &opts.from_fbc {
        Some(d) => Some(crate::fbc::DeclarativeConfig::load_path(d)?),
        None => None,
    };
    let units = if fbc.is_none() {
        add_units(&opts.bundles)?
    } else {
        Vec::new()
    };
    let mut idx = Index::open_or_create(&opts.database).map_err(Error::index)?;
    let outcome = match &fbc {
        Some(cfg) => {
            let r = idx.import_fbc(cfg).map_err(Error::index)?;
            AddOutcome {
                summary: format!(
                    "added {} package(s) from FBC: {}",
                    r.packages.len(),
                    r.packages.join(", ")
                ),
                added: Added::Fbc {
                    packages: r.packages,
                },
                warnings: r.warnings,
            }
        }
        None => write(&mut idx, |tx| {
            index::add::with_lookup_indexes(tx, |tx| add_bundles(tx, opts, units, client, reporter))
        })?,
    };
    idx.finish().map_err(Error::index)?;
    Ok(outcome)
}

fn add_bundles(
    tx: &rusqlite::Transaction<'_>,
    opts: &AddOptions,
    units: Vec<Vec<PathBuf>>,
    client: Option<&RegistryClient>,
    reporter: &dyn Reporter,
) -> Result<AddOutcome, Error> {
    let add_opts = index::add::AddOptions {
        mode: opts.mode.unwrap_or(Mode::Replaces),
        keep_content: opts.keep_content,
        permissive: opts.permissive,
        enable_alpha: opts.enable_alpha,
        keep_going: opts.keep_going,
        overwrite_latest: opts.overwrite_latest,
    };
    // Read, add and drop one unit (a package directory) at a time, all in
    // this transaction.
    let mut r = AddReport::default();
    let mut cleared = false;
    for unit in units {
        let (records, unread, dir_modes) = load_records(opts, client, reporter, unit)?;
        let one = add_by_mode(
            tx,
            records,
            unread,
            &dir_modes,
            opts.mode,
            &add_opts,
            &mut cleared,
        )?;
        r.added.extend(one.added);
        r.packages.extend(one.packages);
        r.stranded.extend(one.stranded);
        r.left_out.extend(one.left_out);
    }
    // As when every semver-mode package comes after the replaces-mode
    // ones: opm's ClearNonHeadBundles covers the whole database.
    if cleared {
        index::add::clear_non_head_bundles(tx).map_err(index::Error::from)?;
    }
    let mut warnings = Vec::new();
    if !r.stranded.is_empty() {
        warnings.push(format!(
            "--permissive: add prunes {} bundle(s), kept in no channel (`index prune-stranded` removes them): {}",
            r.stranded.len(),
            index::add::first_few(&r.stranded)
        ));
    }
    let mut summary = format!(
        "added {} bundle(s) to {} package(s): {}",
        r.added.len(),
        r.packages.len(),
        r.packages.iter().cloned().collect::<Vec<_>>().join(", ")
    );
    if !r.left_out.is_empty() {
        let bundles = r
            .left_out
            .iter()
            .map(|l| {
                if l.bundle.is_empty() && !l.package.is_empty() {
                    l.dependents.len().max(1)
                } else {
                    1
                }
            })
            .sum::<usize>();
        summary.push_str(&format!(
            "; left out {} bundle(s) ({} problem(s), listed above)",
            bundles,
            r.left_out.len()
        ));
    }
    Ok(AddOutcome {
        added: Added::Bundles(r),
        summary,
        warnings,
    })
}

/// Bundle records with their sources (directory or image reference), and,
/// with `keep_going`, the bundles that could not be read.
type Pulled = (Vec<(String, BundleRecord)>, Vec<LeftOut>);

/// The third part: the ci.yaml `updateGraph` mode of bundles read from
/// package directories, by source.
type Loaded = (
    Vec<(String, BundleRecord)>,
    Vec<LeftOut>,
    BTreeMap<String, Mode>,
);

/// The bundle directories of a package directory (one holding version
/// folders: `VERSION/manifests/`, or `VERSION/bundle/manifests/`), sorted;
/// empty for anything else.
pub fn package_versions(dir: &Path) -> Vec<PathBuf> {
    if dir.join("manifests").is_dir() || !dir.is_dir() {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter_map(|p| {
            if p.join("manifests").is_dir() {
                Some(p)
            } else if p.join("bundle/manifests").is_dir() {
                Some(p.join("bundle"))
            } else {
                None
            }
        })
        .collect();
    out.sort();
    out
}

fn unreadable(file: String, reason: String) -> LeftOut {
    LeftOut {
        file,
        reason,
        ..Default::default()
    }
}

/// The package a bundle directory's `metadata/annotations.yaml` names, read
/// without its manifests: enough to group bundle directories by package
/// before loading them. `None` when the file is missing or unreadable (the
/// full load then says why).
fn annotated_package(dir: &Path) -> Option<String> {
    let text = ["annotations.yaml", "annotations.yml"]
        .iter()
        .find_map(|f| std::fs::read_to_string(dir.join("metadata").join(f)).ok())?;
    let docs = crate::yaml::parse_documents(&text).ok()?;
    let package = docs
        .first()?
        .root
        .get("annotations")?
        .get(crate::bundle::keys::PACKAGE)?
        .as_str()?;
    Some(package.to_string())
}

/// The bundle arguments of an add in the order they are read and written,
/// so that memory holds one unit's bundles at a time, not all of them:
/// first the images and the bundle directories whose package the
/// annotations do not name (one batch), then the other bundle directories
/// grouped by package, one package per unit (in package order, as one batch
/// would add them), then each package directory on its own.
fn add_units(bundles: &[PathBuf]) -> Result<Vec<Vec<PathBuf>>, Error> {
    if bundles.is_empty() {
        return Err(Error::Usage("no bundles given: pass bundle directories, --bundles DIR, --bundles-file FILE or --from-fbc DIR".into()));
    }
    let mut loose = Vec::new();
    let mut by_package: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    let mut packages = Vec::new();
    for d in bundles {
        if crate::oci::looks_like_image_ref(&d.to_string_lossy()) {
            loose.push(d.clone());
        } else if !package_versions(d).is_empty() {
            packages.push(vec![d.clone()]);
        } else if let Some(p) = annotated_package(d) {
            by_package.entry(p).or_default().push(d.clone());
        } else {
            loose.push(d.clone());
        }
    }
    let mut units = Vec::new();
    if !loose.is_empty() {
        units.push(loose);
    }
    units.extend(by_package.into_values());
    units.extend(packages);
    Ok(units)
}

/// One bundle directory as a record.
fn record_of_dir(dir: &Path, naming: &ImageNaming) -> Result<BundleRecord, Error> {
    let b = crate::bundle::Bundle::load_dir(dir).map_err(Error::bundle)?;
    if let Some(e) = b.first_load_error() {
        return Err(Error::bundle(e));
    }
    let name = b.csv_manifest().map(|m| m.name.clone()).unwrap_or_default();
    let image = naming.image_for(dir, &name);
    BundleRecord::from_bundle(&b, &image).map_err(Error::bundle)
}

fn load_records(
    opts: &AddOptions,
    client: Option<&RegistryClient>,
    reporter: &dyn Reporter,
    dirs: Vec<PathBuf>,
) -> Result<Loaded, Error> {
    // Arguments that are not paths on disk are bundle image references
    // (`registry/repo:tag`, `oci:DIR:TAG`): pulled concurrently, recorded by
    // reference as opm records them.
    let (images, given): (Vec<&PathBuf>, Vec<&PathBuf>) = dirs
        .iter()
        .partition(|d| crate::oci::looks_like_image_ref(&d.to_string_lossy()));
    // Package directories stand for their version folders, added in the
    // mode their ci.yaml names.
    let mut left_out = Vec::new();
    let mut modes: BTreeMap<String, Mode> = BTreeMap::new();
    let mut dirs: Vec<PathBuf> = Vec::with_capacity(given.len());
    for d in given {
        let versions = package_versions(d);
        if versions.is_empty() {
            dirs.push(d.clone());
            continue;
        }
        let mode = match crate::graph::load::CiConfig::read(d) {
            Ok(ci) => ci.and_then(|c| c.update_graph),
            Err(e) if opts.keep_going => {
                left_out.push(unreadable(d.display().to_string(), e.to_string()));
                continue;
            }
            Err(e) => return Err(Error::Source(e.to_string())),
        };
        for v in versions {
            if let Some(m) = mode {
                modes.insert(v.display().to_string(), m);
            }
            dirs.push(v);
        }
    }
    use rayon::prelude::*;
    let loaded: Vec<Result<BundleRecord, Error>> = dirs
        .par_iter()
        .map(|d| record_of_dir(d, &opts.naming))
        .collect();
    let mut records = Vec::with_capacity(loaded.len());
    for (d, r) in dirs.iter().zip(loaded) {
        let file = d.display().to_string();
        match r {
            Ok(r) => records.push((file, r)),
            Err(e) if opts.keep_going => left_out.push(unreadable(file, chain_text(&e))),
            Err(e) => return Err(e),
        }
    }
    if !images.is_empty() {
        let refs: Vec<String> = images
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let client = client.ok_or_else(|| {
            Error::Usage(format!(
                "{}: bundle images need a registry client",
                refs.join(", ")
            ))
        })?;
        let (p, bad) = pull_records(client, refs, opts.keep_going, reporter.progress())?;
        records.extend(p);
        left_out.extend(bad);
    }
    Ok((records, left_out, modes))
}

/// Pulls bundle images as records. Each pulled bundle becomes a record and
/// is dropped at once, so memory holds about PULL_CONCURRENCY bundles, not
/// all of them.
fn pull_records(
    client: &RegistryClient,
    refs: Vec<String>,
    keep_going: bool,
    mode: ProgressMode,
) -> Result<Pulled, Error> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::io("starting the async runtime", e))?;
    rt.block_on(async {
        use futures::StreamExt as _;
        let mut stream = std::pin::pin!(crate::oci::pull_bundle_stream(
            client.clone(),
            refs.clone(),
            PULL_CONCURRENCY,
            mode,
        ));
        let mut out = Vec::with_capacity(refs.len());
        let mut bad = Vec::new();
        let mut refs_iter = refs.iter();
        while let Some(result) = stream.next().await {
            let reference = refs_iter.next().map(String::as_str).unwrap_or("?");
            let one = (|| {
                let p = result.map_err(|e| {
                    Error::registry(e).context(format!("pulling bundle image {reference}"))
                })?;
                if let Some(f) = p
                    .bundle
                    .load_findings
                    .iter()
                    .find(|f| f.level == crate::diag::Level::Error)
                {
                    return Err(Error::bundle(format!("{reference}: {}", f.message)));
                }
                BundleRecord::from_bundle(&p.bundle, &p.reference).map_err(Error::bundle)
            })();
            match one {
                Ok(r) => out.push((reference.to_string(), r)),
                Err(e) if keep_going => bad.push(unreadable(reference.to_string(), chain_text(&e))),
                Err(e) => return Err(e),
            }
        }
        Ok((out, bad))
    })
}

/// The add mode a package was added with, as recorded in the index.
fn recorded_mode(tx: &rusqlite::Transaction<'_>, package: &str) -> Result<Mode, Error> {
    let recorded = index::schema::add_mode(tx, package).map_err(|e| {
        index::Error::sqlite(format!("reading the add mode of package {package}"), &e)
    })?;
    Ok(match recorded.as_str() {
        "semver" => Mode::Semver,
        "semver-skippatch" => Mode::SemverSkipPatch,
        _ => Mode::Replaces,
    })
}

/// Adds the records, each package in its mode: `forced`, else the ci.yaml
/// mode of its package directory, else the mode the package was added
/// with, else replaces. Packages go mode by mode (replaces, semver,
/// semver-skippatch), each group as one `index add` in that mode would, in
/// the same transaction.
fn add_by_mode(
    tx: &rusqlite::Transaction<'_>,
    records: Vec<(String, BundleRecord)>,
    unread: Vec<LeftOut>,
    dir_modes: &BTreeMap<String, Mode>,
    forced: Option<Mode>,
    opts: &index::add::AddOptions,
    cleared: &mut bool,
) -> Result<AddReport, Error> {
    let mut pkg_mode: BTreeMap<String, Mode> = BTreeMap::new();
    for (src, r) in &records {
        let m = forced.or_else(|| dir_modes.get(src).copied());
        if let Some(m) = m {
            pkg_mode.entry(r.package.clone()).or_insert(m);
        }
    }
    let rank = |m: Mode| match m {
        Mode::Replaces => 0,
        Mode::Semver => 1,
        Mode::SemverSkipPatch => 2,
    };
    let mut groups: BTreeMap<u8, (Mode, Vec<(String, BundleRecord)>)> = BTreeMap::new();
    for (src, r) in records {
        let m = match pkg_mode.get(&r.package) {
            Some(m) => *m,
            None => {
                let m = recorded_mode(tx, &r.package)?;
                pkg_mode.insert(r.package.clone(), m);
                m
            }
        };
        groups
            .entry(rank(m))
            .or_insert_with(|| (m, Vec::new()))
            .1
            .push((src, r));
    }
    if groups.is_empty() {
        groups.insert(0, (opts.mode, Vec::new()));
    }
    let mut unread = Some(unread);
    let mut total = AddReport::default();
    for (_, (mode, recs)) in groups {
        // The caller clears non-head bundles once, after the last unit: one
        // pass over the table, not one per package.
        let o = index::add::AddOptions {
            mode,
            keep_content: true,
            ..opts.clone()
        };
        *cleared |= mode != Mode::Replaces && !opts.keep_content;
        let r = if opts.keep_going {
            let lo = unread.take().unwrap_or_default();
            index::add::add_records_keep_going(tx, recs, lo, &o)
        } else {
            let recs = recs.into_iter().map(|(_, r)| r).collect();
            index::add::add_records(tx, recs, &o)
        }
        .map_err(index::Error::from)?;
        total.added.extend(r.added);
        total.packages.extend(r.packages);
        total.stranded.extend(r.stranded);
        total.left_out.extend(r.left_out);
    }
    Ok(total)
}

/// `index rm`: removes packages with their bundles, then every bundle left
/// in no channel.
pub fn remove_packages(database: &Path, packages: &[String]) -> Result<index::ops::Removed, Error> {
    let mut idx = Index::open_write(database).map_err(Error::index)?;
    idx.remove_packages(packages).map_err(Error::index)
}

/// `index prune`: keeps only `keep`.
pub fn prune(database: &Path, keep: &[String]) -> Result<index::ops::Removed, Error> {
    let mut idx = Index::open_write(database).map_err(Error::index)?;
    idx.prune(keep).map_err(Error::index)
}

/// `index prune-stranded`: removes bundles in no channel; their names.
pub fn prune_stranded(database: &Path) -> Result<Vec<String>, Error> {
    let mut idx = Index::open_write(database).map_err(Error::index)?;
    idx.prune_stranded().map_err(Error::index)
}

/// `index deprecatetruncate`: deprecates `bundles` (images or CSV names)
/// and removes everything below them in their upgrade chain.
pub fn deprecate_truncate(
    database: &Path,
    bundles: &[String],
    allow_package_removal: bool,
) -> Result<index::ops::Deprecated, Error> {
    if bundles.is_empty() {
        return Err(Error::Usage(
            "no bundles given: use --bundles REF or --bundles-file FILE".into(),
        ));
    }
    let mut idx = Index::open_write(database).map_err(Error::index)?;
    idx.deprecate_bundles(bundles, allow_package_removal)
        .map_err(Error::index)
}

/// What to export.
#[derive(Clone)]
pub struct ExportOptions {
    /// The index database.
    pub database: PathBuf,
    /// Packages to export; all when empty.
    pub packages: Vec<String>,
    /// The directory to write (absent or empty).
    pub to: PathBuf,
    /// How to reach the registries of bundles whose manifests the index no
    /// longer holds (their images are pulled, as opm's export pulls every
    /// bundle image). The client is made only when such a bundle is found;
    /// an explicit credential is for the one registry those images are on.
    pub registry: super::registry::RegistryOptions,
}

/// One package written by [`export`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportedPackage {
    /// The package.
    pub package: String,
    /// The bundle directories written.
    pub bundles: Vec<String>,
    /// How many of them were pulled from their images.
    pub pulled: usize,
}

/// Writes packages of the index as package-manifest directories (one per
/// package, a folder per bundle), as `opm index export` does. The
/// directory is written as a temporary sibling renamed into place, so a
/// failure leaves nothing half-written. `reporter` hears of each package
/// as it is written.
pub fn export(
    opts: &ExportOptions,
    reporter: &dyn Reporter,
) -> Result<Vec<ExportedPackage>, Error> {
    let to = &opts.to;
    let idx = Index::open_read(&opts.database).map_err(Error::index)?;
    let packages = if opts.packages.is_empty() {
        index::ops::package_names(&idx).map_err(Error::index)?
    } else {
        opts.packages.clone()
    };
    if to.exists()
        && std::fs::read_dir(to)
            .map_err(|e| Error::io(format!("reading {}", to.display()), e))?
            .next()
            .is_some()
    {
        return Err(Error::Destination(format!(
            "{}: output directory is not empty; export writes a new directory (remove it or choose another --to)",
            to.display()
        )));
    }
    let parent = to
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&parent)
        .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
    // 0777 less the umask, as mkdir gives (not tempdir's 0700).
    let tmp = tempfile::Builder::new()
        .prefix(".olm-catalog-export-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o777))
        .tempdir_in(&parent)
        .map_err(|e| Error::io(format!("creating a directory in {}", parent.display()), e))?;
    let mut out = Vec::new();
    let mut client: Option<RegistryClient> = None;
    for p in &packages {
        let missing = index::ops::export_missing(&idx, p).map_err(Error::index)?;
        if client.is_none() && !missing.is_empty() {
            let images: Vec<crate::oci::ImageRef> = missing
                .iter()
                .filter_map(|m| m.image.parse().ok())
                .collect();
            let hosts = match opts.registry.credential {
                Some(_) => super::registry::credential_hosts(None, &images)?,
                None => Vec::new(),
            };
            client = Some(super::registry::client(&opts.registry, &hosts)?);
        }
        let pulled = pull_missing(&missing, client.as_ref(), reporter)?;
        let w = index::ops::export_package(&idx, p, tmp.path(), &pulled).map_err(Error::index)?;
        reporter.note(&format!(
            "exported {} bundle(s) of {p} to {}{}",
            w.len(),
            to.display(),
            if pulled.is_empty() {
                String::new()
            } else {
                format!(" ({} pulled from their images)", pulled.len())
            }
        ));
        out.push(ExportedPackage {
            package: p.clone(),
            bundles: w,
            pulled: pulled.len(),
        });
    }
    if to.exists() {
        std::fs::remove_dir(to).map_err(|e| Error::io(format!("replacing {}", to.display()), e))?;
    }
    let kept = tmp.keep();
    if let Err(e) = std::fs::rename(&kept, to) {
        let _ = std::fs::remove_dir_all(&kept);
        return Err(Error::io(
            format!("moving the export to {}", to.display()),
            e,
        ));
    }
    Ok(out)
}

/// Pulls the images of bundles whose manifests the index no longer holds,
/// as the files of a bundle directory.
fn pull_missing(
    missing: &[index::ops::MissingContent],
    client: Option<&RegistryClient>,
    reporter: &dyn Reporter,
) -> Result<BTreeMap<String, index::ops::BundleFiles>, Error> {
    let mut out = BTreeMap::new();
    if missing.is_empty() {
        return Ok(out);
    }
    if let Some(m) = missing.iter().find(|m| m.image.is_empty()) {
        return Err(Error::Source(format!(
            "bundle {} has no manifests in the index (its csv and bundle columns were cleared) and no image to pull them from; rebuild the index with --keep-content",
            m.name
        )));
    }
    let client = client.ok_or_else(|| {
        Error::Usage(format!(
            "bundle {} has no manifests in the index, and no registry client was given to pull its image",
            missing[0].name
        ))
    })?;
    let refs: Vec<String> = missing.iter().map(|m| m.image.clone()).collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::io("starting the async runtime", e))?;
    // A bar on a terminal only, as before: an export's notes are its output.
    let mode = match reporter.progress() {
        ProgressMode::Off => ProgressMode::Off,
        _ => ProgressMode::TerminalOnly,
    };
    let pulled = rt.block_on(crate::oci::pull_bundles(
        client,
        &refs,
        PULL_CONCURRENCY,
        mode,
    ));
    for (m, result) in missing.iter().zip(pulled) {
        let p = result.map_err(|e| {
            Error::registry(e).context(format!(
                "bundle {} has no manifests in the index, and pulling its image {} failed (rebuild the index with --keep-content to export without pulling)",
                m.name, m.image
            ))
        })?;
        out.insert(m.image.clone(), bundle_files(&p.bundle)?);
    }
    Ok(out)
}

/// The files of a bundle directory holding `b`: its manifests, its
/// metadata files, and `metadata/annotations.yaml` written from the image
/// labels when the image had only those.
fn bundle_files(b: &crate::bundle::Bundle) -> Result<index::ops::BundleFiles, Error> {
    let mut files: index::ops::BundleFiles = Vec::new();
    for (f, _) in &b.manifest_files {
        files.push((f.rel_path.clone(), f.text.clone().into_bytes()));
    }
    let metadata = b
        .annotations
        .as_ref()
        .and_then(|a| a.source.as_ref())
        .into_iter()
        .chain(b.dependencies.as_ref())
        .chain(b.properties.as_ref());
    for md in metadata {
        files.push((md.file.rel_path.clone(), md.file.text.clone().into_bytes()));
    }
    if let Some(a) = b.annotations.as_ref().filter(|a| a.source.is_none()) {
        let v = serde_json::json!({ "annotations": a.values });
        let text = yaml_serde::to_string(&v).map_err(|e| {
            Error::bundle(format!(
                "{}: writing annotations.yaml: {e}",
                b.dir.display()
            ))
        })?;
        files.push(("metadata/annotations.yaml".into(), text.into_bytes()));
    }
    Ok(files)
}

/// What `index list` lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum ListWhat {
    /// Packages.
    Packages,
    /// Channels.
    Channels,
    /// Bundles per channel, then bundles in no channel (channel empty).
    Bundles,
}

/// What to list.
#[derive(Clone, Debug)]
pub struct ListOptions {
    /// The index database.
    pub database: PathBuf,
    /// Packages, channels or bundles.
    pub what: ListWhat,
}

/// The rows `index list` shows; serialized, the JSON array it prints.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(untagged)]
pub enum Listing {
    /// One row per package.
    Packages(Vec<index::ops::PackageRow>),
    /// One row per channel.
    Channels(Vec<index::ops::ChannelRow>),
    /// One row per bundle and channel.
    Bundles(Vec<index::ops::BundleRow>),
}

impl Listing {
    /// The rows as table cells, headers first.
    pub fn table(&self) -> Vec<Vec<String>> {
        let header = |h: &[&str]| h.iter().map(|c| c.to_string()).collect::<Vec<_>>();
        match self {
            Listing::Packages(r) => std::iter::once(header(&[
                "PACKAGE",
                "DEFAULT CHANNEL",
                "CHANNELS",
                "BUNDLES",
                "ADD MODE",
            ]))
            .chain(r.iter().map(|p| {
                vec![
                    p.package.clone(),
                    p.default_channel.clone(),
                    p.channels.to_string(),
                    p.bundles.to_string(),
                    p.add_mode.clone(),
                ]
            }))
            .collect(),
            Listing::Channels(r) => {
                std::iter::once(header(&["PACKAGE", "CHANNEL", "HEAD", "DEFAULT"]))
                    .chain(r.iter().map(|c| {
                        vec![
                            c.package.clone(),
                            c.channel.clone(),
                            c.head.clone(),
                            if c.default {
                                "yes".into()
                            } else {
                                String::new()
                            },
                        ]
                    }))
                    .collect()
            }
            Listing::Bundles(r) => std::iter::once(header(&[
                "PACKAGE", "CHANNEL", "BUNDLE", "VERSION", "REPLACES", "IMAGE",
            ]))
            .chain(r.iter().map(|b| {
                vec![
                    b.package.clone(),
                    b.channel.clone(),
                    b.name.clone(),
                    b.version.clone(),
                    b.replaces.clone(),
                    b.image.clone(),
                ]
            }))
            .collect(),
        }
    }
}

/// `index list`: the packages, channels or bundles of an index.
pub fn list(opts: &ListOptions) -> Result<Listing, Error> {
    let idx = Index::open_read(&opts.database).map_err(Error::index)?;
    Ok(match opts.what {
        ListWhat::Packages => Listing::Packages(index::ops::list_packages(&idx)?),
        ListWhat::Channels => Listing::Channels(index::ops::list_channels(&idx)?),
        ListWhat::Bundles => Listing::Bundles(index::ops::list_bundles(&idx)?),
    })
}
