//! Graph checks. Each finding has a rule id, points at the field that is
//! wrong, and lists the other bundles involved as related locations.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::modes::Mode;
use super::{Channel, Edge, EdgeKind, HeadError, PackageGraph};
use crate::diag::{Finding, Level, Location, Report};
use crate::semver_range::{self as range, Range};

/// Every rule: id and what it means.
pub const RULES: &[(&str, &str)] = &[
    (
        "graph-default-channel-missing",
        "the package has no default channel, or names a channel that does not exist",
    ),
    (
        "graph-default-channel-empty",
        "the default channel has no entries",
    ),
    (
        "graph-multiple-heads",
        "more than one entry of a channel is replaced or skipped by no other entry",
    ),
    (
        "graph-no-head",
        "every entry of a channel is replaced or skipped by another: the channel has no head",
    ),
    (
        "graph-cycle",
        "replaces, skips or olm.substitutesFor form a cycle",
    ),
    (
        "graph-replaces-missing",
        "replaces names a bundle that is not in the channel",
    ),
    (
        "graph-skips-missing",
        "skips names a bundle that is not in the channel",
    ),
    (
        "graph-stranded-bundle",
        "no upgrade path from the channel head reaches the bundle",
    ),
    (
        "graph-downgrade-edge",
        "an upgrade edge goes from a newer to an older version",
    ),
    (
        "graph-skiprange-invalid",
        "olm.skipRange is not a valid version range",
    ),
    (
        "graph-skiprange-unsatisfiable",
        "olm.skipRange admits no version at all",
    ),
    (
        "graph-skiprange-admits-self",
        "olm.skipRange admits the bundle's own version",
    ),
    (
        "graph-version-invalid",
        "the bundle version is missing or not semver",
    ),
    (
        "graph-opm-refuses",
        "opm index add would refuse the bundles in this mode",
    ),
    (
        "graph-duplicate-bundle",
        "two bundles have the same CSV name",
    ),
    (
        "graph-bundle-unreadable",
        "a bundle directory could not be read",
    ),
    (
        "graph-package-unreadable",
        "a package (its ci.yaml, template or catalog) could not be read, so it has no graph; the other packages are still checked",
    ),
];

/// The description of a rule, for SARIF.
pub fn rule_help(id: &str) -> Option<String> {
    RULES
        .iter()
        .find(|(r, _)| *r == id)
        .map(|(_, d)| d.to_string())
        .or_else(|| super::crd_safety::rule_help(id))
}

/// What [`check_packages_each`] checks, and how it reads packages.
#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    /// Add mode for bundle directories (default: `ci.yaml`'s updateGraph,
    /// else replaces).
    pub mode: Option<Mode>,
    /// For FBC-enabled packages: the catalog whose template to use
    /// (default: the newest mapped).
    pub catalog: Option<String>,
    /// Also run the CRD upgrade-safety checks of every upgrade edge.
    pub crds: bool,
    /// The crdify configuration of those checks.
    pub crd_checks: super::crd_safety::CrdChecks,
}

/// Checks the graphs of many paths (package directories, templates, FBC;
/// as [`super::load::load_graphs`] reads them) in parallel and hands each
/// report to `sink` in the order of `paths`, on the calling thread, as
/// soon as it and those before it are done. A package's graphs and CRDs
/// are dropped once it is checked, so memory is that of a few packages
/// however many are given. A `sink` error stops the run and is returned.
pub fn check_packages_each<E>(
    paths: &[PathBuf],
    opts: &CheckOptions,
    mut sink: impl FnMut(Report) -> Result<(), E>,
) -> Result<(), E> {
    crate::par::ordered_window(
        paths,
        |p| check_path(p, opts),
        |reports| reports.into_iter().try_for_each(&mut sink),
    )
}

