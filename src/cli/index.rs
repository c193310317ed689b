//! `index`, `render`, `migrate` and `validate` commands.
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};

use super::CmdResult;
use olm_catalog::fbc::write::OutputFormat;
use olm_catalog::graph::modes::Mode;
use olm_catalog::index::{self, Index};

/// `index` subcommands that work on a database.
#[derive(Subcommand)]
pub enum IndexCommand {
    /// Add bundle directories (or a file-based catalog) to an index database
    #[command(
        after_help = "Examples:\n  olm-catalog index add --database index.db --mode semver bundles/etcd/*\n  \
olm-catalog index add --database index.db --bundle-image-prefix quay.io/me/etcd-bundle bundles/etcd/0.9.4\n  \
olm-catalog index add --database index.db --from-fbc catalog/\n  \
olm-catalog index add --database index.db quay.io/me/etcd-bundle:v0.9.4 --tag quay.io/me/catalog:v1 --sign --key cosign.key"
    )]
    Add(Box<AddArgs>),
    /// Remove packages and their bundles
    #[command(
        after_help = "Example:\n  olm-catalog index rm --database index.db --packages etcd --packages prometheus"
    )]
    Rm(RmArgs),
    /// Keep only the given packages
    #[command(after_help = "Example:\n  olm-catalog index prune --database index.db --keep etcd")]
    Prune(PruneArgs),
    /// Remove bundles that are in no channel
    #[command(after_help = "Example:\n  olm-catalog index prune-stranded --database index.db")]
    PruneStranded(DbArg),
    /// Deprecate bundles and remove everything below them in their upgrade chain
    #[command(
        after_help = "Example:\n  olm-catalog index deprecatetruncate --database index.db --bundles quay.io/me/etcd-bundle:0.9.2"
    )]
    Deprecatetruncate(DeprecateArgs),
    /// Write a package as package-manifest directories
    #[command(
        after_help = "Example:\n  olm-catalog index export --database index.db --package etcd --to out/"
    )]
    Export(ExportArgs),
    /// List packages, channels or bundles
    #[command(
        after_help = "Examples:\n  olm-catalog index list packages --database index.db\n  olm-catalog index list bundles --database index.db -o json"
    )]
    List(ListArgs),
}

/// `--database`.
#[derive(Args)]
pub struct DbArg {
    /// Index database file
    #[arg(long, short = 'd', default_value = "index.db")]
    pub database: PathBuf,
}

/// `index add`.
#[derive(Args)]
pub struct AddArgs {
    /// Index database file (created if missing)
    #[arg(long, short = 'd', default_value = "index.db")]
    pub database: PathBuf,
    /// How channels are wired: CSV replaces/skips, or semantic-version order.
    /// Without it each package is added in its ci.yaml's updateGraph mode
    /// (package directories), else the mode it was added with, else replaces
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// Bundle directories, package directories (holding version folders and
    /// ci.yaml) or bundle image references (registry/repo:tag, oci:DIR:TAG)
    pub bundles: Vec<PathBuf>,
    /// More bundle directories (repeatable)
    #[arg(long = "bundles", value_name = "DIR", action = clap::ArgAction::Append)]
    pub bundle_flags: Vec<PathBuf>,
    /// A file with one bundle directory per line (no command-line length limit)
    #[arg(long, value_name = "FILE")]
    pub bundles_file: Option<PathBuf>,
    /// Record bundle images as PREFIX:<directory name> (the bundlepath column)
    #[arg(long, value_name = "PREFIX")]
    pub bundle_image_prefix: Option<String>,
    /// The image of one bundle: DIR=REF or CSVNAME=REF (repeatable)
    #[arg(long, value_name = "DIR=REF")]
    pub bundle_image: Vec<String>,
    /// Keep the csv and bundle columns of bundles that head no channel
    /// (semver modes clear them, as opm does)
    #[arg(long)]
    pub keep_content: bool,
    /// Keep an add that leaves bundles in no channel (opm refuses it with
    /// "add prunes bundle"; --permissive keeps it, as opm --permissive does)
    #[arg(long)]
    pub permissive: bool,
    /// Allow bundles with the olm.substitutesFor annotation (opm --enable-alpha)
    #[arg(long)]
    pub enable_alpha: bool,
    /// Leave out bundles and packages that cannot be added (and the bundles
    /// whose replaces chain needs them), add the rest, report what was left
    /// out and exit 1
    #[arg(long)]
    pub keep_going: bool,
    /// Report format: a summary on stderr, or a JSON report on stdout
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "text"
    )]
    pub output: AddFormat,
    /// Add a file-based catalog directory instead of bundle directories
    #[arg(long, value_name = "DIR")]
    pub from_fbc: Option<PathBuf>,
    /// With --tag, also build and push the index image (as `index build`)
    #[command(flatten)]
    pub image: super::image::CatalogImageArgs,
}

/// Output of `index add`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AddFormat {
    /// A summary on stderr.
    Text,
    /// A JSON report on stdout (the summary still goes to stderr).
    Json,
}

/// `index rm`.
#[derive(Args)]
pub struct RmArgs {
    /// Index database file
    #[arg(long, short = 'd', default_value = "index.db")]
    pub database: PathBuf,
    /// Packages to remove (repeatable or comma-separated)
    #[arg(long, alias = "operators", required = true, value_delimiter = ',')]
    pub packages: Vec<String>,
}

/// `index prune`.
#[derive(Args)]
pub struct PruneArgs {
    /// Index database file
    #[arg(long, short = 'd', default_value = "index.db")]
    pub database: PathBuf,
    /// Packages to keep (repeatable or comma-separated)
    #[arg(long, short = 'p', required = true, value_delimiter = ',')]
    pub keep: Vec<String>,
}

