//! Version constraints as Masterminds/semver v3 reads them
//! (`NewConstraint`, `Constraints.Check`): how OLM v1 reads a
//! ClusterExtension's `version` (operator-controller
//! `catalogmetadata/compare.NewVersionRange`). This is not blang's range
//! syntax ([`crate::semver_range`], used by `olm.skipRange` and
//! `olm.package.required`): `,` and spaces both mean AND, `||` OR,
//! `1.2 - 1.4` is a hyphen range, `~`, `~>` and `^` are tilde and caret
//! ranges, `x`, `X` and `*` are wildcards, a missing minor or patch is a
//! wildcard, and a pre-release version matches only a comparator that
//! itself has a pre-release.

use std::cmp::Ordering;

use semver::Version;

/// One comparator.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Comparator {
    op: &'static str,
    /// The version compared with (wildcards as 0).
    con: Version,
    /// A wildcard or missing part somewhere.
    dirty: bool,
    minor_dirty: bool,
    patch_dirty: bool,
}

/// A parsed constraint: any one of the AND-groups must hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constraint {
    groups: Vec<Vec<Comparator>>,
    text: String,
}

const OPS: [&str; 12] = [
    "!=", ">=", "=>", "<=", "=<", "~>", ">", "<", "=", "~", "^", "",
];

fn is_x(s: &str) -> bool {
    matches!(s, "x" | "X" | "*")
}

/// Reads one `v?N(.N)?(.N)?(-pre)?(+build)?` at the start of `s`, N being
/// digits or a wildcard; returns its parts and the rest.
fn read_version(s: &str) -> Option<([&str; 3], &str, &str, &str)> {
    let s2 = s.strip_prefix('v').unwrap_or(s);
    let mut parts = ["", "", ""];
    let mut rest = s2;
    for (i, part) in parts.iter_mut().enumerate() {
        let body = if i == 0 {
            rest
        } else {
            match rest.strip_prefix('.') {
                Some(b) => b,
                None => break,
            }
        };
        let n = body
            .find(|c: char| !(c.is_ascii_digit() || is_x(&c.to_string())))
            .unwrap_or(body.len());
        if n == 0 {
            if i == 0 {
                return None;
            }
            break;
        }
        *part = &body[..n];
        rest = &body[n..];
    }
    let ident = |r: &str| {
        r.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.'))
            .unwrap_or(r.len())
    };
    let mut pre = "";
    if let Some(r) = rest.strip_prefix('-') {
        let n = ident(r);
        if n == 0 {
            return None;
        }
        pre = &r[..n];
        rest = &r[n..];
    }
    let mut build = "";
    if let Some(r) = rest.strip_prefix('+') {
        let n = ident(r);
        if n == 0 {
            return None;
        }
        build = &r[..n];
        rest = &r[n..];
    }
    Some((parts, pre, build, rest))
}

fn comparator(op: &'static str, parts: [&str; 3], pre: &str) -> Result<Comparator, String> {
    let num = |s: &str| s.parse::<u64>().map_err(|e| format!("`{s}`: {e}"));
    let (mut dirty, mut minor_dirty, mut patch_dirty) = (false, false, false);
    let (ma, mi, pa) = if is_x(parts[0]) || parts[0].is_empty() {
        dirty = true;
        (0, 0, 0)
    } else if is_x(parts[1]) || parts[1].is_empty() {
        dirty = true;
        minor_dirty = true;
        (num(parts[0])?, 0, 0)
    } else if is_x(parts[2]) || parts[2].is_empty() {
        dirty = true;
        patch_dirty = true;
        (num(parts[0])?, num(parts[1])?, 0)
    } else {
        (num(parts[0])?, num(parts[1])?, num(parts[2])?)
    };
    let mut con = Version::new(ma, mi, pa);
    if !pre.is_empty() {
        con.pre = semver::Prerelease::new(pre).map_err(|e| format!("`{pre}`: {e}"))?;
    }
    Ok(Comparator {
        op,
        con,
        dirty,
        minor_dirty,
        patch_dirty,
    })
}

/// `a - b` becomes `>= a, <= b`, as Masterminds' `rewriteRange` does.
fn rewrite_hyphens(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(" - ") {
        // The versions on either side of the hyphen.
        let (left, right) = (&rest[..i], rest[i + 3..].trim_start());
        let start = left
            .trim_end()
            .rfind([' ', ',', '|'])
            .map(|p| p + 1)
            .unwrap_or(0);
        let a = left[start..].trim();
        let end = right.find([' ', ',', '|']).unwrap_or(right.len());
        let b = &right[..end];
        let is_plain =
            |s: &str| !s.is_empty() && read_version(s).is_some_and(|(_, _, _, r)| r.is_empty());
        if is_plain(a) && is_plain(b) {
            out.push_str(&left[..start]);
            out.push_str(&format!(">= {a}, <= {b}"));
            rest = &right[end..];
        } else {
            out.push_str(&rest[..i + 3]);
            rest = &rest[i + 3..];
        }
    }
    out.push_str(rest);
    out
}

