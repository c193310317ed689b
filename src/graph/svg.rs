//! Pictures of upgrade graphs: SVG laid out in-process (no Graphviz, no
//! browser), and self-contained HTML pages around it.
//!
//! The layout is ours, a layered layout specialised to OLM channels (why not
//! a layout crate: `docs/graph.md`, "Pictures"). Each channel is one lane;
//! in a lane the channel's bundles stand left to right by version (a bundle
//! an entry replaces or skips but the channel lacks is drawn dashed, where
//! its version puts it). Edges between neighbours are straight; longer ones
//! arc above the lane (an upgrade to a higher version) or below it (to a
//! lower one). `replaces` is solid, `skips` dashed; a `skipRange` is the
//! range written under its bundle (its admissions are not drawn: a range
//! admitting fifty versions would hide the rest), except an admission whose
//! CRD change is unsafe, drawn dotted. An edge on which `graph check` finds
//! an unsafe CRD change is red; its `<title>` (the tooltip) gives the
//! number of findings and the first ones (on a page that lists them, it
//! links there instead: [`Marks::links`]). Channel heads have a thick blue
//! border, the default channel a star, deprecated packages, channels and
//! bundles are grey. What an edge or a box looks like is its classes, said
//! once in the SVG's `<style>` ([`STYLE`]).
//!
//! Output is deterministic: integer coordinates, everything iterated in a
//! fixed order, so the same graphs give the same bytes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::{Channel, EdgeKind, PackageGraph};
use crate::diag::Level;
use crate::semver_range::compare;

/// What a picture marks beyond the graph itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    /// Upgrade edges with an unsafe CRD change, keyed by (package, from,
    /// to): each finding as `rule: detail` (its message without the edge's
    /// label, [`super::crd_safety::EdgeFindings::detail`]).
    pub unsafe_edges: BTreeMap<(String, String, String), Vec<String>>,
    /// Where a page lists an unsafe edge's findings, by the same key: the
    /// id of that element. Such an edge links to it, and its tooltip says
    /// only how many findings of which rules there are (the list beside
    /// the picture has them all); an edge without one gets the first
    /// findings in its tooltip ([`unsafe_tooltip`]).
    pub links: BTreeMap<(String, String, String), String>,
}

impl Marks {
    /// The unsafe CRD changes `graph check` finds on the edges of `graphs`
    /// ([`super::crd_safety::check_graph_edges`]; errors only: an edge
    /// whose CRDs could not be compared is not marked). Graphs from a
    /// file-based catalog have no CRD files and get no marks.
    pub fn crd_checks(graphs: &[PackageGraph]) -> Marks {
        let mut m = Marks::default();
        for g in graphs {
            m.add_crd_findings(&g.package, super::crd_safety::check_graph_edges(g));
        }
        m
    }

    /// Marks the edges of `package` whose findings hold an error.
    pub fn add_crd_findings(&mut self, package: &str, edges: Vec<super::crd_safety::EdgeFindings>) {
        for e in edges {
            let found: Vec<String> = e
                .findings
                .iter()
                .filter(|f| f.level == Level::Error)
                .map(|f| format!("{}: {}", f.rule, e.detail(f)))
                .collect();
            if !found.is_empty() {
                self.unsafe_edges
                    .insert((package.to_string(), e.from, e.to), found);
            }
        }
    }

    fn unsafe_edge(&self, package: &str, from: &str, to: &str) -> Option<&Vec<String>> {
        self.unsafe_edges
            .get(&(package.to_string(), from.to_string(), to.to_string()))
    }

    fn link(&self, package: &str, from: &str, to: &str) -> Option<&String> {
        if self.links.is_empty() {
            return None;
        }
        self.links
            .get(&(package.to_string(), from.to_string(), to.to_string()))
    }
}

/// How many findings an unsafe edge's tooltip shows, and how many
/// characters of each. The tooltip is repeated in every lane that draws
/// the edge and an edge can have thousands of findings: the tooltip gives
/// their count and the first ones; `graph check` (and its page) lists them
/// all, once per edge.
const TOOLTIP_FINDINGS: usize = 3;
const TOOLTIP_FINDING_CHARS: usize = 160;

