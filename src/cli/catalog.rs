//! `catalog build` and `catalog generate-dockerfile`: file-based catalog
//! images, as `opm generate dockerfile` + `docker build` make them.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, Subcommand};

use olm_catalog::oci::build;

use super::image::{parse_dest, CatalogImageArgs};
use super::{CmdResult, EXIT_FINDINGS};

/// `catalog` subcommands.
#[derive(Subcommand)]
pub enum CatalogCommand {
    /// Build a catalog image of a file-based catalog directory (under /configs)
    Build(CatalogBuildArgs),
    /// Write DIR.Dockerfile beside DIR, as `opm generate dockerfile` does
    GenerateDockerfile(GenerateDockerfileArgs),
}

impl CatalogCommand {
    pub fn run(self) -> CmdResult {
        match self {
            CatalogCommand::Build(a) => a.run(),
            CatalogCommand::GenerateDockerfile(a) => a.run(),
        }
    }
}

/// `catalog build`.
#[derive(Args)]
#[command(after_help = "Examples:
  olm-catalog catalog build catalog/ --tag quay.io/me/catalog:v1
  olm-catalog catalog build catalog/ --tag oci:out/catalog:v1
  olm-catalog catalog build catalog/ --tag quay.io/me/catalog:v1 --base quay.io/operator-framework/opm:v1.73.0

The catalog is validated first (as `olm-catalog validate`); an invalid one
is refused (exit 1) with its findings. The image is the base plus one layer
holding DIR under /configs, and the label
operators.operatorframework.io.index.configs.v1=/configs.

Default base (no --base, or --base self): the project's own image, made from
the running olm-catalog executable (and the shared libraries it needs), with
/bin/grpc_health_probe; entrypoint /bin/olm-catalog, command `serve /configs
--address 0.0.0.0`; user 65532, this machine's platform.
--base IMAGE (a registry reference or oci:DIR:TAG; every platform of a
multi-platform base gets the catalog): for an opm image, entrypoint /bin/opm
and command `serve /configs --cache-dir=/tmp/cache
--cache-enforce-integrity=false`: opm builds its cache when the container
starts (no container runs during this build to pre-build it); for a base
whose entrypoint is /bin/olm-catalog, the default base's entrypoint and
command. --base scratch: the catalog, label, entrypoint and command only.
Builds are reproducible: the same catalog and base give the same digest
(timestamps are SOURCE_DATE_EPOCH, or 1970-01-01). Without --tag the image
is written to oci:oci-images:catalog.")]
pub struct CatalogBuildArgs {
    /// File-based catalog directory
    pub dir: PathBuf,
    #[command(flatten)]
    pub image: CatalogImageArgs,
}

/// Validates the catalog at `dir`: prints its findings (stderr) and
/// returns whether it has errors.
fn catalog_has_errors(dir: &Path) -> bool {
    let report = olm_catalog::ops::image::validate_catalog(dir);
    let errors = report.errors() > 0;
    if !report.findings.is_empty() {
        eprint!("{}", olm_catalog::diag::render_human(&[report], false));
    }
    errors
}

impl CatalogBuildArgs {
    pub fn run(self) -> CmdResult {
        let tag = self
            .image
            .tag
            .as_deref()
            .unwrap_or("oci:oci-images:catalog");
        let dest = parse_dest(tag)?;
        anyhow::ensure!(
            self.dir.is_dir(),
            "{}: not a directory; give the file-based catalog's root",
            self.dir.display()
        );
        if catalog_has_errors(&self.dir) {
            eprintln!(
                "error: {} is not a valid catalog; nothing was built",
                self.dir.display()
            );
            return Ok(EXIT_FINDINGS);
        }
        let checked = self.image.check()?;
        self.image.build_and_push_image(
            checked,
            &dest,
            None,
            olm_catalog::ops::image::CatalogContent::Fbc(&self.dir),
        )
    }
}

/// `catalog generate-dockerfile`.
#[derive(Args)]
#[command(
    after_help = "Writes DIR.Dockerfile beside DIR (fails if it exists), the Dockerfile
`opm generate dockerfile DIR` writes: FROM the opm image, entrypoint
/bin/opm, command `serve /configs --cache-dir=/tmp/cache`, ADD DIR /configs,
a RUN that pre-builds opm's cache, and the configs label. Build it with
`docker build -f DIR.Dockerfile .` from DIR's parent. `catalog build` makes
the image without a daemon.

Examples:
  olm-catalog catalog generate-dockerfile catalog/
  olm-catalog catalog generate-dockerfile catalog/ -i quay.io/operator-framework/opm:v1.73.0 -l team=me"
)]
pub struct GenerateDockerfileArgs {
    /// File-based catalog directory
    pub dir: PathBuf,
    /// Image in which to build the catalog (holds /bin/opm and /bin/grpc_health_probe)
    #[arg(
        long,
        short = 'i',
        default_value = "quay.io/operator-framework/opm:latest"
    )]
    pub binary_image: String,
    /// Extra labels, KEY=VALUE (repeatable or comma-separated; last one of a key wins)
    #[arg(long, short = 'l', value_delimiter = ',')]
    pub extra_labels: Vec<String>,
}

impl GenerateDockerfileArgs {
    pub fn run(self) -> CmdResult {
        let mut labels = BTreeMap::new();
        for l in &self.extra_labels {
            let (k, v) = l
                .split_once('=')
                .ok_or_else(|| anyhow::anyhow!("invalid label {l:?}: expected KEY=VALUE"))?;
            labels.insert(k.to_string(), v.to_string());
        }
        let clean: PathBuf = self.dir.components().collect();
        let name = clean
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty())
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: give the catalog directory by a name (not `.` or `/`)",
                    self.dir.display()
                )
            })?;
        let parent = clean.parent().unwrap_or(Path::new(""));
        let path = parent.join(format!("{name}.Dockerfile"));
        let meta =
            std::fs::metadata(&clean).with_context(|| format!("reading {}", clean.display()))?;
        anyhow::ensure!(
            meta.is_dir(),
            "provided root path {:?} is not a directory",
            clean.display().to_string()
        );
        let text = build::catalog_dockerfile(&self.binary_image, &name, &labels);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .with_context(|| format!("writing {}", path.display()))?;
        std::io::Write::write_all(&mut f, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote {}", path.display());
        Ok(0)
    }
}
