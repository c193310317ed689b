//! `bundle build` and `index build` commands.
use std::io::BufRead as _;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, ValueEnum};

use olm_catalog::oci::auth::Credential;
use olm_catalog::oci::batch::{BundleJob, Destination, TagTemplate};
use olm_catalog::oci::media::{Format, Platform};
use olm_catalog::oci::progress::{Progress, ProgressMode};
use olm_catalog::oci::{BuildOptions, ImageRef, RegistryClient};
use olm_catalog::ops::{
    self,
    image::{Base, CatalogContent, CatalogImageOptions, Signing},
};
use olm_catalog::sign::{KeySigner, SignFormat, SignOptions};

use super::common::CliReporter;

use super::CmdResult;

/// Media type family of the written image.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FormatArg {
    /// OCI image spec media types.
    Oci,
    /// Docker image manifest v2 schema 2.
    Docker,
}

/// How to reach registries: the one set of flags of every command that
/// reads or writes a registry (`bundle build`, `index build`, `index add`,
/// `sign`, `verify`). Credentials also come from REGISTRY_AUTH_FILE,
/// $XDG_RUNTIME_DIR/containers/auth.json and ~/.docker/config.json (with
/// credential helpers).
#[derive(Args, Default)]
pub struct RegistryFlags {
    /// User name for the destination registry (with --password-stdin); for
    /// a command without a registry destination, for the one registry its
    /// images come from
    #[arg(long, requires = "password_stdin")]
    pub username: Option<String>,
    /// Read that registry's password from the first line of stdin (read once)
    #[arg(long, requires = "username")]
    pub password_stdin: bool,
    /// Allow plain HTTP and unverified TLS for non-loopback registries
    #[arg(long)]
    pub insecure: bool,
    /// Also trust the CA certificates in this PEM file (a private registry's CA)
    #[arg(long, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,
    /// The --password-stdin password once read.
    #[arg(skip)]
    password: std::sync::OnceLock<String>,
}

/// Registry and output options shared by the image-writing commands.
#[derive(Args)]
pub struct RegistryArgs {
    /// Media types of the image
    #[arg(long, value_enum, default_value = "oci")]
    pub format: FormatArg,
    #[command(flatten)]
    pub flags: RegistryFlags,
    /// No progress output: the global -q/--quiet
    #[arg(skip = super::common::quiet())]
    pub quiet: bool,
}

/// `--sign --key`: sign what was just pushed, as `olm-catalog sign` would.
#[derive(Args, Default)]
pub struct SignAfterPush {
    /// Sign the pushed image (cosign-compatible, by digest); needs --key
    #[arg(long, requires = "key")]
    pub sign: bool,
    /// cosign private key for --sign (password from COSIGN_PASSWORD or a prompt)
    #[arg(long, value_name = "FILE", requires = "sign")]
    pub key: Option<PathBuf>,
    /// Annotation key=value for the signed payload (repeatable)
    #[arg(long = "sign-annotation", value_name = "KEY=VALUE", requires = "sign")]
    pub annotations: Vec<String>,
    /// The key once read (its password is asked once).
    #[arg(skip)]
    loaded: std::sync::OnceLock<Box<Option<LoadedSigner>>>,
}

/// A `--sign` key, read, and the options to sign with.
pub(super) type LoadedSigner = Signing;

impl SignAfterPush {
    /// The signer and options of `--sign`, or `None` without it. The key is
    /// read before anything is pushed, so a wrong password costs no push.
    pub(super) fn signer(&self) -> anyhow::Result<Option<LoadedSigner>> {
        if let Some(loaded) = self.loaded.get() {
            return Ok(loaded.as_ref().clone());
        }
        let loaded = self.read_signer()?;
        let _ = self.loaded.set(Box::new(loaded.clone()));
        Ok(loaded)
    }

    fn read_signer(&self) -> anyhow::Result<Option<LoadedSigner>> {
        let Some(path) = self.key.as_ref().filter(|_| self.sign) else {
            return Ok(None);
        };
        let annotations = olm_catalog::sign::payload::parse_annotations(&self.annotations)
            .map_err(|e| anyhow::anyhow!(e))?;
        let password =
            olm_catalog::sign::password::read_password(false).map_err(|e| anyhow::anyhow!(e))?;
        let key = olm_catalog::sign::PrivateKey::read_encrypted(path, &password)?;
        let options = SignOptions {
            annotations,
            format: SignFormat::Legacy,
        };
        Ok(Some(Signing {
            signer: std::sync::Arc::new(KeySigner::new(key)),
            options,
        }))
    }
}