/// The tooltip lines of an unsafe edge's findings: their count, the first
/// [`TOOLTIP_FINDINGS`] (each cut at [`TOOLTIP_FINDING_CHARS`]) and how
/// many more there are.
fn unsafe_tooltip(title: &mut String, findings: &[String]) {
    let n = findings.len();
    let _ = write!(
        title,
        " \u{2014} unsafe CRD change (OLM v1 refuses this upgrade): {n} finding{}",
        if n == 1 { "" } else { "s" }
    );
    for f in findings.iter().take(TOOLTIP_FINDINGS) {
        title.push('\n');
        match f.char_indices().nth(TOOLTIP_FINDING_CHARS) {
            Some((cut, _)) => {
                title.push_str(&f[..cut]);
                title.push('\u{2026}');
            }
            None => title.push_str(f),
        }
    }
    if n > TOOLTIP_FINDINGS {
        let _ = write!(
            title,
            "\n\u{2026} and {} more: graph check lists every one",
            n - TOOLTIP_FINDINGS
        );
    }
}

/// The tooltip lines of an unsafe edge whose findings a page lists beside
/// the picture ([`Marks::links`]): their count and how many of each rule
/// (the edge, drawn in every lane of its channels, links to the list).
fn linked_tooltip(title: &mut String, findings: &[String]) {
    let n = findings.len();
    let mut rules: BTreeMap<&str, usize> = BTreeMap::new();
    for f in findings {
        let rule = f.split_once(": ").map_or(f.as_str(), |(r, _)| r);
        *rules.entry(rule).or_default() += 1;
    }
    let _ = write!(
        title,
        " \u{2014} unsafe CRD change (OLM v1 refuses this upgrade): {n} finding{}",
        if n == 1 { "" } else { "s" }
    );
    for (rule, k) in rules {
        let _ = write!(title, "\n{rule}: {k}");
    }
    title.push_str("\nclick the edge for the list");
}

/// Escapes text for XML and HTML element content (not attribute values:
/// quotes are left as they are, [`escape`] for those). Findings quote the
/// values they compare, and a page can hold thousands.
pub fn escape_text(s: &str) -> String {
    escape_with(s, false)
}

/// Escapes text for XML and HTML (text and attribute values).
pub fn escape(s: &str) -> String {
    escape_with(s, true)
}

fn escape_with(s: &str, quotes: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if quotes => out.push_str("&quot;"),
            '\'' if quotes => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

// Geometry, in pixels. Labels are monospace at 12px: 7.3px a character.
const FONT: &str = "DejaVu Sans Mono, Menlo, Consolas, monospace";
const MARGIN: i64 = 12;
const LEGEND_H: i64 = 34;
const HEADER_H: i64 = 34;
const ARC_SPACE: i64 = 54;
const NODE_H: i64 = 24;
const BELOW: i64 = 34;
const LANE_GAP: i64 = 6;
const LANE_H: i64 = ARC_SPACE + NODE_H + BELOW;
/// The colour of ordinary edges.
const INK: &str = "#3d3d3d";
/// The colour of an edge with an unsafe CRD change.
pub const UNSAFE_RED: &str = "#d0021b";
const HEAD_BLUE: &str = "#1c71d8";
/// Lane stripes, one per channel in turn.
const CHANNEL_COLOURS: &[&str] = &[
    "#3584e4", "#2ec27e", "#e66100", "#9141ac", "#c64600", "#26a269", "#1a5fb4", "#a51d2d",
];

/// The look of the elements a picture repeats in every lane (edges,
/// bundles, skip ranges), said once in the SVG's `<style>` rather than as
/// attributes on each: strimzi-kafka-operator's 38 lanes draw ~1,100 of
/// each. Scoped to `.olm-graph`, so that it styles nothing else of a page
/// around the picture (and several pictures on a page share it); the
/// arrowheads, whose ids are the picture's own, follow in [`svg_with_ids`].
const STYLE: &str = ".olm-graph .edge{fill:none;stroke:#3d3d3d;stroke-width:1.5}\
.olm-graph .edge.skips{stroke-dasharray:5 3}\
.olm-graph .edge.skipRange{stroke-dasharray:2 3}\
.olm-graph .edge.unsafe{stroke:#d0021b;stroke-width:2.5}\
.olm-graph .bundle rect{fill:#ffffff;stroke:#7a7a7a;stroke-width:1}\
.olm-graph .bundle.head rect{fill:#e8f1fc;stroke:#1c71d8;stroke-width:2.5}\
.olm-graph .bundle.deprecated rect{fill:#e0e0e0;stroke:#9a9a9a;stroke-width:1}\
.olm-graph .bundle.missing rect{stroke-dasharray:3 2}\
.olm-graph .bundle text{text-anchor:middle;fill:#1e1e1e}\
.olm-graph .bundle.deprecated text,.olm-graph .bundle.missing text{fill:#7a7a7a}\
.olm-graph .skip-range{text-anchor:middle;font-size:10px;fill:#5e5e5e}\n";

fn text_w(chars: usize, px_tenths: i64) -> i64 {
    (chars as i64 * px_tenths + 9) / 10
}

/// One bundle in a lane.
struct Node<'a> {
    name: &'a str,
    label: String,
    in_channel: bool,
    head: bool,
    deprecated: bool,
    skip_range: &'a str,
}

