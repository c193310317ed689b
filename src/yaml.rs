//! YAML with source positions.
//!
//! Kubernetes manifests are YAML (or JSON, which parses as YAML). serde-based
//! parsers throw positions away, but every diagnostic of this tool points at a
//! file, line and column, so manifests are parsed here into a [`Node`] tree that
//! keeps a [`Span`] for every value and every mapping key.
//!
//! Scalars are resolved the way Kubernetes tooling (go-yaml v2 behind
//! `sigs.k8s.io/yaml`) resolves them: YAML 1.1 booleans (`yes`, `on`, …),
//! octal `0777`, hex, `~` for null. The tree converts to [`serde_json::Value`]
//! with [`Node::to_json`], which is what opm stores and serves.
//!
//! The parser is hardened against hostile input: nesting depth, alias
//! expansion (the "billion laughs" bomb) and total node count are bounded, and
//! duplicate mapping keys are reported (the last one wins, as in go-yaml).

use std::fmt;

mod fast;
mod prune;
mod quoted;

pub use prune::{prune, Rule};

use saphyr_parser::{Event, Parser, ScalarStyle};

/// Deepest nesting of sequences and mappings accepted.
pub const MAX_DEPTH: usize = 256;
/// Most nodes one file may expand to, aliases included.
pub const MAX_NODES: usize = 2_000_000;

/// A position range in a source text. Lines and columns are 1-based; columns
/// count characters, as editors and SARIF do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// Line of the first character.
    pub line: u32,
    /// Column of the first character.
    pub column: u32,
    /// Line just past the last character.
    pub end_line: u32,
    /// Column just past the last character.
    pub end_column: u32,
}

impl Span {
    /// A parser span as a [`Span`] of the original text (see [`quoted`]).
    fn from_saphyr(span: saphyr_parser::Span, shifts: &quoted::Shifts) -> Span {
        let (line, end_line) = (span.start.line() as u32, span.end.line() as u32);
        Span {
            line,
            column: shifts.column(line, span.start.col() as u32 + 1),
            end_line,
            end_column: shifts.column(end_line, span.end.col() as u32 + 1),
        }
    }

    /// A span covering one point.
    pub fn point(line: u32, column: u32) -> Span {
        Span {
            line,
            column,
            end_line: line,
            end_column: column,
        }
    }
}

/// A parsed YAML value with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The resolved value.
    pub value: Value,
    /// Where the value stands in the source.
    pub span: Span,
    /// For scalars that did not resolve to a string, the text as written;
    /// [`Node::raw`] gives it for every scalar. Strings are not stored twice:
    /// their text is the value.
    raw: Option<Box<str>>,
    /// Whether the scalar was quoted or a block scalar (a string then, unless
    /// a tag such as `!!int` says otherwise).
    pub quoted: bool,
}

/// A resolved YAML value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`, `~` or nothing.
    Null,
    /// A boolean, YAML 1.1 spellings included.
    Bool(bool),
    /// An integer that fits in i64.
    Int(i64),
    /// A non-negative integer beyond i64.
    UInt(u64),
    /// A floating-point number.
    Float(f64),
    /// A string.
    Str(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in source order, keys already made unique (last one wins).
    Map(Vec<Entry>),
}

/// One key/value pair of a mapping.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The key as a string (non-string keys are written as JSON would).
    pub key: String,
    /// Where the key stands.
    pub key_span: Span,
    /// The value.
    pub value: Node,
}

/// A mapping key that appeared more than once in one mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplicateKey {
    /// The key.
    pub key: String,
    /// The earlier occurrence, whose value was dropped.
    pub first: Span,
    /// The later occurrence, whose value was kept.
    pub second: Span,
}

/// One document of a YAML stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// The document's root value.
    pub root: Node,
    /// Duplicate keys found in this document.
    pub duplicate_keys: Vec<DuplicateKey>,
}

/// Why a text could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YamlError {
    /// What went wrong.
    pub message: String,
    /// Where (1-based line and column).
    pub span: Span,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {} column {}",
            self.message, self.span.line, self.span.column
        )
    }
}

impl std::error::Error for YamlError {}

/// A segment of a path into a document: a mapping key or a sequence index.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Seg {
    /// A mapping key.
    Key(String),
    /// A sequence index.
    Index(usize),
}

impl From<&str> for Seg {
    fn from(k: &str) -> Seg {
        Seg::Key(k.to_string())
    }
}
impl From<String> for Seg {
    fn from(k: String) -> Seg {
        Seg::Key(k)
    }
}
impl From<usize> for Seg {
    fn from(i: usize) -> Seg {
        Seg::Index(i)
    }
}