impl RegistryFlags {
    /// Flags with no `--username`: `--insecure` and `--ca-file` only (what
    /// opm's `--use-http`/`--skip-tls-verify` and `--ca-file` map to).
    pub fn with_tls(insecure: bool, ca_file: Option<PathBuf>) -> RegistryFlags {
        RegistryFlags {
            insecure,
            ca_file,
            ..Default::default()
        }
    }

    /// The `--username`/`--password-stdin` credential, if given. stdin is
    /// read once per process, however many clients are made.
    fn explicit_credential(&self) -> anyhow::Result<Option<Credential>> {
        let (Some(user), true) = (&self.username, self.password_stdin) else {
            return Ok(None);
        };
        if self.password.get().is_none() {
            let mut line = String::new();
            std::io::stdin()
                .lock()
                .read_line(&mut line)
                .context("reading the password from stdin")?;
            let password = line.trim_end_matches(['\r', '\n']).to_string();
            anyhow::ensure!(
                !password.is_empty(),
                "--password-stdin: stdin gave an empty password"
            );
            let _ = self.password.set(password);
        }
        Ok(self.password.get().map(|password| Credential {
            username: user.clone(),
            password: password.clone(),
        }))
    }

    /// A client for a command that reads or writes only `image`.
    pub fn client(&self, image: &ImageRef) -> anyhow::Result<RegistryClient> {
        if self.username.is_none() {
            return self.client_for(&[]);
        }
        let hosts = olm_catalog::ops::registry::credential_host_of(image)?;
        self.client_with(&hosts)
    }

    /// A client for a command that writes `dest` (if any) and reads
    /// `sources` (bundle images, a base image); see
    /// [`olm_catalog::ops::registry::credential_hosts`] for which registry
    /// gets `--username`.
    pub fn client_for_command(
        &self,
        dest: Option<&ImageRef>,
        sources: &[ImageRef],
    ) -> anyhow::Result<RegistryClient> {
        if self.username.is_none() {
            return self.client_for(&[]);
        }
        let hosts = olm_catalog::ops::registry::credential_hosts(dest, sources)?;
        self.client_with(&hosts)
    }

    /// Reads a catalog from any source (`ops::catalog_source::load`): an
    /// FBC directory or file, an index database, a bundle directory, or an
    /// image read with these flags' client.
    pub fn load_catalog(&self, src: &str) -> anyhow::Result<olm_catalog::fbc::DeclarativeConfig> {
        use olm_catalog::ops::catalog_source::{self, SourceKind};
        let client = if SourceKind::of(src) == SourceKind::Image {
            let image: ImageRef = src
                .parse()
                .with_context(|| format!("{src} is not an image reference"))?;
            Some(self.client(&image)?)
        } else {
            None
        };
        let opts = olm_catalog::ops::SourceOptions {
            bundle_image: None,
            client,
        };
        catalog_source::load(src, &opts).with_context(|| format!("loading {src}"))
    }

    /// A client whose --username credential (if any) is for `hosts`.
    pub fn client_for(&self, hosts: &[&str]) -> anyhow::Result<RegistryClient> {
        let hosts: Vec<String> = hosts.iter().map(|h| h.to_string()).collect();
        self.client_with(&hosts)
    }

    fn client_with(&self, hosts: &[String]) -> anyhow::Result<RegistryClient> {
        Ok(olm_catalog::ops::registry::client(&self.options()?, hosts)?)
    }

    /// The library's registry options of these flags (stdin is read here,
    /// once, for --password-stdin).
    pub fn options(&self) -> anyhow::Result<olm_catalog::ops::registry::RegistryOptions> {
        Ok(olm_catalog::ops::registry::RegistryOptions {
            credential: self.explicit_credential()?,
            insecure: self.insecure,
            ca_file: self.ca_file.clone(),
        })
    }
}

impl RegistryArgs {
    /// See [`RegistryFlags::client_for_command`].
    pub fn client_for_command(
        &self,
        dest: Option<&ImageRef>,
        sources: &[ImageRef],
    ) -> anyhow::Result<RegistryClient> {
        self.flags.client_for_command(dest, sources)
    }

    /// See [`RegistryFlags::client_for`].
    pub fn client_for(&self, hosts: &[&str]) -> anyhow::Result<RegistryClient> {
        self.flags.client_for(hosts)
    }