/// The bundles of a lane, left to right: by version (bundles without a
/// semver version first, by name), each once.
fn lane_nodes<'a>(g: &'a PackageGraph, ch: &'a Channel) -> Vec<Node<'a>> {
    let heads: BTreeSet<&str> = ch.heads().iter().map(|e| e.name.as_str()).collect();
    let mut names: BTreeMap<&str, (bool, &str)> = BTreeMap::new();
    for e in &ch.entries {
        names.insert(e.name.as_str(), (true, e.skip_range.as_str()));
    }
    for e in &ch.entries {
        for r in std::iter::once(&e.replaces).chain(&e.skips) {
            if !r.is_empty() {
                names.entry(r.as_str()).or_insert((false, ""));
            }
        }
    }
    let mut nodes: Vec<Node> = names
        .into_iter()
        .map(|(name, (in_channel, skip_range))| Node {
            name,
            label: g
                .bundles
                .get(name)
                .filter(|b| !b.raw_version.is_empty())
                .map(|b| b.raw_version.clone())
                .unwrap_or_else(|| name.to_string()),
            in_channel,
            head: heads.contains(name),
            deprecated: g.deprecated.bundles.contains(name),
            skip_range,
        })
        .collect();
    nodes.sort_by(|a, b| match (g.version(a.name), g.version(b.name)) {
        (Some(x), Some(y)) => compare(x, y).then_with(|| a.name.cmp(b.name)),
        (None, Some(_)) => std::cmp::Ordering::Less,
        (Some(_), None) => std::cmp::Ordering::Greater,
        (None, None) => a.name.cmp(b.name),
    });
    nodes
}

/// Column width and label-column width shared by the lanes of `graphs`.
fn columns(graphs: &[PackageGraph]) -> (i64, i64, usize) {
    let mut label_chars = 12;
    let mut node_chars = 6;
    let mut most = 1;
    for g in graphs {
        for ch in &g.channels {
            label_chars = label_chars.max(ch.name.chars().count() + 2);
            let nodes = lane_nodes(g, ch);
            most = most.max(nodes.len());
            for n in &nodes {
                node_chars = node_chars.max(n.label.chars().count());
            }
        }
    }
    let label_w = text_w(label_chars.min(40), 78) + 28;
    let col_w = text_w(node_chars.min(40), 73) + 30;
    (label_w, col_w, most)
}

/// The SVG of `graphs`, one block of lanes per package. Element ids start
/// with `g-` ([`svg_with_ids`] to choose).
pub fn svg(graphs: &[PackageGraph], marks: &Marks) -> String {
    svg_with_ids(graphs, marks, "g-")
}

/// [`svg`] with element ids starting with `id_prefix`, so that several
/// pictures can share one HTML page.
pub fn svg_with_ids(graphs: &[PackageGraph], marks: &Marks, id_prefix: &str) -> String {
    let (label_w, col_w, most) = columns(graphs);
    let width = MARGIN * 2 + label_w + col_w * most as i64;
    let width = width.max(840);
    let lanes: usize = graphs.iter().map(|g| g.channels.len().max(1)).sum();
    let height =
        MARGIN * 2 + LEGEND_H + graphs.len() as i64 * HEADER_H + lanes as i64 * (LANE_H + LANE_GAP);
    let p = escape(id_prefix);
    let mut out = String::new();
    let names: Vec<&str> = graphs.iter().map(|g| g.package.as_str()).collect();
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"olm-graph\" id=\"{p}graph\" width=\"{width}\" \
height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"{FONT}\" font-size=\"12\">\n\
<title>upgrade graph of {}</title>\n<style>\n{STYLE}\
#{p}graph .edge{{marker-end:url(#{p}arrow)}}#{p}graph .edge.unsafe{{marker-end:url(#{p}arrow-red)}}\n</style>\n",
        escape(&names.join(", "))
    );
    let _ = write!(
        out,
        "<defs>\n\
<marker id=\"{p}arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"10\" markerHeight=\"10\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"{INK}\"/></marker>\n\
<marker id=\"{p}arrow-red\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"10\" markerHeight=\"10\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"{UNSAFE_RED}\"/></marker>\n\
</defs>\n<rect width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>\n"
    );
    legend(&mut out, &p);
    let mut y = MARGIN + LEGEND_H;
    for g in graphs {
        package_block(&mut out, g, marks, y, width, label_w, col_w);
        y += HEADER_H + g.channels.len().max(1) as i64 * (LANE_H + LANE_GAP);
    }
    out.push_str("</svg>\n");
    out
}