/// `index deprecatetruncate`.
#[derive(Args)]
pub struct DeprecateArgs {
    /// Index database file
    #[arg(long, short = 'd', default_value = "index.db")]
    pub database: PathBuf,
    /// Bundle images or CSV names (repeatable)
    #[arg(long, short = 'b', value_delimiter = ',')]
    pub bundles: Vec<String>,
    /// A file with one bundle reference per line
    #[arg(long, value_name = "FILE")]
    pub bundles_file: Option<PathBuf>,
    /// When a default channel head is given with the heads of all other
    /// channels of its package, remove the package (opm --allow-package-removal)
    #[arg(long)]
    pub allow_package_removal: bool,
}

/// `index export`.
#[derive(Args)]
pub struct ExportArgs {
    /// Index database file
    #[arg(long, short = 'd', default_value = "index.db")]
    pub database: PathBuf,
    /// Packages to export (repeatable or comma-separated; all if omitted)
    #[arg(long, value_delimiter = ',')]
    pub package: Vec<String>,
    /// Output directory
    #[arg(long, default_value = "downloaded")]
    pub to: PathBuf,
}

/// What `index list` lists.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ListWhat {
    /// Packages.
    Packages,
    /// Channels.
    Channels,
    /// Bundles per channel, then bundles in no channel (channel empty).
    Bundles,
}

/// Table or JSON.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ListFormat {
    /// Aligned columns.
    Table,
    /// A JSON array.
    Json,
}

/// `index list`.
#[derive(Args)]
pub struct ListArgs {
    /// What to list
    #[arg(value_enum)]
    pub what: ListWhat,
    /// Index database file
    #[arg(long, short = 'd', default_value = "index.db")]
    pub database: PathBuf,
    /// Output format
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "table"
    )]
    pub output: ListFormat,
}

fn read_lines(file: &PathBuf) -> anyhow::Result<Vec<String>> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect())
}

/// The registry client of an `index add`: one for the pulls, the base and
/// the push, so `--password-stdin` is read once and its credential serves
/// every request to its registry (see `RegistryArgs::client_for_command`).
fn add_client(
    args: &AddArgs,
    images: &[String],
) -> anyhow::Result<Option<olm_catalog::oci::RegistryClient>> {
    if images.is_empty() && args.image.tag.is_none() {
        return Ok(None);
    }
    let (dest, base) = args.image.dest_and_base()?;
    let mut sources: Vec<olm_catalog::oci::ImageRef> =
        images.iter().map(|r| r.parse()).collect::<Result<_, _>>()?;
    sources.extend(base);
    Ok(Some(
        args.image
            .registry
            .client_for_command(dest.as_ref(), &sources)?,
    ))
}

/// The arguments of `index add` that are bundle image references.
fn image_args(args: &AddArgs) -> anyhow::Result<Vec<String>> {
    let mut all: Vec<PathBuf> = args.bundles.clone();
    all.extend(args.bundle_flags.iter().cloned());
    if let Some(f) = &args.bundles_file {
        all.extend(read_lines(f)?.into_iter().map(PathBuf::from));
    }
    Ok(all
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| olm_catalog::oci::looks_like_image_ref(p))
        .collect())
}

/// Bundle records with their sources (directory or image reference), and,
/// with `--keep-going`, the bundles that could not be read.
/// Pulled bundle records with their references, and the pulls that failed.
type Pulled = (
    Vec<(String, index::record::BundleRecord)>,
    Vec<index::add::LeftOut>,
);

/// The third part: the ci.yaml `updateGraph` mode of bundles read from
/// package directories, by source.
type Loaded = (
    Vec<(String, index::record::BundleRecord)>,
    Vec<index::add::LeftOut>,
    BTreeMap<String, Mode>,
);

