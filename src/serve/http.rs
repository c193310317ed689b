//! catalogd's HTTP API (OLM v1): what operator-controller's catalogd serves
//! for a `ClusterCatalog` (`internal/catalogd/server/handlers.go`, its
//! storage `internal/catalogd/storage/localdir.go` and `index.go`, wrapped
//! in `gzhttp.GzipHandler`), answered from one catalog.
//!
//! - The content is catalogd's `catalog.jsonl`: every object of the catalog,
//!   in file and document order, each as operator-registry's `declcfg.Meta`
//!   keeps it (decoded into a Go `map[string]interface{}` and written back by
//!   `json.Encoder` with HTML escaping off: sorted keys, numbers as float64,
//!   one object per line).
//! - `/api/v1/all` is Go's `http.ServeContent` over that file:
//!   `Last-Modified`, conditional requests, byte ranges, HEAD.
//! - `/api/v1/metas` filters it by `schema`, `package` and `name` (every given,
//!   non-empty one must match; an unknown parameter is `400`; none at all is
//!   the whole catalog), objects in catalog order.
//! - A response of 1024 bytes or more is gzipped when the request accepts
//!   gzip (never for HEAD or a partial response); every answer says
//!   `Vary: Accept-Encoding`.
//!
//! Both are served at `/api/v1/…` and at `/catalogs/NAME/api/v1/…`, the path
//! catalogd gives a ClusterCatalog named NAME.
//!
//! Pages for people (ours, not catalogd's): `/` lists the packages (name,
//! icon, default channel, channel and bundle counts), `/packages/NAME` shows
//! one: its channels, its upgrade graph (the SVG of `graph render -o svg`)
//! and each bundle (version, CSV description rendered from Markdown, related
//! images, properties, deprecation messages). Plain HTML and inline CSS, no
//! script, nothing fetched from elsewhere (icons are `data:` URIs).

use std::convert::Infallible;
use std::io::Write as _;
use std::path::Path;
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::Error;
use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::Full;
use serde_json::Value;

use super::CatalogSource;

/// Responses at least this long are gzipped (`gzhttp.DefaultMinSize`).
const GZIP_MIN_SIZE: usize = 1024;

/// catalogd's content type for JSON lines.
const JSONL: &str = "application/jsonl";

/// One object of the catalog: its place in the content and the fields
/// `/api/v1/metas` filters on.
#[derive(Debug, Clone)]
struct Meta {
    schema: String,
    package: String,
    name: String,
    start: usize,
    end: usize,
}

/// A catalog as catalogd stores it: the JSON lines and where each object is.
#[derive(Debug)]
pub struct HttpCatalog {
    data: Bytes,
    metas: Vec<Meta>,
    modified: SystemTime,
    gzipped: OnceLock<Bytes>,
    /// The objects again as a catalog, for the pages; read on first use.
    config: OnceLock<crate::fbc::DeclarativeConfig>,
}

impl HttpCatalog {
    /// Reads `source` into catalogd's form. For a SQLite index, that is its
    /// rendered FBC (as `opm render` gives it); for FBC, every object of the
    /// catalog's `.yaml`/`.yml`/`.json` files, in path order.
    pub fn load(source: &CatalogSource) -> super::Result<HttpCatalog> {
        let mut b = Builder::default();
        match source {
            CatalogSource::Fbc(path) => {
                let files = crate::fbc::catalog_files(path).map_err(|source| Error::Fbc {
                    path: path.clone(),
                    source,
                })?;
                for file in files {
                    let text =
                        crate::fbc::read_catalog_file(&file).map_err(|source| Error::Fbc {
                            path: path.clone(),
                            source,
                        })?;
                    b.add_text(&text, &file)?;
                }
            }
            CatalogSource::Sqlite(path) => {
                let cfg = crate::index::render::render_file(path)?;
                for v in crate::fbc::write::ordered_values(&cfg) {
                    b.push(&v).map_err(|m| {
                        Error::Inconsistent(format!("{}: rendered object: {m}", path.display()))
                    })?;
                }
            }
        }
        Ok(b.finish(SystemTime::now()))
    }

    /// Builds the content from one FBC file's text (for tests and tools).
    pub fn from_text(text: &str, path: &Path, modified: SystemTime) -> super::Result<HttpCatalog> {
        let mut b = Builder::default();
        b.add_text(text, path)?;
        Ok(b.finish(modified))
    }

    /// The `catalog.jsonl` bytes (`/api/v1/all`).
    pub fn content(&self) -> &[u8] {
        &self.data
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.metas.len()
    }

    /// True when the catalog has no object.
    pub fn is_empty(&self) -> bool {
        self.metas.is_empty()
    }

    /// The objects `/api/v1/metas` answers for the given filters (empty: any).
    pub fn select(&self, schema: &str, package: &str, name: &str) -> Vec<u8> {
        let mut out = Vec::new();
        for m in &self.metas {
            // catalogd's index only holds objects that have a schema; the
            // package and name filters intersect with it.
            if m.schema.is_empty() {
                continue;
            }
            if (!schema.is_empty() && m.schema != schema)
                || (!package.is_empty() && m.package != package)
                || (!name.is_empty() && m.name != name)
            {
                continue;
            }
            out.extend_from_slice(&self.data[m.start..m.end]);
        }
        out
    }

    fn gzipped_all(&self) -> Bytes {
        self.gzipped.get_or_init(|| gzip(&self.data)).clone()
    }
}

