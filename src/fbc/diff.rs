//! What changed between two catalogs (`catalog diff`): packages, channels
//! and bundles added and removed, channel entries whose edges changed,
//! channel heads, default channels, deprecations, bundle images, icons and
//! descriptions; rendered for a terminal, a pull request (Markdown) or a
//! machine (JSON, the serialization of [`CatalogDiff`]).
//!
//! Objects of other schemas are not compared. Lists are sorted by name.
//! The order of a bundle's properties, related images and skips is not a
//! change.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;

use super::{Bundle, Channel, ChannelEntry, DeclarativeConfig, Package};

/// A value before and after.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Change<T> {
    /// Before.
    pub old: T,
    /// After.
    pub new: T,
}

/// The differences between two catalogs; empty when they are the same.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogDiff {
    /// Packages only in the new catalog.
    pub added_packages: Vec<PackageSummary>,
    /// Packages only in the old catalog.
    pub removed_packages: Vec<PackageSummary>,
    /// Packages in both that differ.
    pub changed_packages: Vec<PackageDiff>,
}

/// A package added or removed as a whole.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageSummary {
    /// Package name.
    pub name: String,
    /// Its default channel.
    pub default_channel: String,
    /// Its channels.
    pub channels: Vec<String>,
    /// How many bundles it has.
    pub bundles: usize,
}

/// How one package differs.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageDiff {
    /// Package name.
    pub name: String,
    /// The default channel, when it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_channel: Option<Change<String>>,
    /// Whether the icon changed.
    pub icon_changed: bool,
    /// Whether the description changed.
    pub description_changed: bool,
    /// Channels only in the new catalog.
    pub added_channels: Vec<ChannelSummary>,
    /// Channels only in the old catalog.
    pub removed_channels: Vec<ChannelSummary>,
    /// Channels in both that differ.
    pub changed_channels: Vec<ChannelDiff>,
    /// Bundles only in the new catalog.
    pub added_bundles: Vec<String>,
    /// Bundles only in the old catalog.
    pub removed_bundles: Vec<String>,
    /// Bundles in both that differ.
    pub changed_bundles: Vec<BundleDiff>,
    /// Deprecation entries only in the new catalog.
    pub added_deprecations: Vec<DeprecationSummary>,
    /// Deprecation entries only in the old catalog.
    pub removed_deprecations: Vec<DeprecationSummary>,
    /// Deprecation entries in both whose message changed.
    pub changed_deprecations: Vec<DeprecationChange>,
}

/// A channel added or removed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelSummary {
    /// Channel name.
    pub name: String,
    /// Its head (its heads, comma-separated, when it has several).
    pub head: String,
    /// Its entries, by name.
    pub entries: Vec<String>,
}

/// How one channel differs.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelDiff {
    /// Channel name.
    pub name: String,
    /// The head, when it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<Change<String>>,
    /// Entries only in the new channel.
    pub added_entries: Vec<ChannelEntry>,
    /// Entries only in the old channel, by name.
    pub removed_entries: Vec<String>,
    /// Entries in both whose edges changed.
    pub changed_entries: Vec<EntryChange>,
    /// Every entry of the old channel (for the diagrams of
    /// [`render_markdown`]; not serialized).
    #[serde(skip)]
    pub old_entries: Vec<ChannelEntry>,
    /// Every entry of the new channel (not serialized).
    #[serde(skip)]
    pub new_entries: Vec<ChannelEntry>,
}

/// A channel entry whose `replaces`, `skips` or `skipRange` changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EntryChange {
    /// Bundle name.
    pub name: String,
    /// Before.
    pub old: ChannelEntry,
    /// After.
    pub new: ChannelEntry,
}

/// How one bundle differs.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleDiff {
    /// Bundle name.
    pub name: String,
    /// The image, when it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<Change<String>>,
    /// Whether its properties changed.
    pub properties_changed: bool,
    /// Whether its related images changed.
    pub related_images_changed: bool,
}

