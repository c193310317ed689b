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
    /// Copy every image a catalog references to another registry or oci:DIR,
    /// and write the catalog, mapping and ImageDigestMirrorSet for the copies
    Mirror(MirrorArgs),
}

impl CatalogCommand {
    pub fn run(self) -> CmdResult {
        match self {
            CatalogCommand::Build(a) => a.run(),
            CatalogCommand::GenerateDockerfile(a) => a.run(),
            CatalogCommand::Mirror(a) => a.run(),
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
    let findings = match olm_catalog::fbc::validate::validate_path(dir) {
        Ok(findings) => findings,
        Err(e) => vec![olm_catalog::diag::Finding::error("fbc-load", e.to_string())],
    };
    let mut report = olm_catalog::diag::Report {
        subject: dir.display().to_string(),
        findings,
    };
    report.sort();
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
        let dir = &self.dir;
        self.image
            .build_and_push_image(checked, &dest, None, |base, opts| {
                build::build_catalog_image(dir, base, opts)
                    .with_context(|| format!("building the catalog image of {}", dir.display()))
            })
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

// ---- catalog mirror ----------------------------------------------------

/// What `catalog mirror -o` prints on stdout.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum MirrorOutput {
    /// One line per image: copied, present, would copy, refused, failed
    Text,
    /// The whole report (images, digests, destinations, findings, counts)
    Json,
}

/// `catalog mirror`.
#[derive(Args)]
#[command(after_help = "Examples:
  olm-catalog catalog mirror catalog/ --to mirror.example.com:5000/olm --output-dir out/
  olm-catalog catalog mirror index.db --to mirror.example.com:5000/olm --output-dir out/ --dry-run
  olm-catalog catalog mirror quay.io/me/catalog:v1 --to oci:/media/usb/images --output-dir out/
  olm-catalog catalog mirror catalog/ --to mirror.example.com/olm --output-dir out/ --verify-key cosign.pub -o json

SRC is a file-based catalog directory, an SQLite index, or an index or
catalog image. Every bundle image and every related image it references is
copied by digest (a tag is resolved first), multi-platform indexes with all
their manifests, --jobs at a time, blobs and images the destination has
skipped (a second run copies nothing). Names as oc-mirror makes them: the
image of HOST/PATH goes to REGISTRY/PREFIX/PATH (oci:DIR: the layout
DIR/PATH); it keeps its tag, and an image named by digest is tagged with the
first 16 hex digits of the digest.

Written to OUTPUT-DIR: catalog/ (the catalog, every copied reference
rewritten to REGISTRY/PREFIX/PATH@DIGEST), mapping.txt (SRC@DIGEST=DEST:TAG
lines for `oc image mirror -f`) and idms.yaml (an ImageDigestMirrorSet, one
entry per source repository; not for oci:DIR). --dry-run copies nothing and
lists what would be copied (the files are still written).

--verify-key: each bundle image's cosign signatures are checked first; one
with no signature that verifies is refused (exit 1) and not copied, the
others go on, and the signature images (sha256-H.sig) are copied along.
Images CSV deployments use that relatedImages lacks are reported (warnings).

Credentials: each registry's from the auth files (REGISTRY_AUTH_FILE,
~/.docker/config.json: one entry per registry, so source and destination
each get their own); --username/--password-stdin are the destination's.
Exit codes: 0 all copied, 1 an image failed or was refused, 2 usage or I/O.")]
pub struct MirrorArgs {
    /// Catalog: file-based catalog directory, SQLite index, or index/catalog image
    pub source: String,
    /// Destination: REGISTRY[/PREFIX], or oci:DIR
    #[arg(long, value_name = "REGISTRY/PREFIX|oci:DIR")]
    pub to: String,
    /// Where the rewritten catalog, mapping.txt and idms.yaml go
    #[arg(long, value_name = "DIR")]
    pub output_dir: PathBuf,
    /// Resolve and look at the destination only: list what would be copied
    #[arg(long)]
    pub dry_run: bool,
    /// cosign public key: copy only bundle images it verifies, with their signatures
    #[arg(long, value_name = "FILE")]
    pub verify_key: Option<PathBuf>,
    /// Images copied at once
    #[arg(long, short, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: u16,
    /// Report format on stdout
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "text"
    )]
    pub output: MirrorOutput,
    #[command(flatten)]
    pub registry: super::image::RegistryFlags,
}

/// Writes `text` to `path` through a temporary file and a rename.
fn write_file_atomic(path: &Path, text: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("writing {}", path.display()))?;
    std::io::Write::write_all(&mut tmp, text)
        .with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

