//! Version ranges as OLM reads `olm.skipRange`: the syntax of blang/semver
//! (v3) `ParseRange`, which OLM and operator-registry use.
//!
//! A range is comparators joined by spaces (AND) and `||` (OR):
//! `>=1.0.0 <1.4.0 || 2.0.0`. Operators: `=`, `==`, `!`, `!=`, `>`, `>=`,
//! `<`, `<=`, or none (equality). A space may separate an operator from its
//! version (`>= 1.0.0`). Versions are full semver; `x`, `X` or `*` may stand
//! for the minor or patch number (`1.x`, `>=1.2.x`). Comparison is semver
//! precedence: pre-releases count (`<1.0.0` admits `1.0.0-rc.1`) and build
//! metadata is ignored.

use std::cmp::Ordering;

use semver::Version;

/// A parsed range: any one of the AND-groups must hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Range {
    groups: Vec<Vec<Comparator>>,
    text: String,
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

#[derive(Clone, Debug, PartialEq, Eq)]
struct Comparator {
    op: Op,
    version: Version,
}

/// Semver precedence, ignoring build metadata (blang `Version.Compare`).
pub fn compare(a: &Version, b: &Version) -> Ordering {
    a.cmp_precedence(b)
}

impl Comparator {
    fn admits(&self, v: &Version) -> bool {
        let c = compare(v, &self.version);
        match self.op {
            Op::Eq => c == Ordering::Equal,
            Op::Ne => c != Ordering::Equal,
            Op::Gt => c == Ordering::Greater,
            Op::Ge => c != Ordering::Less,
            Op::Lt => c == Ordering::Less,
            Op::Le => c != Ordering::Greater,
        }
    }
}

impl Range {
    /// Parses a range; the error says which part is wrong.
    pub fn parse(text: &str) -> Result<Range, String> {
        let parts = split_and_trim(text);
        if parts.is_empty() {
            return Err(format!("range `{text}` is empty"));
        }
        let mut groups = Vec::new();
        let mut current: Vec<Comparator> = Vec::new();
        let mut last_was_or = false;
        for part in parts {
            if part == "||" {
                if current.is_empty() {
                    return Err(format!(
                        "range `{text}`: `||` without a comparator before it"
                    ));
                }
                groups.push(std::mem::take(&mut current));
                last_was_or = true;
                continue;
            }
            last_was_or = false;
            match expand_wildcard(&part)? {
                Expanded::And(cs) => current.extend(cs),
                Expanded::Or(a, b) => {
                    // `!=1.x` is `<1.0.0 || >=2.0.0`: distribute over the group.
                    let mut left = current.clone();
                    left.push(a);
                    current.push(b);
                    groups.push(left);
                }
            }
        }
        if last_was_or {
            return Err(format!("range `{text}` ends with `||`"));
        }
        groups.push(current);
        Ok(Range {
            groups,
            text: text.to_string(),
        })
    }

    /// Whether `v` is in the range.
    pub fn admits(&self, v: &Version) -> bool {
        self.groups.iter().any(|g| g.iter().all(|c| c.admits(v)))
    }

