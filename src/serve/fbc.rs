//! The file-based catalog backend: answers as `opm serve` does
//! (operator-registry's `pkg/cache` over `alpha/model`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// Content opm's model conversion refuses: an [`super::Error::Inconsistent`].
macro_rules! inconsistent {
    ($($arg:tt)*) => {
        super::Error::Inconsistent(format!($($arg)*))
    };
}

/// Returns an [`super::Error::Inconsistent`].
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err(inconsistent!($($arg)*))
    };
}
use base64::Engine as _;
use serde_json::Value;

use super::csv::{csv_json_from_metadata, CsvInputs};
use super::model::*;
use crate::fbc::{self, DeclarativeConfig};
use crate::gojson;
use crate::proto;

struct Entry {
    replaces: Str,
    skips: Vec<Str>,
    skip_range: Str,
    data: Arc<BundleData>,
}

struct Channel {
    head: Str,
    deprecation: Option<Str>,
    bundles: BTreeMap<Str, Entry>,
}

struct Package {
    default_channel: Str,
    deprecation: Option<Str>,
    channels: BTreeMap<Str, Channel>,
}

/// A file-based catalog held in memory.
pub struct FbcRegistry {
    packages: BTreeMap<Str, Package>,
    bundle_count: usize,
}

/// The head of a channel: the one entry nothing replaces or skips, as
/// `model.Channel.Head` finds it.
fn channel_head(bundles: &BTreeMap<Str, Entry>) -> Result<Str, String> {
    let mut incoming: HashSet<&str> = HashSet::new();
    for e in bundles.values() {
        if !e.replaces.is_empty() {
            incoming.insert(&e.replaces);
        }
        for s in &e.skips {
            incoming.insert(s);
        }
    }
    let heads: Vec<&Str> = bundles
        .keys()
        .filter(|n| !incoming.contains(&***n))
        .collect();
    match heads.as_slice() {
        [] => Err("no channel head found in graph".into()),
        [one] => Ok((*one).clone()),
        many => Err(format!(
            "multiple channel heads found in graph: {}",
            many.iter().map(|h| &***h).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Go's `json.Marshal` of the property value as `sigs.k8s.io/yaml` turns it into JSON.
fn raw(v: &Value) -> Str {
    s(&gojson::to_string(v))
}

/// `property.MustBuild`: compact, without HTML escaping.
fn build_unescaped(v: &Value) -> Str {
    let escaped = gojson::to_string(v);
    s(&escaped
        .replace("\\u003c", "<")
        .replace("\\u003e", ">")
        .replace("\\u0026", "&"))
}

fn gvk_of(v: &Value) -> Gvk {
    Gvk::from_gvk(&crate::bundle::Gvk::from_json(v), "")
}

/// Manifests from `olm.bundle.object` properties (base64 `data`).
fn bundle_objects(b: &fbc::Bundle) -> super::Result<(Option<Str>, Vec<Str>)> {
    let mut csv = None;
    let mut objects = Vec::new();
    for p in b
        .properties
        .iter()
        .filter(|p| p.kind == "olm.bundle.object")
    {
        let Some(data) = p.field("data").and_then(Value::as_str) else {
            // A `ref` to a file next to the catalog: opm resolves it when
            // rendering; a served catalog carries data inline.
            continue;
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| {
                inconsistent!(
                    "bundle {:?}: olm.bundle.object data is not base64: {e}",
                    b.name
                )
            })?;
        let text = String::from_utf8(bytes).map_err(|_| {
            inconsistent!("bundle {:?}: olm.bundle.object data is not UTF-8", b.name)
        })?;
        let kind = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("kind").and_then(Value::as_str).map(str::to_string));
        let text = s(&text);
        if kind.as_deref() == Some("ClusterServiceVersion") && csv.is_none() {
            csv = Some(text.clone());
        }
        objects.push(text);
    }
    Ok((csv, objects))
}

impl FbcRegistry {
    /// Loads a directory (or one file) of FBC and checks it the way opm's
    /// model conversion does, so a broken catalog fails at start.
    ///
    /// The files are read and built one group at a time (the files that
    /// share a package, `fbc::groups`), groups in parallel, and each
    /// bundle's manifests go to a temporary file: memory holds a few
    /// packages' objects at start and none of the manifests after. When
    /// several packages are broken, the error is the one of the first
    /// broken file in path order (a file that does not read before a package
    /// that does not convert, as when the whole catalog was read first).
    pub fn load(path: &std::path::Path) -> super::Result<FbcRegistry> {
        use rayon::prelude::*;
        let unreadable = |source| super::Error::Fbc {
            path: path.to_path_buf(),
            source,
        };
        let groups = fbc::groups::package_groups(path).map_err(unreadable)?;
        let spool = ManifestSpool::new().ok().map(Arc::new);
        // Per group: the registry part, or (0 for a read, 1 for a model
        // error; the file's index) and the error.
        type Part = Result<FbcRegistry, ((u8, usize), super::Error)>;
        let parts: Vec<Part> = groups
            .into_par_iter()
            .map(|group| {
                let cfg = DeclarativeConfig::load_files(group.paths())
                    .map_err(|e| ((0, group.position_of(&e)), unreadable(e)))?;
                // What `validate` refuses, opm's serve refuses too
                // (ConvertToModel): after the registry's own checks, the
                // rest of `validate`'s errors.
                let built = Self::build(&cfg, spool.as_ref()).and_then(|part| {
                    let refused: Vec<String> = fbc::validate::validate(&cfg)
                        .into_iter()
                        .filter(|f| f.level == crate::diag::Level::Error)
                        .map(|f| f.message)
                        .collect();
                    if refused.is_empty() {
                        Ok(part)
                    } else {
                        Err(inconsistent!("{}", refused.join("; ")))
                    }
                });
                built.map_err(|e| {
                    let first = group.files.first().map_or(0, |(i, _)| *i);
                    let invalid = super::Error::InvalidCatalog {
                        path: path.to_path_buf(),
                        source: Box::new(e),
                    };
                    ((1, first), invalid)
                })
            })
            .collect();
        trim_heap();
        let (built, failed): (Vec<_>, Vec<_>) = parts.into_iter().partition(Result::is_ok);
        // Keys are distinct (a file is in one group): the first failure.
        if let Some((_, e)) = failed
            .into_iter()
            .filter_map(Result::err)
            .min_by_key(|(at, _)| *at)
        {
            return Err(e);
        }
        let mut registry = FbcRegistry {
            packages: BTreeMap::new(),
            bundle_count: 0,
        };
        for p in built.into_iter().flatten() {
            registry.bundle_count += p.bundle_count;
            registry.packages.extend(p.packages);
        }
        Ok(registry)
    }

    /// Builds the registry from a loaded config; content opm's model
    /// conversion refuses is an [`super::Error::Inconsistent`].
    #[cfg(test)]
    pub fn from_config(cfg: &DeclarativeConfig) -> super::Result<FbcRegistry> {
        let spool = ManifestSpool::new().ok().map(Arc::new);
        Self::build(cfg, spool.as_ref())
    }

    /// The registry of `cfg`, its manifests written to `spool` when given.
    fn build(
        cfg: &DeclarativeConfig,
        spool: Option<&Arc<ManifestSpool>>,
    ) -> super::Result<FbcRegistry> {
        // Deprecation messages by (package, schema, name).
        let mut deprecations: HashMap<(&str, &str, &str), &str> = HashMap::new();
        for d in &cfg.deprecations {
            for e in &d.entries {
                deprecations.insert(
                    (&d.package, &e.reference.schema, &e.reference.name),
                    &e.message,
                );
            }
        }
        let dep = |pkg: &str, schema: &str, name: &str| {
            deprecations.get(&(pkg, schema, name)).map(|m| s(m))
        };

        let mut pkg_meta: BTreeMap<&str, &fbc::Package> = BTreeMap::new();
        for p in &cfg.packages {
            if pkg_meta.insert(&p.name, p).is_some() {
                bail!("package {:?} is defined more than once", p.name);
            }
        }

        let mut bundles_by_key: HashMap<(&str, &str), &fbc::Bundle> = HashMap::new();
        for b in &cfg.bundles {
            if !pkg_meta.contains_key(b.package.as_str()) {
                bail!("bundle {:?}: package {:?} not found", b.name, b.package);
            }
            if bundles_by_key.insert((&b.package, &b.name), b).is_some() {
                bail!(
                    "package {:?}: bundle {:?} is defined more than once",
                    b.package,
                    b.name
                );
            }
        }

        // Manifests go to a temporary file when one can be made (they are
        // most of a catalog's bytes), else stay in memory.
        let mut datas: HashMap<(&str, &str), Arc<BundleData>> = HashMap::new();
        for b in &cfg.bundles {
            let meta = pkg_meta[b.package.as_str()];
            let mut data = bundle_data(b, meta, &dep)?;
            if let (Some(spool), Manifests::Inline { csv_json, objects }) = (spool, &data.manifests)
            {
                data.manifests = spool.put(csv_json, objects).map_err(|e| {
                    super::Error::io("writing the catalog's manifests to a temporary file", e)
                })?;
            }
            datas.insert((&b.package, &b.name), Arc::new(data));
        }

        let mut packages: BTreeMap<Str, Package> = BTreeMap::new();
        for (name, p) in &pkg_meta {
            packages.insert(
                s(name),
                Package {
                    default_channel: s(&p.default_channel),
                    deprecation: dep(name, fbc::SCHEMA_PACKAGE, ""),
                    channels: BTreeMap::new(),
                },
            );
        }
        let mut in_channel: HashSet<(&str, &str)> = HashSet::new();
        let mut bundle_count = 0;
        for c in &cfg.channels {
            let pkg = packages.get_mut(c.package.as_str()).ok_or_else(|| {
                inconsistent!("channel {:?}: package {:?} not found", c.name, c.package)
            })?;
            if pkg.channels.contains_key(c.name.as_str()) {
                bail!(
                    "package {:?}: channel {:?} is defined more than once",
                    c.package,
                    c.name
                );
            }
            let mut entries = BTreeMap::new();
            for e in &c.entries {
                let data = datas
                    .get(&(c.package.as_str(), e.name.as_str()))
                    .ok_or_else(|| {
                        inconsistent!(
                            "package {:?}, channel {:?}: bundle {:?} not found",
                            c.package,
                            c.name,
                            e.name
                        )
                    })?;
                in_channel.insert((&c.package, &e.name));
                let entry = Entry {
                    replaces: s(&e.replaces),
                    skips: e.skips.iter().map(|x| s(x)).collect(),
                    skip_range: s(&e.skip_range),
                    data: data.clone(),
                };
                if entries.insert(s(&e.name), entry).is_some() {
                    bail!(
                        "package {:?}, channel {:?}: bundle {:?} is listed more than once",
                        c.package,
                        c.name,
                        e.name
                    );
                }
            }
            if entries.is_empty() {
                bail!(
                    "package {:?}, channel {:?}: channel has no entries",
                    c.package,
                    c.name
                );
            }
            let head = channel_head(&entries)
                .map_err(|e| inconsistent!("package {:?}, channel {:?}: {e}", c.package, c.name))?;
            bundle_count += entries.len();
            pkg.channels.insert(
                s(&c.name),
                Channel {
                    head,
                    deprecation: dep(&c.package, fbc::SCHEMA_CHANNEL, &c.name),
                    bundles: entries,
                },
            );
        }
        for b in &cfg.bundles {
            if !in_channel.contains(&(b.package.as_str(), b.name.as_str())) {
                bail!(
                    "package {:?}, bundle {:?} not found in any channel entries",
                    b.package,
                    b.name
                );
            }
        }
        for (name, p) in &packages {
            if p.channels.is_empty() {
                bail!("package {name:?} has no channels");
            }
            if p.default_channel.is_empty() {
                bail!("package {name:?}: defaultChannel is not set");
            }
            if !p.channels.contains_key(&p.default_channel) {
                bail!(
                    "package {name:?}: default channel {:?} not found",
                    p.default_channel
                );
            }
        }
        Ok(FbcRegistry {
            packages,
            bundle_count,
        })
    }

    fn entry(&self, pkg: &str, ch: &str, name: &str) -> QueryResult<(&Str, &Str, &Entry)> {
        let Some((pname, p)) = self.packages.get_key_value(pkg) else {
            return err(format!("package {} not found", go_quote(pkg)));
        };
        let Some((cname, c)) = p.channels.get_key_value(ch) else {
            return err(format!(
                "package {}, channel {} not found",
                go_quote(pkg),
                go_quote(ch)
            ));
        };
        let Some(e) = c.bundles.get(name) else {
            return err(format!(
                "package {}, channel {}, bundle {} not found",
                go_quote(pkg),
                go_quote(ch),
                go_quote(name)
            ));
        };
        Ok((pname, cname, e))
    }

    /// `getTrimmedBundle`: full bundle, but without replaces and skips.
    fn trimmed(pkg: &str, ch: &str, e: &Entry) -> QueryResult<proto::Bundle> {
        let manifests = e.data.manifests.read()?;
        Ok(BundleView {
            data: &e.data,
            package: pkg,
            channel: ch,
            skip_range: &e.skip_range,
            replaces: "",
            skips: &[],
            with_apis: true,
        }
        .to_proto(manifests))
    }

    /// `channelEntriesForBundle`.
    fn entries_for_bundle(
        &self,
        pkg: &str,
        ch: &str,
        name: &str,
        e: &Entry,
        ignore_channel: bool,
        out: &mut Vec<proto::ChannelEntry>,
    ) {
        out.push(entry(pkg, ch, name, &e.replaces));
        let channel = &self.packages[pkg].channels[ch];
        for skip in &e.skips {
            if *skip != e.replaces && (ignore_channel || channel.bundles.contains_key(skip)) {
                out.push(entry(pkg, ch, name, skip));
            }
        }
    }
}

fn bundle_data(
    b: &fbc::Bundle,
    meta: &fbc::Package,
    dep: &dyn Fn(&str, &str, &str) -> Option<Str>,
) -> super::Result<BundleData> {
    let mut version = None;
    let mut provided = Vec::new();
    let mut required = Vec::new();
    let mut dependencies = Vec::new();
    let mut properties = Vec::new();
    let mut csv_metadata = Vec::new();
    for p in &b.properties {
        match p.kind.as_str() {
            "olm.package" => {
                let pkg_name = p.field("packageName").and_then(Value::as_str);
                let v = p.field("version").and_then(Value::as_str);
                match (pkg_name, v) {
                    (Some(n), Some(v)) if version.is_none() => {
                        if n != b.package {
                            bail!(
                                "bundle {:?}: olm.package property names package {n:?}, not {:?}",
                                b.name,
                                b.package
                            );
                        }
                        semver::Version::parse(v).map_err(|e| {
                            inconsistent!("bundle {:?}: version {v:?} is not semver: {e}", b.name)
                        })?;
                        version = Some(v.to_string());
                    }
                    (Some(_), Some(_)) => bail!(
                        "bundle {:?}: must have exactly 1 \"olm.package\" property, found more",
                        b.name
                    ),
                    _ => bail!(
                        "bundle {:?}: olm.package property needs packageName and version",
                        b.name
                    ),
                }
            }
            "olm.gvk" => provided.push(gvk_of(&p.value)),
            "olm.gvk.required" => {
                required.push(gvk_of(&p.value));
                dependencies.push((s("olm.gvk"), raw(&p.value)));
            }
            "olm.package.required" => {
                // property.MustBuildPackage(name, versionRange) of the decoded
                // PackageRequired: {packageName, version}, both strings.
                let built = serde_json::json!({
                    "packageName": p.str_field("packageName"),
                    "version": p.str_field("versionRange"),
                });
                dependencies.push((s("olm.package"), build_unescaped(&built)));
            }
            "olm.csv.metadata" => csv_metadata.push(&p.value),
            _ => {}
        }
        if p.kind != "olm.bundle.object" && p.kind != "olm.csv.metadata" {
            properties.push((s(&p.kind), raw(&p.value)));
        }
    }
    let Some(version) = version else {
        bail!(
            "bundle {:?}: must have exactly 1 \"olm.package\" property, found 0",
            b.name
        );
    };
    if csv_metadata.len() > 1 {
        bail!(
            "bundle {:?}: more than one olm.csv.metadata property",
            b.name
        );
    }
    let (mut csv_json, mut objects) = bundle_objects(b)?;
    if csv_json.is_none() {
        if let Some(m) = csv_metadata.first() {
            let icon = meta
                .icon
                .as_ref()
                .map(|i| (normalize_base64(&i.base64data), i.mediatype.as_str()));
            let json = csv_json_from_metadata(
                m,
                &CsvInputs {
                    name: &b.name,
                    version: &version,
                    icon: icon.as_ref().map(|(d, t)| (d.as_str(), *t)),
                    related_images: b
                        .related_images
                        .iter()
                        .map(|r| (r.name.as_str(), r.image.as_str()))
                        .collect(),
                    package_description: &meta.description,
                },
            );
            let json = s(&json);
            if objects.is_empty() {
                objects.push(json.clone());
            }
            csv_json = Some(json);
        }
    }
    let manifests = match csv_json {
        Some(c) => Manifests::Inline {
            csv_json: c,
            objects: objects.into(),
        },
        None if !objects.is_empty() => Manifests::Inline {
            csv_json: s(""),
            objects: objects.into(),
        },
        None => Manifests::None,
    };
    Ok(BundleData {
        name: s(&b.name),
        bundle_path: s(&b.image),
        version: s(&version),
        provided,
        required,
        dependencies,
        properties,
        manifests,
        deprecation: dep(&b.package, fbc::SCHEMA_BUNDLE, &b.name),
    })
}

/// Go decodes the icon's base64 into bytes and encodes it again (std padding).
fn normalize_base64(data: &str) -> String {
    let engine = base64::engine::general_purpose::STANDARD;
    let compact: String = data.chars().filter(|c| !c.is_whitespace()).collect();
    match engine.decode(&compact) {
        Ok(bytes) => engine.encode(bytes),
        Err(_) => data.to_string(),
    }
}

impl Registry for FbcRegistry {
    fn list_packages(&self) -> QueryResult<Vec<String>> {
        Ok(self.packages.keys().map(|k| k.to_string()).collect())
    }

    fn get_package(&self, name: &str) -> QueryResult<proto::Package> {
        let Some(p) = self.packages.get(name) else {
            return err(format!("package {} not found", go_quote(name)));
        };
        Ok(proto::Package {
            name: name.to_string(),
            channels: p
                .channels
                .iter()
                .map(|(n, c)| proto::Channel {
                    name: n.to_string(),
                    csv_name: c.head.to_string(),
                    deprecation: c.deprecation.as_ref().map(|m| proto::Deprecation {
                        message: m.to_string(),
                    }),
                })
                .collect(),
            default_channel_name: p.default_channel.to_string(),
            deprecation: p.deprecation.as_ref().map(|m| proto::Deprecation {
                message: m.to_string(),
            }),
        })
    }

    fn get_bundle(&self, pkg: &str, channel: &str, csv: &str) -> QueryResult<proto::Bundle> {
        let (p, c, e) = self.entry(pkg, channel, csv)?;
        Self::trimmed(p, c, e)
    }

    fn get_bundle_for_channel(&self, pkg: &str, channel: &str) -> QueryResult<proto::Bundle> {
        let Some(p) = self.packages.get(pkg) else {
            return err(format!("package {} not found", go_quote(pkg)));
        };
        let Some(c) = p.channels.get(channel) else {
            return err(format!(
                "package {}, channel {} not found",
                go_quote(pkg),
                go_quote(channel)
            ));
        };
        let (p, c, e) = self.entry(pkg, channel, &c.head)?;
        Self::trimmed(p, c, e)
    }

    fn get_channel_entries_that_replace(&self, csv: &str) -> QueryResult<Vec<proto::ChannelEntry>> {
        let mut out = Vec::new();
        for (pn, p) in &self.packages {
            for (cn, c) in &p.channels {
                for (bn, e) in &c.bundles {
                    if &*e.replaces == csv {
                        out.push(entry(pn, cn, bn, &e.replaces));
                    }
                    for skip in &e.skips {
                        if &**skip == csv && *skip != e.replaces {
                            // opm reports the bundle's own replaces here, not the skipped name.
                            out.push(entry(pn, cn, bn, &e.replaces));
                        }
                    }
                }
            }
        }
        if out.is_empty() {
            return err(format!("no channel entries found that replace {csv}"));
        }
        Ok(out)
    }

    fn get_bundle_that_replaces(
        &self,
        csv: &str,
        pkg: &str,
        channel: &str,
    ) -> QueryResult<proto::Bundle> {
        let Some(p) = self.packages.get(pkg) else {
            return err(format!("package {pkg} not found"));
        };
        let Some(c) = p.channels.get(channel) else {
            return err(format!(
                "package {}, channel {} not found",
                go_quote(pkg),
                go_quote(channel)
            ));
        };
        for (bn, e) in &c.bundles {
            if &*e.replaces == csv || e.skips.iter().any(|x| &**x == csv) {
                let (p, c, e) = self.entry(pkg, channel, bn)?;
                return Self::trimmed(p, c, e);
            }
        }
        err(format!(
            "no entry found for package {}, channel {}",
            go_quote(pkg),
            go_quote(channel)
        ))
    }

    fn get_channel_entries_that_provide(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> QueryResult<Vec<proto::ChannelEntry>> {
        let mut out = Vec::new();
        for (pn, p) in &self.packages {
            for (cn, c) in &p.channels {
                for (bn, e) in &c.bundles {
                    if e.data.provided.iter().any(|g| g.is(group, version, kind)) {
                        self.entries_for_bundle(pn, cn, bn, e, true, &mut out);
                    }
                }
            }
        }
        if out.is_empty() {
            return err(format!(
                "no channel entries found that provide group:{} version:{} kind:{}",
                go_quote(group),
                go_quote(version),
                go_quote(kind)
            ));
        }
        Ok(out)
    }

    fn get_latest_channel_entries_that_provide(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> QueryResult<Vec<proto::ChannelEntry>> {
        let mut out = Vec::new();
        for (pn, p) in &self.packages {
            for (cn, c) in &p.channels {
                let e = &c.bundles[&c.head];
                if e.data.provided.iter().any(|g| g.is(group, version, kind)) {
                    self.entries_for_bundle(pn, cn, &c.head, e, false, &mut out);
                }
            }
        }
        if out.is_empty() {
            return err(format!(
                "no channel entries found that provide group:{} version:{} kind:{}",
                go_quote(group),
                go_quote(version),
                go_quote(kind)
            ));
        }
        Ok(out)
    }

    fn get_default_bundle_that_provides(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> QueryResult<proto::Bundle> {
        // Latest entries come out in package order already (BTreeMap), which
        // is the lexicographic sort opm applies.
        let latest = self.get_latest_channel_entries_that_provide(group, version, kind)?;
        for e in latest {
            let p = &self.packages[e.package_name.as_str()];
            if *p.default_channel == e.channel_name {
                return self.get_bundle(&e.package_name, &e.channel_name, &e.bundle_name);
            }
        }
        err(format!(
            "no entry found that provides group:{} version:{} kind:{}",
            go_quote(group),
            go_quote(version),
            go_quote(kind)
        ))
    }

    fn list_bundles(&self, each: &mut dyn FnMut(proto::Bundle) -> bool) -> QueryResult<()> {
        for (pn, p) in &self.packages {
            for (cn, c) in &p.channels {
                for e in c.bundles.values() {
                    // opm strips the manifests from listed bundles that have an image.
                    let manifests = if e.data.bundle_path.is_empty() {
                        e.data.manifests.read()?
                    } else {
                        None
                    };
                    let b = BundleView {
                        data: &e.data,
                        package: pn,
                        channel: cn,
                        skip_range: &e.skip_range,
                        replaces: &e.replaces,
                        skips: &e.skips,
                        with_apis: true,
                    }
                    .to_proto(manifests);
                    if !each(b) {
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
    }

    fn summary(&self) -> String {
        let channels: usize = self.packages.values().map(|p| p.channels.len()).sum();
        format!(
            "file-based catalog: {} packages, {} channels, {} channel entries",
            self.packages.len(),
            channels,
            self.bundle_count
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CATALOG: &str = r#"
schema: olm.package
name: demo
defaultChannel: stable
---
schema: olm.channel
name: stable
package: demo
entries:
- name: demo.v1.0.0
- name: demo.v1.1.0
  replaces: demo.v1.0.0
- name: demo.v1.2.0
  replaces: demo.v1.1.0
  skips: [demo.v1.0.0, demo.v0.9.0]
  skipRange: '<1.2.0'
---
schema: olm.bundle
name: demo.v1.0.0
package: demo
image: quay.io/demo/b:1.0.0
properties:
- {type: olm.package, value: {packageName: demo, version: 1.0.0}}
- {type: olm.gvk, value: {group: demo.io, kind: Demo, version: v1}}
---
schema: olm.bundle
name: demo.v1.1.0
package: demo
image: quay.io/demo/b:1.1.0
properties:
- {type: olm.package, value: {packageName: demo, version: 1.1.0}}
- {type: olm.gvk, value: {group: demo.io, kind: Demo, version: v1}}
---
schema: olm.bundle
name: demo.v1.2.0
package: demo
image: quay.io/demo/b:1.2.0
properties:
- {type: olm.package, value: {packageName: demo, version: 1.2.0}}
- {type: olm.gvk, value: {group: demo.io, kind: Demo, version: v1}}
- {type: olm.package.required, value: {packageName: other, versionRange: '>=1.0.0'}}
- {type: olm.csv.metadata, value: {displayName: Demo}}
---
schema: olm.deprecations
package: demo
entries:
- reference: {schema: olm.bundle, name: demo.v1.0.0}
  message: use 1.2
"#;

    fn registry() -> FbcRegistry {
        let mut cfg = DeclarativeConfig::default();
        cfg.parse_str(CATALOG, std::path::Path::new("demo.yaml"))
            .expect("parse");
        FbcRegistry::from_config(&cfg).expect("valid")
    }

    /// opm decodes property values into Go structs: keys match whatever
    /// their case, and what it serves is built from the decoded fields.
    #[test]
    fn property_values_are_read_as_go_decodes_them() {
        let cased = CATALOG
            .replace("packageName: ", "PackageName: ")
            .replace("version: 1.", "VERSION: 1.")
            .replace("versionRange:", "versionrange:")
            .replace("group: demo.io", "Group: demo.io")
            .replace("displayName:", "DisplayName:");
        assert_ne!(cased, CATALOG);
        let mut cfg = DeclarativeConfig::default();
        cfg.parse_str(&cased, std::path::Path::new("demo.yaml"))
            .expect("parse");
        let r = FbcRegistry::from_config(&cfg).expect("valid");
        let head = r.get_bundle_for_channel("demo", "stable").expect("head");
        assert_eq!(head.version, "1.2.0");
        assert_eq!(
            head.dependencies[0].value,
            r#"{"packageName":"other","version":">=1.0.0"}"#
        );
        assert!(head.csv_json.contains(r#""displayName":"Demo""#));
        let latest = r
            .get_latest_channel_entries_that_provide("demo.io", "v1", "Demo")
            .expect("l");
        assert!(!latest.is_empty());
    }

    #[test]
    fn heads_replaces_and_errors_like_opm() {
        let r = registry();
        let p = r.get_package("demo").expect("pkg");
        assert_eq!(p.channels[0].csv_name, "demo.v1.2.0");
        let head = r.get_bundle_for_channel("demo", "stable").expect("head");
        assert_eq!(head.skip_range, "<1.2.0");
        assert!(head.skips.is_empty() && head.replaces.is_empty());
        assert!(head.csv_json.contains(r#""displayName":"Demo""#));
        assert_eq!(
            head.dependencies[0].value,
            r#"{"packageName":"other","version":">=1.0.0"}"#
        );
        let e = r
            .get_channel_entries_that_replace("demo.v1.0.0")
            .expect("r");
        let names: Vec<_> = e
            .iter()
            .map(|x| (x.bundle_name.as_str(), x.replaces.as_str()))
            .collect();
        assert_eq!(
            names,
            vec![
                ("demo.v1.1.0", "demo.v1.0.0"),
                ("demo.v1.2.0", "demo.v1.1.0")
            ]
        );
        let latest = r
            .get_latest_channel_entries_that_provide("demo.io", "v1", "Demo")
            .expect("l");
        // The head's skip of demo.v0.9.0 is not in the channel: left out.
        assert_eq!(latest.len(), 2);
        assert_eq!(
            r.get_bundle("demo", "stable", "nope")
                .expect_err("missing")
                .0,
            r#"package "demo", channel "stable", bundle "nope" not found"#
        );
        // Names are quoted as Go's %q quotes them.
        assert_eq!(
            r.get_package("a\tb\u{a0}").expect_err("missing").0,
            r#"package "a\tb\u00a0" not found"#
        );
        let mut listed = Vec::new();
        r.list_bundles(&mut |b| {
            listed.push(b);
            true
        })
        .expect("list");
        assert_eq!(listed.len(), 3);
        assert!(listed
            .iter()
            .all(|b| b.csv_json.is_empty() && b.object.is_empty()));
        let old = r.get_bundle("demo", "stable", "demo.v1.0.0").expect("old");
        assert_eq!(old.deprecation.expect("dep").message, "use 1.2");
    }

    #[test]
    fn loads_by_package_group_and_reports_the_first_broken_file() {
        let dir = tempfile::tempdir().expect("tmp");
        let w =
            |name: &str, text: &str| std::fs::write(dir.path().join(name), text).expect("write");
        // Two packages, one file each.
        w("a.yaml", CATALOG);
        w("b.yaml", &CATALOG.replace("demo", "other"));
        let full = FbcRegistry::load(dir.path()).expect("loads");
        assert_eq!(full.list_packages().expect("list"), ["demo", "other"]);
        let bundle = full
            .get_bundle_for_channel("other", "stable")
            .expect("head");
        assert_eq!(bundle.csv_name, "other.v1.2.0");
        assert_eq!(
            full.summary(),
            FbcRegistry::from_config(&{
                let mut cfg = DeclarativeConfig::default();
                cfg.parse_str(CATALOG, std::path::Path::new("a.yaml"))
                    .expect("a");
                cfg.parse_str(
                    &CATALOG.replace("demo", "other"),
                    std::path::Path::new("b.yaml"),
                )
                .expect("b");
                cfg
            })
            .expect("whole")
            .summary()
        );
        // A package that does not convert (two heads) in b, and a file that
        // does not read in c: the unreadable file is the error.
        w(
            "b.yaml",
            &CATALOG
                .replace("demo", "other")
                .replace("  replaces: other.v1.1.0\n", ""),
        );
        w("c.yaml", "schema: olm.package\nname: [\n");
        let e = FbcRegistry::load(dir.path())
            .err()
            .expect("invalid")
            .to_string();
        assert!(e.contains("reading file-based catalog"), "{e}");
        // Without it, the package's own error.
        std::fs::remove_file(dir.path().join("c.yaml")).expect("rm");
        let e = FbcRegistry::load(dir.path()).err().expect("invalid");
        let chain = format!(
            "{e}: {}",
            std::error::Error::source(&e)
                .map(|c| c.to_string())
                .unwrap_or_default()
        );
        assert!(chain.contains("multiple channel heads"), "{chain}");
    }

    #[test]
    fn two_heads_fail_at_load() {
        let mut cfg = DeclarativeConfig::default();
        cfg.parse_str(
            &CATALOG.replace("  replaces: demo.v1.1.0\n", ""),
            std::path::Path::new("demo.yaml"),
        )
        .expect("parse");
        let e = FbcRegistry::from_config(&cfg)
            .err()
            .expect("invalid")
            .to_string();
        assert!(
            e.contains("multiple channel heads found in graph: demo.v1.1.0, demo.v1.2.0"),
            "{e}"
        );
    }
}
