//! Drawing graphs: Mermaid (in the style of `opm alpha render-graph`),
//! Graphviz DOT, and JSON.

use std::fmt::Write as _;

use super::{EdgeKind, PackageGraph};

/// Output format of `graph render`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DrawFormat {
    /// Mermaid flowchart, like `opm alpha render-graph`.
    Mermaid,
    /// Graphviz DOT.
    Dot,
    /// JSON: channels, heads, entries and edges.
    Json,
}

/// Renders graphs in `format`.
pub fn draw(graphs: &[PackageGraph], format: DrawFormat) -> String {
    match format {
        DrawFormat::Mermaid => mermaid(graphs),
        DrawFormat::Dot => dot(graphs),
        DrawFormat::Json => json(graphs),
    }
}

/// Mermaid: a subgraph per package and channel, node ids
/// `<package>-<channel>-<bundle>`, edges from each entry to what it
/// replaces, skips, or admits by skipRange, labelled `replace`, `skip` and
/// `skipRange(...)`, as opm draws them.
pub fn mermaid(graphs: &[PackageGraph]) -> String {
    let mut out = String::from("graph LR\n");
    for g in graphs {
        let _ = writeln!(out, "  %% package \"{}\"", g.package);
        let _ = writeln!(out, "  subgraph \"{}\"", g.package);
        for ch in &g.channels {
            let cid = format!("{}-{}", g.package, ch.name);
            let _ = writeln!(out, "    %% channel \"{}\"", ch.name);
            let _ = writeln!(out, "    subgraph {cid}[\"{}\"]", ch.name);
            let node = |name: &str| format!("{cid}-{name}[\"{name}\"]");
            for e in &ch.entries {
                let _ = writeln!(out, "      {}", node(&e.name));
            }
            for e in &ch.entries {
                if !e.replaces.is_empty() {
                    let _ = writeln!(
                        out,
                        "      {}-- replace --> {}",
                        node(&e.name),
                        node(&e.replaces)
                    );
                }
                for s in &e.skips {
                    let _ = writeln!(out, "      {}-- skip --> {}", node(&e.name), node(s));
                }
            }
            for edge in g.edges(ch).iter().filter(|e| e.kind == EdgeKind::SkipRange) {
                let range = ch
                    .entry(&edge.to)
                    .map(|e| e.skip_range.as_str())
                    .unwrap_or("");
                let _ = writeln!(
                    out,
                    "      {}-- \"skipRange({})\" --> {}",
                    node(&edge.to),
                    range.replace('"', "#quot;"),
                    node(&edge.from)
                );
            }
            out.push_str("    end\n");
        }
        out.push_str("  end\n");
    }
    out
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