impl Constraint {
    /// Parses a constraint; the error says which part is wrong, in the
    /// words of the Masterminds/semver operator-controller pins (v3.5.0:
    /// `improper constraint: "X"`, the OR group quoted as Go's `%q` does;
    /// at most 512 bytes and 32 OR groups).
    pub fn parse(text: &str) -> Result<Constraint, String> {
        if text.len() > 512 {
            return Err("constraint string is too long (max 512 bytes)".into());
        }
        let rewritten = rewrite_hyphens(text);
        if rewritten.split("||").count() > 32 {
            return Err("too many constraint groups (max 32)".into());
        }
        let improper = |seg: &str| format!("improper constraint: {seg:?}");
        let mut groups = Vec::new();
        for seg in rewritten.split("||") {
            let mut group = Vec::new();
            let mut rest = seg.trim();
            if rest.is_empty() {
                return Err(improper(seg));
            }
            while !rest.is_empty() {
                let op = OPS
                    .iter()
                    .find(|o| !o.is_empty() && rest.starts_with(**o))
                    .copied()
                    .unwrap_or("");
                let after = rest[op.len()..].trim_start();
                let Some((parts, pre, _build, tail)) = read_version(after) else {
                    return Err(improper(seg));
                };
                group.push(comparator(op, parts, pre)?);
                let t = tail.trim_start();
                let t = t.strip_prefix(',').map(str::trim_start).unwrap_or(t);
                if t.len() == tail.len() && !t.is_empty() {
                    // No separator after the version.
                    return Err(improper(seg));
                }
                rest = t;
            }
            groups.push(group);
        }
        Ok(Constraint {
            groups,
            text: text.to_string(),
        })
    }

    /// Whether `v` satisfies the constraint.
    pub fn admits(&self, v: &Version) -> bool {
        self.groups.iter().any(|g| g.iter().all(|c| c.check(v)))
    }
}

fn cmp(a: &Version, b: &Version) -> Ordering {
    a.cmp_precedence(b)
}

impl Comparator {
    fn check(&self, v: &Version) -> bool {
        let c = &self.con;
        // A pre-release matches only comparators that name one ("issue 21").
        let pre_blocked = !v.pre.is_empty() && c.pre.is_empty();
        match self.op {
            "!=" => {
                if self.dirty {
                    if pre_blocked {
                        return false;
                    }
                    if c.major != v.major {
                        return true;
                    }
                    if self.minor_dirty {
                        return false;
                    }
                    if c.minor != v.minor {
                        return true;
                    }
                    if self.patch_dirty {
                        return (!v.pre.is_empty() || !c.pre.is_empty()) && v.pre != c.pre;
                    }
                    if c.patch != v.patch {
                        return true;
                    }
                }
                cmp(v, c).is_ne()
            }
            _ if pre_blocked => false,
            ">" => {
                if !self.dirty {
                    return cmp(v, c).is_gt();
                }
                match v.major.cmp(&c.major) {
                    Ordering::Greater => true,
                    Ordering::Less => false,
                    Ordering::Equal if self.minor_dirty => false,
                    Ordering::Equal if self.patch_dirty => v.minor > c.minor,
                    Ordering::Equal => cmp(v, c).is_gt(),
                }
            }
            "<" => cmp(v, c).is_lt(),
            ">=" | "=>" => cmp(v, c).is_ge(),
            "<=" | "=<" => {
                if !self.dirty {
                    return cmp(v, c).is_le();
                }
                !(v.major > c.major
                    || (v.major == c.major && v.minor > c.minor && !self.minor_dirty))
            }
            "~" | "~>" => self.tilde(v),
            "^" => {
                if cmp(v, c).is_lt() {
                    return false;
                }
                if c.major > 0 || self.minor_dirty {
                    return v.major == c.major;
                }
                if v.major > 0 {
                    return false;
                }
                if c.minor > 0 || self.patch_dirty {
                    return v.minor == c.minor;
                }
                if v.minor > 0 {
                    return false;
                }
                c.patch == v.patch
            }
            // "" and "=": a wildcard makes it a tilde range.
            _ => {
                if self.dirty {
                    self.tilde(v)
                } else {
                    cmp(v, c).is_eq()
                }
            }
        }
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.con;
        if cmp(v, c).is_lt() {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        v.major == c.major && (v.minor == c.minor || self.minor_dirty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(c: &str, v: &str) -> bool {
        Constraint::parse(c)
            .unwrap_or_else(|e| panic!("{c}: {e}"))
            .admits(&Version::parse(v).expect("version"))
    }

    /// Examples from Masterminds' README and operator-controller's docs.
    #[test]
    fn masterminds_forms() {
        assert!(ok(">=1.0.0, <2.0.0", "1.5.0"));
        assert!(ok(">=1.0.0 <2.0.0", "1.5.0"));
        assert!(!ok(">=1.0.0 <2.0.0", "2.0.0"));
        assert!(ok("1.2.x", "1.2.9") && !ok("1.2.x", "1.3.0"));
        assert!(ok("1.2", "1.2.5") && !ok("1.2", "1.3.0"));
        assert!(ok("1.2.3", "1.2.3") && !ok("1.2.3", "1.2.4"));
        assert!(ok("~1.2.3", "1.2.9") && !ok("~1.2.3", "1.3.0"));
        assert!(ok("^1.2.3", "1.9.0") && !ok("^1.2.3", "2.0.0"));
        assert!(ok("^0.2.3", "0.2.9") && !ok("^0.2.3", "0.3.0"));
        assert!(ok("1.2 - 1.4.5", "1.4.5") && !ok("1.2 - 1.4.5", "1.4.6"));
        assert!(ok("<=2.x", "2.9.0") && !ok("<=2.x", "3.0.0"));
        assert!(ok(">1.x", "2.0.0") && !ok(">1.x", "1.9.0"));
        assert!(ok("1.0.0 || 2.x", "2.3.0"));
        assert!(ok("*", "3.1.4") && !ok("*", "3.1.4-rc.1"));
        assert!(!ok(">=1.0.0", "1.1.0-rc.1"));
        assert!(ok(">=1.1.0-rc.0", "1.1.0-rc.1"));
        assert!(ok("!=1.2.3", "1.2.4") && !ok("!=1.2.3", "1.2.3"));
        assert!(Constraint::parse("1.2.3 garbage").is_err());
        assert!(Constraint::parse("").is_err());
    }
}
