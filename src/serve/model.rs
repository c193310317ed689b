//! The in-memory catalog both backends answer from, and the query interface
//! the gRPC service calls.
//!
//! Strings are `Arc<str>`: a bundle that sits in several channels shares one
//! [`BundleData`], and names repeat across packages, channels and entries.

use std::sync::Arc;

use crate::proto;

/// Shared immutable string.
pub type Str = Arc<str>;

/// Makes a shared string.
pub fn s(v: &str) -> Str {
    Arc::from(v)
}

/// A group/version/kind as the gRPC answers carry it: [`crate::bundle::Gvk`]
/// with the plural where the index knows it, in shared strings.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Gvk {
    /// API group.
    pub group: Str,
    /// API version.
    pub version: Str,
    /// Kind.
    pub kind: Str,
    /// Plural resource name (SQLite `api` table only; empty otherwise).
    pub plural: Str,
}

impl Gvk {
    /// The answer's form of `gvk`, with `plural` (empty if unknown).
    pub fn from_gvk(gvk: &crate::bundle::Gvk, plural: &str) -> Gvk {
        Gvk {
            group: s(&gvk.group),
            version: s(&gvk.version),
            kind: s(&gvk.kind),
            plural: s(plural),
        }
    }

    fn to_proto(&self) -> proto::GroupVersionKind {
        proto::GroupVersionKind {
            group: self.group.to_string(),
            version: self.version.to_string(),
            kind: self.kind.to_string(),
            plural: self.plural.to_string(),
        }
    }

    /// True when group, version and kind equal the request's.
    pub fn is(&self, group: &str, version: &str, kind: &str) -> bool {
        &*self.group == group && &*self.version == version && &*self.kind == kind
    }
}

/// Where a bundle's `csvJson` and `object` come from.
#[derive(Clone, Debug)]
pub enum Manifests {
    /// Nothing to send.
    None,
    /// Kept in memory.
    Inline {
        /// The CSV as JSON.
        csv_json: Str,
        /// Every manifest as JSON.
        objects: Arc<[Str]>,
    },
    /// Written to a temporary file at start, read back by the calls that
    /// send them: a catalog's manifests are most of its bytes.
    Spooled {
        /// The file.
        spool: Arc<ManifestSpool>,
        /// Where the CSV starts; the objects follow it.
        at: u64,
        /// The CSV's length in bytes.
        csv_len: u64,
        /// Each object's length in bytes.
        object_lens: Arc<[u64]>,
    },
}

impl Manifests {
    /// The CSV and the objects, when there are any.
    pub fn read(&self) -> QueryResult<Option<(Str, Arc<[Str]>)>> {
        match self {
            Manifests::None => Ok(None),
            Manifests::Inline { csv_json, objects } => {
                Ok(Some((csv_json.clone(), objects.clone())))
            }
            Manifests::Spooled {
                spool,
                at,
                csv_len,
                object_lens,
            } => {
                let failed =
                    |e: std::io::Error| QueryError(format!("reading a bundle's manifests: {e}"));
                let mut pos = *at;
                let csv = spool.read(pos, *csv_len).map_err(failed)?;
                pos += csv_len;
                let mut objects = Vec::with_capacity(object_lens.len());
                for len in object_lens.iter() {
                    objects.push(spool.read(pos, *len).map_err(failed)?);
                    pos += len;
                }
                Ok(Some((csv, objects.into())))
            }
        }
    }
}

/// Returns what malloc keeps of freed memory to the system, after a load
/// whose temporaries were large: idle memory then follows what is kept.
pub fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// An unnamed temporary file (gone with the process, however it ends)
/// holding bundles' manifests one after the other.
#[derive(Debug)]
pub struct ManifestSpool {
    file: std::fs::File,
    end: std::sync::Mutex<u64>,
}

