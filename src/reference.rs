//! Image references (`[HOST[:PORT]/]NAME[:TAG][@DIGEST]`) read by one
//! grammar: distribution's, as `reference.ParseNormalizedNamed` of
//! go.podman.io/image/v5/docker/reference applies it. opm v1.73.0 checks
//! bundle and related image pull specs with it (`validateImagePullSpec`),
//! and skopeo and cri-o pull by it, so the catalog validator
//! ([`crate::fbc`]) and the registry client (`oci`, with the `registry` feature) both read
//! references here and cannot disagree on what an image is.
//!
//! Normalization as that package does it: the first `/`-separated component
//! is the registry when it holds a `.` or `:` or is `localhost` (an
//! upper-case first component is not a registry: `MyReg/app` is an invalid
//! Docker Hub name); otherwise the image is on `docker.io`, where a
//! one-component name is under `library/`; `index.docker.io` is `docker.io`.
//! Digests are checked as github.com/opencontainers/go-digest checks them
//! (`sha256`, `sha384` and `sha512`). Error messages are the Go packages'.

/// A parsed, normalized reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// The registry host, with its port (`docker.io` for Docker Hub).
    pub domain: String,
    /// The repository path within the registry (`library/busybox`).
    pub path: String,
    /// The tag, when given.
    pub tag: Option<String>,
    /// The digest (`ALG:HEX`), when given.
    pub digest: Option<String>,
}

/// Why a reference does not parse, in the words of the Go packages.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ReferenceError(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, ReferenceError> {
    Err(ReferenceError(msg.into()))
}

/// Docker Hub's name in normalized references.
pub const DOCKER_HUB: &str = "docker.io";

/// Parses `spec` as `ParseNormalizedNamed` does.
pub fn parse_normalized(spec: &str) -> Result<Reference, ReferenceError> {
    if spec.len() == 64 && spec.bytes().all(|b| matches!(b, b'a'..=b'f' | b'0'..=b'9')) {
        return err(format!(
            "invalid repository name ({spec}), cannot specify 64-byte hexadecimal strings"
        ));
    }
    let (domain, remainder) = split_docker_domain(spec);
    let remote = remainder.split(':').next().unwrap_or("");
    if remote.to_lowercase() != remote {
        return err("invalid reference format: repository name must be lowercase");
    }
    parse(&format!("{domain}/{remainder}"))
}

/// `splitDockerDomain`.
fn split_docker_domain(name: &str) -> (String, String) {
    let (domain, remainder) = match name.find('/') {
        Some(i) if name[..i].contains(['.', ':']) || &name[..i] == "localhost" => {
            (&name[..i], name[i + 1..].to_string())
        }
        _ => (DOCKER_HUB, name.to_string()),
    };
    let domain = if domain == "index.docker.io" {
        DOCKER_HUB
    } else {
        domain
    };
    let remainder = if domain == DOCKER_HUB && !remainder.contains('/') {
        format!("library/{remainder}")
    } else {
        remainder
    };
    (domain.to_string(), remainder)
}

/// `reference.Parse` of a full reference (`DOMAIN/PATH...`).
fn parse(s: &str) -> Result<Reference, ReferenceError> {
    if !matches_reference(s) {
        if s.is_empty() {
            return err("repository name must have at least one component");
        }
        if matches_reference(&s.to_lowercase()) {
            return err("repository name must be lowercase");
        }
        return err("invalid reference format");
    }
    let (rest, digest) = match s.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (s, None),
    };
    let (name, tag) = split_tag(rest);
    if name.len() > 255 {
        return err("repository name must not be more than 255 characters");
    }
    if let Some(d) = digest {
        check_digest(d)?;
    }
    let (domain, path) = name.split_once('/').unwrap_or(("", name));
    Ok(Reference {
        domain: domain.to_string(),
        path: path.to_string(),
        tag: tag.map(str::to_string),
        digest: digest.map(str::to_string),
    })
}

/// `name[:tag]` split at a `:` that has no `/` after it.
fn split_tag(s: &str) -> (&str, Option<&str>) {
    match s.rfind(':') {
        Some(i) if !s[i..].contains('/') => (&s[..i], Some(&s[i + 1..])),
        _ => (s, None),
    }
}

/// Whether `s` matches distribution's anchored `ReferenceRegexp`.
fn matches_reference(s: &str) -> bool {
    let (rest, digest) = match s.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (s, None),
    };
    if digest.is_some_and(|d| !digest_syntax(d)) {
        return false;
    }
    let (name, tag) = split_tag(rest);
    if tag.is_some_and(|t| !tag_syntax(t)) {
        return false;
    }
    let segments: Vec<&str> = name.split('/').collect();
    let (first, others) = match segments.split_first() {
        Some(x) => x,
        None => return false,
    };
    let first_ok = name_component(first) || (!others.is_empty() && domain(first));
    first_ok && others.iter().all(|c| name_component(c))
}