/// The bundle directories of a package directory (one holding version
/// folders: `VERSION/manifests/`, or `VERSION/bundle/manifests/`), sorted;
/// empty for anything else.
fn package_versions(dir: &std::path::Path) -> Vec<PathBuf> {
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

fn unreadable(file: String, reason: String) -> index::add::LeftOut {
    index::add::LeftOut {
        file,
        reason,
        ..Default::default()
    }
}

/// The bundle arguments of an `index add` in the order they are read and
/// written: first every bundle directory and image (one batch), then each
/// package directory on its own, so only one package's bundles are in
/// memory at a time.
fn add_units(args: &AddArgs) -> anyhow::Result<Vec<Vec<PathBuf>>> {
    let mut dirs: Vec<PathBuf> = args.bundles.clone();
    dirs.extend(args.bundle_flags.iter().cloned());
    if let Some(f) = &args.bundles_file {
        dirs.extend(read_lines(f)?.into_iter().map(PathBuf::from));
    }
    if dirs.is_empty() {
        bail!("no bundles given: pass bundle directories, --bundles DIR, --bundles-file FILE or --from-fbc DIR");
    }
    let mut loose = Vec::new();
    let mut packages = Vec::new();
    for d in dirs {
        if !olm_catalog::oci::looks_like_image_ref(&d.to_string_lossy())
            && !package_versions(&d).is_empty()
        {
            packages.push(vec![d]);
        } else {
            loose.push(d);
        }
    }
    let mut units = Vec::new();
    if !loose.is_empty() {
        units.push(loose);
    }
    units.extend(packages);
    Ok(units)
}

fn load_records(
    args: &AddArgs,
    client: Option<&olm_catalog::oci::RegistryClient>,
    dirs: Vec<PathBuf>,
) -> anyhow::Result<Loaded> {
    let mut naming = index::record::ImageNaming {
        prefix: args.bundle_image_prefix.clone(),
        explicit: BTreeMap::new(),
    };
    for spec in &args.bundle_image {
        let Some((k, v)) = spec.split_once('=') else {
            bail!("--bundle-image {spec:?}: expected DIR=REF or CSVNAME=REF");
        };
        naming
            .explicit
            .insert(k.trim_end_matches('/').to_string(), v.to_string());
    }
    // Arguments that are not paths on disk are bundle image references
    // (`registry/repo:tag`, `oci:DIR:TAG`): pulled concurrently, recorded by
    // reference as opm records them.
    let (images, given): (Vec<&PathBuf>, Vec<&PathBuf>) = dirs
        .iter()
        .partition(|d| olm_catalog::oci::looks_like_image_ref(&d.to_string_lossy()));
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
        let mode = match olm_catalog::graph::load::CiConfig::read(d) {
            Ok(ci) => ci.and_then(|c| c.update_graph),
            Err(e) if args.keep_going => {
                left_out.push(unreadable(d.display().to_string(), e.to_string()));
                continue;
            }
            Err(e) => bail!("{e}"),
        };
        for v in versions {
            if let Some(m) = mode {
                modes.insert(v.display().to_string(), m);
            }
            dirs.push(v);
        }
    }
    use rayon::prelude::*;
    let loaded: Vec<anyhow::Result<index::record::BundleRecord>> = dirs
        .par_iter()
        .map(|d| {
            let b = olm_catalog::bundle::Bundle::load_dir(d)?;
            if let Some(e) = b.first_load_error() {
                bail!("{e}");
            }
            let name = b.csv_manifest().map(|m| m.name.clone()).unwrap_or_default();
            let image = naming.image_for(d, &name);
            index::record::BundleRecord::from_bundle(&b, &image).map_err(anyhow::Error::msg)
        })
        .collect();
    let mut records = Vec::with_capacity(loaded.len());
    for (d, r) in dirs.iter().zip(loaded) {
        let file = d.display().to_string();
        match r {
            Ok(r) => records.push((file, r)),
            Err(e) if args.keep_going => left_out.push(unreadable(file, format!("{e:#}"))),
            Err(e) => return Err(e),
        }
    }
    if !images.is_empty() {
        let refs: Vec<String> = images
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        // --insecure, --ca-file and --username apply to the pulls too.
        let client = match client {
            Some(c) => c.clone(),
            None => args.image.registry.client_for(&[])?,
        };
        let mode = if args.image.registry.quiet {
            olm_catalog::oci::progress::ProgressMode::Off
        } else {
            olm_catalog::oci::progress::ProgressMode::Auto
        };
        // Each pulled bundle becomes a record and is dropped at once, so
        // memory holds about PULL_CONCURRENCY bundles, not all of them.
        let keep_going = args.keep_going;
        let pulled: anyhow::Result<Pulled> = rt.block_on(async {
            use futures::StreamExt as _;
            let mut stream = std::pin::pin!(olm_catalog::oci::pull_bundle_stream(
                client,
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
                    let p = result.with_context(|| format!("pulling bundle image {reference}"))?;
                    if let Some(f) = p
                        .bundle
                        .load_findings
                        .iter()
                        .find(|f| f.level == olm_catalog::diag::Level::Error)
                    {
                        bail!("{reference}: {}", f.message);
                    }
                    index::record::BundleRecord::from_bundle(&p.bundle, &p.reference)
                        .map_err(anyhow::Error::msg)
                })();
                match one {
                    Ok(r) => out.push((reference.to_string(), r)),
                    Err(e) if keep_going => {
                        bad.push(unreadable(reference.to_string(), format!("{e:#}")))
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok((out, bad))
        });
        let (p, bad) = pulled?;
        records.extend(p);
        left_out.extend(bad);
    }
    Ok((records, left_out, modes))
}

/// Reports bundles an `index rm` or `prune` also removed.
fn report_stranded(stranded: &[String]) {
    if !stranded.is_empty() {
        super::common::note(format!(
            "also removed {} bundle(s) left in no channel: {}",
            stranded.len(),
            stranded.join(", ")
        ));
    }
}

/// Pulls the images of bundles whose manifests the index no longer holds
/// (opm's `index export` pulls every bundle image).
fn pull_missing(
    missing: &[index::ops::MissingContent],
) -> anyhow::Result<BTreeMap<String, index::ops::BundleFiles>> {
    let mut out = BTreeMap::new();
    if missing.is_empty() {
        return Ok(out);
    }
    if let Some(m) = missing.iter().find(|m| m.image.is_empty()) {
        bail!(
            "bundle {} has no manifests in the index (its csv and bundle columns were cleared) and no image to pull them from; rebuild the index with --keep-content",
            m.name
        );
    }
    let refs: Vec<String> = missing.iter().map(|m| m.image.clone()).collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let pulled = rt.block_on(olm_catalog::oci::pull_bundles(&refs, PULL_CONCURRENCY));
    for (m, result) in missing.iter().zip(pulled) {
        let p = result.with_context(|| {
            format!(
                "bundle {} has no manifests in the index, and pulling its image {} failed (rebuild the index with --keep-content to export without pulling)",
                m.name, m.image
            )
        })?;
        let b = &p.bundle;
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
            // Annotations only as image labels: write them out as the file.
            {
                let v = serde_json::json!({ "annotations": a.values });
                files.push((
                    "metadata/annotations.yaml".into(),
                    yaml_serde::to_string(&v)?.into_bytes(),
                ));
            }
        }
        out.insert(m.image.clone(), files);
    }
    Ok(out)
}

/// Adds the records, each package in its mode: `forced` (--mode), else the
/// ci.yaml mode of its package directory, else the mode the package was
/// added with, else replaces. Packages go mode by mode (replaces, semver,
/// semver-skippatch), each group as one `index add` in that mode would, in
/// the same transaction.
fn add_by_mode(
    tx: &rusqlite::Transaction<'_>,
    records: Vec<(String, index::record::BundleRecord)>,
    unread: Vec<index::add::LeftOut>,
    dir_modes: &BTreeMap<String, Mode>,
    forced: Option<Mode>,
    opts: &index::add::AddOptions,
    cleared: &mut bool,
) -> anyhow::Result<index::add::AddReport> {
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
    let mut groups: BTreeMap<u8, (Mode, Vec<(String, index::record::BundleRecord)>)> =
        BTreeMap::new();
    for (src, r) in records {
        let m = match pkg_mode.get(&r.package) {
            Some(m) => *m,
            None => {
                let recorded = index::schema::add_mode(tx, &r.package)?;
                let m =
                    <Mode as clap::ValueEnum>::from_str(&recorded, false).unwrap_or(Mode::Replaces);
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
    let mut total = index::add::AddReport::default();
    for (_, (mode, recs)) in groups {
        let o = index::add::AddOptions {
            mode,
            ..opts.clone()
        };
        *cleared |= mode != Mode::Replaces && !opts.keep_content;
        let r = if opts.keep_going {
            let lo = unread.take().unwrap_or_default();
            index::add::add_records_keep_going(tx, recs, lo, &o)?
        } else {
            let recs = recs.into_iter().map(|(_, r)| r).collect();
            index::add::add_records(tx, recs, &o)?
        };
        total.added.extend(r.added);
        total.packages.extend(r.packages);
        total.stranded.extend(r.stranded);
        total.left_out.extend(r.left_out);
    }
    Ok(total)
}

/// Bundle images pulled at once by `index add`.
const PULL_CONCURRENCY: usize = 16;

impl IndexCommand {
    /// Runs the subcommand.
    pub fn run(self) -> CmdResult {
        match self {
            IndexCommand::Add(a) => {
                let opts = index::add::AddOptions {
                    mode: a.mode.unwrap_or(Mode::Replaces),
                    keep_content: a.keep_content,
                    permissive: a.permissive,
                    enable_alpha: a.enable_alpha,
                    keep_going: a.keep_going,
                };
                let fbc = match &a.from_fbc {
                    Some(d) => Some(olm_catalog::fbc::DeclarativeConfig::load_path(d)?),
                    None => None,
                };
                let images = if fbc.is_none() {
                    image_args(&a)?
                } else {
                    Vec::new()
                };
                let client = add_client(&a, &images)?;
                a.image.load_signing_key()?;
                let units = if fbc.is_none() {
                    add_units(&a)?
                } else {
                    Vec::new()
                };
                let mut idx = Index::open_or_create(&a.database)?;
                let mut left_out = Vec::new();
                let mut report = serde_json::Map::new();
                let summary = idx.write(|tx| match &fbc {
                    Some(cfg) => {
                        let r = index::fbc_import::import(tx, cfg)?;
                        for w in &r.warnings {
                            eprintln!("warning: {w}");
                        }
                        report.insert("packages".into(), serde_json::json!(r.packages));
                        Ok(format!(
                            "added {} package(s) from FBC: {}",
                            r.packages.len(),
                            r.packages.join(", ")
                        ))
                    }
                    None => {
                        // Read, add and drop one unit (a package directory)
                        // at a time, all in this transaction.
                        let mut r = index::add::AddReport::default();
                        let mut cleared = false;
                        for unit in units {
                            let (records, unread, dir_modes) =
                                load_records(&a, client.as_ref(), unit)?;
                            let one = add_by_mode(
                                tx,
                                records,
                                unread,
                                &dir_modes,
                                a.mode,
                                &opts,
                                &mut cleared,
                            )?;
                            r.added.extend(one.added);
                            r.packages.extend(one.packages);
                            r.stranded.extend(one.stranded);
                            r.left_out.extend(one.left_out);
                        }
                        // As when every semver-mode package comes after
                        // the replaces-mode ones: opm's ClearNonHeadBundles
                        // covers the whole database.
                        if cleared {
                            index::add::clear_non_head_bundles(tx)?;
                        }
                        if !r.stranded.is_empty() {
                            eprintln!(
                                "warning: --permissive: add prunes {} bundle(s), kept in no channel (`index prune-stranded` removes them): {}",
                                r.stranded.len(),
                                index::add::first_few(&r.stranded)
                            );
                        }
                        for l in &r.left_out {
                            let what = if !l.bundle.is_empty() {
                                format!("bundle {}", l.bundle)
                            } else if !l.package.is_empty() {
                                format!("package {}", l.package)
                            } else {
                                "bundle".to_string()
                            };
                            let deps = if l.dependents.is_empty() {
                                String::new()
                            } else {
                                format!(" (left out with it: {})", l.dependents.join(", "))
                            };
                            eprintln!("left out {what}: {}: {}{deps}", l.file, l.reason);
                        }
                        let mut text = format!(
                            "added {} bundle(s) to {} package(s): {}",
                            r.added.len(),
                            r.packages.len(),
                            r.packages.iter().cloned().collect::<Vec<_>>().join(", ")
                        );
                        if !r.left_out.is_empty() {
                            let bundles = r
                                .left_out
                                .iter()
                                .map(|l| if l.bundle.is_empty() && !l.package.is_empty() {
                                    l.dependents.len().max(1)
                                } else {
                                    1
                                })
                                .sum::<usize>();
                            text.push_str(&format!(
                                "; left out {} bundle(s) ({} problem(s), listed above)",
                                bundles,
                                r.left_out.len()
                            ));
                        }
                        report.insert("added".into(), serde_json::json!(r.added));
                        report.insert("packages".into(), serde_json::json!(r.packages));
                        report.insert("stranded".into(), serde_json::json!(r.stranded));
                        report.insert("left_out".into(), serde_json::json!(r.left_out));
                        left_out = r.left_out;
                        Ok(text)
                    }
                })?;
                idx.finish()?;
                super::common::note(format!("{}: {summary}", a.database.display()));
                if a.output == AddFormat::Json {
                    report.insert(
                        "database".into(),
                        serde_json::json!(a.database.display().to_string()),
                    );
                    println!("{}", serde_json::to_string_pretty(&report)?);
                }
                let code = match a.image.tag.clone() {
                    Some(tag) => a
                        .image
                        .build_and_push_with(&a.database, &tag, client.as_ref())?,
                    None => 0,
                };
                Ok(if left_out.is_empty() {
                    code
                } else {
                    code.max(1)
                })
            }
            IndexCommand::Rm(a) => {
                let mut idx = Index::open_write(&a.database)?;
                let r = idx.write(|tx| index::ops::remove_packages(tx, &a.packages))?;
                super::common::note(format!("removed package(s): {}", r.packages.join(", ")));
                report_stranded(&r.stranded);
                Ok(0)
            }
            IndexCommand::Prune(a) => {
                let mut idx = Index::open_write(&a.database)?;
                let r = idx.write(|tx| index::ops::prune(tx, &a.keep))?;
                super::common::note(format!(
                    "pruned {} package(s): {}",
                    r.packages.len(),
                    r.packages.join(", ")
                ));
                report_stranded(&r.stranded);
                Ok(0)
            }
            IndexCommand::PruneStranded(a) => {
                let mut idx = Index::open_write(&a.database)?;
                let r = idx.write(index::ops::prune_stranded)?;
                super::common::note(format!(
                    "removed {} stranded bundle(s){}",
                    r.len(),
                    if r.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", r.join(", "))
                    }
                ));
                Ok(0)
            }
            IndexCommand::Deprecatetruncate(a) => {
                let mut refs = a.bundles.clone();
                if let Some(f) = &a.bundles_file {
                    refs.extend(read_lines(f)?);
                }
                if refs.is_empty() {
                    bail!("no bundles given: use --bundles REF or --bundles-file FILE");
                }
                let mut idx = Index::open_write(&a.database)?;
                let r = idx.write(|tx| {
                    index::ops::deprecate_bundles(tx, &refs, a.allow_package_removal)
                })?;
                if !r.packages.is_empty() {
                    super::common::note(format!("removed package(s): {}", r.packages.join(", ")));
                }
                super::common::note(format!(
                    "deprecated {} bundle(s){}; removed {} below them{}",
                    r.deprecated.len(),
                    if r.deprecated.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", r.deprecated.join(", "))
                    },
                    r.removed.len(),
                    if r.removed.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", r.removed.join(", "))
                    }
                ));
                Ok(0)
            }
            IndexCommand::Export(a) => {
                let idx = Index::open_read(&a.database)?;
                let packages = if a.package.is_empty() {
                    index::ops::package_names(&idx.conn)?
                } else {
                    a.package.clone()
                };
                // Written into a temporary sibling and renamed at the end, so
                // a failure leaves nothing half-written.
                if a.to.exists()
                    && std::fs::read_dir(&a.to)
                        .with_context(|| format!("reading {}", a.to.display()))?
                        .next()
                        .is_some()
                {
                    bail!(
                        "{}: output directory is not empty; export writes a new directory (remove it or choose another --to)",
                        a.to.display()
                    );
                }
                let parent =
                    a.to.parent()
                        .filter(|p| !p.as_os_str().is_empty())
                        .map(PathBuf::from)
                        .unwrap_or_else(|| PathBuf::from("."));
                std::fs::create_dir_all(&parent)
                    .with_context(|| format!("creating {}", parent.display()))?;
                // 0777 less the umask, as mkdir gives (not tempdir's 0700).
                let tmp = tempfile::Builder::new()
                    .prefix(".olm-catalog-export-")
                    .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o777))
                    .tempdir_in(&parent)
                    .with_context(|| format!("creating a directory in {}", parent.display()))?;
                for p in &packages {
                    let pulled = pull_missing(&index::ops::export_missing(&idx, p)?)?;
                    let w = index::ops::export_package(&idx, p, tmp.path(), &pulled)?;
                    super::common::note(format!(
                        "exported {} bundle(s) of {p} to {}{}",
                        w.len(),
                        a.to.display(),
                        if pulled.is_empty() {
                            String::new()
                        } else {
                            format!(" ({} pulled from their images)", pulled.len())
                        }
                    ));
                }
                if a.to.exists() {
                    std::fs::remove_dir(&a.to)
                        .with_context(|| format!("replacing {}", a.to.display()))?;
                }
                let kept = tmp.keep();
                if let Err(e) = std::fs::rename(&kept, &a.to) {
                    let _ = std::fs::remove_dir_all(&kept);
                    return Err(anyhow::Error::new(e)
                        .context(format!("moving the export to {}", a.to.display())));
                }
                Ok(0)
            }
            IndexCommand::List(a) => {
                let idx = Index::open_read(&a.database)?;
                let (json, rows): (String, Vec<Vec<String>>) = match a.what {
                    ListWhat::Packages => {
                        let r = index::ops::list_packages(&idx.conn)?;
                        let t = std::iter::once(vec![
                            "PACKAGE".into(),
                            "DEFAULT CHANNEL".into(),
                            "CHANNELS".into(),
                            "BUNDLES".into(),
                            "ADD MODE".into(),
                        ])
                        .chain(r.iter().map(|p| {
                            vec![
                                p.package.clone(),
                                p.default_channel.clone(),
                                p.channels.to_string(),
                                p.bundles.to_string(),
                                p.add_mode.clone(),
                            ]
                        }))
                        .collect();
                        (serde_json::to_string_pretty(&r)?, t)
                    }
                    ListWhat::Channels => {
                        let r = index::ops::list_channels(&idx.conn)?;
                        let t = std::iter::once(vec![
                            "PACKAGE".into(),
                            "CHANNEL".into(),
                            "HEAD".into(),
                            "DEFAULT".into(),
                        ])
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
                        .collect();
                        (serde_json::to_string_pretty(&r)?, t)
                    }
                    ListWhat::Bundles => {
                        let r = index::ops::list_bundles(&idx)?;
                        let t = std::iter::once(vec![
                            "PACKAGE".into(),
                            "CHANNEL".into(),
                            "BUNDLE".into(),
                            "VERSION".into(),
                            "REPLACES".into(),
                            "IMAGE".into(),
                        ])
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
                        .collect();
                        (serde_json::to_string_pretty(&r)?, t)
                    }
                };
                let mut out = std::io::stdout().lock();
                match a.output {
                    ListFormat::Json => writeln!(out, "{json}")?,
                    ListFormat::Table => {
                        let widths: Vec<usize> = (0..rows[0].len())
                            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
                            .collect();
                        for r in &rows {
                            let line: Vec<String> = r
                                .iter()
                                .zip(&widths)
                                .map(|(c, w)| format!("{c:<w$}"))
                                .collect();
                            writeln!(out, "{}", line.join("  ").trim_end())?;
                        }
                    }
                }
                Ok(0)
            }
        }
    }
}

