//! File-based catalogs (FBC): the declarative config of operator-registry's
//! `alpha/declcfg`, with the schemas `olm.package`, `olm.channel`,
//! `olm.bundle` and `olm.deprecations`. Objects of other schemas are kept as
//! they are ([`DeclarativeConfig::others`]).
//!
//! Field order in these structs is the order in which opm writes the fields
//! (Go struct order), so serializing them reproduces `opm render` output.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Schema name of package objects.
pub const SCHEMA_PACKAGE: &str = "olm.package";
/// Schema name of channel objects.
pub const SCHEMA_CHANNEL: &str = "olm.channel";
/// Schema name of bundle objects.
pub const SCHEMA_BUNDLE: &str = "olm.bundle";
/// Schema name of deprecation objects.
pub const SCHEMA_DEPRECATIONS: &str = "olm.deprecations";

/// A whole catalog, or part of one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeclarativeConfig {
    /// `olm.package` objects.
    pub packages: Vec<Package>,
    /// `olm.channel` objects.
    pub channels: Vec<Channel>,
    /// `olm.bundle` objects.
    pub bundles: Vec<Bundle>,
    /// `olm.deprecations` objects.
    pub deprecations: Vec<Deprecation>,
    /// Objects of any other schema, as read.
    pub others: Vec<Value>,
}

/// `olm.package`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    /// Always `olm.package`.
    pub schema: String,
    /// Package name.
    pub name: String,
    /// Default channel.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub default_channel: String,
    /// Package icon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<Icon>,
    /// Package description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Properties.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<Property>,
}

/// An icon.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Icon {
    /// Base64 image data.
    pub base64data: String,
    /// Media type, e.g. `image/svg+xml`.
    pub mediatype: String,
}

/// `olm.channel`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Channel {
    /// Always `olm.channel`.
    pub schema: String,
    /// Channel name.
    pub name: String,
    /// Package name.
    pub package: String,
    /// The channel's entries.
    #[serde(default)]
    pub entries: Vec<ChannelEntry>,
    /// Properties.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<Property>,
}

/// One entry of a channel: a bundle and the edges into it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelEntry {
    /// Bundle name (the CSV name).
    pub name: String,
    /// The bundle this one replaces.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub replaces: String,
    /// Bundles this one skips.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skips: Vec<String>,
    /// Range of versions this one skips.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub skip_range: String,
}

/// `olm.bundle`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bundle {
    /// Always `olm.bundle`.
    pub schema: String,
    /// Bundle name (the CSV name).
    pub name: String,
    /// Package name.
    pub package: String,
    /// Bundle image reference.
    #[serde(default)]
    pub image: String,
    /// Properties (`olm.package`, `olm.gvk`, `olm.bundle.object`, `olm.csv.metadata`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<Property>,
    /// Related images.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related_images: Vec<RelatedImage>,
    /// The CSV as JSON, when known (not serialized: opm keeps it out of FBC too).
    #[serde(skip)]
    pub csv_json: Option<String>,
    /// Every manifest as JSON, when known (not serialized).
    #[serde(skip)]
    pub objects: Vec<String>,
}

/// A typed property: `{"type": ..., "value": ...}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Property {
    /// Property type, e.g. `olm.package`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Property value, kept as JSON.
    pub value: Value,
}

/// A related image.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelatedImage {
    /// Name, may be empty.
    #[serde(default)]
    pub name: String,
    /// Image reference.
    pub image: String,
}

/// `olm.deprecations`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Deprecation {
    /// Always `olm.deprecations`.
    pub schema: String,
    /// Package name.
    pub package: String,
    /// What is deprecated.
    #[serde(default)]
    pub entries: Vec<DeprecationEntry>,
}

/// One deprecated package, channel or bundle.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeprecationEntry {
    /// What the entry refers to.
    pub reference: PackageScopedReference,
    /// Message shown to users.
    pub message: String,
}

/// A reference inside a package: schema and (except for the package) name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageScopedReference {
    /// `olm.package`, `olm.channel` or `olm.bundle`.
    pub schema: String,
    /// Name of the channel or bundle; empty for the package.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
}