/// `[a-z0-9]+` joined by `.`, `_`, `__` or any run of `-`.
fn name_component(c: &str) -> bool {
    let b = c.as_bytes();
    let alnum = |x: u8| x.is_ascii_lowercase() || x.is_ascii_digit();
    if b.is_empty() || !alnum(b[0]) || !alnum(b[b.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if alnum(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && !alnum(b[i]) {
            i += 1;
        }
        let sep = &c[start..i];
        if !(sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|x| x == b'-')) {
            return false;
        }
    }
    true
}

/// A registry host: DNS-like components joined by `.`, or a bracketed IPv6
/// address, and an optional `:port`.
fn domain(d: &str) -> bool {
    let (host, port) = if let Some(rest) = d.strip_prefix('[') {
        let Some(end) = rest.find(']') else {
            return false;
        };
        let addr = &rest[..end];
        if addr.is_empty() || !addr.bytes().all(|b| b.is_ascii_hexdigit() || b == b':') {
            return false;
        }
        match &rest[end + 1..] {
            "" => return true,
            p => match p.strip_prefix(':') {
                Some(port) => ("x", Some(port)),
                None => return false,
            },
        }
    } else {
        match d.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (d, None),
        }
    };
    if port.is_some_and(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    host.split('.').all(|c| {
        let b = c.as_bytes();
        !b.is_empty()
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(|x| x.is_ascii_alphanumeric() || *x == b'-')
    })
}

/// `[\w][\w.-]{0,127}`.
fn tag_syntax(t: &str) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let b = t.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && word(b[0])
        && b.iter().all(|&x| word(x) || x == b'.' || x == b'-')
}

/// `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[[:xdigit:]]{32,}`.
fn digest_syntax(d: &str) -> bool {
    let Some((alg, hex)) = d.split_once(':') else {
        return false;
    };
    let alg_ok = alg.split(['-', '_', '+', '.']).all(|part| {
        let b = part.as_bytes();
        !b.is_empty() && b[0].is_ascii_alphabetic() && b.iter().all(u8::is_ascii_alphanumeric)
    });
    alg_ok && hex.len() >= 32 && hex.bytes().all(|b| b.is_ascii_hexdigit())
}

/// go-digest's `Digest.Validate`.
fn check_digest(d: &str) -> Result<(), ReferenceError> {
    let (alg, hex) = d.split_once(':').unwrap_or((d, ""));
    let size = match alg {
        "sha256" => 32,
        "sha384" => 48,
        "sha512" => 64,
        _ => return err("unsupported digest algorithm"),
    };
    if hex.len() != size * 2 {
        return err("invalid checksum digest length");
    }
    if !hex.bytes().all(|b| matches!(b, b'a'..=b'f' | b'0'..=b'9')) {
        return err("invalid checksum digest format");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(s: &str) -> Result<(), String> {
        parse_normalized(s).map(|_| ()).map_err(|e| e.0)
    }

    #[test]
    fn accepts_what_distribution_accepts() {
        let sha = "abcd1234".repeat(8);
        for ok in [
            "foo-bundle:v0.1.0".to_string(),
            "registry.io/image".into(),
            "bar".into(),
            "localhost:5000/a/b:1".into(),
            "127.0.0.1:5000/cop/etcd-bundle:0.9.4".into(),
            format!("quay.io/operator-framework/foo-bundle@sha256:{sha}"),
            format!("quay.io/operator-framework/foo-bundle:v0.1.0@sha256:{sha}"),
            format!("quay.io/x@sha512:{sha}{sha}"),
            "[::1]:5000/x/y:z".into(),
            "a__b/c-----d/e.f".into(),
        ] {
            assert_eq!(check(&ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn refuses_what_distribution_refuses() {
        let sha = "abcd1234".repeat(8);
        for (bad, why) in [
            (
                format!("quay.io/operator-framework/foo-bundle@ssha256:{sha}abcd1234"),
                "unsupported digest algorithm",
            ),
            (
                "quay.io/operator-framework/foo-bundle@md5:abcd1234abcd1234abcd1234abcd1234"
                    .to_string(),
                "unsupported digest algorithm",
            ),
            (
                format!("quay.io/x@sha256:{sha}ab"),
                "invalid checksum digest length",
            ),
            (
                "quay.io/Upper/x".into(),
                "invalid reference format: repository name must be lowercase",
            ),
            (
                "MyReg/app:1".into(),
                "invalid reference format: repository name must be lowercase",
            ),
            // `my_reg.io/app` reads as a path of two components (Go too).
            ("my_reg.io:5000/app:1".into(), "invalid reference format"),
            (
                "quay.io/x:tag with space".into(),
                "invalid reference format",
            ),
            ("QUAY.io:bad/x".into(), "invalid reference format"),
            (sha.clone(), "cannot specify 64-byte hexadecimal strings"),
            (String::new(), "invalid reference format"),
        ] {
            let e = check(&bad).expect_err(&bad);
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn normalizes_as_parse_normalized_named() {
        let r = |s: &str| parse_normalized(s).expect(s);
        let hub = r("busybox");
        assert_eq!(
            (hub.domain.as_str(), hub.path.as_str()),
            ("docker.io", "library/busybox")
        );
        assert_eq!(r("index.docker.io/busybox:1").path, "library/busybox");
        assert_eq!(r("index.docker.io/busybox:1").domain, "docker.io");
        assert_eq!(r("me/b:v1").path, "me/b");
        let d = format!("sha256:{}", "a".repeat(64));
        let full = r(&format!("q.io:5000/a/b:t@{d}"));
        assert_eq!(
            full,
            Reference {
                domain: "q.io:5000".into(),
                path: "a/b".into(),
                tag: Some("t".into()),
                digest: Some(d),
            }
        );
        assert_eq!(r("localhost/b").domain, "localhost");
    }
}
