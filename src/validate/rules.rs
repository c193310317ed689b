//! The catalog of default rules: stable id, level and a one-line summary.
//! Checks build findings through [`finding`], so a rule's level is defined in
//! one place; SARIF output takes its rule descriptions from here.

use crate::diag::{Finding, Level};

/// Where a rule comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The same check as operator-framework/api or operator-registry.
    Reference,
    /// A blind spot of the reference validators, checked only here.
    BlindSpot,
    /// A check of operator-framework/api that `operator-sdk bundle validate`
    /// does not run by default (the `ObjectValidator` of `object.go`; opm
    /// runs it only with `--optional-validators=bundle-objects`). It runs
    /// here by default and its findings say that operator-sdk would not
    /// report them.
    NotSdkDefault,
    /// Reading the bundle (YAML, files, layout).
    Load,
}

/// One rule.
pub struct Rule {
    /// Stable kebab-case id.
    pub id: &'static str,
    /// Its level.
    pub level: Level,
    /// Where it comes from.
    pub origin: Origin,
    /// What it checks.
    pub summary: &'static str,
}

const fn r(id: &'static str, level: Level, origin: Origin, summary: &'static str) -> Rule {
    Rule {
        id,
        level,
        origin,
        summary,
    }
}

use Level::{Error as E, Warning as W};
use Origin::{BlindSpot as B, Load as L, NotSdkDefault as O, Reference as R};

