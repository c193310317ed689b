//! `operatorhub`: the CSV metadata OperatorHub.io needs to publish and show
//! an operator (reference: `operatorhub.go`, `operatorhubv2.go`).
//!
//! Reference rules, at the reference's levels: provider name, maintainers
//! (name, email, RFC 5322 address), links (name, URL accepted by Go's
//! `url.ParseRequestURI`), `spec.version` set, one icon with data and an
//! image media type, `minKubeVersion` present (warning) and strict semver.
//!
//! Beyond the reference, as warnings, the fields OperatorHub.io's UI shows
//! and that its former `operator-courier verify --ui_validate_io` asked for:
//! `spec.displayName`, `spec.description`, `spec.keywords`, `spec.maturity`
//! (and a known maturity value), the `containerImage`, `repository` (and a
//! valid URL) and `createdAt` annotations.

use super::goparse;
use super::{items, join, scalar, text_at, Context};
use crate::bundle::Manifest;
use crate::diag::Finding;
use crate::path;
use crate::yaml::{Seg, Value};

/// The icon media types OperatorHub.io renders.
pub const ICON_MEDIA_TYPES: &[&str] = &["image/gif", "image/jpeg", "image/png", "image/svg+xml"];

/// The values of `spec.maturity` that OLM documents.
pub const MATURITIES: &[&str] = &[
    "planning",
    "pre-alpha",
    "alpha",
    "beta",
    "stable",
    "mature",
    "inactive",
    "deprecated",
];

/// Runs the operatorhub checks on the bundle's CSV.
pub fn check(_ctx: &Context, csv: &Manifest, out: &mut Vec<Finding>) {
    provider(csv, out);
    maintainers(csv, out);
    links(csv, out);
    version(csv, out);
    icon(csv, out);
    min_kube_version(csv, out);
    ui_fields(csv, out);
}

fn provider(csv: &Manifest, out: &mut Vec<Finding>) {
    let at = path!["spec", "provider", "name"];
    if text_at(csv, &at).trim().is_empty() {
        out.push(
            Finding::error(
                "operatorhub-provider-name-missing",
                "spec.provider.name is not specified",
            )
            .at(csv.key_location(&at))
            .hint("name the person or organization that ships the operator: `provider: {name: Example Inc.}`"),
        );
    }
}

fn maintainers(csv: &Manifest, out: &mut Vec<Finding>) {
    let base = path!["spec", "maintainers"];
    for (i, _) in items(csv.root.at(&base)).iter().enumerate() {
        let at = join(&base, &[Seg::Index(i)]);
        let name = text_at(csv, &join(&at, &path!["name"]));
        let email = text_at(csv, &join(&at, &path!["email"]));
        if name.is_empty() || email.is_empty() {
            out.push(
                Finding::error(
                    "operatorhub-maintainer-incomplete",
                    format!("spec.maintainers[{i}] should contain both name and email"),
                )
                .at(csv.location(&at)),
            );
        }
        if !email.is_empty() {
            if let Err(e) = goparse::parse_mail_address(&email) {
                out.push(
                    Finding::error(
                        "operatorhub-maintainer-email-invalid",
                        format!("spec.maintainers[{i}] email {email:?} is invalid: {e}"),
                    )
                    .at(csv.location(&join(&at, &path!["email"])))
                    .hint("write one address, like `someone@example.com` or `Some One <someone@example.com>`"),
                );
            }
        }
    }
}

fn links(csv: &Manifest, out: &mut Vec<Finding>) {
    let base = path!["spec", "links"];
    for (i, _) in items(csv.root.at(&base)).iter().enumerate() {
        let at = join(&base, &[Seg::Index(i)]);
        let name = text_at(csv, &join(&at, &path!["name"]));
        let url = text_at(csv, &join(&at, &path!["url"]));
        if name.is_empty() || url.is_empty() {
            out.push(
                Finding::error(
                    "operatorhub-link-incomplete",
                    format!("spec.links[{i}] should contain both name and url"),
                )
                .at(csv.location(&at)),
            );
        }
        if !url.is_empty() {
            if let Err(e) = goparse::parse_request_uri(&url) {
                out.push(
                    Finding::error(
                        "operatorhub-link-url-invalid",
                        format!("spec.links[{i}] url {url:?} is invalid: {e}"),
                    )
                    .at(csv.location(&join(&at, &path!["url"])))
                    .hint("use an absolute URL with a scheme, like https://example.com/docs"),
                );
            }
        }
    }
}

fn version(csv: &Manifest, out: &mut Vec<Finding>) {
    let at = path!["spec", "version"];
    let text = text_at(csv, &at);
    // An unparsable version is the default CSV suite's finding; here only
    // "not set" (Go's zero version) is reported, as the reference does.
    let unset = text.trim().is_empty()
        || goparse::semver_parse_tolerant(&text)
            .map(|v| v.is_zero())
            .unwrap_or(false);
    if unset {
        out.push(
            Finding::error("operatorhub-version-missing", "spec.version must be set")
                .at(csv.key_location(&at))
                .hint("set spec.version to the operator's semantic version, e.g. 1.2.3"),
        );
    }
}

