//! Kubernetes label selectors (`metav1.LabelSelector`), as
//! `metav1.LabelSelectorAsSelector` reads and validates them and
//! `labels.Selector.Matches` applies them: how operator-controller picks
//! the ClusterCatalogs a ClusterExtension's `spec.source.catalog.selector`
//! names. Error texts are apimachinery v0.36's, operator-controller's
//! (`labels.NewRequirement`, `content.IsLabelKey`, `IsLabelValue`,
//! `field.Error`).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::k8s_names::{self, Apimachinery};

/// One requirement of a selector.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Req {
    /// `key = value` (matchLabels), or `In`.
    In(String, Vec<String>),
    /// `NotIn`.
    NotIn(String, Vec<String>),
    /// `Exists`.
    Exists(String),
    /// `DoesNotExist`.
    DoesNotExist(String),
}

/// A parsed label selector. Empty (no requirement): matches everything, as
/// operator-controller treats both an absent and an empty selector.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    reqs: Vec<Req>,
}

/// Go's `%#v` of a `[]string`.
fn go_strings(vals: &[String], nil: bool) -> String {
    if nil {
        return "[]string(nil)".into();
    }
    format!(
        "[]string{{{}}}",
        vals.iter()
            .map(|v| format!("{v:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// `labels.NewRequirement`: its errors, aggregated as `utilerrors` does.
fn new_requirement(key: &str, op: &str, vals: &[String], nil_vals: bool) -> Result<(), String> {
    let mut errs = Vec::new();
    let ke = k8s_names::qualified_name(key, Apimachinery::V0_36);
    if !ke.is_empty() {
        errs.push(format!("key: Invalid value: {key:?}: {}", ke.join("; ")));
    }
    let bad_vals = |detail: &str| {
        format!(
            "values: Invalid value: {}: {detail}",
            go_strings(vals, nil_vals)
        )
    };
    match op {
        "In" | "NotIn" if vals.is_empty() => {
            errs.push(bad_vals(
                "for 'in', 'notin' operators, values set can't be empty",
            ));
        }
        "=" if vals.len() != 1 => {
            errs.push(bad_vals(
                "exact-match compatibility requires one single value",
            ));
        }
        "Exists" | "DoesNotExist" if !vals.is_empty() => {
            errs.push(bad_vals(
                "values set must be empty for exists and does not exist",
            ));
        }
        _ => {}
    }
    for (i, v) in vals.iter().enumerate() {
        let ve = k8s_names::label_value(v, Apimachinery::V0_36);
        if !ve.is_empty() {
            errs.push(format!(
                "values[{i}][{key}]: Invalid value: {v:?}: {}",
                ve.join("; ")
            ));
        }
    }
    match errs.len() {
        0 => Ok(()),
        1 => Err(errs.remove(0)),
        _ => Err(format!("[{}]", errs.join(", "))),
    }
}

fn strings_of(v: Option<&Value>, what: &str) -> Result<(Vec<String>, bool), String> {
    match v {
        None | Some(Value::Null) => Ok((Vec::new(), true)),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| {
                x.as_str()
                    .map(String::from)
                    .ok_or_else(|| format!("{what} must be a list of strings"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|v| (v, false)),
        Some(_) => Err(format!("{what} must be a list of strings")),
    }
}

/// Why a selector is invalid, in apimachinery's words (what
/// operator-controller puts after "desired catalog selector is invalid: ").
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct InvalidSelector {
    /// apimachinery's message.
    pub message: String,
}

impl LabelSelector {
    /// Reads and validates a `metav1.LabelSelector` (JSON); the error is
    /// apimachinery's text. `matchLabels` are taken in key order (Go's map
    /// order is random: with several bad labels, which one a cluster names
    /// first varies).
    pub fn parse(v: &Value) -> Result<LabelSelector, InvalidSelector> {
        Self::parse_text(v).map_err(|message| InvalidSelector { message })
    }

    fn parse_text(v: &Value) -> Result<LabelSelector, String> {
        let mut reqs = Vec::new();
        if v.is_null() {
            return Ok(LabelSelector::default());
        }
        let Some(obj) = v.as_object() else {
            return Err("selector must be an object".into());
        };
        if let Some(ml) = obj.get("matchLabels").filter(|m| !m.is_null()) {
            let Some(ml) = ml.as_object() else {
                return Err("matchLabels must be a map of strings".into());
            };
            let sorted: BTreeMap<&String, &Value> = ml.iter().collect();
            for (k, val) in sorted {
                let Some(val) = val.as_str() else {
                    return Err(format!("matchLabels[{k}] must be a string"));
                };
                new_requirement(k, "=", &[val.to_string()], false)?;
                reqs.push(Req::In(k.clone(), vec![val.to_string()]));
            }
        }
        if let Some(me) = obj.get("matchExpressions").filter(|m| !m.is_null()) {
            let Some(me) = me.as_array() else {
                return Err("matchExpressions must be a list".into());
            };
            for e in me {
                let key = e.get("key").and_then(Value::as_str).unwrap_or("");
                let op = e.get("operator").and_then(Value::as_str).unwrap_or("");
                let (vals, nil) = strings_of(e.get("values"), "matchExpressions[].values")?;
                let req = match op {
                    "In" => Req::In(key.into(), vals.clone()),
                    "NotIn" => Req::NotIn(key.into(), vals.clone()),
                    "Exists" => Req::Exists(key.into()),
                    "DoesNotExist" => Req::DoesNotExist(key.into()),
                    _ => return Err(format!("{op:?} is not a valid label selector operator")),
                };
                new_requirement(key, op, &vals, nil)?;
                reqs.push(req);
            }
        }
        Ok(LabelSelector { reqs })
    }

    /// Whether a catalog with `labels` is selected.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.reqs.iter().all(|r| match r {
            Req::In(k, vs) => labels.get(k).is_some_and(|v| vs.contains(v)),
            Req::NotIn(k, vs) => labels.get(k).is_none_or(|v| !vs.contains(v)),
            Req::Exists(k) => labels.contains_key(k),
            Req::DoesNotExist(k) => !labels.contains_key(k),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn operator_controller_selector_errors() {
        let e = LabelSelector::parse(
            &json!({"matchExpressions": [{"key": "name", "operator": "bad", "values": ["value"]}]}),
        )
        .expect_err("bad operator")
        .message;
        assert_eq!(e, "\"bad\" is not a valid label selector operator");
        let e = LabelSelector::parse(&json!({"matchLabels": {"": "value"}}))
            .expect_err("key")
            .message;
        assert!(
            e.starts_with(
                "key: Invalid value: \"\": name part must be non-empty; name part must consist of"
            ),
            "{e}"
        );
        let e = LabelSelector::parse(&json!({"matchLabels": {"name": "&value"}}))
            .expect_err("value")
            .message;
        assert!(
            e.starts_with(
                "values[0][name]: Invalid value: \"&value\": a valid label must be an empty string"
            ),
            "{e}"
        );
        let s = LabelSelector::parse(
            &json!({"matchLabels": {"olm.operatorframework.io/metadata.name": "b"}}),
        )
        .expect("ok");
        let mut l = BTreeMap::new();
        l.insert(
            "olm.operatorframework.io/metadata.name".to_string(),
            "b".to_string(),
        );
        assert!(s.matches(&l));
        l.insert(
            "olm.operatorframework.io/metadata.name".to_string(),
            "a".to_string(),
        );
        assert!(!s.matches(&l));
    }
}
