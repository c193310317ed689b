//! Drawing graphs: Mermaid (in the style of `opm alpha render-graph`),
//! Graphviz DOT, JSON, and pictures (SVG, HTML: [`super::svg`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use semver::Version;

use super::{EdgeKind, Error, PackageGraph};
use crate::gojson::go_quote;
use crate::semver_range::compare;

/// Output format of `graph render`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum DrawFormat {
    /// Mermaid flowchart, like `opm alpha render-graph`.
    Mermaid,
    /// Graphviz DOT.
    Dot,
    /// JSON: channels, heads, entries and edges.
    Json,
    /// An SVG picture, laid out in-process; unsafe CRD changes in red.
    Svg,
    /// The SVG picture in a self-contained HTML page.
    Html,
}

/// Renders graphs in `format`. Fails, as `opm alpha render-graph` does,
/// when drawing Mermaid and a bundle's version is not semver. Pictures
/// mark the unsafe CRD changes `graph check` finds on the edges of graphs
/// built from bundle directories (which reads their CRDs).
pub fn draw(graphs: &[PackageGraph], format: DrawFormat) -> Result<String, Error> {
    match format {
        DrawFormat::Mermaid => mermaid(graphs),
        DrawFormat::Dot => Ok(dot(graphs)),
        DrawFormat::Json => Ok(json(graphs)),
        DrawFormat::Svg => Ok(super::svg::svg(
            graphs,
            &super::svg::Marks::crd_checks(graphs),
        )),
        DrawFormat::Html => Ok(super::svg::html(
            graphs,
            &super::svg::Marks::crd_checks(graphs),
        )),
    }
}

/// Mermaid, exactly as `opm alpha render-graph` writes it
/// (operator-registry `alpha/declcfg/write.go`, `MermaidWriter.WriteChannels`
/// with its default options):
///
/// * a header `graph LR` and three `classDef` lines (`deprecated`,
///   `skipped`, `deprecatedskipped`);
/// * packages sorted by name, each a `subgraph` holding its channels sorted
///   by name; node ids are `<package>-<channel>-<bundle>`;
/// * in a channel, entries by decreasing version; after each entry's node,
///   its edges, drawn from the older bundle to the entry: one `skip` per
///   `skips` item, one `"skipRange(<range>)"` per channel entry (the entry
///   itself included) whose version the range admits, in channel order,
///   then its `replace`;
/// * `style` lines for a deprecated package and deprecated channels,
///   `class` lines for deprecated and skipped bundles, and a `linkStyle`
///   line for edges into a bundle that is skipped (opm's "v0 semantics":
///   a replaced or skipRange edge whose target is skipped by a newer entry,
///   or a second skip of the same bundle).
///
/// Like opm, a bundle whose version is not semver is an error; an entry
/// with no bundle counts as version 0.0.0. Where opm's unstable sort leaves
/// equal versions in an unspecified order, this keeps channel order.
pub fn mermaid(graphs: &[PackageGraph]) -> Result<String, Error> {
    mermaid_with(graphs, &MermaidOptions::default())
}

/// The options of opm's `MermaidWriter` (`opm alpha render-graph`'s flags).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MermaidOptions {
    /// `--minimum-edge`: only the channels of the package holding this
    /// entry, and in them only the edges from bundles of at least its
    /// version (the entry itself drawn without its own edges).
    pub min_edge: Option<String>,
    /// A package filter was applied (`-p`): channels left without entries
    /// are not drawn.
    pub package_filter: bool,
    /// Mark skipped bundles and the edges into them (opm's "v0
    /// semantics"); the writer's default, while `render-graph` turns it on
    /// only with `--draw-v0-semantics`.
    pub v0_semantics: bool,
}

impl Default for MermaidOptions {
    fn default() -> MermaidOptions {
        MermaidOptions {
            min_edge: None,
            package_filter: false,
            v0_semantics: true,
        }
    }
}

/// The entries of a channel as opm's `filterChannel` leaves them; `None`
/// when none is left (the channel is then not drawn).
fn filter_channel(
    g: &PackageGraph,
    ch: &super::Channel,
    opts: &MermaidOptions,
    floor: &Version,
    floor_package: &str,
) -> Option<Vec<super::Entry>> {
    if opts.min_edge.is_none() && !opts.package_filter {
        return Some(ch.entries.clone());
    }
    if !floor_package.is_empty() && g.package != floor_package {
        return None;
    }
    let Some(min_edge) = opts.min_edge.as_deref() else {
        return (!ch.entries.is_empty()).then(|| ch.entries.clone());
    };
    let zero = Version::new(0, 0, 0);
    let at_least = |name: &str| compare(g.version(name).unwrap_or(&zero), floor).is_ge();
    let mut out = Vec::new();
    for e in &ch.entries {
        let mut kept = e.clone();
        kept.replaces.clear();
        kept.skips.clear();
        kept.skip_range.clear();
        if e.name != min_edge {
            if !e.replaces.is_empty() && at_least(&e.replaces) {
                kept.replaces = e.replaces.clone();
            }
            kept.skips = e.skips.iter().filter(|s| at_least(s)).cloned().collect();
            if !e.skip_range.is_empty()
                && crate::semver_range::Range::parse(&e.skip_range).is_ok_and(|r| r.admits(floor))
            {
                kept.skip_range = e.skip_range.clone();
            }
            let has_edges =
                !kept.replaces.is_empty() || !kept.skips.is_empty() || !kept.skip_range.is_empty();
            let never_had = e.replaces.is_empty() && e.skips.is_empty() && e.skip_range.is_empty();
            let kept_anyway = never_had && at_least(&e.name);
            if !(has_edges || kept_anyway) {
                continue;
            }
        }
        out.push(kept);
    }
    (!out.is_empty()).then_some(out)
}

