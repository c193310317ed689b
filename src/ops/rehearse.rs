//! `graph rehearse`: what OLM would install for Subscriptions (OLM v0) or a
//! ClusterExtension (OLM v1), read from their files and rehearsed by
//! [`crate::resolve`] against catalogs read from any source
//! ([`super::catalog_source::load`]).

use std::path::{Path, PathBuf};

use crate::fbc::DeclarativeConfig;
use crate::oci::ImageRef;
use crate::resolve::{self, Catalog, ClusterCatalog, Rehearsal};

use super::catalog_source::{self, SourceKind, SourceOptions};
use super::registry::{self, RegistryOptions};
use super::Error;

/// What to rehearse, against which catalogs.
#[derive(Clone, Debug, Default)]
pub struct RehearseOptions {
    /// The one catalog (any source `catalog_source::load` reads).
    pub catalog: Option<String>,
    /// Named catalogs, `NAME=SOURCE` (OLM v1's ClusterCatalogs).
    pub catalogs: Vec<String>,
    /// `NAME=N`: a named catalog's priority.
    pub catalog_priority: Vec<String>,
    /// `NAME=K=V,...`: labels of a named catalog.
    pub catalog_labels: Vec<String>,
    /// `NAME=Available|Unavailable`: a named catalog's availability.
    pub catalog_availability: Vec<String>,
    /// Subscription files (OLM v0).
    pub subscriptions: Vec<PathBuf>,
    /// A ClusterExtension file (OLM v1).
    pub cluster_extension: Option<PathBuf>,
    /// CSVs on the cluster (OLM v0: `CSV@PACKAGE[=BUNDLE]`, the bundle a
    /// directory or image to read its properties from) or the installed
    /// version (OLM v1: at most one).
    pub installed: Vec<String>,
    /// How to reach the registries of image sources.
    pub registry: RegistryOptions,
}

enum Request {
    Subscriptions(Vec<resolve::Subscription>, Vec<resolve::InstalledCsv>),
    ClusterExtension(resolve::ClusterExtension),
}

/// Rehearses the request of `opts`. The request files are read before
/// any catalog, so a bad file is reported first; options that do not fit
/// together are [`Error::Usage`].
pub fn rehearse(opts: &RehearseOptions) -> Result<Rehearsal, Error> {
    let read = |p: &Path| {
        std::fs::read_to_string(p).map_err(|e| Error::io(format!("reading {}", p.display()), e))
    };
    let req = match (opts.subscriptions.as_slice(), &opts.cluster_extension) {
        ([], Some(f)) => {
            if opts.installed.len() > 1 {
                return Err(Error::Usage(
                    "--cluster-extension takes one --installed VERSION".into(),
                ));
            }
            Request::ClusterExtension(resolve::ClusterExtension::parse(&read(f)?, f)?)
        }
        ([], None) => {
            return Err(Error::Usage(
                "give --subscription FILE or --cluster-extension FILE".into(),
            ))
        }
        (files, _) => {
            let mut subs = Vec::new();
            for f in files {
                subs.push(resolve::Subscription::parse(&read(f)?, f)?);
            }
            let mut installed = Vec::new();
            for i in &opts.installed {
                installed.push(resolve::InstalledCsv::parse(i)?);
            }
            Request::Subscriptions(subs, installed)
        }
    };
    // Named catalogs (NAME=SOURCE), or the one catalog.
    let mut named: Vec<(String, Catalog)> = Vec::new();
    for arg in &opts.catalogs {
        let (name, source) = resolve::split_named("--catalog", arg).map_err(Error::Usage)?;
        if named.iter().any(|(n, _)| n == name) {
            return Err(Error::Usage(format!("--catalog {name} is given twice")));
        }
        let cfg = load_catalog(source, &opts.registry)?;
        named.push((name.to_string(), Catalog::from_fbc(&cfg, source)));
    }
    if let Some(source) = &opts.catalog {
        let cfg = load_catalog(source, &opts.registry)?;
        named.push((source.clone(), Catalog::from_fbc(&cfg, source)));
    }
    let installed_version = opts.installed.first().map(String::as_str);
    Ok(match &req {
        Request::Subscriptions(subs, installed) => {
            let [(_, cat)] = named.as_slice() else {
                return Err(Error::Usage(
                    "--subscription rehearses against one catalog".into(),
                ));
            };
            let mut installed = installed.clone();
            for i in installed.iter_mut().filter(|i| !i.source.is_empty()) {
                i.bundle = Some(installed_bundle(&opts.registry, i)?);
            }
            resolve::rehearse_subscriptions(cat, subs, &installed)
        }
        Request::ClusterExtension(c) if opts.catalog.is_some() => {
            resolve::rehearse_cluster_extension(&named[0].1, c, installed_version)?
        }
        Request::ClusterExtension(c) => {
            let mut cats: Vec<ClusterCatalog> = named
                .iter()
                .map(|(n, cat)| ClusterCatalog::new(n, cat))
                .collect();
            for arg in &opts.catalog_priority {
                let (name, prio) = resolve::parse_priority(arg).map_err(Error::Usage)?;
                named_catalog(&mut cats, "--catalog-priority", arg, &name)?.priority = prio;
            }
            for arg in &opts.catalog_labels {
                let (name, labels) = resolve::parse_labels(arg).map_err(Error::Usage)?;
                named_catalog(&mut cats, "--catalog-labels", arg, &name)?
                    .labels
                    .extend(labels);
            }
            for arg in &opts.catalog_availability {
                let (name, available) = resolve::parse_availability(arg).map_err(Error::Usage)?;
                named_catalog(&mut cats, "--catalog-availability", arg, &name)?.available =
                    available;
            }
            resolve::rehearse_cluster_extension_in(&cats, c, installed_version)?
        }
    })
}