    pub(super) fn options(&self, platform: Option<&str>) -> anyhow::Result<BuildOptions> {
        let mut opts = BuildOptions::from_env()?;
        opts.format = match self.format {
            FormatArg::Oci => Format::Oci,
            FormatArg::Docker => Format::Docker,
        };
        if let Some(p) = platform {
            opts.platform = parse_platform(p)?;
        }
        Ok(opts)
    }

    pub(super) fn progress(&self) -> ProgressMode {
        if self.quiet {
            ProgressMode::Off
        } else {
            ProgressMode::Auto
        }
    }
}

fn parse_platform(s: &str) -> anyhow::Result<Platform> {
    let parts: Vec<&str> = s.split('/').collect();
    let (os, arch, variant) = match parts.as_slice() {
        [os, arch] => (*os, *arch, None),
        [os, arch, v] => (*os, *arch, Some(v.to_string())),
        _ => anyhow::bail!("--platform {s}: expected OS/ARCH[/VARIANT], e.g. linux/arm64"),
    };
    anyhow::ensure!(
        !os.is_empty() && !arch.is_empty(),
        "--platform {s}: empty OS or architecture"
    );
    Ok(Platform {
        architecture: arch.to_string(),
        os: os.to_string(),
        os_version: None,
        os_features: None,
        variant,
    })
}

pub(super) fn parse_dest(tag: &str) -> anyhow::Result<ImageRef> {
    Ok(tag.parse::<ImageRef>()?)
}

/// `bundle build`.
#[derive(Args)]
#[command(after_help = "Examples:
  olm-catalog bundle build operators/etcd/0.9.4 --tag quay.io/me/etcd-bundle:v0.9.4
  olm-catalog bundle build operators/etcd/0.9.4 --tag oci:out/bundles:etcd-v0.9.4
  olm-catalog bundle build operators/etcd/0.9.4 --tag 127.0.0.1:5000/etcd-bundle:v0.9.4 --format docker
  olm-catalog bundle build operators/etcd/0.9.4 --tag quay.io/me/etcd-bundle:v0.9.4 --base registry.access.redhat.com/ubi9/ubi-micro
  olm-catalog bundle build operators/*/*/ --tag-template 'quay.io/me/{package}-bundle:v{version}' --jobs 8
  olm-catalog bundle build --bundles-file bundles.txt --tag-template 'quay.io/me/{package}-bundle:{dir}'

The image has one layer with manifests/ and metadata/ at its root and the
annotations of metadata/annotations.yaml as labels. Builds are reproducible:
the same bundle gives the same digest on every machine (timestamps are
SOURCE_DATE_EPOCH, or 1970-01-01). Without --tag the image is written to the
OCI layout oci:oci-images:bundle-<package>-<directory name>. With --base IMAGE
(one bundle) the image is IMAGE's layers and config, then that layer, with the
annotations added to IMAGE's labels: what `docker build` of opm's
bundle.Dockerfile with `FROM IMAGE` gives, built without a daemon.

Many bundles in one call: give several directories (or --bundles-file, one
`DIR` or `DIR REF` per line, `-` for stdin) and --tag-template, whose
placeholders are {package} (the package annotation), {version} (the CSV's
spec.version) and {dir} (the directory name). One connection pool, --jobs
bundles at a time; each bundle's tag moves only once all its blobs are in.
A bundle that fails is reported with its directory and the others go on;
stdout gets one REF@DIGEST line per pushed bundle, in input order; the exit
code is 2 if any failed.
Credentials: --username/--password-stdin, REGISTRY_AUTH_FILE, ~/.docker/config.json
(auths, credHelpers, credsStore).")]
pub struct BundleBuildArgs {
    /// Bundle directories (each holding manifests/ and metadata/)
    pub dirs: Vec<PathBuf>,
    /// Destination of a single bundle: a registry reference, or oci:DIR:TAG
    #[arg(long, short, conflicts_with_all = ["tag_template", "bundles_file"])]
    pub tag: Option<String>,
    /// Destination of each bundle, e.g. 'quay.io/me/{package}-bundle:v{version}'
    #[arg(long, value_name = "TEMPLATE")]
    pub tag_template: Option<String>,
    /// A file of bundles: `DIR` or `DIR REF` per line (`#` comments; `-` reads stdin)
    #[arg(long, value_name = "FILE")]
    pub bundles_file: Option<PathBuf>,
    /// Bundles built and pushed at once
    #[arg(long, short, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: u16,
    /// Base image of a single bundle: a registry reference or oci:DIR:TAG
    /// (its layers and config first, then the bundle's layer and labels);
    /// `scratch`, the default, is none
    #[arg(long, value_name = "IMAGE", conflicts_with_all = ["tag_template", "bundles_file"])]
    pub base: Option<String>,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub signing: SignAfterPush,
}