/// A deprecation entry.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DeprecationSummary {
    /// `olm.package`, `olm.channel` or `olm.bundle`.
    pub schema: String,
    /// The channel or bundle; empty for the package.
    pub name: String,
    /// Its message.
    pub message: String,
}

/// A deprecation entry whose message changed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DeprecationChange {
    /// `olm.package`, `olm.channel` or `olm.bundle`.
    pub schema: String,
    /// The channel or bundle; empty for the package.
    pub name: String,
    /// The message before and after.
    pub message: Change<String>,
}

impl CatalogDiff {
    /// Whether the catalogs are the same (as far as this compares them).
    pub fn is_empty(&self) -> bool {
        self.added_packages.is_empty()
            && self.removed_packages.is_empty()
            && self.changed_packages.is_empty()
    }
}

impl PackageDiff {
    fn is_empty(&self) -> bool {
        self.default_channel.is_none()
            && !self.icon_changed
            && !self.description_changed
            && self.added_channels.is_empty()
            && self.removed_channels.is_empty()
            && self.changed_channels.is_empty()
            && self.added_bundles.is_empty()
            && self.removed_bundles.is_empty()
            && self.changed_bundles.is_empty()
            && self.added_deprecations.is_empty()
            && self.removed_deprecations.is_empty()
            && self.changed_deprecations.is_empty()
    }
}

/// One package's objects.
#[derive(Default)]
struct Parts<'a> {
    package: Option<&'a Package>,
    channels: BTreeMap<&'a str, &'a Channel>,
    bundles: BTreeMap<&'a str, &'a Bundle>,
    deprecations: BTreeMap<(&'a str, &'a str), &'a str>,
}

fn by_package(cfg: &DeclarativeConfig) -> BTreeMap<&str, Parts<'_>> {
    let mut out: BTreeMap<&str, Parts<'_>> = BTreeMap::new();
    for p in &cfg.packages {
        out.entry(&p.name).or_default().package = Some(p);
    }
    for c in &cfg.channels {
        out.entry(&c.package)
            .or_default()
            .channels
            .insert(&c.name, c);
    }
    for b in &cfg.bundles {
        out.entry(&b.package)
            .or_default()
            .bundles
            .insert(&b.name, b);
    }
    for d in &cfg.deprecations {
        let parts = out.entry(&d.package).or_default();
        for e in &d.entries {
            parts.deprecations.insert(
                (e.reference.schema.as_str(), e.reference.name.as_str()),
                e.message.as_str(),
            );
        }
    }
    out
}

fn head_of(c: &Channel) -> String {
    c.heads().join(", ")
}

fn channel_summary(c: &Channel) -> ChannelSummary {
    ChannelSummary {
        name: c.name.clone(),
        head: head_of(c),
        entries: c.entries.iter().map(|e| e.name.clone()).collect(),
    }
}

fn package_summary(name: &str, parts: &Parts<'_>) -> PackageSummary {
    PackageSummary {
        name: name.to_string(),
        default_channel: parts
            .package
            .map(|p| p.default_channel.clone())
            .unwrap_or_default(),
        channels: parts.channels.keys().map(|c| c.to_string()).collect(),
        bundles: parts.bundles.len(),
    }
}

/// Edges compared as sets: the order of `skips` means nothing.
fn same_edges(a: &ChannelEntry, b: &ChannelEntry) -> bool {
    let set = |e: &ChannelEntry| e.skips.iter().cloned().collect::<BTreeSet<String>>();
    a.replaces == b.replaces && a.skip_range == b.skip_range && set(a) == set(b)
}

/// Whether two lists hold the same items, in any order: the order of a
/// bundle's properties or related images means nothing to OLM, and opm's
/// own renders of one bundle order them differently.
fn same_items<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut used = vec![false; b.len()];
    a.iter().all(|x| {
        let hit = b.iter().enumerate().position(|(i, y)| !used[i] && x == y);
        if let Some(i) = hit {
            used[i] = true;
        }
        hit.is_some()
    })
}

