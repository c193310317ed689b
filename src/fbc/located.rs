//! A catalog read with the position of every object, so that checks on it
//! can name the file and line of an offending channel entry, `replaces`,
//! `skips` item or `skipRange`.
//!
//! [`DeclarativeConfig::load_path`] keeps no positions (opm does not either,
//! and serving a catalog does not need them). This loader reads the same
//! files into the same [`DeclarativeConfig`] and, in parallel with its
//! `packages`, `channels` and `bundles`, a [`yaml::Node`] tree per object
//! whose spans are positions in the object's file. JSON streams are located
//! object by object: each object's text is parsed as YAML (JSON is YAML's
//! flow syntax) and its spans moved to where the object starts.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{catalog_files, DeclarativeConfig, FbcError};
use crate::diag::Location;
use crate::yaml::{self, Node, Span};

/// Where one object is written.
#[derive(Clone, Debug)]
pub struct ObjectSource {
    /// Index of the file in [`Sources::files`].
    pub file: usize,
    /// The object with positions in its file. For bundles, properties other
    /// than `olm.package` are replaced by `null` (keeping their indexes) so
    /// that large catalogs do not hold every manifest twice. `None` when the
    /// object's text could not be located (it still loaded).
    pub node: Option<Node>,
    /// Where the object starts.
    pub span: Span,
}

/// The positions of a catalog's objects, parallel to the vectors of the
/// [`DeclarativeConfig`] they were loaded with.
#[derive(Clone, Debug, Default)]
pub struct Sources {
    /// Each file read, with its text (for quoting source lines).
    pub files: Vec<(PathBuf, String)>,
    /// One per `olm.package` object.
    pub packages: Vec<ObjectSource>,
    /// One per `olm.channel` object.
    pub channels: Vec<ObjectSource>,
    /// One per `olm.bundle` object.
    pub bundles: Vec<ObjectSource>,
    /// One per `olm.deprecations` object.
    pub deprecations: Vec<ObjectSource>,
}

impl Sources {
    /// The location of `path` inside object `src` (the object itself when
    /// the path does not exist), with its source line.
    pub fn location(&self, src: &ObjectSource, path: &[yaml::Seg]) -> Location {
        let (file, text) = &self.files[src.file];
        let span = src.node.as_ref().map_or(src.span, |n| n.locate(path));
        Location::new(file, span, Some(text))
    }

    /// Like [`Sources::location`], pointing at the key when the last
    /// segment is an existing key.
    pub fn key_location(&self, src: &ObjectSource, path: &[yaml::Seg]) -> Location {
        let (file, text) = &self.files[src.file];
        let span = src.node.as_ref().map_or(src.span, |n| n.locate_key(path));
        Location::new(file, span, Some(text))
    }
}

impl DeclarativeConfig {
    /// [`DeclarativeConfig::load_path`], also returning where each object is
    /// written.
    pub fn load_path_located(path: &Path) -> Result<(DeclarativeConfig, Sources), FbcError> {
        DeclarativeConfig::load_files_located(catalog_files(path)?)
    }

    /// [`DeclarativeConfig::load_path_located`] of the given files, in the
    /// order given (one of the groups of `groups::package_groups`).
    pub fn load_files_located(
        files: impl IntoIterator<Item = PathBuf>,
    ) -> Result<(DeclarativeConfig, Sources), FbcError> {
        let mut cfg = DeclarativeConfig::default();
        let mut sources = Sources::default();
        for f in files {
            let text = super::read_catalog_file(&f)?;
            let file = sources.files.len();
            let objects = located_objects(&text, &f).map_err(|e| super::not_content_hint(e, &f))?;
            for (obj, node, span) in objects {
                let schema = obj
                    .get("schema")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                cfg.push_object(obj)
                    .map_err(|m| FbcError::Invalid {
                        path: f.clone(),
                        line: span.line,
                        column: span.column,
                        message: m.to_string(),
                    })
                    .map_err(|e| super::not_content_hint(e, &f))?;
                let src = |node| ObjectSource { file, node, span };
                match schema.as_str() {
                    super::SCHEMA_PACKAGE => sources.packages.push(src(node)),
                    super::SCHEMA_CHANNEL => sources.channels.push(src(node)),
                    super::SCHEMA_BUNDLE => sources.bundles.push(src(node.map(prune_bundle))),
                    super::SCHEMA_DEPRECATIONS => sources.deprecations.push(src(node)),
                    _ => {}
                }
            }
            sources.files.push((f, text));
        }
        Ok((cfg, sources))
    }
}

