//! Findings and how they are shown.
//!
//! Every check of the tool (bundle validation, graph checks, FBC validation)
//! produces [`Finding`]s. They render three ways: for people, like rustc, with
//! the offending source line and a caret ([`render_human`]); as a JSON report
//! ([`render_json`], schema in `schema/findings.schema.json`); and as SARIF
//! 2.1.0 for code-scanning uploads ([`render_sarif`]). Rendering is
//! deterministic: findings are sorted, so the same input gives byte-identical
//! output.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;

use crate::yaml::Span;

/// How bad a finding is. The order matters: errors sort first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// OLM would refuse the bundle or fail at install or resolution.
    Error,
    /// Likely a mistake, or refused by a stricter consumer.
    Warning,
}

impl Level {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
        }
    }
}

/// Where a finding points.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Location {
    /// The file, as the user named it (bundle directory joined with the
    /// file's path inside the bundle).
    pub file: PathBuf,
    /// 1-based line; 0 when the finding is about the whole file.
    pub line: u32,
    /// 1-based column; 0 when unknown.
    pub column: u32,
    /// Column just past the offending text on the same line (for the caret
    /// underline); equal to `column` when unknown.
    #[serde(skip)]
    pub end_column: u32,
    /// The source line the finding points at, for human output.
    #[serde(skip)]
    pub source_line: Option<String>,
}

impl Location {
    /// A location in `file` at `span`, taking the source line from `text`.
    pub fn new(file: impl Into<PathBuf>, span: Span, text: Option<&str>) -> Location {
        let source_line = text.and_then(|t| {
            (span.line > 0)
                .then(|| t.lines().nth(span.line as usize - 1))
                .flatten()
                .map(|l| l.trim_end_matches('\r').to_string())
        });
        let end_column = if span.end_line == span.line && span.end_column > span.column {
            span.end_column
        } else {
            span.column
        };
        Location {
            file: file.into(),
            line: span.line,
            column: span.column,
            end_column,
            source_line,
        }
    }

    /// A location naming only a file.
    pub fn file(file: impl Into<PathBuf>) -> Location {
        Location {
            file: file.into(),
            line: 0,
            column: 0,
            end_column: 0,
            source_line: None,
        }
    }
}

/// One problem found by a check.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Finding {
    /// Error or warning.
    pub level: Level,
    /// A stable, kebab-case rule id such as `csv-version-not-semver`.
    pub rule: String,
    /// What is wrong, in one sentence.
    pub message: String,
    /// Where, when the problem has a place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    /// How to fix it, when that is not obvious from the message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Other files involved (for graph findings spanning bundles).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<Location>,
}

impl Finding {
    /// A finding with no location yet.
    pub fn new(level: Level, rule: impl Into<String>, message: impl Into<String>) -> Finding {
        Finding {
            level,
            rule: rule.into(),
            message: message.into(),
            location: None,
            hint: None,
            related: Vec::new(),
        }
    }

    /// An error finding.
    pub fn error(rule: impl Into<String>, message: impl Into<String>) -> Finding {
        Finding::new(Level::Error, rule, message)
    }

    /// A warning finding.
    pub fn warning(rule: impl Into<String>, message: impl Into<String>) -> Finding {
        Finding::new(Level::Warning, rule, message)
    }

    /// Sets where the finding points.
    pub fn at(mut self, location: Location) -> Finding {
        self.location = Some(location);
        self
    }

    /// Sets the hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Finding {
        self.hint = Some(hint.into());
        self
    }

    /// Adds a related location.
    pub fn related(mut self, location: Location) -> Finding {
        self.related.push(location);
        self
    }
}

/// A group of findings about one subject (a bundle directory, a package).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    /// What was checked, e.g. the bundle directory as given.
    pub subject: String,
    /// The findings, sorted.
    pub findings: Vec<Finding>,
}

impl Report {
    /// Sorts findings so output is deterministic: by file, line, column, then
    /// level, rule and message.
    pub fn sort(&mut self) {
        self.findings.sort_by(|a, b| {
            let key = |f: &Finding| {
                f.location
                    .as_ref()
                    .map(|l| (l.file.clone(), l.line, l.column))
            };
            key(a)
                .cmp(&key(b))
                .then(a.level.cmp(&b.level))
                .then(a.rule.cmp(&b.rule))
                .then(a.message.cmp(&b.message))
        });
        self.findings.dedup();
    }

