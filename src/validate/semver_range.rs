//! Version ranges with the syntax and meaning of blang/semver's `ParseRange`,
//! which OLM and opm use for `olm.skipRange` and `olm.package` dependencies.
//!
//! A range is comparators joined by spaces (AND) and `||` (OR):
//! `>=1.0.0 <2.0.0`, `<1.2.3`, `>=1.0.0 <1.5.0 || >=2.0.0`. Comparators are
//! `=`, `==`, `!`, `!=`, `>`, `>=`, `<`, `<=` or none (equal); a space after
//! `>`, `<` or `=` is allowed. Versions must be strict semver (`1.2` is
//! refused) except for the wildcard forms `1.x` and `1.2.x`.

use semver::Version;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

/// A parsed range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SemverRange {
    /// OR of ANDs of comparators.
    alternatives: Vec<Vec<(Op, Version)>>,
}

/// Splits on spaces, except right after `>`, `<` or `=`, as blang does.
fn split_and_trim(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut last = ' ';
    for c in s.chars() {
        if c == ' ' {
            if !matches!(last, '>' | '<' | '=') && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
            last = c;
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn parse_op(op: &str) -> Option<Op> {
    Some(match op {
        "" | "=" | "==" => Op::Eq,
        "!" | "!=" => Op::Ne,
        ">" => Op::Gt,
        ">=" => Op::Ge,
        "<" => Op::Lt,
        "<=" => Op::Le,
        _ => return None,
    })
}

/// Expands `1.x` / `1.2.x` the way blang does; other versions pass through.
fn expand_wildcard(op: Op, v: &str) -> Result<Vec<(Op, Version)>, String> {
    let parts: Vec<&str> = v.split('.').collect();
    let num = |s: &str| -> Result<u64, String> {
        s.parse::<u64>()
            .map_err(|_| format!("invalid version component `{s}` in `{v}`"))
    };
    let (lo, hi) = match parts.as_slice() {
        [maj, "x"] | [maj, "x", "x"] => {
            let m = num(maj)?;
            (Version::new(m, 0, 0), Version::new(m + 1, 0, 0))
        }
        [maj, min, "x"] => {
            let (a, b) = (num(maj)?, num(min)?);
            (Version::new(a, b, 0), Version::new(a, b + 1, 0))
        }
        _ => return Err(format!("invalid wildcard version `{v}`")),
    };
    Ok(match op {
        Op::Eq => vec![(Op::Ge, lo), (Op::Lt, hi)],
        Op::Ne => return Err(format!("`!=` cannot be used with the wildcard `{v}`")),
        Op::Gt | Op::Le => vec![(if op == Op::Gt { Op::Ge } else { Op::Lt }, hi)],
        Op::Ge | Op::Lt => vec![(op, lo)],
    })
}

impl SemverRange {
    /// Parses a range; the error says which part is wrong.
    pub fn parse(s: &str) -> Result<SemverRange, String> {
        let tokens = split_and_trim(s);
        if tokens.is_empty() {
            return Err("the range is empty".into());
        }
        let mut alternatives = Vec::new();
        let mut current: Vec<(Op, Version)> = Vec::new();
        for tok in &tokens {
            if tok == "||" {
                if current.is_empty() {
                    return Err("`||` must separate two ranges".into());
                }
                alternatives.push(std::mem::take(&mut current));
                continue;
            }
            let split = tok
                .find(|c: char| !matches!(c, '<' | '>' | '=' | '!'))
                .unwrap_or(tok.len());
            let (op_str, ver) = tok.split_at(split);
            let op = parse_op(op_str)
                .ok_or_else(|| format!("could not parse comparator `{op_str}` in `{tok}`"))?;
            if ver.is_empty() {
                return Err(format!("`{tok}` has no version"));
            }
            if ver.split('.').any(|p| p == "x") {
                current.extend(expand_wildcard(op, ver)?);
                continue;
            }
            let v = Version::parse(ver).map_err(|e| {
                let hint = if ver.starts_with('v') {
                    " (a leading `v` is not allowed)"
                } else if ver.split('.').count() < 3 {
                    " (all of major.minor.patch are required)"
                } else {
                    ""
                };
                format!("`{ver}` is not a semantic version: {e}{hint}")
            })?;
            current.push((op, v));
        }
        if current.is_empty() {
            return Err("`||` must separate two ranges".into());
        }
        alternatives.push(current);
        Ok(SemverRange { alternatives })
    }

    /// Whether `v` is in the range.
    pub fn matches(&self, v: &Version) -> bool {
        self.alternatives.iter().any(|all| {
            all.iter().all(|(op, bound)| {
                let ord = cmp_semver(v, bound);
                match op {
                    Op::Eq => ord.is_eq(),
                    Op::Ne => !ord.is_eq(),
                    Op::Gt => ord.is_gt(),
                    Op::Ge => ord.is_ge(),
                    Op::Lt => ord.is_lt(),
                    Op::Le => ord.is_le(),
                }
            })
        })
    }
}

/// Semver precedence (build metadata ignored), as blang compares.
fn cmp_semver(a: &Version, b: &Version) -> std::cmp::Ordering {
    (a.major, a.minor, a.patch)
        .cmp(&(b.major, b.minor, b.patch))
        .then_with(|| match (a.pre.is_empty(), b.pre.is_empty()) {
            (true, true) => std::cmp::Ordering::Equal,
            (true, false) => std::cmp::Ordering::Greater,
            (false, true) => std::cmp::Ordering::Less,
            (false, false) => a.pre.cmp(&b.pre),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).expect("version")
    }

    #[test]
    fn parses_blang_syntax() {
        let r = SemverRange::parse(">=1.0.0 <2.0.0").expect("range");
        assert!(r.matches(&v("1.5.0")));
        assert!(!r.matches(&v("2.0.0")));
        let r = SemverRange::parse("<1.2.3").expect("range");
        assert!(r.matches(&v("1.2.2")) && !r.matches(&v("1.2.3")));
        let r = SemverRange::parse(">=1.0.0 <1.5.0 || >=2.0.0").expect("range");
        assert!(r.matches(&v("3.0.0")) && !r.matches(&v("1.7.0")));
        let r = SemverRange::parse(">= 1.0.0  < 1.1.0").expect("spaces after operators");
        assert!(r.matches(&v("1.0.5")));
        let r = SemverRange::parse("1.2.x").expect("wildcard");
        assert!(r.matches(&v("1.2.9")) && !r.matches(&v("1.3.0")));
        assert!(SemverRange::parse("!1.0.0")
            .expect("ne")
            .matches(&v("1.0.1")));
        assert!(SemverRange::parse(">=4.1.0-0 <4.2.0")
            .expect("pre")
            .matches(&v("4.1.0")));
    }

    #[test]
    fn refuses_what_blang_refuses() {
        for bad in [
            "",
            "<1.2",
            ">=v1.0.0",
            "~1.2.3",
            "^1.2.3",
            "1.0.0 ||",
            "|| 1.0.0",
            ">>1.0.0",
            "1.0.0 - 2.0.0",
            "<1.0.0,>0.1.0",
        ] {
            assert!(SemverRange::parse(bad).is_err(), "{bad:?} should fail");
        }
    }
}