/// The key to the picture, one line at the top.
fn legend(out: &mut String, p: &str) {
    let y = MARGIN + 12;
    let x = MARGIN;
    let _ = write!(
        out,
        "<g class=\"legend\" font-size=\"11\" fill=\"{INK}\">\n\
<line x1=\"{x}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{INK}\" stroke-width=\"1.5\" marker-end=\"url(#{p}arrow)\"/>\
<text x=\"{}\" y=\"{}\">replaces</text>\n\
<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{INK}\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\" marker-end=\"url(#{p}arrow)\"/>\
<text x=\"{}\" y=\"{}\">skips</text>\n\
<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{UNSAFE_RED}\" stroke-width=\"2.5\" marker-end=\"url(#{p}arrow-red)\"/>\
<text x=\"{}\" y=\"{}\">unsafe CRD change</text>\n\
<rect x=\"{}\" y=\"{}\" width=\"34\" height=\"16\" rx=\"4\" fill=\"#e8f1fc\" stroke=\"{HEAD_BLUE}\" stroke-width=\"2.5\"/>\
<text x=\"{}\" y=\"{}\">channel head</text>\n\
<rect x=\"{}\" y=\"{}\" width=\"34\" height=\"16\" rx=\"4\" fill=\"#e0e0e0\" stroke=\"#9a9a9a\"/>\
<text x=\"{}\" y=\"{}\">deprecated</text>\n\
<text x=\"{}\" y=\"{}\">&#9733; default channel   &#8839; skipRange</text>\n</g>\n",
        x + 40,
        x + 46,
        y + 4,
        x + 112,
        x + 152,
        x + 158,
        y + 4,
        x + 210,
        x + 250,
        x + 256,
        y + 4,
        x + 390,
        y - 8,
        x + 430,
        y + 4,
        x + 530,
        y - 8,
        x + 570,
        y + 4,
        x + 656,
        y + 4,
    );
}

#[allow(clippy::too_many_arguments)]
fn package_block(
    out: &mut String,
    g: &PackageGraph,
    marks: &Marks,
    top: i64,
    width: i64,
    label_w: i64,
    col_w: i64,
) {
    let pkg = escape(&g.package);
    let dep = if g.deprecated.package {
        " deprecated"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "<g class=\"package{dep}\" data-package=\"{pkg}\"{}>",
        if g.deprecated.package {
            " opacity=\"0.55\""
        } else {
            ""
        }
    );
    let bundles = g.bundles.len();
    let _ = writeln!(
        out,
        "<text class=\"package-name\" x=\"{MARGIN}\" y=\"{}\" font-size=\"16\" font-weight=\"bold\" fill=\"#1e1e1e\">{pkg}{}</text>\
<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#5e5e5e\">{} channel{}, {bundles} bundle{}{}</text>",
        top + 22,
        if g.deprecated.package {
            " (deprecated)"
        } else {
            ""
        },
        MARGIN + text_w(g.package.chars().count() + if g.deprecated.package { 13 } else { 0 }, 98) + 14,
        top + 22,
        g.channels.len(),
        if g.channels.len() == 1 { "" } else { "s" },
        if bundles == 1 { "" } else { "s" },
        if g.default_channel.is_empty() {
            String::new()
        } else {
            format!(", default channel {}", escape(&g.default_channel))
        }
    );
    let mut y = top + HEADER_H;
    if g.channels.is_empty() {
        let _ = writeln!(
            out,
            "<text x=\"{MARGIN}\" y=\"{}\" fill=\"#5e5e5e\">no channels</text>",
            y + LANE_H / 2
        );
    }
    for (i, ch) in g.channels.iter().enumerate() {
        lane(
            out,
            g,
            ch,
            marks,
            y,
            width,
            label_w,
            col_w,
            CHANNEL_COLOURS[i % CHANNEL_COLOURS.len()],
        );
        y += LANE_H + LANE_GAP;
    }
    out.push_str("</g>\n");
}

