//! Signatures in an OCI registry, through `oci-client`.
//!
//! Plain HTTP is used for loopback registries (127.0.0.1, ::1, localhost)
//! and, when asked (`--allow-insecure-registry`), for any registry.
//! Credentials come from the Docker config file (`$DOCKER_CONFIG/config.json`
//! or `~/.docker/config.json`, `auths.<registry>.auth` or
//! `username`/`password`); credential helpers are not run.

use std::path::PathBuf;

use anyhow::{anyhow, bail, Context, Result};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};
use reqwest::header::HeaderValue;

use super::sigimage::{
    ImageManifest, SignatureImage, SignatureLayer, DOCKER_MANIFEST_MEDIA_TYPE,
    OCI_MANIFEST_MEDIA_TYPE,
};
use super::{sha256_digest, signature_tag};

/// OCI image index media type.
pub const OCI_INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";
/// Docker manifest list media type.
pub const DOCKER_LIST_MEDIA_TYPE: &str =
    "application/vnd.docker.distribution.manifest.list.v2+json";

/// Every manifest type a signed image may be (an index image can be a list).
const ANY_MANIFEST: &[&str] = &[
    OCI_MANIFEST_MEDIA_TYPE,
    DOCKER_MANIFEST_MEDIA_TYPE,
    OCI_INDEX_MEDIA_TYPE,
    DOCKER_LIST_MEDIA_TYPE,
];

/// Largest signature payload or manifest read (signatures are a few hundred
/// bytes; this only stops a hostile registry from filling memory).
const MAX_BLOB: usize = 16 << 20;

/// One repository in a registry, with a client set up for it.
pub struct RegistryStore {
    client: Client,
    auth: RegistryAuth,
    reference: Reference,
}