impl MirrorArgs {
    pub fn run(self) -> CmdResult {
        use olm_catalog::ops::mirror::{self, MirrorOptions, MirrorTarget};
        let target: MirrorTarget = self.to.parse()?;
        let verify_key = self
            .verify_key
            .as_deref()
            .map(olm_catalog::sign::PublicKey::read)
            .transpose()?;
        std::fs::create_dir_all(&self.output_dir)
            .with_context(|| format!("creating {}", self.output_dir.display()))?;
        // --username is the destination registry's; sources use the auth files.
        let client = match &target {
            MirrorTarget::Registry { host, .. } => self.registry.client_for(&[host.as_str()])?,
            MirrorTarget::Layout { .. } => {
                anyhow::ensure!(
                    self.registry.username.is_none(),
                    "--username is for a registry destination; {} is a directory of OCI layouts: put the source registries' credentials in an auth file",
                    self.to
                );
                self.registry.client_for(&[])?
            }
        };
        let rt = super::image::runtime()?;
        let cfg = olm_catalog::ops::catalog_source::load(
            &self.source,
            &olm_catalog::ops::SourceOptions::with_client(client.clone()),
        )
        .with_context(|| format!("reading the catalog {}", self.source))?;
        let quiet = super::common::quiet();
        let opts = MirrorOptions {
            target,
            jobs: usize::from(self.jobs),
            dry_run: self.dry_run,
            verify_key,
            progress: if quiet {
                olm_catalog::oci::progress::ProgressMode::Off
            } else {
                olm_catalog::oci::progress::ProgressMode::Auto
            },
        };
        let report = rt.block_on(mirror::mirror(client, &cfg, &opts));

        // The outputs: catalog/ replaced whole (written beside, then renamed).
        let out = &self.output_dir;
        let catalog_dir = out.join("catalog");
        let staging = tempfile::Builder::new()
            .prefix(".catalog-")
            .tempdir_in(out)
            .with_context(|| format!("creating a directory in {}", out.display()))?;
        let rewritten = mirror::rewrite_catalog(&cfg, &report);
        olm_catalog::fbc::write::write_dir(
            &rewritten,
            olm_catalog::fbc::write::OutputFormat::Json,
            staging.path(),
        )?;
        if catalog_dir.exists() {
            std::fs::remove_dir_all(&catalog_dir)
                .with_context(|| format!("replacing {}", catalog_dir.display()))?;
        }
        std::fs::rename(staging.path(), &catalog_dir)
            .with_context(|| format!("writing {}", catalog_dir.display()))?;
        write_file_atomic(
            &out.join("mapping.txt"),
            mirror::mapping(&report).as_bytes(),
        )?;
        let idms = mirror::image_digest_mirror_set(&report);
        if let Some(idms) = &idms {
            write_file_atomic(&out.join("idms.yaml"), idms.as_bytes())?;
        }

        match self.output {
            MirrorOutput::Json => {
                println!("{}", serde_json::to_string_pretty(&report)?);
            }
            MirrorOutput::Text => {
                for m in &report.images {
                    println!("{}", mirror::describe(m));
                }
            }
        }
        let mut diag = olm_catalog::diag::Report {
            subject: format!("mirror of {}", self.source),
            findings: report.findings.clone(),
        };
        diag.sort();
        if !diag.findings.is_empty() {
            eprint!("{}", olm_catalog::diag::render_human(&[diag], false));
        }
        let s = &report.summary;
        if !report.bundles_without_csv.is_empty() {
            super::common::note(format!(
                "note: {} bundle(s) carry no CSV install strategy in this catalog (olm.csv.metadata has none), so their deployments' images were not checked against relatedImages: {}",
                report.bundles_without_csv.len(),
                report.bundles_without_csv.join(", ")
            ));
        }
        let verb = if self.dry_run { "would copy" } else { "copied" };
        let copied = if self.dry_run { s.would_copy } else { s.copied };
        if copied == 0 && s.failed == 0 && s.refused == 0 {
            super::common::note(format!(
                "nothing to copy: all {} image(s) are already at {}",
                s.images, report.destination
            ));
        } else {
            super::common::note(format!(
                "{} image(s): {verb} {copied}, already there {}, refused {}, failed {}; {} blob(s) ({}) copied, {} mounted, {} already there",
                s.images,
                s.present,
                s.refused,
                s.failed,
                s.blobs_copied,
                olm_catalog::oci::progress::human_bytes(s.bytes_copied),
                s.blobs_mounted,
                s.blobs_skipped
            ));
        }
        super::common::note(format!(
            "wrote {}, {}{}",
            catalog_dir.display(),
            out.join("mapping.txt").display(),
            if idms.is_some() {
                format!(", {}", out.join("idms.yaml").display())
            } else {
                " (no idms.yaml: a cluster does not pull from oci: layouts)".into()
            }
        ));
        Ok(if report.has_errors() {
            EXIT_FINDINGS
        } else {
            0
        })
    }
}
