//! `alpha-deprecated-apis`: Kubernetes APIs the bundle uses that a
//! Kubernetes release stopped serving (reference: `removed_apis.go`).
//!
//! Levels follow the reference: a use of an API removed in Kubernetes X is an
//! error when the bundle targets X or later — `--k8s-version` (the
//! reference's `k8s-version` optional value) or `spec.minKubeVersion` is at
//! or past X — and a warning otherwise, since without a target the bundle may
//! be installed on any cluster. The reference's rules cover 1.22, 1.25 and
//! 1.26 (objects, the CSV's owned and required resources, and, for 1.25
//! only and always as warnings, CSV permissions on the affected resources).
//! Beyond the reference, with the same levels, this also knows the removals
//! of 1.16 (workload APIs of `extensions/v1beta1`, `apps/v1beta1`,
//! `apps/v1beta2`), 1.26 (`flowcontrol.apiserver.k8s.io/v1beta1`), 1.27
//! (`CSIStorageCapacity` `storage.k8s.io/v1beta1`), 1.29
//! (`flowcontrol.apiserver.k8s.io/v1beta2`) and 1.32
//! (`flowcontrol.apiserver.k8s.io/v1beta3`).
//!
//! The reference reports one finding per Kubernetes version naming every
//! object; here each object (or CSV field) is its own finding, located.

use std::collections::BTreeSet;

use super::goparse::{self, GoVersion};
use super::{items, join, scalar, strings, text_at, Context};
use crate::bundle::Manifest;
use crate::diag::{Finding, Level};
use crate::path;
use crate::yaml::Seg;

/// One API version of a group that a Kubernetes release stopped serving.
#[derive(Clone, Copy, Debug)]
pub struct RemovedApi {
    /// The Kubernetes release (major, minor) that no longer serves it.
    pub removed_in: (u64, u64),
    /// API group (empty for the core group).
    pub group: &'static str,
    /// API version.
    pub version: &'static str,
    /// The kinds of that group/version removed then.
    pub kinds: &'static [&'static str],
    /// The apiVersion to migrate to.
    pub replacement: &'static str,
    /// Whether operator-framework/api checks it (the others are additions).
    pub in_reference: bool,
}

const fn api(
    removed_in: (u64, u64),
    group: &'static str,
    version: &'static str,
    kinds: &'static [&'static str],
    replacement: &'static str,
    in_reference: bool,
) -> RemovedApi {
    RemovedApi {
        removed_in,
        group,
        version,
        kinds,
        replacement,
        in_reference,
    }
}

