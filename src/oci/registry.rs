//! A registry client for the OCI distribution API, on reqwest: the one
//! every command that reads or writes a registry goes through (image builds,
//! bundle pulls, `sign` and `verify`).
//!
//! It has what off-the-shelf clients do not: retries with backoff on 5xx,
//! 429 and dropped connections for every request, streaming blob downloads
//! that are size-capped and digest-checked as they arrive, upload progress,
//! precise errors (which registry, which repository, which credential
//! source), credential helpers, and the OCI 1.1 referrers API with its tag
//! fallback. References are parsed in [`super::ImageRef`].
//!
//! Auth: anonymous first; on `401` the `WWW-Authenticate` challenge decides:
//! `Basic` sends the stored credential, `Bearer` fetches a token from the
//! realm (with the credential, if there is one) for the repository scopes the
//! operation needs. Tokens are cached per host and scope.
//!
//! Plain HTTP is used only for loopback registries (after HTTPS fails to
//! connect) or with `insecure`, which also accepts invalid certificates.
//! Certificates are checked against the system roots (`SSL_CERT_FILE` and
//! `SSL_CERT_DIR` replace them) plus [`ClientOptions::ca_certs`]; a
//! certificate that does not verify is reported as such, never retried and
//! never a reason to fall back to plain HTTP.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use futures::StreamExt as _;
use reqwest::header::{
    HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, LOCATION, WWW_AUTHENTICATE,
};
use reqwest::{Method, StatusCode};

use super::auth::{Credential, CredentialStore};
use super::media::{self, Descriptor};
use super::progress::Progress;
use super::OciError;

/// Largest manifest or index accepted.
pub const MAX_MANIFEST: u64 = 4 * 1024 * 1024;

/// Blobs at least this big are uploaded as a stream with progress.
const STREAM_THRESHOLD: usize = 4 * 1024 * 1024;
/// Size of the pieces a streamed upload is sent in.
const STREAM_CHUNK: usize = 1024 * 1024;

/// Options of a [`RegistryClient`].
#[derive(Debug)]
pub struct ClientOptions {
    /// Allow plain HTTP and invalid certificates for every registry.
    pub insecure: bool,
    /// Where credentials come from.
    pub credentials: CredentialStore,
    /// Attempts per request (1 = no retry).
    pub max_attempts: u32,
    /// First backoff; doubled on each retry, at most 5 s.
    pub backoff: Duration,
    /// Extra trusted CA certificates (PEM), e.g. a private registry's CA.
    pub ca_certs: Vec<Vec<u8>>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            insecure: false,
            credentials: CredentialStore::from_environment(),
            max_attempts: 5,
            backoff: Duration::from_millis(200),
            ca_certs: Vec::new(),
        }
    }
}

/// A repository on a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// Host (and port) to connect to, e.g. `quay.io`, `127.0.0.1:5000`.
    pub host: String,
    /// Repository path, e.g. `operatorhubio/etcd`.
    pub name: String,
}

impl std::fmt::Display for Repo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.host, self.name)
    }
}

#[derive(Default)]
struct AuthState {
    basic: Option<String>,
    bearer: Option<Challenge>,
    tokens: HashMap<String, String>,
}

struct HostState {
    base: tokio::sync::OnceCell<String>,
    auth: Mutex<AuthState>,
    // Looked up once: a credential helper is a process to spawn.
    credential: std::sync::OnceLock<Result<Option<Credential>, String>>,
}

struct Inner {
    http: reqwest::Client,
    opts: ClientOptions,
    hosts: Mutex<HashMap<String, Arc<HostState>>>,
}

/// A registry client; cheap to clone, safe to share between tasks.
#[derive(Clone)]
pub struct RegistryClient {
    inner: Arc<Inner>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Challenge {
    Basic,
    Bearer {
        realm: String,
        service: Option<String>,
        scope: Option<String>,
    },
}

/// Parses a `WWW-Authenticate` header (one challenge).
fn parse_challenge(header: &str) -> Option<Challenge> {
    let header = header.trim();
    let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
    if scheme.eq_ignore_ascii_case("basic") {
        return Some(Challenge::Basic);
    }
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let mut params = HashMap::new();
    let mut s = rest.trim();
    while !s.is_empty() {
        let Some((key, after)) = s.split_once('=') else {
            break;
        };
        let key = key
            .trim()
            .trim_start_matches(',')
            .trim()
            .to_ascii_lowercase();
        let after = after.trim_start();
        let (value, remaining) = if let Some(q) = after.strip_prefix('"') {
            match q.find('"') {
                Some(end) => (&q[..end], &q[end + 1..]),
                None => (q, ""),
            }
        } else {
            match after.find(',') {
                Some(end) => (&after[..end], &after[end..]),
                None => (after, ""),
            }
        };
        params.insert(key, value.to_string());
        s = remaining.trim_start().trim_start_matches(',').trim_start();
    }
    Some(Challenge::Bearer {
        realm: params.remove("realm")?,
        service: params.remove("service"),
        scope: params.remove("scope"),
    })
}

fn is_loopback(host: &str) -> bool {
    let h = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map(|(h, _)| h).unwrap_or(host)
    };
    h == "localhost"
        || h.parse::<IpAddr>()
            .map(|ip| ip.is_loopback())
            .unwrap_or(false)
}