/// Builds a `[Seg; N]` from keys and indexes: `path!["spec", "install", 0]`.
#[macro_export]
macro_rules! path {
    ($($seg:expr),* $(,)?) => { [$($crate::yaml::Seg::from($seg)),*] };
}

/// Renders a path as `spec.install.deployments[0].name`.
pub fn path_to_string(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => {
                out.push_str(&format!("[{i}]"));
            }
        }
    }
    out
}

impl Node {
    /// Whether `self` and `other` hold the same content, wherever each
    /// stands: values, keys in order, scalars' text as written and quoting;
    /// spans are not compared. Nothing is allocated, so it is a cheap test
    /// before work that only differences can change.
    pub fn same_content(&self, other: &Node) -> bool {
        if self.quoted != other.quoted || self.raw != other.raw {
            return false;
        }
        match (&self.value, &other.value) {
            (Value::Seq(a), Value::Seq(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_content(y))
            }
            (Value::Map(a), Value::Map(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(x, y)| x.key == y.key && x.value.same_content(&y.value))
            }
            (a, b) => a == b,
        }
    }

    /// For a scalar, the text as written (before resolution), so that checks
    /// can say "`1.2` was read as a number"; `None` for collections.
    pub fn raw(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => self.raw.as_deref(),
        }
    }

    /// The value of `key` if this is a mapping that has it.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }

    /// The entry of `key` if this is a mapping that has it.
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        match &self.value {
            Value::Map(entries) => entries.iter().find(|e| e.key == key),
            _ => None,
        }
    }

    /// The string value, if this is a string scalar.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The node at `path`, if every segment exists.
    pub fn at(&self, path: &[Seg]) -> Option<&Node> {
        let mut node = self;
        for seg in path {
            node = match (seg, &node.value) {
                (Seg::Key(k), Value::Map(_)) => node.get(k)?,
                (Seg::Index(i), Value::Seq(items)) => items.get(*i)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// Where `path` points: the value if it exists; for a missing last key, the
    /// mapping that lacks it; otherwise the deepest existing ancestor. When the
    /// path names a key that exists, the span is the value's; use
    /// [`Node::locate_key`] to point at the key itself.
    pub fn locate(&self, path: &[Seg]) -> Span {
        let mut node = self;
        for seg in path {
            let next = match (seg, &node.value) {
                (Seg::Key(k), Value::Map(_)) => node.get(k),
                (Seg::Index(i), Value::Seq(items)) => items.get(*i),
                _ => None,
            };
            match next {
                Some(n) => node = n,
                None => return node.span,
            }
        }
        node.span
    }

    /// Like [`Node::locate`], but when the last segment is an existing key,
    /// the span of the key rather than of its value.
    pub fn locate_key(&self, path: &[Seg]) -> Span {
        if let Some((Seg::Key(last), parent)) = path.split_last() {
            if let Some(p) = self.at(parent) {
                if let Some(e) = p.entry(last) {
                    return e.key_span;
                }
            }
        }
        self.locate(path)
    }

    /// Converts to JSON. Mapping keys come out sorted, as Go's encoding/json
    /// writes maps, which is how opm stores and serves manifests.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::UInt(u) => J::from(*u),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map(J::Number)
                // JSON has no NaN or infinity; go's encoder refuses them too.
                .unwrap_or(J::Null),
            Value::Str(s) => J::String(s.clone()),
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => {
                let mut map = serde_json::Map::new();
                for e in entries {
                    map.insert(e.key.clone(), e.value.to_json());
                }
                J::Object(map)
            }
        }
    }

    /// A short name for the value's type, for messages.
    pub fn type_name(&self) -> &'static str {
        match &self.value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) | Value::UInt(_) => "integer",
            Value::Float(_) => "number",
            Value::Str(_) => "string",
            Value::Seq(_) => "sequence",
            Value::Map(_) => "mapping",
        }
    }
}

/// Resolves a plain scalar the way go-yaml v2 (YAML 1.1 core types) does,
/// for a value decoded into Go's `interface{}` as `sigs.k8s.io/yaml` does:
/// a timestamp stays its text, an integer beyond 64 bits becomes the
/// nearest float (Go's JSON writes its exact digits).
fn resolve_plain(text: &str) -> Scalar {
    use crate::goyaml::Resolved;
    Scalar::Other(match crate::goyaml::resolve_plain(text) {
        Resolved::Str | Resolved::Timestamp => return Scalar::Text,
        Resolved::Null => Value::Null,
        Resolved::Bool(b) => Value::Bool(b),
        Resolved::Int(i) => Value::Int(i),
        Resolved::UInt(u) => Value::UInt(u),
        Resolved::Float(f) | Resolved::BigInt(f) => Value::Float(f),
    })
}

