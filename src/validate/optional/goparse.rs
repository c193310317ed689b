//! The Go parsers the reference validators lean on, reimplemented so that a
//! value accepted or refused by `operator-sdk bundle validate` is accepted or
//! refused here too: `blang/semver` (`Parse`, `ParseTolerant`), `net/mail`
//! (`ParseAddress`) and `net/url` (`ParseRequestURI`).
//!
//! Each function returns the Go error text (without Go's `parse "…":`
//! wrapper) so messages can say why a value was refused.

/// A version as blang/semver compares them: build metadata is ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoVersion(pub semver::Version);

impl GoVersion {
    /// Whether `self >= other` by semver precedence (build metadata ignored,
    /// as blang's `GE` does).
    pub fn ge(&self, other: &GoVersion) -> bool {
        self.0.cmp_precedence(&other.0) != std::cmp::Ordering::Less
    }

    /// `major.minor.0`.
    pub fn minor(major: u64, minor: u64) -> GoVersion {
        GoVersion(semver::Version::new(major, minor, 0))
    }

    /// Whether this is blang's zero value `0.0.0` (build metadata ignored).
    pub fn is_zero(&self) -> bool {
        let v = &self.0;
        v.major == 0 && v.minor == 0 && v.patch == 0 && v.pre.is_empty()
    }
}

/// blang/semver `Parse` ([`crate::semver_range::parse`]).
pub fn semver_parse(s: &str) -> Result<GoVersion, String> {
    crate::semver_range::parse(s).map(GoVersion)
}

/// blang/semver `ParseTolerant` ([`crate::semver_range::parse_tolerant`]).
pub fn semver_parse_tolerant(s: &str) -> Result<GoVersion, String> {
    crate::semver_range::parse_tolerant(s).map(GoVersion)
}

/// Go `net/mail.ParseAddress`: one RFC 5322 address, `local@domain` or
/// `Display Name <local@domain>`.
pub fn parse_mail_address(s: &str) -> Result<(), String> {
    let mut p = MailParser {
        s: s.as_bytes(),
        pos: 0,
    };
    p.parse_address()?;
    if !p.skip_cfws() {
        return Err("mail: misformatted parenthetical comment".into());
    }
    if !p.empty() {
        return Err(format!(
            "mail: expected single address, got {:?}",
            String::from_utf8_lossy(&p.s[p.pos..])
        ));
    }
    Ok(())
}

struct MailParser<'a> {
    s: &'a [u8],
    pos: usize,
}

fn is_vchar(c: u8) -> bool {
    (0x21..=0x7e).contains(&c) || c >= 0x80
}

fn is_atext(c: u8, dot: bool) -> bool {
    match c {
        b'.' => dot,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b':' | b';' | b'@' | b'\\' | b',' | b'"' => false,
        _ => is_vchar(c),
    }
}

