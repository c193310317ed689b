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
use std::io::Write;
use std::path::{Path, PathBuf};

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
        fn key(f: &Finding) -> Option<(&Path, u32, u32)> {
            f.location
                .as_ref()
                .map(|l| (l.file.as_path(), l.line, l.column))
        }
        // Borrowed keys: a report can hold tens of thousands of findings,
        // and each comparison cloned both paths.
        self.findings.sort_by(|a, b| {
            key(a)
                .cmp(&key(b))
                .then_with(|| a.level.cmp(&b.level))
                .then_with(|| a.rule.cmp(&b.rule))
                .then_with(|| a.message.cmp(&b.message))
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

/// Totals over the reports written so far: the JSON report's `summary`
/// and the last line of human output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Reports written (subjects checked).
    pub checked: usize,
    /// Error findings.
    pub errors: usize,
    /// Warning findings.
    pub warnings: usize,
}

/// No rule descriptions: SARIF rules get only their id and name.
fn no_help(_: &str) -> Option<String> {
    None
}

/// Writes reports one at a time in any [`Format`], so a run over thousands
/// of subjects holds one report at a time instead of all of them: the
/// output is byte for byte what [`render_human`], [`render_json`] and
/// [`render_sarif`] give for the same reports (they are this writer over a
/// buffer).
///
/// JSON reports go out as they come (the summary follows them, as object
/// keys are sorted). SARIF's `ruleIndex` points into the rules of the
/// whole run, known only at the end, so each result is kept, without its
/// index, in an anonymous temporary file (in memory when none can be
/// made) and copied out by [`ReportWriter::finish`]; what stays in memory
/// is a few bytes per finding and the rule ids.
pub struct ReportWriter<'h, W: Write> {
    out: W,
    format: Format,
    color: bool,
    rules_help: &'h dyn Fn(&str) -> Option<String>,
    summary: Summary,
    started: bool,
    sarif: SarifResults,
    /// SARIF results wait in a temporary file (else in memory).
    spill_to_file: bool,
}

impl<W: Write> ReportWriter<'static, W> {
    /// A writer of `format` to `out`, without color or rule descriptions.
    pub fn new(out: W, format: Format) -> ReportWriter<'static, W> {
        ReportWriter {
            out,
            format,
            color: false,
            rules_help: &no_help,
            summary: Summary::default(),
            started: false,
            sarif: SarifResults::default(),
            spill_to_file: true,
        }
    }
}

impl<'h, W: Write> ReportWriter<'h, W> {
    /// Human output with ANSI colors.
    pub fn color(mut self, color: bool) -> Self {
        self.color = color;
        self
    }

