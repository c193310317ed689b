//! OLM's resolution, rehearsed: what OLM would do with a Subscription (OLM
//! v0) or a ClusterExtension (OLM v1) against a catalog: what it installs
//! first, which dependencies it pulls in, every upgrade it takes after,
//! and, when it cannot install, which constraint fails and why
//! (`graph rehearse`). It reads catalogs as [`crate::fbc`] loads them and
//! follows their upgrade edges as [`crate::graph`] builds them; the
//! catalogs (with their ClusterCatalog names, priorities, labels and
//! availability), the requests (Subscriptions, ClusterExtensions, CSVs on
//! the cluster) and the label selectors are its own.
//!
//! **OLM v0** (operator-lifecycle-manager `pkg/controller/registry/resolver`):
//! several Subscriptions and the CSVs already on the cluster
//! ([`InstalledCsv`]) are resolved together, round after round, as
//! [`rehearse_subscriptions`] describes; `docs/graph.md` has the rules and
//! `docs/olm-v0-tests.md` the upstream tests it is checked against.
//!
//! **OLM v1** (operator-controller `resolve/catalog.go`): the candidates
//! are the package's bundles in any of `channels` (all bundles when none is
//! given) whose version satisfies `version` (Masterminds syntax,
//! `crate::graph::masterminds`), non-deprecated first, highest version first.
//! Once installed, with the default `upgradeConstraintPolicy:
//! CatalogProvided` only successors ([`crate::graph::successors::v1_successors`])
//! or the installed version qualify; `SelfCertified` lifts that. A bundle
//! with dependency properties is refused (`NoDependencyValidation`).

mod catalog;
mod request;
mod selector;
mod v0;
mod v1;

pub use catalog::{
    parse_availability, parse_labels, parse_priority, split_named, CatBundle, Catalog,
    ClusterCatalog, Requirement, CATALOG_NAME_LABEL,
};
pub use request::{ClusterExtension, InstalledCsv, Subscription};
pub use selector::{InvalidSelector, LabelSelector};
pub use v0::{rehearse_subscription, rehearse_subscriptions};
pub use v1::{rehearse_cluster_extension, rehearse_cluster_extension_in};

use crate::graph::successors::Olm;
use crate::graph::EdgeKind;

/// What a rehearsal cannot start from.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A Subscription, ClusterExtension or installed CSV that cannot be
    /// read (the message names the file and field).
    #[error("{0}")]
    Request(String),
}

// ---- the result ----

/// A bundle the rehearsal installs.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Placed {
    /// Bundle name.
    pub bundle: String,
    /// Its package.
    pub package: String,
    /// Its version.
    pub version: String,
    /// The channel it comes from (OLM v1: the first selected channel that
    /// lists it; empty when it is in none; with several ClusterCatalogs,
    /// followed by `(catalog NAME)`).
    pub channel: String,
    /// For a dependency: the bundle that needs it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required_by: Option<String>,
    /// For a dependency: what it satisfies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requirement: Option<String>,
}

/// A candidate OLM prefers but cannot install, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PassedOver {
    /// Bundle name.
    pub bundle: String,
    /// Why not.
    pub reason: String,
}

/// One upgrade.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Upgrade {
    /// Resolution round (OLM v0: every Subscription moves at most one hop
    /// per round; OLM v1: one per reconcile).
    pub round: usize,
    /// Package upgraded.
    pub package: String,
    /// Installed bundle.
    pub from: String,
    /// Bundle upgraded to.
    pub to: String,
    /// Which field of `to` admits `from` (none under SelfCertified).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<EdgeKind>,
    /// The channel whose entry admits it.
    pub channel: String,
    /// Dependencies installed with it.
    pub new_dependencies: Vec<Placed>,
    /// More preferred candidates passed over.
    pub passed_over: Vec<PassedOver>,
}

/// What OLM would do.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rehearsal {
    /// Whose rules.
    pub olm: Olm,
    /// `Subscription` or `ClusterExtension`.
    pub kind: String,
    /// Its `metadata.name`.
    pub name: String,
    /// The package asked for.
    pub package: String,
    /// The catalog.
    pub catalog: String,
    /// Whether OLM can install it.
    pub installable: bool,
    /// What OLM installs first: the bundle, then its dependencies.
    pub install: Vec<Placed>,
    /// The first of `install` was given as installed already (OLM v1
    /// `--installed`): the rehearsal starts from it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub already_installed: bool,
    /// Bundles OLM prefers over the one installed but cannot install.
    pub passed_over: Vec<PassedOver>,
    /// Every upgrade after, in order.
    pub upgrades: Vec<Upgrade>,
    /// Why it stops (or why nothing installs). OLM v1: when nothing
    /// installs, operator-controller's own error text, word for word.
    pub end: String,
    /// What explains `end` (the versions or channels there are), kept out
    /// of `end` so that it stays OLM's text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Notes: approval, refused upgrades, what is not modelled.
    pub notes: Vec<String>,
}