/// Reads a `--bundles-file`: `DIR` or `DIR REF` per line.
fn read_bundles_file(
    path: &std::path::Path,
    template: Option<&TagTemplate>,
) -> anyhow::Result<Vec<BundleJob>> {
    let text = if path.as_os_str() == "-" {
        let mut t = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut t)
            .context("reading --bundles-file - (stdin)")?;
        t
    } else {
        std::fs::read_to_string(path)
            .with_context(|| format!("reading --bundles-file {}", path.display()))?
    };
    Ok(ops::image::parse_bundle_list(
        &text,
        &path.display().to_string(),
        template,
    )?)
}

impl BundleBuildArgs {
    pub fn run(self) -> CmdResult {
        let many =
            self.dirs.len() > 1 || self.bundles_file.is_some() || self.tag_template.is_some();
        anyhow::ensure!(
            self.tag.is_none() || self.dirs.len() <= 1,
            "--tag names one destination; for several bundles use --tag-template, e.g. --tag-template 'quay.io/me/{{package}}-bundle:v{{version}}'"
        );
        if !many {
            return self.run_one();
        }
        anyhow::ensure!(
            self.base.is_none(),
            "--base is for one bundle (with --tag); build several bundles FROM scratch"
        );
        anyhow::ensure!(
            !(self.registry.flags.password_stdin
                && self.bundles_file.as_deref() == Some(std::path::Path::new("-"))),
            "--password-stdin and --bundles-file - both want stdin; put the bundles in a file"
        );
        let template = self
            .tag_template
            .as_deref()
            .map(TagTemplate::parse)
            .transpose()?;
        let mut jobs = Vec::new();
        for dir in &self.dirs {
            let Some(t) = &template else {
                anyhow::bail!(
                    "several bundles need --tag-template, e.g. --tag-template 'quay.io/me/{{package}}-bundle:v{{version}}', or a --bundles-file with a REF per line"
                );
            };
            jobs.push(BundleJob {
                dir: dir.clone(),
                dest: Destination::Template(t.clone()),
            });
        }
        if let Some(f) = &self.bundles_file {
            jobs.extend(read_bundles_file(f, template.as_ref())?);
        }
        ops::image::check_bundle_jobs(&jobs)?;
        let hosts = ops::image::bundle_job_hosts(&jobs, self.tag_template.as_deref());
        let host_refs: Vec<&str> = hosts.iter().map(String::as_str).collect();
        let client = self.registry.client_for(&host_refs)?;
        let signer = self.signing.signer()?;
        let opts = self.registry.options(None)?;
        let total = jobs.len();
        let progress = std::sync::Arc::new(Progress::new(
            self.registry.progress(),
            "bundles",
            total as u64,
            false,
        ));
        let (pushed, failed) = ops::image::build_bundles(
            jobs,
            &opts,
            &client,
            signer.as_ref(),
            usize::from(self.jobs),
            progress.clone(),
            |o| match (&o.result, &o.dest) {
                (Ok(digest), Some(dest)) => progress.suspend(|| println!("{dest}@{digest}")),
                (Ok(digest), None) => progress.suspend(|| println!("{}@{digest}", o.dir.display())),
                (Err(e), dest) => {
                    let to = dest.as_ref().map(|d| format!(" → {d}")).unwrap_or_default();
                    let e = olm_catalog::diag::with_causes(e);
                    progress.suspend(|| eprintln!("error: {}{to}: {e}", o.dir.display()));
                }
            },
        )?;
        progress.finish();
        if failed > 0 {
            eprintln!(
                "{failed} of {total} bundle(s) failed (their tags did not move); {pushed} pushed"
            );
            return Ok(2);
        }
        if !self.registry.quiet {
            eprintln!("pushed {total} bundle image(s)");
        }
        Ok(0)
    }

