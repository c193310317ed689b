//! The catalog of optional-suite rules: stable id, suite, level and a
//! one-line summary, so SARIF output can describe them and tests can check
//! that each has a case. The levels are those of operator-framework/api.

use crate::diag::Level;

/// One optional rule.
pub struct OptionalRule {
    /// Stable kebab-case id.
    pub id: &'static str,
    /// The suite that reports it.
    pub suite: &'static str,
    /// Its level; `None` when it depends on the target Kubernetes version
    /// (the removed-API rules: an error at or past the removal, else a warning).
    pub level: Option<Level>,
    /// What it checks.
    pub summary: &'static str,
}

const fn r(
    id: &'static str,
    suite: &'static str,
    level: Option<Level>,
    summary: &'static str,
) -> OptionalRule {
    OptionalRule {
        id,
        suite,
        level,
        summary,
    }
}

const E: Option<Level> = Some(Level::Error);
const W: Option<Level> = Some(Level::Warning);
const V: Option<Level> = None;

/// Every optional rule.
#[rustfmt::skip]
pub const OPTIONAL_RULES: &[OptionalRule] = &[
    r("optional-suite-unknown", "-", E, "an optional suite name that does not exist"),
    // operatorhub.go / operatorhubv2.go
    r("operatorhub-provider-name-missing", "operatorhub", E, "spec.provider.name is not set"),
    r("operatorhub-maintainer-incomplete", "operatorhub", E, "a maintainer without name or email"),
    r("operatorhub-maintainer-email-invalid", "operatorhub", E, "a maintainer email that is not an address"),
    r("operatorhub-link-incomplete", "operatorhub", E, "a link without name or url"),
    r("operatorhub-link-url-invalid", "operatorhub", E, "a link url that is not a URL"),
    r("operatorhub-version-missing", "operatorhub", E, "spec.version is not set"),
    r("operatorhub-icon-missing", "operatorhub", W, "spec.icon is not set"),
    r("operatorhub-icon-count", "operatorhub", E, "spec.icon holds more than one icon"),
    r("operatorhub-icon-incomplete", "operatorhub", E, "an icon without base64data or mediatype"),
    r("operatorhub-icon-mediatype-invalid", "operatorhub", E, "an icon mediatype other than png, jpeg, gif or svg+xml"),
    r("operatorhub-min-kube-version-missing", "operatorhub", W, "spec.minKubeVersion is not set"),
    r("operatorhub-min-kube-version-invalid", "operatorhub", E, "spec.minKubeVersion is not a version"),
    r("operatorhub-keywords-missing", "operatorhub", W, "spec.keywords is empty"),
    r("operatorhub-maturity-missing", "operatorhub", W, "spec.maturity is not set"),
    r("operatorhub-maturity-unknown", "operatorhub", W, "spec.maturity is not a known maturity"),
    r("operatorhub-repository-url-invalid", "operatorhub", W, "the repository annotation is not a URL"),
    r("operatorhub-display-name-missing", "operatorhub", W, "spec.displayName is not set"),
    r("operatorhub-description-missing", "operatorhub", W, "spec.description is not set"),
    r("operatorhub-container-image-missing", "operatorhub", W, "the containerImage annotation is not set"),
    r("operatorhub-repository-missing", "operatorhub", W, "the repository annotation is not set"),
    r("operatorhub-created-at-missing", "operatorhub", W, "the createdAt annotation is not set"),
    // good_practices.go
    r("good-practices-no-deployments", "good-practices", E, "the install strategy has no deployment"),
    r("good-practices-resource-requests-missing", "good-practices", W, "a container without resource requests"),
    r("good-practices-resource-requests-incomplete", "good-practices", W, "a container without a cpu or memory request"),
    r("good-practices-crd-description-empty", "good-practices", W, "an owned CRD without description"),
    r("good-practices-channel-naming", "good-practices", W, "a channel name outside the recommended conventions"),
    r("good-practices-rbac-creates-crds", "good-practices", W, "RBAC allows creating CustomResourceDefinitions"),
    r("good-practices-bundle-name-not-semver", "good-practices", W, "the CSV name's version part is not semver"),
    r("good-practices-bundle-name-convention", "good-practices", W, "the CSV name does not follow <package>.v<version>"),
    // removed_apis.go
    r("alpha-deprecated-apis-k8s-version-invalid", "alpha-deprecated-apis", E, "--k8s-version is not a version"),
    r("alpha-deprecated-apis-min-kube-version-invalid", "alpha-deprecated-apis", E, "spec.minKubeVersion is not a version"),
    r("alpha-deprecated-apis-permission-1-25", "alpha-deprecated-apis", W, "CSV permissions on an API removed in Kubernetes 1.25"),
    r("alpha-deprecated-apis-removed-1-16", "alpha-deprecated-apis", V, "an API removed in Kubernetes 1.16"),
    r("alpha-deprecated-apis-removed-1-22", "alpha-deprecated-apis", V, "an API removed in Kubernetes 1.22"),
    r("alpha-deprecated-apis-removed-1-25", "alpha-deprecated-apis", V, "an API removed in Kubernetes 1.25"),
    r("alpha-deprecated-apis-removed-1-26", "alpha-deprecated-apis", V, "an API removed in Kubernetes 1.26"),
    r("alpha-deprecated-apis-removed-1-27", "alpha-deprecated-apis", V, "an API removed in Kubernetes 1.27"),
    r("alpha-deprecated-apis-removed-1-29", "alpha-deprecated-apis", V, "an API removed in Kubernetes 1.29"),
    r("alpha-deprecated-apis-removed-1-32", "alpha-deprecated-apis", V, "an API removed in Kubernetes 1.32"),
    // standardcategories.go / standardcapabilities.go
    r("standard-categories-invalid", "standard-categories", E, "a category that is not a standard OperatorHub category"),
    r("standard-categories-custom-file-invalid", "standard-categories", E, "the custom categories file cannot be read or parsed"),
    r("standard-capabilities-invalid", "standard-capabilities", E, "a capabilities value that is not a standard level"),
    // multiarch.go
    r("multiarch-inspector-unavailable", "multiarch", W, "image platforms cannot be read in this run"),
    r("multiarch-image-uninspectable", "multiarch", W, "an image whose platforms cannot be read"),
    r("multiarch-image-platform-missing", "multiarch", E, "an image lacks a platform the CSV's labels claim"),
    r("multiarch-arch-label-missing", "multiarch", W, "the operator image supports an architecture the CSV has no label for"),
    r("multiarch-os-label-missing", "multiarch", W, "the operator image supports an OS the CSV has no label for"),
    r("multiarch-image-arch-missing", "multiarch", W, "an image lacks an architecture the other images provide"),
    r("multiarch-image-os-missing", "multiarch", W, "an image lacks an OS the other images provide"),
];

/// The optional rule with `id`.
pub fn rule(id: &str) -> Option<&'static OptionalRule> {
    OPTIONAL_RULES.iter().find(|r| r.id == id)
}