/// Every default rule (optional suites define their own).
#[rustfmt::skip]
pub const RULES: &[Rule] = &[
    // Reading the bundle (src/bundle).
    r("bundle-unreadable", E, L, "the bundle cannot be read (a broken symbolic link, a path that is not a directory)"),
    r("io-error", E, L, "reading a file or directory failed (permission denied, I/O error); the command exits with 2"),
    r("file-not-regular", E, L, "a FIFO, socket or device where a file was expected, or a file where manifests/ or metadata/ should be; it is not read"),
    r("not-a-bundle", E, R, "the path is not a bundle directory (a file, or a folder without manifests/ or metadata/): operator-sdk fails it (\"unable to find a csv\"); --skip-non-bundles skips it"),
    r("bundle-no-manifests-dir", E, R, "the bundle has no manifests/ directory"),
    r("bundle-no-metadata-dir", E, R, "the bundle has no metadata/ directory"),
    r("bundle-csv-outside-manifests", E, R, "a ClusterServiceVersion file in the bundle folder outside manifests/: operator-framework/api's loader reads the wrong folder (and fails when the file is beside manifests/); opm ignores the file"),
    r("yaml-syntax", E, L, "a file is not valid YAML (reported itself, not as a missing CSV)"),
    r("yaml-duplicate-key", E, B, "a mapping key appears twice: Go's YAML reader keeps the last value silently, the API server's strict field validation refuses the object"),
    r("file-empty", W, L, "a manifest or metadata file is empty"),
    r("file-not-utf8", E, L, "a file is not UTF-8"),
    r("file-too-large", E, L, "a file is over the size limit and was not read"),
    r("symlink-outside-bundle", E, L, "a symbolic link points outside the bundle"),
    r("manifest-not-an-object", E, L, "a manifest document is not a mapping"),
    r("manifest-subdirectory-ignored", W, L, "a directory inside manifests/ is ignored by opm"),
    r("annotations-missing", E, R, "metadata/annotations.yaml is missing or has no annotations mapping"),
    // operator-registry ValidateBundleFormat / ValidateBundleContent.
    r("annotation-missing", E, R, "a required bundle annotation is missing"),
    r("annotation-default-channel-missing", W, R, "channel.default.v1 is not set; opm picks a default channel itself"),
    r("annotation-mediatype-invalid", E, R, "mediatype.v1 is not registry+v1"),
    r("annotation-empty", E, R, "a bundle annotation that must have a value is empty"),
    r("annotation-default-channel-not-in-channels", E, B, "the default channel is not one of channels.v1: opm fails the package when no bundle is in its default channel"),
    r("annotation-manifests-path-mismatch", E, B, "manifests.v1 does not name the bundle's manifests/ directory"),
    r("annotation-metadata-path-mismatch", E, B, "metadata.v1 does not name the bundle's metadata/ directory"),
    r("dependency-invalid", E, R, "an entry of metadata/dependencies.yaml is invalid"),
    r("dependency-type-unsupported", E, R, "a dependency type OLM does not know"),
    r("dependency-cel-missing", E, R, "an olm.constraint dependency has no cel field"),
    r("dependency-cel-rule-missing", E, R, "an olm.constraint dependency's cel.rule is empty"),
    r("dependency-cel-invalid", E, R, "an olm.constraint dependency's cel.rule does not parse, uses an unknown identifier or function, or is not a boolean"),
    r("property-duplicate-in-csv-annotation", W, R, "a property appears twice in the CSV's olm.properties annotation"),
    r("property-duplicate-in-properties-file", W, R, "a property appears twice in metadata/properties.yaml"),
    r("property-in-csv-and-properties-file", W, R, "a property is defined both in the CSV's olm.properties annotation and in metadata/properties.yaml"),
    // operator-framework/api package_manifest.go (package manifest directories).
    r("package-manifest-name-empty", E, R, "packageName of the package manifest is empty"),
    r("package-manifest-channels-empty", E, R, "the package manifest has no channels"),
    r("package-manifest-default-channel-empty", E, R, "defaultChannel is empty while more than one channel exists"),
    r("package-manifest-channel-name-empty", E, R, "a channel of the package manifest has no name"),
    r("package-manifest-current-csv-empty", E, R, "a channel of the package manifest has no currentCSV"),
    r("package-manifest-channel-duplicate", E, R, "two channels of the package manifest have the same name"),
    r("package-manifest-default-channel-not-found", E, R, "defaultChannel is not one of the declared channels"),
    r("package-manifest-invalid", E, L, "the package manifest file does not decode (not a mapping, or a field of the wrong type)"),
    r("csv-missing", E, R, "manifests/ holds no ClusterServiceVersion"),
    r("csv-multiple", E, R, "manifests/ holds more than one ClusterServiceVersion"),
    r("csv-file-multiple-documents", E, B, "the CSV's file holds several documents; which one opm reads is an accident"),
    r("manifest-extra-document", W, B, "a second document in a manifest file, which opm silently drops"),
    r("manifest-extra-document-dropped-api", E, B, "a CRD or CSV in a second document, which opm silently drops"),
    r("manifest-kind-missing", E, R, "a manifest has no kind or apiVersion"),
    r("manifest-kind-unsupported", E, R, "a kind that registry+v1 bundles may not contain"),
    r("object-metadata-invalid", E, R, "metadata of an object would be refused by the API server"),
    r("resource-name-invalid", E, B, "a resource name is not a valid Kubernetes name"),
    // operator-framework/api csv.go and typecheck.go.
    r("csv-decode", E, R, "the CSV does not decode (a field has the wrong type)"),
    r("csv-name-invalid", E, R, "metadata.name of the CSV is not a DNS-1123 subdomain and label value"),
    r("csv-replaces-invalid", E, R, "spec.replaces is not a valid CSV name"),
    r("csv-field-missing", E, R, "a mandatory CSV field is missing"),
    r("csv-api-version-missing", E, R, "the CSV has no apiVersion"),
    r("csv-annotations-missing", W, R, "the CSV has no annotations"),
    r("csv-examples-missing", W, R, "the CSV has no alm-examples or olm.examples annotation"),
    r("csv-examples-both", W, R, "both alm-examples and olm.examples are present"),
    r("csv-examples-invalid", E, R, "the examples annotation is not valid JSON or not a list of objects"),
    r("csv-example-without-api", E, R, "an example's group/version/kind is not an API the CSV provides"),
    r("csv-api-without-example", W, R, "a provided API has no example"),
    r("csv-owned-crd-name-invalid", E, R, "an owned CRD name is not plural.group"),
    r("csv-install-modes-missing", E, R, "spec.installModes is empty"),
    r("csv-install-modes-none-supported", E, R, "no install mode is supported"),
    r("csv-conversion-webhook-install-modes", E, R, "conversion webhooks require AllNamespaces only"),
    r("csv-min-kube-version-missing", W, R, "spec.minKubeVersion is not set"),
    r("csv-min-kube-version-invalid", E, R, "spec.minKubeVersion is not semver"),
    r("csv-annotation-case", E, R, "an annotation key OLM reads case-sensitively is miscased"),
    r("csv-olm-properties-annotation", W, R, "olm.properties annotation instead of metadata/properties.yaml"),
    // Blind spots of the CSV checks.
    r("csv-version-missing", E, B, "spec.version is not set: opm cannot place the bundle in a channel (semver modes, FBC olm.package version)"),
    r("csv-version-not-semver", E, B, "spec.version is not strict semver: OLM accepts it (tolerant parse), opm refuses it when building an index"),
    r("csv-name-version-mismatch", W, B, "the version in metadata.name differs from spec.version"),
    r("csv-replaces-self", E, B, "spec.replaces names the bundle itself"),
    r("csv-skips-self", E, B, "spec.skips names the bundle itself"),
    r("csv-install-modes-duplicate", E, B, "an install mode type appears twice; OLM fails such a CSV (InvalidInstallModes)"),
    r("csv-install-mode-unknown", E, B, "an install mode type OLM does not know"),
    r("csv-deployment-name-missing", E, B, "an install deployment has no name"),
    r("csv-skip-range-invalid", E, B, "olm.skipRange is not a valid semver range"),
    r("csv-webhook-type-unknown", E, B, "a webhook definition of an unknown type"),
    r("csv-related-image-missing", E, B, "a related image without an image reference"),
    // operator-framework/api bundle.go.
    r("bundle-crd-duplicate", E, R, "two CRDs in the bundle define the same group/version/kind"),
    r("bundle-owned-crd-not-found", E, R, "an owned CRD of the CSV is not in the bundle"),
    r("bundle-crd-not-in-csv", E, R, "a CRD of the bundle is not owned by the CSV"),
    r("bundle-size-exceeded", E, R, "the gzip-compressed bundle is over 1 MiB, what one ConfigMap holds"),
    r("bundle-size-near-limit", W, R, "the gzip-compressed bundle is over 85% of the 1 MiB limit"),
    r("bundle-service-account-conflict", E, R, "a ServiceAccount object has the name of a deployment's service account"),
    // CRD validation (apiextensions ValidateCustomResourceDefinition after the CRD defaults,
    // minus the schema and status findings operator-framework/api drops).
    r("crd-api-version-unsupported", E, R, "a CRD apiVersion other than apiextensions.k8s.io/v1 or v1beta1"),
    r("crd-name-invalid", E, R, "metadata.name of a CRD is not spec.names.plural + \".\" + spec.group"),
    r("crd-group-invalid", E, R, "spec.group is missing, not a DNS subdomain or has no dot"),
    r("crd-names-invalid", E, R, "spec.names: plural, singular, kind, listKind, shortNames or categories missing or malformed, or kind = listKind"),
    r("crd-scope-invalid", E, R, "spec.scope is missing or not Cluster or Namespaced"),
    r("crd-versions-invalid", E, R, "version names malformed or repeated, not exactly one storage version, or spec.version not the first version"),
    r("crd-deprecation-warning-invalid", E, R, "a deprecationWarning on a version that is not deprecated, empty, too long or not printable"),
    r("crd-printer-column-invalid", E, R, "an additionalPrinterColumns entry without name or JSON path, or of an unknown type or format"),
    r("crd-scale-subresource-invalid", E, R, "the scale subresource's specReplicasPath or labelSelectorPath is missing or not a path under .spec/.status"),
    r("crd-per-version-conflict", E, R, "v1beta1: top-level and per-version schema, subresources or columns together, or per-version ones all identical"),
    r("crd-preserve-unknown-fields-invalid", E, R, "spec.preserveUnknownFields is true (v1beta1: not set to false, as it defaults to true), or not false while the schema has defaults"),
    r("crd-conversion-invalid", E, R, "spec.conversion: unknown strategy, webhook without a valid client config or review versions, or webhook settings under strategy None"),
    r("crd-api-approval-missing", E, R, "a CRD (v1 or v1beta1) in a *.k8s.io or *.kubernetes.io group without a valid api-approved.kubernetes.io annotation"),
    // operator-framework/api object.go.
    r("pdb-max-unavailable-zero", E, O, "a PodDisruptionBudget with maxUnavailable 0 or 0%"),
    r("pdb-min-available-full", E, O, "a PodDisruptionBudget with minAvailable 100%"),
    r("priorityclass-global-default", E, O, "a PriorityClass with globalDefault true"),
    r("rbac-pdb-permission", W, O, "RBAC allows creating or updating PodDisruptionBudgets"),
    r("rbac-default-scc-modify", E, O, "RBAC allows modifying default SecurityContextConstraints"),
];