    /// The `shortDescription` of each SARIF rule, by rule id.
    pub fn rules_help<'a>(
        self,
        rules_help: &'a dyn Fn(&str) -> Option<String>,
    ) -> ReportWriter<'a, W> {
        ReportWriter {
            out: self.out,
            format: self.format,
            color: self.color,
            rules_help,
            summary: self.summary,
            started: self.started,
            sarif: self.sarif,
            spill_to_file: self.spill_to_file,
        }
    }

    /// Totals of the reports written so far.
    pub fn summary(&self) -> Summary {
        self.summary
    }

    /// Writes one report.
    pub fn write(&mut self, report: &Report) -> std::io::Result<()> {
        self.start()?;
        match self.format {
            Format::Human => {
                let mut text = String::new();
                human_report(&mut text, report, &Colors::new(self.color));
                self.out.write_all(text.as_bytes())?;
            }
            Format::Json => {
                self.out.write_all(if self.summary.checked == 0 {
                    b"\n    "
                } else {
                    b",\n    "
                })?;
                // Straight to the output: a package's report can hold tens
                // of thousands of findings, and a JSON value of it was five
                // times the size of its text.
                let mut ser = serde_json::Serializer::with_formatter(
                    Indented {
                        out: &mut self.out,
                        indent: b"    ",
                    },
                    serde_json::ser::PrettyFormatter::new(),
                );
                SortedReport(report)
                    .serialize(&mut ser)
                    .map_err(std::io::Error::other)?;
            }
            Format::Sarif => {
                for f in &report.findings {
                    self.sarif.push(report, f)?;
                }
            }
        }
        self.summary.checked += 1;
        self.summary.errors += report.errors();
        self.summary.warnings += report.warnings();
        Ok(())
    }

    /// Writes what follows the reports (the summary, SARIF's results and
    /// rules) and returns the output, not flushed.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.start()?;
        let Summary {
            checked,
            errors,
            warnings,
        } = self.summary;
        match self.format {
            Format::Human => {
                let c = Colors::new(self.color);
                writeln!(
                    self.out,
                    "{}{checked} checked: {errors} error{}, {warnings} warning{}{}",
                    c.bold,
                    if errors == 1 { "" } else { "s" },
                    if warnings == 1 { "" } else { "s" },
                    c.reset
                )?;
            }
            Format::Json => {
                self.out
                    .write_all(if checked == 0 { b"],\n" } else { b"\n  ],\n" })?;
                let summary =
                    serde_json::to_string_pretty(&self.summary).map_err(std::io::Error::other)?;
                self.out.write_all(b"  \"summary\": ")?;
                write_indented(&mut self.out, &summary, "  ")?;
                self.out
                    .write_all(b",\n  \"tool\": \"olm-catalog\",\n  \"version\": 1\n}\n")?;
            }
            Format::Sarif => {
                let results = std::mem::take(&mut self.sarif);
                results.finish(&mut self.out, self.rules_help)?;
            }
        }
        Ok(self.out)
    }

    /// The opening of JSON and SARIF documents, before the first report.
    fn start(&mut self) -> std::io::Result<()> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        match self.format {
            Format::Human => Ok(()),
            Format::Json => self.out.write_all(b"{\n  \"reports\": ["),
            Format::Sarif => {
                if self.spill_to_file {
                    self.sarif.spill_to_file();
                }
                self.out.write_all(
                    concat!(
                        "{\n  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",\n",
                        "  \"runs\": [\n    {\n      \"results\": ["
                    )
                    .as_bytes(),
                )
            }
        }
    }
}

/// A writer that indents every line after the first by `indent` (JSON
/// text has no line breaks inside its strings).
struct Indented<'w, W: Write> {
    out: &'w mut W,
    indent: &'w [u8],
}

impl<W: Write> Write for Indented<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, mut buf: &[u8]) -> std::io::Result<()> {
        while let Some(i) = memchr::memchr(b'\n', buf) {
            self.out.write_all(&buf[..=i])?;
            self.out.write_all(self.indent)?;
            buf = &buf[i + 1..];
        }
        self.out.write_all(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// A report as JSON with the keys of every object in sorted order, as the
/// report has always been written (it went through a `serde_json::Value`,
/// whose maps sort their keys).
struct SortedReport<'a>(&'a Report);

impl Serialize for SortedReport<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("findings", &Sorted(&self.0.findings))?;
        m.serialize_entry("subject", &self.0.subject)?;
        m.end()
    }
}

struct Sorted<T>(T);

impl Serialize for Sorted<&Vec<Finding>> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(Sorted))
    }
}

impl Serialize for Sorted<&Finding> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let f = self.0;
        let mut m = s.serialize_map(None)?;
        if let Some(h) = &f.hint {
            m.serialize_entry("hint", h)?;
        }
        m.serialize_entry("level", &f.level)?;
        if let Some(l) = &f.location {
            m.serialize_entry("location", &Sorted(l))?;
        }
        m.serialize_entry("message", &f.message)?;
        if !f.related.is_empty() {
            m.serialize_entry("related", &Sorted(&f.related))?;
        }
        m.serialize_entry("rule", &f.rule)?;
        m.end()
    }
}

impl Serialize for Sorted<&Vec<Location>> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(Sorted))
    }
}

impl Serialize for Sorted<&Location> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let l = self.0;
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("column", &l.column)?;
        m.serialize_entry("file", &l.file)?;
        m.serialize_entry("line", &l.line)?;
        m.end()
    }
}