/// [`mermaid`] with opm's writer options.
pub fn mermaid_with(graphs: &[PackageGraph], opts: &MermaidOptions) -> Result<String, Error> {
    for g in graphs {
        for b in g.bundles.values() {
            if b.version.is_none() {
                return Err(Error::Draw(format!(
                    "bundle {} has invalid version {}",
                    go_quote(&b.name),
                    go_quote(&b.raw_version)
                )));
            }
        }
    }
    let zero = Version::new(0, 0, 0);
    let version = |g: &PackageGraph, name: &str| g.version(name).unwrap_or(&zero).clone();
    // The floor: the minimum edge's version (a bundle of any package, as
    // opm keys versions by bundle name alone).
    let floor = match opts.min_edge.as_deref() {
        None => zero.clone(),
        Some(m) => graphs
            .iter()
            .find_map(|g| g.bundles.get(m).and_then(|b| b.version.clone()))
            .ok_or_else(|| Error::Draw(format!("unknown minimum edge name: {}", go_quote(m))))?,
    };
    // opm keys deprecated channels and bundles by name alone, across
    // packages.
    let dep_channels: BTreeSet<&str> = graphs
        .iter()
        .flat_map(|g| g.deprecated.channels.iter().map(String::as_str))
        .collect();
    let dep_bundles: BTreeSet<&str> = graphs
        .iter()
        .flat_map(|g| g.deprecated.bundles.iter().map(String::as_str))
        .collect();
    // Channels of every package, by channel name, as opm iterates them.
    let mut channels: Vec<(&PackageGraph, &super::Channel)> = graphs
        .iter()
        .flat_map(|g| g.channels.iter().map(move |c| (g, c)))
        .collect();
    channels.sort_by(|a, b| a.1.name.cmp(&b.1.name));
    let floor_package = opts
        .min_edge
        .as_deref()
        .and_then(|m| {
            channels
                .iter()
                .find(|(_, c)| c.entries.iter().any(|e| e.name == m))
                .map(|(g, _)| g.package.as_str())
        })
        .unwrap_or("");
    let mut pkgs: BTreeMap<&str, String> = BTreeMap::new();
    let mut deprecated_package = "";
    let mut deprecated_channel_ids: Vec<String> = Vec::new();
    let mut decorated: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut link_id = 0usize;
    let mut skipped_links: Vec<String> = Vec::new();
    for (g, ch) in channels {
        // opm draws a channel even when it has no entries, unless a filter
        // is on.
        let Some(entries) = filter_channel(g, ch, opts, &floor, floor_package) else {
            continue;
        };
        let out = pkgs.entry(g.package.as_str()).or_default();
        let cid = format!("{}-{}", g.package, ch.name);
        let _ = writeln!(out, "    %% channel {}", go_quote(&ch.name));
        let _ = writeln!(out, "    subgraph {cid}[{}]", go_quote(&ch.name));
        if g.deprecated.package {
            deprecated_package = g.package.as_str();
        }
        if dep_channels.contains(ch.name.as_str()) {
            deprecated_channel_ids.push(cid.clone());
        }
        let mut sorted: Vec<&super::Entry> = entries.iter().collect();
        sorted.sort_by(|a, b| compare(&version(g, &b.name), &version(g, &a.name)));
        let mut skipped: BTreeSet<&str> = BTreeSet::new();
        for e in sorted {
            let node = |name: &str| format!("{cid}-{name}[{}]", go_quote(name));
            let _ = writeln!(out, "      {}", node(&e.name));
            let dep = dep_bundles.contains(e.name.as_str());
            let class = match (dep, skipped.contains(e.name.as_str())) {
                (true, true) => Some("deprecatedskipped"),
                (true, false) => Some("deprecated"),
                (false, true) => Some("skipped"),
                (false, false) => None,
            };
            if let Some(c) = class {
                decorated
                    .entry(c)
                    .or_default()
                    .push(format!("{cid}-{}", e.name));
            }
            for s in &e.skips {
                let _ = writeln!(out, "      {}-- skip --> {}", node(s), node(&e.name));
                if opts.v0_semantics && !skipped.insert(s.as_str()) {
                    skipped_links.push(link_id.to_string());
                }
                link_id += 1;
            }
            if !e.skip_range.is_empty() {
                match crate::semver_range::Range::parse(&e.skip_range) {
                    Ok(r) => {
                        for other in &entries {
                            if r.admits(&version(g, &other.name)) {
                                let _ = writeln!(
                                    out,
                                    "      {}-- \"skipRange({})\" --> {}",
                                    node(&other.name),
                                    e.skip_range,
                                    node(&e.name)
                                );
                                if skipped.contains(e.name.as_str()) {
                                    skipped_links.push(link_id.to_string());
                                }
                                link_id += 1;
                            }
                        }
                    }
                    Err(err) => eprintln!(
                        "warning: ignoring invalid SkipRange for package/edge {}/{}: {err}",
                        go_quote(&g.package),
                        go_quote(&e.name)
                    ),
                }
            }
            if !e.replaces.is_empty() {
                let _ = writeln!(
                    out,
                    "      {}-- replace --> {}",
                    node(&e.replaces),
                    node(&e.name)
                );
                if skipped.contains(e.name.as_str()) {
                    skipped_links.push(link_id.to_string());
                }
                link_id += 1;
            }
        }
        out.push_str("    end\n");
    }
    let mut out = String::from("graph LR\n");
    out.push_str("  classDef deprecated fill:#E8960F\n");
    out.push_str("  classDef skipped stroke:#FF0000,stroke-width:4px\n");
    out.push_str("  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px\n");
    for (name, body) in &pkgs {
        let _ = writeln!(out, "  %% package {}", go_quote(name));
        let _ = writeln!(out, "  subgraph {}", go_quote(name));
        out.push_str(body);
        out.push_str("  end\n");
    }
    if !deprecated_package.is_empty() {
        let _ = writeln!(out, "style {deprecated_package} fill:#989695");
    }
    for c in &deprecated_channel_ids {
        let _ = writeln!(out, "style {c} fill:#DCD0FF");
    }
    for (class, ids) in &mut decorated {
        ids.sort();
        let _ = writeln!(out, "class {} {class}", ids.join(","));
    }
    if !skipped_links.is_empty() {
        let _ = writeln!(
            out,
            "linkStyle {} stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;",
            skipped_links.join(",")
        );
    }
    Ok(out)
}