    fn run_one(self) -> CmdResult {
        let dir = self
            .dirs
            .first()
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("no bundle directory given"))?;
        let opts = self.registry.options(None)?;
        let dest = self.tag.as_deref().map(parse_dest).transpose()?;
        // The registry password (--password-stdin) is the first line of
        // stdin; a key password not in COSIGN_PASSWORD the next one.
        let registry = self.registry.flags.options()?;
        let signer = self.signing.signer()?;
        let base = match self.base.as_deref() {
            None | Some("scratch") => None,
            Some(b) => Some(b.parse::<ImageRef>()?),
        };
        let (dest, digest) = ops::image::build_bundle_on(
            &dir,
            dest,
            base.as_ref(),
            &opts,
            &registry,
            signer.as_ref(),
            &CliReporter,
        )?;
        println!("{dest}@{digest}");
        Ok(0)
    }
}

/// `index build`.
#[derive(Args)]
#[command(after_help = "Examples:
  olm-catalog index build --database index.db --tag quay.io/me/catalog:v1 --base quay.io/me/olm-catalog:latest
  olm-catalog index build --database index.db --tag oci:out/catalog:v1

The image is the base (--base, a registry reference or oci:DIR:TAG; every
platform of a multi-platform base gets the database) plus a layer with
/database/index.db, the label operators.operatorframework.io.index.database.v1,
entrypoint /bin/olm-catalog and command `serve /database/index.db --address
0.0.0.0`.

Default base (no --base, or --base self): the project's own image, made on
the fly from the running olm-catalog executable: /bin/olm-catalog,
/bin/grpc_health_probe (a link to it: OLM's exec probe) plus, for a
dynamically linked build, its ELF interpreter and shared libraries copied
from this machine; user 65532, this machine's platform. The image runs by
itself, with nothing to pull. --base scratch gives a data-only image (the
database, label, entrypoint and command, but no binary; --platform sets its
platform). Without --tag it is written to oci:oci-images:index.")]
pub struct IndexBuildArgs {
    /// Index database
    #[arg(long, short = 'd')]
    pub database: PathBuf,
    #[command(flatten)]
    pub image: CatalogImageArgs,
}

impl IndexBuildArgs {
    pub fn run(self) -> CmdResult {
        let tag = self.image.tag.as_deref().unwrap_or("oci:oci-images:index");
        self.image.build_and_push(&self.database, tag)
    }
}

/// What `--base` names.
enum BaseKind<'a> {
    /// The default: built from the running executable.
    SelfImage,
    /// No base: the catalog or database only.
    Scratch,
    /// A base image reference.
    Image(&'a str),
}

/// How an index or catalog image is made and where it goes: shared by
/// `index build`, `index add --tag` and `catalog build`.
#[derive(Args)]
pub struct CatalogImageArgs {
    /// Destination: a registry reference, or oci:DIR:TAG for an OCI layout
    #[arg(long, short)]
    pub tag: Option<String>,
    /// Base image: a registry reference, oci:DIR:TAG, `self` (the default:
    /// this olm-catalog executable and the libraries it needs, so the image
    /// runs by itself) or `scratch` (the catalog or database only, no binary)
    #[arg(long)]
    pub base: Option<String>,
    /// Platform of an image built with --base scratch (default linux/amd64);
    /// with the default base it must be this machine's
    #[arg(long)]
    pub platform: Option<String>,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub signing: SignAfterPush,
}

impl CatalogImageArgs {
    /// Builds the index image of `database` and pushes it to `tag`
    /// (signing it with --sign).
    pub fn build_and_push(&self, database_path: &std::path::Path, tag: &str) -> CmdResult {
        self.build_and_push_with(database_path, tag, None)
    }

    /// Reads the `--sign` key now (its password asked once), so a command
    /// that writes something before pushing (`index add --tag --sign`)
    /// fails on a wrong password before writing anything.
    pub fn load_signing_key(&self) -> anyhow::Result<()> {
        self.signing.signer().map(|_| ())
    }

    /// The parsed `--tag` and `--base`, for [`RegistryArgs::client_for_command`].
    pub fn dest_and_base(&self) -> anyhow::Result<(Option<ImageRef>, Option<ImageRef>)> {
        let dest = self.tag.as_deref().map(parse_dest).transpose()?;
        let base = match self.base_kind() {
            BaseKind::Image(b) => Some(b.parse::<ImageRef>()?),
            BaseKind::SelfImage | BaseKind::Scratch => None,
        };
        Ok((dest, base))
    }

    fn base_kind(&self) -> BaseKind<'_> {
        match self.base.as_deref() {
            None | Some("self") => BaseKind::SelfImage,
            Some("scratch") => BaseKind::Scratch,
            Some(other) => BaseKind::Image(other),
        }
    }

    /// [`Self::build_and_push`] with the client the command already made
    /// (`index add` pulls and pushes with one client, one password read).
    pub fn build_and_push_with(
        &self,
        database_path: &std::path::Path,
        tag: &str,
        client: Option<&RegistryClient>,
    ) -> CmdResult {
        let dest = parse_dest(tag)?;
        let checked = self.check()?;
        self.build_and_push_image(
            checked,
            &dest,
            client,
            CatalogContent::Database(database_path),
        )
    }

    /// Checks `--base` and `--platform` together (no I/O): what the base
    /// is, and the build options.
    pub(super) fn check(&self) -> anyhow::Result<CheckedImage<'_>> {
        let kind = self.base_kind();
        let platform = match (&kind, &self.platform) {
            (BaseKind::Scratch, None) => Some("linux/amd64"),
            (BaseKind::Image(_), Some(_)) => anyhow::bail!(
                "--platform is for --base scratch; a base image brings its own platform(s)"
            ),
            (_, p) => p.as_deref(),
        };
        let opts = self.registry.options(platform)?;
        if let (BaseKind::SelfImage, Some(p)) = (&kind, platform) {
            let host = olm_catalog::oci::runtime::host_platform();
            anyhow::ensure!(
                opts.platform.os == host.os && opts.platform.architecture == host.architecture,
                "--platform {p}: the default base is this machine's olm-catalog executable ({}/{}); for another platform pass --base with an image of it (e.g. the project's multi-platform image)",
                host.os,
                host.architecture
            );
        }
        Ok(CheckedImage { kind, opts })
    }

    /// Builds the image of `content` on the base and pushes it to `dest`
    /// (with --sign: by digest, signature, then tag); prints `dest@digest`.
    /// `client` is the command's own, if it made one.
    pub(super) fn build_and_push_image(
        &self,
        checked: CheckedImage<'_>,
        dest: &ImageRef,
        client: Option<&RegistryClient>,
        content: CatalogContent<'_>,
    ) -> CmdResult {
        let (_, base_ref) = self.dest_and_base()?;
        let client = match client {
            Some(c) => c.clone(),
            None => self
                .registry
                .client_for_command(Some(dest), base_ref.as_slice())?,
        };
        let signing = self.signing.signer()?;
        let base = match (checked.kind, base_ref) {
            (_, Some(b)) => Base::Image(b),
            (BaseKind::Scratch, None) => Base::Scratch,
            _ => Base::SelfImage,
        };
        let opts = CatalogImageOptions {
            dest: dest.clone(),
            base,
            build: checked.opts,
            signing,
        };
        let digest = ops::image::build_catalog_image(content, &opts, &client, &CliReporter)?;
        println!("{dest}@{digest}");
        Ok(0)
    }
}