impl MailParser<'_> {
    fn empty(&self) -> bool {
        self.pos >= self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn consume(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    /// Skips folding white space and comments; false on an unclosed comment.
    fn skip_cfws(&mut self) -> bool {
        self.skip_space();
        while self.peek() == Some(b'(') {
            let mut depth = 0usize;
            loop {
                match self.peek() {
                    None => return false,
                    Some(b'(') => depth += 1,
                    Some(b')') => depth -= 1,
                    Some(b'\\') => self.pos += 1,
                    _ => {}
                }
                self.pos += 1;
                if depth == 0 {
                    break;
                }
            }
            self.skip_space();
        }
        true
    }

    fn parse_address(&mut self) -> Result<(), String> {
        self.skip_space();
        if self.empty() {
            return Err("mail: no address".into());
        }
        let start = self.pos;
        if self.consume_addr_spec().is_ok() {
            self.skip_space();
            if self.peek() == Some(b'(') && !self.skip_cfws() {
                return Err("mail: misformatted parenthetical comment".into());
            }
            return Ok(());
        }
        self.pos = start;
        if self.peek() != Some(b'<') {
            self.consume_phrase()?;
        }
        self.skip_space();
        if self.empty() {
            return Err("mail: no angle-addr".into());
        }
        if !self.consume(b'<') {
            return Err("mail: missing @ in addr-spec".into());
        }
        self.consume_addr_spec()?;
        if !self.consume(b'>') {
            return Err("mail: unclosed angle-addr".into());
        }
        Ok(())
    }

    fn consume_addr_spec(&mut self) -> Result<(), String> {
        let start = self.pos;
        let r = self.addr_spec_inner();
        if r.is_err() {
            self.pos = start;
        }
        r
    }

    fn addr_spec_inner(&mut self) -> Result<(), String> {
        self.skip_space();
        if self.empty() {
            return Err("mail: no addr-spec".into());
        }
        if self.peek() == Some(b'"') {
            if self.consume_quoted_string()?.is_empty() {
                return Err("mail: empty quoted-string in addr-spec".into());
            }
        } else {
            self.consume_atom(true, false)?;
        }
        if !self.consume(b'@') {
            return Err("mail: missing @ in addr-spec".into());
        }
        self.skip_space();
        if self.empty() {
            return Err("mail: no domain in addr-spec".into());
        }
        if self.peek() == Some(b'[') {
            self.consume_domain_literal()
        } else {
            self.consume_atom(true, false).map(|_| ())
        }
    }

    fn consume_atom(&mut self, dot: bool, permissive: bool) -> Result<&[u8], String> {
        let start = self.pos;
        while self.peek().is_some_and(|c| is_atext(c, dot)) {
            self.pos += 1;
        }
        let atom = &self.s[start..self.pos];
        if atom.is_empty() {
            return Err("mail: invalid string".into());
        }
        if !permissive
            && (atom[0] == b'.'
                || atom[atom.len() - 1] == b'.'
                || atom.windows(2).any(|w| w == b".."))
        {
            return Err("mail: invalid string".into());
        }
        Ok(atom)
    }

    fn consume_quoted_string(&mut self) -> Result<Vec<u8>, String> {
        // Opening quote.
        self.pos += 1;
        let mut out = Vec::new();
        let mut escaped = false;
        loop {
            let Some(c) = self.peek() else {
                return Err("mail: unclosed quoted-string".into());
            };
            self.pos += 1;
            if escaped {
                if !(is_vchar(c) || c == b' ' || c == b'\t') {
                    return Err("mail: bad character in quoted-string".into());
                }
                out.push(c);
                escaped = false;
            } else if c == b'"' {
                return Ok(out);
            } else if c == b'\\' {
                escaped = true;
            } else if is_vchar(c) || c == b' ' || c == b'\t' {
                out.push(c);
            } else {
                return Err("mail: bad character in quoted-string".into());
            }
        }
    }

    fn consume_domain_literal(&mut self) -> Result<(), String> {
        self.pos += 1;
        loop {
            match self.peek() {
                None => return Err("mail: unclosed domain-literal".into()),
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(c) if (0x21..=0x7e).contains(&c) && c != b'[' && c != b'\\' => self.pos += 1,
                Some(c) => {
                    return Err(format!(
                        "mail: bad character in domain-literal: {:?}",
                        c as char
                    ))
                }
            }
        }
    }

    fn consume_phrase(&mut self) -> Result<(), String> {
        let mut words = 0;
        loop {
            if !self.skip_cfws() {
                break;
            }
            if self.empty() {
                break;
            }
            let r = if self.peek() == Some(b'"') {
                self.consume_quoted_string().map(|_| ())
            } else {
                self.consume_atom(true, true).map(|_| ())
            };
            if r.is_err() {
                break;
            }
            words += 1;
        }
        if words == 0 {
            return Err("mail: missing word in phrase: mail: invalid string".into());
        }
        Ok(())
    }
}

/// Go `net/url.ParseRequestURI`: an absolute URI or an absolute path; the
/// fragment is not split off, as in an HTTP request line.
pub fn parse_request_uri(raw: &str) -> Result<(), String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    if raw.is_empty() {
        return Err("empty url".into());
    }
    if raw == "*" {
        return Ok(());
    }
    let (scheme, rest) = get_scheme(raw)?;
    let rest = match rest.find('?') {
        Some(i) => &rest[..i],
        None => rest,
    };
    if !rest.starts_with('/') {
        if !scheme.is_empty() {
            // An opaque URI such as `mailto:someone@example.com`.
            return Ok(());
        }
        return Err("invalid URI for request".into());
    }
    let mut path = rest;
    if !scheme.is_empty() && rest.starts_with("//") {
        let authority_and_path = &rest[2..];
        let (authority, p) = match authority_and_path.find('/') {
            Some(i) => (&authority_and_path[..i], &authority_and_path[i..]),
            None => (authority_and_path, ""),
        };
        parse_authority(authority)?;
        path = p;
    }
    unescape(path, false)
}

fn get_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' => {
                if i == 0 {
                    return Ok(("", raw));
                }
            }
            b':' => {
                if i == 0 {
                    return Err("missing protocol scheme".into());
                }
                return Ok((&raw[..i], &raw[i + 1..]));
            }
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

