//! Which files of a catalog must be read together.
//!
//! Every check of `opm validate` is about one package: its `olm.package`,
//! channels, bundles and deprecations. A package's objects may be spread
//! over several files and a file may hold several packages, so the files
//! fall into groups: two files are in one group when they share a package.
//! Reading and checking one group at a time gives the findings of reading
//! the whole catalog, with memory that follows the largest group instead of
//! the catalog (a catalog as `opm migrate` writes it has one file per
//! package).
//!
//! The scan reads each file once, keeping only each object's `schema`,
//! `name` and `package`; a file that does not scan (bad syntax, an object
//! that is not a mapping) is a group of its own, so that reading it in full
//! reports its error exactly as reading the whole catalog would.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::de::IgnoredAny;
use serde::Deserialize;

use super::{catalog_files, FbcError, SCHEMA_PACKAGE};

/// Files to read together, in path order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileGroup {
    /// Each file with its position in the catalog's path order.
    pub files: Vec<(usize, PathBuf)>,
}

impl FileGroup {
    /// The group's files, in path order.
    pub fn paths(&self) -> impl Iterator<Item = PathBuf> + '_ {
        self.files.iter().map(|(_, f)| f.clone())
    }

    /// Where a read of this group failed with `e`, as a position in the
    /// catalog's path order: the file `e` names, else the group's first.
    /// The failure of the smallest position is the one a read of the whole
    /// catalog, file after file, would have met first.
    pub fn position_of(&self, e: &FbcError) -> usize {
        let named = match e {
            FbcError::Io { path, .. }
            | FbcError::Invalid { path, .. }
            | FbcError::TooLarge { path, .. } => Some(path),
            _ => None,
        };
        let first = self.files.first().map_or(0, |(i, _)| *i);
        named
            .and_then(|p| self.files.iter().find(|(_, f)| f == p))
            .map_or(first, |(i, _)| *i)
    }
}

/// The groups of the catalog at `path` (a directory or one file), ordered
/// by their first file.
pub fn package_groups(path: &Path) -> Result<Vec<FileGroup>, FbcError> {
    let files = catalog_files(path)?;
    let mut parent: Vec<usize> = (0..files.len()).collect();
    let mut owner: HashMap<String, usize> = HashMap::new();
    for (i, f) in files.iter().enumerate() {
        // A file that does not scan (or is not text, or is too large)
        // stays alone: reading it reports why.
        let text = match super::read_catalog_file(f) {
            Ok(text) => Some(text),
            Err(e @ FbcError::Io { .. }) => return Err(e),
            Err(_) => None,
        };
        for package in text.as_deref().and_then(scan_packages).unwrap_or_default() {
            match owner.get(&package) {
                Some(&j) => union(&mut parent, i, j),
                None => {
                    owner.insert(package, i);
                }
            }
        }
    }
    let mut groups: Vec<FileGroup> = Vec::new();
    let mut group_of_root: HashMap<usize, usize> = HashMap::new();
    for (i, f) in files.into_iter().enumerate() {
        let root = find(&mut parent, i);
        let g = *group_of_root.entry(root).or_insert_with(|| {
            groups.push(FileGroup { files: Vec::new() });
            groups.len() - 1
        });
        groups[g].files.push((i, f));
    }
    Ok(groups)
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    // The smaller index stays the root, so groups keep path order.
    if ra < rb {
        parent[rb] = ra;
    } else {
        parent[ra] = rb;
    }
}

/// The fields of an object that say which package it belongs to; any other
/// field is skipped without being built.
#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    schema: Option<Scalar>,
    #[serde(default)]
    name: Option<Scalar>,
    #[serde(default)]
    package: Option<Scalar>,
}

/// A string, or anything else (ignored): the scan never fails on a field's
/// type; the full read reports it.
enum Scalar {
    Text(String),
    Other,
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Scalar, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::Text(v.to_string()))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_unit<E>(self) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Scalar, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Scalar, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
        }
        d.deserialize_any(V)
    }
}

impl Scalar {
    fn text(this: &Option<Scalar>) -> Option<&str> {
        match this {
            Some(Scalar::Text(t)) => Some(t),
            _ => None,
        }
    }
}

/// The package each object of one file's text belongs to (an
/// `olm.package`'s name, any other object's `package`); `None` when the
/// text does not scan.
fn scan_packages(text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut add = |schema: Option<&str>, name: Option<&str>, package: Option<&str>| {
        let p = if schema == Some(SCHEMA_PACKAGE) {
            name
        } else {
            package
        };
        if let Some(p) = p {
            if out.last().map(String::as_str) != Some(p) {
                out.push(p.to_string());
            }
        }
    };
    if text.trim_start().starts_with('{') {
        for head in serde_json::Deserializer::from_str(text).into_iter::<Head>() {
            let h = head.ok()?;
            add(
                Scalar::text(&h.schema),
                Scalar::text(&h.name),
                Scalar::text(&h.package),
            );
        }
        return Some(out);
    }
    for doc in crate::yaml::parse_documents(text).ok()? {
        let root = &doc.root;
        if matches!(root.value, crate::yaml::Value::Null) {
            continue;
        }
        let field = |k: &str| root.get(k).and_then(crate::yaml::Node::as_str);
        add(field("schema"), field("name"), field("package"));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(groups: &[FileGroup]) -> Vec<Vec<String>> {
        groups
            .iter()
            .map(|g| {
                g.files
                    .iter()
                    .map(|(_, p)| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .map(Option::unwrap_or_default)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn files_sharing_a_package_are_one_group() {
        let dir = tempfile::tempdir().expect("tmp");
        let w =
            |name: &str, text: &str| std::fs::write(dir.path().join(name), text).expect("write");
        w("a.json", "{\"schema\":\"olm.package\",\"name\":\"p\"}\n{\"schema\":\"olm.package\",\"name\":\"q\",\"icon\":{\"x\":[1,2]}}");
        w("b.yaml", "schema: olm.package\nname: r\n");
        w("c.yaml", "schema: olm.channel\nname: s\npackage: q\n");
        w(
            "d.json",
            "{\"schema\":\"olm.bundle\",\"name\":5,\"package\":\"r\"}",
        );
        w("e.json", "{\"schema\":\"olm.bundle\",\"package\":");
        w("f.yaml", "schema: other\n");
        let groups = package_groups(dir.path()).expect("groups");
        assert_eq!(
            names(&groups),
            vec![
                vec!["a.json", "c.yaml"],
                vec!["b.yaml", "d.json"],
                vec!["e.json"],
                vec!["f.yaml"]
            ]
        );
        assert_eq!(groups[1].files[1].0, 3);
    }
}