/// What a scalar resolved to.
#[derive(Debug, PartialEq)]
enum Scalar {
    /// The string it was written as: the caller moves the parser's text into
    /// the node instead of copying it (most scalars of a manifest are this).
    Text,
    /// Anything else (a string too for `!!binary`).
    Other(Value),
}

/// Resolves a scalar with its style and tag as go-yaml v2's decoder does: an
/// untagged quoted scalar is a string; `!!str` and tags go-yaml cannot
/// resolve (`!`, `!local`, `!!set`, ...) give the text; `!!binary` its
/// base64-decoded bytes; `!!int`, `!!float`, `!!bool`, `!!null` and
/// `!!timestamp` resolve the text, quoted or not, and must agree (an integer
/// may be a `!!float`).
fn resolve_scalar(
    text: &str,
    quoted: bool,
    tag: Option<&saphyr_parser::Tag>,
) -> Result<Scalar, String> {
    let Some(tag) = tag else {
        return Ok(if quoted {
            Scalar::Text
        } else {
            resolve_plain(text)
        });
    };
    if !tag.is_yaml_core_schema() {
        return Ok(Scalar::Text);
    }
    let v = resolve_plain(text);
    let ok = match (tag.suffix.as_str(), &v) {
        ("binary", _) => {
            use base64::Engine as _;
            let data: String = text.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
            return base64::engine::general_purpose::STANDARD
                .decode(data)
                .map(|b| Scalar::Other(Value::Str(String::from_utf8_lossy(&b).into_owned())))
                .map_err(|_| "!!binary value contains invalid base64 data".to_string());
        }
        ("int", Scalar::Other(Value::Int(_) | Value::UInt(_)))
        | ("float", Scalar::Other(Value::Float(_)))
        | ("bool", Scalar::Other(Value::Bool(_)))
        | ("null", Scalar::Other(Value::Null)) => true,
        ("float", Scalar::Other(Value::Int(i))) => {
            return Ok(Scalar::Other(Value::Float(*i as f64)))
        }
        ("timestamp", Scalar::Text) => crate::goyaml::parse_timestamp(text),
        ("int" | "float" | "bool" | "null" | "timestamp", _) => false,
        _ => return Ok(Scalar::Text),
    };
    if ok {
        Ok(v)
    } else {
        Err(format!(
            "cannot decode `{text}` as a !!{} (go-yaml refuses it too)",
            tag.suffix
        ))
    }
}

/// Writes a resolved scalar key the way sigs.k8s.io/yaml turns a non-string
/// key into a JSON object key.
fn key_string(node: Node) -> Result<String, &'static str> {
    Ok(match node.value {
        Value::Str(s) => s,
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        // sigs.k8s.io/yaml formats a float key as a float32.
        Value::Float(f) => crate::goyaml::format_float_g32(f),
        Value::Seq(_) | Value::Map(_) => return Err("a mapping key must be a scalar"),
    })
}

enum Frame {
    Seq {
        start: Span,
        anchor: usize,
        items: Vec<Node>,
    },
    Map {
        start: Span,
        anchor: usize,
        entries: Vec<Entry>,
        pending_key: Option<Node>,
        /// Keys set by merge keys (`<<`), which a later key may override
        /// without being a duplicate.
        merged: Vec<String>,
    },
}

struct Builder {
    anchors: std::collections::HashMap<usize, Node>,
    nodes: usize,
    duplicate_keys: Vec<DuplicateKey>,
    /// Emptied vectors of finished collections, reused for the next ones:
    /// a collection grows in one of these and is then copied into a vector
    /// of its exact length. Grown in place, a tree's vectors held about a
    /// third more than their entries (a CRD of megabytes has tens of
    /// thousands of small mappings).
    spare_entries: Vec<Vec<Entry>>,
    spare_items: Vec<Vec<Node>>,
}

/// `items` moved into a vector of their exact length; `items`, emptied
/// with its capacity, goes back to `spares`.
fn exact<T>(mut items: Vec<T>, spares: &mut Vec<Vec<T>>) -> Vec<T> {
    let mut out = Vec::with_capacity(items.len());
    out.append(&mut items);
    spares.push(items);
    out
}

fn count_nodes(node: &Node) -> usize {
    match &node.value {
        Value::Seq(items) => 1 + items.iter().map(count_nodes).sum::<usize>(),
        Value::Map(entries) => 1 + entries.iter().map(|e| count_nodes(&e.value)).sum::<usize>(),
        _ => 1,
    }
}

