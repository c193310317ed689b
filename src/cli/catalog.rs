//! `catalog build` and `catalog generate-dockerfile`: file-based catalog
//! images, as `opm generate dockerfile` + `docker build` make them.
//! `catalog filter`: a smaller catalog cut from a bigger one. `catalog diff`:
//! what changed between two catalogs.
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
    /// Keep only named packages, channels and versions of a catalog, leaving a valid catalog
    Filter(FilterArgs),
    /// Show what changed between two catalogs (exit 1 when they differ, like diff)
    Diff(DiffArgs),
    /// Check every bundle image of a catalog against a signature policy
    Verify(super::gate::CatalogVerifyArgs),
}

impl CatalogCommand {
    pub fn run(self) -> CmdResult {
        match self {
            CatalogCommand::Build(a) => a.run(),
            CatalogCommand::GenerateDockerfile(a) => a.run(),
            CatalogCommand::Mirror(a) => a.run(),
            CatalogCommand::Filter(a) => a.run(),
            CatalogCommand::Diff(a) => a.run(),
            CatalogCommand::Verify(a) => a.run(),
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
    #[command(flatten)]
    pub gate: super::gate::SignatureGateArgs,
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
        if let Some(gate) = self.gate.gate()? {
            // Every bundle image is verified before anything is pushed.
            let cfg = olm_catalog::fbc::DeclarativeConfig::load_path(&self.dir)?;
            let images = olm_catalog::ops::gate::bundle_images(&cfg);
            let client = self.image.registry.client_for(&[])?;
            super::gate::require(Some(&gate), &images, &client)?;
        }
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
    after_help = "Writes DIR.Dockerfile beside DIR (fails if it exists), byte for byte the
Dockerfile opm v1.73.0's `generate dockerfile DIR` writes: a builder stage
(--builder-image) that adds DIR at /configs and pre-builds the serve cache
(`opm serve /configs --cache-dir=/tmp/cache --cache-only`), then the base
image (--base-image: entrypoint /bin/opm, command `serve /configs
--cache-dir=/tmp/cache`; or `scratch`, for CatalogSources that extract the
content) with /configs and /tmp/cache copied from the builder, the configs
label and the extra labels (sorted by key). Build it with
`docker build -f DIR.Dockerfile .` from DIR's parent. `catalog build` makes
the image without a daemon. The builder may be an olm-catalog image: it
answers `/bin/opm serve --cache-only` too.

Examples:
  olm-catalog catalog generate-dockerfile catalog/
  olm-catalog catalog generate-dockerfile catalog/ -i quay.io/operator-framework/opm:v1.73.0 -l team=me
  olm-catalog catalog generate-dockerfile catalog/ -i scratch -b quay.io/operator-framework/opm:v1.73.0"
)]
pub struct GenerateDockerfileArgs {
    /// File-based catalog directory
    pub dir: PathBuf,
    /// Image base of the catalog image (holds /bin/opm and
    /// /bin/grpc_health_probe), or `scratch` [default:
    /// quay.io/operator-framework/opm:latest]
    #[arg(long, short = 'i', value_name = "IMAGE")]
    pub base_image: Option<String>,
    /// Older name of --base-image (opm's --binary-image, deprecated); given
    /// without --builder-image, it names the builder too
    #[arg(long, value_name = "IMAGE", conflicts_with = "base_image")]
    pub binary_image: Option<String>,
    /// Image of the build stage, which runs /bin/opm to pre-build the
    /// cache (not `scratch`) [default: quay.io/operator-framework/opm:latest]
    #[arg(long, short = 'b', value_name = "IMAGE")]
    pub builder_image: Option<String>,
    /// Extra labels, KEY=VALUE (repeatable or comma-separated; last one of a key wins)
    #[arg(long, short = 'l', value_delimiter = ',')]
    pub extra_labels: Vec<String>,
}

/// The name and parent of a catalog directory argument, as Go's
/// `filepath.Split(filepath.Clean(dir))` gives them: `.` and `..` are
/// names, `/` has an empty one.
fn split_catalog_dir(dir: &Path) -> (PathBuf, String) {
    use std::path::Component;
    let clean: PathBuf = dir.components().collect();
    let mut parts: Vec<Component<'_>> = clean.components().collect();
    let name = match parts.pop() {
        Some(Component::Normal(n)) => n.to_string_lossy().into_owned(),
        Some(Component::CurDir) | None => ".".to_string(),
        Some(Component::ParentDir) => "..".to_string(),
        Some(Component::RootDir) | Some(Component::Prefix(_)) => {
            parts = clean.components().collect();
            String::new()
        }
    };
    (parts.iter().collect(), name)
}

impl GenerateDockerfileArgs {
    pub fn run(self) -> CmdResult {
        let default = build::DEFAULT_OPM_IMAGE.to_string();
        // As opm: --binary-image without --builder-image names both.
        let builder = match (&self.builder_image, &self.binary_image) {
            (Some(b), _) => b.clone(),
            (None, Some(bin)) => bin.clone(),
            (None, None) => default.clone(),
        };
        if self.binary_image.is_some() {
            eprintln!("warning: --binary-image is deprecated: use --base-image instead");
        }
        let base = self
            .base_image
            .clone()
            .or_else(|| self.binary_image.clone())
            .unwrap_or(default);
        anyhow::ensure!(
            builder != build::SCRATCH,
            "invalid builder image: {builder:?}"
        );
        let mut labels = BTreeMap::new();
        for l in &self.extra_labels {
            let (k, v) = l
                .split_once('=')
                .ok_or_else(|| anyhow::anyhow!("invalid label {l:?}"))?;
            labels.insert(k.to_string(), v.to_string());
        }
        let (parent, name) = split_catalog_dir(&self.dir);
        let path = parent.join(format!("{name}.Dockerfile"));
        if path.symlink_metadata().is_ok() {
            anyhow::bail!("path {:?}: file already exists", path.display().to_string());
        }
        let meta = std::fs::metadata(&self.dir)
            .with_context(|| format!("reading {}", self.dir.display()))?;
        anyhow::ensure!(
            meta.is_dir(),
            "provided root path {:?} is not a directory",
            self.dir.display().to_string()
        );
        // Checked before the file is made (opm leaves an empty one behind).
        let text = build::catalog_dockerfile(&base, &builder, &name, &labels)?;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .with_context(|| format!("writing {}", path.display()))?;
        std::io::Write::write_all(&mut f, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        super::common::note(format!("wrote {}", path.display()));
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
    #[command(flatten)]
    pub gate: super::gate::SignatureGateArgs,
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
        let gate = self.gate.gate()?;
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
        let rt = super::common::runtime()?;
        let cfg = olm_catalog::ops::catalog_source::load(
            &self.source,
            &olm_catalog::ops::SourceOptions::with_client(client.clone()),
        )
        .with_context(|| format!("reading the catalog {}", self.source))?;
        // Every bundle image is verified before anything is copied or written.
        super::gate::require(
            gate.as_ref(),
            &olm_catalog::ops::gate::bundle_images(&cfg),
            &client,
        )?;
        std::fs::create_dir_all(&self.output_dir)
            .with_context(|| format!("creating {}", self.output_dir.display()))?;
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

// ---- catalog filter ----

/// Reads a catalog source of `catalog filter` and `catalog diff`: an FBC
/// directory or file, an index database, or an index or catalog image.
fn load_catalog(
    src: &str,
    registry: &super::image::RegistryFlags,
) -> anyhow::Result<olm_catalog::fbc::DeclarativeConfig> {
    registry.load_catalog(src)
}

/// How `catalog filter` reports what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FilterReportFormat {
    /// A summary on stderr
    Text,
    /// The report as JSON on stdout (the summary is not printed)
    Json,
}

/// `catalog filter`.
#[derive(Args)]
#[command(after_help = "Examples:
  olm-catalog catalog filter catalog/ --package etcd --output-dir small/
  olm-catalog catalog filter index.db --package etcd --channel alpha --default-channel alpha \\
      --package kube-green --versions '>=0.5.0' --output-dir small/
  olm-catalog catalog filter quay.io/me/catalog:v1 --config filter.yaml --output-dir small/ -o json

SRC is an FBC directory, a SQLite index database, or an index or catalog
image. --channel, --versions and --default-channel belong to the --package
before them; a package without --channel keeps every channel. --versions is a
version range as OLM reads skipRange (`>=1.2.0 <2.0.0`, `1.x`, `<1.0.0 ||
>=2.0.0`); a channel keeps the stretch of its replaces chain that holds the
versions in range (versions outside the range on that stretch are kept so the
channel keeps one head, and are reported).

--config FILE is operator-registry's FilterConfiguration (YAML or JSON):
  apiVersion: olm.operatorframework.io/v1alpha1
  kind: FilterConfiguration
  packages:
  - name: etcd
    defaultChannel: stable        # optional
    versionRange: '>=0.9.0'       # optional, for channels without their own
    channels:                     # optional; none keeps every channel
    - name: stable
      versionRange: '>=0.9.2'     # optional
Flags add packages to those of the file.

Replaces and skips that point to a removed bundle are dropped (--keep-edges
keeps them, as operator-registry's filter does: a cluster running a removed version can
then still upgrade); skipRanges are kept. Deprecations of removed channels
and bundles are dropped. When a package's default channel is filtered away,
name a new one (--default-channel), or the filter fails.

The result is validated (as `olm-catalog validate`) and written to OUT (new
or empty; one <package>/catalog.json per package) only if valid. Exit codes:
0 written, 1 the result would be invalid (nothing written), 2 usage, a name
not in the catalog, or I/O.")]
pub struct FilterArgs {
    /// Catalog to filter: FBC directory, index database, or index or catalog image
    pub source: String,
    /// Package to keep (repeatable; the flags after it apply to it)
    #[arg(long, value_name = "PACKAGE")]
    pub package: Vec<String>,
    /// Channel of the --package before it to keep (repeatable)
    #[arg(long, value_name = "CHANNEL")]
    pub channel: Vec<String>,
    /// Version range to keep of the --package before it
    #[arg(long, value_name = "RANGE")]
    pub versions: Vec<String>,
    /// New default channel of the --package before it (must be kept)
    #[arg(long, value_name = "CHANNEL")]
    pub default_channel: Vec<String>,
    /// Filter configuration file (operator-registry's FilterConfiguration, YAML or JSON)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Directory to write the filtered catalog to (new or empty)
    #[arg(long, value_name = "OUT")]
    pub output_dir: PathBuf,
    /// File format of the written catalog
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "json")]
    pub catalog_format: olm_catalog::fbc::write::OutputFormat,
    /// Keep replaces and skips that point to removed bundles
    #[arg(long)]
    pub keep_edges: bool,
    /// Report format: text (summary on stderr) or json (on stdout)
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "text"
    )]
    pub output: FilterReportFormat,
    // How to reach the registry of an index or catalog image.
    #[command(flatten)]
    pub registry: super::image::RegistryFlags,
}

