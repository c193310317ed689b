//! Version ranges exactly as blang/semver v4's `ParseRange` reads them.
//!
//! OLM and opm read `olm.skipRange` and `olm.package` dependency ranges with
//! `github.com/blang/semver/v4`, so a range means what that parser makes of
//! it, quirks included. One implementation serves bundle validation, FBC
//! validation and the upgrade graph.
//!
//! Syntax: comparators separated by spaces are ANDed, `||` separates
//! alternatives (`>=1.0.0 <1.4.0 || 2.0.0`). Comparators are `=`, `==`, `!`,
//! `!=`, `>`, `>=`, `<`, `<=` or none (equality); versions are strict
//! semver (`1.2` and `v1.2.3` are refused). A space may follow `>`, `<` or
//! `=` (`>= 1.0.0`); only the space character separates, so a tab is an
//! error. Comparison is semver precedence: pre-releases count (`<1.0.0`
//! admits `1.0.0-rc.1`), build metadata is ignored.
//!
//! Wildcards are a lowercase `x` after a dot, expanded before parsing:
//!
//! | written   | becomes             |
//! |-----------|---------------------|
//! | `1.2.x`   | `>=1.2.0 <1.3.0`    |
//! | `1.x`     | `>=1.0.0 <2.0.0`    |
//! | `>1.2.x`  | `>=1.3.0`           |
//! | `<=1.x`   | `<2.0.0`            |
//! | `>=1.2.x` | `>=1.2.0`, `<1.2.x` → `<1.2.0` |
//!
//! and these blang behaviours, which look like bugs but are what OLM does:
//!
//! * `!=1.2.x` becomes `<1.2.0 >=1.3.0`, an AND that admits nothing;
//! * `1.x.x` is a patch wildcard of `1.0`: `>=1.0.0 <1.1.0`, not all of 1.x;
//! * `*` and `X` are not wildcards: `*` has no version (an error), `1.X` is
//!   not semver (an error);
//! * `!` is not joined to the version after a space, and a one-character
//!   token is dropped, so `! 1.0.0` means `1.0.0` and `1.0.0 - 2.0.0`
//!   means `=1.0.0 =2.0.0`;
//! * an operator blang does not know is dropped from a wildcard (`~1.2.x`
//!   becomes `1.2.0`), and is an error elsewhere (`~1.2.3`).
//!
//! blang panics when an alternative is empty (`1.0.0 || || 2.0.0`) at the
//! first version the earlier alternatives reject; that is an error here.
//! Error messages are this tool's own (blang's name the same part).

use std::cmp::Ordering;

use semver::Version;

/// blang/semver's `Parse`: strict `MAJOR.MINOR.PATCH[-PRE][+BUILD]`, with
/// blang's error text. The one reader of single versions the Go tools read
/// strictly.
pub fn parse(s: &str) -> Result<Version, String> {
    if s.is_empty() {
        return Err("Version string empty".into());
    }
    if s.splitn(3, '.').count() != 3 {
        return Err("No Major.Minor.Patch elements found".into());
    }
    Version::parse(s).map_err(|e| e.to_string())
}

/// blang/semver's `ParseTolerant` (OLM reads `spec.version`, CEL's
/// `semver_compare` and Kubernetes versions with it): trims spaces and a
/// leading `v`, drops leading zeros and fills in a missing minor or patch
/// (`1.22` is `1.22.0`); a short version with a pre-release or build is
/// refused.
pub fn parse_tolerant(s: &str) -> Result<Version, String> {
    let s = s.trim();
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s.splitn(3, '.').map(str::to_string).collect();
    for p in parts.iter_mut() {
        if p.len() > 1 {
            let trimmed = p.trim_start_matches('0');
            *p = if trimmed.is_empty() || !trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                format!("0{trimmed}")
            } else {
                trimmed.to_string()
            };
        }
    }
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return Err("Short version cannot contain PreRelease/Build meta data".into());
        }
        while parts.len() < 3 {
            parts.push("0".into());
        }
    }
    parse(&parts.join("."))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

impl Op {
    fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ne => "!=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Lt => "<",
            Op::Le => "<=",
        }
    }
}

/// A parsed range: any one of the AND-groups must hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Range {
    groups: Vec<Vec<(Op, Version)>>,
    text: String,
}

/// Semver precedence, ignoring build metadata (blang `Version.Compare`).
pub fn compare(a: &Version, b: &Version) -> Ordering {
    a.cmp_precedence(b)
}

