//! `render` and `migrate`: catalogs from any source, as FBC; and
//! `opm alpha render-graph`: a catalog's upgrade graphs as Mermaid.

use std::path::PathBuf;

use crate::fbc::write::OutputFormat;
use crate::fbc::DeclarativeConfig;
use crate::index;
use crate::oci::RegistryClient;

use super::catalog_source::{self, SourceKind, SourceOptions};
use super::{Error, Reporter};

/// What to render.
#[derive(Clone, Default)]
pub struct RenderOptions {
    /// How sources are read (bundle image of a bundle directory, the
    /// registry client for image sources).
    pub source: SourceOptions,
    /// opm's migrations to run on the result: `none` or
    /// `bundle-object-to-csv-metadata`.
    pub migrate_level: String,
    /// opm's `--alpha-image-ref-template`: the image recorded for a bundle
    /// rendered from a directory, made from its `{{.Package}}`,
    /// `{{.Name}}` and `{{.Version}}` (see [`image_from_template`]).
    pub image_ref_template: Option<String>,
}

/// Reads every source (see [`catalog_source::load`]) into one config, in
/// order, and runs the migrations of `opts.migrate_level` on it, as
/// `opm render` does.
pub fn render(sources: &[String], opts: &RenderOptions) -> Result<DeclarativeConfig, Error> {
    let mut all = match &opts.image_ref_template {
        None => catalog_source::load_all(sources, &opts.source)?,
        Some(template) => {
            let mut all = DeclarativeConfig::default();
            for s in sources {
                let mut cfg = catalog_source::load(s, &opts.source)?;
                if SourceKind::of(s) == SourceKind::BundleDir {
                    for b in &mut cfg.bundles {
                        b.image = image_from_template(template, b)?;
                    }
                }
                catalog_source::append(&mut all, cfg);
            }
            all
        }
    };
    as_opm_renders(&mut all);
    migrate_level(&mut all, &opts.migrate_level)?;
    Ok(all)
}

/// What opm v1.73.0's `render` does to every bundle of every source
/// (`alpha/action/render.go`, `Run`), whatever its kind: the
/// `olm.bundle.object` properties move to the end of the properties (in
/// their order), and the related images are sorted by image. A catalog
/// read from an FBC directory or image comes out so too.
pub fn as_opm_renders(cfg: &mut DeclarativeConfig) {
    for b in &mut cfg.bundles {
        let (objects, mut props): (Vec<_>, Vec<_>) = std::mem::take(&mut b.properties)
            .into_iter()
            .partition(|p| p.kind == "olm.bundle.object");
        props.extend(objects);
        b.properties = props;
        b.related_images.sort_by(|a, b| a.image.cmp(&b.image));
    }
}