impl ManifestSpool {
    /// A new spool in the temporary directory.
    pub fn new() -> std::io::Result<ManifestSpool> {
        Ok(ManifestSpool {
            file: tempfile::tempfile()?,
            end: std::sync::Mutex::new(0),
        })
    }

    /// Appends a bundle's CSV and objects; how to read them back.
    pub fn put(self: &Arc<Self>, csv_json: &str, objects: &[Str]) -> std::io::Result<Manifests> {
        use std::os::unix::fs::FileExt;
        let mut end = self
            .end
            .lock()
            .map_err(|_| std::io::Error::other("manifest spool lock poisoned"))?;
        let at = *end;
        let mut pos = at;
        self.file.write_all_at(csv_json.as_bytes(), pos)?;
        pos += csv_json.len() as u64;
        let mut lens = Vec::with_capacity(objects.len());
        for o in objects {
            self.file.write_all_at(o.as_bytes(), pos)?;
            pos += o.len() as u64;
            lens.push(o.len() as u64);
        }
        *end = pos;
        Ok(Manifests::Spooled {
            spool: self.clone(),
            at,
            csv_len: csv_json.len() as u64,
            object_lens: lens.into(),
        })
    }

    fn read(&self, at: u64, len: u64) -> std::io::Result<Str> {
        use std::os::unix::fs::FileExt;
        let mut buf = vec![0u8; len as usize];
        self.file.read_exact_at(&mut buf, at)?;
        String::from_utf8(buf)
            .map(|t| s(&t))
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }
}

/// What a bundle is, independent of the channel it is reached through.
#[derive(Clone, Debug)]
pub struct BundleData {
    /// CSV name.
    pub name: Str,
    /// Bundle image reference (`bundlePath`).
    pub bundle_path: Str,
    /// Version.
    pub version: Str,
    /// Provided APIs.
    pub provided: Vec<Gvk>,
    /// Required APIs.
    pub required: Vec<Gvk>,
    /// Dependencies: (type, value).
    pub dependencies: Vec<(Str, Str)>,
    /// Properties: (type, value).
    pub properties: Vec<(Str, Str)>,
    /// CSV and manifests.
    pub manifests: Manifests,
    /// Deprecation message of the bundle, if any.
    pub deprecation: Option<Str>,
}

/// A bundle message before the manifests are filled in.
pub struct BundleView<'a> {
    /// The bundle.
    pub data: &'a BundleData,
    /// Package name to report.
    pub package: &'a str,
    /// Channel name to report.
    pub channel: &'a str,
    /// Skip range to report.
    pub skip_range: &'a str,
    /// Replaces to report ("" when the RPC leaves it out).
    pub replaces: &'a str,
    /// Skips to report.
    pub skips: &'a [Str],
    /// Whether provided/required APIs are reported.
    pub with_apis: bool,
}

impl BundleView<'_> {
    /// Builds the message; `manifests` gives csvJson and objects (or none).
    pub fn to_proto(&self, manifests: Option<(Str, Arc<[Str]>)>) -> proto::Bundle {
        let d = self.data;
        let (csv_json, object) = match manifests {
            Some((c, o)) => (c.to_string(), o.iter().map(|x| x.to_string()).collect()),
            None => (String::new(), Vec::new()),
        };
        proto::Bundle {
            csv_name: d.name.to_string(),
            package_name: self.package.to_string(),
            channel_name: self.channel.to_string(),
            csv_json,
            object,
            bundle_path: d.bundle_path.to_string(),
            provided_apis: if self.with_apis {
                d.provided.iter().map(Gvk::to_proto).collect()
            } else {
                Vec::new()
            },
            required_apis: if self.with_apis {
                d.required.iter().map(Gvk::to_proto).collect()
            } else {
                Vec::new()
            },
            version: d.version.to_string(),
            skip_range: self.skip_range.to_string(),
            dependencies: d
                .dependencies
                .iter()
                .map(|(t, v)| proto::Dependency {
                    r#type: t.to_string(),
                    value: v.to_string(),
                })
                .collect(),
            properties: d
                .properties
                .iter()
                .map(|(t, v)| proto::Property {
                    r#type: t.to_string(),
                    value: v.to_string(),
                })
                .collect(),
            replaces: self.replaces.to_string(),
            skips: self.skips.iter().map(|x| x.to_string()).collect(),
            deprecation: d.deprecation.as_ref().map(|m| proto::Deprecation {
                message: m.to_string(),
            }),
        }
    }
}