/// `render`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  olm-catalog render index.db > catalog.json\n  \
olm-catalog render bundles/etcd/0.9.4 -o yaml\n  olm-catalog render catalog/\n  \
olm-catalog render quay.io/me/etcd-bundle:v0.9.4 oci:out/catalog:v1"
)]
pub struct RenderArgs {
    /// Index databases, bundle directories or FBC directories
    #[arg(required = true)]
    pub source: Vec<String>,
    /// Output format
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "json"
    )]
    pub output: OutputFormat,
    /// Image reference to record for a rendered bundle directory
    #[arg(long)]
    pub bundle_image: Option<String>,
    /// Run opm's migrations up to this level: none, bundle-object-to-csv-metadata
    #[arg(long, value_name = "LEVEL", default_value = "none")]
    pub migrate_level: String,
    // How to reach the registries of bundle and catalog images.
    #[command(flatten)]
    pub registry: super::image::RegistryFlags,
}

/// Pulls image sources for `render`: the runtime and client are made once,
/// on the first image.
struct ImageRenderer<'a> {
    flags: &'a super::image::RegistryFlags,
    sources: Vec<olm_catalog::oci::ImageRef>,
    state: Option<(tokio::runtime::Runtime, olm_catalog::oci::RegistryClient)>,
}

impl ImageRenderer<'_> {
    /// Renders a bundle image (its bundle, `image` set to the reference, as
    /// `opm render` does), or an index or catalog image (the catalog its
    /// label names), told apart by the image config's labels as opm does.
    fn render(&mut self, reference: &str) -> anyhow::Result<olm_catalog::fbc::DeclarativeConfig> {
        use olm_catalog::serve::image::{CONFIGS_LABEL, DATABASE_LABEL};
        use olm_catalog::serve::CatalogSource;
        let src: olm_catalog::oci::ImageRef = reference
            .parse()
            .with_context(|| format!("{reference} is not an image reference"))?;
        if self.state.is_none() {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("starting the async runtime")?;
            let client = self.flags.client_for_command(None, &self.sources)?;
            self.state = Some((rt, client));
        }
        let Some((rt, client)) = &self.state else {
            bail!("no registry client");
        };
        rt.block_on(async {
            let (_, config, _) = olm_catalog::oci::transfer::fetch_image(client, &src)
                .await
                .with_context(|| format!("fetching {reference}"))?;
            let has = |k: &str| {
                config
                    .pointer("/config/Labels")
                    .and_then(|l| l.get(k))
                    .and_then(|v| v.as_str())
                    .is_some()
            };
            if has(DATABASE_LABEL) || has(CONFIGS_LABEL) {
                let cat = olm_catalog::serve::image::fetch_catalog_with(client, reference).await?;
                return match &cat.source {
                    CatalogSource::Sqlite(p) => index::render::render_file(p)
                        .with_context(|| format!("rendering the index of {reference}")),
                    CatalogSource::Fbc(p) => Ok(olm_catalog::fbc::DeclarativeConfig::load_path(p)
                        .with_context(|| format!("reading the catalog of {reference}"))?),
                };
            }
            if !has(olm_catalog::bundle::keys::MEDIATYPE) {
                bail!(
                    "{reference}: not a bundle, index or catalog image: its config has none of the labels {}, {DATABASE_LABEL}, {CONFIGS_LABEL}",
                    olm_catalog::bundle::keys::MEDIATYPE
                );
            }
            let limits = olm_catalog::oci::layer::UnpackLimits::default();
            let pulled = olm_catalog::oci::pull_bundle(client, reference, &limits)
                .await
                .with_context(|| format!("pulling bundle image {reference}"))?;
            let fb = index::render::bundle_to_fbc(&pulled.bundle, reference)
                .map_err(|e| anyhow::anyhow!("{reference}: {e}"))?;
            let mut cfg = olm_catalog::fbc::DeclarativeConfig::default();
            cfg.bundles.push(fb);
            Ok(cfg)
        })
    }
}