/// The image reference `template` makes for bundle `b`, as opm v1.73.0's
/// `render --alpha-image-ref-template` executes its Go template
/// (`alpha/action/render.go`, `templateBundleImageRef`): `{{.Package}}`,
/// `{{.Name}}` and `{{.Version}}` (the version of the `olm.package`
/// property) are replaced, spaces inside the braces allowed; any other
/// action is an error naming it. The bundle's related images are left as
/// they are, as opm leaves them.
pub fn image_from_template(template: &str, b: &crate::fbc::Bundle) -> Result<String, Error> {
    let version = b
        .properties
        .iter()
        .find(|p| p.kind == "olm.package")
        .map_or("", |p| p.str_field("version"));
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find("}}").ok_or_else(|| {
            Error::Usage(format!(
                "--alpha-image-ref-template {template:?}: unclosed action"
            ))
        })?;
        match after[..end].trim() {
            ".Package" => out.push_str(&b.package),
            ".Name" => out.push_str(&b.name),
            ".Version" => out.push_str(version),
            other => {
                return Err(Error::Usage(format!(
                    "--alpha-image-ref-template {template:?}: unknown action {{{{{other}}}}} (known: {{{{.Package}}}}, {{{{.Name}}}}, {{{{.Version}}}})"
                )))
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Renders `sources` as [`render`] does and writes the result to `w` in
/// `format`. A single local index database is read and written one package
/// at a time ([`index::render::index_packages`]): the same bytes, while
/// memory holds one package's manifests instead of the whole index's. A
/// read error past the first package leaves the packages before it written.
pub fn render_to(
    sources: &[String],
    opts: &RenderOptions,
    format: OutputFormat,
    w: &mut dyn std::io::Write,
) -> Result<(), Error> {
    if let [one] = sources {
        if let Some(idx) = local_index(one)? {
            migrate_level(&mut DeclarativeConfig::default(), &opts.migrate_level)?;
            for part in index::render::index_packages(&idx, None).map_err(Error::index)? {
                let mut part = part.map_err(Error::index)?;
                as_opm_renders(&mut part);
                migrate_level(&mut part, &opts.migrate_level)?;
                crate::fbc::write::write(&part, format, w)?;
            }
            return Ok(());
        }
    }
    let all = render(sources, opts)?;
    crate::fbc::write::write(&all, format, w)?;
    Ok(())
}

/// What `opm alpha render-graph` draws of a catalog.
#[derive(Clone, Debug, Default)]
pub struct RenderGraphOptions {
    /// Only this package (opm's `--package-name`); `None`: every package.
    pub package: Option<String>,
    /// opm's `--minimum-edge`: the entry whose version bounds the graph
    /// from below; `None`: no bound.
    pub minimum_edge: Option<String>,
    /// opm's `--draw-v0-semantics`: mark skipped bundles and the edges
    /// into them.
    pub v0_semantics: bool,
}

/// Keeps of `cfg` only what belongs to `package`: its `olm.package`,
/// channels, bundles and deprecations; objects of other schemas go.
pub fn select_package(cfg: &mut DeclarativeConfig, package: &str) {
    cfg.packages.retain(|x| x.name == package);
    cfg.channels.retain(|x| x.package == package);
    cfg.bundles.retain(|x| x.package == package);
    cfg.deprecations.retain(|x| x.package == package);
    cfg.others.clear();
}

/// The upgrade graphs `opm alpha render-graph` draws of `cfg`, read from
/// `source`: every package's, or only `package`'s (none when the catalog
/// does not have it).
pub fn render_graph_packages(
    mut cfg: DeclarativeConfig,
    source: &std::path::Path,
    package: Option<&str>,
) -> Vec<crate::graph::PackageGraph> {
    if let Some(p) = package {
        select_package(&mut cfg, p);
    }
    crate::graph::PackageGraph::from_fbc(&cfg, source)
}

/// `opm alpha render-graph` of one catalog read from `source`: the graphs
/// of [`render_graph_packages`] as Mermaid, drawn by the writer of
/// `render-template -o mermaid`. A minimum edge that is not an entry, or a
/// bundle without a valid version, is [`Error::Graph`].
pub fn render_graph(
    cfg: DeclarativeConfig,
    source: &std::path::Path,
    opts: &RenderGraphOptions,
) -> Result<String, Error> {
    use crate::graph::draw::{mermaid_with, MermaidOptions};
    let package = opts.package.as_deref();
    let graphs = render_graph_packages(cfg, source, package);
    let draw = MermaidOptions {
        min_edge: opts.minimum_edge.clone(),
        package_filter: package.is_some(),
        v0_semantics: opts.v0_semantics,
    };
    Ok(mermaid_with(&graphs, &draw)?)
}

/// The index database `source` names when it is a local SQLite file (what
/// [`catalog_source::load`] renders from a file with an SQLite header),
/// opened for reading.
fn local_index(source: &str) -> Result<Option<index::Index>, Error> {
    let p = std::path::Path::new(source);
    if SourceKind::of(source) != SourceKind::File || !index::render::is_index_file(p) {
        return Ok(None);
    }
    index::Index::open_read(p)
        .map(Some)
        .map_err(|e| Error::index(index::Error::from(e)))
}

/// Runs opm's migrations up to `level` on `cfg`; how many bundles changed.
pub(crate) fn migrate_level(cfg: &mut DeclarativeConfig, level: &str) -> Result<usize, Error> {
    let level = if level.is_empty() { "none" } else { level };
    crate::fbc::migrate::migrate(cfg, level)
        .map_err(|e| Error::Usage(format!("--migrate-level: {e}")))
}

/// What to migrate, and where.
#[derive(Clone)]
pub struct MigrateOptions {
    /// An index database, FBC directory, or index or catalog image.
    pub source: String,
    /// The directory to write (absent or empty): one
    /// `<package>/catalog.json` (or `.yaml`) per package.
    pub out_dir: PathBuf,
    /// JSON or YAML files.
    pub format: OutputFormat,
    /// opm's migrations to run: `none` or `bundle-object-to-csv-metadata`.
    pub migrate_level: String,
    /// The registry client, needed when `source` is an image.
    pub client: Option<RegistryClient>,
}

/// What [`migrate`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Migrated {
    /// Packages written.
    pub packages: usize,
    /// Bundles changed by the migrations of the level.
    pub migrated: usize,
}

/// Converts a catalog (SQLite index, FBC, index or catalog image; not a
/// bundle, as opm refuses one) into an FBC directory, as `opm migrate`
/// does. The directory is written as a temporary sibling and renamed into
/// place, so a failure leaves nothing half-written.
pub fn migrate(opts: &MigrateOptions, reporter: &dyn Reporter) -> Result<Migrated, Error> {
    let source = &opts.source;
    if SourceKind::of(source) == SourceKind::BundleDir {
        return Err(Error::Source(format!(
            "{source}: a bundle directory; migrate takes an index database, FBC directory or image (render a bundle with `render`)"
        )));
    }
    // A local index is read and written one package at a time, so memory
    // follows the largest package (see `render_to`).
    if let Some(idx) = local_index(source)? {
        migrate_level(&mut DeclarativeConfig::default(), &opts.migrate_level)?;
        let parts = index::render::index_packages(&idx, None).map_err(Error::index)?;
        let (mut packages, mut migrated) = (0, 0);
        write_new_dir(&opts.out_dir, |tmp| {
            for part in parts {
                let mut part = part.map_err(Error::index)?;
                as_opm_renders(&mut part);
                migrated += migrate_level(&mut part, &opts.migrate_level)?;
                packages += part.packages.len();
                write_dir(&part, opts.format, tmp, &opts.out_dir)?;
            }
            Ok(())
        })?;
        return Ok(migrated_notes(opts, reporter, packages, migrated));
    }
    let mut cfg = catalog_source::load(
        source,
        &SourceOptions {
            bundle_image: None,
            client: opts.client.clone(),
        },
    )?;
    if SourceKind::of(source) == SourceKind::Image
        && !cfg.bundles.is_empty()
        && cfg.packages.is_empty()
    {
        return Err(Error::Source(format!(
            "{source}: a bundle image; migrate takes an index or catalog image"
        )));
    }
    as_opm_renders(&mut cfg);
    let migrated = migrate_level(&mut cfg, &opts.migrate_level)?;
    write_new_dir(&opts.out_dir, |tmp| {
        write_dir(&cfg, opts.format, tmp, &opts.out_dir)
    })?;
    Ok(migrated_notes(opts, reporter, cfg.packages.len(), migrated))
}

/// What [`migrate`] tells the user once the directory is in place.
fn migrated_notes(
    opts: &MigrateOptions,
    reporter: &dyn Reporter,
    packages: usize,
    migrated: usize,
) -> Migrated {
    if !opts.migrate_level.is_empty() && opts.migrate_level != "none" {
        reporter.note(&format!(
            "migrated {migrated} bundle(s) to level {}",
            opts.migrate_level
        ));
    }
    reporter.note(&format!(
        "wrote {packages} package(s) to {}",
        opts.out_dir.display()
    ));
    Migrated { packages, migrated }
}

/// Writes `cfg` into `tmp` (one directory per package); errors name
/// `out_dir`.
fn write_dir(
    cfg: &DeclarativeConfig,
    format: OutputFormat,
    tmp: &std::path::Path,
    out_dir: &std::path::Path,
) -> Result<(), Error> {
    crate::fbc::write::write_dir(cfg, format, tmp).map_err(|e| {
        Error::Destination(format!(
            "{}: cannot write the catalog: {}",
            out_dir.display(),
            io_cause(&e)
        ))
    })
}

/// Makes the FBC directory `out_dir` (absent or empty): `fill` writes into
/// a temporary sibling, renamed into place when it succeeds. Errors name
/// `out_dir`, never the temporary directory the user did not ask for.
fn write_new_dir(
    out_dir: &std::path::Path,
    fill: impl FnOnce(&std::path::Path) -> Result<(), Error>,
) -> Result<(), Error> {
    let out = out_dir.display();
    if out_dir.exists() && !out_dir.is_dir() {
        return Err(Error::Destination(format!(
            "{out}: exists and is not a directory"
        )));
    }
    if out_dir.exists()
        && std::fs::read_dir(out_dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(false)
    {
        return Err(Error::Destination(format!(
            "{out}: output directory is not empty"
        )));
    }
    let parent = out_dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    if !parent.is_dir() {
        return Err(Error::Destination(format!(
            "{out}: cannot create the output directory: {} is not an existing directory",
            parent.display()
        )));
    }
    let tmp = tempfile::Builder::new()
        .prefix(".olm-catalog-migrate-")
        .tempdir_in(&parent)
        .map_err(|e| {
            Error::Destination(format!(
                "{out}: cannot create the output directory in {}: {}",
                parent.display(),
                e.kind()
            ))
        })?;
    fill(tmp.path())?;
    if out_dir.exists() {
        std::fs::remove_dir(out_dir)
            .map_err(|e| Error::io(format!("{out}: cannot replace the empty directory"), e))?;
    }
    std::fs::rename(tmp.keep(), out_dir).map_err(|e| {
        Error::io(
            format!("{out}: cannot move the written catalog into place"),
            e,
        )
    })?;
    Ok(())
}

/// The innermost cause of `e` when it is an I/O error (its kind only: its
/// own text may name a temporary path), else `e` itself.
fn io_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            return io.kind().to_string();
        }
        cause = c.source();
    }
    super::chain_text(e)
}