    /// The range as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

enum Expanded {
    And(Vec<Comparator>),
    Or(Comparator, Comparator),
}

/// Splits on spaces, keeping an operator and the version after it together
/// (`>= 1.0.0` is one comparator), as blang's `splitAndTrim` does.
fn split_and_trim(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in s.split_whitespace() {
        cur.push_str(word);
        let ends_with_op = word.ends_with(['>', '<', '=', '!']);
        if !ends_with_op || word == "||" {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn parse_op(s: &str) -> (Op, &str) {
    for (prefix, op) in [
        (">=", Op::Ge),
        ("<=", Op::Le),
        ("!=", Op::Ne),
        ("==", Op::Eq),
        (">", Op::Gt),
        ("<", Op::Lt),
        ("!", Op::Ne),
        ("=", Op::Eq),
    ] {
        if let Some(rest) = s.strip_prefix(prefix) {
            return (op, rest);
        }
    }
    (Op::Eq, s)
}

fn is_wild(s: &str) -> bool {
    matches!(s, "x" | "X" | "*")
}

fn parse_version(s: &str, part: &str) -> Result<Version, String> {
    Version::parse(s).map_err(|e| format!("`{part}`: `{s}` is not a semantic version ({e})"))
}

fn expand_wildcard(part: &str) -> Result<Expanded, String> {
    let (op, ver) = parse_op(part);
    if ver.is_empty() {
        return Err(format!("`{part}`: operator without a version"));
    }
    let fields: Vec<&str> = ver.splitn(3, '.').collect();
    let wild_at = fields.iter().position(|f| is_wild(f));
    let Some(idx) = wild_at else {
        return Ok(Expanded::And(vec![Comparator {
            op,
            version: parse_version(ver, part)?,
        }]));
    };
    if idx == 0 || fields.len() < 2 {
        return Err(format!(
            "`{part}`: a wildcard may stand only for the minor or patch number"
        ));
    }
    let num = |s: &str| -> Result<u64, String> {
        s.parse::<u64>()
            .map_err(|_| format!("`{part}`: `{s}` is not a number"))
    };
    let major = num(fields[0])?;
    // Lower bound of the wildcard, and the first version past it.
    let (low, high) = if idx == 1 {
        (Version::new(major, 0, 0), Version::new(major + 1, 0, 0))
    } else {
        let minor = num(fields[1])?;
        (
            Version::new(major, minor, 0),
            Version::new(major, minor + 1, 0),
        )
    };
    let c = |op, version| Comparator { op, version };
    Ok(match op {
        Op::Eq => Expanded::And(vec![c(Op::Ge, low), c(Op::Lt, high)]),
        Op::Ne => Expanded::Or(c(Op::Lt, low), c(Op::Ge, high)),
        Op::Gt => Expanded::And(vec![c(Op::Ge, high)]),
        Op::Ge => Expanded::And(vec![c(Op::Ge, low)]),
        Op::Lt => Expanded::And(vec![c(Op::Lt, low)]),
        Op::Le => Expanded::And(vec![c(Op::Lt, high)]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).expect("version")
    }

    #[test]
    fn and_or_and_spacing() {
        let r = Range::parse(">=1.0.0 <1.4.0 || 2.0.0").expect("parse");
        assert!(r.admits(&v("1.0.0")));
        assert!(r.admits(&v("1.3.9")));
        assert!(!r.admits(&v("1.4.0")));
        assert!(r.admits(&v("2.0.0")));
        assert!(!r.admits(&v("2.0.1")));
        let r = Range::parse(">= 1.2.0 < 1.5.0").expect("spaced operators");
        assert!(r.admits(&v("1.4.2")));
        assert!(!r.admits(&v("1.1.0")));
    }

    #[test]
    fn prerelease_and_build_metadata() {
        let r = Range::parse("<1.0.0").expect("parse");
        assert!(
            r.admits(&v("1.0.0-rc.1")),
            "pre-releases sort before the release"
        );
        assert!(!r.admits(&v("1.0.0+build.5")), "build metadata is ignored");
        let r = Range::parse("=1.0.0").expect("parse");
        assert!(r.admits(&v("1.0.0+abc")));
    }

    #[test]
    fn wildcards() {
        let r = Range::parse("1.2.x").expect("parse");
        assert!(r.admits(&v("1.2.7")) && !r.admits(&v("1.3.0")));
        let r = Range::parse("!=1.x").expect("parse");
        assert!(r.admits(&v("0.9.0")) && r.admits(&v("2.0.0")) && !r.admits(&v("1.5.0")));
        let r = Range::parse("<=1.x").expect("parse");
        assert!(r.admits(&v("1.9.9")) && !r.admits(&v("2.0.0")));
    }

    #[test]
    fn errors_name_the_part() {
        let e = Range::parse(">=1.0 <2.0.0").expect_err("short version");
        assert!(e.contains("`>=1.0`"), "{e}");
        assert!(Range::parse("").is_err());
        assert!(Range::parse(">=1.0.0 ||").is_err());
    }
}