/// Each object of one file: its JSON value, its located tree and where it
/// starts.
fn located_objects(text: &str, path: &Path) -> Result<Vec<(Value, Option<Node>, Span)>, FbcError> {
    let invalid = |line, column, message| FbcError::Invalid {
        path: path.to_path_buf(),
        line,
        column,
        message,
    };
    let mut out = Vec::new();
    if text.trim_start().starts_with('{') {
        let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
        let mut cursor = yaml::PositionCursor::new(text);
        loop {
            let before = stream.byte_offset();
            let Some(obj) = stream.next() else { break };
            let obj =
                obj.map_err(|e| invalid(e.line() as u32, e.column() as u32, e.to_string()))?;
            let after = stream.byte_offset();
            let at = super::json_object_start(text, before, after, &mut cursor);
            let start = before + text[before..after].len() - text[before..after].trim_start().len();
            let node = yaml::parse_documents(&text[start..after])
                .ok()
                .and_then(|mut d| (!d.is_empty()).then(|| d.remove(0).root))
                .map(|mut n| {
                    shift(&mut n, at.line - 1, at.column - 1);
                    n
                });
            out.push((obj, node, at));
        }
        return Ok(out);
    }
    let docs =
        yaml::parse_documents(text).map_err(|e| invalid(e.span.line, e.span.column, e.message))?;
    for doc in docs {
        if matches!(doc.root.value, yaml::Value::Null) {
            continue;
        }
        let span = doc.root.span;
        out.push((doc.root.to_json(), Some(doc.root), span));
    }
    Ok(out)
}

/// Moves spans parsed from a slice to positions in the whole file: `lines`
/// down, and `columns` right on the slice's first line.
fn shift(node: &mut Node, lines: u32, columns: u32) {
    let fix = |s: &mut Span| {
        if s.line == 1 {
            s.column += columns;
        }
        if s.end_line == 1 {
            s.end_column += columns;
        }
        s.line += lines;
        s.end_line += lines;
    };
    fix(&mut node.span);
    match &mut node.value {
        yaml::Value::Seq(items) => items.iter_mut().for_each(|n| shift(n, lines, columns)),
        yaml::Value::Map(entries) => {
            for e in entries {
                fix(&mut e.key_span);
                shift(&mut e.value, lines, columns);
            }
        }
        _ => {}
    }
}

/// A bundle's tree without the bulk: properties other than `olm.package`
/// become `null`, other fields than name, package, image, properties and
/// relatedImages go.
fn prune_bundle(mut node: Node) -> Node {
    if let yaml::Value::Map(entries) = &mut node.value {
        entries.retain(|e| {
            matches!(
                e.key.as_str(),
                "schema" | "name" | "package" | "image" | "properties" | "relatedImages"
            )
        });
        for e in entries.iter_mut() {
            if e.key != "properties" {
                continue;
            }
            if let yaml::Value::Seq(items) = &mut e.value.value {
                for item in items.iter_mut() {
                    let is_pkg =
                        item.get("type").and_then(Node::as_str) == Some(super::SCHEMA_PACKAGE);
                    if !is_pkg {
                        item.value = yaml::Value::Null;
                    }
                }
            }
        }
    }
    node
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path;

    #[test]
    fn yaml_and_json_objects_keep_their_lines() {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(
            dir.path().join("a.yaml"),
            "---\nschema: olm.package\nname: p\ndefaultChannel: s\n---\nschema: olm.channel\nname: s\npackage: p\nentries:\n- name: p.v1\n- name: p.v2\n  replaces: p.v1\n  skipRange: '<1.0.0'\n",
        )
        .expect("write");
        std::fs::write(
            dir.path().join("b.json"),
            "{\n    \"schema\": \"olm.bundle\",\n    \"name\": \"p.v1\",\n    \"package\": \"p\",\n    \"properties\": [\n        {\"type\": \"olm.gvk\", \"value\": {}},\n        {\"type\": \"olm.package\", \"value\": {\"packageName\": \"p\", \"version\": \"1.0.0\"}}\n    ]\n}\n  {\"schema\": \"olm.bundle\", \"name\": \"p.v2\", \"package\": \"p\"}\n",
        )
        .expect("write");
        let (cfg, src) = DeclarativeConfig::load_path_located(dir.path()).expect("loads");
        assert_eq!(
            (cfg.packages.len(), cfg.channels.len(), cfg.bundles.len()),
            (1, 1, 2)
        );
        let ch = &src.channels[0];
        let l = src.location(ch, &path!["entries", 1, "replaces"]);
        assert!(l.file.ends_with("a.yaml"));
        assert_eq!((l.line, l.column), (12, 13));
        assert_eq!(l.source_line.as_deref(), Some("  replaces: p.v1"));
        let l = src.location(ch, &path!["entries", 1, "skipRange"]);
        assert_eq!(l.line, 13);
        let l = src.key_location(&src.packages[0], &path!["defaultChannel"]);
        assert_eq!((l.line, l.column), (4, 1));
        let b = &src.bundles[0];
        let l = src.location(b, &path!["properties", 1, "value", "version"]);
        assert!(l.file.ends_with("b.json"));
        assert_eq!(l.line, 7);
        assert!(b
            .node
            .as_ref()
            .and_then(|n| n.at(&path!["properties", 0, "type"]))
            .is_none());
        let l = src.location(&src.bundles[1], &[]);
        assert_eq!((l.line, l.column), (10, 3));
    }
}