/// The ClusterCatalog `name` that the option `flag ARG` sets.
fn named_catalog<'c, 'a>(
    cats: &'c mut [ClusterCatalog<'a>],
    flag: &str,
    arg: &str,
    name: &str,
) -> Result<&'c mut ClusterCatalog<'a>, Error> {
    cats.iter_mut()
        .find(|c| c.name == name)
        .ok_or_else(|| Error::Usage(format!("{flag} {arg}: no --catalog {name}")))
}

/// A catalog from any source; an image is read with a client whose
/// explicit credential (if any) is for the image's registry.
fn load_catalog(src: &str, opts: &RegistryOptions) -> Result<DeclarativeConfig, Error> {
    let client = if SourceKind::of(src) == SourceKind::Image {
        let image: ImageRef = src
            .parse()
            .map_err(|e| Error::Usage(format!("{src} is not an image reference: {e}")))?;
        let hosts = match opts.credential {
            Some(_) => registry::credential_host_of(&image)?,
            None => Vec::new(),
        };
        Some(registry::client(opts, &hosts)?)
    } else {
        None
    };
    let source = SourceOptions {
        bundle_image: None,
        client,
    };
    catalog_source::load(src, &source).map_err(|e| e.context(format!("loading {src}")))
}

/// The properties of an installed CSV read from a bundle directory or
/// image (`--installed CSV@PACKAGE=BUNDLE`).
fn installed_bundle(
    opts: &RegistryOptions,
    i: &resolve::InstalledCsv,
) -> Result<resolve::CatBundle, Error> {
    let cfg = load_catalog(&i.source, opts)
        .map_err(|e| e.context(format!("--installed {}: reading {}", i.name, i.source)))?;
    let b = match cfg.bundles.as_slice() {
        [one] => one,
        many => many.iter().find(|b| b.name == i.name).ok_or_else(|| {
            Error::Source(format!(
                "--installed {}: {} has {} bundles and none is named {}",
                i.name,
                i.source,
                many.len(),
                i.name
            ))
        })?,
    };
    Ok(resolve::CatBundle::from_properties(
        &i.name,
        &b.package,
        &b.properties,
    ))
}
