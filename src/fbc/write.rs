//! Writing FBC streams as `opm render` does (alpha/declcfg/write.go):
//! grouped by package (package, its channels by name, its bundles by name,
//! then other objects and deprecations), JSON indented by four spaces
//! without HTML escaping, or YAML documents.

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use super::DeclarativeConfig;

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
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

/// The objects of `cfg` in opm's output order.
fn ordered(cfg: &DeclarativeConfig) -> Vec<Obj<'_>> {
    let mut by_pkg: BTreeMap<&str, Vec<Obj<'_>>> = BTreeMap::new();
    let mut globals = Vec::new();
    let mut pkgs: Vec<_> = cfg.packages.iter().collect();
    pkgs.sort_by(|a, b| a.name.cmp(&b.name));
    for p in pkgs {
        by_pkg.entry(&p.name).or_default().push(Obj::Package(p));
    }
    let mut chans: Vec<_> = cfg.channels.iter().collect();
    chans.sort_by(|a, b| a.package.cmp(&b.package).then(a.name.cmp(&b.name)));
    for c in chans {
        by_pkg.entry(&c.package).or_default().push(Obj::Channel(c));
    }
    let mut bundles: Vec<_> = cfg.bundles.iter().collect();
    bundles.sort_by(|a, b| a.package.cmp(&b.package).then(a.name.cmp(&b.name)));
    for b in bundles {
        by_pkg.entry(&b.package).or_default().push(Obj::Bundle(b));
    }
    let mut others: Vec<&Value> = cfg.others.iter().collect();
    let key = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    others.sort_by_key(|v| (key(v, "schema"), key(v, "name")));
    for o in others {
        let pkg = o.get("package").and_then(Value::as_str).unwrap_or("");
        if pkg.is_empty() {
            globals.push(Obj::Other(o));
        } else {
            by_pkg.entry(pkg).or_default().push(Obj::Other(o));
        }
    }
    for d in &cfg.deprecations {
        by_pkg
            .entry(&d.package)
            .or_default()
            .push(Obj::Deprecation(d));
    }
    let mut out: Vec<Obj<'_>> = by_pkg.into_values().flatten().collect();
    out.extend(globals);
    out
}

/// JSON the way Go's `json.Encoder` with `SetIndent("", "    ")` and
/// `SetEscapeHTML(false)` writes it, newline-terminated.
pub fn to_go_indented_json<T: Serialize>(value: &T) -> Result<String, serde_json::Error> {
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    value.serialize(&mut ser)?;
    let mut s = String::from_utf8(buf).unwrap_or_default();
    // Go escapes these two even without HTML escaping; they only occur in strings.
    if s.contains(['\u{2028}', '\u{2029}']) {
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
) -> anyhow::Result<()> {
    for o in ordered(cfg) {
        match format {
            OutputFormat::Json => {
                let s = match &o {
                    Obj::Package(p) => to_go_indented_json(p)?,
                    Obj::Channel(c) => to_go_indented_json(c)?,
                    Obj::Bundle(b) => to_go_indented_json(b)?,
                    Obj::Deprecation(d) => to_go_indented_json(d)?,
                    Obj::Other(v) => to_go_indented_json(v)?,
                };
                w.write_all(s.as_bytes())?;
            }
            OutputFormat::Yaml => {
                // opm marshals through JSON, so keys come out sorted.
                let v = value_of(&o)?;
                let s = yaml_serde::to_string(&v)?;
                w.write_all(b"---\n")?;
                w.write_all(s.as_bytes())?;
            }
        }
    }
    Ok(())
}

/// Writes `cfg` as a directory with one `<package>/catalog.json` (or
/// `.yaml`) per package, as `opm migrate` does.
pub fn write_dir(
    cfg: &DeclarativeConfig,
    format: OutputFormat,
    dir: &std::path::Path,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let mut per: BTreeMap<String, DeclarativeConfig> = BTreeMap::new();
    for p in &cfg.packages {
        per.entry(p.name.clone())
            .or_default()
            .packages
            .push(p.clone());
    }
    for c in &cfg.channels {
        per.entry(c.package.clone())
            .or_default()
            .channels
            .push(c.clone());
    }
    for b in &cfg.bundles {
        per.entry(b.package.clone())
            .or_default()
            .bundles
            .push(b.clone());
    }
    for d in &cfg.deprecations {
        per.entry(d.package.clone())
            .or_default()
            .deprecations
            .push(d.clone());
    }
    for (pkg, part) in per {
        if pkg.is_empty() || pkg.contains('/') || pkg.contains("..") {
            anyhow::bail!("package name {pkg:?} cannot be a directory name");
        }
        let sub = dir.join(&pkg);
        std::fs::create_dir_all(&sub).with_context(|| format!("creating {}", sub.display()))?;
        let file = sub.join(match format {
            OutputFormat::Json => "catalog.json",
            OutputFormat::Yaml => "catalog.yaml",
        });
        let mut buf = Vec::new();
        write(&part, format, &mut buf)?;
        std::fs::write(&file, buf).with_context(|| format!("writing {}", file.display()))?;
    }
    Ok(())
}
