//! `bundle build` and `index build` commands.
use std::io::BufRead as _;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, ValueEnum};

use olm_catalog::oci::auth::{Credential, CredentialStore};
use olm_catalog::oci::build::BaseImage;
use olm_catalog::oci::media::{Format, Platform};
use olm_catalog::oci::progress::ProgressMode;
use olm_catalog::oci::{self, BuildOptions, ClientOptions, ImageRef, RegistryClient};

use super::CmdResult;

/// Media type family of the written image.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FormatArg {
    /// OCI image spec media types.
    Oci,
    /// Docker image manifest v2 schema 2.
    Docker,
}

/// Registry and output options shared by both commands.
#[derive(Args)]
pub struct RegistryArgs {
    /// Media types of the image
    #[arg(long, value_enum, default_value = "oci")]
    pub format: FormatArg,
    /// User name for the destination registry (with --password-stdin)
    #[arg(long, requires = "password_stdin")]
    pub username: Option<String>,
    /// Read the destination registry's password from the first line of stdin
    #[arg(long, requires = "username")]
    pub password_stdin: bool,
    /// Allow plain HTTP and unverified TLS for non-loopback registries
    #[arg(long)]
    pub insecure: bool,
    /// No progress output
    #[arg(long, short)]
    pub quiet: bool,
}

/// `--sign --key`: sign what was just pushed, as `olm-catalog sign` would.
#[derive(Args, Clone, Debug, Default)]
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
}

impl SignAfterPush {
    /// Reads the key before anything is pushed, so a wrong password costs no push.
    fn load_key(&self) -> anyhow::Result<Option<olm_catalog::sign::PrivateKey>> {
        let Some(path) = self.key.as_ref().filter(|_| self.sign) else {
            return Ok(None);
        };
        let password =
            olm_catalog::sign::password::read_password(false).map_err(|e| anyhow::anyhow!(e))?;
        Ok(Some(olm_catalog::sign::PrivateKey::read_encrypted(
            path, &password,
        )?))
    }

    /// Signs `dest`, checking that the tag still names the digest just pushed.
    fn sign_pushed(
        &self,
        rt: &tokio::runtime::Runtime,
        key: olm_catalog::sign::PrivateKey,
        dest: &ImageRef,
        digest: &str,
        insecure: bool,
    ) -> anyhow::Result<()> {
        use olm_catalog::sign::{KeySigner, SignFormat, SignOptions, Target};
        let annotations = olm_catalog::sign::payload::parse_annotations(&self.annotations)
            .map_err(|e| anyhow::anyhow!(e))?;
        let options = SignOptions {
            annotations,
            format: SignFormat::Legacy,
        };
        let reference = dest.to_string();
        let outcome = rt
            .block_on(async {
                let target = Target::parse(&reference, insecure)?;
                target.sign(&KeySigner::new(key), &options).await
            })
            .with_context(|| format!("signing {reference}"))?;
        anyhow::ensure!(
            outcome.digest == digest,
            "{reference} moved to {} while signing; the pushed {digest} was not signed",
            outcome.digest
        );
        eprintln!("signed {reference}@{digest}: {}", outcome.stored_at);
        Ok(())
    }
}

impl RegistryArgs {
    fn client(&self, dest: &ImageRef) -> anyhow::Result<RegistryClient> {
        let mut credentials = CredentialStore::from_environment();
        if let (Some(user), true) = (&self.username, self.password_stdin) {
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
            match dest {
                ImageRef::Registry { repo, .. } => credentials.insert(
                    &repo.host,
                    Credential {
                        username: user.clone(),
                        password,
                    },
                ),
                ImageRef::Layout { .. } => {
                    anyhow::bail!("--username is for registries; {dest} is an OCI layout")
                }
            }
        }
        Ok(RegistryClient::new(ClientOptions {
            insecure: self.insecure,
            credentials,
            ..ClientOptions::default()
        })?)
    }