/// The host of `url` when it is plain HTTP to a non-loopback host and
/// `insecure` is off: where neither credentials nor content may go.
fn plain_http_host(url: &str, insecure: bool) -> Option<String> {
    if insecure {
        return None;
    }
    let rest = url.strip_prefix("http://").or_else(|| {
        url.get(..7)
            .filter(|p| p.eq_ignore_ascii_case("http://"))
            .map(|_| &url[7..])
    })?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let host = authority
        .rsplit_once('@')
        .map(|(_, h)| h)
        .unwrap_or(authority);
    (!is_loopback(host)).then(|| host.to_string())
}

pub use super::blob::BlobBody;
use super::blob::SpoolWriter;

impl RegistryClient {
    /// A client with `opts`.
    pub fn new(opts: ClientOptions) -> Result<RegistryClient, OciError> {
        let mut roots = Vec::new();
        for (i, pem) in opts.ca_certs.iter().enumerate() {
            let which = if opts.ca_certs.len() > 1 {
                format!(" (bundle {} of {})", i + 1, opts.ca_certs.len())
            } else {
                String::new()
            };
            let certs = reqwest::Certificate::from_pem_bundle(pem).map_err(|e| {
                OciError::ClientSetup(format!(
                    "CA certificates{which}: not PEM: {}",
                    error_chain(&e)
                ))
            })?;
            if certs.is_empty() {
                return Err(OciError::ClientSetup(format!(
                    "CA certificates{which}: no PEM certificate found (expected -----BEGIN CERTIFICATE-----)"
                )));
            }
            roots.extend(certs);
        }
        let insecure = opts.insecure;
        // Redirects (blob downloads often go to a CDN) never downgrade to
        // plain HTTP of a non-loopback host unless --insecure. reqwest drops
        // the Authorization header on a redirect to another host or port
        // anyway; this also keeps content off plain HTTP.
        let redirects = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= 10 {
                return attempt.error("more than 10 redirects");
            }
            match plain_http_host(attempt.url().as_str(), insecure) {
                Some(host) => {
                    let e = format!("redirected to plain HTTP on {host}, a non-loopback host; refused (--insecure allows it)");
                    attempt.error(e)
                }
                None => attempt.follow(),
            }
        });
        let http = reqwest::Client::builder()
            .user_agent(concat!("olm-catalog/", env!("CARGO_PKG_VERSION")))
            .redirect(redirects)
            .connect_timeout(Duration::from_secs(10))
            .read_timeout(Duration::from_secs(60))
            .tls_danger_accept_invalid_certs(opts.insecure)
            .tls_certs_merge(roots)
            .build()
            .map_err(|e| OciError::ClientSetup(format!("cannot set up the HTTP client: {e}")))?;
        Ok(RegistryClient {
            inner: Arc::new(Inner {
                http,
                opts,
                hosts: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// A client with default options: credentials from the user's auth
    /// files and credential helpers (see [`CredentialStore::from_environment`]),
    /// the system's CAs, retries. The one default constructor: library
    /// functions take a client (or `ops::registry::RegistryOptions`) rather
    /// than make one behind the caller's back.
    pub fn from_environment() -> Result<RegistryClient, OciError> {
        RegistryClient::new(ClientOptions::default())
    }

    fn host_state(&self, host: &str) -> Arc<HostState> {
        let mut hosts = self.inner.hosts.lock().unwrap_or_else(|p| p.into_inner());
        hosts
            .entry(host.to_string())
            .or_insert_with(|| {
                Arc::new(HostState {
                    base: tokio::sync::OnceCell::new(),
                    auth: Mutex::new(AuthState::default()),
                    credential: std::sync::OnceLock::new(),
                })
            })
            .clone()
    }

    /// `https://host`, or `http://host` for a loopback or insecure registry
    /// that does not speak TLS.
    async fn base_url(&self, host: &str, state: &HostState) -> String {
        let plain_ok = self.inner.opts.insecure || is_loopback(host);
        state
            .base
            .get_or_init(|| async {
                if !plain_ok {
                    return format!("https://{host}");
                }
                let probe = self
                    .inner
                    .http
                    .get(format!("https://{host}/v2/"))
                    .timeout(Duration::from_secs(3))
                    .send()
                    .await;
                match probe {
                    Ok(_) => format!("https://{host}"),
                    // It speaks TLS with a certificate we do not trust: stay
                    // on HTTPS so the request reports that, instead of
                    // talking plain HTTP to a TLS port.
                    Err(e) if certificate_problem(&e).is_some() => format!("https://{host}"),
                    Err(_) => format!("http://{host}"),
                }
            })
            .await
            .clone()
    }

    fn backoff(&self, attempt: u32) -> Duration {
        let d = self
            .inner
            .opts
            .backoff
            .saturating_mul(1 << (attempt - 1).min(8));
        d.min(Duration::from_secs(5))
    }

    /// Sends a request built by `make`, retrying 5xx, 429 and transport
    /// errors. The last 5xx response is returned for the caller to report.
    async fn send_retrying(
        &self,
        host: &str,
        what: &str,
        make: &(dyn Fn() -> reqwest::RequestBuilder + Send + Sync),
    ) -> Result<reqwest::Response, OciError> {
        let max = self.inner.opts.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            match make().send().await {
                Ok(resp) => {
                    let s = resp.status();
                    if (s.is_server_error() || s == StatusCode::TOO_MANY_REQUESTS) && attempt < max
                    {
                        tokio::time::sleep(self.backoff(attempt)).await;
                        attempt += 1;
                        continue;
                    }
                    return Ok(resp);
                }
                Err(e) => {
                    if let Some(reason) = certificate_problem(&e) {
                        // Retrying cannot change a certificate.
                        return Err(OciError::Tls {
                            registry: host.to_string(),
                            reason: format!("{what}: {reason}"),
                        });
                    }
                    if attempt < max {
                        tokio::time::sleep(self.backoff(attempt)).await;
                        attempt += 1;
                        continue;
                    }
                    return Err(OciError::Unreachable {
                        registry: host.to_string(),
                        reason: format!("{what}: {} (after {attempt} attempts)", error_chain(&e)),
                    });
                }
            }
        }
    }

    fn credential(&self, host: &str) -> Result<Option<Credential>, OciError> {
        self.host_state(host)
            .credential
            .get_or_init(|| self.inner.opts.credentials.lookup(host))
            .clone()
            .map_err(|reason| OciError::Auth {
                registry: host.to_string(),
                reason,
            })
    }

    async fn fetch_token(
        &self,
        host: &str,
        realm: &str,
        service: Option<&str>,
        scopes: &[String],
    ) -> Result<String, OciError> {
        let cred = self.credential(host)?;
        if let (Some(c), Some(realm_host)) =
            (&cred, plain_http_host(realm, self.inner.opts.insecure))
        {
            return Err(OciError::Auth {
                registry: host.to_string(),
                reason: format!(
                    "the token server {realm} is plain HTTP on {realm_host}, a non-loopback host: the credentials of user `{}` were not sent (--insecure allows it)",
                    c.username
                ),
            });
        }
        let mut query: Vec<(&str, &str)> = Vec::new();
        if let Some(s) = service {
            query.push(("service", s));
        }
        for s in scopes {
            query.push(("scope", s));
        }
        let make = || {
            let mut rb = self.inner.http.get(realm).query(&query);
            if let Some(c) = &cred {
                rb = rb.basic_auth(&c.username, Some(&c.password));
            }
            rb
        };
        let resp = self
            .send_retrying(host, "fetching a bearer token", &make)
            .await?;
        let status = resp.status();
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return Err(OciError::Auth {
                registry: host.to_string(),
                reason: match &cred {
                    Some(c) => format!("the token server {realm} rejected the credentials of user `{}`", c.username),
                    None => format!("the token server {realm} requires credentials and none were found for {host} ({})", CRED_SOURCES),
                },
            });
        }
        if !status.is_success() {
            return Err(status_error(host, "fetching a bearer token", status, resp).await);
        }
        #[derive(serde::Deserialize)]
        struct TokenResponse {
            token: Option<String>,
            access_token: Option<String>,
        }
        let body = resp.bytes().await.map_err(|e| OciError::Unreachable {
            registry: host.to_string(),
            reason: format!("reading the bearer token: {}", error_chain(&e)),
        })?;
        let parsed: TokenResponse = serde_json::from_slice(&body).map_err(|e| OciError::Auth {
            registry: host.to_string(),
            reason: format!("the token server {realm} answered with no token JSON: {e}"),
        })?;
        parsed
            .token
            .or(parsed.access_token)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| OciError::Auth {
                registry: host.to_string(),
                reason: format!("the token server {realm} answered without a token"),
            })
    }

    /// Sends an authenticated request to `host`. `scopes` are the token
    /// scopes the operation needs; `make` gets the base URL.
    async fn send(
        &self,
        host: &str,
        scopes: &[String],
        what: &str,
        make: &(dyn Fn(&str) -> reqwest::RequestBuilder + Send + Sync),
    ) -> Result<reqwest::Response, OciError> {
        let state = self.host_state(host);
        let base = self.base_url(host, &state).await;
        let scope_key = scopes.join(" ");
        let mut reauthenticated = false;
        loop {
            // With a known bearer challenge, get the scope's token up front.
            let pending = {
                let auth = state.auth.lock().unwrap_or_else(|p| p.into_inner());
                match &auth.bearer {
                    Some(Challenge::Bearer { realm, service, .. })
                        if !auth.tokens.contains_key(&scope_key) =>
                    {
                        Some((realm.clone(), service.clone()))
                    }
                    _ => None,
                }
            };
            if let Some((realm, service)) = pending {
                let token = self
                    .fetch_token(host, &realm, service.as_deref(), scopes)
                    .await?;
                let mut auth = state.auth.lock().unwrap_or_else(|p| p.into_inner());
                auth.tokens.insert(scope_key.clone(), token);
            }
            let header = {
                let auth = state.auth.lock().unwrap_or_else(|p| p.into_inner());
                auth.tokens
                    .get(&scope_key)
                    .map(|t| format!("Bearer {t}"))
                    .or_else(|| auth.basic.clone())
            };
            let make_authed = || {
                let rb = make(&base);
                match &header {
                    Some(h) => rb.header(AUTHORIZATION, h),
                    None => rb,
                }
            };
            let resp = self.send_retrying(host, what, &make_authed).await?;
            let status = resp.status();
            if status == StatusCode::FORBIDDEN {
                return Err(OciError::Auth {
                    registry: host.to_string(),
                    reason: format!("{what}: access denied (403){}", body_hint(resp).await),
                });
            }
            if status != StatusCode::UNAUTHORIZED {
                return Ok(resp);
            }
            let challenge = resp
                .headers()
                .get(WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .and_then(parse_challenge);
            let cred = self.credential(host)?;
            if reauthenticated {
                return Err(OciError::Auth {
                    registry: host.to_string(),
                    reason: match &cred {
                        Some(c) => format!("{what}: the registry rejected the credentials of user `{}` (401)", c.username),
                        None => format!("{what}: the registry requires credentials (401) and none were found for {host} ({CRED_SOURCES})"),
                    },
                });
            }
            reauthenticated = true;
            match challenge {
                Some(Challenge::Basic) => {
                    let Some(c) = cred else {
                        return Err(OciError::Auth {
                            registry: host.to_string(),
                            reason: format!("{what}: the registry requires credentials (401) and none were found for {host} ({CRED_SOURCES})"),
                        });
                    };
                    let encoded = base64::engine::general_purpose::STANDARD
                        .encode(format!("{}:{}", c.username, c.password));
                    let mut auth = state.auth.lock().unwrap_or_else(|p| p.into_inner());
                    auth.basic = Some(format!("Basic {encoded}"));
                }
                Some(Challenge::Bearer {
                    realm,
                    service,
                    scope,
                }) => {
                    let mut wanted: Vec<String> = scopes.to_vec();
                    if let Some(s) = scope {
                        if !wanted.contains(&s) {
                            wanted.push(s);
                        }
                    }
                    let token = self
                        .fetch_token(host, &realm, service.as_deref(), &wanted)
                        .await?;
                    let mut auth = state.auth.lock().unwrap_or_else(|p| p.into_inner());
                    auth.tokens.insert(scope_key.clone(), token);
                    auth.bearer = Some(Challenge::Bearer {
                        realm,
                        service,
                        scope: None,
                    });
                }
                None => {
                    return Err(OciError::Auth {
                        registry: host.to_string(),
                        reason: format!("{what}: 401 with no usable WWW-Authenticate challenge"),
                    });
                }
            }
        }
    }

    /// Whether the repository has the blob.
    pub async fn blob_exists(&self, repo: &Repo, digest: &str) -> Result<bool, OciError> {
        media::check_digest(digest).map_err(|_| OciError::BadDigest {
            digest: digest.to_string(),
        })?;
        let scopes = [pull_scope(repo)];
        let what = format!("checking blob {digest} in {repo}");
        let url_path = format!("/v2/{}/blobs/{digest}", repo.name);
        let resp = self
            .send(&repo.host, &scopes, &what, &|base| {
                self.inner.http.head(format!("{base}{url_path}"))
            })
            .await?;
        match resp.status() {
            s if s.is_success() => Ok(true),
            StatusCode::NOT_FOUND => Ok(false),
            s => Err(status_error(&repo.host, &what, s, resp).await),
        }
    }

    /// GETs `url_path` on `repo`'s registry and reads the body (at most
    /// `limit` bytes), retrying with backoff when the connection drops while
    /// the body arrives (the request itself is retried by [`Self::send`]).
    /// `fail` turns a 404 or an over-long body into the caller's error.
    #[allow(clippy::too_many_arguments)]
    async fn get_body(
        &self,
        repo: &Repo,
        what: &str,
        url_path: &str,
        accept: Option<&str>,
        limit: u64,
        progress: Option<&Progress>,
        fail: &(dyn Fn(BodyFailure) -> OciError + Send + Sync),
        sink: &mut dyn BodySink,
    ) -> Result<Option<String>, OciError> {
        let scopes = [pull_scope(repo)];
        let max = self.inner.opts.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            let resp = self
                .send(&repo.host, &scopes, what, &|base| {
                    let rb = self.inner.http.get(format!("{base}{url_path}"));
                    match accept {
                        Some(a) => rb.header(ACCEPT, a),
                        None => rb,
                    }
                })
                .await?;
            let status = resp.status();
            if status == StatusCode::NOT_FOUND {
                return Err(fail(BodyFailure::NotFound));
            }
            if !status.is_success() {
                return Err(status_error(&repo.host, what, status, resp).await);
            }
            let content_type = resp
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(String::from);
            match read_capped(resp, limit, progress, sink).await {
                Ok(()) => return Ok(content_type),
                Err(ReadError::TooLarge) => return Err(fail(BodyFailure::TooLarge)),
                Err(ReadError::Sink(e)) => {
                    return Err(OciError::Io {
                        context: what.to_string(),
                        source: e,
                    })
                }
                Err(ReadError::Transport(_)) if attempt < max => {
                    tokio::time::sleep(self.backoff(attempt)).await;
                    attempt += 1;
                    sink.restart().map_err(|e| OciError::Io {
                        context: what.to_string(),
                        source: e,
                    })?;
                }
                Err(ReadError::Transport(e)) => {
                    return Err(OciError::Unreachable {
                        registry: repo.host.clone(),
                        reason: format!("{what}: {e} (after {attempt} attempts)"),
                    })
                }
            }
        }
    }

    /// Fetches a manifest or index by tag or digest: its bytes, media type
    /// and digest. A digest reference is checked against the content.
    pub async fn get_manifest(
        &self,
        repo: &Repo,
        reference: &str,
    ) -> Result<(Vec<u8>, String, String), OciError> {
        let what = format!("fetching manifest {repo}:{reference}");
        let url_path = format!("/v2/{}/manifests/{reference}", repo.name);
        let mut bytes = Vec::new();
        let content_type = self
            .get_body(
                repo,
                &what,
                &url_path,
                Some(media::ACCEPTED_MANIFESTS),
                MAX_MANIFEST,
                None,
                &|failure| match failure {
                    BodyFailure::NotFound => OciError::NotFound {
                        reference: format!("{repo}:{reference}"),
                    },
                    BodyFailure::TooLarge => OciError::TooLarge {
                        what: format!("manifest {repo}:{reference}"),
                        limit: MAX_MANIFEST,
                        detail: "manifest".into(),
                    },
                },
                &mut bytes,
            )
            .await?;
        let digest = media::sha256_digest(&bytes);
        if reference.starts_with("sha256:") && digest != reference {
            return Err(OciError::DigestMismatch {
                what: format!("manifest {repo}@{reference}"),
                expected: reference.to_string(),
                actual: digest,
            });
        }
        let mt = media::manifest_media_type(&bytes, content_type.as_deref()).ok_or_else(|| {
            OciError::Invalid {
                what: format!("manifest {repo}:{reference}"),
                reason: "not an image manifest or index".into(),
            }
        })?;
        Ok((bytes, mt, digest))
    }

    /// Fetches a manifest or index like [`Self::get_manifest`]; `None` when
    /// the registry does not have it.
    pub async fn find_manifest(
        &self,
        repo: &Repo,
        reference: &str,
    ) -> Result<Option<(Vec<u8>, String, String)>, OciError> {
        match self.get_manifest(repo, reference).await {
            Ok(found) => Ok(Some(found)),
            Err(OciError::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The referrers of `digest` as an OCI image index (JSON): the OCI 1.1
    /// referrers API, or, on a registry without it (404, 400 or 405), the
    /// index tagged `sha256-<hex>` (the referrers tag schema); an empty index
    /// when there is neither.
    pub async fn referrers(
        &self,
        repo: &Repo,
        digest: &str,
    ) -> Result<serde_json::Value, OciError> {
        media::check_digest(digest).map_err(|_| OciError::BadDigest {
            digest: digest.to_string(),
        })?;
        let what = format!("listing the referrers of {repo}@{digest}");
        let url_path = format!("/v2/{}/referrers/{digest}", repo.name);
        let mut body = Vec::new();
        let api = self
            .get_body(
                repo,
                &what,
                &url_path,
                Some(media::OCI_INDEX),
                MAX_MANIFEST,
                None,
                &|failure| match failure {
                    BodyFailure::NotFound => OciError::NotFound {
                        reference: what.clone(),
                    },
                    BodyFailure::TooLarge => OciError::TooLarge {
                        what: what.clone(),
                        limit: MAX_MANIFEST,
                        detail: "referrers index".into(),
                    },
                },
                &mut body,
            )
            .await;
        let bytes = match api {
            Ok(_) => Some(body),
            Err(OciError::NotFound { .. }) => None,
            Err(OciError::Status { status, .. }) if status == 400 || status == 405 => None,
            Err(e) => return Err(e),
        };
        let bytes = match bytes {
            Some(b) => b,
            None => match self.find_manifest(repo, &digest.replace(':', "-")).await? {
                Some((b, _, _)) => b,
                None => {
                    return Ok(
                        serde_json::json!({"schemaVersion": 2, "mediaType": media::OCI_INDEX, "manifests": []}),
                    )
                }
            },
        };
        let index: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| OciError::Invalid {
                what: format!("referrers index of {repo}@{digest}"),
                reason: e.to_string(),
            })?;
        if !index["manifests"].is_array() {
            return Err(OciError::Invalid {
                what: format!("referrers index of {repo}@{digest}"),
                reason: "no manifests array".into(),
            });
        }
        Ok(index)
    }

    /// Fetches a blob, checking its size (at most `limit`) and digest while
    /// it arrives.
    pub async fn get_blob(
        &self,
        repo: &Repo,
        desc: &Descriptor,
        limit: u64,
        progress: Option<&Progress>,
    ) -> Result<Vec<u8>, OciError> {
        let mut bytes = Vec::new();
        self.get_blob_into(repo, desc, limit, progress, &mut bytes)
            .await?;
        let actual = media::sha256_digest(&bytes);
        check_blob(repo, desc, bytes.len() as u64, actual)?;
        Ok(bytes)
    }

    /// [`RegistryClient::get_blob`] into a temporary file, for blobs too
    /// large to hold in memory.
    pub async fn get_blob_spooled(
        &self,
        repo: &Repo,
        desc: &Descriptor,
        limit: u64,
        progress: Option<&Progress>,
    ) -> Result<BlobBody, OciError> {
        let spool_err = |e| OciError::Io {
            context: format!("spooling blob {repo}@{}", desc.digest),
            source: e,
        };
        let mut sink = SpoolWriter::new().map_err(spool_err)?;
        self.get_blob_into(repo, desc, limit, progress, &mut sink)
            .await?;
        let (body, actual) = sink.finish().map_err(spool_err)?;
        check_blob(repo, desc, body.len(), actual)?;
        Ok(body)
    }

    async fn get_blob_into(
        &self,
        repo: &Repo,
        desc: &Descriptor,
        limit: u64,
        progress: Option<&Progress>,
        sink: &mut dyn BodySink,
    ) -> Result<(), OciError> {
        media::check_digest(&desc.digest).map_err(|_| OciError::BadDigest {
            digest: desc.digest.to_string(),
        })?;
        let what = format!("blob {repo}@{}", desc.digest);
        if desc.size > limit {
            return Err(OciError::TooLarge {
                what,
                limit,
                detail: format!("blob of {} bytes", desc.size),
            });
        }
        let url_path = format!("/v2/{}/blobs/{}", repo.name, desc.digest);
        // One byte past the declared size, so an oversized body is seen as
        // such, not as a digest mismatch of a prefix.
        self.get_body(
            repo,
            &format!("fetching {what}"),
            &url_path,
            None,
            desc.size + 1,
            progress,
            &|failure| match failure {
                BodyFailure::NotFound => OciError::NotFound {
                    reference: what.clone(),
                },
                BodyFailure::TooLarge => OciError::DigestMismatch {
                    what: format!(
                        "{what} (more than the {} bytes its descriptor declares)",
                        desc.size
                    ),
                    expected: desc.digest.clone(),
                    actual: "(longer content)".into(),
                },
            },
            sink,
        )
        .await?;
        Ok(())
    }

    /// Asks the registry to mount `digest` from repository `from` (same
    /// registry) into `repo`. `false` when it would not (then upload).
    pub async fn mount_blob(
        &self,
        repo: &Repo,
        digest: &str,
        from: &str,
    ) -> Result<bool, OciError> {
        media::check_digest(digest).map_err(|_| OciError::BadDigest {
            digest: digest.to_string(),
        })?;
        let scopes = [push_scope(repo), format!("repository:{from}:pull")];
        let what = format!("mounting blob {digest} from {from} into {repo}");
        let uploads = format!("/v2/{}/blobs/uploads/", repo.name);
        let query = [("mount", digest), ("from", from)];
        let resp = self
            .send(&repo.host, &scopes, &what, &|base| {
                self.inner
                    .http
                    .post(format!("{base}{uploads}"))
                    .query(&query)
                    .header(CONTENT_LENGTH, "0")
            })
            .await;
        let resp = match resp {
            Ok(r) => r,
            // No pull access to `from` (401/403, or a token server that
            // refuses the combined scope): copy the blob instead. A real
            // lack of push access shows on the upload.
            Err(OciError::Auth { .. }) => return Ok(false),
            Err(e) => return Err(e),
        };
        match resp.status() {
            StatusCode::CREATED => Ok(true),
            // 202: the registry opened an upload session instead; it expires
            // unused, and the caller uploads through a fresh one.
            StatusCode::ACCEPTED => Ok(false),
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Ok(false),
            s => Err(status_error(&repo.host, &what, s, resp).await),
        }
    }

    /// Uploads a blob unless the repository has it. Returns whether bytes
    /// were uploaded.
    pub async fn push_blob(
        &self,
        repo: &Repo,
        desc: &Descriptor,
        body: &BlobBody,
        progress: Option<&Progress>,
    ) -> Result<bool, OciError> {
        if self.blob_exists(repo, &desc.digest).await? {
            return Ok(false);
        }
        let scopes = [push_scope(repo)];
        let what = format!("uploading blob {} to {repo}", desc.digest);
        let uploads = format!("/v2/{}/blobs/uploads/", repo.name);
        // An upload session can die with the connection; start over once.
        for session in 0..2 {
            let resp = self
                .send(&repo.host, &scopes, &what, &|base| {
                    self.inner
                        .http
                        .post(format!("{base}{uploads}"))
                        .header(CONTENT_LENGTH, "0")
                })
                .await?;
            let status = resp.status();
            if status != StatusCode::ACCEPTED {
                return Err(status_error(&repo.host, &what, status, resp).await);
            }
            let location = resp
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(String::from)
                .ok_or_else(|| OciError::Upload {
                    what: what.clone(),
                    reason: "the registry gave no upload Location".into(),
                })?;
            let state = self.host_state(&repo.host);
            let base = self.base_url(&repo.host, &state).await;
            let mut url = if location.starts_with("http://") || location.starts_with("https://") {
                if let Some(h) = plain_http_host(&location, self.inner.opts.insecure) {
                    return Err(OciError::Upload {
                        what: what.clone(),
                        reason: format!("the registry sent the upload to plain HTTP on {h}, a non-loopback host; refused, so no credential or content goes over plain HTTP (--insecure allows it)"),
                    });
                }
                location
            } else {
                format!("{base}{location}")
            };
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str("digest=");
            url.push_str(&desc.digest);
            let resp = self
                .send(&repo.host, &scopes, &what, &|_| {
                    let rb = self
                        .inner
                        .http
                        .request(Method::PUT, &url)
                        .header(CONTENT_TYPE, "application/octet-stream")
                        .header(CONTENT_LENGTH, HeaderValue::from(body.len()));
                    match body {
                        BlobBody::Bytes(data) if data.len() < STREAM_THRESHOLD => {
                            rb.body(data.as_ref().clone())
                        }
                        // Streamed, so a retry does not copy the whole blob
                        // (nor read a spooled one into memory).
                        _ => rb.body(reqwest::Body::wrap_stream(body.chunks(STREAM_CHUNK))),
                    }
                })
                .await;
            let resp = match resp {
                Ok(r) => r,
                Err(e) if session == 0 && matches!(e, OciError::Unreachable { .. }) => continue,
                Err(e) => return Err(e),
            };
            let status = resp.status();
            if status.is_success() {
                if let Some(p) = progress {
                    p.inc(desc.size);
                }
                return Ok(true);
            }
            if session == 0
                && (status == StatusCode::NOT_FOUND || status == StatusCode::BAD_REQUEST)
            {
                // The session is gone (BLOB_UPLOAD_UNKNOWN): open a new one.
                continue;
            }
            return Err(status_error(&repo.host, &what, status, resp).await);
        }
        Err(OciError::Upload {
            what,
            reason: "the upload did not complete".into(),
        })
    }

    /// Puts a manifest or index under `reference` (a tag or its digest).
    pub async fn put_manifest(
        &self,
        repo: &Repo,
        reference: &str,
        media_type: &str,
        bytes: &[u8],
    ) -> Result<(), OciError> {
        let scopes = [push_scope(repo)];
        let what = format!("pushing manifest {repo}:{reference}");
        let url_path = format!("/v2/{}/manifests/{reference}", repo.name);
        let resp = self
            .send(&repo.host, &scopes, &what, &|base| {
                self.inner
                    .http
                    .put(format!("{base}{url_path}"))
                    .header(CONTENT_TYPE, media_type)
                    .body(bytes.to_vec())
            })
            .await?;
        let status = resp.status();
        if !status.is_success() {
            return Err(status_error(&repo.host, &what, status, resp).await);
        }
        let expected = media::sha256_digest(bytes);
        if let Some(d) = resp
            .headers()
            .get("docker-content-digest")
            .and_then(|v| v.to_str().ok())
        {
            if d != expected {
                return Err(OciError::DigestMismatch {
                    what: format!("manifest stored at {repo}:{reference}"),
                    expected,
                    actual: d.to_string(),
                });
            }
        }
        Ok(())
    }
}

/// Where credentials are looked for, for error messages.
const CRED_SOURCES: &str = "looked at --username, REGISTRY_AUTH_FILE, $XDG_RUNTIME_DIR/containers/auth.json and ~/.docker/config.json";

fn pull_scope(repo: &Repo) -> String {
    format!("repository:{}:pull", repo.name)
}

fn push_scope(repo: &Repo) -> String {
    format!("repository:{}:pull,push", repo.name)
}

enum ReadError {
    TooLarge,
    Transport(String),
    Sink(std::io::Error),
}

/// Why [`RegistryClient::get_body`] got no body, for the caller to name.
enum BodyFailure {
    NotFound,
    TooLarge,
}

/// The certificate problem behind a transport error, if that is what it is:
/// the innermost error that speaks of the certificate (rustls says "invalid
/// peer certificate: UnknownIssuer" and the like).
fn certificate_problem(e: &reqwest::Error) -> Option<String> {
    let mut found = None;
    let mut cur: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = cur {
        let text = err.to_string();
        let lower = text.to_ascii_lowercase();
        if lower.contains("certificate") || lower.contains("unknownissuer") {
            found = Some(text);
        }
        cur = err.source();
    }
    found
}

async fn read_capped(
    resp: reqwest::Response,
    limit: u64,
    progress: Option<&Progress>,
    sink: &mut dyn BodySink,
) -> Result<(), ReadError> {
    sink.reserve(resp.content_length().unwrap_or(0).min(limit));
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| ReadError::Transport(error_chain(&e)))?;
        if sink.len() + chunk.len() as u64 > limit {
            return Err(ReadError::TooLarge);
        }
        if let Some(p) = progress {
            p.inc(chunk.len() as u64);
        }
        sink.put(&chunk).map_err(ReadError::Sink)?;
    }
    Ok(())
}

