//! OLM v1: a ClusterExtension's install and upgrades across one or more
//! ClusterCatalogs (see the module above for the rules), resolved as
//! operator-controller's `resolve.CatalogResolver.Resolve` does on every
//! reconcile: the catalogs its `selector` picks, in each the most preferred
//! bundle the channels, version range and (once installed) successor rule
//! admit; a non-deprecated pick beats deprecated ones, then the highest
//! `spec.priority`; two picks left at the same priority are an error that
//! names the catalogs. Failures are operator-controller's error text
//! (`resolutionError`), with our explanation apart as a hint.

use semver::Version;

use super::catalog::{CatBundle, Catalog, ClusterCatalog};
use super::selector::LabelSelector;
use super::v0::names_list;
use super::{ClusterExtension, Placed, Rehearsal, Upgrade};
use crate::graph::masterminds::Constraint;
use crate::graph::successors::{self, Olm};
use crate::graph::{Channel, PackageGraph};
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

/// The installed bundle: name, version as written, parsed version.
#[derive(Clone, Debug)]
struct Installed {
    name: String,
    raw: String,
    version: Option<Version>,
}

/// A resolution's pick: which catalog, which bundle.
#[derive(Clone, Debug)]
struct Pick {
    cat: usize,
    bundle: String,
}

/// A resolution that fails: operator-controller's text and our hint.
struct Fail {
    end: String,
    hint: Option<String>,
}

/// One ClusterExtension against the selected catalogs.
struct Resolver<'c, 'a> {
    cats: Vec<&'c ClusterCatalog<'a>>,
    ce: &'c ClusterExtension,
    constraint: Option<Constraint>,
    self_certified: bool,
    /// Every catalog given, for hints.
    all: Vec<String>,
    /// The catalogs left out as `availabilityMode: Unavailable`.
    unavailable: Vec<String>,
}

impl Resolver<'_, '_> {
    fn graph(&self, cat: usize) -> Option<&PackageGraph> {
        self.cats[cat].catalog.graphs.get(&self.ce.package)
    }