#[allow(clippy::too_many_arguments)]
fn lane(
    out: &mut String,
    g: &PackageGraph,
    ch: &Channel,
    marks: &Marks,
    top: i64,
    width: i64,
    label_w: i64,
    col_w: i64,
    colour: &str,
) {
    let deprecated = g.deprecated.channels.contains(&ch.name);
    let default = ch.name == g.default_channel;
    let name = escape(&ch.name);
    let mut class = String::from("lane");
    if default {
        class.push_str(" default");
    }
    if deprecated {
        class.push_str(" deprecated");
    }
    let _ = writeln!(
        out,
        "<g class=\"{class}\" data-channel=\"{name}\"{}>",
        if deprecated { " opacity=\"0.5\"" } else { "" }
    );
    let lane_w = width - 2 * MARGIN;
    let _ = writeln!(
        out,
        "<rect x=\"{MARGIN}\" y=\"{top}\" width=\"{lane_w}\" height=\"{LANE_H}\" rx=\"6\" fill=\"{}\" stroke=\"#dedede\"/>\
<rect x=\"{MARGIN}\" y=\"{top}\" width=\"6\" height=\"{LANE_H}\" rx=\"3\" fill=\"{}\"/>",
        if deprecated {
            "#eeeeee"
        } else if default {
            "#f3f7fd"
        } else {
            "#fafafa"
        },
        if deprecated { "#9a9a9a" } else { colour }
    );
    let node_y = top + ARC_SPACE;
    let mid = node_y + NODE_H / 2;
    let _ = writeln!(
        out,
        "<text class=\"channel-name\" x=\"{}\" y=\"{}\" font-weight=\"bold\" fill=\"#1e1e1e\">{}{name}</text>",
        MARGIN + 14,
        mid,
        if default { "&#9733; " } else { "" }
    );
    let nodes = lane_nodes(g, ch);
    let mut sub = format!(
        "{} entr{}",
        ch.entries.len(),
        if ch.entries.len() == 1 { "y" } else { "ies" }
    );
    if default {
        sub.push_str(", default");
    }
    if deprecated {
        sub.push_str(", deprecated");
    }
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#5e5e5e\">{sub}</text>",
        MARGIN + 14,
        mid + 15
    );
    if let Err(e) = ch.head() {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"{UNSAFE_RED}\">{}</text>",
            MARGIN + 14,
            mid + 28,
            escape(match e {
                super::HeadError::NoHead => "no head",
                super::HeadError::Multiple(_) => "several heads",
            })
        );
    }
    let index: BTreeMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.name, i)).collect();
    let x0 = MARGIN + label_w;
    let cx = |i: usize| x0 + i as i64 * col_w + col_w / 2;
    let box_w = col_w - 22;
    // Edges first, so that boxes sit on top of their ends.
    let mut edges: Vec<(usize, usize, EdgeKind, &str, &str)> = Vec::new();
    for e in &ch.entries {
        let Some(&to) = index.get(e.name.as_str()) else {
            continue;
        };
        if !e.replaces.is_empty() {
            if let Some(&from) = index.get(e.replaces.as_str()) {
                edges.push((from, to, EdgeKind::Replaces, &e.replaces, &e.name));
            }
        }
        for s in &e.skips {
            if let Some(&from) = index.get(s.as_str()) {
                edges.push((from, to, EdgeKind::Skips, s, &e.name));
            }
        }
    }
    // skipRange admissions are drawn only when their CRD change is unsafe.
    for edge in g.edges(ch) {
        if edge.kind == EdgeKind::SkipRange
            && marks
                .unsafe_edge(&g.package, &edge.from, &edge.to)
                .is_some()
            && !edges
                .iter()
                .any(|(_, _, _, f, t)| *f == edge.from && *t == edge.to)
        {
            if let (Some(&from), Some(&to)) =
                (index.get(edge.from.as_str()), index.get(edge.to.as_str()))
            {
                let (f, t) = (nodes[from].name, nodes[to].name);
                edges.push((from, to, EdgeKind::SkipRange, f, t));
            }
        }
    }
    edges.sort();
    edges.dedup();
    for (from, to, kind, fname, tname) in edges {
        let (x1, x2) = (cx(from), cx(to));
        let half = box_w / 2;
        let d = if to == from + 1 {
            format!("M{},{mid} L{},{mid}", x1 + half, x2 - half - 1)
        } else if to > from {
            let span = (to - from) as i64;
            let h = (14 + 9 * (span - 2)).min(ARC_SPACE - 6);
            format!(
                "M{},{node_y} Q{},{} {},{node_y}",
                x1 + 8,
                (x1 + x2) / 2,
                node_y - 2 * h,
                x2 - 8
            )
        } else if from == to {
            format!(
                "M{},{node_y} C{},{} {},{} {},{node_y}",
                x1 - 6,
                x1 - 16,
                node_y - 30,
                x1 + 16,
                node_y - 30,
                x1 + 6
            )
        } else {
            let span = (from - to) as i64;
            let h = (10 + 5 * span).min(BELOW - 4);
            let bottom = node_y + NODE_H;
            format!(
                "M{},{bottom} Q{},{} {},{bottom}",
                x1 - 8,
                (x1 + x2) / 2,
                bottom + 2 * h,
                x2 + 8
            )
        };
        // Stroke, dashes and arrowhead come from the class ([`STYLE`]).
        // The ends as their boxes show them (the bundle names are in the
        // boxes' tooltips and in data-from, data-to): an edge is drawn in
        // every lane of its channels.
        let mut title = format!(
            "{} \u{2192} {}: {}",
            nodes[from].label,
            nodes[to].label,
            kind.as_str()
        );
        let mut class = format!("edge {}", kind.as_str());
        let mut link = None;
        if let Some(findings) = marks.unsafe_edge(&g.package, fname, tname) {
            class.push_str(" unsafe");
            link = marks.link(&g.package, fname, tname);
            match link {
                Some(_) => linked_tooltip(&mut title, findings),
                None => unsafe_tooltip(&mut title, findings),
            }
        }
        if let Some(id) = link {
            let _ = write!(out, "<a href=\"#{}\">", escape(id));
        }
        let _ = write!(
            out,
            "<path class=\"{class}\" data-from=\"{}\" data-to=\"{}\" d=\"{d}\"><title>{}</title></path>",
            escape(fname),
            escape(tname),
            escape_text(&title)
        );
        out.push_str(if link.is_some() { "</a>\n" } else { "\n" });
    }
    for (i, n) in nodes.iter().enumerate() {
        let x = cx(i) - box_w / 2;
        // Fill, stroke and text colour come from the classes ([`STYLE`]).
        let mut class = String::from("bundle");
        if n.deprecated {
            class.push_str(" deprecated");
        }
        if n.head {
            class.push_str(" head");
        }
        if !n.in_channel {
            class.push_str(" missing");
        }
        // The name; the version is what the box shows.
        let mut title = n.name.to_string();
        if n.head {
            title.push_str("\nhead of channel ");
            title.push_str(&ch.name);
        }
        if n.deprecated {
            title.push_str("\ndeprecated");
        }
        if !n.in_channel {
            title.push_str("\nnot an entry of this channel");
        }
        if !n.skip_range.is_empty() {
            let _ = write!(title, "\nskipRange {}", n.skip_range);
        }
        let _ = writeln!(
            out,
            "<g class=\"{class}\" data-bundle=\"{}\"><title>{}</title>\
<rect x=\"{x}\" y=\"{node_y}\" width=\"{box_w}\" height=\"{NODE_H}\" rx=\"5\"/>\
<text x=\"{}\" y=\"{}\">{}</text></g>",
            escape(n.name),
            escape_text(&title),
            cx(i),
            node_y + 16,
            escape(&n.label)
        );
        if !n.skip_range.is_empty() {
            // Alternate rows so that neighbouring ranges do not overlap.
            let row = (i % 2) as i64;
            let _ = writeln!(
                out,
                "<text class=\"skip-range\" x=\"{}\" y=\"{}\">&#8839; {}</text>",
                cx(i),
                node_y + NODE_H + 13 + 13 * row,
                escape(n.skip_range)
            );
        }
    }
    out.push_str("</g>\n");
}

