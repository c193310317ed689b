//! The `multiarch` suite (operator-framework/api `multiarch.go`): do the
//! images of the CSV run on the platforms its `operatorframework.io/arch.*`
//! and `operatorframework.io/os.*` labels promise, and does the operator
//! image support platforms the labels forget?
//!
//! The images are looked up through [`ImagePlatforms`], which the caller
//! provides (the CLI plugs in the OCI registry client): validation reads no
//! registry itself. The operator ("manager") images are the containers named
//! `manager` of each install deployment, or else every container but
//! `kube-rbac-proxy`; the other images are the remaining containers and every
//! related image. Unlike the reference, which reads platforms only from image
//! indexes (so a single-platform image counts as supporting nothing), a
//! single manifest counts for the platform of its config.

use std::collections::{BTreeMap, BTreeSet};

use super::{items, join, scalar};
use crate::bundle::Manifest;
use crate::diag::Finding;
use crate::path;
use crate::yaml::{Seg, Value};

/// Label prefix of a supported architecture: `operatorframework.io/arch.arm64: supported`.
pub const ARCH_LABEL: &str = "operatorframework.io/arch.";
/// Label prefix of a supported operating system.
pub const OS_LABEL: &str = "operatorframework.io/os.";
/// Container the SDK scaffolds next to the manager, not the operator itself.
const RBAC_PROXY: &str = "kube-rbac-proxy";

/// One platform an image runs on.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ImagePlatform {
    /// Operating system (`linux`).
    pub os: String,
    /// CPU architecture (`amd64`, `arm64`, …).
    pub architecture: String,
}

/// Tells the platforms of an image reference. Implementations may block
/// (the CLI reads the registry); they are called from several threads.
pub trait ImagePlatforms: Send + Sync {
    /// The platforms `image` provides, or why they could not be read.
    fn platforms(&self, image: &str) -> Result<Vec<ImagePlatform>, String>;
}

/// An image of the CSV and where it is written.
struct Image {
    reference: String,
    at: Vec<Seg>,
    /// Platforms, or `None` when the image could not be inspected.
    platforms: Option<Vec<ImagePlatform>>,
}