/// The packages that the flags name, each with the flags after it: clap
/// gives each repeated flag's values apart, and their positions in the
/// command line (from the matches, parsed again) tie them together.
fn packages_from_flags(
    args: &FilterArgs,
) -> anyhow::Result<Vec<olm_catalog::fbc::filter::PackageFilter>> {
    use clap::CommandFactory as _;
    use olm_catalog::fbc::filter::{ChannelFilter, PackageFilter};
    if args.package.is_empty() {
        for (flag, given) in [
            ("--channel", !args.channel.is_empty()),
            ("--versions", !args.versions.is_empty()),
            ("--default-channel", !args.default_channel.is_empty()),
        ] {
            anyhow::ensure!(!given, "{flag} must follow the --package it applies to");
        }
        return Ok(Vec::new());
    }
    let matches = super::Cli::command()
        .try_get_matches_from(std::env::args_os())
        .context("reading the command line again")?;
    let m = matches
        .subcommand_matches("catalog")
        .and_then(|m| m.subcommand_matches("filter"))
        .ok_or_else(|| anyhow::anyhow!("not a `catalog filter` command line"))?;
    let indices =
        |id: &str| -> Vec<usize> { m.indices_of(id).map(Iterator::collect).unwrap_or_default() };
    let pkg_at = indices("package");
    let owner = |i: usize| pkg_at.iter().rposition(|&p| p < i);
    let mut out: Vec<PackageFilter> = args
        .package
        .iter()
        .map(|p| PackageFilter {
            name: p.clone(),
            ..Default::default()
        })
        .collect();
    for (i, c) in indices("channel").into_iter().zip(&args.channel) {
        let k = owner(i).ok_or_else(|| {
            anyhow::anyhow!("--channel {c}: must follow the --package it applies to")
        })?;
        out[k].channels.push(ChannelFilter {
            name: c.clone(),
            version_range: String::new(),
        });
    }
    for (i, v) in indices("versions").into_iter().zip(&args.versions) {
        let k = owner(i).ok_or_else(|| {
            anyhow::anyhow!("--versions {v}: must follow the --package it applies to")
        })?;
        anyhow::ensure!(
            out[k].version_range.is_empty(),
            "--package {}: --versions given twice",
            out[k].name
        );
        out[k].version_range = v.clone();
    }
    for (i, d) in indices("default_channel")
        .into_iter()
        .zip(&args.default_channel)
    {
        let k = owner(i).ok_or_else(|| {
            anyhow::anyhow!("--default-channel {d}: must follow the --package it applies to")
        })?;
        anyhow::ensure!(
            out[k].default_channel.is_empty(),
            "--package {}: --default-channel given twice",
            out[k].name
        );
        out[k].default_channel = d.clone();
    }
    Ok(out)
}