/// The style of the HTML pages ([`page`]): plain CSS, nothing fetched.
pub const PAGE_CSS: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;margin:0;color:#1e1e1e;background:#f6f6f6}\n\
header{background:#24292f;color:#fff;padding:10px 20px}header a{color:#fff}\n\
main{padding:16px 20px}h1{font-size:1.4em;margin:0}h2{font-size:1.2em;margin-top:1.6em}\n\
.graph{overflow:auto;background:#fff;border:1px solid #dedede;border-radius:6px;padding:4px;max-height:80vh}\n\
table{border-collapse:collapse;background:#fff}td,th{border:1px solid #dedede;padding:4px 8px;text-align:left;vertical-align:top}\n\
.finding.error,.rule-findings.error strong,.rule-findings.error .items{color:#a51d2d}\n\
.finding.warning,.rule-findings.warning strong,.rule-findings.warning .items{color:#9c6500}.muted{color:#5e5e5e}\n\
.deprecated{color:#7a7a7a}code,pre{font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:.92em}\n\
pre{background:#fff;border:1px solid #dedede;padding:8px;overflow:auto}\n\
.side{display:flex;gap:16px;align-items:flex-start;flex-wrap:wrap}.side>div{min-width:0}.side>.findings{flex:1 1 360px}\n\
img.icon{width:32px;height:32px;vertical-align:middle}\n";

/// A self-contained HTML page: `title`, then `body` (HTML, escaped by
/// the caller). No script, no stylesheet or font fetched from anywhere.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{t}</title>\n\
<style>\n{PAGE_CSS}</style>\n</head>\n<body>\n<header><h1>{t}</h1></header>\n<main>\n{body}</main>\n</body>\n</html>\n",
        t = escape(title)
    )
}

/// `graph render -o html`: the SVG of each package in one page.
pub fn html(graphs: &[PackageGraph], marks: &Marks) -> String {
    let mut body = String::new();
    for (i, g) in graphs.iter().enumerate() {
        let _ = write!(
            body,
            "<section class=\"package\" id=\"package-{}\">\n<h2>{}</h2>\n<div class=\"graph\">\n{}</div>\n</section>\n",
            escape(&g.package),
            escape(&g.package),
            svg_with_ids(std::slice::from_ref(g), marks, &format!("p{i}-"))
        );
    }
    let names: Vec<&str> = graphs.iter().map(|g| g.package.as_str()).collect();
    page(&format!("Upgrade graph: {}", names.join(", ")), &body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{BundleInfo, Entry};

    fn graph() -> PackageGraph {
        let mut g = PackageGraph {
            package: "p".into(),
            default_channel: "stable".into(),
            channels: vec![Channel {
                name: "stable".into(),
                entries: vec![
                    Entry::new("p.v1", "", &[], ""),
                    Entry::new("p.v2", "p.v1", &[], ""),
                    Entry::new("p.v3", "p.v2", &["p.v1"], ">=1.0.0 <3.0.0"),
                ],
                location: None,
            }],
            ..PackageGraph::default()
        };
        for (n, v) in [("p.v1", "1.0.0"), ("p.v2", "2.0.0"), ("p.v3", "3.0.0")] {
            g.bundles.insert(
                n.into(),
                BundleInfo {
                    name: n.into(),
                    raw_version: v.into(),
                    version: semver::Version::parse(v).ok(),
                    ..BundleInfo::default()
                },
            );
        }
        g
    }

    #[test]
    fn lanes_order_by_version_and_mark_the_head_and_unsafe_edges() {
        let g = graph();
        let mut marks = Marks::default();
        marks.unsafe_edges.insert(
            ("p".into(), "p.v1".into(), "p.v3".into()),
            vec!["crd-upgrade-field-removed: x".into()],
        );
        let s = svg(std::slice::from_ref(&g), &marks);
        let a = s.find("data-bundle=\"p.v1\"").expect("v1");
        let b = s.find("data-bundle=\"p.v2\"").expect("v2");
        let c = s
            .find("class=\"bundle head\" data-bundle=\"p.v3\"")
            .expect("v3 head");
        assert!(a < b && b < c);
        assert!(s.contains("class=\"edge skips unsafe\" data-from=\"p.v1\" data-to=\"p.v3\""));
        assert!(s.contains("crd-upgrade-field-removed: x</title>"));
        assert!(s.contains("&#8839; &gt;=1.0.0 &lt;3.0.0"));
        assert_eq!(s, svg(std::slice::from_ref(&g), &marks), "deterministic");
    }
}