fn supported_labels(csv: &Manifest, prefix: &str) -> Vec<String> {
    let Some(Value::Map(entries)) = csv.root.at(&path!["metadata", "labels"]).map(|n| &n.value)
    else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .iter()
        .filter(|e| {
            e.key.contains(prefix) && scalar(Some(&e.value)).as_deref() == Some("supported")
        })
        .map(|e| e.key.replace(prefix, ""))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The manager images and the other images, in CSV order, each once.
fn images(csv: &Manifest) -> (Vec<Image>, Vec<Image>) {
    let deps_path = path!["spec", "install", "spec", "deployments"];
    let mut managers: Vec<Image> = Vec::new();
    let mut containers: Vec<(String, String, Vec<Seg>)> = Vec::new();
    for (d, dep) in items(csv.root.at(&deps_path)).iter().enumerate() {
        let cpath = join(
            &deps_path,
            &path![d, "spec", "template", "spec", "containers"],
        );
        let list: Vec<(String, String, Vec<Seg>)> =
            items(dep.at(&path!["spec", "template", "spec", "containers"]))
                .iter()
                .enumerate()
                .filter_map(|(i, c)| {
                    let image = scalar(c.get("image"))?.to_string();
                    let name = scalar(c.get("name")).unwrap_or_default().to_string();
                    Some((name, image, join(&cpath, &path![i, "image"])))
                })
                .collect();
        let named: Vec<&(String, String, Vec<Seg>)> = list
            .iter()
            .filter(|(n, _, _)| n == "manager")
            .take(1)
            .collect();
        let picked: Vec<&(String, String, Vec<Seg>)> = if named.is_empty() {
            list.iter().filter(|(n, _, _)| n != RBAC_PROXY).collect()
        } else {
            named
        };
        for (_, image, at) in picked {
            if !managers.iter().any(|m| &m.reference == image) {
                managers.push(Image {
                    reference: image.clone(),
                    at: at.clone(),
                    platforms: None,
                });
            }
        }
        containers.extend(list);
    }
    let mut others: Vec<Image> = Vec::new();
    let mut add = |reference: String, at: Vec<Seg>| {
        if !others.iter().any(|o| o.reference == reference) {
            others.push(Image {
                reference,
                at,
                platforms: None,
            });
        }
    };
    for (_, image, at) in containers {
        if !managers.iter().any(|m| m.reference == image) {
            add(image, at);
        }
    }
    let rel = path!["spec", "relatedImages"];
    for (i, r) in items(csv.root.at(&rel)).iter().enumerate() {
        if let Some(image) = scalar(r.get("image")) {
            add(image.to_string(), join(&rel, &path![i, "image"]));
        }
    }
    (managers, others)
}

/// Runs the suite on the CSV.
pub fn check(csv: &Manifest, inspector: Option<&dyn ImagePlatforms>, out: &mut Vec<Finding>) {
    let Some(inspector) = inspector else {
        out.push(
            Finding::warning(
                "multiarch-inspector-unavailable",
                "the multiarch suite needs to read the images' platforms from their registries, and this run cannot",
            )
            .hint("run it from the olm-catalog CLI, which reads the registries (credentials from the Docker config)")
            .at(csv.location(&[])),
        );
        return;
    };
    let arch_labels = supported_labels(csv, ARCH_LABEL);
    let os_labels = supported_labels(csv, OS_LABEL);
    let (mut managers, mut others) = images(csv);
    // Each image is read once, however often it is listed.
    let mut seen: BTreeMap<String, Option<Vec<ImagePlatform>>> = BTreeMap::new();
    for img in managers.iter_mut().chain(others.iter_mut()) {
        if let Some(p) = seen.get(&img.reference) {
            img.platforms = p.clone();
            continue;
        }
        let p = match inspector.platforms(&img.reference) {
            Ok(p) => Some(p),
            Err(e) => {
                out.push(
                    Finding::warning(
                        "multiarch-image-uninspectable",
                        format!("unable to inspect the image ({}) : {e}", img.reference),
                    )
                    .at(csv.location(&img.at)),
                );
                None
            }
        };
        seen.insert(img.reference.clone(), p.clone());
        img.platforms = p;
    }

    // What the bundle supports: the labels (amd64 and linux without labels)
    // and whatever the manager images provide.
    let default_or = |labels: &[String], default: &str| -> Vec<String> {
        if labels.is_empty() {
            vec![default.to_string()]
        } else {
            labels.to_vec()
        }
    };
    let configured_archs = default_or(&arch_labels, "amd64");
    let configured_os = default_or(&os_labels, "linux");
    let mut all_archs: BTreeSet<String> = configured_archs.iter().cloned().collect();
    let mut all_os: BTreeSet<String> = configured_os.iter().cloned().collect();
    for p in managers
        .iter()
        .filter_map(|m| m.platforms.as_ref())
        .flatten()
    {
        if !p.architecture.is_empty() {
            all_archs.insert(p.architecture.clone());
        }
        if !p.os.is_empty() {
            all_os.insert(p.os.clone());
        }
    }
    let manager_names: Vec<&str> = managers.iter().map(|m| m.reference.as_str()).collect();
    let labels_at = csv.location(&path!["metadata", "labels"]);

    // Every image must provide every labelled os/arch pair.
    for os in &configured_os {
        for arch in &configured_archs {
            for img in managers.iter().chain(others.iter()) {
                let Some(platforms) = &img.platforms else {
                    continue;
                };
                if !platforms
                    .iter()
                    .any(|p| &p.os == os && &p.architecture == arch)
                {
                    out.push(
                        Finding::error(
                            "multiarch-image-platform-missing",
                            format!(
                                "not all images specified are providing the support described via the CSV labels. Note that (SO.architecture): ({os}.{arch}) was not found for the image(s) [{}]",
                                img.reference
                            ),
                        )
                        .hint(format!(
                            "the image provides {}; push it for {os}/{arch} too, or drop the label",
                            describe(platforms)
                        ))
                        .at(csv.location(&img.at))
                        .related(labels_at.clone()),
                    );
                }
            }
        }
    }

    // Platforms of the manager images that the labels do not name.
    let unlabelled = |found: &BTreeSet<String>, labels: &[String], default: &str| -> Vec<String> {
        found
            .iter()
            .filter(|v| !labels.iter().any(|l| l.contains(v.as_str())))
            .filter(|v| !(v.as_str() == default && found.len() == 1))
            .cloned()
            .collect()
    };
    let missing_arch = unlabelled(&all_archs, &arch_labels, "amd64");
    if !missing_arch.is_empty() {
        out.push(
            Finding::warning(
                "multiarch-arch-label-missing",
                format!(
                    "check if the CSV is missing the label ({ARCH_LABEL}<value>) for the Arch(s): {missing_arch:?}. Be aware that your Operator manager image {manager_names:?} provides this support. Thus, it is very likely that you want to provide it and if you support more than amd64 architectures, you MUST,use the required labels for all which are supported.Otherwise, your solution cannot be listed on the cluster for these architectures"
                ),
            )
            .at(labels_at.clone()),
        );
    }
    let missing_os = unlabelled(&all_os, &os_labels, "linux");
    if !missing_os.is_empty() {
        out.push(
            Finding::warning(
                "multiarch-os-label-missing",
                format!(
                    "check if the CSV is missing the label ({OS_LABEL}<value>) for the SO(s): {missing_os:?}. Be aware that your Operator manager image {manager_names:?} provides this support. Thus, it is very likely that you want to provide it and if you support more than linux SO you MUST,use the required labels for all which are supported.Otherwise, your solution cannot be listed on the cluster for these architectures"
                ),
            )
            .at(labels_at.clone()),
        );
    }

    // Other images that lack a platform the operator supports.
    for img in &others {
        let Some(platforms) = &img.platforms else {
            continue;
        };
        for (rule, wanted, what, has) in [
            (
                "multiarch-image-arch-missing",
                &all_archs,
                "Arch(s)",
                platforms
                    .iter()
                    .map(|p| p.architecture.clone())
                    .collect::<BTreeSet<_>>(),
            ),
            (
                "multiarch-image-os-missing",
                &all_os,
                "SO(s)",
                platforms.iter().map(|p| p.os.clone()).collect(),
            ),
        ] {
            let lacking: Vec<&String> = wanted.iter().filter(|w| !has.contains(*w)).collect();
            if !lacking.is_empty() {
                out.push(
                    Finding::warning(
                        rule,
                        format!(
                            "check if the image {} should not support {lacking:?}. Note that this CSV has labels for this {what} Your manager image {manager_names:?} are providing this support OR the CSV is configured via labels to support it. Then, please verify if this image should not support it",
                            img.reference
                        ),
                    )
                    .at(csv.location(&img.at)),
                );
            }
        }
    }
}

fn describe(platforms: &[ImagePlatform]) -> String {
    if platforms.is_empty() {
        return "no platform".into();
    }
    platforms
        .iter()
        .map(|p| format!("{}/{}", p.os, p.architecture))
        .collect::<Vec<_>>()
        .join(", ")
}