fn diff_channel(old: &Channel, new: &Channel) -> ChannelDiff {
    let o: BTreeMap<&str, &ChannelEntry> =
        old.entries.iter().map(|e| (e.name.as_str(), e)).collect();
    let n: BTreeMap<&str, &ChannelEntry> =
        new.entries.iter().map(|e| (e.name.as_str(), e)).collect();
    let (oh, nh) = (head_of(old), head_of(new));
    ChannelDiff {
        name: new.name.clone(),
        head: (oh != nh).then_some(Change { old: oh, new: nh }),
        added_entries: n
            .iter()
            .filter(|(k, _)| !o.contains_key(*k))
            .map(|(_, e)| (*e).clone())
            .collect(),
        removed_entries: o
            .keys()
            .filter(|k| !n.contains_key(*k))
            .map(|k| k.to_string())
            .collect(),
        changed_entries: o
            .iter()
            .filter_map(|(k, a)| {
                let b = n.get(k)?;
                (!same_edges(a, b)).then(|| EntryChange {
                    name: k.to_string(),
                    old: (*a).clone(),
                    new: (*b).clone(),
                })
            })
            .collect(),
        old_entries: old.entries.clone(),
        new_entries: new.entries.clone(),
    }
}

fn diff_package(name: &str, old: &Parts<'_>, new: &Parts<'_>) -> PackageDiff {
    let mut d = PackageDiff {
        name: name.to_string(),
        ..Default::default()
    };
    if let (Some(op), Some(np)) = (old.package, new.package) {
        if op.default_channel != np.default_channel {
            d.default_channel = Some(Change {
                old: op.default_channel.clone(),
                new: np.default_channel.clone(),
            });
        }
        d.icon_changed = op.icon != np.icon;
        d.description_changed = op.description != np.description;
    }
    for (k, c) in &new.channels {
        match old.channels.get(k) {
            None => d.added_channels.push(channel_summary(c)),
            Some(oc) => {
                let cd = diff_channel(oc, c);
                if cd.head.is_some()
                    || !cd.added_entries.is_empty()
                    || !cd.removed_entries.is_empty()
                    || !cd.changed_entries.is_empty()
                {
                    d.changed_channels.push(cd);
                }
            }
        }
    }
    for (k, c) in &old.channels {
        if !new.channels.contains_key(k) {
            d.removed_channels.push(channel_summary(c));
        }
    }
    for (k, b) in &new.bundles {
        match old.bundles.get(k) {
            None => d.added_bundles.push(k.to_string()),
            Some(ob) => {
                let bd = BundleDiff {
                    name: k.to_string(),
                    image: (ob.image != b.image).then(|| Change {
                        old: ob.image.clone(),
                        new: b.image.clone(),
                    }),
                    properties_changed: !same_items(&ob.properties, &b.properties),
                    related_images_changed: !same_items(&ob.related_images, &b.related_images),
                };
                if bd.image.is_some() || bd.properties_changed || bd.related_images_changed {
                    d.changed_bundles.push(bd);
                }
            }
        }
    }
    d.removed_bundles = old
        .bundles
        .keys()
        .filter(|k| !new.bundles.contains_key(*k))
        .map(|k| k.to_string())
        .collect();
    let summary = |(schema, name): &(&str, &str), message: &str| DeprecationSummary {
        schema: schema.to_string(),
        name: name.to_string(),
        message: message.to_string(),
    };
    for (k, m) in &new.deprecations {
        match old.deprecations.get(k) {
            None => d.added_deprecations.push(summary(k, m)),
            Some(om) if om != m => d.changed_deprecations.push(DeprecationChange {
                schema: k.0.to_string(),
                name: k.1.to_string(),
                message: Change {
                    old: om.to_string(),
                    new: m.to_string(),
                },
            }),
            Some(_) => {}
        }
    }
    for (k, m) in &old.deprecations {
        if !new.deprecations.contains_key(k) {
            d.removed_deprecations.push(summary(k, m));
        }
    }
    d
}