#[derive(Default)]
struct Builder {
    data: Vec<u8>,
    metas: Vec<Meta>,
}

impl Builder {
    /// Adds every object of one file: a JSON stream or YAML documents.
    fn add_text(&mut self, text: &str, path: &Path) -> super::Result<()> {
        let at = |line: usize, col: usize, msg: &str| {
            Error::Inconsistent(format!("{}:{line}:{col}: {msg}", path.display()))
        };
        if text.trim_start().starts_with('{') {
            for obj in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
                let obj = obj.map_err(|e| at(e.line(), e.column(), &e.to_string()))?;
                self.push(&obj).map_err(|m| at(0, 0, &m))?;
            }
            return Ok(());
        }
        let docs = crate::yaml::parse_documents(text)
            .map_err(|e| at(e.span.line as usize, e.span.column as usize, &e.message))?;
        for doc in docs {
            if matches!(doc.root.value, crate::yaml::Value::Null) {
                continue;
            }
            let (line, col) = (doc.root.span.line as usize, doc.root.span.column as usize);
            self.push(&doc.root.to_json())
                .map_err(|m| at(line, col, &m))?;
        }
        Ok(())
    }

    /// Adds one object as `declcfg.Meta` keeps it.
    fn push(&mut self, obj: &Value) -> Result<(), String> {
        let (schema, package, name) = meta_keys(obj)?;
        let start = self.data.len();
        write_go(&mut self.data, obj);
        self.data.push(b'\n');
        self.metas.push(Meta {
            schema,
            package,
            name,
            start,
            end: self.data.len(),
        });
        Ok(())
    }

    fn finish(self, modified: SystemTime) -> HttpCatalog {
        // Last-Modified has whole seconds; keep the time the same.
        let secs = modified
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        HttpCatalog {
            data: Bytes::from(self.data),
            metas: self.metas,
            modified: UNIX_EPOCH + Duration::from_secs(secs),
            gzipped: OnceLock::new(),
            config: OnceLock::new(),
        }
    }
}

/// `schema`, `package` and `name` as `declcfg.Meta` finds them: keys are
/// matched case-insensitively, two keys that differ only in case are an
/// error, and a present key must hold a string.
fn meta_keys(obj: &Value) -> Result<(String, String, String), String> {
    let map = match obj {
        Value::Object(m) => m,
        Value::Array(_) => return Err("not an object: cannot unmarshal array".into()),
        _ => return Err("not an object".into()),
    };
    let mut folded: std::collections::BTreeMap<String, Vec<&str>> = Default::default();
    for k in map.keys() {
        folded.entry(k.to_lowercase()).or_default().push(k);
    }
    let dups: Vec<String> = folded
        .iter()
        .filter(|(_, ks)| ks.len() > 1)
        .map(|(f, ks)| format!("duplicate keys for key {f:?}: [{}]", ks.join(" ")))
        .collect();
    if !dups.is_empty() {
        return Err(dups.join(", "));
    }
    let get = |want: &str| -> Result<String, String> {
        match folded
            .get(want)
            .and_then(|ks| map.get(ks[0]).map(|v| (ks[0], v)))
        {
            None => Ok(String::new()),
            Some((_, Value::String(s))) => Ok(s.clone()),
            Some((k, v)) => Err(format!(
                "expected value for key {k:?} to be a string, got {v}"
            )),
        }
    };
    Ok((get("schema")?, get("package")?, get("name")?))
}

/// Go's `json.Encoder` (HTML escaping off) over the value decoded into
/// `interface{}`: sorted keys, every number a float64.
fn write_go(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            out.extend_from_slice(crate::gojson::format_float(f).as_bytes());
        }
        Value::String(s) => write_go_string(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_go(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_go_string(out, k);
                out.push(b':');
                write_go(out, &map[k]);
            }
            out.push(b'}');
        }
    }
}

