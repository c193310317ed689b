//! OLM v0: Subscriptions, the CSVs already on the cluster, and what the
//! resolver makes of them, one resolution after another (see the module
//! above for the rules).
//!
//! One resolution follows operator-lifecycle-manager's `Resolver.Resolve`
//! (`pkg/controller/registry/resolver/resolver.go`): every Subscription
//! must be satisfied by one of its candidates (a new one: its channel's
//! entries, head first, or only `startingCSV`; one with an installed CSV:
//! the entries that replace or skip it or whose skipRange includes its
//! version, then the installed CSV itself); every installed CSV without a
//! Subscription stays; every chosen bundle's dependencies are satisfied;
//! no two chosen bundles share a package or provide one API; bundles with
//! `olm.deprecated` are never chosen. A dependency that cannot be read (an
//! unknown constraint type, a bad versionRange, a CEL rule that does not
//! compile) or a channel that cannot be ordered anywhere among the
//! candidates and their dependencies fails the whole resolution, as OLM's
//! `getBundleVariables` does. The solver's preference is approximated by a
//! depth-first search that takes each choice's most preferred candidate and
//! backs off on failure.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use semver::Version;

use super::catalog::{CatBundle, Catalog, Requirement};
use super::request::InstalledCsv;
use super::{PassedOver, Placed, Rehearsal, Subscription, Upgrade};
use crate::bundle::Gvk;
use crate::graph::successors::{self, Olm};
use crate::graph::{EdgeKind, PackageGraph};
use crate::semver_range as range;

/// A bundle in a resolution: a catalog entry, or a CSV on the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Chosen {
    package: String,
    name: String,
    channel: String,
    /// The CSV on the cluster (OLM's virtual catalog), not the catalog's.
    on_cluster: bool,
    required_by: Option<String>,
    requirement: Option<String>,
}

impl Chosen {
    /// What tells two choices apart: package, name, and whether it is the
    /// cluster's CSV.
    fn key(&self) -> (&str, &str, bool) {
        (&self.package, &self.name, self.on_cluster)
    }

    fn same(&self, other: &Chosen) -> bool {
        self.key() == other.key()
    }
}

/// The candidates of a choice that has one way forward.
struct OnlyViable<T> {
    /// The others, with why each cannot be taken, in order.
    others: Vec<(T, String)>,
    /// Where `only` stands among them.
    at: usize,
    /// The one candidate nothing stands against.
    only: T,
}

/// Splits `cands` when exactly one has no verdict against it.
fn split_only_viable<T>(
    cands: impl IntoIterator<Item = T>,
    verdicts: &[Option<String>],
) -> Option<OnlyViable<T>> {
    if verdicts.iter().filter(|v| v.is_none()).count() != 1 {
        return None;
    }
    let mut others = Vec::new();
    let mut only = None;
    let mut at = 0;
    for (c, verdict) in cands.into_iter().zip(verdicts) {
        match verdict {
            Some(why) => others.push((c, why.clone())),
            None => {
                at = others.len();
                only = Some(c);
            }
        }
    }
    only.map(|only| OnlyViable { others, at, only })
}

/// The bundles chosen so far, in order, indexed by package and by provided
/// API, so that the conflict and satisfaction checks of each step look at
/// the few that matter instead of scanning them all (after a long chain of
/// dependencies a resolution holds thousands).
#[derive(Default)]
struct Picked {
    list: Vec<Chosen>,
    /// Positions in `list` of each package's picks, ascending.
    by_package: HashMap<String, Vec<usize>>,
    /// Positions in `list` of the picks providing each API, ascending.
    by_api: HashMap<Gvk, Vec<usize>>,
}

impl Picked {
    fn len(&self) -> usize {
        self.list.len()
    }

    /// The picks at `positions`, in order.
    fn at<'p>(&'p self, positions: Option<&'p Vec<usize>>) -> impl Iterator<Item = &'p Chosen> {
        positions.into_iter().flatten().map(move |&i| &self.list[i])
    }
}

/// What the search still has to satisfy.
#[derive(Clone, Debug)]
enum Item {
    /// A Subscription (index into the resolution's list).
    Sub(usize),
    /// Dependency `index` of a chosen bundle.
    Dep(Chosen, usize),
}

/// A Subscription as one resolution sees it.
struct SubReq {
    name: String,
    package: String,
    /// Most preferred first; the installed CSV last.
    candidates: Vec<Chosen>,
    /// OLM's reason when it has no candidate at all.
    invalid: Option<String>,
    /// For each successor, the field of its entry that admits the CSV.
    kinds: BTreeMap<String, EdgeKind>,
    /// A Manual Subscription's first successor, waiting for approval.
    waiting_on: Option<String>,
}

const SEARCH_BUDGET: usize = 50_000;

struct V0<'a> {
    cat: &'a Catalog,
    /// The CSVs on the cluster, by name.
    cluster: &'a BTreeMap<String, CatBundle>,
    /// Channel orders, computed once: (package, channel) -> chain or error.
    orders: BTreeMap<(String, String), Result<Vec<String>, String>>,
    budget: usize,
    /// Every channel in the resolver's dependency order.
    channel_order: Vec<(&'a PackageGraph, &'a crate::graph::Channel)>,
    /// Candidates (cluster, then catalog) by requirement (its description), computed once.
    memo: std::cell::RefCell<BTreeMap<String, Result<Vec<Chosen>, String>>>,
    /// Per Subscription: the more preferred candidates passed over on the
    /// path that succeeded, or on the last that failed.
    passed: BTreeMap<usize, Vec<PassedOver>>,
}