/// The summary of a filter, for a terminal.
fn filter_summary(report: &olm_catalog::fbc::filter::FilterReport) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    for p in &report.packages {
        let _ = writeln!(
            s,
            "{}: kept {} channel(s), {} bundle(s); removed {} channel(s), {} bundle(s); default channel {}{}",
            p.name,
            p.channels.len(),
            p.kept_bundles,
            p.removed_channels.len(),
            p.removed_bundles.len(),
            p.default_channel,
            p.previous_default_channel
                .as_ref()
                .map(|d| format!(" (was {d})"))
                .unwrap_or_default()
        );
        if !p.removed_channels.is_empty() {
            let _ = writeln!(s, "  removed channels: {}", p.removed_channels.join(", "));
        }
        for c in &p.channels {
            let range = if c.version_range.is_empty() {
                String::new()
            } else {
                format!(" ({})", c.version_range)
            };
            let _ = writeln!(
                s,
                "  channel {}{range}: head {}, kept {} entr{}, removed {}",
                c.name,
                c.head,
                c.kept_entries,
                if c.kept_entries == 1 { "y" } else { "ies" },
                c.removed_entries.len()
            );
            if !c.kept_outside_range.is_empty() {
                let _ = writeln!(
                    s,
                    "    kept outside the range, on the upgrade chain: {}",
                    c.kept_outside_range.join(", ")
                );
            }
            if !c.unreachable_in_range.is_empty() {
                let _ = writeln!(
                    s,
                    "    in range but not on the kept upgrade chain (removed): {}",
                    c.unreachable_in_range.join(", ")
                );
            }
            for e in &c.dropped_edges {
                let _ = writeln!(
                    s,
                    "    dropped edge: {} {} {} (removed)",
                    e.entry, e.kind, e.target
                );
            }
        }
        if !p.removed_deprecations.is_empty() {
            let _ = writeln!(
                s,
                "  removed deprecations: {}",
                p.removed_deprecations.join(", ")
            );
        }
    }
    if !report.removed_packages.is_empty() {
        let _ = writeln!(
            s,
            "removed {} other package(s): {}",
            report.removed_packages.len(),
            report.removed_packages.join(", ")
        );
    }
    s
}