    /// Number of errors.
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.level == Level::Error)
            .count()
    }

    /// Number of warnings.
    pub fn warnings(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.level == Level::Warning)
            .count()
    }
}

/// Output format of findings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Format {
    /// For people: rustc-style with source lines (`text` is another name).
    #[cfg_attr(feature = "cli", value(alias = "text"))]
    Human,
    /// A JSON report (schema/findings.schema.json).
    Json,
    /// SARIF 2.1.0, for code-scanning uploads.
    Sarif,
}

/// Renders findings for a terminal, rustc style.
pub fn render_human(reports: &[Report], color: bool) -> String {
    let (red, yellow, blue, bold, reset) = if color {
        (
            "\x1b[31;1m",
            "\x1b[33;1m",
            "\x1b[34;1m",
            "\x1b[1m",
            "\x1b[0m",
        )
    } else {
        ("", "", "", "", "")
    };
    let mut out = String::new();
    let (mut errors, mut warnings) = (0, 0);
    for report in reports {
        for f in &report.findings {
            let lc = match f.level {
                Level::Error => red,
                Level::Warning => yellow,
            };
            let _ = writeln!(
                out,
                "{lc}{}[{}]{reset}{bold}: {}{reset}",
                f.level.as_str(),
                f.rule,
                f.message
            );
            match &f.location {
                Some(loc) => write_location(&mut out, loc, blue, lc, reset),
                None => {
                    let _ = writeln!(out, "  {blue}-->{reset} {}", report.subject);
                }
            }
            for rel in &f.related {
                let _ = writeln!(out, "  {blue}note{reset}: see {}", loc_string(rel));
            }
            if let Some(h) = &f.hint {
                let _ = writeln!(out, "  {blue}= help{reset}: {h}");
            }
            out.push('\n');
        }
        errors += report.errors();
        warnings += report.warnings();
    }
    let checked = reports.len();
    let _ = writeln!(
        out,
        "{bold}{checked} checked: {errors} error{}, {warnings} warning{}{reset}",
        if errors == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" }
    );
    out
}

fn loc_string(loc: &Location) -> String {
    if loc.line == 0 {
        loc.file.display().to_string()
    } else {
        format!("{}:{}:{}", loc.file.display(), loc.line, loc.column.max(1))
    }
}

fn write_location(out: &mut String, loc: &Location, blue: &str, lc: &str, reset: &str) {
    let _ = writeln!(out, "  {blue}-->{reset} {}", loc_string(loc));
    if let Some(src) = &loc.source_line {
        let num = loc.line.to_string();
        let pad = " ".repeat(num.len());
        // Tabs would misalign the caret; show them as one space each.
        let shown = src.replace('\t', " ");
        let col = loc.column.max(1) as usize;
        let width = (loc.end_column.saturating_sub(loc.column) as usize).max(1);
        let width = width.min(shown.chars().count().saturating_sub(col - 1).max(1));
        let _ = writeln!(out, "   {pad} {blue}|{reset}");
        let _ = writeln!(out, "   {blue}{num} |{reset} {shown}");
        let _ = writeln!(
            out,
            "   {pad} {blue}|{reset} {}{lc}{}{reset}",
            " ".repeat(col - 1),
            "^".repeat(width)
        );
    }
}

/// Renders findings as the JSON report.
pub fn render_json(reports: &[Report]) -> String {
    let mut s = serde_json::to_string_pretty(&report_value(reports)).unwrap_or_default();
    s.push('\n');
    s
}

/// The JSON report of [`render_json`] as a value, for commands that add
/// fields of their own (`validate` adds opm's `passed` and `error`).
pub fn report_value(reports: &[Report]) -> serde_json::Value {
    #[derive(Serialize)]
    struct Out<'a> {
        version: u32,
        tool: &'static str,
        summary: Summary,
        reports: &'a [Report],
    }
    #[derive(Serialize)]
    struct Summary {
        checked: usize,
        errors: usize,
        warnings: usize,
    }
    let out = Out {
        version: 1,
        tool: "olm-catalog",
        summary: Summary {
            checked: reports.len(),
            errors: reports.iter().map(Report::errors).sum(),
            warnings: reports.iter().map(Report::warnings).sum(),
        },
        reports,
    };
    serde_json::to_value(&out).unwrap_or_default()
}

