//! opm's `alpha list packages|channels|bundles` (alpha/action/list.go at
//! v1.73.0): the rows of each table, computed from a catalog read from any
//! source ([`super::catalog_source::load`]). Laying the rows out is the
//! caller's: each row type has its `HEADER` and its `cells()`, the text opm
//! prints in each column.

use crate::fbc::{Channel, DeclarativeConfig, Package};

use super::Error;

/// Why a table could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ListError {
    /// The package asked for is not in the catalog.
    #[error("package {0:?} not found")]
    PackageNotFound(String),
}

/// A row of `opm alpha list packages`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackageRow {
    /// The package name.
    pub name: String,
    /// The display name of the default channel head's CSV (see
    /// [`display_name`]); empty when there is none.
    pub display_name: String,
    /// The package's default channel.
    pub default_channel: String,
}

impl PackageRow {
    /// opm's column titles.
    pub const HEADER: [&'static str; 3] = ["NAME", "DISPLAY NAME", "DEFAULT CHANNEL"];

    /// The row's cells, in the order of [`PackageRow::HEADER`].
    pub fn cells(&self) -> Vec<String> {
        vec![
            self.name.clone(),
            self.display_name.clone(),
            self.default_channel.clone(),
        ]
    }
}

/// The head of a channel, as `opm alpha list channels` sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChannelHead {
    /// Exactly one entry that no other entry replaces or skips.
    One(String),
    /// No such entry (a cycle).
    None,
    /// Several such entries, in name order.
    Many(Vec<String>),
}

impl std::fmt::Display for ChannelHead {
    /// The HEAD cell: the head's name, or opm's error text.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChannelHead::One(name) => f.write_str(name),
            ChannelHead::None => f.write_str("ERROR: no channel head found in graph"),
            ChannelHead::Many(names) => write!(
                f,
                "ERROR: multiple channel heads found in graph: {}",
                names.join(", ")
            ),
        }
    }
}

impl ChannelHead {
    /// The head of `channel` ([`Channel::heads`]).
    pub fn of(channel: &Channel) -> ChannelHead {
        let heads = channel.heads();
        match heads.as_slice() {
            [one] => ChannelHead::One(one.to_string()),
            [] => ChannelHead::None,
            many => ChannelHead::Many(many.iter().map(|h| h.to_string()).collect()),
        }
    }
}

/// A row of `opm alpha list channels`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelRow {
    /// The package the channel belongs to.
    pub package: String,
    /// The channel name.
    pub channel: String,
    /// The channel's head.
    pub head: ChannelHead,
}

impl ChannelRow {
    /// opm's column titles.
    pub const HEADER: [&'static str; 3] = ["PACKAGE", "CHANNEL", "HEAD"];

    /// The row's cells, in the order of [`ChannelRow::HEADER`].
    pub fn cells(&self) -> Vec<String> {
        vec![
            self.package.clone(),
            self.channel.clone(),
            self.head.to_string(),
        ]
    }
}

/// A row of `opm alpha list bundles`: one channel entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleRow {
    /// The package of the channel.
    pub package: String,
    /// The channel holding the entry.
    pub channel: String,
    /// The entry's bundle name.
    pub bundle: String,
    /// The bundle the entry replaces ("" for none).
    pub replaces: String,
    /// The bundles the entry skips.
    pub skips: Vec<String>,
    /// The entry's skip range ("" for none).
    pub skip_range: String,
    /// The image of the package's bundle of that name ("" when the catalog
    /// has no such bundle).
    pub image: String,
}

impl BundleRow {
    /// opm's column titles.
    pub const HEADER: [&'static str; 7] = [
        "PACKAGE",
        "CHANNEL",
        "BUNDLE",
        "REPLACES",
        "SKIPS",
        "SKIP RANGE",
        "IMAGE",
    ];

    /// The row's cells, in the order of [`BundleRow::HEADER`] (the skips
    /// joined with commas).
    pub fn cells(&self) -> Vec<String> {
        vec![
            self.package.clone(),
            self.channel.clone(),
            self.bundle.clone(),
            self.replaces.clone(),
            self.skips.join(","),
            self.skip_range.clone(),
            self.image.clone(),
        ]
    }
}

/// Every package of `cfg`, by name.
pub fn packages(cfg: &DeclarativeConfig) -> Vec<PackageRow> {
    let mut pkgs: Vec<&Package> = cfg.packages.iter().collect();
    pkgs.sort_by(|a, b| a.name.cmp(&b.name));
    pkgs.into_iter()
        .map(|p| PackageRow {
            name: p.name.clone(),
            display_name: display_name(cfg, p),
            default_channel: p.default_channel.clone(),
        })
        .collect()
}