/// Loads any supported source into FBC.
fn load_source(
    src: &str,
    bundle_image: Option<&str>,
) -> anyhow::Result<olm_catalog::fbc::DeclarativeConfig> {
    let p = std::path::Path::new(src);
    if p.is_file() {
        return index::render::render_file(p);
    }
    if p.join("manifests").is_dir() && p.join("metadata").is_dir() {
        let b = olm_catalog::bundle::Bundle::load_dir(p)?;
        let fb = index::render::bundle_to_fbc(&b, bundle_image.unwrap_or(""))
            .map_err(anyhow::Error::msg)?;
        let mut cfg = olm_catalog::fbc::DeclarativeConfig::default();
        cfg.bundles.push(fb);
        return Ok(cfg);
    }
    if p.is_dir() {
        return Ok(olm_catalog::fbc::DeclarativeConfig::load_path(p)?);
    }
    bail!("{src}: no such file or directory, nor an image reference (REGISTRY/REPO:TAG, REGISTRY/REPO@DIGEST or oci:DIR:TAG)")
}

impl RenderArgs {
    /// Runs `render`.
    pub fn run(self) -> CmdResult {
        let mut all = olm_catalog::fbc::DeclarativeConfig::default();
        let is_image = |s: &str| olm_catalog::serve::image::is_image_ref(s);
        let mut images = ImageRenderer {
            flags: &self.registry,
            sources: self
                .source
                .iter()
                .filter(|s| is_image(s))
                .filter_map(|s| s.parse().ok())
                .collect(),
            state: None,
        };
        for s in &self.source {
            let c = if is_image(s) {
                images.render(s)?
            } else {
                load_source(s, self.bundle_image.as_deref())?
            };
            all.packages.extend(c.packages);
            all.channels.extend(c.channels);
            all.bundles.extend(c.bundles);
            all.deprecations.extend(c.deprecations);
            all.others.extend(c.others);
        }
        olm_catalog::fbc::migrate::migrate(&mut all, &self.migrate_level)
            .map_err(|e| anyhow::anyhow!("--migrate-level: {e}"))?;
        let stdout = std::io::stdout();
        let mut w = std::io::BufWriter::new(stdout.lock());
        olm_catalog::fbc::write::write(&all, self.output, &mut w)?;
        w.flush()?;
        Ok(0)
    }
}

