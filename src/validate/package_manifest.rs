//! Package manifests (`package.yaml`, `<name>.package.yaml`) of the
//! package-manifest layout: operator-framework/api
//! `pkg/validation/internal/package_manifest.go`, the same seven checks at
//! the same level (all errors), with findings located at the offending value.
//!
//! `bundle validate DIR` runs them when `DIR` has no `manifests/` or
//! `metadata/` but holds a package manifest file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::rules::{finding, finding_hint};
use crate::bundle::{SourceFile, MAX_FILE_SIZE};
use crate::diag::{Finding, Location};
use crate::path;
use crate::yaml::{self, Node, Value};

/// Whether `name` is a package manifest file name.
pub fn is_package_file_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    matches!(lower.as_str(), "package.yaml" | "package.yml")
        || lower.ends_with(".package.yaml")
        || lower.ends_with(".package.yml")
}

/// The package manifest files directly in `dir`, sorted by name.
pub fn package_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| is_package_file_name(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect();
    files.sort();
    files
}

/// Reads and checks one package manifest file.
pub fn check_file(path: &Path) -> Vec<Finding> {
    let here = || Location::file(path);
    match std::fs::metadata(path) {
        Ok(m) if m.len() > MAX_FILE_SIZE => {
            return vec![finding(
                "file-too-large",
                format!(
                    "{} is over the {} MiB limit; it was not read",
                    path.display(),
                    MAX_FILE_SIZE / (1024 * 1024)
                ),
            )
            .at(here())]
        }
        Ok(m) if !m.is_file() => {
            return vec![finding(
                "file-not-regular",
                format!("{} is not a regular file; it was not read", path.display()),
            )
            .at(here())]
        }
        Ok(_) => {}
        Err(e) => {
            return vec![
                finding("io-error", format!("cannot read {}: {e}", path.display())).at(here()),
            ]
        }
    }
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            return vec![
                finding("io-error", format!("cannot read {}: {e}", path.display())).at(here()),
            ]
        }
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return vec![finding(
            "file-not-utf8",
            format!("{} is not valid UTF-8", path.display()),
        )
        .at(here())];
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = Arc::new(SourceFile {
        rel_path: name.clone(),
        display_path: path.to_path_buf(),
        text,
    });
    check_text(&file)
}

/// Checks the package manifest held by `file`.
pub fn check_text(file: &Arc<SourceFile>) -> Vec<Finding> {
    let mut out = Vec::new();
    let docs = match yaml::parse_documents(&file.text) {
        Ok(d) => d,
        Err(e) => {
            out.push(
                finding(
                    "yaml-syntax",
                    format!("{} is not valid YAML: {}", file.rel_path, e.message),
                )
                .at(file.location(e.span)),
            );
            return out;
        }
    };
    for doc in &docs {
        for dup in &doc.duplicate_keys {
            out.push(
                finding(
                    "yaml-duplicate-key",
                    format!(
                        "key `{}` appears twice in one mapping; the value at line {} is silently dropped",
                        dup.key, dup.first.line
                    ),
                )
                .at(file.location(dup.second))
                .related(file.location(dup.first)),
            );
        }
    }
    let Some(root) = docs.into_iter().map(|d| d.root).next() else {
        out.push(
            finding("file-empty", format!("{} is empty", file.rel_path))
                .at(Location::file(&file.display_path)),
        );
        return out;
    };
    check_root(file, &root, &mut out);
    out
}

/// A string field, or a finding when it has another type.
fn string_field(
    file: &SourceFile,
    node: Option<&Node>,
    what: &str,
    out: &mut Vec<Finding>,
) -> String {
    match node.map(|n| (&n.value, n)) {
        None | Some((Value::Null, _)) => String::new(),
        Some((Value::Str(s), _)) => s.clone(),
        Some((_, n)) => {
            out.push(
                finding(
                    "package-manifest-invalid",
                    format!("{what} is a {}, not a string", n.type_name()),
                )
                .at(file.location(n.span)),
            );
            String::new()
        }
    }
}

fn check_root(file: &SourceFile, root: &Node, out: &mut Vec<Finding>) {
    if !matches!(root.value, Value::Map(_)) {
        out.push(
            finding(
                "package-manifest-invalid",
                format!(
                    "{} is a {}, not a package manifest mapping",
                    file.rel_path,
                    root.type_name()
                ),
            )
            .at(file.location(root.span)),
        );
        return;
    }
    let at = |p: &[yaml::Seg]| file.location(root.locate(p));
    let package = string_field(file, root.get("packageName"), "packageName", out);
    if package.is_empty() {
        out.push(
            finding_hint(
                "package-manifest-name-empty",
                "packageName empty",
                "set packageName to the name of the operator's package",
            )
            .at(at(&path!["packageName"])),
        );
    }
    let default = string_field(file, root.get("defaultChannel"), "defaultChannel", out);
    let channels: &[Node] = match root.get("channels").map(|n| &n.value) {
        Some(Value::Seq(items)) => items,
        None | Some(Value::Null) => &[],
        Some(_) => {
            if let Some(n) = root.get("channels") {
                out.push(
                    finding(
                        "package-manifest-invalid",
                        format!("channels is a {}, not a list", n.type_name()),
                    )
                    .at(file.location(n.span)),
                );
            }
            &[]
        }
    };
    if channels.is_empty() {
        out.push(
            finding_hint(
                "package-manifest-channels-empty",
                format!("({package}) channels empty"),
                "list at least one channel with its name and currentCSV",
            )
            .at(at(&path!["channels"])),
        );
        return;
    }
    if default.is_empty() && channels.len() > 1 {
        out.push(
            finding_hint(
                "package-manifest-default-channel-empty",
                format!("({package}) default channel is empty but more than one channel exists"),
                "set defaultChannel to one of the channels",
            )
            .at(at(&path!["defaultChannel"])),
        );
    }
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, ch) in channels.iter().enumerate() {
        if !matches!(ch.value, Value::Map(_)) {
            out.push(
                finding(
                    "package-manifest-invalid",
                    format!("channel {i} is a {}, not a mapping", ch.type_name()),
                )
                .at(file.location(ch.span)),
            );
            continue;
        }
        let name = string_field(file, ch.get("name"), &format!("channel {i} name"), out);
        let current = string_field(
            file,
            ch.get("currentCSV"),
            &format!("channel {i} currentCSV"),
            out,
        );
        if name.is_empty() {
            out.push(
                finding(
                    "package-manifest-channel-name-empty",
                    format!("({package}) channel {i} name is empty"),
                )
                .at(at(&path!["channels", i, "name"])),
            );
        }
        if current.is_empty() {
            out.push(
                finding_hint(
                    "package-manifest-current-csv-empty",
                    format!("({package}) channel {name:?} currentCSV is empty"),
                    "set currentCSV to the name of the channel's head CSV",
                )
                .at(at(&path!["channels", i, "currentCSV"])),
            );
        }
        if let Some(first) = seen.get(&name) {
            out.push(
                finding(
                    "package-manifest-channel-duplicate",
                    format!("({package}) duplicate package manifest channel name {name:?}"),
                )
                .at(at(&path!["channels", i, "name"]))
                .related(at(&path!["channels", *first, "name"])),
            );
        } else {
            seen.insert(name, i);
        }
    }
    if !default.is_empty() && !seen.contains_key(&default) {
        out.push(
            finding_hint(
                "package-manifest-default-channel-not-found",
                format!(
                    "({package}) default channel {default:?} not found in the list of declared channels"
                ),
                &format!(
                    "declared channels: {}",
                    seen.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            )
            .at(at(&path!["defaultChannel"])),
        );
    }
}