/// The rule with `id`, if it is a default rule.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// A finding of default rule `id` at the rule's level. Blind-spot rules say
/// in their hint that operator-sdk does not check them.
pub fn finding(id: &str, message: impl Into<String>) -> Finding {
    let (level, origin) = match rule(id) {
        Some(r) => (r.level, r.origin),
        None => (Level::Error, Origin::Reference),
    };
    let f = Finding::new(level, id, message);
    match origin_note(origin) {
        Some(note) => f.hint(note),
        None => f,
    }
}

/// What a finding of a rule of `origin` says about operator-sdk.
fn origin_note(origin: Origin) -> Option<&'static str> {
    match origin {
        Origin::BlindSpot => Some(BLIND_SPOT_NOTE),
        Origin::NotSdkDefault => Some(NOT_SDK_DEFAULT_NOTE),
        Origin::Reference | Origin::Load => None,
    }
}

/// The note on findings of blind-spot rules.
pub const BLIND_SPOT_NOTE: &str = "operator-sdk bundle validate does not check this";

/// The note on findings of operator-framework/api's object checks.
pub const NOT_SDK_DEFAULT_NOTE: &str =
    "operator-sdk bundle validate does not check this by default \
(it is operator-framework/api's ObjectValidator, which `opm alpha bundle validate` runs only with \
--optional-validators=bundle-objects)";