fn err(message: impl Into<String>, span: Span) -> YamlError {
    YamlError {
        message: message.into(),
        span,
    }
}

impl Builder {
    fn add_nodes(&mut self, n: usize, span: Span) -> Result<(), YamlError> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > MAX_NODES {
            return Err(err(
                format!("document expands to more than {MAX_NODES} values (an alias bomb?)"),
                span,
            ));
        }
        Ok(())
    }

    /// Attaches a finished node to the frame on top of the stack (or returns it
    /// as a document root).
    fn attach(&mut self, stack: &mut [Frame], node: Node) -> Result<Option<Node>, YamlError> {
        let Some(top) = stack.last_mut() else {
            return Ok(Some(node));
        };
        match top {
            Frame::Seq { items, .. } => items.push(node),
            Frame::Map {
                entries,
                pending_key,
                merged,
                ..
            } => match pending_key.take() {
                None => *pending_key = Some(node),
                Some(key) => {
                    if key.raw() == Some("<<") && !key.quoted {
                        apply_merge(entries, merged, node)?;
                        return Ok(None);
                    }
                    let key_span = key.span;
                    let name = key_string(key).map_err(|m| err(m, key_span))?;
                    if let Some(pos) = entries.iter().position(|e| e.key == name) {
                        let old = entries.remove(pos);
                        if let Some(m) = merged.iter().position(|k| *k == name) {
                            // Overrides a merged key: not a duplicate.
                            merged.swap_remove(m);
                        } else {
                            self.duplicate_keys.push(DuplicateKey {
                                key: name.clone(),
                                first: old.key_span,
                                second: key_span,
                            });
                        }
                    }
                    entries.push(Entry {
                        key: name,
                        key_span,
                        value: node,
                    });
                }
            },
        }
        Ok(None)
    }
}

/// Applies a YAML merge key (`<<: *base`) where it stands, as go-yaml v2
/// does: the merged mapping's keys are set over what the mapping has so far,
/// and keys after the merge key override them; of a sequence of mappings the
/// earlier ones win. (PyYAML lets a mapping's own keys win wherever they are.)
fn apply_merge(
    entries: &mut Vec<Entry>,
    merged: &mut Vec<String>,
    value: Node,
) -> Result<(), YamlError> {
    let sources: Vec<Node> = match value.value {
        Value::Map(_) => vec![value],
        Value::Seq(items) => items.into_iter().rev().collect(),
        _ => return Err(err("a merge key (<<) needs a mapping", value.span)),
    };
    for source in sources {
        let Value::Map(src_entries) = source.value else {
            return Err(err("a merge key (<<) needs a mapping", source.span));
        };
        for e in src_entries {
            if !merged.contains(&e.key) {
                merged.push(e.key.clone());
            }
            match entries.iter().position(|x| x.key == e.key) {
                Some(pos) => entries[pos] = e,
                None => entries.push(e),
            }
        }
    }
    Ok(())
}

/// What saphyr-parser says of a quoted scalar that go-yaml reads (see [`quoted`]).
const UNDER_INDENTED_QUOTE: &str = "invalid indentation in quoted scalar";

/// Parses every document of a YAML (or JSON) text.
///
/// Accepts what go-yaml v2 accepts where YAML 1.2 is stricter: the
/// continuation lines of a quoted scalar may stand left of its block (see
/// `yaml/quoted.rs`). Positions are those of `text`.
pub fn parse_documents(text: &str) -> Result<Vec<Document>, YamlError> {
    // Most manifests are block-style YAML, which the fast reader takes in
    // one pass; it gives up on anything else, and saphyr-parser reads that.
    let mut sink = Sink::default();
    if fast::parse(text, &mut sink).is_ok() {
        return Ok(sink.docs);
    }
    parse_with_saphyr(text)
}

/// [`parse_documents`] by saphyr-parser alone: the reference the fast reader
/// is tested against.
fn parse_with_saphyr(text: &str) -> Result<Vec<Document>, YamlError> {
    let mut shifts = quoted::Shifts::default();
    let mut padded: Option<String> = None;
    let mut rounds: usize = 0;
    loop {
        let current = padded.as_deref().unwrap_or(text);
        match parse_text(current, &shifts) {
            Ok(docs) => return Ok(docs),
            Err(Fail { error, retry }) => {
                // Each round indents one more scalar or line, so this ends;
                // the budget bounds the work hostile input can cause.
                rounds += 1;
                if rounds.saturating_mul(text.len()) > RETRY_BUDGET && rounds > 64 {
                    return Err(error);
                }
                let next = match retry {
                    Some(Retry::Quote(at)) => quoted::pad_quoted(current, at, &mut shifts),
                    Some(Retry::Line(at)) => quoted::pad_line(current, at, &mut shifts),
                    Some(Retry::Untab(at)) => quoted::untab_separator(current, at),
                    None => None,
                };
                match next {
                    Some(next) => padded = Some(next),
                    None => return Err(error),
                }
            }
        }
    }
}