/// Whether `registry` (host[:port]) is a loopback address.
pub fn is_loopback(registry: &str) -> bool {
    let host = if let Some(rest) = registry.strip_prefix('[') {
        rest.split(']').next().unwrap_or(rest)
    } else {
        registry.rsplit_once(':').map_or(registry, |(h, _)| h)
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn docker_config_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DOCKER_CONFIG") {
        return Some(PathBuf::from(dir).join("config.json"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker/config.json"))
}

/// Credentials for `registry` from the Docker config file, if any.
pub fn docker_config_auth(registry: &str) -> Result<RegistryAuth> {
    let Some(path) = docker_config_path() else {
        return Ok(RegistryAuth::Anonymous);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(RegistryAuth::Anonymous),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let config: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not valid JSON", path.display()))?;
    let Some(auths) = config.get("auths").and_then(|a| a.as_object()) else {
        return Ok(RegistryAuth::Anonymous);
    };
    let docker_hub = registry == "docker.io" || registry == "index.docker.io";
    let entry = auths.iter().find_map(|(k, v)| {
        let host = k
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or_default();
        let same = host == registry || (docker_hub && host == "index.docker.io");
        same.then_some(v)
    });
    let Some(entry) = entry else {
        return Ok(RegistryAuth::Anonymous);
    };
    if let Some(auth) = entry.get("auth").and_then(|a| a.as_str()) {
        let decoded = BASE64
            .decode(auth.trim())
            .with_context(|| format!("{}: auths.{registry}.auth is not base64", path.display()))?;
        let decoded = String::from_utf8(decoded)
            .map_err(|_| anyhow!("{}: auths.{registry}.auth is not UTF-8", path.display()))?;
        let (user, pass) = decoded.split_once(':').ok_or_else(|| {
            anyhow!(
                "{}: auths.{registry}.auth is not user:password",
                path.display()
            )
        })?;
        return Ok(RegistryAuth::Basic(user.to_string(), pass.to_string()));
    }
    if let (Some(u), Some(p)) = (
        entry.get("username").and_then(|u| u.as_str()),
        entry.get("password").and_then(|p| p.as_str()),
    ) {
        return Ok(RegistryAuth::Basic(u.to_string(), p.to_string()));
    }
    Ok(RegistryAuth::Anonymous)
}

fn is_not_found(e: &OciDistributionError) -> bool {
    match e {
        OciDistributionError::ImageManifestNotFoundError(_) => true,
        OciDistributionError::RegistryError { envelope, .. } => envelope.errors.iter().any(|e| {
            matches!(
                e.code,
                OciErrorCode::ManifestUnknown | OciErrorCode::NotFound | OciErrorCode::BlobUnknown
            )
        }),
        OciDistributionError::ServerError { code, .. } => *code == 404,
        _ => false,
    }
}

impl RegistryStore {
    /// A store for `reference`'s repository.
    pub fn new(reference: Reference, allow_insecure: bool) -> Result<Self> {
        let registry = reference.resolve_registry().to_string();
        let protocol = if allow_insecure || is_loopback(&registry) {
            oci_client::client::ClientProtocol::Http
        } else {
            oci_client::client::ClientProtocol::Https
        };
        let client = Client::new(oci_client::client::ClientConfig {
            protocol,
            // Referenced images may be multi-arch indexes: sign the index itself.
            platform_resolver: None,
            ..Default::default()
        });
        let auth = docker_config_auth(reference.registry())?;
        Ok(RegistryStore {
            client,
            auth,
            reference,
        })
    }

    /// `registry/repository`, as cosign writes in `docker-reference`.
    pub fn repository_name(&self) -> String {
        format!(
            "{}/{}",
            self.reference.registry(),
            self.reference.repository()
        )
    }

    /// The image reference this store was opened for.
    pub fn reference(&self) -> &Reference {
        &self.reference
    }

    fn with_tag(&self, tag: &str) -> Reference {
        Reference::with_tag(
            self.reference.registry().to_string(),
            self.reference.repository().to_string(),
            tag.to_string(),
        )
    }

    fn with_digest(&self, digest: &str) -> Reference {
        Reference::with_digest(
            self.reference.registry().to_string(),
            self.reference.repository().to_string(),
            digest.to_string(),
        )
    }

    async fn authenticate(&self, op: RegistryOperation) -> Result<()> {
        self.client
            .auth(&self.reference, &self.auth, op)
            .await
            .with_context(|| format!("authenticating to {}", self.reference.registry()))?;
        Ok(())
    }

    /// The manifest digest `reference` names now (its digest if it has one,
    /// checked against the registry).
    pub async fn resolve_digest(&self) -> Result<String> {
        let (bytes, digest) = self
            .client
            .pull_manifest_raw(&self.reference, &self.auth, ANY_MANIFEST)
            .await
            .with_context(|| format!("resolving {}", self.reference))?;
        // oci-client checks a digest reference against the body; check the
        // tag case too, whatever the registry's header said.
        let computed = sha256_digest(&bytes);
        if computed != digest {
            bail!(
                "{}: registry says digest {digest}, manifest hashes to {computed}",
                self.reference
            );
        }
        Ok(digest)
    }

    /// Pulls a manifest by tag or digest; `None` if it does not exist.
    pub async fn pull_manifest(
        &self,
        reference: &Reference,
        accept: &[&str],
    ) -> Result<Option<Vec<u8>>> {
        match self
            .client
            .pull_manifest_raw(reference, &self.auth, accept)
            .await
        {
            Ok((bytes, _)) => {
                if bytes.len() > MAX_BLOB {
                    bail!("{reference}: manifest is larger than {MAX_BLOB} bytes");
                }
                Ok(Some(bytes.to_vec()))
            }
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(e).with_context(|| format!("pulling manifest {reference}")),
        }
    }

    /// Pulls a blob of this repository, checking its digest.
    pub async fn pull_blob(&self, digest: &str) -> Result<Vec<u8>> {
        let mut out: Vec<u8> = Vec::new();
        let image = self.with_digest(digest);
        self.client
            .pull_blob(&image, digest, &mut out)
            .await
            .with_context(|| format!("pulling blob {digest} of {}", self.repository_name()))?;
        if out.len() > MAX_BLOB {
            bail!("blob {digest} is larger than {MAX_BLOB} bytes");
        }
        Ok(out)
    }

    /// Pushes a blob unless the repository already has it.
    pub async fn push_blob(&self, data: &[u8]) -> Result<String> {
        let digest = sha256_digest(data);
        let image = self.with_digest(&digest);
        if self
            .client
            .blob_exists(&image, &digest)
            .await
            .unwrap_or(false)
        {
            return Ok(digest);
        }
        self.client
            .push_blob(&image, data.to_vec(), &digest)
            .await
            .with_context(|| format!("pushing blob {digest} to {}", self.repository_name()))?;
        Ok(digest)
    }

    /// Pushes a manifest under `tag` (or by digest when `tag` is `None`).
    pub async fn push_manifest(
        &self,
        tag: Option<&str>,
        bytes: &[u8],
        media_type: &str,
    ) -> Result<String> {
        let digest = sha256_digest(bytes);
        let target = match tag {
            Some(t) => self.with_tag(t),
            None => self.with_digest(&digest),
        };
        let ct = HeaderValue::from_str(media_type)
            .map_err(|_| anyhow!("media type {media_type:?} is not a valid header value"))?;
        self.client
            .push_manifest_raw(&target, bytes.to_vec(), ct)
            .await
            .with_context(|| format!("pushing manifest {target}"))?;
        Ok(digest)
    }

    /// Reads the signature image of `digest` (empty when there is none).
    pub async fn load_signatures(&self, digest: &str) -> Result<SignatureImage> {
        let sig_ref = self.with_tag(&signature_tag(digest));
        let Some(bytes) = self
            .pull_manifest(
                &sig_ref,
                &[OCI_MANIFEST_MEDIA_TYPE, DOCKER_MANIFEST_MEDIA_TYPE],
            )
            .await?
        else {
            return Ok(SignatureImage::default());
        };
        let manifest =
            ImageManifest::parse(&bytes, &sig_ref.to_string()).map_err(|e| anyhow!(e))?;
        let mut image = SignatureImage::default();
        for layer in manifest.layers {
            let payload = self.pull_blob(&layer.digest).await?;
            image.layers.push(SignatureLayer {
                media_type: layer.media_type,
                digest: layer.digest,
                payload,
                annotations: layer.annotations.unwrap_or_default(),
            });
        }
        Ok(image)
    }

    /// Writes `image` as the signature image of `digest`; returns its reference.
    pub async fn store_signatures(&self, digest: &str, image: &SignatureImage) -> Result<String> {
        self.authenticate(RegistryOperation::Push).await?;
        for layer in &image.layers {
            self.push_blob(&layer.payload).await?;
        }
        let config = image.config_bytes();
        self.push_blob(&config).await?;
        let manifest = image.manifest(&config).to_bytes();
        let tag = signature_tag(digest);
        self.push_manifest(Some(&tag), &manifest, OCI_MANIFEST_MEDIA_TYPE)
            .await?;
        Ok(format!("{}:{tag}", self.repository_name()))
    }

    /// The referrers index of `digest` (OCI 1.1 API, or the `sha256-H` tag
    /// fallback for registries without it), as raw JSON.
    pub async fn referrers(&self, digest: &str) -> Result<serde_json::Value> {
        let subject = self.with_digest(digest);
        self.client
            .store_auth_if_needed(self.reference.resolve_registry(), &self.auth)
            .await;
        let index = self
            .client
            .pull_referrers(&subject, None)
            .await
            .with_context(|| format!("listing referrers of {subject}"))?;
        serde_json::to_value(&index).context("referrers index")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_detection() {
        assert!(is_loopback("127.0.0.1:5000"));
        assert!(is_loopback("localhost:5000"));
        assert!(is_loopback("localhost"));
        assert!(is_loopback("[::1]:5000"));
        assert!(!is_loopback("quay.io"));
        assert!(!is_loopback("10.0.0.1:5000"));
    }
}