/// Compares two catalogs.
pub fn diff(old: &DeclarativeConfig, new: &DeclarativeConfig) -> CatalogDiff {
    let o = by_package(old);
    let n = by_package(new);
    let mut out = CatalogDiff::default();
    for (k, parts) in &n {
        match o.get(k) {
            None => out.added_packages.push(package_summary(k, parts)),
            Some(op) => {
                let d = diff_package(k, op, parts);
                if !d.is_empty() {
                    out.changed_packages.push(d);
                }
            }
        }
    }
    for (k, parts) in &o {
        if !n.contains_key(k) {
            out.removed_packages.push(package_summary(k, parts));
        }
    }
    out
}

/// A channel entry's edges, as `replaces A, skips B C, skipRange R` (`no
/// edges` when it has none).
fn edges(e: &ChannelEntry) -> String {
    let mut parts = Vec::new();
    if !e.replaces.is_empty() {
        parts.push(format!("replaces {}", e.replaces));
    }
    if !e.skips.is_empty() {
        parts.push(format!("skips {}", e.skips.join(" ")));
    }
    if !e.skip_range.is_empty() {
        parts.push(format!("skipRange {}", e.skip_range));
    }
    if parts.is_empty() {
        "no edges".into()
    } else {
        parts.join(", ")
    }
}

fn deprecation_target(schema: &str, name: &str) -> String {
    if name.is_empty() {
        schema.to_string()
    } else {
        format!("{schema} {name}")
    }
}

fn none_if_empty(s: &str) -> &str {
    if s.is_empty() {
        "(none)"
    } else {
        s
    }
}

/// How many packages were added, removed and changed, in one line.
pub fn summary_line(d: &CatalogDiff) -> String {
    if d.is_empty() {
        return "no differences".into();
    }
    format!(
        "{} package(s) added, {} removed, {} changed",
        d.added_packages.len(),
        d.removed_packages.len(),
        d.changed_packages.len()
    )
}

/// The differences for a terminal: one line per change, grouped by package
/// and channel.
pub fn render_text(d: &CatalogDiff) -> String {
    let mut s = String::new();
    for p in &d.added_packages {
        let _ = writeln!(
            s,
            "package added: {} (default channel {}; channels {}; {} bundle(s))",
            p.name,
            p.default_channel,
            none_if_empty(&p.channels.join(", ")),
            p.bundles
        );
    }
    for p in &d.removed_packages {
        let _ = writeln!(
            s,
            "package removed: {} (default channel {}; channels {}; {} bundle(s))",
            p.name,
            p.default_channel,
            none_if_empty(&p.channels.join(", ")),
            p.bundles
        );
    }
    for p in &d.changed_packages {
        let _ = writeln!(s, "package changed: {}", p.name);
        if let Some(c) = &p.default_channel {
            let _ = writeln!(s, "  default channel: {} -> {}", c.old, c.new);
        }
        if p.icon_changed {
            let _ = writeln!(s, "  icon changed");
        }
        if p.description_changed {
            let _ = writeln!(s, "  description changed");
        }
        for c in &p.added_channels {
            let _ = writeln!(
                s,
                "  channel added: {} (head {}; {} entr{})",
                c.name,
                c.head,
                c.entries.len(),
                if c.entries.len() == 1 { "y" } else { "ies" }
            );
        }
        for c in &p.removed_channels {
            let _ = writeln!(s, "  channel removed: {} (head {})", c.name, c.head);
        }
        for c in &p.changed_channels {
            let _ = writeln!(s, "  channel changed: {}", c.name);
            if let Some(h) = &c.head {
                let _ = writeln!(s, "    head: {} -> {}", h.old, h.new);
            }
            for e in &c.added_entries {
                let _ = writeln!(s, "    entry added: {} ({})", e.name, edges(e));
            }
            for e in &c.removed_entries {
                let _ = writeln!(s, "    entry removed: {e}");
            }
            for e in &c.changed_entries {
                let _ = writeln!(
                    s,
                    "    entry changed: {}: {} -> {}",
                    e.name,
                    edges(&e.old),
                    edges(&e.new)
                );
            }
        }
        for b in &p.added_bundles {
            let _ = writeln!(s, "  bundle added: {b}");
        }
        for b in &p.removed_bundles {
            let _ = writeln!(s, "  bundle removed: {b}");
        }
        for b in &p.changed_bundles {
            let mut what = Vec::new();
            if let Some(i) = &b.image {
                what.push(format!("image {} -> {}", i.old, i.new));
            }
            if b.properties_changed {
                what.push("properties".into());
            }
            if b.related_images_changed {
                what.push("related images".into());
            }
            let _ = writeln!(s, "  bundle changed: {}: {}", b.name, what.join("; "));
        }
        for x in &p.added_deprecations {
            let _ = writeln!(
                s,
                "  deprecation added: {}: {}",
                deprecation_target(&x.schema, &x.name),
                x.message
            );
        }
        for x in &p.removed_deprecations {
            let _ = writeln!(
                s,
                "  deprecation removed: {}",
                deprecation_target(&x.schema, &x.name)
            );
        }
        for x in &p.changed_deprecations {
            let _ = writeln!(
                s,
                "  deprecation changed: {}: {}",
                deprecation_target(&x.schema, &x.name),
                x.message.new
            );
        }
    }
    let _ = writeln!(s, "{}", summary_line(d));
    s
}

