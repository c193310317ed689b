//! Writing FBC streams as `opm render` does (alpha/declcfg/write.go):
//! grouped by package (package, its channels by name, its bundles by name,
//! then other objects and deprecations), JSON indented by four spaces
//! without HTML escaping, or YAML documents as go-yaml v2 writes them
//! ([`crate::goyaml`]).

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use super::{DeclarativeConfig, FbcError};

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum OutputFormat {
    /// A stream of JSON objects (opm's default).
    Json,
    /// YAML documents separated by `---`.
    Yaml,
}

enum Obj<'a> {
    Package(&'a super::Package),
    Channel(&'a super::Channel),
    Bundle(&'a super::Bundle),
    Deprecation(&'a super::Deprecation),
    Other(&'a Value),
}

/// One package's objects (the package `""`: objects of other schemas
/// with no package).
#[derive(Default)]
struct Group<'a> {
    packages: Vec<&'a super::Package>,
    channels: Vec<&'a super::Channel>,
    bundles: Vec<&'a super::Bundle>,
    deprecations: Vec<&'a super::Deprecation>,
    others: Vec<&'a Value>,
}

impl<'a> Group<'a> {
    /// The group's objects in opm's order: the package, its channels and
    /// bundles by name, its deprecations, then the other objects by schema
    /// and name.
    fn into_objects(mut self) -> impl Iterator<Item = Obj<'a>> {
        let key = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        // Names are unique in a valid catalog, so stability does not matter.
        self.packages.sort_by(|a, b| a.name.cmp(&b.name));
        self.channels.sort_by(|a, b| a.name.cmp(&b.name));
        self.bundles.sort_by(|a, b| a.name.cmp(&b.name));
        self.others
            .sort_by_key(|v| (key(v, "schema"), key(v, "name")));
        self.packages
            .into_iter()
            .map(Obj::Package)
            .chain(self.channels.into_iter().map(Obj::Channel))
            .chain(self.bundles.into_iter().map(Obj::Bundle))
            .chain(self.deprecations.into_iter().map(Obj::Deprecation))
            .chain(self.others.into_iter().map(Obj::Other))
    }
}

/// The objects of `cfg` by package name, in sorted order, as opm groups
/// them (`declcfg.organizeByPackage`).
fn groups(cfg: &DeclarativeConfig) -> BTreeMap<&str, Group<'_>> {
    let mut groups: BTreeMap<&str, Group<'_>> = BTreeMap::new();
    for p in &cfg.packages {
        groups.entry(&p.name).or_default().packages.push(p);
    }
    for c in &cfg.channels {
        groups.entry(&c.package).or_default().channels.push(c);
    }
    for b in &cfg.bundles {
        groups.entry(&b.package).or_default().bundles.push(b);
    }
    for d in &cfg.deprecations {
        groups.entry(&d.package).or_default().deprecations.push(d);
    }
    for o in &cfg.others {
        let pkg = o.get("package").and_then(Value::as_str).unwrap_or("");
        groups.entry(pkg).or_default().others.push(o);
    }
    groups
}

/// The objects of `cfg` in opm's output order (`declcfg.writeToEncoder`):
/// the [`groups`] in package-name order (the group `""` first), each in
/// [`Group::into_objects`]'s order.
fn ordered(cfg: &DeclarativeConfig) -> impl Iterator<Item = Obj<'_>> {
    groups(cfg).into_values().flat_map(Group::into_objects)
}

/// The objects of `cfg` as JSON values, in the order opm writes them.
pub fn ordered_values(cfg: &DeclarativeConfig) -> Vec<Value> {
    ordered(cfg)
        .map(|o| value_of(&o).unwrap_or(Value::Null))
        .collect()
}

/// JSON the way Go's `json.Encoder` with `SetIndent("", "    ")` and
/// `SetEscapeHTML(false)` writes it, newline-terminated.
pub fn to_go_indented_json<T: Serialize>(value: &T) -> Result<String, serde_json::Error> {
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    value.serialize(&mut ser)?;
    // Go escapes these two even without HTML escaping; they only occur in
    // strings. Both start with the bytes E2 80: one SIMD search for those
    // instead of a char-by-char scan of the whole output (6% of a render).
    let has_separator = memchr::memmem::find_iter(&buf, b"\xE2\x80")
        .any(|i| matches!(buf.get(i + 2), Some(0xA8 | 0xA9)));
    let mut s = String::from_utf8(buf).unwrap_or_default();
    if has_separator {
        s = s
            .replace('\u{2028}', "\\u2028")
            .replace('\u{2029}', "\\u2029");
    }
    s.push('\n');
    Ok(s)
}

fn value_of(o: &Obj<'_>) -> Result<Value, serde_json::Error> {
    match o {
        Obj::Package(p) => serde_json::to_value(p),
        Obj::Channel(c) => serde_json::to_value(c),
        Obj::Bundle(b) => serde_json::to_value(b),
        Obj::Deprecation(d) => serde_json::to_value(d),
        Obj::Other(v) => Ok((*v).clone()),
    }
}

/// Writes `cfg` to `w` in `format`.
pub fn write(
    cfg: &DeclarativeConfig,
    format: OutputFormat,
    w: &mut dyn Write,
) -> Result<(), FbcError> {
    write_objects(ordered(cfg), format, w)
}

