//! Which registry gets which credentials: the client of a command.
//!
//! A command is given at most one explicit credential (`--username` with
//! `--password-stdin`). It is for one registry: the destination's when the
//! command writes to a registry, else the one registry its images come from.
//! Every request to that registry (pulls and the push) uses it; other
//! registries get their credentials from the auth files and credential
//! helpers (or none), so a password is never offered to a registry it was
//! not given for.

use std::path::PathBuf;

use crate::oci::auth::{Credential, CredentialStore};
use crate::oci::{ClientOptions, ImageRef, RegistryClient};

use super::Error;

/// How to reach registries: what every command that reads or writes a
/// registry accepts.
#[derive(Clone, Debug, Default)]
pub struct RegistryOptions {
    /// The explicit credential, for the registries [`credential_hosts`]
    /// names.
    pub credential: Option<Credential>,
    /// Allow plain HTTP and unverified TLS for non-loopback registries.
    pub insecure: bool,
    /// Also trust the CA certificates of this PEM file.
    pub ca_file: Option<PathBuf>,
}

/// The registry host `image` is on, for a command that reads or writes
/// only `image`: an OCI layout has none, and an explicit credential for it
/// is refused.
pub fn credential_host_of(image: &ImageRef) -> Result<Vec<String>, Error> {
    match image {
        ImageRef::Registry { repo, .. } => Ok(vec![repo.host.clone()]),
        ImageRef::Layout { .. } => Err(Error::Usage(format!(
            "--username is for registries; {image} is an OCI layout"
        ))),
    }
}

/// The registry an explicit credential is for, for a command that writes
/// `dest` (if any) and reads `sources` (bundle images, a base image): the
/// destination's registry, else the one registry the sources come from.
/// Sources on several registries without a registry destination are
/// refused: which one the password is for cannot be told.
pub fn credential_hosts(
    dest: Option<&ImageRef>,
    sources: &[ImageRef],
) -> Result<Vec<String>, Error> {
    if let Some(ImageRef::Registry { repo, .. }) = dest {
        return Ok(vec![repo.host.clone()]);
    }
    let mut hosts: Vec<&str> = sources
        .iter()
        .filter_map(|s| match s {
            ImageRef::Registry { repo, .. } => Some(repo.host.as_str()),
            ImageRef::Layout { .. } => None,
        })
        .collect();
    hosts.sort_unstable();
    hosts.dedup();
    match hosts.as_slice() {
        [] => Err(Error::Usage(
            "--username is for a registry, and this command reads and writes only OCI layouts"
                .into(),
        )),
        [one] => Ok(vec![one.to_string()]),
        several => Err(Error::Usage(format!(
            "--username is for one registry, but the images come from {}; with no registry destination (--tag) it cannot tell which: put the credentials in an auth file (REGISTRY_AUTH_FILE, ~/.docker/config.json) instead",
            several.join(", ")
        ))),
    }
}

/// A client with the user's auth files and credential helpers, `opts`'s
/// TLS settings, and `opts.credential` (if any) for each of `hosts`.
pub fn client(opts: &RegistryOptions, hosts: &[String]) -> Result<RegistryClient, Error> {
    let mut credentials = CredentialStore::from_environment();
    if let Some(credential) = &opts.credential {
        if hosts.is_empty() {
            return Err(Error::Usage(
                "--username is for a registry destination; none was given".into(),
            ));
        }
        for host in hosts {
            credentials.insert(host, credential.clone());
        }
    }
    let ca_certs = match &opts.ca_file {
        Some(path) => vec![std::fs::read(path)
            .map_err(|e| Error::io(format!("reading --ca-file {}", path.display()), e))?],
        None => Vec::new(),
    };
    RegistryClient::new(ClientOptions {
        insecure: opts.insecure,
        credentials,
        ca_certs,
        ..ClientOptions::default()
    })
    .map_err(|e| {
        Error::registry(e).context(match &opts.ca_file {
            Some(p) => format!("--ca-file {}", p.display()),
            None => "setting up the registry client".into(),
        })
    })
}

/// The client of a command whose images are known only as it runs (the
/// multi-arch check reads the images a CSV names; `render-template --pull`
/// the images a template names). Clients are made on first use. An
/// explicit credential is for the registry of the first registry image
/// asked for; an image on another registry is refused rather than offered
/// the password (its credentials belong in an auth file).
pub struct ImageClients {
    opts: RegistryOptions,
    /// For OCI layouts, or for every image without an explicit credential.
    plain: RegistryClient,
    /// The registry the explicit credential went to, and its client.
    bound: std::sync::OnceLock<(String, RegistryClient)>,
}

impl ImageClients {
    /// Clients made from `opts`: the one without the explicit credential
    /// now (so a bad `ca_file` fails here), the one with it when the first
    /// registry image is asked for.
    pub fn new(opts: RegistryOptions) -> Result<ImageClients, Error> {
        let plain = RegistryOptions {
            credential: None,
            ..opts.clone()
        };
        Ok(ImageClients {
            plain: client(&plain, &[])?,
            opts,
            bound: std::sync::OnceLock::new(),
        })
    }

    /// The client to read `image` with.
    pub fn client_for(&self, image: &ImageRef) -> Result<RegistryClient, Error> {
        let host = match image {
            ImageRef::Registry { repo, .. } if self.opts.credential.is_some() => &repo.host,
            _ => return Ok(self.plain.clone()),
        };
        // Made once, by the first call that needs it; a failure is
        // answered (typed) and the next call tries again.
        let (bound, client) = match self.bound.get() {
            Some(made) => made.clone(),
            None => {
                let made = (
                    host.clone(),
                    client(&self.opts, std::slice::from_ref(host))?,
                );
                let _ = self.bound.set(made.clone());
                self.bound.get().cloned().unwrap_or(made)
            }
        };
        if &bound != host {
            return Err(Error::Usage(format!(
                "--username is for one registry ({bound}), but {image} is on {host}: put the credentials of the other registries in an auth file (REGISTRY_AUTH_FILE, ~/.docker/config.json)"
            )));
        }
        Ok(client)
    }
}