// ---- text ----

/// The rehearsal as text, one fact a line.
pub fn render_text(r: &Rehearsal) -> String {
    let mut out = String::new();
    let head = format!(
        "OLM {} rehearsal of {} {} (package {}) against {}",
        r.olm.as_str(),
        r.kind,
        if r.name.is_empty() {
            "<unnamed>"
        } else {
            &r.name
        },
        r.package,
        r.catalog
    );
    out.push_str(&head);
    out.push('\n');
    for p in &r.passed_over {
        out.push_str(&format!("  passed over {}: {}\n", p.bundle, p.reason));
    }
    // Not installable from the start; one that fails after some upgrades
    // (OLM v1 refusing a later bundle) shows them first.
    if !r.installable && r.upgrades.is_empty() {
        out.push_str(&format!("  not installable: {}\n", r.end));
        if let Some(h) = &r.hint {
            out.push_str(&format!("  hint: {h}\n"));
        }
        for n in &r.notes {
            out.push_str(&format!("  note: {n}\n"));
        }
        return out;
    }
    for (i, p) in r.install.iter().enumerate() {
        let chan = if p.channel.is_empty() {
            String::new()
        } else {
            format!(", channel {}", p.channel)
        };
        // OLM v0 installs several Subscriptions' bundles at once: each
        // without a `required_by` is one a Subscription asked for.
        if i == 0 || p.required_by.is_none() {
            out.push_str(&format!(
                "  {} {} ({} {}{chan})\n",
                if r.already_installed {
                    "installed already:"
                } else {
                    "install"
                },
                p.bundle,
                p.package,
                p.version
            ));
        } else {
            out.push_str(&format!(
                "  install dependency {} ({} {}{chan}) for {}: {}\n",
                p.bundle,
                p.package,
                p.version,
                p.required_by.as_deref().unwrap_or("?"),
                p.requirement.as_deref().unwrap_or("?")
            ));
        }
    }
    for u in &r.upgrades {
        let why = match u.kind {
            Some(k) => format!("{}, channel {}", k.as_str(), u.channel),
            None => "SelfCertified".to_string(),
        };
        out.push_str(&format!(
            "  {}. upgrade {}: {} -> {} ({why})\n",
            u.round, u.package, u.from, u.to
        ));
        for p in &u.passed_over {
            out.push_str(&format!("     passed over {}: {}\n", p.bundle, p.reason));
        }
        for d in &u.new_dependencies {
            out.push_str(&format!(
                "     with new dependency {} ({} {}) for {}: {}\n",
                d.bundle,
                d.package,
                d.version,
                d.required_by.as_deref().unwrap_or("?"),
                d.requirement.as_deref().unwrap_or("?")
            ));
        }
    }
    if r.upgrades.is_empty() {
        out.push_str("  no upgrades\n");
    }
    if r.installable {
        out.push_str(&format!("  end: {}\n", r.end));
    } else {
        out.push_str(&format!("  not installable: {}\n", r.end));
        if let Some(h) = &r.hint {
            out.push_str(&format!("  hint: {h}\n"));
        }
    }
    for n in &r.notes {
        out.push_str(&format!("  note: {n}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn subscription_and_cluster_extension_parse() {
        let f = Path::new("s.yaml");
        let s = Subscription::parse(
            "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: a\nspec:\n  name: pkg\n  channel: stable\n  installPlanApproval: Manual\n",
            f,
        )
        .expect("sub");
        assert_eq!((s.package.as_str(), s.channel.as_str()), ("pkg", "stable"));
        assert!(
            Subscription::parse("kind: Subscription\nspec:\n  channel: x\n", f)
                .expect_err("no package")
                .to_string()
                .contains("spec.name")
        );
        let ce = ClusterExtension::parse(
            "apiVersion: olm.operatorframework.io/v1\nkind: ClusterExtension\nmetadata:\n  name: e\nspec:\n  source:\n    sourceType: Catalog\n    catalog:\n      packageName: pkg\n      version: '>=1.0.0 <2.0.0'\n      channels: [stable]\n",
            f,
        )
        .expect("ce");
        assert_eq!(ce.channels, ["stable"]);
        let old = ClusterExtension::parse(
            "kind: ClusterExtension\nspec:\n  packageName: pkg\n  version: 1.2.x\n  upgradeConstraintPolicy: SelfCertified\n",
            f,
        )
        .expect("v1alpha1");
        assert_eq!(old.version, "1.2.x");
        assert!(ClusterExtension::parse("kind: Subscription\nspec: {}\n", f).is_err());
    }
}
