//! Checks of other bundle objects: operator-framework/api `object.go`
//! (PodDisruptionBudget, PriorityClass, RBAC rules).

use super::rules::finding_hint;
use crate::bundle::Manifest;
use crate::diag::Finding;
use crate::path;
use crate::yaml::{Node, Value};

/// OpenShift's default SecurityContextConstraints (as of 4.5).
const DEFAULT_SCCS: &[&str] = &[
    "privileged",
    "restricted",
    "anyuid",
    "hostaccess",
    "hostmount-anyuid",
    "hostnetwork",
    "node-exporter",
    "nonroot",
];

fn strings(n: Option<&Node>) -> Vec<String> {
    match n.map(|n| &n.value) {
        Some(Value::Seq(items)) => items
            .iter()
            .filter_map(|i| i.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    }
}

/// Runs the object checks on one manifest.
pub fn check(m: &Manifest, out: &mut Vec<Finding>) {
    match m.kind.as_str() {
        "PodDisruptionBudget" => {
            if let Some(n) = m.root.at(&path!["spec", "maxUnavailable"]) {
                // Upstream tests `IntVal == 0 || StrVal == "0%"` on an
                // IntOrString, so every string value ("50%" included, whose
                // IntVal is 0) is an error there. Only 0 and "0%" block all
                // disruption; those are what this reports.
                let zero = match &n.value {
                    Value::Int(0) => true,
                    Value::Str(s) => s == "0%",
                    _ => false,
                };
                if zero {
                    out.push(
                        finding_hint(
                            "pdb-max-unavailable-zero",
                            "maxUnavailable field cannot be set to 0 or 0%",
                            "a budget that allows no disruption blocks node drains and cluster upgrades",
                        )
                        .at(m.location(&path!["spec", "maxUnavailable"])),
                    );
                }
            }
            if let Some(n) = m.root.at(&path!["spec", "minAvailable"]) {
                if n.as_str() == Some("100%") {
                    out.push(
                        finding_hint(
                            "pdb-min-available-full",
                            "minAvailable field cannot be set to 100%",
                            "a budget that allows no disruption blocks node drains and cluster upgrades",
                        )
                        .at(m.location(&path!["spec", "minAvailable"])),
                    );
                }
            }
        }
        "PriorityClass" => {
            if matches!(
                m.root.get("globalDefault").map(|n| &n.value),
                Some(Value::Bool(true))
            ) {
                out.push(
                    finding_hint(
                        "priorityclass-global-default",
                        "globalDefault field cannot be set to true",
                        "a global default PriorityClass changes the priority of every pod in the cluster that names none",
                    )
                    .at(m.location(&path!["globalDefault"])),
                );
            }
        }
        "Role" | "ClusterRole" => {
            let rules = match m.root.get("rules").map(|n| &n.value) {
                Some(Value::Seq(items)) => items.as_slice(),
                _ => &[],
            };
            for (i, rule) in rules.iter().enumerate() {
                let groups = strings(rule.get("apiGroups"));
                let resources = strings(rule.get("resources"));
                let verbs = strings(rule.get("verbs"));
                let has = |list: &[String], items: &[&str]| {
                    list.iter().any(|x| items.contains(&x.as_str()))
                };
                if has(&groups, &["policy"])
                    && has(&resources, &["poddisruptionbudgets"])
                    && has(&verbs, &["*", "create", "update", "patch"])
                {
                    out.push(
                        finding_hint(
                            "rbac-pdb-permission",
                            "RBAC includes permission to create/update poddisruptionbudgets, which could impact cluster stability",
                            "an operator that writes budgets can block node drains and cluster upgrades",
                        )
                        .at(m.location(&path!["rules", i])),
                    );
                }
                if has(&groups, &["security.openshift.io"])
                    && has(&resources, &["securitycontextconstraints"])
                    && has(&verbs, &["*", "delete", "update", "patch"])
                    && has(&strings(rule.get("resourceNames")), DEFAULT_SCCS)
                {
                    out.push(
                        finding_hint(
                            "rbac-default-scc-modify",
                            "RBAC includes permission to modify default securitycontextconstraints, which could impact cluster stability",
                            "changing OpenShift's default SCCs changes what every workload of the cluster may do",
                        )
                        .at(m.location(&path!["rules", i])),
                    );
                }
            }
        }
        _ => {}
    }
}