/// Bytes parsed again, at most, in making saphyr-parser read what go-yaml
/// reads (see [`quoted`]).
const RETRY_BUDGET: usize = 256 << 20;

/// Why one parse failed.
struct Fail {
    error: YamlError,
    /// How to make saphyr-parser read it as go-yaml does, if this is one of
    /// the places where only saphyr-parser minds indentation.
    retry: Option<Retry>,
}

/// Where saphyr-parser wants more indentation than go-yaml.
enum Retry {
    /// A quoted scalar whose opening quote is at this character index.
    Quote(usize),
    /// The line of this character index: a tab at the start of a quoted
    /// scalar's continuation line, or a line inside a flow collection.
    Line(usize),
    /// Tabs after a `:`, before this character index.
    Untab(usize),
}

impl From<YamlError> for Fail {
    fn from(error: YamlError) -> Fail {
        Fail { error, retry: None }
    }
}

/// One parse of `text` by saphyr-parser; on failure, the error and what to
/// retry.
fn parse_text(text: &str, shifts: &quoted::Shifts) -> Result<Vec<Document>, Fail> {
    let mut sink = Sink::default();
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|e| {
            let m = e.marker();
            let line = m.line() as u32;
            let retry = match e.info() {
                UNDER_INDENTED_QUOTE => Some(Retry::Quote(m.index())),
                // Only inside a quoted scalar, and only in flow context.
                "tab cannot be used as indentation"
                | "invalid indentation"
                | "invalid indentation in flow construct" => Some(Retry::Line(m.index())),
                "':' must be followed by a valid YAML whitespace" => Some(Retry::Untab(m.index())),
                _ => None,
            };
            let at = Span::point(line, shifts.column(line, m.col() as u32 + 1));
            Fail {
                error: err(e.info().to_string(), at),
                retry,
            }
        })?;
        sink.event(event, Span::from_saphyr(span, shifts))?;
    }
    Ok(sink.docs)
}

/// Builds documents from parser events: saphyr-parser's, or those of the
/// fast reader of block-style text ([`fast`]), which are the same.
struct Sink {
    builder: Builder,
    stack: Vec<Frame>,
    root: Option<Node>,
    in_doc: bool,
    docs: Vec<Document>,
}

impl Default for Sink {
    fn default() -> Sink {
        Sink {
            builder: Builder {
                anchors: Default::default(),
                nodes: 0,
                duplicate_keys: Vec::new(),
                spare_entries: Vec::new(),
                spare_items: Vec::new(),
            },
            stack: Vec::new(),
            root: None,
            in_doc: false,
            docs: Vec::new(),
        }
    }
}

