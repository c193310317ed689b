//! `graph check -o html`: one self-contained page per run, each package's
//! picture ([`super::svg`]) beside its findings.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::checks::{self, CheckOptions};
use super::crd_safety::EdgeFindings;
use super::svg::{self, escape, Marks};
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
    let sections: Vec<Section> = paths
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
    for (i, s) in sections.iter().enumerate() {
        let _ = writeln!(
            body,
            "<section class=\"package\" id=\"s{i}\">\n<h2>{}</h2>\n<div class=\"side\">",
            escape(&s.report.subject)
        );
        if let Some((g, marks)) = &s.picture {
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
                finding_item(&mut body, f, &f.message, None, &s.root);
            }
            body.push_str("</ul>\n");
        }
        for e in &s.edges {
            edge_items(&mut body, e, &s.root);
        }
        body.push_str("</div>\n</div>\n</section>\n");
    }
    (
        svg::page("graph check", &body),
        sections.into_iter().map(|s| s.report).collect(),
    )
}

/// The findings of one edge, under its label; a hint every finding shares
/// is said once.
fn edge_items(out: &mut String, e: &EdgeFindings, root: &Path) {
    let n = e.findings.len();
    let _ = writeln!(
        out,
        "<h3 class=\"edge-findings\">{}: {n} finding{}</h3>",
        escape(&e.label),
        if n == 1 { "" } else { "s" }
    );
    let first_hint = e.findings.first().and_then(|f| f.hint.as_deref());
    let shared = first_hint.filter(|h| e.findings.iter().all(|f| f.hint.as_deref() == Some(*h)));
    if let Some(h) = shared {
        let _ = writeln!(out, "<p class=\"muted\">help: {}</p>", escape(h));
    }
    out.push_str("<ul>\n");
    for f in &e.findings {
        finding_item(out, f, e.detail(f), shared, root);
    }
    out.push_str("</ul>\n");
}

/// One finding: `message` (its whole message, or its detail under its
/// edge's label), where it is (relative to `root`), and its hint unless it
/// is `said` already.
fn finding_item(out: &mut String, f: &Finding, message: &str, said: Option<&str>, root: &Path) {
    let level = match f.level {
        Level::Error => "error",
        _ => "warning",
    };
    let _ = write!(
        out,
        "<li class=\"finding {level}\"><strong>{level}</strong> <code>{}</code>: {}",
        escape(&f.rule),
        escape(message)
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
    if let Some(h) = f.hint.as_deref().filter(|h| Some(*h) != said) {
        let _ = write!(out, "<br><span class=\"muted\">help: {}</span>", escape(h));
    }
    out.push_str("</li>\n");
}