/// Markdown inline code, safe whatever the text holds.
fn code(t: &str) -> String {
    if t.contains('`') {
        format!("`` {t} ``")
    } else {
        format!("`{t}`")
    }
}

fn code_list<S: AsRef<str>>(items: &[S]) -> String {
    items
        .iter()
        .map(|i| code(i.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Text for a Mermaid label in double quotes: Mermaid's entity codes for
/// what would end the label or be read as HTML.
fn mermaid_text(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    for c in t.chars() {
        match c {
            '#' => out.push_str("#35;"),
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '&' => out.push_str("#amp;"),
            c => out.push(c),
        }
    }
    out
}

/// A Mermaid flowchart of one changed channel, in a fenced block that
/// GitHub and GitLab draw in a pull request comment: every bundle of the
/// old and new channel, left to right from the oldest; bundles and edges
/// added in green (added edges thick), removed ones in red, struck through
/// and dotted; `replaces` solid, `skips` dotted, the `skipRange` written
/// in the bundle's box (an old range struck through when it changed).
pub fn channel_mermaid(c: &ChannelDiff) -> String {
    #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum Kind {
        Replaces,
        Skips,
    }
    fn edge_set(entries: &[ChannelEntry]) -> BTreeSet<(String, String, Kind)> {
        let mut out = BTreeSet::new();
        for e in entries {
            if !e.replaces.is_empty() {
                out.insert((e.replaces.clone(), e.name.clone(), Kind::Replaces));
            }
            for sk in &e.skips {
                out.insert((sk.clone(), e.name.clone(), Kind::Skips));
            }
        }
        out
    }
    let old_names: BTreeSet<&str> = c.old_entries.iter().map(|e| e.name.as_str()).collect();
    let new_names: BTreeSet<&str> = c.new_entries.iter().map(|e| e.name.as_str()).collect();
    let (old_edges, new_edges) = (edge_set(&c.old_entries), edge_set(&c.new_entries));
    // Node order: the new channel's entries in channel order, then removed
    // entries, then bundles edges name that neither channel lists.
    let mut order: Vec<&str> = Vec::new();
    let mut seen = BTreeSet::new();
    let named = c
        .new_entries
        .iter()
        .chain(&c.old_entries)
        .map(|e| e.name.as_str());
    let referenced = old_edges
        .iter()
        .chain(&new_edges)
        .flat_map(|(f, t, _)| [f.as_str(), t.as_str()]);
    for n in named.chain(referenced) {
        if seen.insert(n) {
            order.push(n);
        }
    }
    let id: BTreeMap<&str, usize> = order.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let range = |entries: &[ChannelEntry], n: &str| {
        entries
            .iter()
            .find(|e| e.name == n)
            .map(|e| e.skip_range.clone())
            .unwrap_or_default()
    };
    let mut s = String::from(
        "```mermaid\ngraph LR\n  classDef added fill:#dafbe1,stroke:#1a7f37,stroke-width:2px\n  \
classDef removed fill:#ffebe9,stroke:#cf222e,stroke-dasharray:4 3,color:#6e7781\n  \
classDef other fill:#f6f8fa,stroke:#8c959f,stroke-dasharray:2 2,color:#6e7781\n",
    );
    for n in &order {
        let (in_old, in_new) = (old_names.contains(n), new_names.contains(n));
        let mut label = if in_new || !in_old {
            mermaid_text(n)
        } else {
            format!("<del>{}</del>", mermaid_text(n))
        };
        let (ro, rn) = (range(&c.old_entries, n), range(&c.new_entries, n));
        if ro != rn && !ro.is_empty() && in_new {
            let _ = write!(label, "<br/><del>skipRange {}</del>", mermaid_text(&ro));
        }
        let shown = if in_new { &rn } else { &ro };
        if !shown.is_empty() {
            let _ = write!(label, "<br/>skipRange {}", mermaid_text(shown));
        }
        let class = match (in_old, in_new) {
            (false, true) => ":::added",
            (true, false) => ":::removed",
            (false, false) => ":::other",
            (true, true) => "",
        };
        let _ = writeln!(s, "  n{}[\"{label}\"]{class}", id[n]);
    }
    let mut added_links = Vec::new();
    let mut removed_links = Vec::new();
    let all: BTreeSet<&(String, String, Kind)> = old_edges.iter().chain(&new_edges).collect();
    for (link, e) in all.into_iter().enumerate() {
        let (f, t) = (id[e.0.as_str()], id[e.1.as_str()]);
        let what = match e.2 {
            Kind::Replaces => "replaces",
            Kind::Skips => "skips",
        };
        let line = match (old_edges.contains(e), new_edges.contains(e), e.2) {
            (true, true, Kind::Replaces) => format!("n{f} -- {what} --> n{t}"),
            (true, true, Kind::Skips) => format!("n{f} -. {what} .-> n{t}"),
            (false, _, _) => {
                added_links.push(link.to_string());
                format!("n{f} == \"{what} (added)\" ==> n{t}")
            }
            (true, false, _) => {
                removed_links.push(link.to_string());
                format!("n{f} -. \"<del>{what}</del>\" .-> n{t}")
            }
        };
        let _ = writeln!(s, "  {line}");
    }
    if !added_links.is_empty() {
        let _ = writeln!(
            s,
            "  linkStyle {} stroke:#1a7f37,stroke-width:3px",
            added_links.join(",")
        );
    }
    if !removed_links.is_empty() {
        let _ = writeln!(
            s,
            "  linkStyle {} stroke:#cf222e,stroke-width:2px,stroke-dasharray:4 3",
            removed_links.join(",")
        );
    }
    s.push_str("```\n");
    s
}

/// The differences as Markdown, for a pull request comment or release note:
/// each changed channel as a list of what changed and a Mermaid diagram
/// ([`channel_mermaid`]).
pub fn render_markdown(d: &CatalogDiff) -> String {
    let mut s = String::from("## Catalog changes\n\n");
    if d.is_empty() {
        s.push_str("No differences.\n");
        return s;
    }
    let _ = writeln!(s, "{}.\n", summary_line(d));
    if !d.added_packages.is_empty() {
        s.push_str("### Packages added\n\n| package | default channel | channels | bundles |\n|---|---|---|---|\n");
        for p in &d.added_packages {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                code(&p.name),
                code(&p.default_channel),
                code_list(&p.channels),
                p.bundles
            );
        }
        s.push('\n');
    }
    if !d.removed_packages.is_empty() {
        s.push_str("### Packages removed\n\n| package | default channel | channels | bundles |\n|---|---|---|---|\n");
        for p in &d.removed_packages {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                code(&p.name),
                code(&p.default_channel),
                code_list(&p.channels),
                p.bundles
            );
        }
        s.push('\n');
    }
    for p in &d.changed_packages {
        let _ = writeln!(s, "### {}\n", code(&p.name));
        if let Some(c) = &p.default_channel {
            let _ = writeln!(s, "- Default channel: {} → {}", code(&c.old), code(&c.new));
        }
        if p.icon_changed {
            s.push_str("- Icon changed\n");
        }
        if p.description_changed {
            s.push_str("- Description changed\n");
        }
        for c in &p.added_channels {
            let _ = writeln!(
                s,
                "- Channel added: {} (head {}, {} entries)",
                code(&c.name),
                code(&c.head),
                c.entries.len()
            );
        }
        for c in &p.removed_channels {
            let _ = writeln!(s, "- Channel removed: {}", code(&c.name));
        }
        for c in &p.changed_channels {
            let _ = writeln!(s, "- Channel {}:", code(&c.name));
            if let Some(h) = &c.head {
                let _ = writeln!(s, "  - head {} → {}", code(&h.old), code(&h.new));
            }
            for e in &c.added_entries {
                let _ = writeln!(s, "  - added {} ({})", code(&e.name), edges(e));
            }
            for e in &c.removed_entries {
                let _ = writeln!(s, "  - removed {}", code(e));
            }
            for e in &c.changed_entries {
                let _ = writeln!(
                    s,
                    "  - changed {}: {} → {}",
                    code(&e.name),
                    edges(&e.old),
                    edges(&e.new)
                );
            }
            s.push('\n');
            s.push_str(&channel_mermaid(c));
            s.push('\n');
        }
        if !p.added_bundles.is_empty() {
            let _ = writeln!(s, "- Bundles added: {}", code_list(&p.added_bundles));
        }
        if !p.removed_bundles.is_empty() {
            let _ = writeln!(s, "- Bundles removed: {}", code_list(&p.removed_bundles));
        }
        for b in &p.changed_bundles {
            let mut what = Vec::new();
            if let Some(i) = &b.image {
                what.push(format!("image {} → {}", code(&i.old), code(&i.new)));
            }
            if b.properties_changed {
                what.push("properties".into());
            }
            if b.related_images_changed {
                what.push("related images".into());
            }
            let _ = writeln!(s, "- Bundle {} changed: {}", code(&b.name), what.join("; "));
        }
        for x in &p.added_deprecations {
            let _ = writeln!(
                s,
                "- Deprecated: {}: {}",
                code(&deprecation_target(&x.schema, &x.name)),
                x.message
            );
        }
        for x in &p.removed_deprecations {
            let _ = writeln!(
                s,
                "- No longer deprecated: {}",
                code(&deprecation_target(&x.schema, &x.name))
            );
        }
        for x in &p.changed_deprecations {
            let _ = writeln!(
                s,
                "- Deprecation message of {} changed: {}",
                code(&deprecation_target(&x.schema, &x.name)),
                x.message.new
            );
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(objs: &[serde_json::Value]) -> DeclarativeConfig {
        let mut c = DeclarativeConfig::default();
        for o in objs {
            c.push_object(o.clone()).expect("object");
        }
        c
    }

    #[test]
    fn changes_are_found_and_rendered() {
        use serde_json::json;
        let bundle =
            |n: &str, img: &str| json!({"schema":"olm.bundle","name":n,"package":"p","image":img});
        let old = cfg(&[
            json!({"schema":"olm.package","name":"p","defaultChannel":"a"}),
            json!({"schema":"olm.package","name":"gone","defaultChannel":"x"}),
            json!({"schema":"olm.channel","name":"a","package":"p","entries":[
                {"name":"p.v1"},{"name":"p.v2","replaces":"p.v1","skips":["p.v0","p.v00"]}]}),
            json!({"schema":"olm.channel","name":"old","package":"p","entries":[{"name":"p.v1"}]}),
            bundle("p.v1", "i:1"),
            bundle("p.v2", "i:2"),
        ]);
        let new = cfg(&[
            json!({"schema":"olm.package","name":"p","defaultChannel":"b"}),
            json!({"schema":"olm.channel","name":"a","package":"p","entries":[
                {"name":"p.v1"},{"name":"p.v2","replaces":"p.v1","skips":["p.v00","p.v0"]},
                {"name":"p.v3","replaces":"p.v2","skipRange":"<3.0.0"}]}),
            json!({"schema":"olm.channel","name":"b","package":"p","entries":[{"name":"p.v3"}]}),
            bundle("p.v1", "i:1"),
            bundle("p.v2", "i:2b"),
            bundle("p.v3", "i:3"),
            json!({"schema":"olm.deprecations","package":"p","entries":[
                {"reference":{"schema":"olm.channel","name":"a"},"message":"use b"}]}),
        ]);
        let d = diff(&old, &new);
        assert_eq!(
            render_text(&d),
            "package removed: gone (default channel x; channels (none); 0 bundle(s))
package changed: p
  default channel: a -> b
  channel added: b (head p.v3; 1 entry)
  channel removed: old (head p.v1)
  channel changed: a
    head: p.v2 -> p.v3
    entry added: p.v3 (replaces p.v2, skipRange <3.0.0)
  bundle added: p.v3
  bundle changed: p.v2: image i:2 -> i:2b
  deprecation added: olm.channel a: use b
0 package(s) added, 1 removed, 1 changed
"
        );
        let md = render_markdown(&d);
        assert!(md.contains("- Default channel: `a` → `b`\n"), "{md}");
        assert!(
            md.contains("  - added `p.v3` (replaces p.v2, skipRange <3.0.0)\n"),
            "{md}"
        );
        // Channel a as a diagram: p.v3 and its edge added; the skips of
        // p.v2, reordered, unchanged.
        let mermaid = channel_mermaid(&d.changed_packages[0].changed_channels[0]);
        assert_eq!(
            mermaid,
            "```mermaid
graph LR
  classDef added fill:#dafbe1,stroke:#1a7f37,stroke-width:2px
  classDef removed fill:#ffebe9,stroke:#cf222e,stroke-dasharray:4 3,color:#6e7781
  classDef other fill:#f6f8fa,stroke:#8c959f,stroke-dasharray:2 2,color:#6e7781
  n0[\"p.v1\"]
  n1[\"p.v2\"]
  n2[\"p.v3<br/>skipRange #lt;3.0.0\"]:::added
  n3[\"p.v0\"]:::other
  n4[\"p.v00\"]:::other
  n3 -. skips .-> n1
  n4 -. skips .-> n1
  n0 -- replaces --> n1
  n1 == \"replaces (added)\" ==> n2
  linkStyle 3 stroke:#1a7f37,stroke-width:3px
```
"
        );
        assert!(md.contains(&mermaid), "{md}");
        let mut removed = d.changed_packages[0].changed_channels[0].clone();
        std::mem::swap(&mut removed.old_entries, &mut removed.new_entries);
        let m = channel_mermaid(&removed);
        assert!(
            m.contains("  n2[\"<del>p.v3</del><br/>skipRange #lt;3.0.0\"]:::removed\n"),
            "{m}"
        );
        assert!(
            m.contains("  n1 -. \"<del>replaces</del>\" .-> n2\n  linkStyle 3 stroke:#cf222e"),
            "{m}"
        );
        assert!(diff(&new, &new).is_empty());
        assert_eq!(render_text(&diff(&old, &old)), "no differences\n");
        let v = serde_json::to_value(&d).expect("json");
        assert_eq!(
            v["changedPackages"][0]["defaultChannel"],
            json!({"old":"a","new":"b"})
        );
    }
}