impl Sink {
    /// Takes one event, which stands at `here` in the source.
    fn event(&mut self, event: Event<'_>, here: Span) -> Result<(), YamlError> {
        let Sink {
            builder,
            stack,
            root,
            in_doc,
            docs,
        } = self;
        match event {
            Event::StreamStart | Event::StreamEnd | Event::Nothing => {}
            Event::DocumentStart(_) => {
                *in_doc = true;
                *root = None;
                builder.duplicate_keys.clear();
            }
            Event::DocumentEnd => {
                if *in_doc {
                    let node = root.take().unwrap_or(Node {
                        value: Value::Null,
                        span: here,
                        raw: None,
                        quoted: false,
                    });
                    docs.push(Document {
                        root: node,
                        duplicate_keys: std::mem::take(&mut builder.duplicate_keys),
                    });
                }
                *in_doc = false;
            }
            Event::Alias(id) => {
                let Some(target) = builder.anchors.get(&id).cloned() else {
                    return Err(err("alias to an unknown anchor", here));
                };
                builder.add_nodes(count_nodes(&target), here)?;
                let mut node = target;
                node.span = here;
                if let Some(n) = builder.attach(stack, node)? {
                    *root = Some(n);
                }
            }
            Event::Scalar(value, style, anchor, tag) => {
                builder.add_nodes(1, here)?;
                let quoted = !matches!(style, ScalarStyle::Plain);
                let (resolved, raw) = match resolve_scalar(&value, quoted, tag.as_deref())
                    .map_err(|m| err(m, here))?
                {
                    // The parser's string becomes the node's: no copy.
                    Scalar::Text => (Value::Str(value.into_owned()), None),
                    Scalar::Other(v @ Value::Str(_)) => (v, None),
                    Scalar::Other(v) => (v, Some(value.as_ref().into())),
                };
                let node = Node {
                    raw,
                    value: resolved,
                    span: here,
                    quoted,
                };
                if anchor > 0 {
                    builder.anchors.insert(anchor, node.clone());
                }
                if let Some(n) = builder.attach(stack, node)? {
                    *root = Some(n);
                }
            }
            Event::SequenceStart(anchor, _) => {
                builder.add_nodes(1, here)?;
                if stack.len() >= MAX_DEPTH {
                    return Err(err(format!("nesting deeper than {MAX_DEPTH} levels"), here));
                }
                stack.push(Frame::Seq {
                    start: here,
                    anchor,
                    items: builder.spare_items.pop().unwrap_or_default(),
                });
            }
            Event::MappingStart(anchor, _) => {
                builder.add_nodes(1, here)?;
                if stack.len() >= MAX_DEPTH {
                    return Err(err(format!("nesting deeper than {MAX_DEPTH} levels"), here));
                }
                stack.push(Frame::Map {
                    start: here,
                    anchor,
                    entries: builder.spare_entries.pop().unwrap_or_default(),
                    pending_key: None,
                    merged: Vec::new(),
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                // A collection spans from its start event to the end of its
                // end event.
                let span_to = |start: Span| Span {
                    line: start.line,
                    column: start.column,
                    end_line: here.end_line,
                    end_column: here.end_column,
                };
                let (node, anchor) = match stack.pop() {
                    Some(Frame::Seq {
                        start,
                        anchor,
                        items,
                    }) => (
                        Node {
                            value: Value::Seq(exact(items, &mut builder.spare_items)),
                            span: span_to(start),
                            raw: None,
                            quoted: false,
                        },
                        anchor,
                    ),
                    Some(Frame::Map {
                        start,
                        anchor,
                        entries,
                        ..
                    }) => (
                        Node {
                            value: Value::Map(exact(entries, &mut builder.spare_entries)),
                            span: span_to(start),
                            raw: None,
                            quoted: false,
                        },
                        anchor,
                    ),
                    None => return Err(err("unbalanced collection end", here)),
                };
                if anchor > 0 {
                    builder.anchors.insert(anchor, node.clone());
                }
                if let Some(n) = builder.attach(stack, node)? {
                    *root = Some(n);
                }
            }
        }
        Ok(())
    }
}

/// Positions of byte offsets in one text, asked in increasing order (the
/// objects of a JSON stream, say): each answer walks on from the previous
/// one, so a whole file costs one pass instead of one pass per object.
/// An offset before the previous one starts again from the beginning.
pub struct PositionCursor<'a> {
    bytes: &'a [u8],
    at: usize,
    line: u32,
    column: u32,
}

impl<'a> PositionCursor<'a> {
    /// A cursor at the start of `text`.
    pub fn new(text: &'a str) -> PositionCursor<'a> {
        PositionCursor {
            bytes: text.as_bytes(),
            at: 0,
            line: 1,
            column: 1,
        }
    }

    /// The line and column (in characters) of byte `offset`, as
    /// [`position_of_byte`] gives them.
    pub fn position(&mut self, offset: usize) -> Span {
        let offset = offset.min(self.bytes.len());
        if offset < self.at {
            (self.at, self.line, self.column) = (0, 1, 1);
        }
        for &b in &self.bytes[self.at..offset] {
            if b == b'\n' {
                self.line += 1;
                self.column = 1;
            } else if b & 0xC0 != 0x80 {
                // Not a UTF-8 continuation byte: a new character.
                self.column += 1;
            }
        }
        self.at = offset;
        Span::point(self.line, self.column)
    }
}

/// Converts a byte offset problem in non-UTF-8 input into a position.
pub fn position_of_byte(bytes: &[u8], offset: usize) -> Span {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() as u32 + 1;
    let line_start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map(|p| p + 1)
        .unwrap_or(0);
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count() as u32
        + 1;
    Span::point(line, column)
}

/// Why a [`Node`] did not deserialize into a type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeError(String);

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DeError {}

impl serde::de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError(msg.to_string())
    }
}