fn dot_id(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Graphviz DOT: a cluster per channel, the head drawn bold, the default
/// channel's label marked.
pub fn dot(graphs: &[PackageGraph]) -> String {
    let mut out = String::from("digraph upgrades {\n  rankdir=LR;\n  node [shape=box];\n");
    for g in graphs {
        for ch in &g.channels {
            let cid = format!("{}/{}", g.package, ch.name);
            let default = if ch.name == g.default_channel {
                " (default)"
            } else {
                ""
            };
            let _ = writeln!(out, "  subgraph {} {{", dot_id(&format!("cluster_{cid}")));
            let _ = writeln!(
                out,
                "    label={};",
                dot_id(&format!("{} / {}{default}", g.package, ch.name))
            );
            let head = ch.head().ok().map(|h| h.name.clone());
            for e in &ch.entries {
                let style = if head.as_deref() == Some(e.name.as_str()) {
                    ", style=bold"
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "    {} [label={}{style}];",
                    dot_id(&format!("{cid}/{}", e.name)),
                    dot_id(&e.name)
                );
            }
            for edge in g.edges(ch) {
                let (label, style) = match edge.kind {
                    EdgeKind::Replaces => ("replaces".to_string(), "solid"),
                    EdgeKind::Skips => ("skips".to_string(), "dashed"),
                    EdgeKind::SkipRange => (
                        format!(
                            "skipRange {}",
                            ch.entry(&edge.to)
                                .map(|e| e.skip_range.as_str())
                                .unwrap_or("")
                        ),
                        "dotted",
                    ),
                };
                let _ = writeln!(
                    out,
                    "    {} -> {} [label={}, style={style}];",
                    dot_id(&format!("{cid}/{}", edge.from)),
                    dot_id(&format!("{cid}/{}", edge.to)),
                    dot_id(&label)
                );
            }
            out.push_str("  }\n");
        }
    }
    out.push_str("}\n");
    out
}

/// JSON: per package, the default channel and each channel's head,
/// entries and edges (skipRange admissions included).
pub fn json(graphs: &[PackageGraph]) -> String {
    use serde_json::json;
    let packages: Vec<_> = graphs
        .iter()
        .map(|g| {
            let channels: Vec<_> = g
                .channels
                .iter()
                .map(|ch| {
                    json!({
                        "name": ch.name,
                        "head": ch.head().ok().map(|h| h.name.clone()),
                        "entries": ch.entries.iter().map(|e| e.to_fbc()).collect::<Vec<_>>(),
                        "edges": g.edges(ch),
                    })
                })
                .collect();
            json!({
                "package": g.package,
                "defaultChannel": g.default_channel,
                "mode": g.mode.map(|m| m.as_str()),
                "channels": channels,
            })
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&packages).unwrap_or_default();
    s.push('\n');
    s
}