/// `migrate`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  olm-catalog migrate index.db catalog/ -o yaml\n  \
olm-catalog migrate old-catalog/ catalog/ --migrate-level bundle-object-to-csv-metadata\n  \
olm-catalog migrate quay.io/me/index:v1 catalog/"
)]
pub struct MigrateArgs {
    /// Index database, FBC directory, or index or catalog image
    pub source: String,
    /// Output directory (one <package>/catalog.json per package)
    pub out_dir: PathBuf,
    /// Output format
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "json"
    )]
    pub output: OutputFormat,
    /// Run opm's migrations up to this level: none, bundle-object-to-csv-metadata
    #[arg(long, value_name = "LEVEL", default_value = "none")]
    pub migrate_level: String,
    // How to reach the registry of an index or catalog image.
    #[command(flatten)]
    pub registry: super::image::RegistryFlags,
}

impl MigrateArgs {
    /// Runs `migrate`.
    pub fn run(self) -> CmdResult {
        let mut cfg = if olm_catalog::serve::image::is_image_ref(&self.source) {
            let mut images = ImageRenderer {
                flags: &self.registry,
                sources: self.source.parse().into_iter().collect(),
                state: None,
            };
            images.render(&self.source)?
        } else {
            let p = std::path::Path::new(&self.source);
            // As opm: catalogs only, not bundles.
            if p.join("manifests").is_dir() && p.join("metadata").is_dir() {
                bail!(
                    "{}: a bundle directory; migrate takes an index database, FBC directory or image (render a bundle with `render`)",
                    self.source
                );
            }
            load_source(&self.source, None)?
        };
        if !cfg.bundles.is_empty() && cfg.packages.is_empty() {
            bail!(
                "{}: a bundle image; migrate takes an index or catalog image",
                self.source
            );
        }
        let changed = olm_catalog::fbc::migrate::migrate(&mut cfg, &self.migrate_level)
            .map_err(|e| anyhow::anyhow!("--migrate-level: {e}"))?;
        if self.migrate_level != "none" {
            super::common::note(format!(
                "migrated {changed} bundle(s) to level {}",
                self.migrate_level
            ));
        }
        let out = self.out_dir.display();
        if self.out_dir.exists() && !self.out_dir.is_dir() {
            bail!("{out}: exists and is not a directory");
        }
        if self.out_dir.exists()
            && std::fs::read_dir(&self.out_dir)
                .map(|mut d| d.next().is_some())
                .unwrap_or(false)
        {
            bail!("{}: output directory is not empty", self.out_dir.display());
        }
        // Write into a temporary sibling and rename, so a failure leaves nothing half-written.
        let parent = self
            .out_dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."));
        // Errors name the destination, not the temporary directory the
        // user never asked for.
        if !parent.is_dir() {
            bail!(
                "{out}: cannot create the output directory: {} is not an existing directory",
                parent.display()
            );
        }
        let tmp = tempfile::Builder::new()
            .prefix(".olm-catalog-migrate-")
            .tempdir_in(&parent)
            .map_err(|e| {
                anyhow::anyhow!(
                    "{out}: cannot create the output directory in {}: {}",
                    parent.display(),
                    e.kind()
                )
            })?;
        olm_catalog::fbc::write::write_dir(&cfg, self.output, tmp.path())
            .map_err(|e| anyhow::anyhow!("{out}: cannot write the catalog: {}", io_cause(&e)))?;
        if self.out_dir.exists() {
            std::fs::remove_dir(&self.out_dir)
                .with_context(|| format!("{out}: cannot replace the empty directory"))?;
        }
        std::fs::rename(tmp.keep(), &self.out_dir)
            .with_context(|| format!("{out}: cannot move the written catalog into place"))?;
        super::common::note(format!(
            "wrote {} package(s) to {}",
            cfg.packages.len(),
            self.out_dir.display()
        ));
        Ok(0)
    }
}