/// A range blang/semver v4 refuses; the message names the part that is
/// wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RangeError {
    /// The range as given.
    pub text: String,
    /// What is wrong with it.
    pub message: String,
}

impl Range {
    /// Parses a range as blang/semver v4 `ParseRange` does; the error names
    /// the part that is wrong.
    pub fn parse(text: &str) -> Result<Range, RangeError> {
        Self::parse_message(text).map_err(|message| RangeError {
            text: text.to_string(),
            message,
        })
    }

    fn parse_message(text: &str) -> Result<Range, String> {
        let parts = split_and_trim(text);
        if parts.is_empty() {
            return Err(if text.trim().is_empty() {
                "the range is empty".into()
            } else {
                format!("`{text}` has no comparator: blang/semver ignores one-character tokens")
            });
        }
        // splitORParts.
        let mut alternatives: Vec<Vec<String>> = vec![Vec::new()];
        for (i, p) in parts.iter().enumerate() {
            if p == "||" {
                if i == 0 {
                    return Err(
                        "`||` must separate two ranges, but the range starts with it".into(),
                    );
                }
                alternatives.push(Vec::new());
            } else if let Some(last) = alternatives.last_mut() {
                last.push(p.clone());
            }
        }
        if parts.last().is_some_and(|p| p == "||") {
            return Err("`||` must separate two ranges, but the range ends with it".into());
        }
        if alternatives.iter().any(Vec::is_empty) {
            return Err("`|| ||`: an alternative is empty (blang/semver panics on it)".into());
        }
        // expandWildcardVersion over every part, then buildVersionRange.
        let mut expanded: Vec<Vec<(String, String)>> = Vec::new();
        for alt in &alternatives {
            let mut out = Vec::new();
            for part in alt {
                for e in expand_wildcard(part)? {
                    out.push((e, part.clone()));
                }
            }
            expanded.push(out);
        }
        let mut groups = Vec::new();
        for alt in expanded {
            let mut group = Vec::new();
            for (comparator, written) in alt {
                group.push(build(&comparator, &written)?);
            }
            groups.push(group);
        }
        Ok(Range {
            groups,
            text: text.to_string(),
        })
    }

    /// Whether `v` is in the range.
    pub fn admits(&self, v: &Version) -> bool {
        self.groups.iter().any(|g| {
            g.iter().all(|(op, bound)| {
                let c = compare(v, bound);
                match op {
                    Op::Eq => c.is_eq(),
                    Op::Ne => c.is_ne(),
                    Op::Gt => c.is_gt(),
                    Op::Ge => c.is_ge(),
                    Op::Lt => c.is_lt(),
                    Op::Le => c.is_le(),
                }
            })
        })
    }

