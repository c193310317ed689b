//! `graph check -o html`: one self-contained page per run, each package's
//! picture ([`super::svg`]) beside its findings.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::checks::{self, CheckOptions};
use super::crd_safety::EdgeFindings;
use super::svg::{self, escape, escape_text, Marks};
use super::PackageGraph;
use crate::diag::{Finding, Level, Report};

/// One package of the page: its report and, when it could be read, its
/// graph and the marks of its unsafe edges.
struct Section {
    report: Report,
    picture: Option<(PackageGraph, Marks)>,
    /// The package's own findings (not the CRD comparisons'), listed first.
    own: Vec<Finding>,
    /// The upgrade edges whose CRD comparison found something, each listed
    /// under its label, once (an edge's findings can be thousands; the
    /// picture's tooltip gives the first ones).
    edges: Vec<EdgeFindings>,
    /// What file paths are shown relative to.
    root: PathBuf,
}

fn sections_of(path: &std::path::Path, opts: &CheckOptions) -> Vec<Section> {
    let graphs = match super::load::load_graphs(path, opts.mode, opts.catalog.as_deref()) {
        Ok(g) if !g.is_empty() => g,
        // Unreadable or empty: the finding `graph check` reports for it.
        _ => {
            return checks::check_path(path, opts)
                .into_iter()
                .map(|report| Section {
                    own: report.findings.clone(),
                    report,
                    picture: None,
                    edges: Vec::new(),
                    root: path.to_path_buf(),
                })
                .collect()
        }
    };
    graphs
        .into_iter()
        .map(|g| {
            // The CRD comparison runs once: its findings go to the list,
            // its errors colour the picture.
            let mut own = Report {
                subject: format!("{} (package {})", path.display(), g.package),
                findings: checks::check(&g),
            };
            own.sort();
            let mut report = own.clone();
            let mut marks = Marks::default();
            let mut edges = Vec::new();
            if opts.crds {
                edges = super::crd_safety::check_graph_edges_with(&g, opts.crd_checks);
                edges.retain(|e| !e.findings.is_empty());
                report
                    .findings
                    .extend(edges.iter().flat_map(|e| e.findings.iter().cloned()));
                report.sort();
                marks.add_crd_findings(&g.package, edges.clone());
            }
            Section {
                report,
                picture: Some((g, marks)),
                own: own.findings,
                edges,
                root: path.to_path_buf(),
            }
        })
        .collect()
}

/// The page of a `graph check` run over `paths` (read as
/// [`checks::check_path`] reads them; same findings), and the reports, in
/// the order of `paths`, for the exit code.
pub fn check_page(paths: &[PathBuf], opts: &CheckOptions) -> (String, Vec<Report>) {
    let mut sections: Vec<Section> = paths
        .par_iter()
        .map(|p| sections_of(p, opts))
        .collect::<Vec<_>>()
        .into_iter()
        .flatten()
        .collect();
    let count = |l: Level| {
        sections
            .iter()
            .flat_map(|s| &s.report.findings)
            .filter(|f| f.level == l)
            .count()
    };
    let (errors, warnings) = (count(Level::Error), count(Level::Warning));
    let mut body = format!(
        "<p class=\"summary\">{} package{} checked: {errors} error{}, {warnings} warning{}.</p>\n",
        sections.len(),
        if sections.len() == 1 { "" } else { "s" },
        if errors == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" },
    );
    if sections.len() > 1 {
        body.push_str("<ul class=\"toc\">\n");
        for (i, s) in sections.iter().enumerate() {
            let _ = writeln!(
                body,
                "<li><a href=\"#s{i}\">{}</a> ({} finding{})</li>",
                escape(&s.report.subject),
                s.report.findings.len(),
                if s.report.findings.len() == 1 {
                    ""
                } else {
                    "s"
                }
            );
        }
        body.push_str("</ul>\n");
    }
    for (i, s) in sections.iter_mut().enumerate() {
        let _ = writeln!(
            body,
            "<section class=\"package\" id=\"s{i}\">\n<h2>{}</h2>\n<div class=\"side\">",
            escape(&s.report.subject)
        );
        if let Some((g, marks)) = &mut s.picture {
            // Each red edge links to its list below (its tooltip then
            // needs only the count).
            for (j, e) in s.edges.iter().enumerate() {
                marks.links.insert(
                    (g.package.clone(), e.from.clone(), e.to.clone()),
                    edge_id(i, j),
                );
            }
            let _ = writeln!(
                body,
                "<div class=\"graph\">\n{}</div>",
                svg::svg_with_ids(std::slice::from_ref(g), marks, &format!("s{i}-"))
            );
        }
        body.push_str("<div class=\"findings\">\n");
        if s.report.findings.is_empty() {
            body.push_str("<p class=\"ok\">No findings.</p>\n");
        }
        if !s.own.is_empty() {
            body.push_str("<ul>\n");
            for f in &s.own {
                finding_item(&mut body, f, &s.root);
            }
            body.push_str("</ul>\n");
        }
        for (j, e) in s.edges.iter().enumerate() {
            edge_items(&mut body, e, &edge_id(i, j), &s.root);
        }
        body.push_str("</div>\n</div>\n</section>\n");
    }
    (
        svg::page("graph check", &body),
        sections.into_iter().map(|s| s.report).collect(),
    )
}