/// Every channel of `cfg` (of `package` only, when given), by package and
/// name. A `package` the catalog does not have is
/// [`ListError::PackageNotFound`].
pub fn channels(cfg: &DeclarativeConfig, package: Option<&str>) -> Result<Vec<ChannelRow>, Error> {
    check_package(cfg, package)?;
    let mut chans: Vec<&Channel> = cfg
        .channels
        .iter()
        .filter(|c| only(&c.package, package))
        .collect();
    chans.sort_by(|a, b| (&a.package, &a.name).cmp(&(&b.package, &b.name)));
    Ok(chans
        .into_iter()
        .map(|c| ChannelRow {
            package: c.package.clone(),
            channel: c.name.clone(),
            head: ChannelHead::of(c),
        })
        .collect())
}

/// Every channel entry of `cfg` (of `package` only, when given), by
/// package, channel and bundle name, with the image of its bundle. A
/// `package` the catalog does not have is [`ListError::PackageNotFound`].
pub fn bundles(cfg: &DeclarativeConfig, package: Option<&str>) -> Result<Vec<BundleRow>, Error> {
    check_package(cfg, package)?;
    let images: std::collections::BTreeMap<(&str, &str), &str> = cfg
        .bundles
        .iter()
        .map(|b| ((b.package.as_str(), b.name.as_str()), b.image.as_str()))
        .collect();
    let mut rows = Vec::new();
    for c in cfg.channels.iter().filter(|c| only(&c.package, package)) {
        for e in &c.entries {
            rows.push(BundleRow {
                package: c.package.clone(),
                channel: c.name.clone(),
                bundle: e.name.clone(),
                replaces: e.replaces.clone(),
                skips: e.skips.clone(),
                skip_range: e.skip_range.clone(),
                image: images
                    .get(&(c.package.as_str(), e.name.as_str()))
                    .map(|s| s.to_string())
                    .unwrap_or_default(),
            });
        }
    }
    rows.sort_by(|a, b| {
        (&a.package, &a.channel, &a.bundle).cmp(&(&b.package, &b.channel, &b.bundle))
    });
    Ok(rows)
}

/// Whether `name` passes the filter `want` (none: every name).
fn only(name: &str, want: Option<&str>) -> bool {
    want.is_none_or(|w| w == name)
}

/// Refuses a `package` that `cfg` does not have.
fn check_package(cfg: &DeclarativeConfig, package: Option<&str>) -> Result<(), Error> {
    match package {
        Some(p) if !cfg.packages.iter().any(|x| x.name == p) => {
            Err(Error::List(ListError::PackageNotFound(p.to_string())))
        }
        _ => Ok(()),
    }
}

/// opm's `getDisplayName`: `spec.displayName` of the CSV of the head of
/// `pkg`'s default channel, read from the bundle's CSV, else its
/// `olm.bundle.object` CSV, else its `olm.csv.metadata` ("" when anything
/// is missing or there is not exactly one head).
pub fn display_name(cfg: &DeclarativeConfig, pkg: &Package) -> String {
    use base64::Engine as _;
    let Some(channel) = cfg
        .channels
        .iter()
        .find(|c| c.package == pkg.name && c.name == pkg.default_channel)
    else {
        return String::new();
    };
    let heads = channel.heads();
    let [head] = heads.as_slice() else {
        return String::new();
    };
    let Some(bundle) = cfg
        .bundles
        .iter()
        .find(|b| b.package == pkg.name && b.name == *head)
    else {
        return String::new();
    };
    let from_csv = |csv: &serde_json::Value| csv["spec"]["displayName"].as_str().map(String::from);
    if let Some(name) = bundle
        .csv_json
        .as_deref()
        .and_then(|j| serde_json::from_str::<serde_json::Value>(j).ok())
        .and_then(|v| from_csv(&v))
    {
        return name;
    }
    for p in &bundle.properties {
        match p.kind.as_str() {
            "olm.bundle.object" => {
                let csv = p
                    .field("data")
                    .and_then(serde_json::Value::as_str)
                    .and_then(|d| base64::engine::general_purpose::STANDARD.decode(d).ok())
                    .and_then(|d| serde_json::from_slice::<serde_json::Value>(&d).ok())
                    .filter(|v| v["kind"] == "ClusterServiceVersion");
                if let Some(name) = csv.as_ref().and_then(from_csv) {
                    return name;
                }
            }
            "olm.csv.metadata" => {
                if let Some(name) = p.field("displayName").and_then(serde_json::Value::as_str) {
                    return name.to_string();
                }
            }
            _ => {}
        }
    }
    String::new()
}