/// Writes `cfg` as a new catalog directory `out` (absent or empty): into a
/// temporary sibling first, then renamed, so a failure leaves nothing
/// half-written.
fn write_new_catalog_dir(
    cfg: &olm_catalog::fbc::DeclarativeConfig,
    format: olm_catalog::fbc::write::OutputFormat,
    out: &Path,
) -> anyhow::Result<()> {
    let shown = out.display();
    if out.exists() {
        anyhow::ensure!(out.is_dir(), "{shown}: exists and is not a directory");
        let empty = std::fs::read_dir(out)
            .with_context(|| format!("{shown}: cannot read the output directory"))?
            .next()
            .is_none();
        anyhow::ensure!(empty, "{shown}: output directory is not empty");
    }
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    anyhow::ensure!(
        parent.is_dir(),
        "{shown}: cannot create the output directory: {} is not an existing directory",
        parent.display()
    );
    let tmp = tempfile::Builder::new()
        .prefix(".olm-catalog-filter-")
        .tempdir_in(parent)
        .with_context(|| format!("{shown}: cannot create the output directory"))?;
    olm_catalog::fbc::write::write_dir(cfg, format, tmp.path())
        .with_context(|| format!("{shown}: cannot write the catalog"))?;
    if out.exists() {
        std::fs::remove_dir(out)
            .with_context(|| format!("{shown}: cannot replace the empty directory"))?;
    }
    std::fs::rename(tmp.keep(), out)
        .with_context(|| format!("{shown}: cannot move the written catalog into place"))?;
    Ok(())
}