/// Every removal checked, oldest first.
pub const REMOVED_APIS: &[RemovedApi] = &[
    api(
        (1, 16),
        "extensions",
        "v1beta1",
        &["Deployment", "DaemonSet", "ReplicaSet"],
        "apps/v1",
        false,
    ),
    api(
        (1, 16),
        "extensions",
        "v1beta1",
        &["NetworkPolicy"],
        "networking.k8s.io/v1",
        false,
    ),
    api(
        (1, 16),
        "extensions",
        "v1beta1",
        &["PodSecurityPolicy"],
        "policy/v1beta1",
        false,
    ),
    api(
        (1, 16),
        "apps",
        "v1beta1",
        &["Deployment", "StatefulSet", "ReplicaSet"],
        "apps/v1",
        false,
    ),
    api(
        (1, 16),
        "apps",
        "v1beta2",
        &["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"],
        "apps/v1",
        false,
    ),
    api(
        (1, 22),
        "apiextensions.k8s.io",
        "v1beta1",
        &["CustomResourceDefinition"],
        "apiextensions.k8s.io/v1",
        true,
    ),
    api(
        (1, 22),
        "scheduling.k8s.io",
        "v1beta1",
        &["PriorityClass"],
        "scheduling.k8s.io/v1",
        true,
    ),
    api(
        (1, 22),
        "rbac.authorization.k8s.io",
        "v1beta1",
        &["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"],
        "rbac.authorization.k8s.io/v1",
        true,
    ),
    api(
        (1, 22),
        "apiregistration.k8s.io",
        "v1beta1",
        &["APIService"],
        "apiregistration.k8s.io/v1",
        true,
    ),
    api(
        (1, 22),
        "authentication.k8s.io",
        "v1beta1",
        &["TokenReview"],
        "authentication.k8s.io/v1",
        true,
    ),
    api(
        (1, 22),
        "authorization.k8s.io",
        "v1beta1",
        &[
            "LocalSubjectAccessReview",
            "SelfSubjectAccessReview",
            "SubjectAccessReview",
        ],
        "authorization.k8s.io/v1",
        true,
    ),
    api(
        (1, 22),
        "admissionregistration.k8s.io",
        "v1beta1",
        &[
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        ],
        "admissionregistration.k8s.io/v1",
        true,
    ),
    api(
        (1, 22),
        "coordination.k8s.io",
        "v1beta1",
        &["Lease"],
        "coordination.k8s.io/v1",
        true,
    ),
    api(
        (1, 22),
        "extensions",
        "v1beta1",
        &["Ingress"],
        "networking.k8s.io/v1",
        true,
    ),
    api(
        (1, 22),
        "networking.k8s.io",
        "v1beta1",
        &["Ingress", "IngressClass"],
        "networking.k8s.io/v1",
        true,
    ),
    api(
        (1, 22),
        "storage.k8s.io",
        "v1beta1",
        &["CSIDriver", "CSINode", "StorageClass", "VolumeAttachment"],
        "storage.k8s.io/v1",
        true,
    ),
    api(
        (1, 22),
        "certificates.k8s.io",
        "v1beta1",
        &["CertificateSigningRequest"],
        "certificates.k8s.io/v1",
        true,
    ),
    api((1, 25), "batch", "v1beta1", &["CronJob"], "batch/v1", true),
    api(
        (1, 25),
        "discovery.k8s.io",
        "v1beta1",
        &["EndpointSlice"],
        "discovery.k8s.io/v1",
        true,
    ),
    api(
        (1, 25),
        "events.k8s.io",
        "v1beta1",
        &["Event"],
        "events.k8s.io/v1",
        true,
    ),
    api(
        (1, 25),
        "autoscaling",
        "v2beta1",
        &["HorizontalPodAutoscaler"],
        "autoscaling/v2",
        true,
    ),
    api(
        (1, 25),
        "policy",
        "v1beta1",
        &["PodDisruptionBudget"],
        "policy/v1",
        true,
    ),
    api(
        (1, 25),
        "policy",
        "v1beta1",
        &["PodSecurityPolicy"],
        "Pod Security Admission (PodSecurityPolicy has no successor API)",
        true,
    ),
    api(
        (1, 25),
        "node.k8s.io",
        "v1beta1",
        &["RuntimeClass"],
        "node.k8s.io/v1",
        true,
    ),
    api(
        (1, 26),
        "autoscaling",
        "v2beta2",
        &["HorizontalPodAutoscaler"],
        "autoscaling/v2",
        true,
    ),
    api(
        (1, 26),
        "flowcontrol.apiserver.k8s.io",
        "v1beta1",
        &["FlowSchema", "PriorityLevelConfiguration"],
        "flowcontrol.apiserver.k8s.io/v1",
        false,
    ),
    api(
        (1, 27),
        "storage.k8s.io",
        "v1beta1",
        &["CSIStorageCapacity"],
        "storage.k8s.io/v1",
        false,
    ),
    api(
        (1, 29),
        "flowcontrol.apiserver.k8s.io",
        "v1beta2",
        &["FlowSchema", "PriorityLevelConfiguration"],
        "flowcontrol.apiserver.k8s.io/v1",
        false,
    ),
    api(
        (1, 32),
        "flowcontrol.apiserver.k8s.io",
        "v1beta3",
        &["FlowSchema", "PriorityLevelConfiguration"],
        "flowcontrol.apiserver.k8s.io/v1",
        false,
    ),
];

