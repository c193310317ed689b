//! `render-template`: a catalog template (basic, semver, substitutes) into
//! a file-based catalog, its bundle images resolved offline (bundle
//! directories, an earlier catalog for digest-only images) or pulled.

use std::path::PathBuf;

use crate::fbc::DeclarativeConfig;
use crate::graph::template::{self, Kind};

use super::registry::{ImageClients, RegistryOptions};
use super::{Error, Reporter};

/// Where the template comes from.
#[derive(Clone, Debug)]
pub enum TemplateInput {
    /// A file, read by [`render_template`].
    File(PathBuf),
    /// Text already read (standard input); messages call it `<stdin>`.
    Text(String),
}

/// What to render, and how bundle images become bundles.
#[derive(Clone, Debug)]
pub struct TemplateOptions {
    /// The template.
    pub input: TemplateInput,
    /// Its type; `None` reads it from the template's `schema` (as opm
    /// v1.73.0 does).
    pub kind: Option<Kind>,
    /// The directory whose subdirectory `T` is the bundle of an image
    /// tagged `T`. `None`: the directory above the template's directory, or
    /// the current directory for text.
    pub bundles_from: Option<PathBuf>,
    /// An FBC file or directory whose `olm.bundle` objects name the bundle
    /// of each image reference (for images given only by digest).
    pub images_from: Option<PathBuf>,
    /// Pull every bundle image from its registry (as opm does) instead of
    /// reading bundle directories; `oci:DIR:TAG` images are always read
    /// from their layout.
    pub pull: bool,
    /// How to reach the registries of pulled bundle images.
    pub registry: RegistryOptions,
    /// opm's migrations run on each rendered bundle image, up to this level
    /// (`opm alpha render-template --migrate-level`); "" or `none` (opm's
    /// default): none, so bundles keep their `olm.bundle.object`
    /// properties; `bundle-object-to-csv-metadata` or `all`: one
    /// `olm.csv.metadata` in their place (what the community pipeline's
    /// catalogs hold).
    pub migrate_level: String,
}

/// Renders a catalog template as `opm alpha render-template` does. A
/// semver template asking for `avoidSkipPatch` gets a warning on
/// `reporter`; template errors are [`Error::Graph`].
pub fn render_template(
    opts: &TemplateOptions,
    reporter: &dyn Reporter,
) -> Result<DeclarativeConfig, Error> {
    let (text, path) = match &opts.input {
        TemplateInput::File(path) => {
            let t = std::fs::read_to_string(path)
                .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
            (t, path.clone())
        }
        TemplateInput::Text(t) => (t.clone(), PathBuf::from("<stdin>")),
    };
    let dir = match (&opts.bundles_from, &opts.input) {
        (Some(d), _) => d.clone(),
        (None, TemplateInput::Text(_)) => PathBuf::from("."),
        (None, TemplateInput::File(path)) => path
            .canonicalize()
            .ok()
            .and_then(|p| p.parent().and_then(|p| p.parent()).map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from(".")),
    };
    let known = match &opts.images_from {
        Some(p) => template::image_names(&DeclarativeConfig::load_path(p)?),
        None => Default::default(),
    };
    let from_dirs = template::dir_renderer_with(&dir, known);
    let puller = Puller::new(opts.registry.clone())?;
    let pull = opts.pull;
    // An unknown level fails before any bundle is rendered, as opm's
    // NewMigrations does.
    let level = if opts.migrate_level.is_empty() {
        "none"
    } else {
        opts.migrate_level.as_str()
    };
    super::render::migrate_level(&mut DeclarativeConfig::default(), level)?;
    // opm hands the migrations to the bundle renderer (`action.Render`
    // with `Migrations`): each rendered bundle image is migrated, nothing
    // else of the template. Without a level a bundle keeps its
    // `olm.bundle.object` properties, as `opm render IMAGE` writes them.
    let render = |image: &str| {
        let b = if pull || image.starts_with("oci:") {
            puller.render(image)
        } else {
            from_dirs(image)
        }?;
        migrate_bundle(b, level)
    };
    let kind = match opts.kind {
        Some(k) => k,
        None => template::detect_kind(&text, &path)?,
    };
    if kind == Kind::Semver
        && template::parse_semver(&text, &path).is_ok_and(|t| t.avoid_skip_patch)
    {
        reporter.warning(template::AVOID_SKIP_PATCH_WARNING);
    }
    Ok(template::render_as(kind, &text, &path, &render)?)
}

/// One rendered bundle after opm's migrations up to `level` (a level
/// already known to be valid).
fn migrate_bundle(
    b: crate::fbc::Bundle,
    level: &str,
) -> Result<crate::fbc::Bundle, crate::graph::Error> {
    let mut cfg = DeclarativeConfig {
        bundles: vec![b],
        ..DeclarativeConfig::default()
    };
    crate::fbc::migrate::migrate(&mut cfg, level)
        .map_err(|e| crate::graph::Error::Render(e.to_string()))?;
    cfg.bundles
        .pop()
        .ok_or_else(|| crate::graph::Error::Render("migration dropped the bundle".into()))
}

/// Renders bundle images by pulling them (`oci:DIR:TAG` from an OCI layout,
/// other references from their registry); the clients and the runtime are
/// made on first use.
struct Puller {
    rt: std::sync::OnceLock<Result<tokio::runtime::Runtime, String>>,
    clients: ImageClients,
}

impl Puller {
    fn new(opts: RegistryOptions) -> Result<Puller, Error> {
        Ok(Puller {
            rt: std::sync::OnceLock::new(),
            clients: ImageClients::new(opts)?,
        })
    }

    fn render(&self, image: &str) -> Result<crate::fbc::Bundle, crate::graph::Error> {
        use crate::graph::Error::Render;
        let rt = self
            .rt
            .get_or_init(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| format!("starting the async runtime: {e}"))
            })
            .as_ref()
            .map_err(|e| Render(e.clone()))?;
        let pulling =
            |e: &dyn std::fmt::Display| Render(format!("pulling bundle image {image}: {e}"));
        let src: crate::oci::ImageRef = image.parse().map_err(|e| pulling(&e))?;
        let client = self.clients.client_for(&src).map_err(|e| pulling(&e))?;
        let limits = crate::oci::layer::UnpackLimits::default();
        let pulled = rt
            .block_on(crate::oci::pull_bundle(&client, image, &limits))
            .map_err(|e| pulling(&e))?;
        // A template's bundles are bundle images only (opm v1.73.0 renders
        // them with `AllowedRefMask: RefBundleImage`): an index or catalog
        // image is refused as opm refuses it, by its label.
        for (label, kind) in [
            (crate::serve::image::DATABASE_LABEL, "sqlite image"),
            (
                crate::serve::image::CONFIGS_LABEL,
                "declarative config image",
            ),
        ] {
            if pulled
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key(label))
            {
                return Err(Render(format!(
                    "cannot render {kind} {image}: not allowed (it has the {label} label; a template's bundles must be bundle images)"
                )));
            }
        }
        crate::graph::render_bundle::bundle_to_fbc(&pulled.bundle, image)
    }
}