fn icon(csv: &Manifest, out: &mut Vec<Finding>) {
    let at = path!["spec", "icon"];
    let node = csv.root.at(&at);
    let list = match node.map(|n| &n.value) {
        None | Some(Value::Null) => {
            out.push(
                Finding::warning("operatorhub-icon-missing", "spec.icon is not specified")
                    .at(csv.key_location(&at))
                    .hint("add one icon: `icon: [{base64data: <base64>, mediatype: image/png}]`"),
            );
            return;
        }
        Some(Value::Seq(list)) => list,
        // Another shape does not decode; the default CSV suite reports it.
        Some(_) => return,
    };
    if list.len() != 1 {
        out.push(
            Finding::error(
                "operatorhub-icon-count",
                format!(
                    "spec.icon should have exactly one element, it has {}",
                    list.len()
                ),
            )
            .at(csv.location(&at)),
        );
    }
    let Some(first) = list.first() else {
        return;
    };
    let first_at = join(&at, &[Seg::Index(0)]);
    let data = scalar(first.get("base64data")).unwrap_or_default();
    let media = scalar(first.get("mediatype")).unwrap_or_default();
    if data.is_empty() || media.is_empty() {
        out.push(
            Finding::error(
                "operatorhub-icon-incomplete",
                "spec.icon[0] should contain both base64data and mediatype",
            )
            .at(csv.location(&first_at)),
        );
    }
    if !media.is_empty() && !ICON_MEDIA_TYPES.contains(&media.as_ref()) {
        out.push(
            Finding::error(
                "operatorhub-icon-mediatype-invalid",
                format!("spec.icon[0] mediatype {media:?} is not a valid media type"),
            )
            .at(csv.location(&join(&first_at, &path!["mediatype"])))
            .hint(format!("use one of: {}", ICON_MEDIA_TYPES.join(", "))),
        );
    }
}

fn min_kube_version(csv: &Manifest, out: &mut Vec<Finding>) {
    let at = path!["spec", "minKubeVersion"];
    let text = text_at(csv, &at);
    if text.trim().is_empty() {
        out.push(
            Finding::warning(
                "operatorhub-min-kube-version-missing",
                "spec.minKubeVersion is not set: the bundle can then be installed on any cluster \
                 version, which is not true of every operator",
            )
            .at(csv.key_location(&at))
            .hint("set the oldest Kubernetes version the operator supports, e.g. `minKubeVersion: 1.25.0`"),
        );
    } else if let Err(e) = goparse::semver_parse(&text) {
        out.push(
            Finding::error(
                "operatorhub-min-kube-version-invalid",
                format!("spec.minKubeVersion {text:?} has an invalid value: {e}"),
            )
            .at(csv.location(&at))
            .hint("write MAJOR.MINOR.PATCH, e.g. 1.25.0"),
        );
    }
}

/// One UI field OperatorHub.io shows, checked for presence.
struct UiField {
    rule: &'static str,
    path: &'static [&'static str],
    shows: &'static str,
}

const UI_FIELDS: &[UiField] = &[
    UiField {
        rule: "operatorhub-display-name-missing",
        path: &["spec", "displayName"],
        shows: "the operator's name on its tile and details page (it falls back to metadata.name)",
    },
    UiField {
        rule: "operatorhub-description-missing",
        path: &["spec", "description"],
        shows: "the long description of the details page",
    },
    UiField {
        rule: "operatorhub-container-image-missing",
        path: &["metadata", "annotations", "containerImage"],
        shows: "the link to the operator's image",
    },
    UiField {
        rule: "operatorhub-repository-missing",
        path: &["metadata", "annotations", "repository"],
        shows: "the link to the operator's source code",
    },
    UiField {
        rule: "operatorhub-created-at-missing",
        path: &["metadata", "annotations", "createdAt"],
        shows: "when the operator version was created",
    },
];

fn ui_fields(csv: &Manifest, out: &mut Vec<Finding>) {
    for field in UI_FIELDS {
        let at: Vec<Seg> = field.path.iter().map(|k| Seg::from(*k)).collect();
        if text_at(csv, &at).trim().is_empty() {
            let dotted = field.path.join(".");
            out.push(
                Finding::warning(field.rule, format!("{dotted} is not set"))
                    .at(csv.key_location(&at))
                    .hint(format!("OperatorHub.io uses it for {}", field.shows)),
            );
        }
    }

    let keywords = path!["spec", "keywords"];
    let has_keyword = super::strings(csv.root.at(&keywords))
        .iter()
        .any(|(_, k)| !k.trim().is_empty());
    if !has_keyword {
        out.push(
            Finding::warning("operatorhub-keywords-missing", "spec.keywords is empty")
                .at(csv.key_location(&keywords))
                .hint("OperatorHub.io's search matches keywords; list a few, e.g. `keywords: [database, backup]`"),
        );
    }

    let maturity_at = path!["spec", "maturity"];
    let maturity = text_at(csv, &maturity_at);
    if maturity.trim().is_empty() {
        out.push(
            Finding::warning("operatorhub-maturity-missing", "spec.maturity is not set")
                .at(csv.key_location(&maturity_at))
                .hint(format!(
                    "OperatorHub.io shows it on the details page; one of: {}",
                    MATURITIES.join(", ")
                )),
        );
    } else if !MATURITIES.contains(&maturity.as_ref()) {
        out.push(
            Finding::warning(
                "operatorhub-maturity-unknown",
                format!(
                    "spec.maturity {maturity:?} is not one of the maturity values OLM documents"
                ),
            )
            .at(csv.location(&maturity_at))
            .hint(format!("use one of: {}", MATURITIES.join(", "))),
        );
    }

    let repo_at = path!["metadata", "annotations", "repository"];
    let repo = text_at(csv, &repo_at);
    if !repo.trim().is_empty() {
        if let Err(e) = goparse::parse_request_uri(&repo) {
            out.push(
                Finding::warning(
                    "operatorhub-repository-url-invalid",
                    format!("metadata.annotations.repository {repo:?} is not a URL: {e}"),
                )
                .at(csv.location(&repo_at))
                .hint("use the repository's absolute URL, like https://github.com/org/operator"),
            );
        }
    }
}