/// Renders findings as SARIF 2.1.0.
pub fn render_sarif(reports: &[Report], rules_help: &dyn Fn(&str) -> Option<String>) -> String {
    use serde_json::json;
    let mut rule_ids: Vec<&str> = reports
        .iter()
        .flat_map(|r| r.findings.iter().map(|f| f.rule.as_str()))
        .collect();
    rule_ids.sort_unstable();
    rule_ids.dedup();
    let rules: Vec<_> = rule_ids
        .iter()
        .map(|id| {
            let mut r = json!({ "id": id, "name": id });
            if let Some(h) = rules_help(id) {
                r["shortDescription"] = json!({ "text": h });
            }
            r
        })
        .collect();
    let mut results = Vec::new();
    for report in reports {
        for f in &report.findings {
            let mut result = json!({
                "ruleId": f.rule,
                "ruleIndex": rule_ids.binary_search(&f.rule.as_str()).unwrap_or(0),
                "level": f.level.as_str(),
                "message": { "text": match &f.hint {
                    Some(h) => format!("{} (hint: {h})", f.message),
                    None => f.message.clone(),
                } },
            });
            let loc = f
                .location
                .clone()
                .unwrap_or_else(|| Location::file(&report.subject));
            let mut physical = json!({ "artifactLocation": sarif_artifact(&loc.file) });
            if loc.line > 0 {
                let mut region = json!({ "startLine": loc.line });
                if loc.column > 0 {
                    region["startColumn"] = json!(loc.column);
                    // end_column is only ever set for single-line spans:
                    // say so with endLine rather than leave it implied.
                    if loc.end_column > loc.column {
                        region["endLine"] = json!(loc.line);
                        region["endColumn"] = json!(loc.end_column);
                    }
                }
                physical["region"] = region;
            }
            result["locations"] = json!([{ "physicalLocation": physical }]);
            results.push(result);
        }
    }
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "olm-catalog",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://olm.operatorframework.io/",
                "rules": rules,
            }},
            "results": results,
        }],
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

/// The SARIF artifactLocation of `path`: a relative path becomes a
/// percent-encoded relative URI against `%SRCROOT%` (what code scanning
/// resolves against the checkout), an absolute one a `file://` URI.
fn sarif_artifact(path: &std::path::Path) -> serde_json::Value {
    let s = path.to_string_lossy().replace('\\', "/");
    if s.starts_with('/') {
        serde_json::json!({ "uri": format!("file://{}", percent_encode_path(&s)) })
    } else {
        let rel = s.strip_prefix("./").unwrap_or(&s);
        serde_json::json!({ "uri": percent_encode_path(rel), "uriBaseId": "%SRCROOT%" })
    }
}

/// Percent-encodes everything but RFC 3986 unreserved characters and `/`.
fn percent_encode_path(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `e` and its causes, `: `-separated, as anyhow's `{:#}` writes them (a
/// cause whose text is already there is not repeated): for an error that
/// ends up in a string, such as a log line or a rejected signature's reason.
pub fn with_causes(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Report> {
        let text = "spec:\n  version: 1.2\n";
        let f = Finding::error("csv-version-not-semver", "spec.version `1.2` is not semver")
            .at(Location::new(
                "b/manifests/x.yaml",
                Span {
                    line: 2,
                    column: 12,
                    end_line: 2,
                    end_column: 15,
                },
                Some(text),
            ))
            .hint("write 1.2.0");
        vec![Report {
            subject: "b".into(),
            findings: vec![f, Finding::warning("w", "a warning")],
        }]
    }

    #[test]
    fn human_shows_source_and_caret() {
        let out = render_human(&sample(), false);
        assert!(out.contains("error[csv-version-not-semver]: spec.version `1.2` is not semver"));
        assert!(out.contains("--> b/manifests/x.yaml:2:12"));
        assert!(out.contains("2 |   version: 1.2"));
        assert!(out.contains("    |            ^^^"));
        assert!(out.contains("= help: write 1.2.0"));
        assert!(out.contains("1 checked: 1 error, 1 warning"));
    }

    #[test]
    fn json_and_sarif_are_valid_json() {
        let j: serde_json::Value = serde_json::from_str(&render_json(&sample())).expect("json");
        assert_eq!(j["summary"]["errors"], 1);
        assert_eq!(j["reports"][0]["findings"][0]["location"]["line"], 2);
        let s: serde_json::Value =
            serde_json::from_str(&render_sarif(&sample(), &|_| None)).expect("sarif");
        assert_eq!(s["version"], "2.1.0");
        let r = &s["runs"][0]["results"][0];
        assert_eq!(r["level"], "error");
        assert_eq!(
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            2
        );
    }
}