/// Deserializes straight from the located tree, with the same values
/// [`Node::to_json`] would give (NaN and infinities as null), so decoding a
/// manifest needs no intermediate JSON tree: whole-catalog graph checks
/// spend their time in YAML, not in copies of it.
impl<'de> serde::Deserializer<'de> for &'de Node {
    type Error = DeError;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        match &self.value {
            Value::Null => v.visit_unit(),
            Value::Bool(b) => v.visit_bool(*b),
            Value::Int(i) => v.visit_i64(*i),
            Value::UInt(u) => v.visit_u64(*u),
            Value::Float(f) if f.is_finite() => v.visit_f64(*f),
            Value::Float(_) => v.visit_unit(),
            Value::Str(s) => v.visit_borrowed_str(s),
            Value::Seq(items) => v.visit_seq(serde::de::value::SeqDeserializer::new(items.iter())),
            Value::Map(entries) => v.visit_map(NodeMap {
                entries: entries.iter(),
                value: None,
            }),
        }
    }

    fn deserialize_option<V: serde::de::Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        match &self.value {
            Value::Null => v.visit_none(),
            Value::Float(f) if !f.is_finite() => v.visit_none(),
            _ => v.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, DeError> {
        v.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: serde::de::Visitor<'de>>(
        self,
        v: V,
    ) -> Result<V::Value, DeError> {
        v.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct enum
        identifier
    }
}

impl<'de> serde::de::IntoDeserializer<'de, DeError> for &'de Node {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

/// A mapping's entries as serde map access; keys are borrowed strings.
struct NodeMap<'de> {
    entries: std::slice::Iter<'de, Entry>,
    value: Option<&'de Node>,
}