    fn selected<'g>(&self, g: &'g PackageGraph) -> Vec<&'g Channel> {
        g.channels
            .iter()
            .filter(|c| self.ce.channels.is_empty() || self.ce.channels.contains(&c.name))
            .collect()
    }

    fn in_scope(&self, sel: &[&Channel], name: &str) -> bool {
        self.ce.channels.is_empty() || sel.iter().any(|c| c.entry(name).is_some())
    }

    fn in_range(&self, g: &PackageGraph, name: &str) -> bool {
        self.constraint
            .as_ref()
            .is_none_or(|c| g.version(name).is_some_and(|v| c.admits(v)))
    }

    /// The candidates of one catalog, most preferred first.
    fn candidates<'g>(&self, g: &'g PackageGraph, installed: Option<&Installed>) -> Vec<&'g str> {
        let sel = self.selected(g);
        let succ: Vec<String> = match installed {
            Some(i) if !self.self_certified => {
                successors::v1_successors(g, &sel, &i.name, i.version.as_ref())
                    .into_iter()
                    .map(|c| c.name)
                    .collect()
            }
            _ => Vec::new(),
        };
        let mut pool: Vec<&str> = g
            .bundles
            .keys()
            .map(String::as_str)
            .filter(|n| self.in_scope(&sel, n) && self.in_range(g, n))
            .filter(|n| match installed {
                Some(i) if !self.self_certified => {
                    succ.iter().any(|s| s == n)
                        || (i.version.is_some() && g.version(n) == i.version.as_ref())
                }
                _ => true,
            })
            .collect();
        successors::sort_v1(g, &mut pool, |n| n);
        pool
    }

    /// One reconcile's resolution (`CatalogResolver.Resolve`).
    fn resolve(&self, installed: Option<&Installed>) -> Result<Pick, Fail> {
        // (catalog, bundle, deprecated)
        let mut found: Vec<(usize, String, bool)> = Vec::new();
        for cat in 0..self.cats.len() {
            let Some(g) = self.graph(cat) else {
                continue;
            };
            let pool = self.candidates(g, installed);
            let Some(first) = pool.first() else {
                continue;
            };
            let deprecated = g.deprecated.bundles.contains(*first);
            if let Some(last) = found.last() {
                if deprecated && !last.2 {
                    continue;
                } else if !deprecated && last.2 {
                    found.clear();
                }
            }
            found.push((cat, first.to_string(), deprecated));
        }
        if found.len() > 1 {
            found.sort_by_key(|f| std::cmp::Reverse(self.cats[f.0].priority));
            if self.cats[found[0].0].priority != self.cats[found[1].0].priority {
                found.truncate(1);
            }
        }
        if found.len() == 1 {
            let (cat, bundle, _) = found.remove(0);
            return Ok(Pick { cat, bundle });
        }
        // operator-controller's resolutionError.
        let mut end = String::new();
        if let Some(i) = installed {
            end.push_str(&format!(
                "error upgrading from currently installed version {:?}: ",
                i.raw
            ));
        }
        end.push_str(&format!(
            "{} for package {:?}",
            if found.len() > 1 {
                "found bundles"
            } else {
                "no bundles found"
            },
            self.ce.package
        ));
        if !self.ce.version.is_empty() {
            end.push_str(&format!(" matching version {:?}", self.ce.version));
        }
        if !self.ce.channels.is_empty() {
            end.push_str(&format!(" in channels [{}]", self.ce.channels.join(" ")));
        }
        let mut names: Vec<&str> = found.iter().map(|f| self.cats[f.0].name.as_str()).collect();
        names.sort();
        if names.len() > 1 {
            end.push_str(&format!(
                " in multiple catalogs with the same priority [{}]",
                names.join(" ")
            ));
        }
        let hint = if found.len() > 1 {
            Some(format!(
                "OLM v1 does not choose between ClusterCatalogs of equal spec.priority ({}): raise one's priority (--catalog-priority NAME=N) or narrow spec.source.catalog.selector",
                found
                    .iter()
                    .map(|f| format!("{} {}", self.cats[f.0].name, f.1))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        } else {
            self.explain(installed)
        };
        Err(Fail { end, hint })
    }

    /// Why nothing was found, in words (the hint).
    fn explain(&self, installed: Option<&Installed>) -> Option<String> {
        if self.cats.is_empty() {
            if !self.unavailable.is_empty() {
                return Some(format!(
                    "no available ClusterCatalog matches spec.source.catalog.selector (catalogs: {}; availabilityMode Unavailable, left out of resolution: {})",
                    names_list(&self.all.iter().map(String::as_str).collect::<Vec<_>>()),
                    names_list(&self.unavailable.iter().map(String::as_str).collect::<Vec<_>>())
                ));
            }
            return Some(format!(
                "no ClusterCatalog matches spec.source.catalog.selector (catalogs: {})",
                names_list(&self.all.iter().map(String::as_str).collect::<Vec<_>>())
            ));
        }
        let with_pkg: Vec<usize> = (0..self.cats.len())
            .filter(|c| self.graph(*c).is_some())
            .collect();
        let Some(&cat) = with_pkg.first() else {
            if self.cats.len() == 1 {
                let pkgs: Vec<&str> = self.cats[0]
                    .catalog
                    .graphs
                    .keys()
                    .map(String::as_str)
                    .collect();
                return Some(format!(
                    "the catalog has no package {} (packages: {})",
                    self.ce.package,
                    names_list(&pkgs)
                ));
            }
            return Some(format!(
                "no selected catalog has package {}",
                self.ce.package
            ));
        };
        let g = self.graph(cat)?;
        let sel = self.selected(g);
        if let Some(i) = installed {
            let stay = if i.version.is_some() {
                " or stays on its version"
            } else {
                ""
            };
            return Some(format!(
                "OLM v1 moves only to a successor of the installed {} (replaces, skips, skipRange in the selected channels){stay}; none is in the version range and channels (upgradeConstraintPolicy: SelfCertified lifts this)",
                i.name
            ));
        }
        if self.ce.channels.iter().any(|c| g.channel(c).is_none()) {
            let names: Vec<&str> = g.channels.iter().map(|c| c.name.as_str()).collect();
            return Some(format!("the package has channels {}", names_list(&names)));
        }
        let mut vs: Vec<&Version> = g
            .bundles
            .keys()
            .filter(|n| self.in_scope(&sel, n))
            .filter_map(|n| g.version(n))
            .collect();
        vs.sort_by(|a, b| range::compare(a, b));
        let vs: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
        Some(format!(
            "the {} has versions {}",
            if self.ce.channels.is_empty() {
                "package"
            } else {
                "selected channels"
            },
            names_list(&vs.iter().map(String::as_str).collect::<Vec<_>>())
        ))
    }

    fn bundle(&self, p: &Pick) -> Option<&CatBundle> {
        self.cats[p.cat].catalog.bundle(&self.ce.package, &p.bundle)
    }

    fn version_text(&self, p: &Pick) -> String {
        self.cats[p.cat]
            .catalog
            .version_text(&self.ce.package, &p.bundle)
    }

    fn installed(&self, p: &Pick) -> Installed {
        Installed {
            name: p.bundle.clone(),
            raw: self.version_text(p),
            version: self
                .graph(p.cat)
                .and_then(|g| g.version(&p.bundle))
                .cloned(),
        }
    }

    /// `channel` of a Placed/Upgrade: the channel, and the catalog when
    /// there are several.
    fn channel_label(&self, p: &Pick, channel: String) -> String {
        if self.all.len() > 1 {
            if channel.is_empty() {
                format!("catalog {}", self.cats[p.cat].name)
            } else {
                format!("{channel} (catalog {})", self.cats[p.cat].name)
            }
        } else {
            channel
        }
    }
}

/// Rehearses a ClusterExtension against one catalog under OLM v1's rules.
/// With `installed` (a version or bundle name of the package), the
/// ClusterExtension has that bundle installed already (say, before its
/// `version` or the catalog changed) and the rehearsal reconciles from it.
/// An `installed` that names nothing (not a bundle of a selected catalog,
/// nor `NAME@VERSION`) is an [`Error::Request`](super::Error):
/// a cluster always knows what it has installed, so OLM never answers it.
pub fn rehearse_cluster_extension(
    cat: &Catalog,
    ce: &ClusterExtension,
    installed: Option<&str>,
) -> Result<Rehearsal, super::Error> {
    rehearse_cluster_extension_in(&[ClusterCatalog::new(&cat.source, cat)], ce, installed)
}

/// [`rehearse_cluster_extension`] across several ClusterCatalogs, as a
/// cluster resolves: `spec.source.catalog.selector` picks among them by
/// their labels, then priorities and deprecations decide (see the module
/// documentation).
pub fn rehearse_cluster_extension_in(
    cats: &[ClusterCatalog],
    ce: &ClusterExtension,
    installed: Option<&str>,
) -> Result<Rehearsal, super::Error> {
    let mut r = Rehearsal {
        olm: Olm::V1,
        kind: "ClusterExtension".into(),
        name: ce.name.clone(),
        package: ce.package.clone(),
        catalog: if cats.len() == 1 {
            cats[0].catalog.source.clone()
        } else {
            cats.iter()
                .map(|c| format!("{} ({})", c.name, c.catalog.source))
                .collect::<Vec<_>>()
                .join(", ")
        },
        installable: false,
        install: Vec::new(),
        already_installed: false,
        passed_over: Vec::new(),
        upgrades: Vec::new(),
        end: String::new(),
        hint: None,
        notes: Vec::new(),
    };
    // The selector first, then the version range, as Resolve checks them.
    let selector = match ce.selector.as_ref().map(LabelSelector::parse).transpose() {
        Ok(s) => s.unwrap_or_default(),
        Err(e) => {
            r.end = format!("desired catalog selector is invalid: {e}");
            return Ok(r);
        }
    };
    let constraint = if ce.version.is_empty() {
        None
    } else {
        match Constraint::parse(&ce.version) {
            Ok(c) => Some(c),
            Err(e) => {
                r.end = format!("desired version range {:?} is invalid: {e}", ce.version);
                return Ok(r);
            }
        }
    };
    // The API server lists ClusterCatalogs by name; `CatalogWalker` then
    // drops those with `availabilityMode: Unavailable`.
    let mut selected: Vec<&ClusterCatalog> = cats
        .iter()
        .filter(|c| selector.matches(&c.labels) && c.available)
        .collect();
    selected.sort_by(|a, b| a.name.cmp(&b.name));
    let v1 = Resolver {
        cats: selected,
        ce,
        constraint,
        self_certified: ce.upgrade_constraint_policy == "SelfCertified",
        all: cats.iter().map(|c| c.name.clone()).collect(),
        unavailable: cats
            .iter()
            .filter(|c| !c.available)
            .map(|c| c.name.clone())
            .collect(),
    };
    // The installed bundle, when given: its name and version as the
    // cluster records them (`status.install.bundle`). A bundle of a selected
    // catalog (by version or name), or NAME@VERSION, which need not be in
    // any catalog (OLM resolves from what the cluster says is installed).
    let given: Option<(Installed, Option<Pick>)> = match installed {
        None => None,
        Some(x) => match find_installed(&v1, x) {
            Ok(i) => Some(i),
            Err(f) => {
                let hint = f.hint.map(|h| format!("\nhint: {h}")).unwrap_or_default();
                return Err(super::Error::Request(format!("{}{hint}", f.end)));
            }
        },
    };
    let (mut cur, first) = match given.clone() {
        Some((inst, pick)) => (inst, pick),
        None => match v1.resolve(None) {
            Ok(p) => {
                if let Some(why) = v1.bundle(&p).and_then(v1_refusal) {
                    r.end = format!("validating bundle {:?}: {why}", p.bundle);
                    r.hint = Some(format!(
                        "{} is the bundle OLM v1 resolves, and OLM v1 does not resolve dependencies: a bundle that declares any is refused (no fallback to another bundle)",
                        p.bundle
                    ));
                    return Ok(r);
                }
                (v1.installed(&p), Some(p))
            }
            Err(f) => {
                r.end = f.end;
                r.hint = f.hint;
                return Ok(r);
            }
        },
    };
    r.installable = true;
    let chan = match &first {
        Some(p) => {
            let c = v1
                .graph(p.cat)
                .map(|g| channel_of(g, &ce.channels, &p.bundle))
                .unwrap_or_default();
            v1.channel_label(p, c)
        }
        None => String::new(),
    };
    r.install.push(Placed {
        bundle: cur.name.clone(),
        package: ce.package.clone(),
        version: cur.raw.clone(),
        channel: chan,
        required_by: None,
        requirement: None,
    });
    r.already_installed = given.is_some();
    if given.is_some() && first.is_none() {
        r.notes.push(format!(
            "the installed {} (version {}) is in no selected catalog: OLM v1 resolves from its name and version as the cluster records them",
            cur.name, cur.raw
        ));
    }
    if v1.self_certified {
        r.notes.push(
            "upgradeConstraintPolicy SelfCertified: no successor rule; OLM v1 installs the highest version the filters admit and moves to any other the catalog later offers".into(),
        );
    }
    let mut round = 0;
    loop {
        round += 1;
        if round > 500 {
            r.notes.push("stopped after 500 upgrades".into());
            break;
        }
        let next = match v1.resolve(Some(&cur)) {
            Ok(p) => p,
            Err(f) => {
                // OLM's resolve fails: the ClusterExtension cannot reach
                // (or keep) a bundle the filters admit.
                r.installable = false;
                r.end = f.end;
                r.hint = f.hint;
                return Ok(r);
            }
        };
        // `Resolve` validates whatever it resolves, the installed bundle
        // included: a refusal fails the reconcile (exit 1).
        if let Some(why) = v1.bundle(&next).and_then(v1_refusal) {
            r.installable = false;
            r.end = format!("validating bundle {:?}: {why}", next.bundle);
            r.hint = Some(if next.bundle == cur.name {
                format!(
                    "OLM v1 resolves the installed {} again and refuses it: OLM v1 does not resolve dependencies, a bundle that declares any is refused",
                    cur.name
                )
            } else {
                format!(
                    "the upgrade {} -> {} is refused: OLM v1 does not resolve dependencies, a bundle that declares any is refused (no fallback to another bundle; the ClusterExtension stays on {} and keeps retrying)",
                    cur.name, next.bundle, cur.name
                )
            });
            return Ok(r);
        }
        if next.bundle == cur.name {
            let g = v1.graph(next.cat);
            let deprecated_succ: Vec<String> = g
                .map(|g| {
                    let sel = v1.selected(g);
                    successors::v1_successors(g, &sel, &cur.name, cur.version.as_ref())
                        .into_iter()
                        .map(|c| c.name)
                        .filter(|n| v1.in_scope(&sel, n) && v1.in_range(g, n))
                        .collect()
                })
                .unwrap_or_default();
            r.end = if deprecated_succ.is_empty() || v1.self_certified {
                format!(
                    "{} has no successor the filters admit; OLM v1 keeps it",
                    cur.name
                )
            } else {
                format!(
                    "OLM v1 keeps {}: its successors ({}) are deprecated or not higher",
                    cur.name,
                    deprecated_succ.join(", ")
                )
            };
            break;
        }
        let edge = if v1.self_certified {
            None
        } else {
            v1.graph(next.cat).and_then(|g| {
                let sel = v1.selected(g);
                successors::v1_successors(g, &sel, &cur.name, cur.version.as_ref())
                    .into_iter()
                    .find(|c| c.name == next.bundle)
            })
        };
        let chan = edge.as_ref().map(|c| c.channel.clone()).unwrap_or_else(|| {
            v1.graph(next.cat)
                .map(|g| channel_of(g, &ce.channels, &next.bundle))
                .unwrap_or_default()
        });
        r.upgrades.push(Upgrade {
            round,
            package: ce.package.clone(),
            from: cur.name.clone(),
            to: next.bundle.clone(),
            kind: edge.map(|c| c.kind),
            channel: v1.channel_label(&next, chan),
            new_dependencies: Vec::new(),
            passed_over: Vec::new(),
        });
        cur = v1.installed(&next);
    }
    Ok(r)
}

/// The installed bundle `--installed` names: a version or bundle name of
/// a selected catalog, or `NAME@VERSION` (the ClusterExtension's
/// `status.install.bundle`), in a catalog or not.
fn find_installed(v1: &Resolver, x: &str) -> Result<(Installed, Option<Pick>), Fail> {
    let lookup = |key: &str| {
        (0..v1.cats.len()).find_map(|cat| {
            let g = v1.graph(cat)?;
            match crate::graph::path::resolve(g, key) {
                Ok((n, _)) if g.bundles.contains_key(&n) => Some(Pick { cat, bundle: n }),
                _ => None,
            }
        })
    };
    if let Some((name, raw)) = x.split_once('@') {
        let (name, raw) = (name.trim(), raw.trim());
        if name.is_empty() || raw.is_empty() {
            return Err(Fail {
                end: format!("--installed {x:?}: expected NAME@VERSION"),
                hint: None,
            });
        }
        // The name as the cluster records it; a catalog bundle of that name
        // is the same bundle.
        let pick = (0..v1.cats.len()).find_map(|cat| {
            v1.graph(cat)
                .filter(|g| g.bundles.contains_key(name))
                .map(|_| Pick {
                    cat,
                    bundle: name.to_string(),
                })
        });
        // operator-controller parses it strictly (blang's `Parse`).
        let version = Version::parse(raw).map_err(|e| Fail {
            end: format!("--installed {x:?}: {raw:?} is not a semantic version ({e})"),
            hint: None,
        })?;
        return Ok((
            Installed {
                name: name.to_string(),
                raw: raw.to_string(),
                version: Some(version),
            },
            pick,
        ));
    }
    if let Some(p) = lookup(x) {
        return Ok((v1.installed(&p), Some(p)));
    }
    let mut vs: Vec<&Version> = (0..v1.cats.len())
        .filter_map(|c| v1.graph(c))
        .flat_map(|g| g.bundles.values().filter_map(|b| b.version.as_ref()))
        .collect();
    vs.sort_by(|a, b| range::compare(a, b));
    vs.dedup();
    Err(Fail {
        end: format!(
            "--installed {x:?}: not a bundle of package {} (versions: {})",
            v1.ce.package,
            vs.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        hint: Some(format!(
            "for an installed bundle the catalogs no longer have, give its name and version as the cluster records them (status.install.bundle): --installed NAME@VERSION, e.g. {}",
            match Version::parse(x) {
                Ok(_) => format!("{}.v{x}@{x}", v1.ce.package),
                Err(_) => format!("{x}@1.2.3"),
            }
        )),
    })
}