/// Group/resources whose 1.25-removed API versions the reference looks for
/// in CSV permissions. RBAC rules name no version, so these stay warnings.
const PERMISSION_RESOURCES_1_25: &[(&str, &str)] = &[
    ("batch", "cronjobs"),
    ("discovery.k8s.io", "endpointslices"),
    ("events.k8s.io", "events"),
    ("autoscaling", "horizontalpodautoscalers"),
    ("policy", "poddisruptionbudgets"),
    ("policy", "podsecuritypolicies"),
    ("node.k8s.io", "runtimeclasses"),
];

/// The removal of `kind` in `api_version`, if any.
pub fn removal_of(api_version: &str, kind: &str) -> Option<&'static RemovedApi> {
    let (group, version) = split_api_version(api_version)?;
    REMOVED_APIS
        .iter()
        .find(|r| r.group == group && r.version == version && r.kinds.contains(&kind))
}

/// Splits `group/version` (or a core `version`); `None` when malformed, as
/// apimachinery's `ParseGroupVersion` fails on more than one slash.
fn split_api_version(api_version: &str) -> Option<(&str, &str)> {
    match api_version.split_once('/') {
        None => Some(("", api_version)),
        Some((g, v)) if !v.contains('/') => Some((g, v)),
        _ => None,
    }
}

fn rule_id(removed_in: (u64, u64)) -> String {
    format!(
        "alpha-deprecated-apis-removed-{}-{}",
        removed_in.0, removed_in.1
    )
}

fn guide(removed_in: (u64, u64)) -> String {
    format!(
        "https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v{}-{}",
        removed_in.0, removed_in.1
    )
}

/// What the bundle targets: `--k8s-version` and `spec.minKubeVersion`.
struct Targets {
    provided: Option<GoVersion>,
    min_kube: Option<GoVersion>,
}

impl Targets {
    /// The level of a use of an API removed in `removed_in`, and why.
    fn level(&self, removed_in: (u64, u64)) -> (Level, Option<String>) {
        let removed = GoVersion::minor(removed_in.0, removed_in.1);
        if let Some(v) = self.provided.as_ref().filter(|v| v.ge(&removed)) {
            return (
                Level::Error,
                Some(format!("the target Kubernetes version is {}", v.0)),
            );
        }
        if let Some(v) = self.min_kube.as_ref().filter(|v| v.ge(&removed)) {
            return (
                Level::Error,
                Some(format!("spec.minKubeVersion is {}", v.0)),
            );
        }
        (Level::Warning, None)
    }
}

/// Runs the removed-API checks over every object of the bundle.
pub fn check(ctx: &Context, csv: &Manifest, out: &mut Vec<Finding>) {
    let mut targets = Targets {
        provided: None,
        min_kube: None,
    };
    if let Some(v) = ctx.options.k8s_version.as_deref().filter(|v| !v.is_empty()) {
        match goparse::semver_parse_tolerant(v) {
            Ok(parsed) => targets.provided = Some(parsed),
            Err(e) => out.push(
                Finding::error(
                    "alpha-deprecated-apis-k8s-version-invalid",
                    format!("invalid Kubernetes version given to check APIs against: {v:?} ({e})"),
                )
                .hint("give a version such as 1.25 or 1.25.0"),
            ),
        }
    }
    let mkv_at = path!["spec", "minKubeVersion"];
    let mkv = text_at(csv, &mkv_at);
    if !mkv.is_empty() {
        match goparse::semver_parse_tolerant(&mkv) {
            Ok(parsed) => targets.min_kube = Some(parsed),
            Err(e) => out.push(
                Finding::error(
                    "alpha-deprecated-apis-min-kube-version-invalid",
                    format!(
                        "spec.minKubeVersion {mkv:?} cannot be used to check the APIs the bundle uses: {e}"
                    ),
                )
                .at(csv.location(&mkv_at))
                .hint("write a version such as 1.25.0"),
            ),
        }
    }

    for m in &ctx.bundle.manifests {
        if m.is_csv() && m.api_version == "operators.coreos.com/v1alpha1" {
            check_csv_fields(m, &targets, out);
            continue;
        }
        if let Some(r) = removal_of(&m.api_version, &m.kind) {
            let (level, why) = targets.level(r.removed_in);
            let name = if m.name.is_empty() {
                "(unnamed)"
            } else {
                &m.name
            };
            let mut msg = format!(
                "{} {name} uses {}, which Kubernetes {}.{} no longer serves",
                m.kind, m.api_version, r.removed_in.0, r.removed_in.1
            );
            if let Some(why) = why {
                msg.push_str(&format!(", and {why}"));
            }
            out.push(
                Finding::new(level, rule_id(r.removed_in), msg)
                    .at(m.location(&path!["apiVersion"]))
                    .hint(format!(
                        "migrate to {}; see {}",
                        r.replacement,
                        guide(r.removed_in)
                    )),
            );
        }
    }
}

