//! Image pull specs as opm v1.73.0 checks those of a bundle (`image`,
//! `relatedImages[].image`) in `alpha/declcfg/declcfg_to_model.go`
//! (`validateImagePullSpec`): `reference.ParseNormalizedNamed` of
//! go.podman.io/image/v5/docker/reference (distribution's grammar) with
//! digests checked by github.com/opencontainers/go-digest (only `sha256`,
//! `sha384` and `sha512` are supported algorithms). An empty spec is not
//! checked.

/// Why a pull spec does not parse, in the words of the Go packages.
pub fn check(spec: &str) -> Result<(), String> {
    if spec.len() == 64 && spec.bytes().all(|b| matches!(b, b'a'..=b'f' | b'0'..=b'9')) {
        return Err(format!(
            "invalid repository name ({spec}), cannot specify 64-byte hexadecimal strings"
        ));
    }
    let (domain, remainder) = split_docker_domain(spec);
    let remote = remainder.split(':').next().unwrap_or("");
    if remote.to_lowercase() != remote {
        return Err("invalid reference format: repository name must be lowercase".into());
    }
    parse(&format!("{domain}/{remainder}"))
}

/// distribution's `splitDockerDomain`: the part before the first `/` is a
/// registry when it holds a `.` or `:` or is `localhost`.
fn split_docker_domain(name: &str) -> (&str, String) {
    match name.find('/') {
        Some(i) if name[..i].contains(['.', ':']) || &name[..i] == "localhost" => {
            (&name[..i], name[i + 1..].to_string())
        }
        _ if !name.contains('/') => ("docker.io", format!("library/{name}")),
        _ => ("docker.io", name.to_string()),
    }
}

/// distribution's `reference.Parse` of a full reference.
fn parse(s: &str) -> Result<(), String> {
    if !matches_reference(s) {
        if s.is_empty() {
            return Err("repository name must have at least one component".into());
        }
        if matches_reference(&s.to_lowercase()) {
            return Err("repository name must be lowercase".into());
        }
        return Err("invalid reference format".into());
    }
    let (rest, digest) = match s.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (s, None),
    };
    let (name, _) = split_tag(rest);
    if name.len() > 255 {
        return Err("repository name must not be more than 255 characters".into());
    }
    if let Some(d) = digest {
        check_digest(d)?;
    }
    Ok(())
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
fn check_digest(d: &str) -> Result<(), String> {
    let (alg, hex) = d.split_once(':').unwrap_or((d, ""));
    let size = match alg {
        "sha256" => 32,
        "sha384" => 48,
        "sha512" => 64,
        _ => return Err("unsupported digest algorithm".into()),
    };
    if hex.len() != size * 2 {
        return Err("invalid checksum digest length".into());
    }
    if !hex.bytes().all(|b| matches!(b, b'a'..=b'f' | b'0'..=b'9')) {
        return Err("invalid checksum digest format".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check;

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
                "quay.io/x:tag with space".into(),
                "invalid reference format",
            ),
            ("QUAY.io:bad/x".into(), "invalid reference format"),
            (sha.clone(), "cannot specify 64-byte hexadecimal strings"),
        ] {
            let e = check(&bad).expect_err(&bad);
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
