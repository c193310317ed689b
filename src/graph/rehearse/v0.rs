//! OLM v0: a Subscription, its dependencies and its upgrades (see the
//! module above for the rules).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use semver::Version;

use super::catalog::{Catalog, Requirement};
use super::{PassedOver, Placed, Rehearsal, Subscription, Upgrade};
use crate::graph::successors::{self, Olm};
use crate::graph::{EdgeKind, PackageGraph};
use crate::semver_range as range;

/// A bundle chosen by the solver.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Chosen {
    package: String,
    name: String,
    channel: String,
    required_by: Option<String>,
    requirement: Option<String>,
}

/// A dependency still to satisfy.
#[derive(Clone, Debug)]
struct Pending {
    owner: String,
    owner_package: String,
    index: usize,
}

const SEARCH_BUDGET: usize = 50_000;

struct V0<'a> {
    cat: &'a Catalog,
    /// Channel orders, computed once: (package, channel) -> chain or error.
    orders: BTreeMap<(String, String), Result<Vec<String>, String>>,
    budget: usize,
    /// In an upgrade round: the bundles other Subscriptions may move to in
    /// the same resolution (their one-hop successors), by package.
    movable: BTreeMap<String, Vec<String>>,
    /// Every channel in the resolver's dependency order.
    channel_order: Vec<(&'a PackageGraph, &'a crate::graph::Channel)>,
    /// Candidates by requirement (its description), computed once.
    memo: std::cell::RefCell<BTreeMap<String, Result<Vec<Chosen>, String>>>,
}

impl<'a> V0<'a> {
    fn new(cat: &'a Catalog) -> V0<'a> {
        let mut orders = BTreeMap::new();
        for g in cat.graphs.values() {
            for c in &g.channels {
                orders.insert(
                    (g.package.clone(), c.name.clone()),
                    successors::v0_channel_order(&g.package, c)
                        .map(|v| v.into_iter().map(String::from).collect()),
                );
            }
        }
        V0 {
            cat,
            orders,
            budget: SEARCH_BUDGET,
            movable: BTreeMap::new(),
            channel_order: cat.channels_in_v0_order(),
            memo: Default::default(),
        }
    }

    fn requirement(&self, p: &Pending) -> Option<&'a Requirement> {
        self.cat
            .bundle(&p.owner_package, &p.owner)
            .and_then(|b| b.requires.get(p.index))
    }

    /// The candidates for a requirement, in the resolver's order.
    fn candidates(&self, req: &Requirement) -> Result<Vec<Chosen>, String> {
        let key = req.describe();
        if let Some(hit) = self.memo.borrow().get(&key) {
            return hit.clone();
        }
        let found = self.find_candidates(req);
        self.memo.borrow_mut().insert(key, found.clone());
        found
    }

    fn find_candidates(&self, req: &Requirement) -> Result<Vec<Chosen>, String> {
        let mut out: Vec<Chosen> = Vec::new();
        for &(g, ch) in &self.channel_order {
            let matching = ch.entries.iter().any(|e| {
                self.cat
                    .bundle(&g.package, &e.name)
                    .is_some_and(|b| req.test(b))
            });
            if !matching {
                continue;
            }
            let order = match &self.orders[&(g.package.clone(), ch.name.clone())] {
                Ok(o) => o,
                Err(e) => return Err(format!("OLM v0 cannot order the candidates: {e}")),
            };
            for n in order {
                if out.iter().any(|c| c.package == g.package && c.name == *n) {
                    continue;
                }
                if self.cat.bundle(&g.package, n).is_some_and(|b| req.test(b)) {
                    out.push(Chosen {
                        package: g.package.clone(),
                        name: n.clone(),
                        channel: ch.name.clone(),
                        required_by: None,
                        requirement: None,
                    });
                }
            }
        }
        Ok(out)
    }

