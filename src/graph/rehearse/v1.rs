//! OLM v1: a ClusterExtension's install and upgrades (see the module above
//! for the rules).

use semver::Version;

use super::catalog::{CatBundle, Catalog};
use super::v0::names_list;
use super::{ClusterExtension, Placed, Rehearsal, Upgrade};
use crate::graph::successors::{self, Olm};
use crate::graph::PackageGraph;
use crate::semver_range as range;

/// The channels of `g` that list bundle `name`, among `selected` (all when
/// empty).
fn channel_of(g: &PackageGraph, selected: &[String], name: &str) -> String {
    g.channels
        .iter()
        .filter(|c| selected.is_empty() || selected.contains(&c.name))
        .find(|c| c.entry(name).is_some())
        .map(|c| c.name.clone())
        .unwrap_or_default()
}

/// operator-controller's `NoDependencyValidation`.
fn v1_refusal(b: &CatBundle) -> Option<String> {
    b.dependency_properties.first().map(|p| {
        format!(
            "bundle {:?} has a dependency declared via property {p:?} which is currently not supported",
            b.name
        )
    })
}

/// Rehearses a ClusterExtension against a catalog under OLM v1's rules.
/// With `installed` (a version or bundle name of the package), the
/// ClusterExtension has that bundle installed already (say, before its
/// `version` or the catalog changed) and the rehearsal reconciles from it.
pub fn rehearse_cluster_extension(
    cat: &Catalog,
    ce: &ClusterExtension,
    installed: Option<&str>,
) -> Rehearsal {
    let mut r = Rehearsal {
        olm: Olm::V1,
        kind: "ClusterExtension".into(),
        name: ce.name.clone(),
        package: ce.package.clone(),
        catalog: cat.source.clone(),
        installable: false,
        install: Vec::new(),
        already_installed: false,
        passed_over: Vec::new(),
        upgrades: Vec::new(),
        end: String::new(),
        notes: Vec::new(),
    };
    let mut describe = format!("no bundles found for package {:?}", ce.package);
    if !ce.version.is_empty() {
        describe.push_str(&format!(" matching version {:?}", ce.version));
    }
    if !ce.channels.is_empty() {
        describe.push_str(&format!(" in channels [{}]", ce.channels.join(" ")));
    }
    let constraint = if ce.version.is_empty() {
        None
    } else {
        match crate::graph::masterminds::Constraint::parse(&ce.version) {
            Ok(c) => Some(c),
            Err(e) => {
                r.end = format!("desired version range {:?} is invalid: {e}", ce.version);
                return r;
            }
        }
    };
    let Some(g) = cat.graphs.get(&ce.package) else {
        let pkgs: Vec<&str> = cat.graphs.keys().map(String::as_str).collect();
        r.end = format!(
            "{describe}: the catalog has no package {} (packages: {})",
            ce.package,
            names_list(&pkgs)
        );
        return r;
    };
    let selected: Vec<&crate::graph::Channel> = g
        .channels
        .iter()
        .filter(|c| ce.channels.is_empty() || ce.channels.contains(&c.name))
        .collect();
    let in_scope =
        |name: &str| ce.channels.is_empty() || selected.iter().any(|c| c.entry(name).is_some());
    let in_range = |name: &str| {
        constraint
            .as_ref()
            .is_none_or(|c| g.version(name).is_some_and(|v| c.admits(v)))
    };
    let mut pool: Vec<&str> = g
        .bundles
        .keys()
        .map(String::as_str)
        .filter(|n| in_scope(n) && in_range(n))
        .collect();
    successors::sort_v1(g, &mut pool, |n| n);
    let given = match installed {
        None => None,
        Some(x) => match crate::graph::path::resolve(g, x) {
            Ok((n, _)) if g.bundles.contains_key(&n) => Some(n),
            _ => {
                let mut vs: Vec<&Version> = g
                    .bundles
                    .values()
                    .filter_map(|b| b.version.as_ref())
                    .collect();
                vs.sort_by(|a, b| range::compare(a, b));
                r.end = format!(
                    "installed {x} is not a bundle of package {} (versions: {})",
                    g.package,
                    vs.iter()
                        .map(|v| v.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                return r;
            }
        },
    };
    let Some(first) = given
        .clone()
        .or_else(|| pool.first().map(|s| s.to_string()))
    else {
        let scoped: Vec<&str> = g
            .bundles
            .keys()
            .map(String::as_str)
            .filter(|n| in_scope(n))
            .collect();
        let why = if ce.channels.iter().any(|c| g.channel(c).is_none()) {
            let names: Vec<&str> = g.channels.iter().map(|c| c.name.as_str()).collect();
            format!("the package has channels {}", names_list(&names))
        } else {
            let mut vs: Vec<&Version> = scoped.iter().filter_map(|n| g.version(n)).collect();
            vs.sort_by(|a, b| range::compare(a, b));
            format!(
                "the {} has versions {}",
                if ce.channels.is_empty() {
                    "package"
                } else {
                    "selected channels"
                },
                names_list(
                    &vs.iter()
                        .map(|v| v.to_string())
                        .collect::<Vec<_>>()
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                )
            )
        };
        r.end = format!("{describe}: {why}");
        return r;
    };
    if let Some(why) = cat
        .bundle(&g.package, &first)
        .and_then(v1_refusal)
        .filter(|_| given.is_none())
    {
        r.end = format!("validating bundle {first:?}: {why}");
        r.notes.push(
            "OLM v1 does not resolve dependencies: a bundle that declares any is refused".into(),
        );
        return r;
    }
    r.installable = true;
    r.install.push(Placed {
        bundle: first.clone(),
        package: g.package.clone(),
        version: cat.version_text(&g.package, &first),
        channel: channel_of(g, &ce.channels, &first),
        required_by: None,
        requirement: None,
    });
    r.already_installed = given.is_some();
    let self_certified = ce.upgrade_constraint_policy == "SelfCertified";
    if self_certified {
        r.notes.push(
            "upgradeConstraintPolicy SelfCertified: no successor rule; OLM v1 installs the highest version the filters admit and moves to any other the catalog later offers".into(),
        );
    }
    let mut cur = first;
    let mut round = 0;
    loop {
        round += 1;
        if round > 500 {
            r.notes.push("stopped after 500 upgrades".into());
            break;
        }
        let succ = if self_certified {
            Vec::new()
        } else {
            successors::v1_successors(g, &selected, &cur, g.version(&cur))
        };
        let mut cands: Vec<&str> = succ
            .iter()
            .map(|c| c.name.as_str())
            .filter(|n| in_scope(n) && in_range(n))
            .collect();
        if self_certified {
            cands = pool.clone();
        }
        // Staying is always allowed (the installed version, in scope).
        if in_scope(&cur) && in_range(&cur) && !cands.contains(&cur.as_str()) {
            cands.push(&cur);
        }
        successors::sort_v1(g, &mut cands, |n| n);
        let Some(next) = cands.first().map(|s| s.to_string()) else {
            r.end = format!(
                "error upgrading from currently installed version {:?}: {describe}",
                cat.version_text(&g.package, &cur)
            );
            return r;
        };
        if next == cur {
            let deprecated_succ: Vec<&str> = succ
                .iter()
                .map(|c| c.name.as_str())
                .filter(|n| in_scope(n) && in_range(n) && *n != cur)
                .collect();
            r.end = if deprecated_succ.is_empty() {
                format!("{cur} has no successor the filters admit; OLM v1 keeps it")
            } else {
                format!(
                    "OLM v1 keeps {cur}: its successors ({}) are deprecated or not higher",
                    deprecated_succ.join(", ")
                )
            };
            break;
        }
        if let Some(why) = cat.bundle(&g.package, &next).and_then(v1_refusal) {
            r.end = format!("the upgrade {cur} -> {next} fails: validating bundle {next:?}: {why}");
            r.notes.push(
                "OLM v1 does not resolve dependencies: a bundle that declares any is refused"
                    .into(),
            );
            break;
        }
        let edge = succ.iter().find(|c| c.name == next);
        r.upgrades.push(Upgrade {
            round,
            package: g.package.clone(),
            from: cur.clone(),
            to: next.clone(),
            kind: edge.map(|c| c.kind),
            channel: edge
                .map(|c| c.channel.clone())
                .unwrap_or_else(|| channel_of(g, &ce.channels, &next)),
            new_dependencies: Vec::new(),
            passed_over: Vec::new(),
        });
        cur = next;
    }
    r
}