/// The innermost cause of `e` when it is an I/O error (its kind only: its
/// own text may name a temporary path), else `e` itself.
fn io_cause(e: &anyhow::Error) -> String {
    match e.root_cause().downcast_ref::<std::io::Error>() {
        Some(io) => io.kind().to_string(),
        None => format!("{e:#}"),
    }
}

/// `validate`.
#[derive(Args)]
#[command(after_help = "Example:\n  olm-catalog validate catalog/ -o json")]
pub struct ValidateArgs {
    /// FBC directory
    pub dir: PathBuf,
    /// Output format of findings (--format is an older name)
    #[arg(
        long = "output",
        short = 'o',
        alias = "format",
        value_enum,
        default_value = "human"
    )]
    pub format: olm_catalog::diag::Format,
}

impl ValidateArgs {
    /// Runs `validate`.
    pub fn run(self) -> CmdResult {
        let report_of = |findings| olm_catalog::diag::Report {
            subject: self.dir.display().to_string(),
            findings,
        };
        let mut report = match olm_catalog::fbc::DeclarativeConfig::load_path(&self.dir) {
            Ok(cfg) => report_of(olm_catalog::fbc::validate::validate(&cfg)),
            // A path that is missing or unreadable is an I/O failure (exit
            // 2), not a finding about the catalog.
            Err(e @ olm_catalog::fbc::FbcError::Io { .. }) => return Err(e.into()),
            Err(e) => report_of(vec![olm_catalog::diag::Finding::error(
                "fbc-load",
                e.to_string(),
            )]),
        };
        report.sort();
        let reports = [report];
        let text = match self.format {
            olm_catalog::diag::Format::Human => olm_catalog::diag::render_human(&reports, false),
            olm_catalog::diag::Format::Json => olm_catalog::diag::render_json(&reports),
            olm_catalog::diag::Format::Sarif => {
                olm_catalog::diag::render_sarif(&reports, &|_| None)
            }
        };
        print!("{text}");
        Ok(if reports[0].errors() > 0 { 1 } else { 0 })
    }
}