/// Where a response body goes as it arrives: memory or a spool file.
trait BodySink: Send {
    /// Room for `n` bytes, where that helps.
    fn reserve(&mut self, _n: u64) {}
    /// Appends a chunk.
    fn put(&mut self, chunk: &[u8]) -> std::io::Result<()>;
    /// Bytes so far.
    fn len(&self) -> u64;
    /// Drops what was received, for a retry.
    fn restart(&mut self) -> std::io::Result<()>;
}

impl BodySink for Vec<u8> {
    fn reserve(&mut self, n: u64) {
        Vec::reserve(self, n as usize);
    }
    fn put(&mut self, chunk: &[u8]) -> std::io::Result<()> {
        self.extend_from_slice(chunk);
        Ok(())
    }
    fn len(&self) -> u64 {
        Vec::len(self) as u64
    }
    fn restart(&mut self) -> std::io::Result<()> {
        self.clear();
        Ok(())
    }
}

impl BodySink for SpoolWriter {
    fn put(&mut self, chunk: &[u8]) -> std::io::Result<()> {
        std::io::Write::write_all(self, chunk)
    }
    fn len(&self) -> u64 {
        SpoolWriter::len(self)
    }
    fn restart(&mut self) -> std::io::Result<()> {
        *self = SpoolWriter::new()?;
        Ok(())
    }
}

