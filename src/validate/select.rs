//! `--select-optional`: picks optional suites with a Kubernetes label
//! selector over each suite's labels, as `operator-sdk bundle validate
//! --select-optional` does (`name=operatorhub`, `suite=operatorframework`,
//! `name in (good-practices,alpha-deprecated-apis)`, `suite=operatorframework,name!=operatorhub`).

/// An optional suite and the labels a selector matches against.
pub struct OptionalSuite {
    /// The name passed in [`super::Options::optional`].
    pub name: &'static str,
    /// The `name` label values operator-sdk uses (first is canonical).
    pub names: &'static [&'static str],
    /// The `suite` label, if the suite belongs to one.
    pub suite: Option<&'static str>,
    /// What the suite checks.
    pub description: &'static str,
}

/// Every optional suite, in the order they run.
pub const OPTIONAL_SUITES: &[OptionalSuite] = &[
    OptionalSuite {
        name: "operatorhub",
        names: &["operatorhub", "operatorhubv2"],
        suite: Some("operatorframework"),
        description: "OperatorHub.io metadata (CSV fields, icons, links, maintainers, categories)",
    },
    OptionalSuite {
        name: "good-practices",
        names: &["good-practices"],
        suite: Some("operatorframework"),
        description: "good practices (resource requests, CRD descriptions, channel naming)",
    },
    OptionalSuite {
        name: "alpha-deprecated-apis",
        names: &["alpha-deprecated-apis"],
        suite: Some("operatorframework"),
        description: "Kubernetes APIs removed in the target version (--k8s-version)",
    },
    OptionalSuite {
        name: "standard-categories",
        names: &["standardcategories", "standard-categories"],
        suite: Some("operatorframework"),
        description: "categories annotation uses only the standard OperatorHub categories",
    },
    OptionalSuite {
        name: "standard-capabilities",
        names: &["standardcapabilities", "standard-capabilities"],
        suite: Some("operatorframework"),
        description: "capabilities annotation is one of the standard capability levels",
    },
    // Not in suite=operatorframework: it reads every image's registry.
    OptionalSuite {
        name: "multiarch",
        names: &["multiarch"],
        suite: None,
        description: "the CSV's images provide the platforms of its operatorframework.io/arch.* and os.* labels (reads the registries)",
    },
];

#[derive(Debug, PartialEq)]
enum Req {
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

fn is_key(s: &str) -> bool {
    !s.is_empty()
        && crate::k8s_names::qualified_name(s, crate::k8s_names::Apimachinery::V0_26).is_empty()
}

fn is_value(s: &str) -> bool {
    crate::k8s_names::label_value(s, crate::k8s_names::Apimachinery::V0_26).is_empty()
}

/// Splits on commas that are not inside parentheses.
fn split_top(s: &str) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return Err("unbalanced `)`".into());
                }
            }
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err("unbalanced `(`".into());
    }
    out.push(&s[start..]);
    Ok(out)
}

fn parse_set(key: &str, rest: &str) -> Result<Vec<String>, String> {
    let inner = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| format!("`{key}`: a set must be written `(a,b)`"))?;
    let vals: Vec<String> = inner.split(',').map(|v| v.trim().to_string()).collect();
    if let Some(bad) = vals.iter().find(|v| !is_value(v)) {
        return Err(format!("`{bad}` is not a valid label value"));
    }
    Ok(vals)
}

fn parse_requirement(part: &str) -> Result<Req, String> {
    let p = part.trim();
    if p.is_empty() {
        return Err("empty requirement".into());
    }
    let check_key = |k: &str| -> Result<String, String> {
        let k = k.trim();
        if is_key(k) {
            Ok(k.to_string())
        } else {
            Err(format!("`{k}` is not a valid label key"))
        }
    };
    let check_val = |v: &str| -> Result<String, String> {
        let v = v.trim();
        if is_value(v) {
            Ok(v.to_string())
        } else {
            Err(format!("`{v}` is not a valid label value"))
        }
    };
    if let Some(k) = p.strip_prefix('!') {
        return Ok(Req::NotExists(check_key(k)?));
    }
    if let Some((k, v)) = p.split_once("!=") {
        return Ok(Req::NotIn(check_key(k)?, vec![check_val(v)?]));
    }
    if let Some((k, v)) = p.split_once("==") {
        return Ok(Req::In(check_key(k)?, vec![check_val(v)?]));
    }
    if let Some((k, v)) = p.split_once('=') {
        return Ok(Req::In(check_key(k)?, vec![check_val(v)?]));
    }
    let mut words = p.splitn(2, char::is_whitespace);
    let key = words.next().unwrap_or_default();
    match words.next().map(str::trim_start) {
        None => Ok(Req::Exists(check_key(key)?)),
        Some(rest) => {
            if let Some(set) = rest.strip_prefix("notin") {
                Ok(Req::NotIn(check_key(key)?, parse_set(key, set)?))
            } else if let Some(set) = rest.strip_prefix("in") {
                Ok(Req::In(check_key(key)?, parse_set(key, set)?))
            } else {
                Err(format!("cannot parse `{p}`: expected key=value, key!=value, key in (..), key notin (..), key or !key"))
            }
        }
    }
}