/// `--base` and `--platform` once checked, for
/// [`CatalogImageArgs::build_and_push_image`].
pub(super) struct CheckedImage<'a> {
    kind: BaseKind<'a>,
    opts: BuildOptions,
}

/// `bundle unpack`.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
olm-catalog bundle unpack quay.io/me/mypkg-bundle:v1.0.0 ./mypkg-1.0.0\n  \
olm-catalog bundle unpack oci:oci-images:mypkg-1.0.0 ./mypkg-1.0.0 && olm-catalog bundle validate ./mypkg-1.0.0\n\n\
Writes every file of the image's layers (for a bundle image: manifests/ and metadata/) into DIR, \
made if missing; files already in DIR are kept unless the image has the same path. When the \
pull fails, nothing is written into DIR. The same as `opm alpha bundle unpack IMAGE -o DIR --skip-validation`; \
validate the result with `olm-catalog bundle validate DIR`.\n\
Exit codes: 0 unpacked, 2 usage, registry or I/O failure.")]
pub struct BundleUnpackArgs {
    /// The bundle image: a registry reference, or oci:DIR:TAG
    #[arg(value_name = "IMAGE")]
    pub image: String,
    /// The directory to write the image's files into
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub registry: RegistryFlags,
}

impl BundleUnpackArgs {
    pub fn run(self) -> CmdResult {
        let unpacked = ops::image::unpack_bundle_image(
            &self.image,
            &self.dir,
            &self.registry.options()?,
            &mut |_| Ok(()),
        )?;
        if !super::common::quiet() {
            eprintln!(
                "unpacked {} ({}): {} file(s) into {}",
                self.image,
                unpacked.digest,
                unpacked.paths.len(),
                self.dir.display()
            );
        }
        Ok(0)
    }
}