/// A blob's size and digest as received, against its descriptor.
fn check_blob(repo: &Repo, desc: &Descriptor, len: u64, actual: String) -> Result<(), OciError> {
    if len != desc.size || actual != desc.digest {
        return Err(OciError::DigestMismatch {
            what: format!(
                "blob {repo}@{} ({len} bytes received, {} expected)",
                desc.digest, desc.size
            ),
            expected: desc.digest.clone(),
            actual,
        });
    }
    Ok(())
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

async fn body_hint(resp: reqwest::Response) -> String {
    match resp.text().await {
        Ok(t) if !t.trim().is_empty() => {
            let t: String = t.trim().chars().take(300).collect();
            format!(": {t}")
        }
        _ => String::new(),
    }
}

async fn status_error(
    host: &str,
    what: &str,
    status: StatusCode,
    resp: reqwest::Response,
) -> OciError {
    OciError::Status {
        registry: host.to_string(),
        operation: what.to_string(),
        status: status.as_u16(),
        body: body_hint(resp).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_challenges() {
        assert_eq!(parse_challenge("Basic realm=\"r\""), Some(Challenge::Basic));
        assert_eq!(
            parse_challenge(
                r#"Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push""#
            ),
            Some(Challenge::Bearer {
                realm: "https://auth.example/token".into(),
                service: Some("registry.example".into()),
                scope: Some("repository:a/b:pull,push".into()),
            })
        );
        assert_eq!(parse_challenge("Negotiate x"), None);
    }

    #[test]
    fn plain_http_only_on_loopback() {
        for url in [
            "http://auth.example.com/token",
            "HTTP://registry.example:5000/v2/x/blobs/uploads/1",
            "http://10.0.0.1/token?service=x",
            "http://user@example.com/",
        ] {
            assert!(plain_http_host(url, false).is_some(), "{url}");
            assert!(
                plain_http_host(url, true).is_none(),
                "{url} with --insecure"
            );
        }
        for url in [
            "https://auth.example.com/token",
            "http://127.0.0.1:5000/token",
            "http://localhost/v2/",
            "http://[::1]:5000/v2/",
        ] {
            assert!(plain_http_host(url, false).is_none(), "{url}");
        }
        assert_eq!(
            plain_http_host("http://auth.example.com:8080/token", false).as_deref(),
            Some("auth.example.com:8080")
        );
    }

    /// A registry that is not on loopback is never spoken to over plain
    /// HTTP without `insecure`: its base URL is HTTPS with no probe (nothing
    /// is sent anywhere), so a registry that only speaks HTTP fails with a
    /// TLS or connection error instead of getting a plain-HTTP request.
    #[tokio::test]
    async fn no_plain_http_fallback_for_remote_hosts() {
        let client = RegistryClient::new(ClientOptions {
            credentials: CredentialStore::empty(),
            ..ClientOptions::default()
        })
        .expect("client");
        let state = client.host_state("registry.example.com:5000");
        let base = client.base_url("registry.example.com:5000", &state).await;
        assert_eq!(base, "https://registry.example.com:5000");
    }

    #[test]
    fn loopback_hosts() {
        assert!(is_loopback("127.0.0.1:5000"));
        assert!(is_loopback("localhost:5000"));
        assert!(is_loopback("[::1]:5000"));
        assert!(!is_loopback("quay.io"));
        assert!(!is_loopback("10.0.0.1:5000"));
    }
}