    /// Why no bundle of the catalog can satisfy `req`.
    fn why_none(&self, req: &Requirement) -> String {
        match req {
            Requirement::Package {
                name,
                range,
                parsed,
            } => {
                let Some(g) = self.cat.graphs.get(name) else {
                    return format!("the catalog has no package {name}");
                };
                let mut versions: Vec<(&Version, &str)> = g
                    .bundles
                    .values()
                    .filter_map(|b| b.version.as_ref().map(|v| (v, b.name.as_str())))
                    .collect();
                versions.sort_by(|a, b| range::compare(a.0, b.0));
                let in_range: Vec<&str> = versions
                    .iter()
                    .filter(|(v, _)| parsed.admits(v))
                    .map(|(_, n)| *n)
                    .collect();
                if in_range.is_empty() {
                    let all: Vec<String> = versions.iter().map(|(v, _)| v.to_string()).collect();
                    format!(
                        "package {name} has no version in {range}; it has {}",
                        if all.is_empty() {
                            "none".to_string()
                        } else {
                            all.join(", ")
                        }
                    )
                } else {
                    format!(
                        "package {name} has {} in {range}, but not on the replaces chain of any channel (OLM v0 considers only those)",
                        in_range.join(", ")
                    )
                }
            }
            Requirement::Gvk(gvk) => {
                let off_chain: Vec<&str> = self
                    .cat
                    .bundles
                    .values()
                    .filter(|b| b.provides.contains(gvk))
                    .map(|b| b.name.as_str())
                    .collect();
                if off_chain.is_empty() {
                    format!("no bundle in the catalog provides {gvk}")
                } else {
                    format!(
                        "only {} provide{} {gvk}, and not on the replaces chain of any channel (OLM v0 considers only those)",
                        off_chain.join(", "),
                        if off_chain.len() == 1 { "s" } else { "" }
                    )
                }
            }
            Requirement::Label(l) => format!("no bundle in the catalog has label {l}"),
            Requirement::Invalid(why) => why.clone(),
            other => format!("no bundle in the catalog is {}", other.describe()),
        }
    }

    /// Why `cand` cannot join `chosen`, if it cannot.
    fn conflict(&self, chosen: &[Chosen], cand: &Chosen) -> Option<String> {
        if let Some(c) = chosen
            .iter()
            .find(|c| c.package == cand.package && c.name != cand.name)
        {
            return Some(format!(
                "package {} is already {} (one bundle per package)",
                cand.package, c.name
            ));
        }
        let b = self.cat.bundle(&cand.package, &cand.name)?;
        for c in chosen {
            if c.name == cand.name && c.package == cand.package {
                continue;
            }
            let Some(other) = self.cat.bundle(&c.package, &c.name) else {
                continue;
            };
            if let Some(g) = b.provides.iter().find(|g| other.provides.contains(g)) {
                return Some(format!(
                    "{} already provides {g} (one provider per API)",
                    c.name
                ));
            }
        }
        None
    }

    /// Satisfies every pending dependency, choosing in the resolver's
    /// preference order and backing off on failure.
    fn search(
        &mut self,
        chosen: Vec<Chosen>,
        mut queue: VecDeque<Pending>,
    ) -> Result<Vec<Chosen>, String> {
        let Some(p) = queue.pop_front() else {
            return Ok(chosen);
        };
        if self.budget == 0 {
            return Err(format!(
                "the rehearsal gave up after {SEARCH_BUDGET} solver steps"
            ));
        }
        self.budget -= 1;
        let Some(req) = self.requirement(&p) else {
            return self.search(chosen, queue);
        };
        let lead = format!("{} requires {}", p.owner, req.describe());
        if let Requirement::Invalid(why) = req {
            return Err(format!("{}: {why}", p.owner));
        }
        if chosen.iter().any(|c| {
            self.cat
                .bundle(&c.package, &c.name)
                .is_some_and(|b| req.test(b))
        }) {
            return self.search(chosen, queue);
        }
        let cands = self.candidates(req).map_err(|e| format!("{lead}: {e}"))?;
        if cands.is_empty() {
            return Err(format!("{lead}: {}", self.why_none(req)));
        }
        let mut failures: Vec<(String, String)> = Vec::new();
        for mut c in cands {
            // Another Subscription may move its package to `c` in the same
            // resolution; everything is then checked again.
            let moves = chosen
                .iter()
                .any(|x| x.package == c.package && x.name != c.name)
                && self
                    .movable
                    .get(&c.package)
                    .is_some_and(|m| m.contains(&c.name));
            let base: Vec<Chosen> = if moves {
                chosen
                    .iter()
                    .filter(|x| x.package != c.package)
                    .cloned()
                    .collect()
            } else {
                chosen.clone()
            };
            if let Some(why) = self.conflict(&base, &c) {
                failures.push((c.name.clone(), why));
                continue;
            }
            let mut next = base;
            let mut q = queue.clone();
            if moves {
                if let Some(x) = chosen.iter().find(|x| x.package == c.package) {
                    c.channel = x.channel.clone();
                    c.required_by = x.required_by.clone();
                    c.requirement = x.requirement.clone();
                }
                q = VecDeque::from(self.all_pending(&next));
            } else {
                c.required_by = Some(p.owner.clone());
                c.requirement = Some(req.describe());
            }
            if let Some(b) = self.cat.bundle(&c.package, &c.name) {
                for i in 0..b.requires.len() {
                    q.push_back(Pending {
                        owner: c.name.clone(),
                        owner_package: c.package.clone(),
                        index: i,
                    });
                }
            }
            let name = c.name.clone();
            next.push(c);
            match self.search(next, q) {
                Ok(done) => return Ok(done),
                Err(e) => failures.push((name, e)),
            }
        }
        Err(combine(&lead, failures))
    }