impl<'de> serde::de::MapAccess<'de> for NodeMap<'de> {
    type Error = DeError;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let Some(e) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(&e.value);
        seed.deserialize(serde::de::value::BorrowedStrDeserializer::new(&e.key))
            .map(Some)
    }

    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, DeError> {
        match self.value.take() {
            Some(n) => seed.deserialize(n),
            None => Err(serde::de::Error::custom(
                "a map value was asked for before its key",
            )),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Document {
        let mut docs = parse_documents(text).expect("parses");
        assert_eq!(docs.len(), 1);
        docs.remove(0)
    }

    #[test]
    fn position_cursor_agrees_with_position_of_byte() {
        let text = "{\"a\": 1}\n  {\"é\": \"ü\"} {\"b\": 2}\n\n{}";
        let mut cursor = PositionCursor::new(text);
        let offsets: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        for &o in &offsets {
            assert_eq!(
                cursor.position(o),
                position_of_byte(text.as_bytes(), o),
                "{o}"
            );
        }
        // Going back starts over.
        assert_eq!(cursor.position(1), position_of_byte(text.as_bytes(), 1));
        assert_eq!(
            cursor.position(text.len()),
            position_of_byte(text.as_bytes(), text.len())
        );
    }

    #[test]
    fn positions_point_at_values() {
        let doc = one("a: 1\nspec:\n  version: 1.2.3\n  list:\n  - x\n  - y\n");
        let v = doc.root.at(&path!["spec", "version"]).expect("exists");
        assert_eq!(v.as_str(), Some("1.2.3"));
        assert_eq!((v.span.line, v.span.column), (3, 12));
        let y = doc.root.locate(&path!["spec", "list", 1]);
        assert_eq!((y.line, y.column), (6, 5));
        let k = doc.root.locate_key(&path!["spec", "version"]);
        assert_eq!((k.line, k.column), (3, 3));
        // A missing key points at the mapping that lacks it.
        let missing = doc.root.locate(&path!["spec", "nope"]);
        assert_eq!(missing.line, 3);
    }

    #[test]
    fn resolves_like_go_yaml_v2() {
        let doc = one(
            "a: yes\nb: 'yes'\nc: 0777\nd: 0x1F\ne: 1.2\nf: ~\ng: 1.2.3\nh: 1e3\ni: -5\nj: 1_000\n",
        );
        let j = doc.root.to_json();
        assert_eq!(j["a"], serde_json::json!(true));
        assert_eq!(j["b"], serde_json::json!("yes"));
        assert_eq!(j["c"], serde_json::json!(511));
        assert_eq!(j["d"], serde_json::json!(31));
        assert_eq!(j["e"], serde_json::json!(1.2));
        assert_eq!(j["f"], serde_json::Value::Null);
        assert_eq!(j["g"], serde_json::json!("1.2.3"));
        assert_eq!(j["h"], serde_json::json!(1000.0));
        assert_eq!(j["i"], serde_json::json!(-5));
        assert_eq!(j["j"], serde_json::json!(1000));
        assert_eq!(doc.root.get("e").and_then(|n| n.raw()), Some("1.2"));
    }

    #[test]
    fn duplicate_keys_keep_the_last() {
        let doc = one("a: 1\nb: 2\na: 3\n");
        assert_eq!(doc.root.to_json()["a"], serde_json::json!(3));
        assert_eq!(doc.duplicate_keys.len(), 1);
        assert_eq!(doc.duplicate_keys[0].first.line, 1);
        assert_eq!(doc.duplicate_keys[0].second.line, 3);
    }

    #[test]
    fn multi_document_and_json() {
        let docs = parse_documents("---\na: 1\n---\nb: 2\n").expect("parses");
        assert_eq!(docs.len(), 2);
        let docs = parse_documents("{\"kind\": \"X\", \"n\": [1, 2]}").expect("json parses");
        assert_eq!(docs[0].root.to_json()["n"], serde_json::json!([1, 2]));
    }

    #[test]
    fn merge_keys() {
        let doc = one("base: &b {x: 1, z: 2}\nderived:\n  <<: *b\n  z: 3\n");
        let d = &doc.root.to_json()["derived"];
        assert_eq!(d["x"], serde_json::json!(1));
        assert_eq!(d["z"], serde_json::json!(3));
    }

    #[test]
    fn alias_bomb_is_refused() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for name in ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'] {
            text.push_str(&format!(
                "{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
            prev = name;
        }
        let e = parse_documents(&text).expect_err("bomb");
        assert!(e.message.contains("alias bomb"), "{}", e.message);
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = "[".repeat(10_000);
        let e = parse_documents(&text).expect_err("too deep");
        assert!(e.message.contains("nesting") || e.span.line == 1);
    }

    #[test]
    fn tabs_and_syntax_errors_have_positions() {
        let e = parse_documents("a:\n\tb: 1\n").expect_err("tab");
        assert_eq!(e.span.line, 2);
        let e = parse_documents("a: [1, 2\nb: 3\n").expect_err("unclosed");
        assert!(e.span.line >= 1);
    }

    #[test]
    fn quoted_scalars_and_flow_lines_left_of_their_block() {
        // As go-yaml reads them; positions stay those of the text.
        let text = "spec:\n  icon:\n  - data: \"abc\ndef\n\"\n    type: png\n  list: [a,\nb]\n";
        let doc = one(text);
        let j = doc.root.to_json();
        assert_eq!(j["spec"]["icon"][0]["data"], serde_json::json!("abc def "));
        assert_eq!(j["spec"]["list"], serde_json::json!(["a", "b"]));
        let b = doc.root.at(&path!["spec", "list", 1]).expect("b");
        assert_eq!((b.span.line, b.span.column), (8, 1));
        let t = doc.root.locate_key(&path!["spec", "icon", 0, "type"]);
        assert_eq!((t.line, t.column), (6, 5));
        // A tab as the separator after `:`.
        let doc = one("a:\tb\n");
        assert_eq!(doc.root.to_json()["a"], serde_json::json!("b"));
        // A document marker inside a quoted scalar stays an error.
        assert!(parse_documents("a: \"x\n--- y\"\n").is_err());
    }

    #[test]
    fn tags_resolve_as_go_yaml_does() {
        let doc = one(
            "a: !!int \"7\"\nb: !!float 1\nc: !custom 12\nd: !!str 1\ne: !!binary aGk=\nf: 08\n",
        );
        let j = doc.root.to_json();
        assert_eq!(j["a"], serde_json::json!(7));
        assert_eq!(j["b"], serde_json::json!(1.0));
        assert_eq!(j["c"], serde_json::json!("12"));
        assert_eq!(j["d"], serde_json::json!("1"));
        assert_eq!(j["e"], serde_json::json!("hi"));
        assert_eq!(j["f"], serde_json::json!(8.0));
        let e = parse_documents("a: !!int abc\n").expect_err("not an int");
        assert!(e.message.contains("!!int"), "{}", e.message);
    }

    #[test]
    fn merge_keys_apply_where_they_stand() {
        let doc = one("b: &b {p: 1, q: 1}\nd:\n  p: 0\n  <<: *b\n  q: 2\n");
        let d = &doc.root.to_json()["d"];
        assert_eq!(d, &serde_json::json!({"p": 1, "q": 2}));
        // Overriding a merged key is not a duplicate.
        assert!(doc.duplicate_keys.is_empty(), "{:?}", doc.duplicate_keys);
        let doc = one("a: &a {k: 1}\nb: &b {k: 2}\nc:\n  <<: [*a, *b]\n");
        assert_eq!(doc.root.to_json()["c"]["k"], serde_json::json!(1));
    }

    #[test]
    fn byte_positions() {
        let s = position_of_byte(b"ab\ncd\xff", 5);
        assert_eq!((s.line, s.column), (2, 3));
    }
}