impl FilterArgs {
    pub fn run(self) -> CmdResult {
        use olm_catalog::fbc::filter;
        let mut config = match &self.config {
            Some(f) => {
                let text = std::fs::read_to_string(f)
                    .with_context(|| format!("reading {}", f.display()))?;
                filter::FilterConfig::parse(&text, &f.display().to_string())?
            }
            None => filter::FilterConfig::default(),
        };
        config.packages.extend(packages_from_flags(&self)?);
        anyhow::ensure!(
            !config.packages.is_empty(),
            "name the packages to keep: --package PACKAGE, or --config FILE"
        );
        let cfg = load_catalog(&self.source, &self.registry)?;
        let options = filter::Options {
            keep_edges: self.keep_edges,
        };
        let (out, report) = filter::filter(&cfg, &config, options)
            .map_err(|e| anyhow::anyhow!("cannot filter {}:\n{e}", self.source))?;
        let mut findings = olm_catalog::diag::Report {
            subject: self.output_dir.display().to_string(),
            findings: olm_catalog::fbc::validate::validate(&out),
        };
        findings.sort();
        if findings.errors() > 0 {
            eprint!("{}", olm_catalog::diag::render_human(&[findings], false));
            eprintln!(
                "error: the filtered catalog would not be valid (the packages kept are not valid in {} either?); nothing was written",
                self.source
            );
            return Ok(EXIT_FINDINGS);
        }
        write_new_catalog_dir(&out, self.catalog_format, &self.output_dir)?;
        match self.output {
            FilterReportFormat::Text => {
                if !super::common::quiet() {
                    eprint!("{}", filter_summary(&report));
                }
            }
            FilterReportFormat::Json => {
                let text = format!("{}\n", serde_json::to_string_pretty(&report)?);
                let mut out = std::io::stdout().lock();
                std::io::Write::write_all(&mut out, text.as_bytes())?;
                std::io::Write::flush(&mut out)?;
            }
        }
        super::common::note(format!(
            "wrote {} package(s) to {}",
            out.packages.len(),
            self.output_dir.display()
        ));
        Ok(0)
    }
}

// ---- catalog diff ----

/// How `catalog diff` prints the differences.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    /// One line per change, for a terminal
    Text,
    /// The differences as JSON (documented in docs/catalog.md)
    Json,
    /// Markdown, for a pull request comment or a release note
    Markdown,
}

/// `catalog diff`.
#[derive(Args)]
#[command(after_help = "Examples:
  olm-catalog catalog diff old-catalog/ catalog/
  olm-catalog catalog diff index.db catalog/ -o markdown > comment.md
  olm-catalog catalog diff quay.io/me/catalog:v1 quay.io/me/catalog:v2 -o json

OLD and NEW are each an FBC directory, a SQLite index database, or an index
or catalog image. Shown: packages, channels and bundles added and removed;
channel heads and default channels that changed; channel entries whose
replaces, skips or skipRange changed; bundles whose image, properties or
related images changed; deprecations added, removed or reworded; icon and
description changes. Objects of other schemas are not compared.

Exit codes, as diff's: 0 the catalogs are the same, 1 they differ, 2 usage
or I/O.")]
pub struct DiffArgs {
    /// The older catalog: FBC directory, index database, or index or catalog image
    pub old: String,
    /// The newer catalog
    pub new: String,
    /// Output format
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "text"
    )]
    pub output: DiffFormat,
    // How to reach the registry of an index or catalog image.
    #[command(flatten)]
    pub registry: super::image::RegistryFlags,
}

impl DiffArgs {
    pub fn run(self) -> CmdResult {
        use olm_catalog::fbc::diff;
        let old = load_catalog(&self.old, &self.registry)?;
        let new = load_catalog(&self.new, &self.registry)?;
        let d = diff::diff(&old, &new);
        let text = match self.output {
            DiffFormat::Text => diff::render_text(&d),
            DiffFormat::Markdown => diff::render_markdown(&d),
            DiffFormat::Json => format!("{}\n", serde_json::to_string_pretty(&d)?),
        };
        let mut out = std::io::stdout().lock();
        std::io::Write::write_all(&mut out, text.as_bytes())?;
        std::io::Write::flush(&mut out)?;
        Ok(if d.is_empty() { 0 } else { EXIT_FINDINGS })
    }
}