/// The id of the list of section `i`'s `j`th edge.
fn edge_id(i: usize, j: usize) -> String {
    format!("s{i}-e{j}")
}

/// The findings of one edge, under its label (`id`, where the picture's
/// edge links to), each once, grouped so that what findings share is said
/// once: by rule (level, rule, count and hint), then by place (the file,
/// and the CRD and version a message names before the field: [`scope`]),
/// each finding `line:column:` and the rest of its message. An edge can
/// have thousands of findings of a few rules in a few files (strimzi's
/// 0.48.0 -> 0.49.0 has 1,689): said on every item, the shared parts were
/// most of the page.
fn edge_items(out: &mut String, e: &EdgeFindings, id: &str, root: &Path) {
    let n = e.findings.len();
    let _ = writeln!(
        out,
        "<h3 class=\"edge-findings\" id=\"{}\">{}: {n} finding{}</h3>",
        escape(id),
        escape_text(&e.label),
        if n == 1 { "" } else { "s" }
    );
    // (level, errors first; rule, hint) -> (file, scope) -> (finding, the rest of
    // its message); groups sorted, findings in the edge's order.
    type Places<'a> = BTreeMap<(Option<String>, &'a str), Vec<(&'a Finding, &'a str)>>;
    let mut groups: BTreeMap<(Level, &str, Option<&str>), Places> = BTreeMap::new();
    for f in &e.findings {
        let file = f.location.as_ref().map(|l| {
            let file = l.file.strip_prefix(root).unwrap_or(&l.file);
            file.display().to_string()
        });
        let (scope, rest) = scope(e.detail(f));
        groups
            .entry((f.level, &f.rule, f.hint.as_deref()))
            .or_default()
            .entry((file, scope))
            .or_default()
            .push((f, rest));
    }
    for ((level, rule, hint), places) in groups {
        let level = level.as_str();
        let k: usize = places.values().map(Vec::len).sum();
        let _ = write!(
            out,
            "<div class=\"rule-findings {level}\"><p><strong>{level}</strong> <code>{}</code>: {k} finding{}",
            escape_text(rule),
            if k == 1 { "" } else { "s" }
        );
        if let Some(h) = hint {
            let _ = write!(
                out,
                "<br><span class=\"muted\">help: {}</span>",
                escape_text(h)
            );
        }
        out.push_str("</p>\n<ul>\n");
        for ((file, scope), findings) in places {
            out.push_str("<li class=\"place\">");
            match &file {
                Some(path) => {
                    let _ = write!(out, "in <code>{}</code>", escape_text(path));
                }
                None => out.push_str("in no file"),
            }
            if !scope.is_empty() {
                out.push_str(", ");
                out.push_str(&escape_text(scope));
            }
            out.push_str(":<ul class=\"items\">\n");
            for (f, rest) in findings {
                out.push_str("<li>");
                if let Some(l) = &f.location {
                    let _ = write!(out, "{}:{}: ", l.line, l.column);
                }
                out.push_str(&escape_text(rest));
                out.push_str("</li>\n");
            }
            out.push_str("</ul></li>\n");
        }
        out.push_str("</ul></div>\n");
    }
}

/// A CRD finding's message (after its edge's label) as what it is about
/// and the rest: `CRD NAME: version V: field F ...` (or `served versions
/// A -> B: field F ...`) is `CRD NAME: version V` and `field F ...`, which
/// many findings of one file share. A message naming no field is all rest.
fn scope(detail: &str) -> (&str, &str) {
    match detail.find(": field ") {
        Some(i) => (&detail[..i], &detail[i + 2..]),
        None => ("", detail),
    }
}

/// One finding: its message, where it is (relative to `root`), and its
/// hint.
fn finding_item(out: &mut String, f: &Finding, root: &Path) {
    let level = f.level.as_str();
    let _ = write!(
        out,
        "<li class=\"finding {level}\"><strong>{level}</strong> <code>{}</code>: {}",
        escape(&f.rule),
        escape(&f.message)
    );
    if let Some(l) = &f.location {
        let file = l.file.strip_prefix(root).unwrap_or(&l.file);
        let _ = write!(
            out,
            "<br><span class=\"muted\">at <code>{}:{}:{}</code></span>",
            escape(&file.display().to_string()),
            l.line,
            l.column
        );
    }
    if let Some(h) = f.hint.as_deref() {
        let _ = write!(out, "<br><span class=\"muted\">help: {}</span>", escape(h));
    }
    out.push_str("</li>\n");
}