    /// Every dependency of every bundle of `chosen`.
    fn all_pending(&self, chosen: &[Chosen]) -> Vec<Pending> {
        let mut out = Vec::new();
        for x in chosen {
            if let Some(b) = self.cat.bundle(&x.package, &x.name) {
                for i in 0..b.requires.len() {
                    out.push(Pending {
                        owner: x.name.clone(),
                        owner_package: x.package.clone(),
                        index: i,
                    });
                }
            }
        }
        out
    }

    /// Installs one of `cands` (most preferred first) into `base`, with
    /// its dependencies and those of everything in `base`.
    fn place(
        &mut self,
        base: &[Chosen],
        cands: Vec<Chosen>,
    ) -> (Option<Vec<Chosen>>, Vec<PassedOver>) {
        let mut passed = Vec::new();
        for c in cands {
            let mut chosen: Vec<Chosen> = base
                .iter()
                .filter(|b| b.package != c.package)
                .cloned()
                .collect();
            if let Some(why) = self.conflict(&chosen, &c) {
                passed.push(PassedOver {
                    bundle: c.name.clone(),
                    reason: why,
                });
                continue;
            }
            // Dependencies no bundle of the catalog can satisfy are named
            // all at once, not only the first the search meets.
            let hopeless: Vec<String> = self
                .cat
                .bundle(&c.package, &c.name)
                .map(|b| {
                    b.requires
                        .iter()
                        .filter(|req| {
                            !chosen.iter().any(|x| {
                                self.cat
                                    .bundle(&x.package, &x.name)
                                    .is_some_and(|xb| req.test(xb))
                            }) && self.candidates(req).is_ok_and(|v| v.is_empty())
                        })
                        .map(|req| match req {
                            Requirement::Invalid(why) => format!("{}: {why}", c.name),
                            _ => format!(
                                "{} requires {}: {}",
                                c.name,
                                req.describe(),
                                self.why_none(req)
                            ),
                        })
                        .collect()
                })
                .unwrap_or_default();
            if !hopeless.is_empty() {
                passed.push(PassedOver {
                    bundle: c.name.clone(),
                    reason: hopeless.join("; "),
                });
                continue;
            }
            chosen.push(c.clone());
            let queue = VecDeque::from(self.all_pending(&chosen));
            self.budget = SEARCH_BUDGET;
            match self.search(chosen, queue) {
                Ok(done) => return (Some(done), passed),
                Err(e) => passed.push(PassedOver {
                    bundle: c.name.clone(),
                    reason: e,
                }),
            }
        }
        (None, passed)
    }
}

/// One message for a choice none of whose candidates works: the cause
/// itself when every candidate fails for the same reason.
fn combine(lead: &str, failures: Vec<(String, String)>) -> String {
    let first = failures.first().map(|f| f.1.clone()).unwrap_or_default();
    if failures.iter().all(|f| f.1 == first) && failures.len() > 1 {
        // The same deeper cause for every candidate is the cause; the same
        // conflict needs the requirement it blocks.
        return if first.contains(" requires ") {
            first
        } else {
            format!("{lead}: {first}")
        };
    }
    match failures.as_slice() {
        [(n, why)] => format!("{lead}: its only candidate {n} cannot be installed: {why}"),
        _ => {
            let shown: Vec<String> = failures
                .iter()
                .take(4)
                .map(|(n, why)| format!("{n}: {why}"))
                .collect();
            let more = if failures.len() > 4 {
                format!("; and {} more", failures.len() - 4)
            } else {
                String::new()
            };
            format!(
                "{lead}: none of its {} candidates can be installed ({}{more})",
                failures.len(),
                shown.join("; ")
            )
        }
    }
}

