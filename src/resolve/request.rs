//! What is asked: a Subscription or a ClusterExtension, read from YAML.

use std::path::Path;

use serde_json::Value;

/// A Subscription (operators.coreos.com/v1alpha1), the fields OLM v0's
/// resolver reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Subscription {
    /// `metadata.name`.
    pub name: String,
    /// `spec.name`: the package.
    pub package: String,
    /// `spec.channel` (empty: any channel, the default first).
    pub channel: String,
    /// `spec.startingCSV`.
    pub starting_csv: String,
    /// `spec.installPlanApproval` (`Automatic` unless `Manual`).
    pub install_plan_approval: String,
    /// `spec.source`: the CatalogSource named (informative).
    pub source: String,
    /// `spec.sourceNamespace` (informative).
    pub source_namespace: String,
    /// `status.installedCSV`: the CSV this Subscription installed already
    /// (empty: a new Subscription).
    pub installed_csv: String,
}

/// A CSV installed on the cluster (`--installed CSV[@PACKAGE][=BUNDLE]`):
/// what OLM v0's resolver reads from the namespace's CSVs.
#[derive(Clone, Debug, Default)]
pub struct InstalledCsv {
    /// The CSV's name.
    pub name: String,
    /// Its package, when given (else the catalog's bundle of that name, or
    /// the Subscription that installed it, says).
    pub package: String,
    /// Where its properties come from (a bundle directory or image), when
    /// given.
    pub source: String,
    /// Its properties read from `source` (None: from the catalog's bundle
    /// of that name, or none).
    pub bundle: Option<super::CatBundle>,
}

impl InstalledCsv {
    /// Reads `CSV[@PACKAGE][=BUNDLE]`.
    pub fn parse(text: &str) -> Result<InstalledCsv, super::Error> {
        let (head, source) = match text.split_once('=') {
            Some((h, s)) => (h, s.to_string()),
            None => (text, String::new()),
        };
        let (name, package) = match head.split_once('@') {
            Some((n, p)) => (n.to_string(), p.to_string()),
            None => (head.to_string(), String::new()),
        };
        if name.is_empty()
            || (head.contains('@') && package.is_empty())
            || (text.contains('=') && source.is_empty())
        {
            return Err(super::Error::Request(format!(
                "--installed {text:?}: expected CSV[@PACKAGE][=BUNDLE], e.g. etcdoperator.v0.9.2@etcd"
            )));
        }
        Ok(InstalledCsv {
            name,
            package,
            source,
            bundle: None,
        })
    }
}

/// A ClusterExtension (olm.operatorframework.io/v1, or the older flat
/// v1alpha1 spec), the fields operator-controller's resolver reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterExtension {
    /// `metadata.name`.
    pub name: String,
    /// `packageName`.
    pub package: String,
    /// `version`: a Masterminds constraint (empty: any).
    pub version: String,
    /// `channels` (empty: every bundle of the package).
    pub channels: Vec<String>,
    /// `upgradeConstraintPolicy`: `CatalogProvided` (default) or `SelfCertified`.
    pub upgrade_constraint_policy: String,
    /// `selector`: a label selector on ClusterCatalogs, as written
    /// (validated when resolving, as operator-controller does).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selector: Option<Value>,
}

fn read_yaml(text: &str, file: &Path) -> Result<Value, String> {
    let mut docs = Vec::new();
    for d in yaml_serde::Deserializer::from_str(text) {
        let v: Value =
            serde::Deserialize::deserialize(d).map_err(|e| format!("{}: {e}", file.display()))?;
        if !v.is_null() {
            docs.push(v);
        }
    }
    match docs.len() {
        1 => Ok(docs.remove(0)),
        0 => Err(format!("{}: no YAML document", file.display())),
        n => Err(format!(
            "{}: {n} YAML documents; give one object",
            file.display()
        )),
    }
}

fn check_kind(v: &Value, want: &str, file: &Path) -> Result<(), String> {
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
    if !kind.is_empty() && kind != want {
        return Err(format!(
            "{}: kind is {kind}, expected {want}",
            file.display()
        ));
    }
    if v.get("spec").is_none_or(|s| !s.is_object()) {
        return Err(format!("{}: {want} has no spec", file.display()));
    }
    Ok(())
}