impl<'a> V0<'a> {
    fn new(cat: &'a Catalog, cluster: &'a BTreeMap<String, CatBundle>) -> V0<'a> {
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
            cluster,
            orders,
            budget: SEARCH_BUDGET,
            channel_order: cat.channels_in_v0_order(),
            memo: Default::default(),
            passed: BTreeMap::new(),
        }
    }

    fn bundle(&self, c: &Chosen) -> Option<&'a CatBundle> {
        if c.on_cluster {
            self.cluster.get(&c.name)
        } else {
            self.cat.bundle(&c.package, &c.name)
        }
    }

    /// Adds `c` to `picked`, indexed.
    fn pick(&self, picked: &mut Picked, c: Chosen) {
        let at = picked.list.len();
        if let Some(b) = self.bundle(&c) {
            for g in &b.provides {
                picked.by_api.entry(g.clone()).or_default().push(at);
            }
        }
        picked
            .by_package
            .entry(c.package.clone())
            .or_default()
            .push(at);
        picked.list.push(c);
    }

    /// Drops the picks from position `mark` on (a failed branch).
    fn unpick(&self, picked: &mut Picked, mark: usize) {
        while picked.list.len() > mark {
            let Some(c) = picked.list.pop() else { break };
            let at = picked.list.len();
            let drop_at = |positions: Option<&mut Vec<usize>>| {
                if let Some(p) = positions {
                    if p.last() == Some(&at) {
                        p.pop();
                    }
                }
            };
            if let Some(b) = self.bundle(&c) {
                for g in &b.provides {
                    drop_at(picked.by_api.get_mut(g));
                }
            }
            drop_at(picked.by_package.get_mut(&c.package));
        }
    }

    fn satisfied(&self, chosen: &Picked, req: &Requirement) -> bool {
        let test = |c: &Chosen| self.bundle(c).is_some_and(|b| req.test(b));
        match req {
            // Only a bundle of the package, or one providing the API, can.
            Requirement::Package { name, .. } => chosen.at(chosen.by_package.get(name)).any(test),
            Requirement::Gvk(g) => chosen.at(chosen.by_api.get(g)).any(test),
            _ => chosen.list.iter().any(test),
        }
    }

    /// The candidates for a requirement, in the resolver's order: CSVs on
    /// the cluster, then the catalog's.
    fn candidates(&self, req: &Requirement) -> Result<Vec<Chosen>, String> {
        // The cluster and the catalog are fixed for this resolution: each
        // requirement's candidates are found once.
        let key = req.describe();
        if let Some(hit) = self.memo.borrow().get(&key) {
            return hit.clone();
        }
        let mut out: Vec<Chosen> = self
            .cluster
            .values()
            .filter(|b| req.test(b))
            .map(|b| Chosen {
                package: b.package.clone(),
                name: b.name.clone(),
                channel: String::new(),
                on_cluster: true,
                required_by: None,
                requirement: None,
            })
            .collect();
        let found = self.find_candidates(req).map(|catalog| {
            out.extend(catalog);
            out
        });
        self.memo.borrow_mut().insert(key, found.clone());
        found
    }

    fn find_candidates(&self, req: &Requirement) -> Result<Vec<Chosen>, String> {
        let mut out: Vec<Chosen> = Vec::new();
        for &(g, ch) in &self.channel_order {
            // A package requirement is met only by that package's bundles.
            if matches!(req, Requirement::Package { name, .. } if *name != g.package) {
                continue;
            }
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
                Err(e) => return Err(e.clone()),
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
                        on_cluster: false,
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
        let why = self.why_none_in_catalog(req);
        if self.cluster.is_empty() || matches!(req, Requirement::Invalid(_)) {
            why
        } else {
            format!("{why}, nor does any CSV on the cluster")
        }
    }

    fn why_none_in_catalog(&self, req: &Requirement) -> String {
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
                    .flat_map(BTreeMap::values)
                    .filter(|b| b.provides.contains(gvk))
                    .map(|b| b.name.as_str())
                    .collect();
                if off_chain.is_empty() {
                    format!(
                        "no bundle in the catalog provides {}",
                        super::catalog::api_text(gvk)
                    )
                } else {
                    format!(
                        "only {} provide{} {}, and not on the replaces chain of any channel (OLM v0 considers only those)",
                        off_chain.join(", "),
                        if off_chain.len() == 1 { "s" } else { "" },
                        super::catalog::api_text(gvk)
                    )
                }
            }
            Requirement::Label(l) => format!("no bundle in the catalog has label {l}"),
            Requirement::Cel {
                failure_message, ..
            } if !failure_message.is_empty() => {
                format!("no bundle in the catalog satisfies the rule: {failure_message}")
            }
            Requirement::Cel { .. } => "no bundle in the catalog satisfies the rule".into(),
            Requirement::Invalid(why) => why.clone(),
            other => format!("no bundle in the catalog is {}", other.describe()),
        }
    }

    /// Why `cand` cannot join `chosen`, if it cannot.
    fn conflict(&self, chosen: &Picked, cand: &Chosen) -> Option<String> {
        if let Some(c) = chosen
            .at(chosen.by_package.get(&cand.package))
            .find(|c| !c.same(cand))
        {
            return Some(format!(
                "package {} is already {}{} (one bundle per package)",
                cand.package,
                c.name,
                if c.on_cluster { ", on the cluster" } else { "" }
            ));
        }
        let b = self.bundle(cand)?;
        if b.deprecated && !cand.on_cluster {
            return Some(format!(
                "bundle {} is deprecated (olm.deprecated): OLM v0 never chooses it",
                cand.name
            ));
        }
        // The first pick (in order) that provides one of its APIs.
        let first = b
            .provides
            .iter()
            .filter_map(|g| {
                chosen
                    .by_api
                    .get(g)?
                    .iter()
                    .copied()
                    .find(|&i| !chosen.list[i].same(cand))
            })
            .min();
        if let Some(c) = first.map(|i| &chosen.list[i]) {
            let other = self.bundle(c)?;
            if let Some(g) = b.provides.iter().find(|g| other.provides.contains(g)) {
                return Some(format!(
                    "{} already provides {} (one provider per API)",
                    c.name,
                    super::catalog::api_text(g)
                ));
            }
        }
        None
    }

    /// The dependencies of `cand` no bundle can satisfy, each in a message.
    fn hopeless(&self, chosen: &Picked, cand: &Chosen) -> Vec<String> {
        let Some(b) = self.bundle(cand) else {
            return Vec::new();
        };
        b.requires
            .iter()
            .filter(|req| {
                !self.satisfied(chosen, req) && self.candidates(req).is_ok_and(|v| v.is_empty())
            })
            .map(|req| {
                format!(
                    "bundle {} requires an operator {}: {}",
                    cand.name,
                    req.olm_text(),
                    self.why_none(req)
                )
            })
            .collect()
    }

    /// OLM's checks before it solves: every dependency of every candidate,
    /// transitively, must be readable and its sources orderable.
    fn check_closure(&self, subs: &[SubReq]) -> Result<(), String> {
        let mut stack: Vec<Chosen> = subs
            .iter()
            .flat_map(|s| s.candidates.iter().cloned())
            .collect();
        stack.extend(self.cluster.values().map(|b| Chosen {
            package: b.package.clone(),
            name: b.name.clone(),
            channel: String::new(),
            on_cluster: true,
            required_by: None,
            requirement: None,
        }));
        let mut seen: BTreeSet<(String, String, bool)> = BTreeSet::new();
        while let Some(c) = stack.pop() {
            if !seen.insert((c.package.clone(), c.name.clone(), c.on_cluster)) {
                continue;
            }
            let Some(b) = self.bundle(&c) else {
                continue;
            };
            for req in &b.requires {
                if let Requirement::Invalid(why) = req {
                    return Err(format!("bundle {}: {why}", c.name));
                }
                match self.candidates(req) {
                    Ok(cands) => stack.extend(cands),
                    Err(e) => {
                        return Err(format!(
                            "{e} (while finding the operators bundle {} requires {})",
                            c.name,
                            req.olm_text()
                        ))
                    }
                }
            }
        }
        Ok(())
    }

    /// The dependencies of `c`, to satisfy.
    fn deps_of(&self, c: &Chosen) -> Vec<Item> {
        self.bundle(c)
            .map(|b| {
                (0..b.requires.len())
                    .map(|i| Item::Dep(c.clone(), i))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Satisfies every item, choosing in the resolver's preference order
    /// and backing off on failure.
    ///
    /// Items are taken in a loop; only a real choice (two or more
    /// candidates that do not conflict with what is chosen) recurses, so
    /// a long chain of dependencies costs no stack. `chosen` is one vector
    /// for the whole search: a choice is pushed and, when it fails,
    /// truncated away again (on failure `chosen` is as it was on entry),
    /// so the depth of the search does not multiply its memory.
    fn search(
        &mut self,
        subs: &[SubReq],
        chosen: &mut Picked,
        mut queue: VecDeque<Item>,
    ) -> Result<Vec<Chosen>, String> {
        let mark = chosen.len();
        let mut forced: Vec<Forced> = Vec::new();
        match self.search_in_place(subs, chosen, &mut queue, &mut forced) {
            Ok(done) => {
                // What each Subscription taken here passed over, innermost
                // first, as the recursion once recorded it on its way out.
                for f in forced.into_iter().rev() {
                    if let Forced::Sub {
                        sub,
                        mut passed_over,
                        at,
                        ..
                    } = f
                    {
                        // Those after the one taken were never tried.
                        passed_over.truncate(at);
                        self.passed.insert(sub, passed_over);
                    }
                }
                Ok(done)
            }
            Err(mut e) => {
                self.unpick(chosen, mark);
                // Explain the failure through the forced choices that led
                // to it, innermost first, as the recursion once did.
                for f in forced.into_iter().rev() {
                    e = self.explain(subs, f, e);
                }
                Err(e)
            }
        }
    }

    /// The failure `why` found after the forced choice `f`, as the
    /// resolver would report it for the requirement or Subscription.
    fn explain(&mut self, subs: &[SubReq], f: Forced, why: String) -> String {
        match f {
            Forced::Dep {
                lead,
                mut failures,
                at,
                name,
            } => {
                failures.insert(at, (name, why));
                combine(&lead, failures)
            }
            Forced::Sub {
                sub,
                mut passed_over,
                at,
                name,
            } => {
                passed_over.insert(
                    at,
                    PassedOver {
                        bundle: name,
                        reason: why,
                    },
                );
                let msg = sub_failure(&subs[sub], &passed_over);
                self.passed.insert(sub, passed_over);
                msg
            }
        }
    }

    fn search_in_place(
        &mut self,
        subs: &[SubReq],
        chosen: &mut Picked,
        queue: &mut VecDeque<Item>,
        forced: &mut Vec<Forced>,
    ) -> Result<Vec<Chosen>, String> {
        loop {
            let Some(item) = queue.pop_front() else {
                return Ok(std::mem::take(chosen).list);
            };
            if self.budget == 0 {
                return Err(format!(
                    "the rehearsal gave up after {SEARCH_BUDGET} solver steps"
                ));
            }
            self.budget -= 1;
            let (owner, index) = match item {
                Item::Sub(i) => {
                    let s = &subs[i];
                    if let Some(why) = &s.invalid {
                        return Err(why.clone());
                    }
                    // Another choice already put a bundle of the package
                    // in: it must be one of this Subscription's candidates.
                    if let Some(have) = chosen.at(chosen.by_package.get(&s.package)).next() {
                        if s.candidates.iter().any(|c| c.same(have)) {
                            continue;
                        }
                        return Err(format!(
                            "subscription {} cannot have {}, which another operator requires: it is not among the subscription's candidates",
                            s.name, have.name
                        ));
                    }
                    // Each candidate's standing, as `search_sub` judges it.
                    let verdicts: Vec<Option<String>> = s
                        .candidates
                        .iter()
                        .map(|c| self.sub_conflict(chosen, c))
                        .collect();
                    let Some(OnlyViable { others, at, only }) =
                        split_only_viable(s.candidates.iter(), &verdicts)
                    else {
                        return self.search_sub(subs, i, &verdicts, chosen, std::mem::take(queue));
                    };
                    // One way forward: take it here, without a copy of the
                    // queue (a dependency installed in round 0 is a
                    // Subscription with one candidate in every later round,
                    // and there may be thousands).
                    let c = only.clone();
                    queue.extend(self.deps_of(&c));
                    forced.push(Forced::Sub {
                        sub: i,
                        passed_over: others
                            .into_iter()
                            .map(|(o, reason)| PassedOver {
                                bundle: o.name.clone(),
                                reason,
                            })
                            .collect(),
                        at,
                        name: c.name.clone(),
                    });
                    self.pick(chosen, c);
                    continue;
                }
                Item::Dep(owner, index) => (owner, index),
            };
            let Some(req) = self.bundle(&owner).and_then(|b| b.requires.get(index)) else {
                continue;
            };
            if let Requirement::Invalid(why) = req {
                return Err(format!("bundle {}: {why}", owner.name));
            }
            if self.satisfied(chosen, req) {
                continue;
            }
            let lead = format!(
                "bundle {} requires an operator {}",
                owner.name,
                req.olm_text()
            );
            let cands = self.candidates(req).map_err(|e| format!("{lead}: {e}"))?;
            if cands.is_empty() {
                return Err(format!("{lead}: {}", self.why_none(req)));
            }
            let conflicts: Vec<Option<String>> =
                cands.iter().map(|c| self.conflict(chosen, c)).collect();
            if let Some(OnlyViable { others, at, only }) =
                split_only_viable(cands.iter(), &conflicts)
            {
                // One way forward: take it here, and remember how to
                // explain a failure further on.
                let mut c = only.clone();
                c.required_by = Some(owner.name.clone());
                c.requirement = Some(req.describe());
                queue.extend(self.deps_of(&c));
                forced.push(Forced::Dep {
                    lead,
                    failures: others
                        .into_iter()
                        .map(|(o, why)| (o.name.clone(), why))
                        .collect(),
                    at,
                    name: c.name.clone(),
                });
                self.pick(chosen, c);
                continue;
            }
            let mut failures: Vec<(String, String)> = Vec::new();
            for (mut c, conflict) in cands.into_iter().zip(conflicts) {
                if let Some(why) = conflict {
                    failures.push((c.name.clone(), why));
                    continue;
                }
                c.required_by = Some(owner.name.clone());
                c.requirement = Some(req.describe());
                let mut q = queue.clone();
                q.extend(self.deps_of(&c));
                let name = c.name.clone();
                let mark = chosen.len();
                self.pick(chosen, c);
                match self.search(subs, chosen, q) {
                    Ok(done) => return Ok(done),
                    Err(e) => {
                        self.unpick(chosen, mark);
                        failures.push((name, e));
                    }
                }
            }
            return Err(combine(&lead, failures));
        }
    }

    /// Why the Subscription candidate `c` cannot join `chosen`: a conflict,
    /// or dependencies no bundle satisfies.
    fn sub_conflict(&self, chosen: &Picked, c: &Chosen) -> Option<String> {
        self.conflict(chosen, c).or_else(|| {
            let h = self.hopeless(chosen, c);
            (!h.is_empty()).then(|| h.join("; "))
        })
    }

    /// Tries Subscription `i`'s candidates in order; `verdicts` say which
    /// cannot join what is chosen, and why ([`V0::sub_conflict`]).
    fn search_sub(
        &mut self,
        subs: &[SubReq],
        i: usize,
        verdicts: &[Option<String>],
        chosen: &mut Picked,
        queue: VecDeque<Item>,
    ) -> Result<Vec<Chosen>, String> {
        let s = &subs[i];
        let mut failures: Vec<PassedOver> = Vec::new();
        for (c, verdict) in s.candidates.iter().zip(verdicts) {
            if let Some(why) = verdict {
                failures.push(PassedOver {
                    bundle: c.name.clone(),
                    reason: why.clone(),
                });
                continue;
            }
            let mut q = queue.clone();
            q.extend(self.deps_of(c));
            let mark = chosen.len();
            self.pick(chosen, c.clone());
            match self.search(subs, chosen, q) {
                Ok(done) => {
                    self.passed.insert(i, failures);
                    return Ok(done);
                }
                Err(e) => {
                    self.unpick(chosen, mark);
                    failures.push(PassedOver {
                        bundle: c.name.clone(),
                        reason: e,
                    });
                }
            }
        }
        let msg = sub_failure(s, &failures);
        self.passed.insert(i, failures);
        Err(msg)
    }

    /// One resolution: the chosen bundles, or why there are none.
    fn resolve(&mut self, subs: &[SubReq], fixed: &[Chosen]) -> Result<Vec<Chosen>, String> {
        self.check_closure(subs)?;
        self.budget = SEARCH_BUDGET;
        self.passed.clear();
        let mut queue: VecDeque<Item> = (0..subs.len()).map(Item::Sub).collect();
        for f in fixed {
            queue.extend(self.deps_of(f));
        }
        let mut picked = Picked::default();
        for f in fixed {
            self.pick(&mut picked, f.clone());
        }
        self.search(subs, &mut picked, queue)
    }
}

/// A dependency or Subscription that had one candidate left, taken
/// without recursing: what is needed to explain a failure found after it.
enum Forced {
    Dep {
        lead: String,
        /// The candidates passed over for conflicts, in preference order.
        failures: Vec<(String, String)>,
        /// Where the candidate taken stands among them.
        at: usize,
        name: String,
    },
    Sub {
        /// The Subscription's index in the resolution.
        sub: usize,
        /// The candidates passed over, in preference order.
        passed_over: Vec<PassedOver>,
        /// Where the candidate taken stands among them.
        at: usize,
        name: String,
    },
}

/// Why Subscription `s` installs nothing, given why each candidate failed.
fn sub_failure(s: &SubReq, failures: &[PassedOver]) -> String {
    match failures {
        [] => format!(
            "no operators found matching the criteria of subscription {}",
            s.name
        ),
        [one] => one.reason.clone(),
        many => format!(
            "subscription {} can install none of its {} candidates ({})",
            s.name,
            many.len(),
            many.iter()
                .map(|p| if p.reason.contains(&p.bundle) {
                    p.reason.clone()
                } else {
                    format!("{}: {}", p.bundle, p.reason)
                })
                .collect::<Vec<_>>()
                .join("; ")
        ),
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

fn placed(cat: &Catalog, cluster: &BTreeMap<String, CatBundle>, c: &Chosen) -> Placed {
    let version = if c.on_cluster {
        cluster
            .get(&c.name)
            .map(|b| b.raw_version.clone())
            .unwrap_or_default()
    } else {
        cat.version_text(&c.package, &c.name)
    };
    Placed {
        bundle: c.name.clone(),
        package: c.package.clone(),
        version,
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

/// A Subscription, tracked through the resolutions.
struct SubState {
    name: String,
    package: String,
    /// Channel asked for (empty: any, the default first).
    channel: String,
    starting_csv: String,
    manual: bool,
    /// `spec.source` and `spec.sourceNamespace`, for OLM's messages.
    source: String,
    source_namespace: String,
    /// The CSV it installed, if any, and the channel it came from.
    current: Option<String>,
    current_channel: String,
}

/// The channels a Subscription reads, in the resolver's order: the one
/// named, or every channel with the default first.
fn sub_channels<'g>(pg: &'g PackageGraph, channel: &str) -> Vec<&'g crate::graph::Channel> {
    if channel.is_empty() {
        let mut cs: Vec<&crate::graph::Channel> = pg.channels.iter().collect();
        cs.sort_by_key(|c| (c.name != pg.default_channel, c.name.clone()));
        cs
    } else {
        pg.channel(channel).into_iter().collect()
    }
}

/// The entries that may replace `current` (one hop), most preferred first,
/// with the field that admits each.
fn sub_successors(
    pg: &PackageGraph,
    channel: &str,
    current: &str,
    current_version: Option<&Version>,
) -> Result<Vec<(Chosen, EdgeKind)>, String> {
    let mut succ: Vec<(Chosen, EdgeKind)> = Vec::new();
    for ch in sub_channels(pg, channel) {
        for c in successors::v0_candidates(pg, ch, current, current_version)? {
            if !succ.iter().any(|(x, _)| x.name == c.name) {
                succ.push((
                    Chosen {
                        package: pg.package.clone(),
                        name: c.name,
                        channel: c.channel,
                        on_cluster: false,
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

/// A version read from a CSV name such as `etcdoperator.v0.9.4`, for a
/// CSV the catalog does not have: what follows the last `.v` (or a `v`
/// before a digit), read as blang's `ParseTolerant` reads versions.
fn version_from_name(name: &str) -> Option<Version> {
    let i = name.rfind(".v").map(|i| i + 2).or_else(|| {
        name.rfind('v')
            .filter(|i| name[i + 1..].starts_with(|c: char| c.is_ascii_digit()))
            .map(|i| i + 1)
    })?;
    crate::semver_range::parse_tolerant(&name[i..]).ok()
}

/// One resolution's view of a Subscription: its candidates, or OLM's
/// reason it has none (`getSubscriptionVariables`).
fn sub_request(
    cat: &Catalog,
    cluster: &BTreeMap<String, CatBundle>,
    v0: &V0,
    s: &SubState,
) -> Result<SubReq, String> {
    let mut req = SubReq {
        name: s.name.clone(),
        package: s.package.clone(),
        candidates: Vec::new(),
        invalid: None,
        kinds: BTreeMap::new(),
        waiting_on: None,
    };
    let invalid = |mut req: SubReq, why: String| {
        req.invalid = Some(why);
        Ok(req)
    };
    if cat.bundles.is_empty() {
        let why = format!(
            "no operators found from catalog {} in namespace {} referenced by subscription {} (hint: the catalog {} has no bundles)",
            s.source, s.source_namespace, s.name, cat.source
        );
        return invalid(req, why);
    }
    let Some(g) = cat.graphs.get(&s.package) else {
        let pkgs: Vec<&str> = cat.graphs.keys().map(String::as_str).collect();
        let why = format!(
            "no operators found in package {} in the catalog referenced by subscription {} (hint: the catalog has no package {}; it has {})",
            s.package,
            s.name,
            s.package,
            names_list(&pkgs)
        );
        return invalid(req, why);
    };
    let channels = sub_channels(g, &s.channel);
    if channels.is_empty() || channels.iter().all(|c| c.entries.is_empty()) {
        let names: Vec<&str> = g.channels.iter().map(|c| c.name.as_str()).collect();
        let why = format!(
            "no operators found in channel {} of package {} in the catalog referenced by subscription {} (hint: the package has channels {})",
            s.channel,
            s.package,
            s.name,
            names_list(&names)
        );
        return invalid(req, why);
    }
    let current = s.current.as_ref().and_then(|n| cluster.get(n));
    if let Some(cur) = current {
        let succ = sub_successors(g, &s.channel, &cur.name, cur.version.as_ref())
            .map_err(|e| format!("subscription {}: {e}", s.name))?;
        let first = succ.first().map(|(c, _)| c.name.clone());
        if !s.manual {
            for (c, k) in succ {
                req.kinds.insert(c.name.clone(), k);
                req.candidates.push(c);
            }
        }
        req.candidates.push(Chosen {
            package: cur.package.clone(),
            name: cur.name.clone(),
            channel: s.current_channel.clone(),
            on_cluster: true,
            required_by: None,
            requirement: None,
        });
        req.waiting_on = if s.manual { first } else { None };
        return Ok(req);
    }
    for ch in channels {
        // OLM orders only the entries the Subscription's predicates keep:
        // with startingCSV that one entry, even one the chain skips.
        let names: Vec<String> = if !s.starting_csv.is_empty() {
            ch.entry(&s.starting_csv)
                .map(|e| e.name.clone())
                .into_iter()
                .collect()
        } else {
            match &v0.orders[&(g.package.clone(), ch.name.clone())] {
                Ok(o) => o.clone(),
                Err(e) => return Err(format!("subscription {}: {e}", s.name)),
            }
        };
        for n in names {
            if !req.candidates.iter().any(|c| c.name == n) {
                req.candidates.push(Chosen {
                    package: g.package.clone(),
                    name: n,
                    channel: ch.name.clone(),
                    on_cluster: false,
                    required_by: None,
                    requirement: None,
                });
            }
        }
    }
    if req.candidates.is_empty() && !s.starting_csv.is_empty() {
        let holder: Vec<&str> = g
            .channels
            .iter()
            .filter(|c| c.entry(&s.starting_csv).is_some())
            .map(|c| c.name.as_str())
            .collect();
        let why = format!(
            "no operators found with name {} in channel {} of package {} in the catalog referenced by subscription {} (hint: {})",
            s.starting_csv,
            s.channel,
            s.package,
            s.name,
            if holder.is_empty() {
                format!("the package has no bundle {}", s.starting_csv)
            } else {
                format!("it is in channel {}", holder.join(", "))
            }
        );
        return invalid(req, why);
    }
    Ok(req)
}

/// The cluster's CSVs as the resolver reads them: the catalog's bundle of
/// that name, the properties read from a bundle, or only a name, a package
/// and a version read from the name.
fn cluster_csv(cat: &Catalog, i: &InstalledCsv, package: &str) -> CatBundle {
    let mut b = match (&i.bundle, cat.bundle(package, &i.name)) {
        (Some(b), _) => b.clone(),
        (None, Some(b)) => b.clone(),
        (None, None) => {
            let version = version_from_name(&i.name);
            CatBundle {
                name: i.name.clone(),
                package: package.to_string(),
                raw_version: version.as_ref().map(Version::to_string).unwrap_or_default(),
                version,
                ..CatBundle::default()
            }
        }
    };
    b.name = i.name.clone();
    b.package = package.to_string();
    // olm.deprecated is a catalog property; a CSV on the cluster has none.
    b.deprecated = false;
    b
}

/// The channel of `pkg` that lists `name`, preferring `wanted`.
fn channel_of(cat: &Catalog, pkg: &str, name: &str, wanted: &str) -> String {
    let Some(g) = cat.graphs.get(pkg) else {
        return String::new();
    };
    sub_channels(g, "")
        .into_iter()
        .filter(|c| c.entry(name).is_some())
        .map(|c| c.name.clone())
        .min_by_key(|c| c != wanted)
        .unwrap_or_default()
}

/// Rehearses one Subscription against a catalog on an empty cluster.
pub fn rehearse_subscription(cat: &Catalog, sub: &Subscription) -> Rehearsal {
    rehearse_subscriptions(cat, std::slice::from_ref(sub), &[])
}

/// Rehearses Subscriptions resolved together, from the CSVs already on
/// the cluster, under OLM v0's rules.
pub fn rehearse_subscriptions(
    cat: &Catalog,
    subs_in: &[Subscription],
    installed: &[InstalledCsv],
) -> Rehearsal {
    // The resolver searches depth first, one frame per choice; a long
    // dependency chain (thousands of packages) is deeper than a main
    // thread's stack, so it runs on a thread with room for it (reserved,
    // not committed, memory).
    const STACK: usize = 512 << 20;
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("olm-v0-resolver".into())
            .stack_size(STACK)
            .spawn_scoped(scope, || rehearse_on_this_thread(cat, subs_in, installed))
            .map(|t| t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .unwrap_or_else(|_| rehearse_on_this_thread(cat, subs_in, installed))
    })
}

/// [`rehearse_subscriptions`] on the calling thread.
fn rehearse_on_this_thread(
    cat: &Catalog,
    subs_in: &[Subscription],
    installed: &[InstalledCsv],
) -> Rehearsal {
    let join =
        |f: &dyn Fn(&Subscription) -> String| subs_in.iter().map(f).collect::<Vec<_>>().join(", ");
    let mut r = Rehearsal {
        olm: Olm::V0,
        kind: "Subscription".into(),
        name: join(&|s| s.name.clone()),
        package: join(&|s| s.package.clone()),
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
    // The cluster: every --installed CSV and every status.installedCSV.
    let mut wanted: Vec<(InstalledCsv, String)> = Vec::new();
    for i in installed {
        let by_sub = subs_in
            .iter()
            .find(|s| s.installed_csv == i.name)
            .map(|s| s.package.clone());
        let in_cat: Vec<&String> = cat
            .bundles
            .iter()
            .filter(|(_, named)| named.contains_key(&i.name))
            .map(|(p, _)| p)
            .collect();
        let package = if !i.package.is_empty() {
            i.package.clone()
        } else if let Some(b) = &i.bundle {
            b.package.clone()
        } else if let [p] = in_cat.as_slice() {
            (*p).clone()
        } else if let Some(p) = by_sub {
            p
        } else {
            r.end = format!(
                "the package of installed CSV {} is unknown (the catalog has no bundle of that name): give --installed {}@PACKAGE",
                i.name, i.name
            );
            return r;
        };
        wanted.push((i.clone(), package));
    }
    let mut cluster: BTreeMap<String, CatBundle> = BTreeMap::new();
    for (i, package) in &wanted {
        let b = cluster_csv(cat, i, package);
        r.notes.push(format!(
            "on the cluster: {} (package {}{}), {}",
            b.name,
            b.package,
            if b.raw_version.is_empty() {
                String::new()
            } else {
                format!(" {}", b.raw_version)
            },
            if i.bundle.is_some() {
                format!("read from {}", i.source)
            } else if cat.bundle(package, &i.name).is_some() {
                "as the catalog has it".to_string()
            } else {
                "not in the catalog (no APIs or dependencies known; give CSV@PACKAGE=BUNDLE to read them)".to_string()
            }
        ));
        cluster.insert(b.name.clone(), b);
    }
    // Subscriptions, each with the CSV it installed, if any.
    let mut subs: Vec<SubState> = Vec::new();
    for s in subs_in {
        // status.installedCSV names the CSV, which must be on the cluster
        // (OLM treats a Subscription whose CSV is gone as new); without it
        // the CSV of the subscribed package is the Subscription's.
        let current = if !s.installed_csv.is_empty() {
            cluster
                .contains_key(&s.installed_csv)
                .then(|| s.installed_csv.clone())
        } else {
            cluster
                .values()
                .find(|b| b.package == s.package)
                .map(|b| b.name.clone())
        };
        if let Some(c) = &current {
            if subs.iter().any(|o| o.current.as_ref() == Some(c)) {
                r.end = format!("two subscriptions claim installed CSV {c}; give each its own");
                return r;
            }
        }
        let current_channel = current
            .as_ref()
            .map(|c| {
                let pkg = cluster.get(c).map(|b| b.package.as_str()).unwrap_or("");
                let ch = channel_of(cat, pkg, c, &s.channel);
                if ch.is_empty() {
                    s.channel.clone()
                } else {
                    ch
                }
            })
            .unwrap_or_default();
        subs.push(SubState {
            name: if s.name.is_empty() {
                s.package.clone()
            } else {
                s.name.clone()
            },
            package: s.package.clone(),
            channel: s.channel.clone(),
            starting_csv: s.starting_csv.clone(),
            manual: s.install_plan_approval == "Manual",
            source: s.source.clone(),
            source_namespace: s.source_namespace.clone(),
            current,
            current_channel,
        });
    }
    for s in subs_in.iter().filter(|s| !s.starting_csv.is_empty()) {
        if s.installed_csv.is_empty() {
            r.notes.push(format!(
                "startingCSV {}: OLM installs it, then upgrades from it",
                s.starting_csv
            ));
        }
    }
    run(cat, &mut cluster, &mut subs, &mut r);
    r
}

/// What a PassedOver list says, one line.
fn reasons(passed: &[PassedOver]) -> String {
    passed
        .iter()
        .map(|p| {
            if p.reason.contains(&p.bundle) {
                p.reason.clone()
            } else {
                format!("{}: {}", p.bundle, p.reason)
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Resolves again and again, as OLM does after each InstallPlan, until
/// nothing moves.
fn run(
    cat: &Catalog,
    cluster: &mut BTreeMap<String, CatBundle>,
    subs: &mut Vec<SubState>,
    r: &mut Rehearsal,
) {
    let asked = subs.len();
    let any_manual = subs.iter().any(|s| s.manual);
    let mut seen: BTreeSet<(String, String)> = cluster
        .values()
        .map(|b| (b.package.clone(), b.name.clone()))
        .collect();
    let mut waiting: Option<(String, String)> = None;
    let mut held: BTreeMap<String, String> = BTreeMap::new();
    let mut round = 0;
    loop {
        if round > 500 {
            r.notes
                .push("stopped after 500 rounds of upgrades".to_string());
            break;
        }
        // One resolution, over the cluster as it is now.
        let snapshot = cluster.clone();
        let mut v0 = V0::new(cat, &snapshot);
        let mut reqs = Vec::new();
        let mut failed: Option<String> = None;
        for s in subs.iter() {
            match sub_request(cat, &snapshot, &v0, s) {
                Ok(req) => {
                    if let (Some(next), Some(cur)) = (req.waiting_on.clone(), &s.current) {
                        if waiting.is_none() {
                            r.notes.push(format!(
                                "installPlanApproval is Manual: OLM stops here; the InstallPlan for {cur} -> {next} waits for approval (as did the install's own)"
                            ));
                            waiting = Some((cur.clone(), next));
                        }
                    }
                    reqs.push(req);
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        let claimed: BTreeSet<&String> = subs.iter().filter_map(|s| s.current.as_ref()).collect();
        let fixed: Vec<Chosen> = snapshot
            .values()
            .filter(|b| !claimed.contains(&b.name))
            .map(|b| Chosen {
                package: b.package.clone(),
                name: b.name.clone(),
                channel: String::new(),
                on_cluster: true,
                required_by: None,
                requirement: None,
            })
            .collect();
        let aborted = failed.or_else(|| v0.check_closure(&reqs).err());
        let result = match aborted {
            Some(e) => Err(format!("OLM v0 fails the resolution: {e}")),
            None => v0
                .resolve(&reqs, &fixed)
                .map_err(|e| format!("constraints not satisfiable: {e}")),
        };
        let passed = std::mem::take(&mut v0.passed);
        drop(v0);
        let chosen = match result {
            Ok(c) => c,
            Err(e) => {
                if round == 0 {
                    if asked == 1 {
                        r.passed_over = passed.get(&0).cloned().unwrap_or_default();
                    }
                    r.end = e;
                } else {
                    r.notes
                        .push(format!("resolution {round} fails, so nothing moves: {e}"));
                }
                break;
            }
        };
        if round == 0 {
            r.installable = true;
            // What a new Subscription passed over; an installed one that
            // stays says why in the notes.
            for (i, s) in subs.iter().enumerate().take(asked) {
                if s.current.is_none() {
                    r.passed_over
                        .extend(passed.get(&i).cloned().unwrap_or_default());
                }
            }
        }
        // What moved.
        held.clear();
        let mut picks: Vec<Option<Chosen>> = Vec::new();
        let mut installs: Vec<Placed> = Vec::new();
        let mut ups: Vec<Upgrade> = Vec::new();
        // Where each chosen bundle stands, to find a Subscription's pick
        // without scanning them all for each.
        let mut position: HashMap<(&str, &str, bool), usize> = HashMap::new();
        for (at, c) in chosen.iter().enumerate() {
            position.entry(c.key()).or_insert(at);
        }
        for (i, s) in subs.iter().enumerate() {
            // The first chosen bundle that is one of its candidates.
            let pick = reqs[i]
                .candidates
                .iter()
                .filter_map(|x| position.get(&x.key()).copied())
                .min()
                .map(|at| chosen[at].clone());
            let skipped = passed.get(&i).cloned().unwrap_or_default();
            match (&pick, &s.current) {
                (Some(p), None) => installs.push(placed(cat, &snapshot, p)),
                (Some(p), Some(cur)) if !p.on_cluster => ups.push(Upgrade {
                    round,
                    package: s.package.clone(),
                    from: cur.clone(),
                    to: p.name.clone(),
                    kind: reqs[i].kinds.get(&p.name).copied(),
                    channel: p.channel.clone(),
                    new_dependencies: Vec::new(),
                    passed_over: skipped,
                }),
                (Some(_), Some(cur)) if !skipped.is_empty() => {
                    held.insert(
                        s.package.clone(),
                        format!("{} stays at {cur}: {}", s.package, reasons(&skipped)),
                    );
                }
                _ => {}
            }
            picks.push(pick);
        }
        let picked: std::collections::HashSet<(&str, &str, bool)> =
            picks.iter().flatten().map(Chosen::key).collect();
        let deps: Vec<Chosen> = chosen
            .iter()
            .filter(|c| !c.on_cluster)
            .filter(|c| !picked.contains(&c.key()))
            .cloned()
            .collect();
        if installs.is_empty() && ups.is_empty() && deps.is_empty() {
            break;
        }
        if round == 0 {
            r.install = installs;
            r.install
                .extend(deps.iter().map(|d| placed(cat, &snapshot, d)));
        } else {
            for d in &deps {
                let at = ups
                    .iter()
                    .position(|u| Some(&u.to) == d.required_by.as_ref())
                    .unwrap_or(0);
                match ups.get_mut(at) {
                    Some(u) => u.new_dependencies.push(placed(cat, &snapshot, d)),
                    None => r.notes.push(format!(
                        "round {round} installs {} for {}",
                        d.name,
                        d.required_by.as_deref().unwrap_or("?")
                    )),
                }
            }
        }
        // The cluster after this InstallPlan.
        let mut looped = None;
        for (i, pick) in picks.iter().enumerate() {
            let Some(p) = pick.as_ref().filter(|p| !p.on_cluster) else {
                continue;
            };
            let s = &mut subs[i];
            if let Some(old) = s.current.take() {
                cluster.remove(&old);
            }
            if let Some(b) = cat.bundle(&p.package, &p.name) {
                let mut b = b.clone();
                b.deprecated = false;
                cluster.insert(p.name.clone(), b);
            }
            if !seen.insert((p.package.clone(), p.name.clone())) && round > 0 {
                looped = Some(p.name.clone());
            }
            s.current = Some(p.name.clone());
            s.current_channel = p.channel.clone();
        }
        for d in &deps {
            if let Some(b) = cat.bundle(&d.package, &d.name) {
                let mut b = b.clone();
                b.deprecated = false;
                cluster.insert(d.name.clone(), b);
            }
            seen.insert((d.package.clone(), d.name.clone()));
            // OLM makes a Subscription for each dependency, on the channel
            // it came from.
            subs.push(SubState {
                name: format!("{}-{}", d.package, d.channel),
                package: d.package.clone(),
                channel: d.channel.clone(),
                starting_csv: String::new(),
                manual: any_manual,
                source: String::new(),
                source_namespace: String::new(),
                current: Some(d.name.clone()),
                current_channel: d.channel.clone(),
            });
        }
        r.upgrades.extend(ups);
        if let Some(again) = looped {
            r.notes.extend(held.into_values());
            r.end = format!(
                "the upgrades loop back to {again}, installed before: the upgrade edges form a cycle (a downgrade edge); the rehearsal stops"
            );
            return;
        }
        round += 1;
    }
    r.notes.extend(held.into_values());
    if !r.installable || !r.end.is_empty() {
        return;
    }
    if let Some((cur, next)) = waiting {
        r.end = format!("waiting for approval of the upgrade {cur} -> {next}");
        return;
    }
    let ends: Vec<String> = subs[..asked]
        .iter()
        .filter_map(|s| {
            let cur = s.current.as_ref()?;
            let is_head = cat
                .graphs
                .get(&s.package)
                .and_then(|g| g.channel(&s.current_channel))
                .and_then(|c| c.head().ok())
                .is_some_and(|h| &h.name == cur);
            Some(if is_head {
                format!(
                    "{cur} is the head of channel {}; no more upgrades",
                    s.current_channel
                )
            } else {
                format!(
                    "{cur} is the last bundle OLM reaches in channel {}",
                    s.current_channel
                )
            })
        })
        .collect();
    r.end = ends.join("; ");
}

#[cfg(test)]
mod tests {
    use super::version_from_name;

    #[test]
    fn versions_read_from_csv_names() {
        for (name, want) in [
            ("etcdoperator.v0.9.2", Some("0.9.2")),
            ("test-package.v1", Some("1.0.0")),
            ("a.v1.2.3-rc.1", Some("1.2.3-rc.1")),
            ("opv2", Some("2.0.0")),
            ("b-1", None),
        ] {
            assert_eq!(
                version_from_name(name).map(|v| v.to_string()).as_deref(),
                want,
                "{name}"
            );
        }
    }
}