/// Writes `text` (pretty JSON, no raw newline inside strings) with every
/// line but the first indented by `indent`, to nest it in a document.
fn write_indented(out: &mut impl Write, text: &str, indent: &str) -> std::io::Result<()> {
    Indented {
        out,
        indent: indent.as_bytes(),
    }
    .write_all(text.as_bytes())
}

/// SARIF results waiting for their `ruleIndex`: each result's text up to
/// `"ruleIndex": `, and per result its length and rule.
#[derive(Default)]
struct SarifResults {
    spill: Spill,
    /// (bytes of the result in `spill`, rule id's number in `rules`)
    results: Vec<(usize, u32)>,
    /// Rule ids in the order first seen.
    rules: Vec<String>,
    rule_numbers: std::collections::HashMap<String, u32>,
}

/// Where [`SarifResults`] keeps result text.
enum Spill {
    Memory(Vec<u8>),
    File(std::io::BufWriter<std::fs::File>),
}

impl Default for Spill {
    fn default() -> Spill {
        Spill::Memory(Vec::new())
    }
}

impl SarifResults {
    /// Keeps results in a temporary file rather than memory, when one can
    /// be made.
    fn spill_to_file(&mut self) {
        if let Ok(f) = tempfile::tempfile() {
            self.spill = Spill::File(std::io::BufWriter::new(f));
        }
    }

    fn push(&mut self, report: &Report, f: &Finding) -> std::io::Result<()> {
        use serde_json::json;
        let result = json!({
            "ruleId": f.rule,
            "level": f.level.as_str(),
            "message": { "text": match &f.hint {
                Some(h) => format!("{} (hint: {h})", f.message),
                None => f.message.clone(),
            } },
            "locations": [{ "physicalLocation": sarif_physical(report, f) }],
        });
        let text = serde_json::to_string_pretty(&result).map_err(std::io::Error::other)?;
        // `ruleIndex` sorts after every other key of a result: the text
        // without it ends in "\n}", where it goes.
        let body = text.strip_suffix("\n}").unwrap_or(&text);
        let mut buf = Vec::with_capacity(body.len() + 64);
        write_indented(&mut buf, body, "        ")?;
        buf.extend_from_slice(b",\n          \"ruleIndex\": ");
        match &mut self.spill {
            Spill::Memory(v) => v.extend_from_slice(&buf),
            Spill::File(w) => w.write_all(&buf)?,
        }
        let next = self.rules.len() as u32;
        let number = *self
            .rule_numbers
            .entry(f.rule.clone())
            .or_insert_with(|| next);
        if number == next {
            self.rules.push(f.rule.clone());
        }
        self.results.push((buf.len(), number));
        Ok(())
    }

    /// Writes the results with their `ruleIndex`, then the tool and its
    /// rules, to the end of the document.
    fn finish(
        self,
        out: &mut impl Write,
        rules_help: &dyn Fn(&str) -> Option<String>,
    ) -> std::io::Result<()> {
        use serde_json::json;
        use std::io::{Read, Seek};
        let mut sorted: Vec<(&str, u32)> = self
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| (r.as_str(), i as u32))
            .collect();
        sorted.sort_unstable();
        let mut index = vec![0usize; sorted.len()];
        for (i, (_, number)) in sorted.iter().enumerate() {
            index[*number as usize] = i;
        }
        let mut source: Box<dyn Read> = match self.spill {
            Spill::Memory(v) => Box::new(std::io::Cursor::new(v)),
            Spill::File(w) => {
                let mut f = w.into_inner().map_err(|e| e.into_error())?;
                f.rewind()?;
                Box::new(std::io::BufReader::new(f))
            }
        };
        let mut buf = Vec::new();
        for (i, (len, number)) in self.results.iter().enumerate() {
            out.write_all(if i == 0 {
                b"\n        "
            } else {
                b",\n        "
            })?;
            buf.resize(*len, 0);
            source.read_exact(&mut buf)?;
            out.write_all(&buf)?;
            write!(out, "{}\n        }}", index[*number as usize])?;
        }
        out.write_all(if self.results.is_empty() {
            b"],\n"
        } else {
            b"\n      ],\n"
        })?;
        let rules: Vec<_> = sorted
            .iter()
            .map(|(id, _)| {
                let mut r = json!({ "id": id, "name": id });
                if let Some(h) = rules_help(id) {
                    r["shortDescription"] = json!({ "text": h });
                }
                r
            })
            .collect();
        let tool = json!({ "driver": {
            "name": "olm-catalog",
            "version": env!("CARGO_PKG_VERSION"),
            "informationUri": "https://olm.operatorframework.io/",
            "rules": rules,
        }});
        let tool = serde_json::to_string_pretty(&tool).map_err(std::io::Error::other)?;
        out.write_all(b"      \"tool\": ")?;
        write_indented(out, &tool, "      ")?;
        out.write_all(b"\n    }\n  ],\n  \"version\": \"2.1.0\"\n}\n")
    }
}