/// The reports of one path: one per package graph it holds (subject
/// `PATH (package NAME)`), or, when it cannot be read or holds no package,
/// one `graph-package-unreadable` error about it.
pub fn check_path(path: &Path, opts: &CheckOptions) -> Vec<Report> {
    let graphs = match super::load::load_graphs(path, opts.mode, opts.catalog.as_deref()) {
        Ok(g) if g.is_empty() => Err(format!("{}: no package found", path.display())),
        Ok(g) => Ok(g),
        Err(e) => Err(e.to_string()),
    };
    match graphs {
        Ok(graphs) => graphs
            .iter()
            .map(|g| {
                let mut report = Report {
                    subject: format!("{} (package {})", path.display(), g.package),
                    findings: check_with(g, opts.crds.then_some(opts.crd_checks)),
                };
                report.sort();
                report
            })
            .collect(),
        Err(e) => vec![Report {
            subject: path.display().to_string(),
            findings: vec![unreadable_package(path, e)],
        }],
    }
}

/// The finding for a package that could not be loaded: the error, placed
/// at the file and line it names when it starts with `file:line:column: `.
fn unreadable_package(dir: &Path, mut msg: String) -> Finding {
    let mut location = Location::file(dir);
    let mut parts = msg.splitn(4, ':');
    if let (Some(file), Some(line), Some(col), Some(rest)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    {
        if let (Ok(line), Ok(column)) = (line.parse::<u32>(), col.parse::<u32>()) {
            // Not `read_to_string`: a file that is not text is not read whole.
            let text = crate::fbc::read_catalog_file(std::path::Path::new(file)).ok();
            location = Location::new(
                file,
                crate::yaml::Span::point(line, column),
                text.as_deref(),
            );
            msg = rest.trim_start().to_string();
        }
    }
    Finding::error("graph-package-unreadable", msg)
        .at(location)
        .hint("this package has no graph until it can be read; the other packages were checked")
}

/// [`check`], and with `crds` also the CRD upgrade-safety checks of every
/// upgrade edge under that configuration
/// ([`super::crd_safety::check_graph_with`]).
pub fn check_with(g: &PackageGraph, crds: Option<super::crd_safety::CrdChecks>) -> Vec<Finding> {
    let mut out = check(g);
    if let Some(checks) = crds {
        // Straight into `out`: a package's CRD findings can be tens of
        // thousands, and a second vector of them was copied into this one.
        super::crd_safety::check_graph_into(g, checks, &mut out);
    }
    out
}

/// Runs every check on a graph.
pub fn check(g: &PackageGraph) -> Vec<Finding> {
    let mut out = g.load_findings.clone();
    check_default_channel(g, &mut out);
    for b in g.bundles.values() {
        if b.version.is_none() {
            let mut f = Finding::error(
                "graph-version-invalid",
                if b.raw_version.is_empty() {
                    format!("bundle {} has no version", b.name)
                } else {
                    format!("bundle {} has version `{}`, which is not semver", b.name, b.raw_version)
                },
            )
            .hint("OLM orders bundles and evaluates skipRange by semantic version (MAJOR.MINOR.PATCH)");
            if let Some(l) = b.version_location.clone().or_else(|| b.location.clone()) {
                f = f.at(l);
            }
            out.push(f);
        }
    }
    for ch in &g.channels {
        check_channel(g, ch, &mut out);
    }
    check_substitutes_cycles(g, &mut out);
    if let Some(e) = &g.mode_error {
        let mode = g.mode.map(|m| m.as_str()).unwrap_or("replaces");
        let mut f = Finding::error(
            "graph-opm-refuses",
            format!("`opm index add --mode {mode}` would fail: {e}"),
        );
        if let Some(l) = g.bundles.get(&e.bundle).and_then(|b| b.location.clone()) {
            f = f.at(l);
        }
        out.push(f);
    }
    out
}

fn at(f: Finding, loc: &Option<Location>) -> Finding {
    match loc {
        Some(l) => f.at(l.clone()),
        None => f,
    }
}

fn check_default_channel(g: &PackageGraph, out: &mut Vec<Finding>) {
    if g.channels.is_empty() {
        return;
    }
    if g.default_channel.is_empty() {
        out.push(at(
            Finding::error(
                "graph-default-channel-missing",
                format!("package {} has no default channel", g.package),
            )
            .hint("set operators.operatorframework.io.bundle.channel.default.v1 (or the olm.package defaultChannel)"),
            &g.default_channel_location,
        ));
        return;
    }
    match g.channel(&g.default_channel) {
        None => out.push(at(
            Finding::error(
                "graph-default-channel-missing",
                format!(
                    "default channel {} of package {} is not one of its channels ({})",
                    g.default_channel,
                    g.package,
                    g.channels
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            &g.default_channel_location,
        )),
        Some(c) if c.entries.is_empty() => out.push(at(
            Finding::error(
                "graph-default-channel-empty",
                format!(
                    "default channel {} of package {} has no entries",
                    c.name, g.package
                ),
            ),
            &c.location,
        )),
        Some(_) => {}
    }
}

/// The names opm's replaces mode keeps in a channel: from the highest
/// version, the `replaces` chain and every `skips` of a bundle on it.
fn opm_replaces_walk(g: &PackageGraph, ch: &Channel) -> Option<BTreeSet<String>> {
    let head = ch
        .entries
        .iter()
        .filter_map(|e| g.version(&e.name).map(|v| (v, e)))
        .max_by(|a, b| a.0.cmp_precedence(b.0))?
        .1;
    let mut keep = BTreeSet::new();
    let mut cur = Some(head);
    while let Some(e) = cur {
        if !keep.insert(e.name.clone()) {
            break;
        }
        keep.extend(e.skips.iter().cloned());
        cur = if e.replaces.is_empty() {
            None
        } else {
            ch.entry(&e.replaces)
        };
    }
    Some(keep)
}

fn check_channel(g: &PackageGraph, ch: &Channel, out: &mut Vec<Finding>) {
    let names: BTreeSet<&str> = ch.entries.iter().map(|e| e.name.as_str()).collect();
    let loc_of = |name: &str| -> Option<Location> {
        ch.entry(name)
            .and_then(|e| e.location.clone())
            .or_else(|| g.bundles.get(name).and_then(|b| b.location.clone()))
    };
    match ch.head() {
        Ok(_) => {}
        Err(HeadError::Multiple(heads)) => {
            let mut f = Finding::error(
                "graph-multiple-heads",
                format!(
                    "channel {} has {} heads: {}",
                    ch.name,
                    heads.len(),
                    heads.join(", ")
                ),
            )
            .hint("every entry but the newest must be replaced or skipped by another entry of the channel");
            if let Some(l) = loc_of(&heads[0]) {
                f = f.at(l);
            }
            for h in &heads[1..] {
                if let Some(l) = loc_of(h) {
                    f = f.related(l);
                }
            }
            out.push(f);
        }
        Err(HeadError::NoHead) if !ch.entries.is_empty() => {
            out.push(at(
                Finding::error(
                    "graph-no-head",
                    format!("channel {}: every entry is replaced or skipped by another, so the channel has no head", ch.name),
                ),
                &ch.entries[0].location,
            ));
        }
        Err(HeadError::NoHead) => {}
    }

    // Cycles over replaces and skips.
    let mut adj: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for e in &ch.entries {
        let targets = adj.entry(e.name.as_str()).or_default();
        if !e.replaces.is_empty() && names.contains(e.replaces.as_str()) {
            targets.push(e.replaces.as_str());
        }
        for s in &e.skips {
            if names.contains(s.as_str()) {
                targets.push(s.as_str());
            }
        }
    }
    for cycle in cycles(&adj) {
        let mut f = Finding::error(
            "graph-cycle",
            format!(
                "channel {}: replaces/skips form a cycle: {} -> {}",
                ch.name,
                cycle.join(" -> "),
                cycle[0]
            ),
        );
        if let Some(l) = loc_of(cycle[0]) {
            f = f.at(l);
        }
        for n in &cycle[1..] {
            if let Some(l) = loc_of(n) {
                f = f.related(l);
            }
        }
        out.push(f);
    }

    // Missing targets.
    for e in &ch.entries {
        if !e.replaces.is_empty() && !names.contains(e.replaces.as_str()) {
            let in_pkg = g.bundles.contains_key(&e.replaces);
            // opm's replaces mode refuses a replacement that is not in the
            // index at all; in a catalog it is a dangling edge.
            let level = if g.mode == Some(Mode::Replaces) && !in_pkg {
                Level::Error
            } else {
                Level::Warning
            };
            let msg = if in_pkg {
                format!(
                    "{} replaces {}, which is in the package but not in channel {}",
                    e.name, e.replaces, ch.name
                )
            } else {
                format!(
                    "{} replaces {}, which is not in the package (channel {})",
                    e.name, e.replaces, ch.name
                )
            };
            out.push(at(
                Finding::new(level, "graph-replaces-missing", msg),
                &e.replaces_location.clone().or(e.location.clone()),
            ));
        }
        for (i, s) in e.skips.iter().enumerate() {
            if !names.contains(s.as_str()) {
                let loc = e.skips_locations.get(i).cloned().or(e.location.clone());
                out.push(at(
                    Finding::warning(
                        "graph-skips-missing",
                        format!(
                            "{} skips {}, which is not in channel {}",
                            e.name, s, ch.name
                        ),
                    ),
                    &loc,
                ));
            }
        }
    }

    // Edges and versions.
    let edges = g.edges(ch);
    for Edge { from, to, kind } in &edges {
        let (Some(vf), Some(vt)) = (g.version(from), g.version(to)) else {
            continue;
        };
        if range::compare(vf, vt) == std::cmp::Ordering::Greater {
            let e = ch.entry(to);
            let loc = e.and_then(|e| match kind {
                EdgeKind::Replaces => e.replaces_location.clone(),
                EdgeKind::Skips => e
                    .skips
                    .iter()
                    .position(|s| s == from)
                    .and_then(|i| e.skips_locations.get(i).cloned()),
                EdgeKind::SkipRange => e.skip_range_location.clone(),
            });
            let mut f = at(
                Finding::warning(
                    "graph-downgrade-edge",
                    format!(
                        "channel {}: {to} ({vt}) {} {from} ({vf}), so OLM would move from a newer to an older version",
                        ch.name,
                        match kind {
                            EdgeKind::Replaces => "replaces",
                            EdgeKind::Skips => "skips",
                            EdgeKind::SkipRange => "has a skipRange admitting",
                        }
                    ),
                ),
                &loc.or_else(|| loc_of(to)),
            );
            if let Some(l) = loc_of(from) {
                f = f.related(l);
            }
            out.push(f);
        }
    }

    // skipRange.
    for e in &ch.entries {
        if e.skip_range.is_empty() {
            continue;
        }
        let loc = e.skip_range_location.clone().or(e.location.clone());
        match Range::parse(&e.skip_range) {
            Err(msg) => out.push(at(
                Finding::error(
                    "graph-skiprange-invalid",
                    format!(
                        "{}: olm.skipRange `{}` is not a valid range: {msg}",
                        e.name, e.skip_range
                    ),
                ),
                &loc,
            )),
            Ok(r) => {
                if !satisfiable(&r) {
                    out.push(at(
                        Finding::warning(
                            "graph-skiprange-unsatisfiable",
                            format!(
                                "{}: olm.skipRange `{}` admits no version at all",
                                e.name, e.skip_range
                            ),
                        ),
                        &loc,
                    ));
                }
                if let Some(v) = g.version(&e.name) {
                    if r.admits(v) {
                        out.push(at(
                            Finding::warning(
                                "graph-skiprange-admits-self",
                                format!(
                                    "{}: olm.skipRange `{}` admits the bundle's own version {v}",
                                    e.name, e.skip_range
                                ),
                            )
                            .hint(format!(
                                "use an upper bound below the bundle's version, e.g. `<{v}`"
                            )),
                            &loc,
                        ));
                    }
                }
            }
        }
    }

    // Stranded: not reachable backwards from the head. A channel with
    // several heads (already reported) is walked from each of them, so
    // bundles no head leads from are still found; a channel with no head at
    // all (a cycle through every entry) has nothing to walk from.
    let heads: Vec<&str> = ch.heads().iter().map(|h| h.name.as_str()).collect();
    let reached: Option<BTreeSet<String>> = if g.mode == Some(Mode::Replaces) {
        if g.mode_error.is_some() {
            // The graph is the CSVs' own: walk it as opm would.
            opm_replaces_walk(g, ch)
        } else {
            // The graph is opm's walk already; what it left out is in
            // `pruned`.
            for (c, name) in &g.pruned {
                if c != &ch.name {
                    continue;
                }
                out.push(at(
                    Finding::warning(
                        "graph-stranded-bundle",
                        format!(
                            "opm's replaces mode starts channel {} at the highest version and follows replaces and skips; {name} is not on that path, so opm prunes it",
                            ch.name
                        ),
                    ),
                    &g.bundles.get(name).and_then(|b| b.location.clone()),
                ));
            }
            None
        }
    } else if heads.is_empty() {
        None
    } else {
        let mut into: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for ed in &edges {
            into.entry(ed.to.as_str())
                .or_default()
                .push(ed.from.as_str());
        }
        let mut seen = BTreeSet::new();
        let mut stack = heads.clone();
        while let Some(n) = stack.pop() {
            if seen.insert(n.to_string()) {
                stack.extend(into.get(n).into_iter().flatten().copied());
            }
        }
        Some(seen)
    };
    if let Some(reached) = reached {
        let head_name = if g.mode == Some(Mode::Replaces) {
            "the highest version".to_string()
        } else if heads.len() == 1 {
            format!("the head {}", heads[0])
        } else {
            format!("any of its heads ({})", heads.join(", "))
        };
        for e in &ch.entries {
            if !reached.contains(&e.name) {
                let (level, why) = if g.mode == Some(Mode::Replaces) {
                    // A warning: opm accepts the index, it only leaves the
                    // bundle out (OLM may still upgrade from it by skipRange).
                    (
                        Level::Warning,
                        format!(
                            "opm's replaces mode starts channel {} at {head_name} and follows replaces and skips; {} is not on that path, so opm prunes it",
                            ch.name, e.name
                        ),
                    )
                } else {
                    (
                        Level::Warning,
                        format!(
                            "channel {}: no upgrade path leads from {} to {head_name}; nothing replaces, skips or skipRange-admits it",
                            ch.name, e.name
                        ),
                    )
                };
                out.push(at(
                    Finding::new(level, "graph-stranded-bundle", why),
                    &e.location,
                ));
            }
        }
    }
}

/// Cycles through `olm.substitutesFor`: a bundle substituting for another
/// takes its place, so following substitutions must end.
fn check_substitutes_cycles(g: &PackageGraph, out: &mut Vec<Finding>) {
    let mut adj: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for ch in &g.channels {
        for e in &ch.entries {
            let t = adj.entry(e.name.as_str()).or_default();
            if !e.replaces.is_empty() {
                t.push(e.replaces.as_str());
            }
            t.extend(e.skips.iter().map(String::as_str));
        }
    }
    let mut any = false;
    for b in g.bundles.values() {
        if !b.substitutes_for.is_empty() {
            any = true;
            adj.entry(b.name.as_str())
                .or_default()
                .push(b.substitutes_for.as_str());
            // The substituted bundle's upgrades lead to its substitute.
            adj.entry(b.substitutes_for.as_str()).or_default();
        }
    }
    if !any {
        return;
    }
    for cycle in cycles(&adj) {
        let through_sub = cycle.iter().any(|n| {
            g.bundles
                .get(*n)
                .is_some_and(|b| !b.substitutes_for.is_empty())
        });
        if !through_sub {
            continue; // already reported per channel
        }
        let mut f = Finding::error(
            "graph-cycle",
            format!(
                "olm.substitutesFor with replaces/skips forms a cycle: {} -> {}",
                cycle.join(" -> "),
                cycle[0]
            ),
        );
        if let Some(l) = g.bundles.get(cycle[0]).and_then(|b| b.location.clone()) {
            f = f.at(l);
        }
        for n in &cycle[1..] {
            if let Some(l) = g.bundles.get(*n).and_then(|b| b.location.clone()) {
                f = f.related(l);
            }
        }
        out.push(f);
    }
}

/// One cycle per strongly connected component with a cycle (Tarjan), each
/// starting at its smallest name.
fn cycles<'a>(adj: &BTreeMap<&'a str, Vec<&'a str>>) -> Vec<Vec<&'a str>> {
    struct T<'a, 'b> {
        adj: &'b BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        on: BTreeSet<&'a str>,
        stack: Vec<&'a str>,
        next: usize,
        sccs: Vec<Vec<&'a str>>,
    }
    impl<'a> T<'a, '_> {
        fn visit(&mut self, v: &'a str) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            self.on.insert(v);
            let succ: Vec<&'a str> = self.adj.get(v).cloned().unwrap_or_default();
            for w in succ {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low[v];
                    self.low.insert(v, lv.min(lw));
                } else if self.on.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low[v];
                    self.low.insert(v, lv.min(iw));
                }
            }
            if self.low[v] == self.index[v] {
                let mut scc = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    scc.push(w);
                    if w == v {
                        break;
                    }
                }
                self.sccs.push(scc);
            }
        }
    }
    let mut t = T {
        adj,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        on: BTreeSet::new(),
        stack: Vec::new(),
        next: 0,
        sccs: Vec::new(),
    };
    let nodes: Vec<&str> = adj.keys().copied().collect();
    for n in nodes {
        if !t.index.contains_key(n) {
            t.visit(n);
        }
    }
    let mut out = Vec::new();
    for scc in t.sccs {
        let self_loop = scc.len() == 1 && adj.get(scc[0]).is_some_and(|s| s.contains(&scc[0]));
        if scc.len() < 2 && !self_loop {
            continue;
        }
        // Walk the cycle inside the component from its smallest node.
        let members: BTreeSet<&str> = scc.iter().copied().collect();
        let start = *members.iter().next().unwrap_or(&scc[0]);
        let mut path = vec![start];
        let mut cur = start;
        loop {
            let next = adj
                .get(cur)
                .and_then(|s| {
                    s.iter()
                        .find(|w| members.contains(**w) && (**w == start || !path.contains(w)))
                })
                .copied();
            match next {
                Some(n) if n == start => break,
                Some(n) => {
                    path.push(n);
                    cur = n;
                }
                None => break,
            }
        }
        out.push(path);
    }
    out
}