    fn options(&self, platform: Option<&str>) -> anyhow::Result<BuildOptions> {
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

    fn progress(&self) -> ProgressMode {
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

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

fn parse_dest(tag: &str) -> anyhow::Result<ImageRef> {
    Ok(tag.parse::<ImageRef>()?)
}

/// `bundle build`.
#[derive(Args)]
#[command(after_help = "Examples:
  olm-catalog bundle build operators/etcd/0.9.4 --tag quay.io/me/etcd-bundle:v0.9.4
  olm-catalog bundle build operators/etcd/0.9.4 --tag oci:out/bundles:etcd-v0.9.4
  olm-catalog bundle build operators/etcd/0.9.4 --tag 127.0.0.1:5000/etcd-bundle:v0.9.4 --format docker

The image has one layer with manifests/ and metadata/ at its root and the
annotations of metadata/annotations.yaml as labels. Builds are reproducible:
the same bundle gives the same digest on every machine (timestamps are
SOURCE_DATE_EPOCH, or 1970-01-01). Without --tag the image is written to the
OCI layout oci:oci-images:bundle-<directory name>.
Credentials: --username/--password-stdin, REGISTRY_AUTH_FILE, ~/.docker/config.json.")]
pub struct BundleBuildArgs {
    /// Bundle directory (holding manifests/ and metadata/)
    pub dir: PathBuf,
    /// Destination: a registry reference, or oci:DIR:TAG for an OCI layout
    #[arg(long, short)]
    pub tag: Option<String>,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub signing: SignAfterPush,
}

impl BundleBuildArgs {
    pub fn run(self) -> CmdResult {
        let tag = match &self.tag {
            Some(t) => t.clone(),
            None => {
                let name = self
                    .dir
                    .canonicalize()
                    .ok()
                    .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .unwrap_or_else(|| "bundle".into());
                format!("oci:oci-images:bundle-{name}")
            }
        };
        let dest = parse_dest(&tag)?;
        let opts = self.registry.options(None)?;
        let (set, _bundle) = oci::build_bundle_image(&self.dir, &opts)
            .with_context(|| format!("building the bundle image of {}", self.dir.display()))?;
        let key = self.signing.load_key()?;
        let client = self.registry.client(&dest)?;
        let mode = self.registry.progress();
        let rt = runtime()?;
        let digest = rt
            .block_on(oci::push_image(&client, &set, &dest, mode))
            .with_context(|| format!("pushing {dest}"))?;
        if let Some(key) = key {
            self.signing
                .sign_pushed(&rt, key, &dest, &digest, self.registry.insecure)?;
        }
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
0.0.0.0`. Without --base the image holds only the database: it is meant to be
based on the project's own image (see docs/images.md), which provides
/bin/olm-catalog. Without --tag it is written to oci:oci-images:index.")]
pub struct IndexBuildArgs {
    /// Index database
    #[arg(long)]
    pub database: PathBuf,
    #[command(flatten)]
    pub image: IndexImageArgs,
}

impl IndexBuildArgs {
    pub fn run(self) -> CmdResult {
        let tag = self.image.tag.as_deref().unwrap_or("oci:oci-images:index");
        self.image.build_and_push(&self.database, tag)
    }
}

/// How an index image is made and where it goes: shared by `index build`
/// and `index add --tag`.
#[derive(Args)]
pub struct IndexImageArgs {
    /// Destination: a registry reference, or oci:DIR:TAG for an OCI layout
    #[arg(long, short)]
    pub tag: Option<String>,
    /// Base image (registry reference or oci:DIR:TAG); default: none
    #[arg(long)]
    pub base: Option<String>,
    /// Platform of an image built without --base
    #[arg(long, default_value = "linux/amd64")]
    pub platform: String,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub signing: SignAfterPush,
}

impl IndexImageArgs {
    /// Builds the index image of `database` and pushes it to `tag`
    /// (signing it with --sign).
    pub fn build_and_push(&self, database_path: &std::path::Path, tag: &str) -> CmdResult {
        let dest = parse_dest(tag)?;
        let opts = self.registry.options(Some(&self.platform))?;
        let database = std::fs::read(database_path)
            .with_context(|| format!("reading {}", database_path.display()))?;
        anyhow::ensure!(
            database.starts_with(b"SQLite format 3\0"),
            "{} is not an SQLite database",
            database_path.display()
        );
        let key = self.signing.load_key()?;
        let client = self.registry.client(&dest)?;
        let mode = self.registry.progress();
        let rt = runtime()?;
        let base: Option<BaseImage> = match &self.base {
            Some(b) => {
                let src: ImageRef = b.parse()?;
                Some(
                    rt.block_on(oci::load_base(&client, &src))
                        .with_context(|| format!("reading the base image {src}"))?,
                )
            }
            None => None,
        };
        let set = oci::build_index_image(&database, base.as_ref(), &opts)?;
        let digest = rt
            .block_on(oci::push_image(&client, &set, &dest, mode))
            .with_context(|| format!("pushing {dest}"))?;
        if let Some(key) = key {
            self.signing
                .sign_pushed(&rt, key, &dest, &digest, self.registry.insecure)?;
        }
        println!("{dest}@{digest}");
        Ok(0)
    }
}