/// The SARIF physicalLocation of a finding: its location, else the
/// report's subject as a file.
fn sarif_physical(report: &Report, f: &Finding) -> serde_json::Value {
    use serde_json::json;
    let subject;
    let loc = match &f.location {
        Some(l) => l,
        None => {
            subject = Location::file(&report.subject);
            &subject
        }
    };
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
    physical
}

/// ANSI escapes of human output, empty without color.
struct Colors {
    red: &'static str,
    yellow: &'static str,
    blue: &'static str,
    bold: &'static str,
    reset: &'static str,
}

impl Colors {
    fn new(color: bool) -> Colors {
        if color {
            Colors {
                red: "\x1b[31;1m",
                yellow: "\x1b[33;1m",
                blue: "\x1b[34;1m",
                bold: "\x1b[1m",
                reset: "\x1b[0m",
            }
        } else {
            Colors {
                red: "",
                yellow: "",
                blue: "",
                bold: "",
                reset: "",
            }
        }
    }
}

/// Renders everything `reports` writes with `format` to a string.
fn render(reports: &[Report], writer: ReportWriter<'_, Vec<u8>>) -> String {
    let mut writer = writer;
    // The string holds the whole output anyway.
    writer.spill_to_file = false;
    // Writing to a Vec fails only when a report cannot be serialized (a
    // path that is not UTF-8 in JSON); such a report's output is cut short.
    for r in reports {
        if writer.write(r).is_err() {
            break;
        }
    }
    let out = writer.finish().unwrap_or_default();
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Renders findings for a terminal, rustc style.
pub fn render_human(reports: &[Report], color: bool) -> String {
    render(
        reports,
        ReportWriter::new(Vec::new(), Format::Human).color(color),
    )
}

/// One report's findings, rustc style.
fn human_report(out: &mut String, report: &Report, c: &Colors) {
    let (blue, bold, reset) = (c.blue, c.bold, c.reset);
    for f in &report.findings {
        let lc = match f.level {
            Level::Error => c.red,
            Level::Warning => c.yellow,
        };
        let _ = writeln!(
            out,
            "{lc}{}[{}]{reset}{bold}: {}{reset}",
            f.level.as_str(),
            f.rule,
            f.message
        );
        match &f.location {
            Some(loc) => write_location(out, loc, blue, lc, reset),
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
    render(reports, ReportWriter::new(Vec::new(), Format::Json))
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
    render(
        reports,
        ReportWriter::new(Vec::new(), Format::Sarif).rules_help(rules_help),
    )
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

    /// The JSON written field by field, keys sorted, is what a
    /// `serde_json::Value` of the report writes (as it was written before):
    /// a field added to `Finding` or `Location` and not to `Sorted` fails.
    #[test]
    fn json_report_streamed_is_the_value_written_pretty() {
        let mut reports = sample();
        let mut more = Finding::error("r", "with \"quotes\" and \n a break\u{2028}")
            .at(Location::file("a/b.yaml"))
            .related(Location::file("c.yaml"))
            .related(Location::file("d.yaml"));
        more.hint = None;
        reports.push(Report {
            subject: "second".into(),
            findings: vec![more],
        });
        reports.push(Report {
            subject: "empty".into(),
            findings: vec![],
        });
        let mut w = ReportWriter::new(Vec::new(), Format::Json);
        for r in &reports {
            w.write(r).expect("write");
        }
        let streamed = String::from_utf8(w.finish().expect("finish")).expect("utf-8");
        let mut expected = String::from("{\n  \"reports\": [");
        for (i, r) in reports.iter().enumerate() {
            expected.push_str(if i == 0 { "\n    " } else { ",\n    " });
            let value = serde_json::to_value(r).expect("value");
            let text = serde_json::to_string_pretty(&value).expect("text");
            expected.push_str(&text.replace('\n', "\n    "));
        }
        assert!(
            streamed.starts_with(&expected),
            "{streamed}\n---\n{expected}"
        );
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

    /// Reports with several rules, a finding without location, a report
    /// without findings.
    fn many() -> Vec<Report> {
        let mut out = sample();
        out.push(Report {
            subject: "empty".into(),
            findings: vec![],
        });
        out.push(Report {
            subject: "c d".into(),
            findings: vec![
                Finding::error("b-rule", "no place"),
                Finding::warning("a-rule", "x").at(Location::file("c d/f.yaml")),
                Finding::error("csv-version-not-semver", "again"),
            ],
        });
        out
    }

    /// `text` is what serde_json writes for its own value: the
    /// hand-assembled framing of the streaming writer matches serde's.
    fn assert_canonical(text: &str) {
        let v: serde_json::Value = serde_json::from_str(text).expect("json");
        let again = serde_json::to_string_pretty(&v).expect("json") + "\n";
        assert_eq!(text, again);
    }

    #[test]
    fn streamed_json_is_the_report_value() {
        for reports in [vec![], sample(), many()] {
            let text = render_json(&reports);
            assert_canonical(&text);
            let value = serde_json::to_string_pretty(&report_value(&reports)).expect("json");
            assert_eq!(text, value + "\n");
        }
    }

    #[test]
    fn streamed_sarif_points_rule_indexes_at_the_run_rules() {
        let help = |id: &str| (id == "a-rule").then(|| "the a rule".to_string());
        for reports in [vec![], sample(), many()] {
            let text = render_sarif(&reports, &help);
            assert_canonical(&text);
            // Through a temporary file, as a command writes it.
            let mut w = ReportWriter::new(Vec::new(), Format::Sarif).rules_help(&help);
            for r in &reports {
                w.write(r).expect("write");
            }
            assert_eq!(
                String::from_utf8(w.finish().expect("finish")).expect("utf-8"),
                text
            );
            let v: serde_json::Value = serde_json::from_str(&text).expect("json");
            let run = &v["runs"][0];
            let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
            let ids: Vec<&str> = rules.iter().filter_map(|r| r["id"].as_str()).collect();
            let mut sorted = ids.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(ids, sorted);
            let results = run["results"].as_array().expect("results");
            let findings: usize = reports.iter().map(|r| r.findings.len()).sum();
            assert_eq!(results.len(), findings);
            for r in results {
                let i = r["ruleIndex"].as_u64().expect("index") as usize;
                assert_eq!(rules[i]["id"], r["ruleId"]);
            }
        }
    }

    #[test]
    fn streamed_human_counts_every_report() {
        let mut w = ReportWriter::new(Vec::new(), Format::Human);
        for r in &many() {
            w.write(r).expect("write");
        }
        assert_eq!(
            w.summary(),
            Summary {
                checked: 3,
                errors: 3,
                warnings: 2
            }
        );
        let text = String::from_utf8(w.finish().expect("finish")).expect("utf-8");
        assert_eq!(text, render_human(&many(), false));
        assert!(text.ends_with("3 checked: 3 errors, 2 warnings\n"));
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