fn parse_authority(authority: &str) -> Result<(), String> {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    parse_host(host)?;
    if let Some(u) = userinfo {
        let valid = u.bytes().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    b'-' | b'.'
                        | b'_'
                        | b':'
                        | b'~'
                        | b'!'
                        | b'$'
                        | b'&'
                        | b'\''
                        | b'('
                        | b')'
                        | b'*'
                        | b'+'
                        | b','
                        | b';'
                        | b'='
                        | b'%'
                        | b'@'
                )
                || c >= 0x80
        });
        if !valid {
            return Err("net/url: invalid userinfo".into());
        }
        unescape(u, false)?;
    }
    Ok(())
}

fn valid_optional_port(port: &str) -> bool {
    match port.strip_prefix(':') {
        None => port.is_empty(),
        Some(digits) => digits.bytes().all(|b| b.is_ascii_digit()),
    }
}

fn parse_host(host: &str) -> Result<(), String> {
    if host.starts_with('[') {
        let Some(i) = host.rfind(']') else {
            return Err("missing ']' in host".into());
        };
        let port = &host[i + 1..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {port:?} after host"));
        }
        return Ok(());
    }
    if let Some(i) = host.rfind(':') {
        let port = &host[i..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {port:?} after host"));
        }
    }
    unescape(host, true)
}

/// Checks percent-escapes (and, in a host, the characters allowed there).
fn unescape(s: &str, host: bool) -> Result<(), String> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let ok =
                    i + 2 < b.len() && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit();
                if !ok {
                    let end = (i + 3).min(b.len());
                    return Err(format!(
                        "invalid URL escape {:?}",
                        String::from_utf8_lossy(&b[i..end])
                    ));
                }
                i += 3;
            }
            c if host && c < 0x80 && !host_char_ok(c) => {
                return Err(format!("invalid character {:?} in host name", c as char));
            }
            _ => i += 1,
        }
    }
    Ok(())
}

fn host_char_ok(c: u8) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'-' | b'_'
                | b'.'
                | b'~'
                | b'!'
                | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerant_semver_like_blang() {
        let v = semver_parse_tolerant("v1.22").expect("tolerant");
        assert_eq!(v.0, semver::Version::new(1, 22, 0));
        assert_eq!(
            semver_parse_tolerant(" 1.025.3 ").expect("zeros").0,
            semver::Version::new(1, 25, 3)
        );
        assert!(semver_parse_tolerant("1.22-rc").is_err());
        assert!(semver_parse_tolerant("one").is_err());
        assert!(semver_parse_tolerant("").is_err());
        assert!(semver_parse("1.22").is_err());
        assert!(semver_parse("1.22.0").is_ok());
        assert!(semver_parse("01.22.0").is_err());
        assert!(GoVersion::minor(1, 25).ge(&GoVersion::minor(1, 22)));
        assert!(!GoVersion::minor(1, 21).ge(&GoVersion::minor(1, 22)));
        let rc = semver_parse("1.22.0-rc.1").expect("pre");
        assert!(!rc.ge(&GoVersion::minor(1, 22)));
        assert!(semver_parse("0.0.0+build").expect("zero").is_zero());
    }

    #[test]
    fn mail_addresses_like_net_mail() {
        for ok in [
            "someone@example.com",
            "Some One <someone@example.com>",
            "\"Some, One\" <someone@example.com>",
            "<a@b>",
            "a.b+c@x.y.z",
            "a@[10.0.0.1]",
            "someone@example.com (comment)",
        ] {
            assert!(parse_mail_address(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "someone",
            "someone@",
            "@example.com",
            "a..b@example.com",
            ".a@example.com",
            "Red Hat, Inc. <a@b.com>",
            "a@b.com, c@d.com",
            "Some One <someone@example.com",
            "someone at example.com",
        ] {
            assert!(parse_mail_address(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn request_uris_like_net_url() {
        for ok in [
            "https://example.com",
            "https://example.com/a b",
            "http://user:pw@example.com:8080/x?y#z",
            "/relative/absolute/path",
            "mailto:someone@example.com",
            "https://[::1]:80/",
            "https://example.com/%20",
        ] {
            assert!(parse_request_uri(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "github.com/org/repo",
            "://x",
            "https://exa mple.com",
            "https://example.com:port/",
            "https://example.com/%zz",
            "https://example.com/\n",
            "www.example.com",
        ] {
            assert!(parse_request_uri(bad).is_err(), "{bad}");
        }
    }
}