/// `init`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  olm-catalog init etcd --default-channel stable --description README.md --icon icon.png > catalog/etcd/index.json\n  \
olm-catalog init etcd -c stable -o yaml"
)]
pub struct InitArgs {
    /// Package name
    pub package: String,
    /// The channel that subscriptions will default to if unspecified
    #[arg(long, short = 'c', value_name = "CHANNEL", default_value = "")]
    pub default_channel: String,
    /// Path to the package's icon (an image: PNG, JPEG, GIF, WebP, BMP, TIFF, ICO, PSD or SVG)
    #[arg(long, short = 'i', value_name = "FILE")]
    pub icon: Option<PathBuf>,
    /// Path to the operator's README.md (or other documentation); no `-d`
    /// (opm's), which is `--database` in every olm-catalog command
    #[arg(long, value_name = "FILE")]
    pub description: Option<PathBuf>,
    /// Output format
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "json"
    )]
    pub output: OutputFormat,
}

/// The media type of an icon, from its first bytes as opm's `init` detects
/// it; SVG (text, which opm's detection rejects) is accepted too.
pub fn icon_media_type(data: &[u8]) -> Option<&'static str> {
    let starts = |m: &[u8]| data.starts_with(m);
    let at = |i: usize, m: &[u8]| data.get(i..i + m.len()) == Some(m);
    if starts(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if starts(&[0x89, b'P', b'N', b'G']) {
        Some("image/png")
    } else if starts(b"GIF") {
        Some("image/gif")
    } else if starts(b"RIFF") && at(8, b"WEBP") {
        Some("image/webp")
    } else if (starts(b"II*\0") || starts(b"MM\0*")) && at(8, b"CR") {
        Some("image/x-canon-cr2")
    } else if starts(b"II*\0") || starts(b"MM\0*") {
        Some("image/tiff")
    } else if starts(b"BM") {
        Some("image/bmp")
    } else if starts(&[b'I', b'I', 0xBC]) {
        Some("image/vnd.ms-photo")
    } else if starts(b"8BPS") {
        Some("image/vnd.adobe.photoshop")
    } else if starts(&[0, 0, 1, 0]) {
        Some("image/x-icon")
    } else if is_svg(data) {
        Some("image/svg+xml")
    } else {
        None
    }
}

/// Whether `data` is an SVG document: text whose first element is `<svg`
/// (after an XML declaration, comments or a doctype).
fn is_svg(data: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(data) else {
        return false;
    };
    let mut rest = text.trim_start_matches('\u{feff}').trim_start();
    loop {
        if rest.starts_with("<svg") {
            return true;
        }
        let end = if rest.starts_with("<?") {
            rest.find("?>").map(|i| i + 2)
        } else if rest.starts_with("<!--") {
            rest.find("-->").map(|i| i + 3)
        } else if rest.starts_with("<!") {
            rest.find('>').map(|i| i + 1)
        } else {
            None
        };
        match end {
            Some(e) => rest = rest[e..].trim_start(),
            None => return false,
        }
    }
}

impl InitArgs {
    /// Runs `init`: writes one `olm.package` object, as `opm init` does.
    pub fn run(self) -> CmdResult {
        use base64::Engine as _;
        let mut pkg = olm_catalog::fbc::Package {
            schema: "olm.package".into(),
            name: self.package.clone(),
            default_channel: self.default_channel.clone(),
            ..Default::default()
        };
        if let Some(p) = &self.description {
            let data = std::fs::read(p)
                .with_context(|| format!("{}: reading the description", p.display()))?;
            // As opm: bytes that are not UTF-8 become U+FFFD in the output.
            pkg.description = String::from_utf8_lossy(&data).into_owned();
        }
        if let Some(p) = &self.icon {
            let data =
                std::fs::read(p).with_context(|| format!("{}: reading the icon", p.display()))?;
            let Some(mediatype) = icon_media_type(&data) else {
                bail!(
                    "{}: the icon is not an image (PNG, JPEG, GIF, WebP, BMP, TIFF, ICO, PSD or SVG, by its first bytes)",
                    p.display()
                );
            };
            pkg.icon = Some(olm_catalog::fbc::Icon {
                base64data: base64::engine::general_purpose::STANDARD.encode(&data),
                mediatype: mediatype.into(),
            });
        }
        let cfg = olm_catalog::fbc::DeclarativeConfig {
            packages: vec![pkg],
            ..Default::default()
        };
        let stdout = std::io::stdout();
        let mut w = std::io::BufWriter::new(stdout.lock());
        olm_catalog::fbc::write::write(&cfg, self.output, &mut w)?;
        w.flush()?;
        Ok(0)
    }
}