fn placed(cat: &Catalog, c: &Chosen) -> Placed {
    Placed {
        bundle: c.name.clone(),
        package: c.package.clone(),
        version: cat.version_text(&c.package, &c.name),
        channel: c.channel.clone(),
        required_by: c.required_by.clone(),
        requirement: c.requirement.clone(),
    }
}

pub(super) fn names_list(items: &[&str]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

/// A Subscription, tracked through the rounds.
struct SubState {
    package: String,
    /// Channel asked for (empty: any).
    channel: String,
    current: String,
}

/// A Subscription's one-hop candidates, most preferred first, with the
/// field that admits each.
fn sub_successors(pg: &PackageGraph, s: &SubState) -> Result<Vec<(Chosen, EdgeKind)>, String> {
    let cur_version = pg.version(&s.current).cloned();
    let chans: Vec<&crate::graph::Channel> = if s.channel.is_empty() {
        let mut cs: Vec<&crate::graph::Channel> = pg.channels.iter().collect();
        cs.sort_by_key(|c| (c.name != pg.default_channel, c.name.clone()));
        cs
    } else {
        pg.channel(&s.channel).into_iter().collect()
    };
    let mut succ: Vec<(Chosen, EdgeKind)> = Vec::new();
    for ch in chans {
        for c in successors::v0_candidates(pg, ch, &s.current, cur_version.as_ref())? {
            if !succ.iter().any(|(x, _)| x.name == c.name) {
                succ.push((
                    Chosen {
                        package: pg.package.clone(),
                        name: c.name,
                        channel: c.channel,
                        required_by: None,
                        requirement: None,
                    },
                    c.kind,
                ));
            }
        }
    }
    Ok(succ)
}

/// Rehearses a Subscription against a catalog under OLM v0's rules.
pub fn rehearse_subscription(cat: &Catalog, sub: &Subscription) -> Rehearsal {
    let mut r = Rehearsal {
        olm: Olm::V0,
        kind: "Subscription".into(),
        name: sub.name.clone(),
        package: sub.package.clone(),
        catalog: cat.source.clone(),
        installable: false,
        install: Vec::new(),
        already_installed: false,
        passed_over: Vec::new(),
        upgrades: Vec::new(),
        end: String::new(),
        hint: None,
        notes: Vec::new(),
    };
    let Some(g) = cat.graphs.get(&sub.package) else {
        let pkgs: Vec<&str> = cat.graphs.keys().map(String::as_str).collect();
        r.end = format!(
            "no operators found in package {} in the catalog referenced by subscription {}: the catalog has no package {} (packages: {})",
            sub.package,
            sub.name,
            sub.package,
            names_list(&pkgs)
        );
        return r;
    };
    let channels: Vec<&crate::graph::Channel> = if sub.channel.is_empty() {
        let mut cs: Vec<&crate::graph::Channel> = g.channels.iter().collect();
        cs.sort_by_key(|c| (c.name != g.default_channel, c.name.clone()));
        cs
    } else {
        match g.channel(&sub.channel) {
            Some(c) => vec![c],
            None => {
                let names: Vec<&str> = g.channels.iter().map(|c| c.name.as_str()).collect();
                r.end = format!(
                    "no operators found in channel {} of package {} in the catalog referenced by subscription {}: the package has channels {}",
                    sub.channel,
                    sub.package,
                    sub.name,
                    names_list(&names)
                );
                return r;
            }
        }
    };
    let mut v0 = V0::new(cat);
    // The Subscription's own candidates.
    let mut cands: Vec<Chosen> = Vec::new();
    for ch in &channels {
        let names: Vec<String> = if sub.starting_csv.is_empty() {
            match &v0.orders[&(g.package.clone(), ch.name.clone())] {
                Ok(o) => o.clone(),
                Err(e) => {
                    r.end = format!("OLM v0 cannot resolve subscription {}: {e}", sub.name);
                    return r;
                }
            }
        } else {
            ch.entries
                .iter()
                .filter(|e| e.name == sub.starting_csv)
                .map(|e| e.name.clone())
                .take(1)
                .collect()
        };
        for n in names {
            if !cands.iter().any(|c| c.name == n) {
                cands.push(Chosen {
                    package: g.package.clone(),
                    name: n,
                    channel: ch.name.clone(),
                    required_by: None,
                    requirement: None,
                });
            }
        }
    }
    if cands.is_empty() {
        r.end = if !sub.starting_csv.is_empty() {
            let holder: Vec<&str> = g
                .channels
                .iter()
                .filter(|c| c.entry(&sub.starting_csv).is_some())
                .map(|c| c.name.as_str())
                .collect();
            format!(
                "no operators found with name {} in channel {} of package {} in the catalog referenced by subscription {}{}",
                sub.starting_csv,
                sub.channel,
                sub.package,
                sub.name,
                if holder.is_empty() {
                    format!(": the package has no bundle {}", sub.starting_csv)
                } else {
                    format!(": it is in channel {}", holder.join(", "))
                }
            )
        } else {
            format!(
                "no operators found in channel {} of package {}: the channel has no entries",
                sub.channel, sub.package
            )
        };
        return r;
    }
    let (result, passed) = v0.place(&[], cands);
    r.passed_over = passed;
    let Some(mut installed) = result else {
        r.end = match r.passed_over.as_slice() {
            [one] => format!("constraints not satisfiable: {}", one.reason),
            many => format!(
                "constraints not satisfiable: subscription {} can install none of its {} candidates (each is passed over above)",
                sub.name,
                many.len()
            ),
        };
        return r;
    };
    r.installable = true;
    r.install = installed.iter().map(|c| placed(cat, c)).collect();
    if !sub.starting_csv.is_empty() {
        r.notes.push(format!(
            "startingCSV {}: OLM installs it, then upgrades from it",
            sub.starting_csv
        ));
    }
    // Every Subscription: the one asked for, then one per dependency (OLM
    // creates them on the dependency's channel).
    let mut subs: Vec<SubState> = installed
        .iter()
        .map(|c| SubState {
            package: c.package.clone(),
            channel: if c.package == sub.package {
                sub.channel.clone()
            } else {
                c.channel.clone()
            },
            current: c.name.clone(),
        })
        .collect();
    let manual = sub.install_plan_approval == "Manual";
    let mut round = 0;
    let mut held: BTreeMap<String, String> = BTreeMap::new();
    let mut loop_end: Option<String> = None;
    let mut seen: BTreeSet<(String, String)> = installed
        .iter()
        .map(|c| (c.package.clone(), c.name.clone()))
        .collect();
    loop {
        round += 1;
        if round > 500 {
            r.notes
                .push("stopped after 500 rounds of upgrades".to_string());
            break;
        }
        let mut moved = false;
        // What holds a Subscription back is what the last round found.
        held.clear();
        for i in 0..subs.len() {
            let Some(pg) = cat.graphs.get(&subs[i].package) else {
                continue;
            };
            let cur = subs[i].current.clone();
            let succ = match sub_successors(pg, &subs[i]) {
                Ok(s) => s,
                Err(e) => {
                    held.insert(pg.package.clone(), format!("OLM v0 cannot resolve: {e}"));
                    continue;
                }
            };
            // The other Subscriptions may take their own next hop in the
            // same resolution.
            v0.movable = subs
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .filter_map(|(_, s)| {
                    let og = cat.graphs.get(&s.package)?;
                    let names = sub_successors(og, s)
                        .ok()?
                        .into_iter()
                        .map(|(c, _)| c.name)
                        .collect();
                    Some((s.package.clone(), names))
                })
                .collect();
            if succ.is_empty() {
                continue;
            }
            if manual {
                r.notes.push(format!(
                    "installPlanApproval is Manual: OLM stops here; the InstallPlan for {} -> {} waits for approval (as did the install's own)",
                    cur, succ[0].0.name
                ));
                r.end = format!(
                    "waiting for approval of the upgrade {cur} -> {}",
                    succ[0].0.name
                );
                return r;
            }
            let kinds: BTreeMap<String, EdgeKind> =
                succ.iter().map(|(c, k)| (c.name.clone(), *k)).collect();
            let (result, passed) = v0.place(&installed, succ.into_iter().map(|x| x.0).collect());
            let Some(next) = result else {
                held.insert(
                    pg.package.clone(),
                    format!(
                        "{} stays at {cur}: {}",
                        pg.package,
                        passed
                            .iter()
                            .map(|p| if p.reason.starts_with(&p.bundle) {
                                p.reason.clone()
                            } else {
                                format!("{}: {}", p.bundle, p.reason)
                            })
                            .collect::<Vec<_>>()
                            .join("; ")
                    ),
                );
                continue;
            };
            held.remove(&pg.package);
            let Some(to) = next.iter().find(|c| c.package == pg.package).cloned() else {
                continue;
            };
            let before: BTreeSet<&str> = installed.iter().map(|c| c.package.as_str()).collect();
            let new_deps: Vec<Chosen> = next
                .iter()
                .filter(|c| c.package != pg.package && !before.contains(c.package.as_str()))
                .cloned()
                .collect();
            r.upgrades.push(Upgrade {
                round,
                package: pg.package.clone(),
                from: cur.clone(),
                to: to.name.clone(),
                kind: kinds.get(&to.name).copied(),
                channel: to.channel.clone(),
                new_dependencies: new_deps.iter().map(|c| placed(cat, c)).collect(),
                passed_over: passed,
            });
            // Other packages the same resolution moved a hop.
            for c in &next {
                let Some(was) = installed
                    .iter()
                    .find(|x| x.package == c.package && x.package != pg.package)
                else {
                    continue;
                };
                if was.name == c.name {
                    continue;
                }
                let kind = cat.graphs.get(&c.package).and_then(|og| {
                    let s = subs.iter().find(|s| s.package == c.package)?;
                    sub_successors(og, s)
                        .ok()?
                        .into_iter()
                        .find(|(x, _)| x.name == c.name)
                        .map(|(_, k)| k)
                });
                r.upgrades.push(Upgrade {
                    round,
                    package: c.package.clone(),
                    from: was.name.clone(),
                    to: c.name.clone(),
                    kind,
                    channel: c.channel.clone(),
                    new_dependencies: Vec::new(),
                    passed_over: Vec::new(),
                });
                if let Some(s) = subs.iter_mut().find(|s| s.package == c.package) {
                    s.current = c.name.clone();
                }
            }
            for d in &new_deps {
                if !subs.iter().any(|s| s.package == d.package) {
                    subs.push(SubState {
                        package: d.package.clone(),
                        channel: d.channel.clone(),
                        current: d.name.clone(),
                    });
                }
            }
            subs[i].current = to.name.clone();
            installed = next;
            moved = true;
        }
        if !moved {
            break;
        }
        // A bundle installed before and reached again: the edges loop.
        let mut looped = None;
        for u in r.upgrades.iter().filter(|u| u.round == round) {
            if !seen.insert((u.package.clone(), u.to.clone())) {
                looped = Some(u.to.clone());
            }
            for d in &u.new_dependencies {
                seen.insert((d.package.clone(), d.bundle.clone()));
            }
        }
        if let Some(again) = looped {
            loop_end = Some(format!(
                "the upgrades loop back to {again}, installed before: the upgrade edges form a cycle (a downgrade edge); the rehearsal stops"
            ));
            break;
        }
    }
    r.notes.extend(held.into_values());
    if let Some(e) = loop_end {
        r.end = e;
        return r;
    }
    let main = subs
        .iter()
        .find(|s| s.package == sub.package)
        .map(|s| s.current.clone())
        .unwrap_or_default();
    let main_channel = installed
        .iter()
        .find(|c| c.package == sub.package)
        .map(|c| c.channel.clone())
        .unwrap_or_default();
    let is_head = g
        .channel(&main_channel)
        .and_then(|c| c.head().ok())
        .is_some_and(|h| h.name == main);
    r.end = if is_head {
        format!("{main} is the head of channel {main_channel}; no more upgrades")
    } else {
        format!("{main} is the last bundle OLM reaches in channel {main_channel}")
    };
    r
}