fn write_go_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            '\u{2028}' => out.extend_from_slice(b"\\u2028"),
            '\u{2029}' => out.extend_from_slice(b"\\u2029"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

fn gzip(data: &[u8]) -> Bytes {
    let mut enc = flate2::write::GzEncoder::new(
        Vec::with_capacity(data.len() / 4),
        flate2::Compression::default(),
    );
    // Writing to a Vec cannot fail.
    let _ = enc.write_all(data);
    Bytes::from(enc.finish().unwrap_or_default())
}

/// The catalog being served; `--watch` replaces it.
#[derive(Clone)]
pub struct HttpCurrent(Arc<RwLock<Arc<HttpCatalog>>>);

impl HttpCurrent {
    /// Starts with `c`.
    pub fn new(c: HttpCatalog) -> HttpCurrent {
        HttpCurrent(Arc::new(RwLock::new(Arc::new(c))))
    }

    /// The catalog now.
    pub fn get(&self) -> Arc<HttpCatalog> {
        match self.0.read() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// Replaces the catalog.
    pub fn set(&self, c: HttpCatalog) {
        match self.0.write() {
            Ok(mut g) => *g = Arc::new(c),
            Err(p) => *p.into_inner() = Arc::new(c),
        }
    }
}

/// Why a catalog name is not a DNS-1123 subdomain (catalogd's
/// `isValidCatalogName`), with Kubernetes' messages.
pub fn catalog_name_error(name: &str) -> Option<String> {
    let errs = crate::k8s_names::dns1123_subdomain(name);
    if errs.is_empty() {
        None
    } else {
        Some(format!("invalid catalog name: {}", errs.join("; ")))
    }
}

/// A response before it becomes a hyper one.
struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Reply {
    fn new(status: StatusCode) -> Reply {
        Reply {
            status,
            headers: HeaderMap::new(),
            body: Bytes::new(),
        }
    }

    fn set(&mut self, name: header::HeaderName, value: &str) {
        if let Ok(v) = HeaderValue::from_str(value) {
            self.headers.insert(name, v);
        }
    }

    /// Go's `http.Error`: plain text, the message and a newline.
    fn error(mut self, status: StatusCode, msg: &str) -> Reply {
        self.status = status;
        self.headers.remove(header::CONTENT_LENGTH);
        self.set(header::CONTENT_TYPE, "text/plain; charset=utf-8");
        self.set(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
        self.body = Bytes::from(format!("{msg}\n"));
        self
    }
}

/// `"404 Not Found"` as catalogd's `httpError` writes a status.
fn status_text(s: StatusCode) -> String {
    format!("{} {}", s.as_u16(), s.canonical_reason().unwrap_or(""))
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Cond {
    None,
    True,
    False,
}

/// `scanETag`: a valid `"…"` or `W/"…"` at the start of `s`, and the rest.
fn scan_etag(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_matches([' ', '\t']);
    let start = if s.starts_with("W/") { 2 } else { 0 };
    let b = s.as_bytes();
    if b.len() < start + 2 || b[start] != b'"' {
        return None;
    }
    for i in start + 1..b.len() {
        let c = b[i];
        if c == b'"' {
            return Some((&s[..=i], &s[i + 1..]));
        }
        if !(c == 0x21 || (0x23..=0x7e).contains(&c) || c >= 0x80) {
            return None;
        }
    }
    None
}

/// Whether an If-Match / If-None-Match list reaches a `*` (we send no ETag,
/// so no listed tag ever matches; the walk stops at bad syntax, as Go's does).
fn etag_list_has_star(v: &str) -> bool {
    let mut buf = v;
    loop {
        buf = buf.trim_matches([' ', '\t']);
        if buf.is_empty() {
            return false;
        }
        if let Some(rest) = buf.strip_prefix(',') {
            buf = rest;
            continue;
        }
        if buf.starts_with('*') {
            return true;
        }
        match scan_etag(buf) {
            Some((_, rest)) => buf = rest,
            None => return false,
        }
    }
}

fn header_str(h: &HeaderMap, name: header::HeaderName) -> &str {
    h.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
}

/// Go's `http.ParseTime`: IMF-fixdate, RFC 850 or asctime.
fn parse_time(s: &str) -> Option<SystemTime> {
    httpdate::parse_http_date(s).ok()
}

/// What the conditional headers decide.
enum Pre {
    /// Go on; the `Range` header to honour (empty: none).
    Go(String),
    NotModified,
    Failed,
    /// catalogd's metas handler answers an unparsable If-Modified-Since so.
    BadDate,
}

/// RFC 7232 section 6, as Go's `checkPreconditions` (and catalogd's copy of
/// it for `/api/v1/metas`, which differs only in a bad If-Modified-Since).
fn preconditions(method: &Method, h: &HeaderMap, modified: SystemTime, metas: bool) -> Pre {
    let get_or_head = method == Method::GET || method == Method::HEAD;
    let im = header_str(h, header::IF_MATCH);
    let mut ch = if im.is_empty() {
        Cond::None
    } else if etag_list_has_star(im) {
        Cond::True
    } else {
        Cond::False
    };
    if ch == Cond::None {
        let ius = header_str(h, header::IF_UNMODIFIED_SINCE);
        if !ius.is_empty() {
            if let Some(t) = parse_time(ius) {
                ch = if modified <= t {
                    Cond::True
                } else {
                    Cond::False
                };
            }
        }
    }
    if ch == Cond::False {
        return Pre::Failed;
    }
    let inm = header_str(h, header::IF_NONE_MATCH);
    if !inm.is_empty() {
        if etag_list_has_star(inm) {
            return if get_or_head {
                Pre::NotModified
            } else {
                Pre::Failed
            };
        }
    } else {
        let ims = header_str(h, header::IF_MODIFIED_SINCE);
        if (get_or_head || metas) && !ims.is_empty() {
            match parse_time(ims) {
                Some(t) if modified <= t => return Pre::NotModified,
                Some(_) => {}
                None if metas => return Pre::BadDate,
                None => {}
            }
        }
    }
    let range = header_str(h, header::RANGE);
    if range.is_empty() || metas {
        return Pre::Go(String::new());
    }
    // If-Range: a date equal to ours keeps the range; an ETag or anything
    // else drops it.
    let ir = header_str(h, header::IF_RANGE);
    if get_or_head && !ir.is_empty() {
        let keep = scan_etag(ir).is_none() && parse_time(ir).is_some_and(|t| t == modified);
        if !keep {
            return Pre::Go(String::new());
        }
    }
    Pre::Go(range.to_string())
}

/// Go's `parseRange`: `Err(true)` when no range overlaps, `Err(false)` when
/// the header is malformed.
fn parse_range(s: &str, size: u64) -> Result<Vec<(u64, u64)>, bool> {
    let Some(spec) = s.strip_prefix("bytes=") else {
        return Err(false);
    };
    let mut ranges = Vec::new();
    let mut no_overlap = false;
    let num = |t: &str| -> Option<i64> { t.parse::<i64>().ok() };
    for ra in spec.split(',') {
        let ra = ra.trim_matches([' ', '\t']);
        if ra.is_empty() {
            continue;
        }
        let Some((start, end)) = ra.split_once('-') else {
            return Err(false);
        };
        let (start, end) = (
            start.trim_matches([' ', '\t']),
            end.trim_matches([' ', '\t']),
        );
        if start.is_empty() {
            if end.is_empty() || end.starts_with('-') {
                return Err(false);
            }
            let i = num(end).filter(|i| *i >= 0).ok_or(false)? as u64;
            let i = i.min(size);
            ranges.push((size - i, i));
        } else {
            let i = num(start).filter(|i| *i >= 0).ok_or(false)? as u64;
            if i >= size {
                no_overlap = true;
                continue;
            }
            let len = if end.is_empty() {
                size - i
            } else {
                let e = num(end).ok_or(false)?;
                if e < 0 || (e as u64) < i {
                    return Err(false);
                }
                (e as u64).min(size - 1) - i + 1
            };
            ranges.push((i, len));
        }
    }
    if no_overlap && ranges.is_empty() {
        return Err(true);
    }
    Ok(ranges)
}

/// `/api/v1/all`: `http.ServeContent` over the catalog.
fn serve_all(method: &Method, h: &HeaderMap, cat: &HttpCatalog) -> Reply {
    let mut r = Reply::new(StatusCode::OK);
    r.set(header::CONTENT_TYPE, JSONL);
    r.set(
        header::LAST_MODIFIED,
        &httpdate::fmt_http_date(cat.modified),
    );
    let range = match preconditions(method, h, cat.modified, false) {
        Pre::Go(range) => range,
        Pre::NotModified => return not_modified(r),
        Pre::Failed | Pre::BadDate => {
            r.status = StatusCode::PRECONDITION_FAILED;
            return r;
        }
    };
    let size = cat.data.len() as u64;
    let mut body = cat.data.clone();
    if !range.is_empty() {
        match parse_range(&range, size) {
            Err(no_overlap) => {
                // Go's serveError drops these before writing the error.
                r.headers.remove(header::LAST_MODIFIED);
                if no_overlap {
                    r.set(header::CONTENT_RANGE, &format!("bytes */{size}"));
                }
                let msg = if no_overlap {
                    "invalid range: failed to overlap"
                } else {
                    "invalid range"
                };
                return r.error(StatusCode::RANGE_NOT_SATISFIABLE, msg);
            }
            Ok(ranges) => {
                let total: u64 = ranges.iter().map(|(_, l)| l).sum();
                let content_range = |(start, len): (u64, u64)| {
                    format!("bytes {start}-{}/{size}", (start + len).saturating_sub(1))
                };
                let slice = |(start, len): (u64, u64)| {
                    cat.data.slice(start as usize..(start + len) as usize)
                };
                // Ranges adding up to more than the content are ignored, as Go does.
                if total > size {
                } else if ranges.len() == 1 {
                    r.status = StatusCode::PARTIAL_CONTENT;
                    r.set(header::CONTENT_RANGE, &content_range(ranges[0]));
                    body = slice(ranges[0]);
                } else if ranges.len() > 1 {
                    // multipart/byteranges, as Go's mime/multipart writes it.
                    let boundary = boundary();
                    let mut out = Vec::new();
                    for (i, ra) in ranges.iter().enumerate() {
                        if i > 0 {
                            out.extend_from_slice(b"\r\n");
                        }
                        let _ = write!(
                            out,
                            "--{boundary}\r\nContent-Range: {}\r\nContent-Type: {JSONL}\r\n\r\n",
                            content_range(*ra)
                        );
                        out.extend_from_slice(&slice(*ra));
                    }
                    let _ = write!(out, "\r\n--{boundary}--\r\n");
                    r.status = StatusCode::PARTIAL_CONTENT;
                    r.set(
                        header::CONTENT_TYPE,
                        &format!("multipart/byteranges; boundary={boundary}"),
                    );
                    body = Bytes::from(out);
                }
            }
        }
    }
    r.set(header::ACCEPT_RANGES, "bytes");
    r.set(header::CONTENT_LENGTH, &body.len().to_string());
    if method != Method::HEAD {
        r.body = body;
    }
    r
}

/// A multipart boundary as Go's `multipart.Writer` makes one: 30 random bytes, in hex.
fn boundary() -> String {
    let mut buf = [0u8; 30];
    if getrandom::fill(&mut buf).is_err() {
        // Never seen on Linux; a fixed boundary still parses if it is not in the content.
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        buf[..16].copy_from_slice(&t.to_le_bytes());
    }
    hex::encode(buf)
}

/// Go's `writeNotModified`.
fn not_modified(mut r: Reply) -> Reply {
    r.status = StatusCode::NOT_MODIFIED;
    r.headers.remove(header::CONTENT_TYPE);
    r.headers.remove(header::CONTENT_LENGTH);
    r.headers.remove(header::CONTENT_ENCODING);
    r.body = Bytes::new();
    r
}

/// Go's `url.ParseQuery` pairs, in order; malformed pairs are left out as
/// `URL.Query()` leaves them out.
fn parse_query(q: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for part in q.split('&') {
        if part.is_empty() || part.contains(';') {
            continue;
        }
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        if let (Some(k), Some(v)) = (unescape(k, true), unescape(v, true)) {
            out.push((k, v));
        }
    }
    out
}

/// Percent-decoding (`+` as space in a query); `None` on a bad escape.
fn unescape(s: &str, plus: bool) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = b.get(i + 1..i + 3)?;
                let hex = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' if plus => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// `/api/v1/metas`.
fn serve_metas(method: &Method, h: &HeaderMap, query: &str, cat: &HttpCatalog) -> Reply {
    let r = Reply::new(StatusCode::OK);
    let params = parse_query(query);
    if params
        .iter()
        .any(|(k, _)| !matches!(k.as_str(), "schema" | "package" | "name"))
    {
        return r.error(
            StatusCode::BAD_REQUEST,
            &status_text(StatusCode::BAD_REQUEST),
        );
    }
    let mut r = r;
    r.set(
        header::LAST_MODIFIED,
        &httpdate::fmt_http_date(cat.modified),
    );
    match preconditions(method, h, cat.modified, true) {
        Pre::Go(_) => {}
        Pre::NotModified => return not_modified(r),
        Pre::Failed => {
            r.status = StatusCode::PRECONDITION_FAILED;
            return r;
        }
        Pre::BadDate => {
            let s = StatusCode::INTERNAL_SERVER_ERROR;
            return r.error(s, &status_text(s));
        }
    }
    let first = |key: &str| {
        params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    };
    let (schema, package, name) = (first("schema"), first("package"), first("name"));
    r.set(header::CONTENT_TYPE, JSONL);
    if method == Method::HEAD {
        return r;
    }
    r.body = if schema.is_empty() && package.is_empty() && name.is_empty() {
        cat.data.clone()
    } else {
        Bytes::from(cat.select(schema, package, name))
    };
    r
}

/// Go's `cleanPath`: `path.Clean`, keeping a trailing slash.
fn clean_path(p: &str) -> String {
    if p.is_empty() {
        return "/".into();
    }
    let mut segs: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                segs.pop();
            }
            s => segs.push(s),
        }
    }
    let mut np = format!("/{}", segs.join("/"));
    if p.ends_with('/') && np != "/" {
        np.push('/');
    }
    np
}

/// What a path names.
enum Route<'a> {
    All(Option<&'a str>),
    Metas(Option<&'a str>),
    /// `/`: the list of packages.
    Index,
    /// `/packages/NAME`: one package.
    Package(&'a str),
    NotFound,
}

fn route(path: &str) -> Route<'_> {
    match path {
        "/api/v1/all" => return Route::All(None),
        "/api/v1/metas" => return Route::Metas(None),
        "/" => return Route::Index,
        _ => {}
    }
    if let Some(name) = path.strip_prefix("/packages/") {
        if !name.is_empty() && !name.contains('/') {
            return Route::Package(name);
        }
    }
    if let Some(rest) = path.strip_prefix("/catalogs/") {
        if let Some((name, api)) = rest.split_once('/') {
            if !name.is_empty() {
                match api {
                    "api/v1/all" => return Route::All(Some(name)),
                    "api/v1/metas" => return Route::Metas(Some(name)),
                    _ => {}
                }
            }
        }
    }
    Route::NotFound
}

/// Answers one request as catalogd would, for the catalog `name`.
pub fn respond(
    method: &Method,
    uri: &http::Uri,
    headers: &HeaderMap,
    cat: &HttpCatalog,
    name: &str,
) -> Response<Full<Bytes>> {
    let raw_path = uri.path();
    let path = unescape(raw_path, false).unwrap_or_else(|| raw_path.to_string());
    let clean = clean_path(&path);
    let mut r = if clean != path {
        redirect(method, &clean, uri.query())
    } else {
        match route(&path) {
            Route::NotFound => {
                Reply::new(StatusCode::OK).error(StatusCode::NOT_FOUND, "404 page not found")
            }
            Route::Index | Route::Package(_) => pages::respond(method, &route(&path), cat),
            Route::All(_) | Route::Metas(_) if method != Method::GET && method != Method::HEAD => {
                Reply::new(StatusCode::OK)
                    .error(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed")
            }
            route => {
                let (catalog, all) = match route {
                    Route::All(c) => (c, true),
                    Route::Metas(c) => (c, false),
                    _ => (None, true),
                };
                let invalid = catalog.and_then(catalog_name_error);
                if let Some(msg) = invalid {
                    Reply::new(StatusCode::OK).error(StatusCode::BAD_REQUEST, &msg)
                } else if all {
                    if catalog.is_some_and(|c| c != name) {
                        not_found()
                    } else {
                        serve_all(method, headers, cat)
                    }
                } else {
                    // catalogd checks the parameters before it looks the catalog up.
                    let reply = serve_metas(method, headers, uri.query().unwrap_or(""), cat);
                    if reply.status != StatusCode::BAD_REQUEST && catalog.is_some_and(|c| c != name)
                    {
                        not_found()
                    } else {
                        reply
                    }
                }
            }
        }
    };
    r.headers
        .append(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    if method != Method::HEAD
        && accepts_gzip(header_str(headers, header::ACCEPT_ENCODING))
        && r.body.len() >= GZIP_MIN_SIZE
        && !r.headers.contains_key(header::CONTENT_RANGE)
        && !r.headers.contains_key(header::CONTENT_ENCODING)
    {
        let whole = same_bytes(&r.body, &cat.data);
        r.body = if whole {
            cat.gzipped_all()
        } else {
            gzip(&r.body)
        };
        r.set(header::CONTENT_ENCODING, "gzip");
        r.headers.remove(header::ACCEPT_RANGES);
        r.headers.remove(header::CONTENT_LENGTH);
    }
    let mut resp = Response::new(Full::new(r.body));
    *resp.status_mut() = r.status;
    *resp.headers_mut() = r.headers;
    resp
}

fn not_found() -> Reply {
    let s = StatusCode::NOT_FOUND;
    Reply::new(StatusCode::OK).error(s, &status_text(s))
}

/// Go's `http.Redirect` with 301, as `ServeMux` sends a client to the clean path.
fn redirect(method: &Method, path: &str, query: Option<&str>) -> Reply {
    let mut target = path.to_string();
    if let Some(q) = query.filter(|q| !q.is_empty()) {
        target.push('?');
        target.push_str(q);
    }
    let mut r = Reply::new(StatusCode::MOVED_PERMANENTLY);
    r.set(header::LOCATION, &target);
    if method == Method::GET || method == Method::HEAD {
        r.set(header::CONTENT_TYPE, "text/html; charset=utf-8");
    }
    if method == Method::GET {
        let escaped = target
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&#34;")
            .replace('\'', "&#39;");
        r.body = Bytes::from(format!("<a href=\"{escaped}\">Moved Permanently</a>.\n\n"));
    }
    r
}

/// gzhttp's `acceptsGzip`: the first `gzip` coding, with a q-value above 0.
fn accepts_gzip(accept: &str) -> bool {
    for coding in accept.trim().split(',') {
        let mut parts = coding.split(';');
        let name = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        if name != "gzip" {
            continue;
        }
        let mut q = 1.0f64;
        for p in parts {
            if let Some(v) = p.trim().strip_prefix("q=") {
                q = v.parse::<f64>().unwrap_or(0.0).clamp(0.0, 1.0);
            }
        }
        return q > 0.0;
    }
    false
}

/// Same bytes object (a clone of the whole content), not just equal bytes.
fn same_bytes(a: &Bytes, b: &Bytes) -> bool {
    a.len() == b.len() && a.as_ptr() == b.as_ptr()
}

/// Serves HTTP/1.1 on `listener` until `stop` turns true, then lets the
/// requests in flight finish (up to `drain`).
pub async fn run(
    listener: tokio::net::TcpListener,
    current: HttpCurrent,
    name: String,
    mut stop: tokio::sync::watch::Receiver<bool>,
    drain: Duration,
) -> super::Result<()> {
    let name: Arc<str> = Arc::from(name);
    let mut conns = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((s, _)) => s,
                    Err(e) => {
                        // Out of file descriptors and the like: wait, do not spin.
                        eprintln!("http: accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let current = current.clone();
                let name = name.clone();
                let mut stop = stop.clone();
                conns.spawn(async move {
                    let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                        let cat = current.get();
                        let name = name.clone();
                        async move {
                            Ok::<_, Infallible>(respond(req.method(), req.uri(), req.headers(), &cat, &name))
                        }
                    });
                    let conn = hyper::server::conn::http1::Builder::new()
                        .timer(hyper_util::rt::TokioTimer::new())
                        .header_read_timeout(Duration::from_secs(30))
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), svc);
                    tokio::pin!(conn);
                    tokio::select! {
                        _ = conn.as_mut() => {}
                        _ = stopped(&mut stop) => {
                            conn.as_mut().graceful_shutdown();
                            let _ = conn.await;
                        }
                    }
                });
            }
            _ = stopped(&mut stop) => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    drop(listener);
    let _ = tokio::time::timeout(drain, async { while conns.join_next().await.is_some() {} }).await;
    Ok(())
}

/// Resolves once `stop` is true (never if its sender is gone while false).
pub async fn stopped(stop: &mut tokio::sync::watch::Receiver<bool>) {
    loop {
        if *stop.borrow_and_update() {
            return;
        }
        if stop.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// The pages for people: `/` and `/packages/NAME`.
mod pages {
    use std::fmt::Write as _;

    use super::{header, Bytes, HttpCatalog, Method, Reply, Route, StatusCode};
    use crate::fbc::{Bundle, DeclarativeConfig};
    use crate::graph::svg::{self, escape};
    use crate::graph::PackageGraph;

    impl HttpCatalog {
        /// The catalog's objects as a [`DeclarativeConfig`] (objects that do
        /// not read as one of its schemas are left out).
        fn config(&self) -> &DeclarativeConfig {
            self.config.get_or_init(|| {
                let mut cfg = DeclarativeConfig::default();
                for line in self.data.split(|b| *b == b'\n') {
                    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) {
                        let _ = cfg.push_object(v);
                    }
                }
                cfg
            })
        }
    }

    pub(super) fn respond(method: &Method, route: &Route<'_>, cat: &HttpCatalog) -> Reply {
        if method != Method::GET && method != Method::HEAD {
            return Reply::new(StatusCode::OK)
                .error(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
        }
        let cfg = cat.config();
        let html = match route {
            Route::Index => index(cfg),
            Route::Package(name) => match package(cfg, name) {
                Some(h) => h,
                None => {
                    return Reply::new(StatusCode::OK)
                        .error(StatusCode::NOT_FOUND, "404 page not found")
                }
            },
            _ => {
                return Reply::new(StatusCode::OK)
                    .error(StatusCode::NOT_FOUND, "404 page not found")
            }
        };
        let mut r = Reply::new(StatusCode::OK);
        r.set(header::CONTENT_TYPE, "text/html; charset=utf-8");
        r.set(header::CONTENT_LENGTH, &html.len().to_string());
        if method == Method::GET {
            r.body = Bytes::from(html);
        }
        r
    }

    /// `/packages/NAME`, with the name percent-encoded.
    fn package_href(name: &str) -> String {
        let mut out = String::from("/packages/");
        for b in name.bytes() {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                out.push(b as char);
            } else {
                let _ = write!(out, "%{b:02X}");
            }
        }
        out
    }

    fn icon(cfg: &DeclarativeConfig, package: &str) -> String {
        cfg.packages
            .iter()
            .find(|p| p.name == package)
            .and_then(|p| p.icon.as_ref())
            .filter(|i| !i.base64data.is_empty() && i.mediatype.starts_with("image/"))
            .map(|i| {
                format!(
                    "<img class=\"icon\" alt=\"\" src=\"data:{};base64,{}\">",
                    escape(&i.mediatype),
                    escape(i.base64data.trim())
                )
            })
            .unwrap_or_default()
    }

    fn index(cfg: &DeclarativeConfig) -> String {
        let graphs = PackageGraph::from_fbc(cfg, std::path::Path::new("catalog"));
        let mut body = format!(
            "<p>{} package{}.</p>\n<table class=\"packages\">\n<tr><th></th><th>package</th><th>default channel</th><th>channels</th><th>bundles</th></tr>\n",
            graphs.len(),
            if graphs.len() == 1 { "" } else { "s" }
        );
        for g in &graphs {
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                icon(cfg, &g.package),
                escape(&package_href(&g.package)),
                escape(&g.package),
                escape(&g.default_channel),
                g.channels.len(),
                g.bundles.len()
            );
        }
        body.push_str("</table>\n");
        svg::page("Catalog", &body)
    }

    /// Markdown as HTML; HTML written in the Markdown is shown as text,
    /// not obeyed.
    fn markdown(text: &str) -> String {
        use pulldown_cmark::{Event, Options, Parser};
        let events = Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH)
            .map(|e| match e {
                Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
                e => e,
            });
        let mut out = String::new();
        pulldown_cmark::html::push_html(&mut out, events);
        out
    }

    fn package(cfg: &DeclarativeConfig, name: &str) -> Option<String> {
        let g = PackageGraph::from_fbc(cfg, std::path::Path::new("catalog"))
            .into_iter()
            .find(|g| g.package == name)?;
        let pkg = cfg.packages.iter().find(|p| p.name == name);
        let deprecation = |schema: &str, n: &str| -> Option<String> {
            cfg.deprecations
                .iter()
                .filter(|d| d.package == name)
                .flat_map(|d| &d.entries)
                .find(|e| {
                    e.reference.schema == schema
                        && (schema == "olm.package" || e.reference.name == n)
                })
                .map(|e| e.message.clone())
        };
        let mut body = format!(
            "<p><a href=\"/\">All packages</a></p>\n<h2>{} {}</h2>\n",
            icon(cfg, name),
            escape(name)
        );
        if let Some(m) = deprecation("olm.package", "") {
            let _ = writeln!(
                body,
                "<p class=\"deprecated\">Deprecated: {}</p>",
                escape(&m)
            );
        }
        if let Some(p) = pkg.filter(|p| !p.description.is_empty()) {
            let _ = writeln!(
                body,
                "<div class=\"description\">{}</div>",
                markdown(&p.description)
            );
        }
        body.push_str("<h2>Channels</h2>\n<table class=\"channels\">\n<tr><th>channel</th><th>head</th><th>entries</th><th></th></tr>\n");
        for ch in &g.channels {
            let head = ch
                .head()
                .map(|h| h.name.clone())
                .unwrap_or_else(|e| e.to_string());
            let mut notes = Vec::new();
            if ch.name == g.default_channel {
                notes.push("default".to_string());
            }
            if let Some(m) = deprecation("olm.channel", &ch.name) {
                notes.push(format!("deprecated: {m}"));
            }
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&ch.name),
                escape(&head),
                ch.entries.len(),
                escape(&notes.join("; "))
            );
        }
        body.push_str("</table>\n<h2>Upgrade graph</h2>\n<div class=\"graph\">\n");
        body.push_str(&svg::svg(std::slice::from_ref(&g), &svg::Marks::default()));
        body.push_str("</div>\n<h2>Bundles</h2>\n");
        let mut bundles: Vec<&Bundle> = cfg.bundles.iter().filter(|b| b.package == name).collect();
        bundles.sort_by(|a, b| match (g.version(&b.name), g.version(&a.name)) {
            (Some(x), Some(y)) => crate::semver_range::compare(x, y),
            _ => a.name.cmp(&b.name),
        });
        for b in bundles {
            bundle_section(&mut body, &g, b, deprecation("olm.bundle", &b.name));
        }
        Some(svg::page(&format!("Package {name}"), &body))
    }

    fn bundle_section(body: &mut String, g: &PackageGraph, b: &Bundle, deprecated: Option<String>) {
        let version = g
            .bundles
            .get(&b.name)
            .map(|i| i.raw_version.clone())
            .unwrap_or_default();
        let _ = writeln!(
            body,
            "<section class=\"bundle\" id=\"bundle-{}\" data-bundle=\"{}\">\n<h3>{}</h3>\n<p>version <code>{}</code>, image <code>{}</code></p>",
            escape(&b.name),
            escape(&b.name),
            escape(&b.name),
            escape(&version),
            escape(&b.image)
        );
        if let Some(m) = deprecated {
            let _ = writeln!(
                body,
                "<p class=\"deprecated\">Deprecated: {}</p>",
                escape(&m)
            );
        }
        let description = b
            .properties
            .iter()
            .find(|p| p.kind == "olm.csv.metadata")
            .and_then(|p| p.field("description"))
            .and_then(|d| d.as_str())
            .filter(|d| !d.is_empty());
        if let Some(d) = description {
            let _ = writeln!(body, "<details open><summary>Description</summary><div class=\"description\">{}</div></details>", markdown(d));
        }
        if !b.related_images.is_empty() {
            body.push_str("<details><summary>Related images</summary><ul>\n");
            for r in &b.related_images {
                let _ = writeln!(
                    body,
                    "<li><code>{}</code>{}</li>",
                    escape(&r.image),
                    if r.name.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", escape(&r.name))
                    }
                );
            }
            body.push_str("</ul></details>\n");
        }
        if !b.properties.is_empty() {
            body.push_str("<details><summary>Properties</summary><table>\n");
            for p in &b.properties {
                // olm.bundle.object holds whole manifests (base64): named, not shown.
                let value = if p.kind == "olm.bundle.object" {
                    "(a manifest)".to_string()
                } else if p.kind == "olm.csv.metadata" {
                    "(the CSV's metadata; description above)".to_string()
                } else {
                    p.value.to_string()
                };
                let _ = writeln!(
                    body,
                    "<tr><td><code>{}</code></td><td><code>{}</code></td></tr>",
                    escape(&p.kind),
                    escape(&value)
                );
            }
            body.push_str("</table></details>\n");
        }
        body.push_str("</section>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cat(text: &str) -> HttpCatalog {
        HttpCatalog::from_text(
            text,
            Path::new("t.yaml"),
            UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        )
        .expect("catalog")
    }

    #[test]
    fn objects_as_go_writes_a_meta_blob() {
        let c = cat("schema: olm.package\nname: p\nnum: 12345678901234567890\nbig: 1e21\nd: '<a&b>'\nf: 1.0\n---\n{\"schema\":\"olm.channel\",\"package\":\"p\",\"name\":\"a\"}\n");
        assert_eq!(
            std::str::from_utf8(c.content()).expect("utf8"),
            "{\"big\":1e+21,\"d\":\"<a&b>\",\"f\":1,\"name\":\"p\",\"num\":12345678901234567000,\"schema\":\"olm.package\"}\n\
             {\"name\":\"a\",\"package\":\"p\",\"schema\":\"olm.channel\"}\n"
        );
    }

    #[test]
    fn metas_filters_intersect_and_skip_schemaless() {
        let c = cat("schema: olm.package\nname: p\n---\nschema: olm.channel\npackage: p\nname: p\n---\nname: p\npackage: p\n---\nSchema: olm.bundle\nPackage: p\nName: p.v1\n");
        let lines = |b: Vec<u8>| String::from_utf8(b).expect("utf8").lines().count();
        assert_eq!(lines(c.select("", "", "p")), 2);
        assert_eq!(lines(c.select("", "p", "")), 2);
        assert_eq!(lines(c.select("olm.bundle", "p", "p.v1")), 1);
        assert_eq!(lines(c.select("olm.package", "p", "")), 0);
    }

    #[test]
    fn rejects_what_declcfg_rejects() {
        let e = HttpCatalog::from_text(
            "schema: a\nName: x\nname: y\n",
            Path::new("c.yaml"),
            UNIX_EPOCH,
        )
        .expect_err("duplicate");
        assert!(
            e.to_string()
                .contains("c.yaml:1:1: duplicate keys for key \"name\""),
            "{e}"
        );
        let e = HttpCatalog::from_text("schema: a\nname: 5\n", Path::new("c.yaml"), UNIX_EPOCH)
            .expect_err("not a string");
        assert!(e.to_string().contains("\"name\" to be a string"), "{e}");
    }

    #[test]
    fn ranges_as_go_parses_them() {
        assert_eq!(parse_range("bytes=0-9", 100), Ok(vec![(0, 10)]));
        assert_eq!(parse_range("bytes=-10", 100), Ok(vec![(90, 10)]));
        assert_eq!(parse_range("bytes=95-", 100), Ok(vec![(95, 5)]));
        assert_eq!(parse_range("bytes=90-200", 100), Ok(vec![(90, 10)]));
        assert_eq!(parse_range("bytes=100-", 100), Err(true));
        assert_eq!(parse_range("bytes=5-1", 100), Err(false));
        assert_eq!(parse_range("items=0-1", 100), Err(false));
    }

    #[test]
    fn paths_and_names() {
        assert_eq!(clean_path("/a//b/../c/"), "/a/c/");
        assert_eq!(clean_path("/api/v1/all"), "/api/v1/all");
        assert!(catalog_name_error("operatorhubio").is_none());
        assert!(catalog_name_error("Bad_Name").is_some());
        assert!(accepts_gzip("br, gzip;q=0.5"));
        assert!(!accepts_gzip("gzip;q=0, *"));
        assert!(!accepts_gzip("*"));
    }
}