/// Like [`finding`] with a hint; for blind-spot rules the hint is followed by
/// the note that operator-sdk does not check this.
pub fn finding_hint(id: &str, message: impl Into<String>, hint: &str) -> Finding {
    let note = rule(id).and_then(|r| origin_note(r.origin));
    let f = finding(id, message);
    match note {
        Some(note) => f.hint(format!("{hint}; {note}")),
        None => f.hint(hint),
    }
}

/// `f` (a finding made where the rule catalog is not at hand, such as the
/// bundle loader) at its rule's level, with the note on operator-sdk that
/// findings of its origin carry. Findings of rules outside the catalog are
/// left as they are.
pub fn conform(mut f: Finding) -> Finding {
    let Some(r) = rule(&f.rule) else {
        return f;
    };
    f.level = r.level;
    if let Some(note) = origin_note(r.origin) {
        f.hint = match f.hint.take() {
            Some(h) if h.contains(note) => Some(h),
            Some(h) => Some(format!("{h}; {note}")),
            None => Some(note.to_string()),
        };
    }
    f
}

/// The summary of a rule (default or optional) for SARIF output.
pub fn summary(id: &str) -> Option<String> {
    rule(id)
        .map(|r| r.summary.to_string())
        .or_else(|| super::optional::rules::rule(id).map(|r| r.summary.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_kebab_case() {
        let mut ids: Vec<_> = RULES.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate rule id");
        for id in ids {
            assert!(id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'));
        }
    }
}