/// Whether a range admits any version: probes each bound and its
/// neighbours (the pre-release just below, the next patch, minor, major).
fn satisfiable(r: &Range) -> bool {
    use semver::{Prerelease, Version};
    let mut probes = vec![Version::new(0, 0, 0)];
    let text = r.as_str();
    for word in text.split(|c: char| c.is_whitespace() || c == '|') {
        let v = word.trim_start_matches(['<', '>', '=', '!']);
        if let Ok(v) = Version::parse(v) {
            let mut below = v.clone();
            if below.pre.is_empty() {
                below.pre = Prerelease::new("0").unwrap_or(Prerelease::EMPTY);
            }
            probes.push(below);
            probes.push(Version::new(v.major, v.minor, v.patch + 1));
            probes.push(Version::new(v.major, v.minor + 1, 0));
            probes.push(Version::new(v.major + 1, 0, 0));
            probes.push(v);
        }
    }
    probes.iter().any(|v| r.admits(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsatisfiable_ranges() {
        assert!(!satisfiable(&Range::parse(">=2.0.0 <1.0.0").expect("p")));
        assert!(satisfiable(&Range::parse(">1.0.0 <1.0.1").expect("p")));
        assert!(satisfiable(&Range::parse("<0.0.1").expect("p")));
        assert!(!satisfiable(&Range::parse("<0.0.0-0").expect("p")));
    }

    #[test]
    fn finds_cycles() {
        let mut adj = BTreeMap::new();
        adj.insert("a", vec!["b"]);
        adj.insert("b", vec!["c"]);
        adj.insert("c", vec!["a"]);
        adj.insert("d", vec!["d"]);
        adj.insert("e", vec!["a"]);
        let c = cycles(&adj);
        assert!(c.contains(&vec!["a", "b", "c"]), "{c:?}");
        assert!(c.contains(&vec!["d"]), "{c:?}");
        assert_eq!(c.len(), 2);
    }
}
