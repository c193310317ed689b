//! Registry credentials: explicit `--username`/`--password-stdin`, then
//! `REGISTRY_AUTH_FILE`, `$XDG_RUNTIME_DIR/containers/auth.json` and
//! `$DOCKER_CONFIG/config.json` (default `~/.docker/config.json`), including
//! `credHelpers`/`credsStore` credential helpers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Deserialize;

/// A user name and password (or token) for a registry.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    /// User name.
    pub username: String,
    /// Password or token.
    pub password: String,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret.
        write!(f, "Credential({}, ****)", self.username)
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AuthFile {
    #[serde(default)]
    auths: HashMap<String, AuthEntry>,
    #[serde(default)]
    cred_helpers: HashMap<String, String>,
    #[serde(default)]
    creds_store: Option<String>,
}

#[derive(Deserialize, Default)]
struct AuthEntry {
    #[serde(default)]
    auth: Option<String>,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    password: Option<String>,
}

/// Where credentials come from, in order of precedence.
#[derive(Default, Debug)]
pub struct CredentialStore {
    explicit: HashMap<String, Credential>,
    files: Vec<PathBuf>,
}

/// `host` without scheme and path, with Docker Hub's aliases folded.
fn normalize_host(key: &str) -> String {
    let k = key
        .trim_start_matches("https://")
        .trim_start_matches("http://");
    let k = k.split('/').next().unwrap_or(k);
    match k {
        "index.docker.io" | "registry-1.docker.io" | "docker.io" => "docker.io".to_string(),
        other => other.to_string(),
    }
}

impl CredentialStore {
    /// The usual files (those that exist are read when asked).
    pub fn from_environment() -> CredentialStore {
        let mut files = Vec::new();
        if let Some(p) = std::env::var_os("REGISTRY_AUTH_FILE") {
            files.push(PathBuf::from(p));
        }
        if let Some(p) = std::env::var_os("XDG_RUNTIME_DIR") {
            files.push(Path::new(&p).join("containers/auth.json"));
        }
        if let Some(p) = std::env::var_os("DOCKER_CONFIG") {
            files.push(Path::new(&p).join("config.json"));
        } else if let Some(home) = std::env::var_os("HOME") {
            files.push(Path::new(&home).join(".docker/config.json"));
        }
        CredentialStore {
            explicit: HashMap::new(),
            files,
        }
    }

    /// No credentials at all, unless added with [`CredentialStore::insert`].
    pub fn empty() -> CredentialStore {
        CredentialStore::default()
    }

    /// Uses `credential` for `host` before any file.
    pub fn insert(&mut self, host: &str, credential: Credential) {
        self.explicit.insert(normalize_host(host), credential);
    }

    /// The credential for `host`, if any; errors name the file that is bad.
    pub fn lookup(&self, host: &str) -> Result<Option<Credential>, String> {
        let host = normalize_host(host);
        if let Some(c) = self.explicit.get(&host) {
            return Ok(Some(c.clone()));
        }
        for path in &self.files {
            let text = match std::fs::read_to_string(path) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(format!("{}: {e}", path.display())),
            };
            let file: AuthFile = serde_json::from_str(&text)
                .map_err(|e| format!("{}: not a registry auth file: {e}", path.display()))?;
            // Docker's order: a per-registry helper, then a stored entry,
            // then the default store (`docker login` with a credsStore
            // leaves an empty `auths` entry beside it).
            if let Some((_, helper)) = file
                .cred_helpers
                .iter()
                .find(|(k, _)| normalize_host(k) == host)
            {
                let origin = format!("credHelpers in {}", path.display());
                if let Some(c) = run_helper(helper, &host, &origin)? {
                    return Ok(Some(c));
                }
            }
            if let Some(c) = auth_entry(&file, &host, path)? {
                return Ok(Some(c));
            }
            if let Some(helper) = &file.creds_store {
                let origin = format!("credsStore in {}", path.display());
                match run_helper(helper, &host, &origin) {
                    Ok(Some(c)) => return Ok(Some(c)),
                    Ok(None) => {}
                    // A default store copied from a desktop machine must not
                    // break anonymous pulls where its helper is missing.
                    Err(e) if e.contains("is not on PATH") => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(None)
    }
}

/// The `auths` entry of `file` for `host` with a user and password, if any.
fn auth_entry(file: &AuthFile, host: &str, path: &Path) -> Result<Option<Credential>, String> {
    for (key, entry) in &file.auths {
        if normalize_host(key) != host {
            continue;
        }
        if let (Some(u), Some(p)) = (&entry.username, &entry.password) {
            return Ok(Some(Credential {
                username: u.clone(),
                password: p.clone(),
            }));
        }
        if let Some(auth) = entry.auth.as_deref().filter(|a| !a.trim().is_empty()) {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(auth.trim())
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| {
                    format!(
                        "{}: auths.{key}.auth is not base64 of user:password",
                        path.display()
                    )
                })?;
            let (u, p) = decoded.split_once(':').ok_or_else(|| {
                format!(
                    "{}: auths.{key}.auth has no `:` between user and password",
                    path.display()
                )
            })?;
            return Ok(Some(Credential {
                username: u.to_string(),
                password: p.to_string(),
            }));
        }
    }
    Ok(None)
}

/// Asks `docker-credential-<helper> get` for `host` (the docker credential
/// helper protocol: the server on stdin, `{"Username","Secret"}` on stdout).
/// `origin` says where the helper is configured, for errors.
fn run_helper(helper: &str, host: &str, origin: &str) -> Result<Option<Credential>, String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let program = format!("docker-credential-{helper}");
    let server = if host == "docker.io" {
        "https://index.docker.io/v1/"
    } else {
        host
    };
    let mut child = match Command::new(&program)
        .arg("get")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
            "credential helper {program} ({origin}) is not on PATH; install it or remove the entry"
        ))
        }
        Err(e) => return Err(format!("credential helper {program} ({origin}): {e}")),
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A helper that exits without reading stdin is judged by its output.
        let _ = stdin.write_all(server.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("credential helper {program} ({origin}): {e}"))?;
    if !out.status.success() {
        let said = format!(
            "{} {}",
            String::from_utf8_lossy(&out.stdout).trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
        let said = said.trim();
        // The protocol's answer for "nothing stored for this server".
        if said.to_ascii_lowercase().contains("credentials not found") || said.is_empty() {
            return Ok(None);
        }
        let said: String = said.chars().take(300).collect();
        return Err(format!(
            "credential helper {program} ({origin}) failed for {server}: {said}"
        ));
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    struct HelperOut {
        username: String,
        secret: String,
    }
    let parsed: HelperOut = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!("credential helper {program} ({origin}) printed no credentials JSON: {e}")
    })?;
    Ok(Some(Credential {
        username: parsed.username,
        password: parsed.secret,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_docker_config() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("config.json");
        let auth = base64::engine::general_purpose::STANDARD.encode("me:s3:cret");
        std::fs::write(
            &path,
            format!(r#"{{"auths":{{"https://index.docker.io/v1/":{{"auth":"{auth}"}},"127.0.0.1:5000":{{"username":"u","password":"p"}}}}}}"#),
        )
        .expect("write");
        let store = CredentialStore {
            explicit: HashMap::new(),
            files: vec![path],
        };
        let c = store.lookup("docker.io").expect("ok").expect("some");
        assert_eq!(
            (c.username.as_str(), c.password.as_str()),
            ("me", "s3:cret")
        );
        let c = store.lookup("127.0.0.1:5000").expect("ok").expect("some");
        assert_eq!(c.username, "u");
        assert!(store.lookup("quay.io").expect("ok").is_none());
    }
}
