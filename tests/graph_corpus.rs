//! The graph module against the real community-operators corpus.
use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use olm_catalog::fbc::DeclarativeConfig;
use olm_catalog::graph::load::{self, CiConfig};
use olm_catalog::graph::{checks, render_bundle, PackageGraph};

/// Packages whose template lists bundles the corpus's `catalogs/v4.18`
/// snapshot lacks, with the reason.
const KNOWN_TEMPLATE_EXTRAS: &[(&str, &[&str], &str)] = &[(
    "ecr-secret-operator",
    &["ecr-secret-operator.v0.5.1", "ecr-secret-operator.v0.6.0"],
    "the catalog snapshot was rendered before 0.5.1 and 0.6.0 were released: the package's \
     release-config.yaml still holds the pending 0.6.0 release (replaces v0.5.1), and basic.yaml \
     already lists both; every other entry matches exactly",
)];

type Channels = BTreeMap<String, Vec<olm_catalog::fbc::ChannelEntry>>;

fn catalog_packages() -> Vec<String> {
    let dir = common::corpus().join("catalogs/v4.18");
    let mut out: Vec<String> = std::fs::read_dir(&dir)
        .expect("catalogs/v4.18")
        .filter_map(Result::ok)
        .filter(|e| e.path().join("catalog.yaml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

fn real_catalog(pkg: &str) -> (DeclarativeConfig, PackageGraph) {
    let path = common::corpus().join(format!("catalogs/v4.18/{pkg}/catalog.yaml"));
    let cfg = DeclarativeConfig::load_path(&path).expect("catalog parses");
    let mut graphs = PackageGraph::from_fbc(&cfg, &path);
    assert_eq!(graphs.len(), 1, "{pkg}: one package");
    (cfg, graphs.remove(0))
}

/// The v4.18 catalog of every FBC package, rebuilt from its template
/// (ci.yaml `fbc.catalog_mapping`), has the same channels, entries,
/// replaces, skips, skipRange and default channel as the pipeline's output.
#[test]
fn templates_reproduce_the_pipeline_catalogs() {
    let pkgs = catalog_packages();
    assert_eq!(pkgs.len(), 7, "{pkgs:?}");
    for pkg in pkgs {
        let dir = common::corpus().join("operators").join(&pkg);
        let ci = CiConfig::read(&dir).expect("ci.yaml").expect("has ci.yaml");
        assert!(ci.fbc_enabled, "{pkg}");
        let template =
            load::template_for_catalog(&dir, &ci, Some("v4.18")).expect("template for v4.18");
        let mut ours = load::load_template_graph(&template, &dir).expect("template graph");
        let (_, real) = real_catalog(&pkg);
        // Explained differences: entries the template has that the corpus
        // snapshot of the catalog does not.
        for (p, names, _why) in KNOWN_TEMPLATE_EXTRAS {
            if *p != pkg {
                continue;
            }
            for ch in &mut ours.channels {
                let before = ch.entries.len();
                ch.entries.retain(|e| !names.contains(&e.name.as_str()));
                assert_eq!(
                    before - ch.entries.len(),
                    names.len(),
                    "{pkg}: recorded extras must all be present"
                );
                assert!(ch.entries.iter().all(|e| e
                    .skips
                    .iter()
                    .chain([&e.replaces])
                    .all(|n| !names.contains(&n.as_str()))));
            }
        }
        let a: Channels = ours.to_fbc_channels();
        let b: Channels = real.to_fbc_channels();
        assert_eq!(a, b, "{pkg}: channels and entries differ");
        assert_eq!(
            ours.default_channel, real.default_channel,
            "{pkg}: default channel"
        );
        for ch in &real.channels {
            let h1 = ours
                .channel(&ch.name)
                .and_then(|c| c.head().ok())
                .map(|e| e.name.clone());
            let h2 = ch.head().ok().map(|e| e.name.clone());
            assert_eq!(h1, h2, "{pkg}/{}: head", ch.name);
        }
    }
}

/// The template renderer of the pipeline that wrote the v4.18 catalogs:
/// bundle directories of `dir` (digest-only images through the catalog's
/// own image -> bundle name), each bundle migrated as `opm alpha
/// render-template --migrate-level bundle-object-to-csv-metadata` migrates
/// it (opm's default keeps `olm.bundle.object`; the pipeline asks for this
/// level).
fn pipeline_renderer<'d>(
    dir: &'d Path,
    real: &DeclarativeConfig,
) -> impl Fn(&str) -> Result<olm_catalog::fbc::Bundle, olm_catalog::graph::Error> + 'd {
    let from_dirs = olm_catalog::graph::template::dir_renderer_with(
        dir,
        olm_catalog::graph::template::image_names(real),
    );
    move |image: &str| {
        let mut cfg = DeclarativeConfig {
            bundles: vec![from_dirs(image)?],
            ..Default::default()
        };
        olm_catalog::fbc::migrate::bundle_object_to_csv_metadata(&mut cfg)
            .map_err(|e| olm_catalog::graph::Error::Render(e.to_string()))?;
        Ok(cfg.bundles.remove(0))
    }
}

/// Every olm.bundle of the v4.18 catalogs, rendered from its bundle
/// directory with the catalog's image reference and migrated as the
/// pipeline migrates it (`bundle-object-to-csv-metadata`), equals the
/// catalog's.
#[test]
fn bundle_rendering_matches_the_pipeline_catalogs() {
    let mut compared = 0;
    let mut mismatches = Vec::new();
    for pkg in catalog_packages() {
        let dir = common::corpus().join("operators").join(&pkg);
        let (cfg, _) = real_catalog(&pkg);
        let mut dirs: BTreeMap<String, std::path::PathBuf> = BTreeMap::new();
        for d in load::bundle_dirs(&dir).expect("bundle dirs") {
            if let Ok(b) = load::load_bundle(&d) {
                dirs.insert(b.info.name.clone(), d);
            }
        }
        for real in &cfg.bundles {
            let d = dirs
                .get(&real.name)
                .unwrap_or_else(|| panic!("{pkg}: no bundle directory for {}", real.name));
            let b = olm_catalog::bundle::Bundle::load_dir(d).expect("loads");
            let rendered = render_bundle::bundle_to_fbc(&b, &real.image).expect("renders");
            let mut cfg = DeclarativeConfig {
                bundles: vec![rendered],
                ..Default::default()
            };
            olm_catalog::fbc::migrate::bundle_object_to_csv_metadata(&mut cfg).expect("migrates");
            let ours = cfg.bundles.remove(0);
            compared += 1;
            let a = serde_json::to_value(&ours).expect("json");
            let r = serde_json::to_value(real).expect("json");
            if a != r {
                mismatches.push(describe(&real.name, &a, &r));
            }
        }
    }
    assert!(compared > 80, "compared {compared}");
    assert!(
        mismatches.is_empty(),
        "{} of {compared} differ:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

fn describe(name: &str, a: &serde_json::Value, b: &serde_json::Value) -> String {
    let mut out = format!("{name}:");
    for key in ["name", "package", "image", "relatedImages"] {
        if a.get(key) != b.get(key) {
            out.push_str(&format!(
                "\n  {key}: ours {} real {}",
                a.get(key).map(|v| v.to_string()).unwrap_or_default(),
                b.get(key).map(|v| v.to_string()).unwrap_or_default()
            ));
        }
    }
    let pa = a["properties"].as_array().cloned().unwrap_or_default();
    let pb = b["properties"].as_array().cloned().unwrap_or_default();
    let types = |p: &Vec<serde_json::Value>| {
        p.iter()
            .map(|x| x["type"].as_str().unwrap_or("").to_string())
            .collect::<Vec<_>>()
    };
    if types(&pa) != types(&pb) {
        out.push_str(&format!(
            "\n  property types: ours {:?} real {:?}",
            types(&pa),
            types(&pb)
        ));
    }
    for (x, y) in pa.iter().zip(pb.iter()) {
        if x != y {
            if let (Some(xo), Some(yo)) = (x["value"].as_object(), y["value"].as_object()) {
                for k in xo.keys().chain(yo.keys()) {
                    if xo.get(k) != yo.get(k) {
                        let s = |v: Option<&serde_json::Value>| {
                            v.map(|v| v.to_string())
                                .unwrap_or_default()
                                .chars()
                                .take(300)
                                .collect::<String>()
                        };
                        out.push_str(&format!(
                            "\n  {} .{k}: ours {} real {}",
                            x["type"],
                            s(xo.get(k)),
                            s(yo.get(k))
                        ));
                    }
                }
            }
        }
    }
    out
}

/// Every corpus package loads and checks without a panic; the graphs of
/// the bundle-built packages (ci.yaml's updateGraph mode) have the heads
/// recorded here, checked by hand against the rules for a sample.
#[test]
fn mode_built_packages_have_recorded_heads() {
    let ops = common::corpus().join("operators");
    let mut got: BTreeMap<String, String> = BTreeMap::new();
    for e in std::fs::read_dir(&ops).expect("operators") {
        let dir = e.expect("entry").path();
        let pkg = dir
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let graphs = load::load_graphs(&dir, None, Some("v4.18")).expect("loads");
        for g in &graphs {
            let _ = checks::check(g);
            let mut s = format!(
                "{}|{}",
                g.mode.map(|m| m.as_str()).unwrap_or("fbc"),
                g.default_channel
            );
            for ch in &g.channels {
                let head = match ch.head() {
                    Ok(h) => h.name.clone(),
                    Err(e) => format!("<{e}>"),
                };
                s.push_str(&format!("|{}={}", ch.name, head));
            }
            got.insert(pkg.clone(), s);
        }
    }
    let expected = expected_heads();
    let mut diffs = Vec::new();
    for (k, v) in &got {
        if expected.get(k.as_str()) != Some(&v.as_str()) {
            diffs.push(format!("(\"{k}\", \"{v}\"),"));
        }
    }
    assert!(
        diffs.is_empty() && got.len() == expected.len(),
        "differs:\n{}",
        diffs.join("\n")
    );
    let _ = Path::new(".");
}

fn expected_heads() -> BTreeMap<&'static str, &'static str> {
    BTreeMap::from([
        ("ack-ecr-controller", "semver|alpha|alpha=ack-ecr-controller.v1.8.1"),
        ("ack-s3-controller", "semver|alpha|alpha=ack-s3-controller.v1.10.0"),
        ("alibaba-cloud-csi-operator", "replaces|stable|stable=alibaba-cloud-csi-operator.v0.1.14"),
        ("aqua", "replaces|alpha|2022.4.0=aqua-operator.v2022.4.18|5.3.0=aqua-operator.v5.3.0|6.0.0=aqua-operator.v6.0.0|6.2.0=aqua-operator.v6.2.2|6.5.0=aqua-operator.v6.5.11|alpha=aqua-operator.v1.0.2"),
        ("clickhouse", "replaces|latest|latest=clickhouse-operator.v0.27.2"),
        ("cockroachdb", "replaces|stable-v6.x|stable=cockroachdb.v2.1.11|stable-3.x=cockroachdb.v3.0.7|stable-5.x=cockroachdb.v5.0.4|stable-v6.x=cockroachdb.v6.0.0"),
        ("community-windows-machine-config-operator", "replaces|preview|alpha=community-windows-machine-config-operator.v1.0.0|preview=community-windows-machine-config-operator.v8.0.0"),
        ("dapr-kubernetes-operator", "replaces|alpha|alpha=dapr-kubernetes-operator.v0.0.13"),
        ("debezium-operator", "replaces|debezium-latest|debezium-2.4.x=debezium-operator.v2.4.2|debezium-2.5.x=debezium-operator.v2.5.3-final|debezium-2.6.x=debezium-operator.v2.6.1-final|debezium-2.7.x=debezium-operator.v2.7.3-final|debezium-3.0.x=debezium-operator.v3.0.0-final|debezium-latest=debezium-operator.v3.0.0-final"),
        ("ecr-secret-operator", "fbc|alpha|alpha=ecr-secret-operator.v0.6.0"),
        ("etcd", "replaces|singlenamespace-alpha|alpha=etcdoperator.v0.6.1|clusterwide-alpha=etcdoperator.v0.9.4-clusterwide|singlenamespace-alpha=etcdoperator.v0.9.4"),
        ("fence-agents-remediation", "semver|stable|stable=fence-agents-remediation.v0.8.0"),
        ("gitlab-operator-kubernetes", "semver|stable|stable=gitlab-operator-kubernetes.v3.3.0|unstable=gitlab-operator-kubernetes.v3.3.0"),
        ("gitlab-runner-operator", "replaces|stable|stable=gitlab-runner-operator.v1.52.0"),
        ("hawtio-operator", "replaces|stable-v1|alpha=hawtio-operator.v0.5.0|latest=hawtio-operator.v1.2.0|stable-v1=hawtio-operator.v1.2.0"),
        ("kaoto-operator", "replaces|alpha|alpha=kaoto-operator.v2.11.0"),
        ("kepler-operator", "fbc|alpha|alpha=kepler-operator.v0.24.0"),
        ("koku-metrics-operator", "fbc|beta|alpha=koku-metrics-operator.v4.4.1|beta=koku-metrics-operator.v4.4.1"),
        ("kube-green", "fbc|alpha|alpha=kube-green.v0.7.1"),
        ("machine-deletion-remediation", "semver|stable|candidate=machine-deletion-remediation.v0.1.0|stable=machine-deletion-remediation.v0.7.0"),
        ("multi-nic-cni-operator", "fbc|stable|alpha=multi-nic-cni-operator.v1.3.1|beta=multi-nic-cni-operator.v1.2.7|stable=multi-nic-cni-operator.v1.2.6"),
        ("ncn-operator", "replaces|betav1|alpha=ncn-operator.v0.3.18|beta=ncn-operator.v0.2.2|betav1=ncn-operator.v0.9.8"),
        ("node-healthcheck-operator", "semver|stable|alpha=node-healthcheck-operator.v0.1.1|candidate=node-healthcheck-operator.v0.3.0|stable=node-healthcheck-operator.v0.12.0"),
        ("node-maintenance-operator", "semver|stable|stable=node-maintenance-operator.v0.21.0"),
        ("pelorus-operator", "replaces|alpha|alpha=pelorus-operator.v0.0.9"),
        ("rabbitmq-messaging-topology-operator", "fbc|stable|stable=rabbitmq-messaging-topology-operator.v1.19.3"),
        ("rhoas-operator", "semver|beta|beta=rhoas-operator.0.13.0"),
        ("self-node-remediation", "semver|stable|stable=self-node-remediation.v0.13.0"),
        ("skupper-operator", "replaces|stable|alpha=skupper-operator.v1.9.6|stable=skupper-operator.v1.9.6|stable-1=skupper-operator.v1.9.6|stable-1.6=skupper-operator.v1.6.0|stable-1.7=skupper-operator.v1.7.1|stable-1.8=skupper-operator.v1.8.4|stable-1.9=skupper-operator.v1.9.6"),
        ("special-resource-operator", "replaces|alpha|alpha=special-resource-operator.v4.9.0"),
        ("stolostron-engine", "replaces|community-0.8|community-0.1=stolostron-engine.v0.1.4|community-0.2=stolostron-engine.v0.2.2|community-0.3=stolostron-engine.v0.3.2|community-0.4=stolostron-engine.v0.4.0|community-0.5=stolostron-engine.v0.5.3|community-0.6=stolostron-engine.v0.6.3|community-0.7=stolostron-engine.v0.7.1|community-0.8=stolostron-engine.v0.8.2"),
        ("trident-operator", "fbc|stable|stable=trident-operator.v26.2.1"),
    ])
}

/// The template a package's `catalogs/v4.18` file was rendered from: the
/// one `ci.yaml` maps to v4.18, else `catalog-templates/v4.18.yaml`, else
/// the package's only template.
fn v418_template(dir: &Path) -> Option<std::path::PathBuf> {
    if let Some(ci) = CiConfig::read(dir).ok().flatten() {
        if let Some(t) = load::template_for_catalog(dir, &ci, Some("v4.18")) {
            if t.is_file() {
                return Some(t);
            }
        }
    }
    let tdir = dir.join("catalog-templates");
    for name in ["v4.18.yaml", "v4.18.yml", "v4.18.json"] {
        if tdir.join(name).is_file() {
            return Some(tdir.join(name));
        }
    }
    let files: Vec<_> = std::fs::read_dir(&tdir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    (files.len() == 1).then(|| files[0].clone())
}

/// What differs between two FBC objects: each top-level field, and for
/// `properties` each property type whose values differ (and which keys of
/// the value).
fn object_diff(a: &serde_json::Value, b: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    let (Some(ao), Some(bo)) = (a.as_object(), b.as_object()) else {
        return vec![format!("ours {a} real {b}")];
    };
    let short = |v: Option<&serde_json::Value>| {
        let s = v
            .map(|v| v.to_string())
            .unwrap_or_else(|| "(absent)".into());
        if s.chars().count() > 160 {
            format!(
                "{}... ({} chars)",
                s.chars().take(160).collect::<String>(),
                s.len()
            )
        } else {
            s
        }
    };
    let keys: std::collections::BTreeSet<&String> = ao.keys().chain(bo.keys()).collect();
    for k in keys {
        let (x, y) = (ao.get(k), bo.get(k));
        if x == y {
            continue;
        }
        if k == "properties" {
            let before = out.len();
            let by_type = |v: Option<&serde_json::Value>| {
                let mut m: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
                for p in v.and_then(|v| v.as_array()).into_iter().flatten() {
                    m.entry(p["type"].as_str().unwrap_or("").to_string())
                        .or_default()
                        .push(p["value"].clone());
                }
                m
            };
            let (px, py) = (by_type(x), by_type(y));
            let types: std::collections::BTreeSet<&String> = px.keys().chain(py.keys()).collect();
            for t in types {
                let (vx, vy) = (px.get(t), py.get(t));
                if vx == vy {
                    continue;
                }
                match (vx.map(|v| v.as_slice()), vy.map(|v| v.as_slice())) {
                    (Some([vx]), Some([vy])) if vx.is_object() && vy.is_object() => {
                        let (ox, oy) = (vx.as_object().unwrap(), vy.as_object().unwrap());
                        let ks: std::collections::BTreeSet<&String> =
                            ox.keys().chain(oy.keys()).collect();
                        for vk in ks.into_iter().filter(|vk| ox.get(*vk) != oy.get(*vk)) {
                            out.push(format!(
                                "properties[{t}].{vk}: ours {} real {}",
                                short(ox.get(vk)),
                                short(oy.get(vk))
                            ));
                        }
                    }
                    _ => out.push(format!(
                        "properties[{t}]: ours {} real {}",
                        short(vx.map(|v| serde_json::Value::from(v.clone())).as_ref()),
                        short(vy.map(|v| serde_json::Value::from(v.clone())).as_ref())
                    )),
                }
            }
            if out.len() == before {
                out.push("properties: same values, different order".into());
            }
            continue;
        }
        out.push(format!("{k}: ours {} real {}", short(x), short(y)));
    }
    out
}

/// The repository of an image reference (`host/path` without tag or digest).
fn image_repo(image: &str) -> &str {
    let no_digest = image.split('@').next().unwrap_or(image);
    match no_digest.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => repo,
        _ => no_digest,
    }
}

/// Where the pipeline wrote a bundle's image by digest and the template
/// gives it by tag, the rendered bundle's image (and that image among its
/// related images) becomes the catalog's digest reference, when the
/// repository is the same: the digest of a tag cannot be known offline.
fn normalise_images(cfg: &mut DeclarativeConfig, real: &DeclarativeConfig) {
    let real_images: BTreeMap<&str, &str> = real
        .bundles
        .iter()
        .map(|b| (b.name.as_str(), b.image.as_str()))
        .collect();
    for b in &mut cfg.bundles {
        let Some(real) = real_images.get(b.name.as_str()) else {
            continue;
        };
        if b.image != *real
            && real.contains("@sha256:")
            && !b.image.contains('@')
            && image_repo(&b.image) == image_repo(real)
        {
            let tagged = std::mem::replace(&mut b.image, real.to_string());
            for ri in &mut b.related_images {
                if ri.image == tagged {
                    ri.image = real.to_string();
                }
            }
            b.related_images
                .sort_by(|x, y| x.image.cmp(&y.image).then(x.name.cmp(&y.name)));
        }
    }
}

/// Every template of the corpus that has a `catalogs/v4.18/<pkg>` file (the
/// v4.18 template, or the package's only one), rendered as `render-template`
/// does without a type (the type read from its schema) with the package's
/// bundle directories, equals that catalog object for object (packages,
/// channels, bundles with every property and related image; each object
/// compared as JSON, and every differing field reported).
///
/// Normalised, because the real pipeline's output cannot be reproduced
/// offline: an image the template gives only by digest names no directory,
/// so it is resolved through the catalog's own image -> bundle name (the
/// bundle directory with that CSV name is rendered); and where the pipeline
/// wrote a bundle's image by digest and the template by tag, the rendered
/// bundle's image (and that image among its related images) is compared as
/// the catalog's digest reference when the repository is the same. Bundles
/// the template has and the snapshot lacks are dropped (KNOWN_TEMPLATE_EXTRAS).
#[test]
fn every_template_renders_its_v418_catalog() {
    use olm_catalog::graph::template;
    let mut compared = 0;
    let mut failures = Vec::new();
    for pkg in catalog_packages() {
        let dir = common::corpus().join("operators").join(&pkg);
        let Some(tpl) = v418_template(&dir) else {
            continue;
        };
        compared += 1;
        let text = std::fs::read_to_string(&tpl).expect("read");
        let (real_cfg, _) = real_catalog(&pkg);
        let render = pipeline_renderer(&dir, &real_cfg);
        let mut cfg = match template::render(&text, &tpl, &render) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{pkg}: does not render: {e}"));
                continue;
            }
        };
        for (p, names, _) in KNOWN_TEMPLATE_EXTRAS {
            if *p == pkg {
                cfg.bundles.retain(|b| !names.contains(&b.name.as_str()));
                for c in &mut cfg.channels {
                    c.entries.retain(|e| !names.contains(&e.name.as_str()));
                }
            }
        }
        normalise_images(&mut cfg, &real_cfg);
        let key = |v: &serde_json::Value| {
            format!(
                "{} {}",
                v["schema"].as_str().unwrap_or(""),
                v["name"]
                    .as_str()
                    .unwrap_or(v["package"].as_str().unwrap_or(""))
            )
        };
        let ours: BTreeMap<String, serde_json::Value> = template::ordered_objects(&cfg)
            .into_iter()
            .map(|v| (key(&v), v))
            .collect();
        let real: BTreeMap<String, serde_json::Value> = template::ordered_objects(&real_cfg)
            .into_iter()
            .map(|v| (key(&v), v))
            .collect();
        let mut diffs = Vec::new();
        for (k, r) in &real {
            match ours.get(k) {
                None => diffs.push(format!("  {k}: missing from ours")),
                Some(o) => {
                    for d in object_diff(o, r) {
                        diffs.push(format!("  {k}: {d}"));
                    }
                }
            }
        }
        for k in ours.keys().filter(|k| !real.contains_key(*k)) {
            diffs.push(format!("  {k}: not in the pipeline's catalog"));
        }
        if !diffs.is_empty() {
            failures.push(format!(
                "{pkg} ({}):\n{}",
                tpl.file_name().unwrap_or_default().to_string_lossy(),
                diffs.join("\n")
            ));
        }
    }
    assert!(compared >= 7, "compared {compared} templates");
    assert!(
        failures.is_empty(),
        "{} of {compared} templates do not render their catalogs/v4.18 file:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The YAML opm wrote for each v4.18 catalog, byte for byte: rendering
/// the package's template with `-o yaml` gives the corpus file exactly
/// (key order, quoting, block scalars, folding of long lines), images
/// normalised as in `every_template_renders_its_v418_catalog`.
#[test]
fn basic_templates_render_the_pipeline_yaml_byte_for_byte() {
    use olm_catalog::graph::template;
    let mut compared = 0;
    for pkg in catalog_packages() {
        let dir = common::corpus().join("operators").join(&pkg);
        let Some(tpl) = v418_template(&dir) else {
            continue;
        };
        let text = std::fs::read_to_string(&tpl).expect("read");
        let path = common::corpus().join(format!("catalogs/v4.18/{pkg}/catalog.yaml"));
        let real_text = std::fs::read_to_string(&path).expect("catalog");
        let (real_cfg, _) = real_catalog(&pkg);
        let render = pipeline_renderer(&dir, &real_cfg);
        let mut cfg = template::render(&text, &tpl, &render).expect("renders");
        // Bundles the template has and the snapshot lacks (see
        // KNOWN_TEMPLATE_EXTRAS) are dropped before comparing.
        for (p, names, _) in KNOWN_TEMPLATE_EXTRAS {
            if *p == pkg {
                cfg.bundles.retain(|b| !names.contains(&b.name.as_str()));
                for c in &mut cfg.channels {
                    c.entries.retain(|e| !names.contains(&e.name.as_str()));
                }
            }
        }
        normalise_images(&mut cfg, &real_cfg);
        let ours = template::write(&cfg, template::OutputFormat::Yaml).expect("yaml");
        if ours != real_text {
            let line = ours
                .lines()
                .zip(real_text.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(ours.lines().count().min(real_text.lines().count()));
            let show = |t: &str| {
                t.lines()
                    .skip(line.saturating_sub(2))
                    .take(5)
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            panic!(
                "{pkg}: YAML differs at line {}:\nours:\n{}\nreal:\n{}",
                line + 1,
                show(&ours),
                show(&real_text)
            );
        }
        compared += 1;
    }
    assert!(compared >= 7, "compared {compared}");
}

/// Every edge of each package built from its bundles under ci.yaml's
/// `updateGraph` mode: per channel, the sorted `replaces` and `skips` edges
/// (`channel<TAB>from<TAB>to<TAB>kind`) and each entry's `olm.skipRange`
/// as written (`channel<TAB>skipRange:<range><TAB>to<TAB>skipRange`), so a
/// change to any mode's rules shows up as a diff of
/// `tests/data/graph_edges/<pkg>.tsv`. The files were generated once
/// (`OLM_CATALOG_UPDATE_GOLDEN=1`) and reviewed; a sample of them is
/// checked by hand against the CSVs in `hand_checked_corpus_edges`.
fn edge_lines(g: &PackageGraph) -> Vec<String> {
    let mut lines = vec![format!(
        "# {} mode={} default={}",
        g.package,
        g.mode.map(|m| m.as_str()).unwrap_or("fbc"),
        g.default_channel
    )];
    for ch in &g.channels {
        let mut rows: Vec<(String, String, &str)> = Vec::new();
        for e in &ch.entries {
            if !e.replaces.is_empty() {
                rows.push((e.replaces.clone(), e.name.clone(), "replaces"));
            }
            for s in &e.skips {
                rows.push((s.clone(), e.name.clone(), "skips"));
            }
            if !e.skip_range.is_empty() {
                rows.push((
                    format!("skipRange:{}", e.skip_range),
                    e.name.clone(),
                    "skipRange",
                ));
            }
            if e.replaces.is_empty() && e.skips.is_empty() && e.skip_range.is_empty() {
                rows.push(("-".into(), e.name.clone(), "entry"));
            }
        }
        rows.sort();
        for (from, to, kind) in rows {
            lines.push(format!("{}\t{from}\t{to}\t{kind}", ch.name));
        }
    }
    lines
}

fn mode_built_packages() -> Vec<(String, PackageGraph)> {
    let ops = common::corpus().join("operators");
    let mut out = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(&ops)
        .expect("operators")
        .map(|e| e.expect("entry").path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let pkg = dir
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        for g in load::load_graphs(&dir, None, Some("v4.18")).expect("loads") {
            if g.mode.is_some() {
                out.push((pkg.clone(), g));
            }
        }
    }
    out
}

#[test]
fn mode_built_packages_have_recorded_edges() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/graph_edges");
    let update = std::env::var_os("OLM_CATALOG_UPDATE_GOLDEN").is_some();
    let pkgs = mode_built_packages();
    assert_eq!(pkgs.len(), 25, "mode-built packages");
    let mut diffs = Vec::new();
    for (pkg, g) in &pkgs {
        let text = edge_lines(g).join("\n") + "\n";
        let file = golden.join(format!("{pkg}.tsv"));
        if update {
            std::fs::create_dir_all(&golden).expect("mkdir");
            std::fs::write(&file, &text).expect("write golden");
            continue;
        }
        let want = std::fs::read_to_string(&file).unwrap_or_default();
        if want != text {
            diffs.push(format!("{pkg}: {} differs", file.display()));
        }
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// A sample of the recorded edges, checked by hand against the bundles'
/// CSVs, annotations and ci.yaml (all five packages' `updateGraph` is named
/// below). Rules: in `replaces` mode opm adds the bundles in version order;
/// after each addition a channel is its head (the highest version), the
/// head's `spec.replaces` chain, and every `spec.skips` name of a bundle on
/// that chain as an entry of its own with no edges; the rest is pruned.
/// In `semver` mode the CSVs' replaces/skips are ignored and each bundle
/// replaces the next lower version of its channel. `olm.skipRange` is kept
/// as written in every mode. The default channel is the last added
/// bundle's `channel.default.v1` annotation.
#[test]
fn hand_checked_corpus_edges() {
    let sample: &[(&str, &[&str])] = &[
        (
            "etcd",
            &[
                // replaces-mode; default from 0.9.4's annotation.
                "# etcd mode=replaces default=singlenamespace-alpha",
                // 0.6.1 is alone in `alpha` and replaces nothing.
                "alpha\t-\tetcdoperator.v0.6.1\tentry",
                // 0.9.0 (channels clusterwide-alpha,singlenamespace-alpha) replaces nothing.
                "clusterwide-alpha\t-\tetcdoperator.v0.9.0\tentry",
                // 0.9.2-clusterwide: spec.replaces etcdoperator.v0.9.0.
                "clusterwide-alpha\tetcdoperator.v0.9.0\tetcdoperator.v0.9.2-clusterwide\treplaces",
                // 0.9.4-clusterwide (the head, highest of the channel): spec.replaces 0.9.2-clusterwide.
                "clusterwide-alpha\tetcdoperator.v0.9.2-clusterwide\tetcdoperator.v0.9.4-clusterwide\treplaces",
                "singlenamespace-alpha\t-\tetcdoperator.v0.9.0\tentry",
                // 0.9.2: spec.replaces etcdoperator.v0.9.0.
                "singlenamespace-alpha\tetcdoperator.v0.9.0\tetcdoperator.v0.9.2\treplaces",
                // 0.9.4 (head): spec.replaces etcdoperator.v0.9.2.
                "singlenamespace-alpha\tetcdoperator.v0.9.2\tetcdoperator.v0.9.4\treplaces",
            ],
        ),
        (
            "cockroachdb",
            &[
                // replaces-mode; the last added, 6.0.0, says stable-v6.x.
                "# cockroachdb mode=replaces default=stable-v6.x",
                // 2.0.9 replaces nothing.
                "stable\t-\tcockroachdb.v2.0.9\tentry",
                // 2.1.1: spec.replaces cockroachdb.v2.0.9.
                "stable\tcockroachdb.v2.0.9\tcockroachdb.v2.1.1\treplaces",
                // 2.1.11 (head of stable): spec.replaces cockroachdb.v2.1.1.
                "stable\tcockroachdb.v2.1.1\tcockroachdb.v2.1.11\treplaces",
                // 3.0.7 alone in stable-3.x.
                "stable-3.x\t-\tcockroachdb.v3.0.7\tentry",
                // 5.0.3 replaces nothing; 5.0.4: spec.replaces cockroachdb.v5.0.3.
                "stable-5.x\t-\tcockroachdb.v5.0.3\tentry",
                "stable-5.x\tcockroachdb.v5.0.3\tcockroachdb.v5.0.4\treplaces",
                // 6.0.0 alone in stable-v6.x, annotation olm.skipRange "<6.0.0".
                "stable-v6.x\tskipRange:<6.0.0\tcockroachdb.v6.0.0\tskipRange",
            ],
        ),
        (
            "alibaba-cloud-csi-operator",
            &[
                "# alibaba-cloud-csi-operator mode=replaces default=stable",
                // 0.1.14 (head) skips 0.1.8 and 0.1.13 and replaces
                // nothing: the walk stops there. The skipped names are
                // entries with no edges of their own, so 0.1.13's
                // replaces of 0.1.10 is not written, and 0.1.9 and 0.1.10
                // are pruned (reported as graph-stranded-bundle).
                "stable\t-\talibaba-cloud-csi-operator.v0.1.13\tentry",
                "stable\t-\talibaba-cloud-csi-operator.v0.1.8\tentry",
                "stable\talibaba-cloud-csi-operator.v0.1.13\talibaba-cloud-csi-operator.v0.1.14\tskips",
                "stable\talibaba-cloud-csi-operator.v0.1.8\talibaba-cloud-csi-operator.v0.1.14\tskips",
            ],
        ),
        (
            "special-resource-operator",
            &[
                "# special-resource-operator mode=replaces default=alpha",
                // 4.8.0 replaces nothing.
                "alpha\t-\tspecial-resource-operator.v4.8.0\tentry",
                // 4.8.2 and 4.9.0 carry olm.skipRange '>=4.6.0 <4.9.0'.
                "alpha\tskipRange:>=4.6.0 <4.9.0\tspecial-resource-operator.v4.8.2\tskipRange",
                "alpha\tskipRange:>=4.6.0 <4.9.0\tspecial-resource-operator.v4.9.0\tskipRange",
                // 4.8.1 replaces 4.8.0, 4.8.2 replaces 4.8.1, 4.9.0 (head) replaces 4.8.2.
                "alpha\tspecial-resource-operator.v4.8.0\tspecial-resource-operator.v4.8.1\treplaces",
                "alpha\tspecial-resource-operator.v4.8.1\tspecial-resource-operator.v4.8.2\treplaces",
                "alpha\tspecial-resource-operator.v4.8.2\tspecial-resource-operator.v4.9.0\treplaces",
            ],
        ),
        (
            "fence-agents-remediation",
            &[
                // semver-mode: version order, CSV replaces ignored.
                "# fence-agents-remediation mode=semver default=stable",
                "stable\tfence-agents-remediation.v0.2.0\tfence-agents-remediation.v0.2.1\treplaces",
                "stable\tfence-agents-remediation.v0.2.1\tfence-agents-remediation.v0.3.0\treplaces",
                "stable\tfence-agents-remediation.v0.3.0\tfence-agents-remediation.v0.4.0\treplaces",
                "stable\tfence-agents-remediation.v0.4.0\tfence-agents-remediation.v0.5.0\treplaces",
                "stable\tfence-agents-remediation.v0.5.0\tfence-agents-remediation.v0.6.0\treplaces",
                "stable\tfence-agents-remediation.v0.6.0\tfence-agents-remediation.v0.6.1\treplaces",
                // The CSV of 0.7.0 says replaces 0.6.0; semver mode takes
                // the next lower version, 0.6.1.
                "stable\tfence-agents-remediation.v0.6.1\tfence-agents-remediation.v0.7.0\treplaces",
                "stable\tfence-agents-remediation.v0.7.0\tfence-agents-remediation.v0.8.0\treplaces",
                // Every CSV has olm.skipRange '>=0.0.1'.
                "stable\tskipRange:>=0.0.1\tfence-agents-remediation.v0.2.0\tskipRange",
                "stable\tskipRange:>=0.0.1\tfence-agents-remediation.v0.2.1\tskipRange",
                "stable\tskipRange:>=0.0.1\tfence-agents-remediation.v0.3.0\tskipRange",
                "stable\tskipRange:>=0.0.1\tfence-agents-remediation.v0.4.0\tskipRange",
                "stable\tskipRange:>=0.0.1\tfence-agents-remediation.v0.5.0\tskipRange",
                "stable\tskipRange:>=0.0.1\tfence-agents-remediation.v0.6.0\tskipRange",
                "stable\tskipRange:>=0.0.1\tfence-agents-remediation.v0.6.1\tskipRange",
                "stable\tskipRange:>=0.0.1\tfence-agents-remediation.v0.7.0\tskipRange",
                "stable\tskipRange:>=0.0.1\tfence-agents-remediation.v0.8.0\tskipRange",
            ],
        ),
    ];
    for (pkg, want) in sample {
        let dir = common::corpus().join("operators").join(pkg);
        let mut graphs = load::load_graphs(&dir, None, Some("v4.18")).expect("loads");
        assert_eq!(graphs.len(), 1, "{pkg}");
        let g = graphs.remove(0);
        assert_eq!(edge_lines(&g), *want, "{pkg}");
        if *pkg == "alibaba-cloud-csi-operator" {
            let pruned: Vec<&str> = g.pruned.iter().map(|(_, b)| b.as_str()).collect();
            assert_eq!(
                pruned,
                [
                    "alibaba-cloud-csi-operator.v0.1.9",
                    "alibaba-cloud-csi-operator.v0.1.10"
                ]
            );
        }
    }
}

/// Every corpus CSV pruned to the graph's keys decodes to the same graph
/// view as the whole file, at the same lines; and pruning applies to nearly
/// all of them (it is what keeps `graph check` on the corpus fast).
#[test]
fn pruned_csvs_decode_like_whole_ones() {
    use olm_catalog::bundle::{CsvGraphView, CSV_GRAPH_KEYS};
    use olm_catalog::path;
    use olm_catalog::yaml::{parse_documents, prune, Node};
    let csv_root = |docs: &[olm_catalog::yaml::Document]| -> Option<Node> {
        docs.iter()
            .find(|d| d.root.get("kind").and_then(Node::as_str) == Some("ClusterServiceVersion"))
            .map(|d| d.root.clone())
    };
    let (mut csvs, mut pruned_count) = (0, 0);
    for bundle in walkdir::WalkDir::new(common::corpus().join("operators"))
        .min_depth(4)
        .max_depth(5)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().parent().is_some_and(|p| p.ends_with("manifests")))
    {
        let Ok(text) = std::fs::read_to_string(bundle.path()) else {
            continue;
        };
        if !text.contains("ClusterServiceVersion") {
            continue;
        }
        let whole = parse_documents(&text).expect("corpus CSVs parse");
        let Some(whole_root) = csv_root(&whole) else {
            continue;
        };
        csvs += 1;
        let Some(pruned_text) = prune(&text, CSV_GRAPH_KEYS) else {
            continue;
        };
        pruned_count += 1;
        let name = bundle.path().display();
        assert_eq!(
            pruned_text.matches('\n').count(),
            text.matches('\n').count(),
            "{name}"
        );
        let pruned = parse_documents(&pruned_text).expect("pruned CSVs parse");
        let pruned_root = csv_root(&pruned).expect("the CSV is still there");
        let (a, b) = (
            CsvGraphView::from_node(&whole_root)
                .map(|v| v.graph_facts())
                .map_err(|e| e.path),
            CsvGraphView::from_node(&pruned_root)
                .map(|v| v.graph_facts())
                .map_err(|e| e.path),
        );
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{name}");
        for p in [
            path!["metadata", "name"].to_vec(),
            path!["spec", "version"].to_vec(),
            path!["spec", "replaces"].to_vec(),
            path!["metadata", "annotations", "olm.skipRange"].to_vec(),
        ] {
            if whole_root.at(&p).is_some() {
                assert_eq!(
                    whole_root.locate(&p),
                    pruned_root.locate(&p),
                    "{name} {p:?}"
                );
            }
        }
    }
    assert!(csvs > 700, "{csvs} CSVs");
    assert!(
        pruned_count * 100 >= csvs * 95,
        "only {pruned_count} of {csvs} CSVs pruned"
    );
}

/// Pruning never changes what the graph reads from a text that parses both
/// whole and pruned: corpus CSVs mutated line by line (indentation, deleted
/// and duplicated lines, stray colons and dashes) keep their graph facts, or
/// fail to parse (then the loader reads the whole text).
#[test]
fn pruning_mutated_csvs_never_changes_the_graph_facts() {
    use olm_catalog::bundle::{CsvGraphView, CSV_GRAPH_KEYS};
    use olm_catalog::yaml::{parse_documents, prune, Node};
    let facts = |text: &str| -> Option<Result<[String; 6], String>> {
        let docs = parse_documents(text).ok()?;
        let root = docs
            .iter()
            .find(|d| d.root.get("kind").and_then(Node::as_str) == Some("ClusterServiceVersion"))?;
        Some(
            CsvGraphView::from_node(&root.root)
                .map(|v| v.graph_facts())
                .map_err(|e| e.path),
        )
    };
    let iterations: usize = std::env::var("PRUNE_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    let mut seed: u64 = std::env::var("PRUNE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x9e37_79b9_7f4a_7c15);
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let (mut compared, mut total) = (0, 0);
    for pkg_version in [
        "kepler-operator/0.20.0",
        "aqua/2022.4.6",
        "koku-metrics-operator/4.0.0",
    ] {
        let dir = common::corpus()
            .join("operators")
            .join(pkg_version)
            .join("manifests");
        let Some(csv) = std::fs::read_dir(&dir)
            .expect("manifests")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().contains("clusterserviceversion"))
        else {
            panic!("{}: no CSV", dir.display());
        };
        let text = std::fs::read_to_string(&csv).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        // Half the mutations land near the keys the graph reads.
        let hot: Vec<usize> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| {
                let k = l.trim_start();
                [
                    "metadata:",
                    "annotations:",
                    "name:",
                    "olm.skipRange",
                    "spec:",
                    "version:",
                    "replaces:",
                    "skips:",
                ]
                .iter()
                .any(|p| k.starts_with(p))
            })
            .map(|(i, _)| i)
            .collect();
        for _ in 0..iterations {
            let mut m: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            for _ in 0..1 + next(3) {
                let i = if next(2) == 0 {
                    next(m.len())
                } else {
                    (hot[next(hot.len())] + next(7))
                        .saturating_sub(3)
                        .min(m.len() - 1)
                };
                match next(8) {
                    6 => m.insert(i, format!("{}q: \"open", " ".repeat(next(8)))),
                    7 => m.insert(i, format!("{}close' \"", " ".repeat(next(8)))),
                    0 => m[i] = format!("  {}", m[i]),
                    1 => m[i] = m[i].trim_start_matches(' ').to_string(),
                    2 => {
                        m.remove(i);
                    }
                    3 => {
                        let l = m[i].clone();
                        m.insert(i, l);
                    }
                    4 => m[i] = format!("{}: x", m[i]),
                    _ => m.insert(i, format!("{}- y", " ".repeat(next(6)))),
                }
            }
            let mutated = m.join("\n") + "\n";
            total += 1;
            let Some(pruned) = prune(&mutated, CSV_GRAPH_KEYS) else {
                continue;
            };
            if let (Some(whole), Some(part)) = (facts(&mutated), facts(&pruned)) {
                compared += 1;
                assert_eq!(whole, part, "{pkg_version}: mutated text:\n{mutated}");
            }
        }
    }
    eprintln!("{compared} of {total} mutated CSVs parsed whole and pruned, and agreed");
    assert!(
        compared * 8 >= total,
        "only {compared} of {total} mutations compared"
    );
}