/// The CSV's owned/required resources and its permissions.
fn check_csv_fields(csv: &Manifest, targets: &Targets, out: &mut Vec<Finding>) {
    // Resources the CSV itself describes, by the plural the reference
    // derives from the kind: permissions on them are the operator's own.
    let mut own_resources: BTreeSet<String> = BTreeSet::new();
    for list in ["owned", "required"] {
        let base = path!["spec", "customresourcedefinitions", list];
        for (i, desc) in items(csv.root.at(&base)).iter().enumerate() {
            for (j, res) in items(desc.get("resources")).iter().enumerate() {
                let kind = scalar(res.get("kind")).unwrap_or_default();
                let version = scalar(res.get("version")).unwrap_or_default();
                own_resources.insert(format!("{}s", kind.to_lowercase()));
                let Some(r) = removal_of(&version, &kind) else {
                    continue;
                };
                let (level, why) = targets.level(r.removed_in);
                let mut msg = format!(
                    "spec.customresourcedefinitions.{list}[{i}].resources[{j}] names {kind} {version}, \
                     which Kubernetes {}.{} no longer serves",
                    r.removed_in.0, r.removed_in.1
                );
                if let Some(why) = why {
                    msg.push_str(&format!(", and {why}"));
                }
                let at = join(
                    &base,
                    &[
                        Seg::Index(i),
                        "resources".into(),
                        Seg::Index(j),
                        "version".into(),
                    ],
                );
                out.push(
                    Finding::new(level, rule_id(r.removed_in), msg)
                        .at(csv.location(&at))
                        .hint(format!(
                            "migrate to {}; see {}",
                            r.replacement,
                            guide(r.removed_in)
                        )),
                );
            }
        }
    }

    for (field, key) in [
        ("clusterPermissions", "clusterPermissions"),
        ("permissions", "permissions"),
    ] {
        let base = path!["spec", "install", "spec", key];
        for (i, perm) in items(csv.root.at(&base)).iter().enumerate() {
            for (j, rule) in items(perm.get("rules")).iter().enumerate() {
                let groups = strings(rule.get("apiGroups"));
                let resources = strings(rule.get("resources"));
                for (_, group) in &groups {
                    for (k, resource) in &resources {
                        if own_resources.contains(resource.as_ref()) {
                            continue;
                        }
                        if !PERMISSION_RESOURCES_1_25
                            .iter()
                            .any(|(g, r)| g == group && r == resource)
                        {
                            continue;
                        }
                        let at = join(
                            &base,
                            &[
                                Seg::Index(i),
                                "rules".into(),
                                Seg::Index(j),
                                "resources".into(),
                                Seg::Index(*k),
                            ],
                        );
                        out.push(
                            Finding::warning(
                                "alpha-deprecated-apis-permission-1-25",
                                format!(
                                    "{field}[{i}].rules[{j}] grants access to {group}/{resource}, \
                                     an API whose beta version Kubernetes 1.25 no longer serves"
                                ),
                            )
                            .at(csv.location(&at))
                            .hint(format!(
                                "make sure the operator calls the served version of {group}/{resource}; see {}",
                                guide((1, 25))
                            )),
                        );
                    }
                }
            }
        }
    }
}