fn labels(s: &OptionalSuite) -> Vec<(&'static str, Vec<&'static str>)> {
    let mut l = vec![("name", s.names.to_vec())];
    if let Some(suite) = s.suite {
        l.push(("suite", vec![suite]));
    }
    l
}

fn matches(req: &Req, suite: &OptionalSuite) -> bool {
    let labels = labels(suite);
    let values = |k: &str| labels.iter().find(|(lk, _)| *lk == k).map(|(_, v)| v);
    match req {
        Req::In(k, vals) => {
            values(k).is_some_and(|vs| vs.iter().any(|v| vals.iter().any(|w| w == v)))
        }
        Req::NotIn(k, vals) => {
            !values(k).is_some_and(|vs| vs.iter().any(|v| vals.iter().any(|w| w == v)))
        }
        Req::Exists(k) => values(k).is_some(),
        Req::NotExists(k) => values(k).is_none(),
    }
}

/// The suites a selector picks, by [`OptionalSuite::name`], in run order.
/// Several `--select-optional` flags are ORed. A selector that matches no
/// suite is an error, so a typo does not silently run nothing.
pub fn select_optional(selectors: &[String]) -> Result<Vec<String>, String> {
    let mut picked = vec![false; OPTIONAL_SUITES.len()];
    for sel in selectors {
        let reqs = split_top(sel)
            .map_err(|e| format!("--select-optional `{sel}`: {e}"))?
            .into_iter()
            .map(parse_requirement)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("--select-optional `{sel}`: {e}"))?;
        let mut any = false;
        for (i, suite) in OPTIONAL_SUITES.iter().enumerate() {
            if reqs.iter().all(|r| matches(r, suite)) {
                picked[i] = true;
                any = true;
            }
        }
        if !any {
            let known: Vec<String> = OPTIONAL_SUITES
                .iter()
                .map(|s| format!("name={}", s.names[0]))
                .collect();
            return Err(format!(
                "--select-optional `{sel}` matches no optional suite; known: {}, suite=operatorframework",
                known.join(", ")
            ));
        }
    }
    Ok(OPTIONAL_SUITES
        .iter()
        .zip(picked)
        .filter(|(_, p)| *p)
        .map(|(s, _)| s.name.to_string())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(s: &str) -> Result<Vec<String>, String> {
        select_optional(&[s.to_string()])
    }

    #[test]
    fn selects_like_operator_sdk() {
        assert_eq!(sel("name=operatorhub").expect("ok"), vec!["operatorhub"]);
        assert_eq!(sel("suite=operatorframework").expect("ok").len(), 5);
        assert_eq!(
            sel("suite=operatorframework,name!=operatorhub")
                .expect("ok")
                .len(),
            4
        );
        assert_eq!(
            sel("name in (good-practices, alpha-deprecated-apis)").expect("ok"),
            vec!["good-practices", "alpha-deprecated-apis"]
        );
        // notin also matches multiarch, which has no suite label.
        assert_eq!(sel("name notin (operatorhub)").expect("ok").len(), 5);
        assert_eq!(sel("name=multiarch").expect("ok"), vec!["multiarch"]);
        assert_eq!(sel("!suite").expect("ok"), vec!["multiarch"]);
        assert_eq!(
            sel("name==standardcategories").expect("ok"),
            vec!["standard-categories"]
        );
        assert_eq!(sel("suite").expect("ok").len(), 5);
        assert!(sel("name=nope").is_err());
        assert!(sel("name in (a").is_err());
        assert!(sel("=x").is_err());
        let two = select_optional(&["name=operatorhub".into(), "name=good-practices".into()])
            .expect("ok");
        assert_eq!(two, vec!["operatorhub", "good-practices"]);
    }
}