fn string_at(v: &Value, path: &[&str], file: &Path) -> Result<String, String> {
    let mut cur = v;
    for k in path {
        match cur.get(k) {
            Some(x) => cur = x,
            None => return Ok(String::new()),
        }
    }
    match cur {
        Value::String(s) => Ok(s.clone()),
        Value::Null => Ok(String::new()),
        other => Err(format!(
            "{}: {} must be a string, not {other}",
            file.display(),
            path.join(".")
        )),
    }
}

impl Subscription {
    /// Reads a Subscription from YAML; errors name the file and field.
    pub fn parse(text: &str, file: &Path) -> Result<Subscription, super::Error> {
        Self::read(text, file).map_err(super::Error::Request)
    }

    fn read(text: &str, file: &Path) -> Result<Subscription, String> {
        let v = read_yaml(text, file)?;
        check_kind(&v, "Subscription", file)?;
        let s = |p: &[&str]| string_at(&v, p, file);
        let sub = Subscription {
            name: s(&["metadata", "name"])?,
            package: s(&["spec", "name"])?,
            channel: s(&["spec", "channel"])?,
            starting_csv: s(&["spec", "startingCSV"])?,
            install_plan_approval: s(&["spec", "installPlanApproval"])?,
            source: s(&["spec", "source"])?,
            source_namespace: s(&["spec", "sourceNamespace"])?,
            installed_csv: s(&["status", "installedCSV"])?,
        };
        if sub.package.is_empty() {
            return Err(format!(
                "{}: spec.name (the package) is missing",
                file.display()
            ));
        }
        if !matches!(
            sub.install_plan_approval.as_str(),
            "" | "Automatic" | "Manual"
        ) {
            return Err(format!(
                "{}: spec.installPlanApproval is {:?}; it must be Automatic or Manual",
                file.display(),
                sub.install_plan_approval
            ));
        }
        Ok(sub)
    }
}

impl ClusterExtension {
    /// Reads a ClusterExtension from YAML: `spec.source.catalog` (v1), else
    /// the v1alpha1 fields directly under `spec`.
    pub fn parse(text: &str, file: &Path) -> Result<ClusterExtension, super::Error> {
        Self::read(text, file).map_err(super::Error::Request)
    }

    fn read(text: &str, file: &Path) -> Result<ClusterExtension, String> {
        let v = read_yaml(text, file)?;
        check_kind(&v, "ClusterExtension", file)?;
        let base: &[&str] = if v.pointer("/spec/source/catalog").is_some() {
            &["spec", "source", "catalog"]
        } else {
            &["spec"]
        };
        let at = |k: &str| {
            let mut p = base.to_vec();
            p.push(k);
            string_at(&v, &p, file)
        };
        let mut channels = Vec::new();
        let mut node = &v;
        for k in base {
            node = &node[*k];
        }
        match node.get("channels") {
            Some(Value::Array(a)) => {
                for c in a {
                    match c.as_str() {
                        Some(s) => channels.push(s.to_string()),
                        None => {
                            return Err(format!(
                                "{}: {}.channels must be a list of strings",
                                file.display(),
                                base.join(".")
                            ))
                        }
                    }
                }
            }
            Some(Value::Null) | None => {}
            Some(_) => {
                return Err(format!(
                    "{}: {}.channels must be a list of strings",
                    file.display(),
                    base.join(".")
                ))
            }
        }
        // v1alpha1 had one `channel`.
        let one = at("channel")?;
        if !one.is_empty() {
            channels.push(one);
        }
        let ce = ClusterExtension {
            name: string_at(&v, &["metadata", "name"], file)?,
            package: at("packageName")?,
            version: at("version")?,
            channels,
            upgrade_constraint_policy: at("upgradeConstraintPolicy")?,
            selector: node.get("selector").filter(|s| !s.is_null()).cloned(),
        };
        if ce.package.is_empty() {
            return Err(format!(
                "{}: {}.packageName is missing",
                file.display(),
                base.join(".")
            ));
        }
        if !matches!(
            ce.upgrade_constraint_policy.as_str(),
            "" | "CatalogProvided" | "SelfCertified"
        ) {
            return Err(format!(
                "{}: upgradeConstraintPolicy is {:?}; it must be CatalogProvided or SelfCertified",
                file.display(),
                ce.upgrade_constraint_policy
            ));
        }
        Ok(ce)
    }
}