fn write_objects<'a>(
    objects: impl Iterator<Item = Obj<'a>>,
    format: OutputFormat,
    w: &mut dyn Write,
) -> Result<(), FbcError> {
    for o in objects {
        match format {
            OutputFormat::Json => {
                let s = match &o {
                    Obj::Package(p) => to_go_indented_json(p)?,
                    Obj::Channel(c) => to_go_indented_json(c)?,
                    Obj::Bundle(b) => to_go_indented_json(b)?,
                    Obj::Deprecation(d) => to_go_indented_json(d)?,
                    Obj::Other(v) => to_go_indented_json(v)?,
                };
                w.write_all(s.as_bytes()).map_err(FbcError::Write)?;
            }
            OutputFormat::Yaml => {
                // opm marshals through JSON and sigs.k8s.io/yaml.
                let v = value_of(&o)?;
                let s = crate::goyaml::to_string(&v);
                w.write_all(b"---\n").map_err(FbcError::Write)?;
                w.write_all(s.as_bytes()).map_err(FbcError::Write)?;
            }
        }
    }
    Ok(())
}

/// Writes `cfg` as a directory with one `<package>/catalog.json` (or
/// `.yaml`) per package, as `opm migrate` does (`declcfg.WriteFS`): objects
/// of other schemas go with their package, and those with no package to
/// `catalog.json` at the top of `dir`, so nothing of the catalog is lost.
pub fn write_dir(
    cfg: &DeclarativeConfig,
    format: OutputFormat,
    dir: &std::path::Path,
) -> Result<(), FbcError> {
    let io = |path: &std::path::Path| {
        let path = path.to_path_buf();
        move |source| FbcError::Io { path, source }
    };
    for (pkg, group) in groups(cfg) {
        if pkg.contains('/') || pkg.contains('\\') || pkg == "." || pkg == ".." {
            return Err(FbcError::UnsafePackageName(pkg.to_string()));
        }
        // The package "" is the catalog's global objects: `dir` itself.
        let sub = if pkg.is_empty() {
            dir.to_path_buf()
        } else {
            dir.join(pkg)
        };
        std::fs::create_dir_all(&sub).map_err(io(&sub))?;
        let file = sub.join(match format {
            OutputFormat::Json => "catalog.json",
            OutputFormat::Yaml => "catalog.yaml",
        });
        let mut buf = Vec::new();
        write_objects(group.into_objects(), format, &mut buf)?;
        std::fs::write(&file, buf).map_err(io(&file))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_paragraph_separators_are_escaped_as_go_escapes_them() {
        let v = serde_json::json!({"d": "a\u{2028}b\u{2029}c\u{201c}q\u{201d}\u{2013}<&>"});
        assert_eq!(
            to_go_indented_json(&v).expect("json"),
            "{\n    \"d\": \"a\\u2028b\\u2029c\u{201c}q\u{201d}\u{2013}<&>\"\n}\n"
        );
    }

    #[test]
    fn objects_come_in_opm_order() {
        let mut cfg = DeclarativeConfig::default();
        for o in [
            r#"{"schema":"olm.bundle","name":"b.v1","package":"b","image":"i"}"#,
            r#"{"schema":"x.other","name":"z","package":"b"}"#,
            r#"{"schema":"olm.deprecations","package":"b","entries":[]}"#,
            r#"{"schema":"olm.channel","name":"s","package":"b","entries":[]}"#,
            r#"{"schema":"olm.package","name":"b"}"#,
            r#"{"schema":"x.global","name":"g"}"#,
            r#"{"schema":"olm.package","name":"a"}"#,
        ] {
            cfg.push_object(serde_json::from_str(o).expect("json"))
                .expect("object");
        }
        let order: Vec<String> = ordered_values(&cfg)
            .iter()
            .map(|v| {
                format!(
                    "{}:{}",
                    v["schema"].as_str().unwrap_or(""),
                    v["name"].as_str().unwrap_or("")
                )
            })
            .collect();
        assert_eq!(
            order,
            [
                "x.global:g",
                "olm.package:a",
                "olm.package:b",
                "olm.channel:s",
                "olm.bundle:b.v1",
                "olm.deprecations:",
                "x.other:z"
            ]
        );
        let mut out = Vec::new();
        write(&cfg, OutputFormat::Yaml, &mut out).expect("write");
        let text = String::from_utf8(out).expect("utf8");
        assert!(
            text.starts_with("---\nname: g\nschema: x.global\n---\nname: a\nschema: olm.package\n"),
            "{text}"
        );
    }

    #[test]
    fn write_dir_keeps_objects_of_other_schemas_where_opm_puts_them() {
        let mut cfg = DeclarativeConfig::default();
        for o in [
            r#"{"schema":"olm.package","name":"b"}"#,
            r#"{"schema":"x.other","name":"z","package":"b"}"#,
            r#"{"schema":"x.global","name":"g"}"#,
        ] {
            cfg.push_object(serde_json::from_str(o).expect("json"))
                .expect("object");
        }
        let dir = tempfile::tempdir().expect("tempdir");
        write_dir(&cfg, OutputFormat::Json, dir.path()).expect("write_dir");
        let top = std::fs::read_to_string(dir.path().join("catalog.json")).expect("top");
        assert!(top.contains("\"x.global\""), "{top}");
        let b = std::fs::read_to_string(dir.path().join("b/catalog.json")).expect("b");
        assert!(
            b.contains("\"olm.package\"") && b.contains("\"x.other\""),
            "{b}"
        );
        assert!(!b.contains("x.global"), "{b}");
    }

    #[test]
    fn write_dir_refuses_package_names_that_leave_the_directory() {
        for name in ["..", "a/b", "."] {
            let mut cfg = DeclarativeConfig::default();
            cfg.push_object(serde_json::json!({"schema": "olm.package", "name": name}))
                .expect("object");
            let dir = tempfile::tempdir().expect("tempdir");
            assert!(matches!(
                write_dir(&cfg, OutputFormat::Json, dir.path()),
                Err(FbcError::UnsafePackageName(_))
            ));
        }
    }
}