/// An error answered to the client: opm returns plain Go errors, which
/// grpc-go sends as code Unknown with the error text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryError(pub String);

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Go's `%q`, as opm's error texts quote names (one implementation, in
/// [`crate::gojson`]).
pub use crate::gojson::go_quote;

/// Result of a query.
pub type QueryResult<T> = Result<T, QueryError>;

/// Shorthand for an error answer.
pub fn err<T>(msg: String) -> QueryResult<T> {
    Err(QueryError(msg))
}

/// A channel entry as the API reports it.
pub fn entry(pkg: &str, ch: &str, bundle: &str, replaces: &str) -> proto::ChannelEntry {
    proto::ChannelEntry {
        package_name: pkg.to_string(),
        channel_name: ch.to_string(),
        bundle_name: bundle.to_string(),
        replaces: replaces.to_string(),
    }
}

/// The queries of operator-registry's `registry.GRPCQuery`, answered the way
/// the backend's opm counterpart answers them.
pub trait Registry: Send + Sync {
    /// Package names, in name order.
    fn list_packages(&self) -> QueryResult<Vec<String>>;
    /// One package with its channels and heads.
    fn get_package(&self, name: &str) -> QueryResult<proto::Package>;
    /// One bundle in a channel.
    fn get_bundle(&self, pkg: &str, channel: &str, csv: &str) -> QueryResult<proto::Bundle>;
    /// The channel head.
    fn get_bundle_for_channel(&self, pkg: &str, channel: &str) -> QueryResult<proto::Bundle>;
    /// Entries that replace (or skip) `csv`.
    fn get_channel_entries_that_replace(&self, csv: &str) -> QueryResult<Vec<proto::ChannelEntry>>;
    /// The bundle that replaces `csv` in a channel.
    fn get_bundle_that_replaces(
        &self,
        csv: &str,
        pkg: &str,
        channel: &str,
    ) -> QueryResult<proto::Bundle>;
    /// Entries of bundles that provide an API.
    fn get_channel_entries_that_provide(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> QueryResult<Vec<proto::ChannelEntry>>;
    /// Entries of the newest bundles per channel that provide an API.
    fn get_latest_channel_entries_that_provide(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> QueryResult<Vec<proto::ChannelEntry>>;
    /// The newest bundle of a default channel that provides an API.
    fn get_default_bundle_that_provides(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> QueryResult<proto::Bundle>;
    /// Every (bundle, channel) pair, without manifests, handed to `each`
    /// as it is read, in the order of the answer (opm's `ListBundles` sends
    /// each row as its query yields it). `each` answers false to stop early
    /// (the client went away). Only the row being built is held, so memory
    /// does not grow with the answer.
    fn list_bundles(&self, each: &mut dyn FnMut(proto::Bundle) -> bool) -> QueryResult<()>;
    /// One line saying what was loaded.
    fn summary(&self) -> String;
}

#[cfg(test)]
mod tests {
    use super::go_quote;

    #[test]
    fn quotes_as_go_strconv_quote() {
        assert_eq!(go_quote("etcd"), r#""etcd""#);
        assert_eq!(go_quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(go_quote("t\tn\n\u{0}\u{7f}"), r#""t\tn\n\x00\x7f""#);
        assert_eq!(go_quote("é漢\u{a0}\u{200b}"), r#""é漢\u00a0\u200b""#);
        assert_eq!(go_quote("\u{f0000}"), r#""\U000f0000""#);
    }
}