    /// The range as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The range as blang evaluates it, wildcards expanded
    /// (`>=1.2.0 <1.3.0 || =2.0.0`).
    pub fn expanded(&self) -> String {
        self.groups
            .iter()
            .map(|g| {
                g.iter()
                    .map(|(op, v)| format!("{}{v}", op.as_str()))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join(" || ")
    }
}

/// blang's `splitAndTrim`: splits on the space character except right
/// after `>`, `<` or `=`, drops tokens of one character, then removes the
/// spaces left inside tokens.
fn split_and_trim(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut last = 0usize;
    let mut last_char = 0u8;
    for (i, &c) in b.iter().enumerate() {
        if c == b' ' && !matches!(last_char, b'>' | b'<' | b'=') {
            if last + 1 < i {
                out.push(&s[last..i]);
            }
            last = i + 1;
        } else if c != b' ' {
            last_char = c;
        }
    }
    if last + 1 < b.len() {
        out.push(&s[last..]);
    }
    out.into_iter().map(|p| p.replace(' ', "")).collect()
}

/// blang's `splitComparatorVersion`: the operator is what precedes the
/// first digit.
fn split_comparator(part: &str) -> Result<(&str, &str), String> {
    let i = part
        .find(|c: char| c.is_ascii_digit())
        .ok_or_else(|| format!("`{part}` has no version{}", no_version_hint(part)))?;
    Ok((part[..i].trim(), &part[i..]))
}

fn no_version_hint(part: &str) -> &'static str {
    if part.contains('*') {
        " (blang/semver has no `*` wildcard; write `x`, as in `1.x`)"
    } else {
        ""
    }
}

/// blang's `expandWildcardVersion` for one token: `part` itself, or the
/// one or two comparators a wildcard stands for.
fn expand_wildcard(part: &str) -> Result<Vec<String>, String> {
    let (op, ver) = split_comparator(part)?;
    if !part.contains(".x") {
        return Ok(vec![part.to_string()]);
    }
    let fields: Vec<&str> = ver.split('.').collect();
    // getWildcardType: the last field is `x`; its position decides.
    let kind = match (fields.last(), fields.len()) {
        (Some(&"x"), 2) => Wild::Minor,
        (Some(&"x"), 3) => Wild::Patch,
        _ => Wild::None,
    };
    // createVersionFromWildcard.
    let mut flat = ver.replacen(".x.x", ".x", 1).replacen(".x", ".0", 1);
    if flat.split('.').count() == 2 {
        flat.push_str(".0");
    }
    let mut out = Vec::new();
    let (result_op, increment) = match op {
        ">" => (">=", true),
        ">=" => (">=", false),
        "<" => ("<", false),
        "<=" => ("<", true),
        "" | "=" | "==" => {
            out.push(format!(">={flat}"));
            ("<", true)
        }
        "!=" | "!" => {
            out.push(format!("<{flat}"));
            (">=", true)
        }
        _ => ("", false),
    };
    let version = if increment {
        // A failed increment leaves no version, which then fails to parse.
        match kind {
            Wild::Patch => increment_field(&flat, 1),
            Wild::Minor => increment_field(&flat, 0),
            Wild::None => String::new(),
        }
    } else {
        flat
    };
    out.push(format!("{result_op}{version}"));
    Ok(out)
}

#[derive(Clone, Copy)]
enum Wild {
    None,
    Minor,
    Patch,
}

/// blang's `incrementMajorVersion`/`incrementMinorVersion`: adds one to a
/// dot-separated field (empty if it is not a number); later fields stay.
fn increment_field(v: &str, idx: usize) -> String {
    let mut parts: Vec<String> = v.split('.').map(String::from).collect();
    let Some(n) = parts.get(idx).and_then(|p| p.parse::<i64>().ok()) else {
        return String::new();
    };
    parts[idx] = (n + 1).to_string();
    parts.join(".")
}

/// blang's `buildVersionRange` for one expanded comparator; `written` is
/// the token as the user wrote it.
fn build(comparator: &str, written: &str) -> Result<(Op, Version), String> {
    let wild = if comparator != written {
        format!(" (the wildcard `{written}` expands to `{comparator}`)")
    } else {
        String::new()
    };
    let (op_str, ver) = split_comparator(comparator).map_err(|e| {
        if wild.is_empty() {
            e
        } else {
            format!("`{written}` has no version{wild}")
        }
    })?;
    let op = match op_str {
        "" | "=" | "==" => Op::Eq,
        "!" | "!=" => Op::Ne,
        ">" => Op::Gt,
        ">=" => Op::Ge,
        "<" => Op::Lt,
        "<=" => Op::Le,
        _ => {
            let hint = if op_str.ends_with(['v', 'V']) {
                " (a leading `v` is not allowed)"
            } else if op_str.contains(['~', '^']) {
                " (blang/semver has no `~` or `^`; write bounds such as `>=1.2.0 <1.3.0`)"
            } else {
                " (use =, !=, >, >=, < or <=)"
            };
            return Err(format!(
                "`{op_str}` in `{written}` is not a comparator{hint}"
            ));
        }
    };
    let v = Version::parse(ver).map_err(|e| {
        let hint = if ver.contains(['X', '*']) {
            " (the only wildcard is a lowercase `x`, as in `1.2.x`)"
        } else if ver
            .split(['-', '+'])
            .next()
            .is_some_and(|core| core.split('.').count() < 3)
        {
            " (all of major.minor.patch are required)"
        } else if ver.contains(['\t', '\n']) {
            " (separate comparators with spaces only)"
        } else {
            ""
        };
        format!("`{ver}` in `{written}` is not a semantic version: {e}{hint}{wild}")
    })?;
    Ok((op, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).expect("version")
    }

    fn exp(s: &str) -> String {
        Range::parse(s).expect(s).expanded()
    }

    #[test]
    fn and_or_and_spacing() {
        let r = Range::parse(">=1.0.0 <1.4.0 || 2.0.0").expect("parse");
        assert!(r.admits(&v("1.0.0")) && r.admits(&v("1.3.9")) && !r.admits(&v("1.4.0")));
        assert!(r.admits(&v("2.0.0")) && !r.admits(&v("2.0.1")));
        assert_eq!(exp(">= 1.2.0  <  1.5.0"), ">=1.2.0 <1.5.0");
        assert_eq!(exp("> = 1.0.0"), ">=1.0.0");
        assert_eq!(exp("  1.0.0  "), "=1.0.0");
        assert_eq!(exp("==1.0.0 !1.0.1 !=1.0.2"), "=1.0.0 !=1.0.1 !=1.0.2");
    }

    #[test]
    fn prerelease_and_build_metadata() {
        let r = Range::parse("<1.0.0").expect("parse");
        assert!(
            r.admits(&v("1.0.0-rc.1")),
            "pre-releases sort before the release"
        );
        assert!(!r.admits(&v("1.0.0+build.5")), "build metadata is ignored");
        assert!(Range::parse("=1.0.0").expect("p").admits(&v("1.0.0+abc")));
        assert!(Range::parse(">=4.1.0-0 <4.2.0")
            .expect("p")
            .admits(&v("4.1.0")));
    }

    #[test]
    fn wildcards_expand_as_blang_does() {
        assert_eq!(exp("1.2.x"), ">=1.2.0 <1.3.0");
        assert_eq!(exp("1.x"), ">=1.0.0 <2.0.0");
        assert_eq!(exp("=1.x"), ">=1.0.0 <2.0.0");
        assert_eq!(exp(">1.2.x"), ">=1.3.0");
        assert_eq!(exp(">=1.2.x"), ">=1.2.0");
        assert_eq!(exp("<1.2.x"), "<1.2.0");
        assert_eq!(exp("<=1.2.x"), "<1.3.0");
        assert_eq!(exp(">1.x"), ">=2.0.0");
        assert_eq!(exp("<=1.x"), "<2.0.0");
        // Quirks kept because OLM has them.
        assert_eq!(exp("!=1.2.x"), "<1.2.0 >=1.3.0");
        let ne = Range::parse("!=1.x").expect("p");
        for s in ["0.9.0", "1.5.0", "2.0.0"] {
            assert!(!ne.admits(&v(s)), "!=1.x admits nothing in blang ({s})");
        }
        assert_eq!(exp("1.x.x"), ">=1.0.0 <1.1.0");
        assert!(!Range::parse("1.x.x").expect("p").admits(&v("1.5.0")));
        assert_eq!(exp("~1.2.x"), "=1.2.0");
        assert_eq!(exp(">=1.x.3"), ">=1.0.3");
        assert_eq!(exp("! 1.0.0"), "=1.0.0");
        assert_eq!(exp("1.0.0 | 2.0.0"), "=1.0.0 =2.0.0");
        assert_eq!(exp("1.0.0 - 2.0.0"), "=1.0.0 =2.0.0");
    }

    #[test]
    fn errors_name_the_part() {
        let e = Range::parse(">=1.0 <2.0.0")
            .expect_err("short version")
            .to_string();
        assert!(
            e.contains("`>=1.0`") && e.contains("major.minor.patch"),
            "{e}"
        );
        let e = Range::parse(">=v1.0.0").expect_err("v").to_string();
        assert!(e.contains("`>=v`") && e.contains("leading `v`"), "{e}");
        let e = Range::parse(">=*").expect_err("star").to_string();
        assert!(e.contains("no `*` wildcard"), "{e}");
        let e = Range::parse("*").expect_err("star alone").to_string();
        assert!(e.contains("one-character"), "{e}");
        let e = Range::parse("1.2.*").expect_err("star").to_string();
        assert!(e.contains("lowercase `x`"), "{e}");
        let e = Range::parse("1.X").expect_err("X").to_string();
        assert!(e.contains("lowercase `x`"), "{e}");
        let e = Range::parse("~1.2.3").expect_err("tilde").to_string();
        assert!(e.contains("no `~` or `^`"), "{e}");
        let e = Range::parse("1.x.3")
            .expect_err("wildcard in the middle, no operator")
            .to_string();
        assert!(e.contains("expands to `<`"), "{e}");
        let e = Range::parse(">=1.0.0\t<2.0.0")
            .expect_err("tab")
            .to_string();
        assert!(e.contains("spaces only"), "{e}");
        for bad in [
            "",
            "   ",
            ">=1.0.0 ||",
            "|| 1.0.0",
            "1.0.0 || || 2.0.0",
            ">>1.0.0",
            "<1.0.0,>0.1.0",
            ">=",
            "1.0.0-01",
        ] {
            assert!(Range::parse(bad).is_err(), "{bad:?} should fail");
        }
    }
}
