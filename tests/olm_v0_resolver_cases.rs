//! operator-lifecycle-manager's own resolver tests, asked of `graph
//! rehearse --subscription`: the table cases of
//! `pkg/controller/registry/resolver/resolver_test.go` and
//! `step_resolver_test.go`, each with the expectation upstream asserts,
//! restated on catalogs written here (our fixtures, not upstream's code).
//! Upstream's `Resolve` returns what one resolution adds or replaces; here
//! that is the rehearsal's round 0: its installs and its round-0 upgrades.
//! The cases left out, and why, are in `docs/olm-v0-tests.md`.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::run;
use serde_json::{json, Value};

/// One catalog entry, as upstream's `genEntry`/`bundle` helpers give one.
#[derive(Clone, Default)]
struct E {
    name: String,
    version: String,
    replaces: String,
    skips: Vec<String>,
    skip_range: String,
    package: String,
    channel: String,
    default_channel: String,
    properties: Vec<Value>,
}

/// `name` (version `version`) in `package`'s `channel`, replacing `replaces`.
fn e(name: &str, version: &str, replaces: &str, package: &str, channel: &str) -> E {
    E {
        name: name.into(),
        version: version.into(),
        replaces: replaces.into(),
        package: package.into(),
        channel: channel.into(),
        ..E::default()
    }
}

impl E {
    fn provides(mut self, g: &str, v: &str, k: &str) -> E {
        self.properties
            .push(json!({"type": "olm.gvk", "value": {"group": g, "version": v, "kind": k}}));
        self
    }
    fn requires(mut self, g: &str, v: &str, k: &str) -> E {
        self.properties.push(
            json!({"type": "olm.gvk.required", "value": {"group": g, "version": v, "kind": k}}),
        );
        self
    }
    fn requires_package(mut self, p: &str, range: &str) -> E {
        self.properties.push(
            json!({"type": "olm.package.required", "value": {"packageName": p, "versionRange": range}}),
        );
        self
    }
    fn prop(mut self, ty: &str, value: Value) -> E {
        self.properties.push(json!({"type": ty, "value": value}));
        self
    }
    fn deprecated(self) -> E {
        self.prop("olm.deprecated", json!({}))
    }
    fn skips(mut self, s: &[&str]) -> E {
        self.skips = s.iter().map(|x| x.to_string()).collect();
        self
    }
    fn skip_range(mut self, r: &str) -> E {
        self.skip_range = r.into();
        self
    }
    fn default_channel(mut self, c: &str) -> E {
        self.default_channel = c.into();
        self
    }
}

/// The entries as an FBC file (JSON stream).
fn write_catalog(path: &Path, entries: &[E]) {
    let mut out = String::new();
    let mut packages: Vec<&str> = Vec::new();
    for x in entries {
        if !packages.contains(&x.package.as_str()) {
            packages.push(&x.package);
        }
    }
    for p in packages {
        let mine: Vec<&E> = entries.iter().filter(|x| x.package == p).collect();
        let default = mine
            .iter()
            .map(|x| x.default_channel.as_str())
            .find(|d| !d.is_empty())
            .unwrap_or(&mine[0].channel);
        out.push_str(
            &json!({"schema": "olm.package", "name": p, "defaultChannel": default}).to_string(),
        );
        out.push('\n');
        let mut channels: Vec<&str> = Vec::new();
        for x in &mine {
            if !channels.contains(&x.channel.as_str()) {
                channels.push(&x.channel);
            }
        }
        for c in channels {
            let es: Vec<Value> = mine
                .iter()
                .filter(|x| x.channel == c)
                .map(|x| {
                    let mut v = json!({"name": x.name});
                    if !x.replaces.is_empty() {
                        v["replaces"] = json!(x.replaces);
                    }
                    if !x.skips.is_empty() {
                        v["skips"] = json!(x.skips);
                    }
                    if !x.skip_range.is_empty() {
                        v["skipRange"] = json!(x.skip_range);
                    }
                    v
                })
                .collect();
            out.push_str(
                &json!({"schema": "olm.channel", "package": p, "name": c, "entries": es})
                    .to_string(),
            );
            out.push('\n');
        }
        let mut done: Vec<&str> = Vec::new();
        for x in &mine {
            if done.contains(&x.name.as_str()) {
                continue;
            }
            done.push(&x.name);
            let mut props = vec![
                json!({"type": "olm.package", "value": {"packageName": p, "version": x.version}}),
            ];
            props.extend(x.properties.iter().cloned());
            out.push_str(
                &json!({"schema": "olm.bundle", "name": x.name, "package": p,
                    "image": format!("example.com/{}:{}", p, x.version), "properties": props})
                .to_string(),
            );
            out.push('\n');
        }
    }
    std::fs::write(path, out).expect("write catalog");
}

/// A Subscription: `name`, package, channel, and optional startingCSV and
/// status.installedCSV.
struct Sub<'a> {
    name: &'a str,
    package: &'a str,
    channel: &'a str,
    starting_csv: &'a str,
    installed_csv: &'a str,
}

fn sub<'a>(name: &'a str, package: &'a str, channel: &'a str) -> Sub<'a> {
    Sub {
        name,
        package,
        channel,
        starting_csv: "",
        installed_csv: "",
    }
}

/// A case: a catalog, Subscriptions, `--installed` values (a value ending
/// in `=` gets the entries given for it written as its bundle file).
struct Case<'a> {
    catalog: Vec<E>,
    subs: Vec<Sub<'a>>,
    installed: Vec<(&'a str, Vec<E>)>,
}

/// Runs the case; (exit code, rehearsal JSON, stderr).
fn ask(case: &Case) -> (i32, Value, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cat = dir.path().join("catalog.json");
    write_catalog(&cat, &case.catalog);
    let mut args: Vec<String> = vec!["graph".into(), "rehearse".into()];
    for (i, s) in case.subs.iter().enumerate() {
        let f = dir.path().join(format!("sub{i}.yaml"));
        let mut y = format!(
            "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: {}\nspec:\n  name: {}\n  channel: \"{}\"\n  source: catsrc\n  sourceNamespace: catsrc-namespace\n",
            s.name, s.package, s.channel
        );
        if !s.starting_csv.is_empty() {
            y.push_str(&format!("  startingCSV: {}\n", s.starting_csv));
        }
        if !s.installed_csv.is_empty() {
            y.push_str(&format!("status:\n  installedCSV: {}\n", s.installed_csv));
        }
        std::fs::write(&f, y).expect("write sub");
        args.push("--subscription".into());
        args.push(f.to_string_lossy().into_owned());
    }
    for (k, (spec, bundle)) in case.installed.iter().enumerate() {
        args.push("--installed".into());
        if bundle.is_empty() {
            args.push(spec.to_string());
        } else {
            let f = dir.path().join(format!("installed{k}.json"));
            write_catalog(&f, bundle);
            args.push(format!("{spec}={}", f.display()));
        }
    }
    args.push(cat.to_string_lossy().into_owned());
    args.extend(["-o".into(), "json".into()]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = run(&argv);
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    (code, v, err)
}

/// What the first resolution adds or replaces, as upstream's `Resolve`
/// returns it: bundle names.
fn first_resolution(v: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for p in v["install"].as_array().into_iter().flatten() {
        out.insert(p["bundle"].as_str().unwrap_or("").to_string());
    }
    for u in v["upgrades"].as_array().into_iter().flatten() {
        if u["round"] == 0 {
            out.insert(u["to"].as_str().unwrap_or("").to_string());
            for d in u["newDependencies"].as_array().into_iter().flatten() {
                out.insert(d["bundle"].as_str().unwrap_or("").to_string());
            }
        }
    }
    out
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// Asserts upstream's expectation: the set, or an error containing `msg`.
fn expect_resolves(name: &str, case: &Case, want: &[&str]) {
    let (code, v, err) = ask(case);
    assert_eq!(code, 0, "{name}: {v:#}{err}");
    assert_eq!(first_resolution(&v), set(want), "{name}: {v:#}");
}

fn expect_fails(name: &str, case: &Case, msg: &str) -> Value {
    let (code, v, err) = ask(case);
    assert_eq!(code, 1, "{name}: {v:#}{err}");
    assert_eq!(v["installable"], false, "{name}");
    let end = v["end"].as_str().unwrap_or("");
    assert!(end.contains(msg), "{name}: {end}");
    v
}

const G: (&str, &str, &str) = ("g", "v", "k");

// ---- resolver_test.go ----

#[test]
fn solve_operators_with_installed_state() {
    // TestSolveOperators: test-package.v1 is installed and current; only
    // another-package is new.
    expect_resolves(
        "TestSolveOperators",
        &Case {
            catalog: vec![
                e("test-package.v1", "0.0.1", "", "test-package", "alpha"),
                e(
                    "another-package.v1",
                    "1.0.1",
                    "",
                    "another-package",
                    "alpha",
                ),
            ],
            subs: vec![
                Sub {
                    installed_csv: "test-package.v1",
                    ..sub("test-package-alpha", "test-package", "alpha")
                },
                sub("another-package-alpha", "another-package", "alpha"),
            ],
            installed: vec![("test-package.v1@test-package", vec![])],
        },
        &["another-package.v1"],
    );
    // TestSolveOperators_MultipleChannels.
    expect_resolves(
        "TestSolveOperators_MultipleChannels",
        &Case {
            catalog: vec![
                e("test-package.v1", "0.0.1", "", "test-package", "alpha"),
                e(
                    "another-package.v1",
                    "1.0.0",
                    "",
                    "another-package",
                    "alpha",
                ),
                e("another-package.v1", "1.0.0", "", "another-package", "beta"),
            ],
            subs: vec![
                sub("test-package-alpha", "test-package", "alpha"),
                sub("another-package-alpha", "another-package", "alpha"),
            ],
            installed: vec![("test-package.v1", vec![])],
        },
        &["another-package.v1"],
    );
}

/// An installed CSV the catalog no longer has: OLM upgrades it to what
/// replaces it (TestSolveOperators_FindLatestVersion and its variants).
#[test]
fn installed_csv_absent_from_the_catalog_is_upgraded() {
    let base = || {
        vec![
            e(
                "test-package.v1.0.1",
                "1.0.1",
                "test-package.v1",
                "test-package",
                "alpha",
            ),
            e(
                "another-package.v0.9.0",
                "0.9.0",
                "",
                "another-package",
                "alpha",
            ),
            e(
                "another-package.v1.0.0",
                "1.0.0",
                "another-package.v0.9.0",
                "another-package",
                "alpha",
            ),
        ]
    };
    let subs = || {
        vec![
            Sub {
                installed_csv: "test-package.v1",
                ..sub("test-package-alpha", "test-package", "alpha")
            },
            sub("another-package-alpha", "another-package", "alpha"),
        ]
    };
    let mut cat = base();
    cat.push(e(
        "another-package.v1.0.1",
        "1.0.1",
        "another-package.v1.0.0",
        "another-package",
        "alpha",
    ));
    expect_resolves(
        "TestSolveOperators_FindLatestVersion",
        &Case {
            catalog: cat,
            subs: subs(),
            installed: vec![("test-package.v1@test-package", vec![])],
        },
        &["test-package.v1.0.1", "another-package.v1.0.1"],
    );
    let mut cat = base();
    cat.extend([
        e(
            "another-package.v1.0.1",
            "1.0.1",
            "another-package.v1.0.0",
            "another-package",
            "alpha",
        )
        .requires_package("packageC", "1.0.1")
        .requires_package("packageD", "1.0.1"),
        e("packageC.v1.0.0", "1.0.0", "", "packageC", "alpha"),
        e(
            "packageC.v1.0.1",
            "1.0.1",
            "packageC.v1.0.0",
            "packageC",
            "alpha",
        ),
        e("packageD.v1.0.0", "1.0.0", "", "packageD", "alpha"),
        e(
            "packageD.v1.0.1",
            "1.0.1",
            "packageD.v1.0.0",
            "packageD",
            "alpha",
        ),
        e(
            "packageD.v1.0.2",
            "1.0.2",
            "packageD.v1.0.1",
            "packageD",
            "alpha",
        ),
    ]);
    expect_resolves(
        "TestSolveOperators_FindLatestVersionWithDependencies",
        &Case {
            catalog: cat,
            subs: subs(),
            installed: vec![("test-package.v1@test-package", vec![])],
        },
        &[
            "test-package.v1.0.1",
            "another-package.v1.0.1",
            "packageC.v1.0.1",
            "packageD.v1.0.1",
        ],
    );
    let mut cat = base();
    cat.extend([
        e(
            "another-package.v1.0.1",
            "1.0.1",
            "another-package.v1.0.0",
            "another-package",
            "alpha",
        )
        .requires_package("packageC", "1.0.1")
        .requires_package("packageD", "1.0.1"),
        e("packageC.v1.0.0", "1.0.0", "", "packageC", "alpha")
            .requires_package("packageE", "1.0.1"),
        e(
            "packageC.v1.0.1",
            "1.0.1",
            "packageC.v1.0.0",
            "packageC",
            "alpha",
        )
        .requires_package("packageE", "1.0.1"),
        e("packageD.v1.0.1", "1.0.1", "", "packageD", "alpha"),
        e(
            "packageE.v1.0.1",
            "1.0.1",
            "packageE.v1.0.0",
            "packageE",
            "alpha",
        ),
        e("packageE.v1.0.0", "1.0.0", "", "packageE", "alpha"),
    ]);
    expect_resolves(
        "TestSolveOperators_FindLatestVersionWithNestedDependencies",
        &Case {
            catalog: cat,
            subs: subs(),
            installed: vec![("test-package.v1@test-package", vec![])],
        },
        &[
            "test-package.v1.0.1",
            "another-package.v1.0.1",
            "packageC.v1.0.1",
            "packageD.v1.0.1",
            "packageE.v1.0.1",
        ],
    );
    // TestSolveOperators_WithPackageDependencies.
    expect_resolves(
        "TestSolveOperators_WithPackageDependencies",
        &Case {
            catalog: vec![
                e(
                    "test-package.v1.0.1",
                    "1.0.1",
                    "test-package.v1",
                    "test-package",
                    "alpha",
                ),
                e(
                    "another-package.v1",
                    "1.0.0",
                    "",
                    "another-package",
                    "alpha",
                )
                .requires_package("packageC", "0.1.0"),
                e("packageC.v1", "0.1.0", "", "packageC", "alpha"),
            ],
            subs: subs(),
            installed: vec![("test-package.v1@test-package", vec![])],
        },
        &["test-package.v1.0.1", "another-package.v1", "packageC.v1"],
    );
}

#[test]
fn dependencies_by_api_and_label() {
    let (g, v, k) = G;
    expect_resolves(
        "TestSolveOperators_WithSystemConstraints/No runtime constraints",
        &Case {
            catalog: vec![
                e("test-package.v1", "0.0.1", "", "test-package", "alpha").requires(g, v, k),
                e(
                    "another-package.v1",
                    "1.0.0",
                    "",
                    "another-package",
                    "alpha",
                )
                .provides(g, v, k),
                e("packageC.v1", "1.0.0", "", "packageC", "alpha").provides(g, v, k),
                e("packageD.v1", "1.0.0", "", "packageD", "alpha"),
            ],
            subs: vec![sub("test-package-alpha", "test-package", "alpha")],
            installed: vec![],
        },
        &["test-package.v1", "another-package.v1"],
    );
    expect_resolves(
        "TestSolveOperators_WithGVKDependencies",
        &Case {
            catalog: vec![
                e("test-package.v1", "0.0.1", "", "test-package", "alpha"),
                e(
                    "another-package.v1",
                    "1.0.0",
                    "",
                    "another-package",
                    "alpha",
                )
                .requires(g, v, k),
                e("packageC.v1", "0.1.0", "", "packageC", "alpha").provides(g, v, k),
            ],
            subs: vec![
                Sub {
                    installed_csv: "test-package.v1",
                    ..sub("test-package-alpha", "test-package", "alpha")
                },
                sub("another-package-alpha", "another-package", "alpha"),
            ],
            installed: vec![("test-package.v1@test-package", vec![])],
        },
        &["another-package.v1", "packageC.v1"],
    );
    expect_resolves(
        "TestSolveOperators_WithLabelDependencies",
        &Case {
            catalog: vec![
                e("test-package", "0.0.1", "", "test-package", "alpha")
                    .prop("olm.label.required", json!({"label": "lts"})),
                e("another-package.v1", "1.0.0", "", "another-package", "beta")
                    .prop("olm.label", json!({"label": "lts"})),
            ],
            subs: vec![sub("test-package-alpha", "test-package", "alpha")],
            installed: vec![],
        },
        &["test-package", "another-package.v1"],
    );
    expect_fails(
        "TestSolveOperators_WithUnsatisfiableLabelDependencies",
        &Case {
            catalog: vec![
                e("test-package", "0.0.1", "", "test-package", "alpha")
                    .prop("olm.label.required", json!({"label": "lts"})),
                e(
                    "another-package.v1",
                    "1.0.0",
                    "",
                    "another-package",
                    "alpha",
                ),
            ],
            subs: vec![sub("test-package-alpha", "test-package", "alpha")],
            installed: vec![],
        },
        "bundle test-package requires an operator with label: lts",
    );
    // TestSolveOperators_WithNestedGVKDependencies, the community catalog
    // alone (the second catalog holds copies of the same bundles).
    expect_resolves(
        "TestSolveOperators_WithNestedGVKDependencies",
        &Case {
            catalog: vec![
                e(
                    "test-package.v1.0.1",
                    "1.0.1",
                    "test-package.v1",
                    "test-package",
                    "alpha",
                ),
                e(
                    "another-package.v1.0.0",
                    "1.0.0",
                    "",
                    "another-package",
                    "alpha",
                )
                .requires(g, v, k),
                e(
                    "another-package.v1.0.1",
                    "1.0.1",
                    "another-package.v1.0.0",
                    "another-package",
                    "alpha",
                )
                .requires(g, v, k),
                e("packageC.v1.0.0", "1.0.0", "", "packageC", "alpha")
                    .requires("g2", "v2", "k2")
                    .provides(g, v, k),
                e(
                    "packageC.v1.0.1",
                    "1.0.1",
                    "packageC.v1.0.0",
                    "packageC",
                    "alpha",
                )
                .requires("g2", "v2", "k2")
                .provides(g, v, k),
                e("packageD.v1.0.1", "1.0.1", "", "packageD", "alpha").provides("g2", "v2", "k2"),
            ],
            subs: vec![
                Sub {
                    installed_csv: "test-package.v1",
                    ..sub("test-package-alpha", "test-package", "alpha")
                },
                sub("another-package-alpha", "another-package", "alpha"),
            ],
            installed: vec![("test-package.v1@test-package", vec![])],
        },
        &[
            "test-package.v1.0.1",
            "another-package.v1.0.1",
            "packageC.v1.0.1",
            "packageD.v1.0.1",
        ],
    );
}

#[test]
fn channel_order_and_default_channels() {
    let v = expect_fails(
        "TestDisjointChannelGraph",
        &Case {
            catalog: vec![
                e("test-package.side1.v1", "0.0.1", "", "test-package", "alpha"),
                e("test-package.side1.v2", "0.0.2", "test-package.side1.v1", "test-package", "alpha"),
                e("test-package.side2.v1", "1.0.0", "", "test-package", "alpha"),
                e("test-package.side2.v2", "2.0.0", "test-package.side2.v1", "test-package", "alpha"),
            ],
            subs: vec![sub("test-package-alpha", "test-package", "alpha")],
            installed: vec![],
        },
        "a unique replacement chain within a channel is required to determine the relative order between channel entries, but 2 replacement chains were found in channel \"alpha\" of package \"test-package\"",
    );
    assert!(v["install"].as_array().is_some_and(Vec::is_empty));
    let (g, v, k) = G;
    expect_resolves(
        "TestSolveOperators_PreferDefaultChannelInResolution",
        &Case {
            catalog: vec![
                e(
                    "test-package.v0.0.2",
                    "0.0.2",
                    "test-package.v1",
                    "test-package",
                    "alpha",
                )
                .provides(g, v, k)
                .default_channel("stable"),
                e(
                    "test-package.v0.0.1",
                    "0.0.1",
                    "test-package.v1",
                    "test-package",
                    "stable",
                )
                .provides(g, v, k),
            ],
            subs: vec![sub("test-package", "test-package", "")],
            installed: vec![],
        },
        &["test-package.v0.0.1"],
    );
    expect_resolves(
        "TestSolveOperators_PreferDefaultChannelInResolutionForTransitiveDependencies",
        &Case {
            catalog: vec![
                e(
                    "test-package.v0.0.1",
                    "0.0.1",
                    "test-package.v1",
                    "test-package",
                    "alpha",
                )
                .requires(g, v, k)
                .default_channel("stable"),
                e(
                    "another-package.v0.0.1",
                    "0.0.1",
                    "another-package.v1",
                    "another-package",
                    "stable",
                )
                .provides(g, v, k)
                .default_channel("stable"),
                e(
                    "another-package.v0.0.2",
                    "0.0.2",
                    "another-package.v0.0.1",
                    "another-package",
                    "alpha",
                )
                .provides(g, v, k),
            ],
            subs: vec![sub("test-package-alpha", "test-package", "alpha")],
            installed: vec![],
        },
        &["test-package.v0.0.1", "another-package.v0.0.1"],
    );
}

#[test]
fn olm_constraints_compound_unknown_and_cel() {
    let all = json!({"failureMessage": "all constraint", "all": {"constraints": [
        {"package": {"packageName": "foo", "versionRange": ">=1.0.0"}},
        {"gvk": {"group": "g1", "version": "v1", "kind": "k1"}},
        {"gvk": {"group": "g2", "version": "v2", "kind": "k2"}}]}});
    expect_resolves(
        "TestSolveOperators_OLMConstraint_CompoundAll",
        &Case {
            catalog: vec![
                e("bar.v1.0.0", "1.0.0", "", "bar", "stable").prop("olm.constraint", all),
                e("foo.v0.99.0", "0.99.0", "", "foo", "stable")
                    .provides("g1", "v1", "k1")
                    .provides("g2", "v2", "k2")
                    .provides("g3", "v3", "k3"),
                e("foo.v1.0.0", "1.0.0", "foo.v0.99.0", "foo", "stable")
                    .provides("g2", "v2", "k2")
                    .provides("g3", "v3", "k3"),
                e("foo.v1.0.1", "1.0.1", "foo.v1.0.0", "foo", "stable")
                    .provides("g1", "v1", "k1")
                    .provides("g2", "v2", "k2")
                    .provides("g3", "v3", "k3"),
            ],
            subs: vec![sub("bar", "bar", "stable")],
            installed: vec![],
        },
        &["bar.v1.0.0", "foo.v1.0.1"],
    );
    let any = json!({"failureMessage": "any constraint", "any": {"constraints": [
        {"gvk": {"group": "g1", "version": "v1", "kind": "k1"}},
        {"gvk": {"group": "g2", "version": "v2", "kind": "k2"}}]}});
    expect_resolves(
        "TestSolveOperators_OLMConstraint_CompoundAny",
        &Case {
            catalog: vec![
                e("bar.v1.0.0", "1.0.0", "", "bar", "stable").prop("olm.constraint", any),
                e("foo.v0.99.0", "0.99.0", "", "foo", "stable").provides("g0", "v0", "k0"),
                e("foo.v1.0.0", "1.0.0", "foo.v0.99.0", "foo", "stable")
                    .provides("g1", "v1", "k1")
                    .provides("g2", "v2", "k2"),
                e("foo.v1.0.1", "1.0.1", "foo.v1.0.0", "foo", "stable")
                    .provides("g1", "v1", "k1")
                    .provides("g2", "v2", "k2")
                    .provides("g3", "v3", "k3"),
            ],
            subs: vec![sub("bar", "bar", "stable")],
            installed: vec![],
        },
        &["bar.v1.0.0", "foo.v1.0.1"],
    );
    let not = json!({"failureMessage": "compound not constraint", "all": {"constraints": [
        {"gvk": {"group": "g0", "version": "v0", "kind": "k0"}},
        {"not": {"constraints": [
            {"gvk": {"group": "g1", "version": "v1", "kind": "k1"}},
            {"gvk": {"group": "g2", "version": "v2", "kind": "k2"}}]}}]}});
    expect_resolves(
        "TestSolveOperators_OLMConstraint_CompoundNot",
        &Case {
            catalog: vec![
                e("bar.v1.0.0", "1.0.0", "", "bar", "stable").prop("olm.constraint", not),
                e("foo.v0.99.0", "0.99.0", "", "foo", "stable").provides("g0", "v0", "k0"),
                e("foo.v1.0.0", "1.0.0", "foo.v0.99.0", "foo", "stable")
                    .provides("g0", "v0", "k0")
                    .provides("g1", "v1", "k1")
                    .provides("g2", "v2", "k2"),
                e("foo.v1.0.1", "1.0.1", "foo.v1.0.0", "foo", "stable")
                    .provides("g0", "v0", "k0")
                    .provides("g1", "v1", "k1")
                    .provides("g2", "v2", "k2")
                    .provides("g3", "v3", "k3"),
            ],
            subs: vec![sub("bar", "bar", "stable")],
            installed: vec![],
        },
        &["bar.v1.0.0", "foo.v0.99.0"],
    );
    expect_fails(
        "TestSolveOperators_OLMConstraint_Unknown",
        &Case {
            catalog: vec![e("bar.v1.0.0", "1.0.0", "", "bar", "stable").prop(
                "olm.constraint",
                json!({"failureMessage": "unknown constraint", "unknown": {"foo": "bar"}}),
            )],
            subs: vec![sub("bar", "bar", "stable")],
            installed: vec![],
        },
        "json: unknown field \"unknown\"",
    );
    // TestSolveOperators_GenericConstraint: CEL rules, evaluated.
    let cel = |msg: &str, rule: &str| json!({"failureMessage": msg, "cel": {"rule": rule}});
    expect_resolves(
        "Generic Constraint/Satisfiable GVK Dependency",
        &Case {
            catalog: vec![
                e("opA.v1.0.0", "1.0.0", "", "test-package", "stable").prop(
                    "olm.constraint",
                    cel("gvk-constraint", "properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': 'g', 'version': 'v', 'kind': 'k'})"),
                ),
                e("opB.v1.0.0", "1.0.0", "", "another-package", "stable").provides("g", "v", "k"),
            ],
            subs: vec![sub("test-package", "test-package", "stable")],
            installed: vec![],
        },
        &["opA.v1.0.0", "opB.v1.0.0"],
    );
    expect_fails(
        "Generic Constraint/NotSatisfiable GVK Dependency",
        &Case {
            catalog: vec![
                e("opA.v1.0.0", "1.0.0", "", "test-package", "stable").prop(
                    "olm.constraint",
                    cel("gvk2-constraint", "properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': 'g2', 'version': 'v', 'kind': 'k'})"),
                ),
                e("opB.v1.0.0", "1.0.0", "", "another-package", "stable").provides("g", "v", "k"),
            ],
            subs: vec![sub("test-package", "test-package", "stable")],
            installed: vec![],
        },
        "gvk2-constraint",
    );
    expect_resolves(
        "Generic Constraint/Satisfiable Package Dependency",
        &Case {
            catalog: vec![
                e("opA.v1.0.0", "1.0.0", "", "test-package", "stable").prop(
                    "olm.constraint",
                    cel("package-constraint", "properties.exists(p, p.type == 'olm.package' && p.value.packageName == 'another-package' && (semver_compare(p.value.version, '1.0.1') == 0))"),
                ),
                e("opB.v1.0.0", "1.0.0", "", "another-package", "stable"),
                e("opB.v1.0.1", "1.0.1", "opB.v1.0.0", "another-package", "stable"),
                e("opB.v1.0.2", "1.0.2", "opB.v1.0.1", "another-package", "stable"),
            ],
            subs: vec![sub("test-package", "test-package", "stable")],
            installed: vec![],
        },
        &["opA.v1.0.0", "opB.v1.0.1"],
    );
}

#[test]
fn subscriptionless_csvs_satisfy_and_conflict() {
    let (g, v, k) = G;
    // test-package.v1 is on the cluster with no Subscription and is not in
    // the catalog; its API comes from a bundle file.
    let installed = || {
        vec![(
            "test-package.v1@test-package",
            vec![e("test-package.v1", "1.0.0", "", "test-package", "alpha").provides(g, v, k)],
        )]
    };
    expect_resolves(
        "TestSolveOperators_SubscriptionlessOperatorsSatisfyDependencies",
        &Case {
            catalog: vec![
                e(
                    "another-package.v1.0.0",
                    "1.0.0",
                    "",
                    "another-package",
                    "alpha",
                )
                .requires(g, v, k),
                e(
                    "another-package.v1.0.1",
                    "1.0.1",
                    "another-package.v1.0.0",
                    "another-package",
                    "alpha",
                )
                .requires(g, v, k),
            ],
            subs: vec![sub("another-package-alpha", "another-package", "alpha")],
            installed: installed(),
        },
        &["another-package.v1.0.1"],
    );
    expect_fails(
        "TestSolveOperators_SubscriptionlessOperatorsCanConflict",
        &Case {
            catalog: vec![
                e(
                    "another-package.v1.0.0",
                    "1.0.0",
                    "",
                    "another-package",
                    "alpha",
                )
                .provides(g, v, k),
                e(
                    "another-package.v1.0.1",
                    "1.0.1",
                    "another-package.v1.0.0",
                    "another-package",
                    "alpha",
                )
                .provides(g, v, k),
            ],
            subs: vec![sub("another-package-alpha", "another-package", "alpha")],
            installed: installed(),
        },
        "one provider per API",
    );
    // TestSolveOperatorsWithClusterServiceVersionHavingDependency: a-1
    // (no Subscription) needs b at 1.0.0, which b-1 is; b-2 would break it.
    let (code, v, err) = ask(&Case {
        catalog: vec![e("b-2", "0.0.0", "b-1", "b", "default")],
        subs: vec![Sub {
            installed_csv: "b-1",
            ..sub("b-default", "b", "default")
        }],
        installed: vec![
            (
                "a-1@a",
                vec![e("a-1", "0.0.0", "", "a", "default").requires_package("b", "1.0.0")],
            ),
            ("b-1@b", vec![e("b-1", "1.0.0", "", "b", "default")]),
        ],
    });
    assert_eq!(code, 0, "{v:#}{err}");
    assert!(first_resolution(&v).is_empty(), "{v:#}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("b stays at b-1"), "{notes}");
}

#[test]
fn deprecated_bundles_are_never_chosen() {
    let v = expect_fails(
        "TestSolveOperators_WithoutDeprecated",
        &Case {
            catalog: vec![e("test-package.v1", "0.0.1", "", "test-package", "alpha").deprecated()],
            subs: vec![sub("test-package-alpha", "test-package", "alpha")],
            installed: vec![],
        },
        "constraints not satisfiable",
    );
    assert!(v["end"].to_string().contains("deprecated"), "{v:#}");
    expect_resolves(
        "TestSolveOperatorsWithDeprecatedInnerChannelEntry",
        &Case {
            catalog: vec![
                e("a-1", "1.0.0", "", "a", "c"),
                e("a-2", "2.0.0", "a-1", "a", "c").deprecated(),
                e("a-3", "3.0.0", "a-2", "a", "c"),
            ],
            subs: vec![sub("a-c", "a", "c")],
            installed: vec![],
        },
        &["a-3"],
    );
    // Nor upgraded into: from a-1, a-2 (deprecated) is the only hop.
    let (code, v, err) = ask(&Case {
        catalog: vec![
            e("a-1", "1.0.0", "", "a", "c"),
            e("a-2", "2.0.0", "a-1", "a", "c").deprecated(),
            e("a-3", "3.0.0", "a-2", "a", "c"),
        ],
        subs: vec![sub("a-c", "a", "c")],
        installed: vec![("a-1@a", vec![])],
    });
    assert_eq!(code, 0, "{v:#}{err}");
    assert!(v["upgrades"].as_array().is_some_and(Vec::is_empty), "{v:#}");
    assert!(v["notes"].to_string().contains("a stays at a-1"), "{v:#}");
}

#[test]
fn skips_and_starting_csv() {
    let (g, v, k) = G;
    let gvk = json!({"group": g, "version": v, "kind": k});
    expect_resolves(
        "TestSolveOperators_WithSkipsAndStartingCSV",
        &Case {
            catalog: vec![
                e(
                    "another-package.v1",
                    "1.0.0",
                    "",
                    "another-package",
                    "alpha",
                )
                .prop("olm.gvk.required", gvk.clone()),
                e(
                    "another-package.v2",
                    "2.0.0",
                    "",
                    "another-package",
                    "alpha",
                )
                .prop("olm.gvk.required", gvk.clone())
                .skips(&["another-package.v1"]),
                e("test-package.v1", "1.0.0", "", "test-package", "alpha").provides(g, v, k),
                e(
                    "test-package.v2",
                    "2.0.0",
                    "test-package.v1",
                    "test-package",
                    "alpha",
                )
                .provides(g, v, k),
                e(
                    "test-package.v3",
                    "3.0.0",
                    "test-package.v2",
                    "test-package",
                    "alpha",
                )
                .provides(g, v, k),
                e(
                    "test-package.v4",
                    "4.0.0",
                    "test-package.v3",
                    "test-package",
                    "alpha",
                )
                .provides(g, v, k)
                .skips(&["test-package.v3"]),
                e(
                    "test-package.v5",
                    "5.0.0",
                    "test-package.v4",
                    "test-package",
                    "alpha",
                )
                .provides(g, v, k)
                .skips(&["test-package.v2", "test-package.v3", "test-package.v4"]),
                e(
                    "test-package.v6",
                    "6.0.0",
                    "test-package.v5",
                    "test-package",
                    "alpha",
                )
                .provides(g, v, k),
            ],
            subs: vec![Sub {
                starting_csv: "another-package.v1",
                ..sub("another-package-alpha", "another-package", "alpha")
            }],
            installed: vec![],
        },
        &["another-package.v1", "test-package.v6"],
    );
    expect_resolves(
        "TestSolveOperators_WithSkips",
        &Case {
            catalog: vec![
                e(
                    "another-package.v1",
                    "1.0.0",
                    "",
                    "another-package",
                    "alpha",
                ),
                e(
                    "another-package.v2",
                    "2.0.0",
                    "",
                    "another-package",
                    "alpha",
                )
                .skips(&["another-package.v1"]),
            ],
            subs: vec![sub("another-package-alpha", "another-package", "alpha")],
            installed: vec![],
        },
        &["another-package.v2"],
    );
    expect_fails(
        "TestSolveOperatorsWithSkipsPreventingSelection",
        &Case {
            catalog: vec![
                e("a-1", "1.0.0", "", "a", "channel").requires(g, v, k),
                e("b-3", "3.0.0", "b-2", "b", "channel").skips(&["b-1"]),
                e("b-2", "2.0.0", "b-1", "b", "channel"),
                e("b-1", "1.0.0", "", "b", "channel").provides(g, v, k),
            ],
            subs: vec![sub("a-channel", "a", "channel")],
            installed: vec![],
        },
        "bundle a-1 requires an operator providing an API with group: g, version: v, kind: k",
    );
}

// ---- step_resolver_test.go (what the resolution decides; the steps,
// bundle lookups and RBAC it then writes are not rehearsed) ----

#[test]
fn subscriptions_without_candidates_say_so_in_olms_words() {
    let a = || vec![sub("a-alpha", "a", "alpha")];
    expect_fails(
        "SubscriptionWithNoCandidates/Error",
        &Case {
            catalog: vec![],
            subs: a(),
            installed: vec![],
        },
        "no operators found from catalog catsrc in namespace catsrc-namespace referenced by subscription a-alpha",
    );
    expect_fails(
        "SubscriptionWithNoCandidatesInPackage/Error",
        &Case {
            catalog: vec![e("bundle", "0.0.0", "", "package", "channel")],
            subs: a(),
            installed: vec![],
        },
        "no operators found in package a in the catalog referenced by subscription a-alpha",
    );
    expect_fails(
        "SubscriptionWithNoCandidatesInChannel/Error",
        &Case {
            catalog: vec![e("bundle", "0.0.0", "", "a", "channel")],
            subs: a(),
            installed: vec![],
        },
        "no operators found in channel alpha of package a in the catalog referenced by subscription a-alpha",
    );
    expect_fails(
        "SubscriptionWithNoCandidatesWithStartingCSVName/Error",
        &Case {
            catalog: vec![e("bundle", "0.0.0", "", "a", "alpha")],
            subs: vec![Sub {
                starting_csv: "notfound",
                ..sub("a-alpha", "a", "alpha")
            }],
            installed: vec![],
        },
        "no operators found with name notfound in channel alpha of package a in the catalog referenced by subscription a-alpha",
    );
    expect_fails(
        "SingleNewSubscription/DependencyMissing",
        &Case {
            catalog: vec![e("a.v1", "0.0.0", "", "a", "alpha").requires("g", "v", "k")],
            subs: a(),
            installed: vec![],
        },
        "bundle a.v1 requires an operator providing an API with group: g, version: v, kind: k",
    );
    expect_resolves(
        "SubscriptionOmitsChannel",
        &Case {
            catalog: vec![e("bundle", "0.0.0", "", "package", "channel")],
            subs: vec![sub("package", "package", "")],
            installed: vec![],
        },
        &["bundle"],
    );
    expect_resolves(
        "SingleNewSubscription/NoDeps",
        &Case {
            catalog: vec![e("a.v1", "0.0.0", "", "a", "alpha")],
            subs: a(),
            installed: vec![],
        },
        &["a.v1"],
    );
    expect_resolves(
        "SingleNewSubscription/ResolveOne",
        &Case {
            catalog: vec![
                e("b.v1", "0.0.0", "", "b", "beta").provides("g", "v", "k"),
                e("a.v1", "0.0.0", "", "a", "alpha").requires("g", "v", "k"),
            ],
            subs: a(),
            installed: vec![],
        },
        &["a.v1", "b.v1"],
    );
}

#[test]
fn several_subscriptions_resolve_together() {
    let (g, v, k) = G;
    let existing = |csv: &'static str, pkg: &'static str, ch: &'static str| Sub {
        installed_csv: csv,
        ..sub(pkg, pkg, ch)
    };
    expect_resolves(
        "InstalledSub/NoUpdates",
        &Case {
            catalog: vec![e("a.v1", "0.0.0", "", "a", "alpha").provides(g, v, k)],
            subs: vec![existing("a.v1", "a", "alpha")],
            installed: vec![("a.v1@a", vec![])],
        },
        &[],
    );
    expect_fails(
        "SecondSubscriptionConflictsWithExistingResolvedSubscription",
        &Case {
            catalog: vec![
                e("a.v1", "0.0.0", "", "a", "alpha").provides(g, v, k),
                e("b.v1", "0.0.0", "", "b", "alpha").provides(g, v, k),
            ],
            // b's CSV is not on the cluster: a new Subscription to OLM.
            subs: vec![
                existing("a.v1", "a", "alpha"),
                existing("b.v1", "b", "alpha"),
            ],
            installed: vec![("a.v1@a", vec![])],
        },
        "one provider per API",
    );
    expect_fails(
        "ConflictingSubscriptionsToSamePackage",
        &Case {
            catalog: vec![
                e("a.v1", "0.0.0", "", "a", "alpha").provides(g, v, k),
                e("a.v2", "0.0.0", "", "a", "beta").provides(g, v, k),
            ],
            subs: vec![sub("a-alpha", "a", "alpha"), sub("a-beta", "a", "beta")],
            installed: vec![],
        },
        "constraints not satisfiable",
    );
    expect_resolves(
        "SatisfiableSubscriptionsToSamePackage",
        &Case {
            catalog: vec![e("a.v1", "0.0.0", "", "a", "alpha").provides(g, v, k)],
            subs: vec![sub("a-alpha", "a", "alpha"), sub("a-alpha-2", "a", "alpha")],
            installed: vec![],
        },
        &["a.v1"],
    );
    expect_resolves(
        "InstalledSub/UpdateAvailable",
        &Case {
            catalog: vec![
                e("a.v2", "0.0.0", "a.v1", "a", "alpha").provides(g, v, k),
                e("a.v1", "0.0.0", "", "a", "alpha").provides(g, v, k),
            ],
            subs: vec![existing("a.v1", "a", "alpha")],
            installed: vec![("a.v1@a", vec![])],
        },
        &["a.v2"],
    );
    expect_resolves(
        "InstalledSub/UpdateAvailable/FromDifferentPackage",
        &Case {
            catalog: vec![
                e("a.v1", "0.0.0", "", "a", "alpha").provides(g, v, k),
                e("b.v2", "0.0.0", "a.v1", "b", "alpha").provides(g, v, k),
            ],
            subs: vec![existing("a.v1", "b", "alpha")],
            installed: vec![("a.v1@a", vec![])],
        },
        &["b.v2"],
    );
    expect_resolves(
        "InstalledSub/NoRunningOperator",
        &Case {
            catalog: vec![e("a.v1", "0.0.0", "", "a", "alpha").provides(g, v, k)],
            subs: vec![existing("a.v1", "a", "alpha")],
            installed: vec![],
        },
        &["a.v1"],
    );
    // The CSV on the cluster provides the API; the catalog's a.v1 does not.
    expect_resolves(
        "InstalledSub/UpdateFound/UpdateRequires/ResolveOne",
        &Case {
            catalog: vec![
                e("a.v1", "0.0.0", "", "a", "alpha"),
                e("a.v2", "0.0.0", "a.v1", "a", "alpha").requires(g, v, k),
                e("b.v1", "0.0.0", "", "b", "beta").provides(g, v, k),
            ],
            subs: vec![existing("a.v1", "a", "alpha")],
            installed: vec![(
                "a.v1@a",
                vec![e("a.v1", "0.0.0", "", "a", "alpha").provides(g, v, k)],
            )],
        },
        &["a.v2", "b.v1"],
    );
    expect_resolves(
        "InstalledSub/SingleNewSubscription/UpdateAvailable/ResolveOne",
        &Case {
            catalog: vec![
                e("a.v1", "0.0.0", "", "a", "alpha"),
                e("a.v2", "0.0.0", "a.v1", "a", "alpha"),
                e("b.v1", "0.0.0", "", "b", "beta"),
            ],
            subs: vec![existing("a.v1", "a", "alpha"), sub("b", "b", "beta")],
            installed: vec![(
                "a.v1@a",
                vec![e("a.v1", "0.0.0", "", "a", "alpha").provides(g, v, k)],
            )],
        },
        &["a.v2", "b.v1"],
    );
    expect_resolves(
        "InstalledSub/SingleNewSubscription/NoRunningOperator/ResolveOne",
        &Case {
            catalog: vec![
                e("a.v1", "0.0.0", "", "a", "alpha").provides(g, v, k),
                e("b.v1", "0.0.0", "", "b", "beta"),
            ],
            subs: vec![existing("a.v1", "a", "alpha"), sub("b", "b", "beta")],
            installed: vec![],
        },
        &["a.v1", "b.v1"],
    );
    expect_resolves(
        "PicksOlderProvider",
        &Case {
            catalog: vec![
                e("a.v1", "0.0.0", "", "a", "alpha").provides(g, v, k),
                e("a.v2", "0.0.0", "a.v1", "a", "alpha"),
                e("b.v1", "0.0.0", "", "b", "alpha").requires(g, v, k),
            ],
            subs: vec![sub("b", "b", "alpha")],
            installed: vec![],
        },
        &["a.v1", "b.v1"],
    );
    expect_resolves(
        "InstalledSubs/ExistingOperators/OldCSVsReplaced",
        &Case {
            catalog: vec![
                e("a.v1", "0.0.0", "", "a", "alpha").requires(g, v, k),
                e("a.v2", "0.0.0", "a.v1", "a", "alpha").requires(g, v, k),
                e("b.v1", "0.0.0", "", "b", "beta").provides(g, v, k),
                e("b.v2", "0.0.0", "b.v1", "b", "beta").provides(g, v, k),
            ],
            subs: vec![
                existing("a.v1", "a", "alpha"),
                existing("b.v1", "b", "beta"),
            ],
            installed: vec![("a.v1@a", vec![]), ("b.v1@b", vec![])],
        },
        &["a.v2", "b.v2"],
    );
}

/// Packages that must move together: each one's next version requires the
/// other's. OLM upgrades both in one resolution (NoMoreVersionDeadlock,
/// OwnedAPITransfer); the CSVs on the cluster are not in the catalog.
#[test]
fn packages_that_must_move_together_do() {
    let existing = |csv: &'static str, pkg: &'static str| Sub {
        installed_csv: csv,
        ..sub(pkg, pkg, "alpha")
    };
    expect_resolves(
        "NoMoreVersionDeadlock",
        &Case {
            catalog: vec![
                e("a.v2", "0.0.0", "a.v1", "a", "alpha")
                    .provides("g3", "v", "k")
                    .requires("g4", "v", "k"),
                e("b.v2", "0.0.0", "b.v1", "b", "alpha")
                    .provides("g4", "v", "k")
                    .requires("g3", "v", "k"),
            ],
            subs: vec![existing("a.v1", "a"), existing("b.v1", "b")],
            installed: vec![
                (
                    "a.v1@a",
                    vec![e("a.v1", "0.0.0", "", "a", "alpha")
                        .provides("g1", "v", "k")
                        .requires("g2", "v", "k")],
                ),
                (
                    "b.v1@b",
                    vec![e("b.v1", "0.0.0", "", "b", "alpha")
                        .provides("g2", "v", "k")
                        .requires("g1", "v", "k")],
                ),
            ],
        },
        &["a.v2", "b.v2"],
    );
    expect_resolves(
        "OwnedAPITransfer",
        &Case {
            catalog: vec![
                e("a.v2", "0.0.0", "a.v1", "a", "alpha"),
                e("b.v2", "0.0.0", "b.v1", "b", "alpha").provides("g", "v", "k"),
            ],
            subs: vec![existing("a.v1", "a"), existing("b.v1", "b")],
            installed: vec![
                (
                    "a.v1@a",
                    vec![e("a.v1", "0.0.0", "", "a", "alpha").provides("g", "v", "k")],
                ),
                (
                    "b.v1@b",
                    vec![e("b.v1", "0.0.0", "", "b", "alpha").requires("g", "v", "k")],
                ),
            ],
        },
        &["a.v2", "b.v2"],
    );
    // By package: app 2 needs db 2 and db 2 needs app 2.
    let (code, v, err) = ask(&Case {
        catalog: vec![
            e("app.v1", "1.0.0", "", "app", "alpha").requires_package("db", "<2.0.0"),
            e("app.v2", "2.0.0", "app.v1", "app", "alpha").requires_package("db", ">=2.0.0"),
            e("db.v1", "1.0.0", "", "db", "alpha").requires_package("app", "<2.0.0"),
            e("db.v2", "2.0.0", "db.v1", "db", "alpha").requires_package("app", ">=2.0.0"),
        ],
        subs: vec![existing("app.v1", "app"), existing("db.v1", "db")],
        installed: vec![("app.v1", vec![]), ("db.v1", vec![])],
    });
    assert_eq!(code, 0, "{v:#}{err}");
    assert_eq!(first_resolution(&v), set(&["app.v2", "db.v2"]), "{v:#}");
}

#[test]
fn skip_ranges_and_skips_from_an_installed_csv() {
    let existing = || {
        vec![Sub {
            installed_csv: "a.v1",
            ..sub("a", "a", "alpha")
        }]
    };
    // The CSV on the cluster is at 0.0.0 (upstream's existingOperator).
    let on_cluster = || vec![("a.v1@a", vec![e("a.v1", "0.0.0", "", "a", "alpha")])];
    expect_resolves(
        "InstalledSub/UpdateInHead/SkipRange",
        &Case {
            catalog: vec![e("a.v3", "1.0.0", "a.v2", "a", "alpha").skip_range("< 1.0.0")],
            subs: existing(),
            installed: on_cluster(),
        },
        &["a.v3"],
    );
    expect_resolves(
        "InstalledSub/UpdatesAvailable/SkipRangeNotInHead",
        &Case {
            catalog: vec![
                e("a.v2", "1.0.0", "", "a", "alpha").skip_range("< 1.0.0"),
                e("a.v3", "1.0.0", "a.v2", "a", "alpha").skip_range("< 1.0.0"),
                e("a.v4", "1.0.0", "a.v3", "a", "alpha").skip_range("< 1.0.0 !0.0.0"),
            ],
            subs: existing(),
            installed: on_cluster(),
        },
        &["a.v3"],
    );
    expect_resolves(
        "InstalledSub/UpdatesAvailable/SpecifiedSkips",
        &Case {
            catalog: vec![
                e("a.v2", "1.0.0", "", "a", "alpha").skips(&["a.v1"]),
                e("a.v3", "1.0.0", "a.v2", "a", "alpha").skips(&["a.v1"]),
            ],
            subs: existing(),
            installed: on_cluster(),
        },
        &["a.v3"],
    );
    expect_resolves(
        "NewSub/StartingCSV",
        &Case {
            catalog: vec![
                e("a.v1", "0.0.0", "", "a", "alpha"),
                e("a.v2", "0.0.0", "a.v1", "a", "alpha"),
                e("a.v3", "1.0.0", "a.v2", "a", "alpha").skip_range("< 1.0.0"),
            ],
            subs: vec![Sub {
                starting_csv: "a.v2",
                ..sub("a", "a", "alpha")
            }],
            installed: vec![],
        },
        &["a.v2"],
    );
}

/// What OLM refuses for the whole resolution, though another entry of the
/// channel would do.
#[test]
fn unreadable_dependencies_fail_the_whole_resolution() {
    // A bad versionRange on an older entry: OLM does not install the head.
    expect_fails(
        "bad versionRange on an older entry",
        &Case {
            catalog: vec![
                e("a.v1", "1.0.0", "", "a", "alpha").requires_package("b", "not a range"),
                e("a.v2", "2.0.0", "a.v1", "a", "alpha"),
            ],
            subs: vec![sub("a", "a", "alpha")],
            installed: vec![],
        },
        "OLM v0 fails the resolution: bundle a.v1",
    );
    // A required provider whose channel has two heads: the head needs it,
    // the older entry does not; OLM fails rather than fall back.
    expect_fails(
        "provider channel with two heads",
        &Case {
            catalog: vec![
                e("a.v1", "1.0.0", "", "a", "alpha"),
                e("a.v2", "2.0.0", "a.v1", "a", "alpha").requires("g", "v", "k"),
                e("p.v1", "1.0.0", "", "p", "stable").provides("g", "v", "k"),
                e("p.v2", "2.0.0", "", "p", "stable").provides("g", "v", "k"),
            ],
            subs: vec![sub("a", "a", "alpha")],
            installed: vec![],
        },
        "2 replacement chains were found in channel \"stable\" of package \"p\"",
    );
    // A CEL rule that does not compile.
    expect_fails(
        "cel rule that does not compile",
        &Case {
            catalog: vec![e("a.v1", "1.0.0", "", "a", "alpha").prop(
                "olm.constraint",
                json!({"failureMessage": "m", "cel": {"rule": "properties.exists(p, nope(p))"}}),
            )],
            subs: vec![sub("a", "a", "alpha")],
            installed: vec![],
        },
        "undeclared reference to 'nope'",
    );
}

#[test]
fn installed_flag_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cat = dir.path().join("c.json");
    write_catalog(&cat, &[e("a.v2", "2.0.0", "a.v1", "a", "alpha")]);
    let s = dir.path().join("s.yaml");
    std::fs::write(&s, "kind: Subscription\nspec:\n  name: a\n").expect("write");
    for bad in ["a@", "=x", "a.v1@a="] {
        let (code, _, err) = run(&[
            "graph",
            "rehearse",
            "--subscription",
            &s.to_string_lossy(),
            "--installed",
            bad,
            &cat.to_string_lossy(),
        ]);
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(
            err.contains("expected CSV[@PACKAGE][=BUNDLE]"),
            "{bad}: {err}"
        );
    }
    // A CSV neither the catalog nor a Subscription places in a package.
    let (code, out, err) = run(&[
        "graph",
        "rehearse",
        "--subscription",
        &s.to_string_lossy(),
        "--installed",
        "mystery.v1",
        &cat.to_string_lossy(),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("give --installed mystery.v1@PACKAGE"), "{out}");
    // The text form names the CSV on the cluster and the upgrade.
    let (code, out, err) = run(&[
        "graph",
        "rehearse",
        "--subscription",
        &s.to_string_lossy(),
        "--installed",
        "a.v1@a",
        &cat.to_string_lossy(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("0. upgrade a: a.v1 -> a.v2 (replaces, channel alpha)"),
        "{out}"
    );
    assert!(
        out.contains("note: on the cluster: a.v1 (package a 1.0.0), not in the catalog"),
        "{out}"
    );
}

/// TestSolveOperators_TransferApiOwnership: three resolutions, the cluster
/// as the one before left it.
#[test]
fn api_ownership_moves_between_packages() {
    let (g, v, k) = G;
    let op_a = || e("opA.v1.0.0", "1.0.0", "", "test-package", "stable").provides(g, v, k);
    let op_b = || {
        e("opB.v1.0.0", "1.0.0", "", "another-package", "stable")
            .requires(g, v, k)
            .provides("g2", v, k)
    };
    let op_a2 = || {
        e(
            "opA.v1.0.1",
            "1.0.1",
            "opA.v1.0.0",
            "test-package",
            "stable",
        )
        .requires(g, v, k)
    };
    let existing = || {
        vec![
            Sub {
                installed_csv: "opA.v1.0.0",
                ..sub("test-package", "test-package", "stable")
            },
            Sub {
                installed_csv: "opB.v1.0.0",
                ..sub("another-package", "another-package", "stable")
            },
        ]
    };
    let on_cluster = || vec![("opA.v1.0.0", vec![]), ("opB.v1.0.0", vec![])];
    expect_resolves(
        "TransferApiOwnership/phase 1",
        &Case {
            catalog: vec![op_a(), op_b()],
            subs: vec![sub("another-package", "another-package", "stable")],
            installed: vec![],
        },
        &["opA.v1.0.0", "opB.v1.0.0"],
    );
    expect_resolves(
        "TransferApiOwnership/phase 2",
        &Case {
            catalog: vec![op_a(), op_a2(), op_b()],
            subs: existing(),
            installed: on_cluster(),
        },
        &[],
    );
    expect_resolves(
        "TransferApiOwnership/phase 3",
        &Case {
            catalog: vec![
                op_a(),
                op_a2(),
                op_b(),
                e(
                    "opB.v1.0.1",
                    "1.0.1",
                    "opB.v1.0.0",
                    "another-package",
                    "stable",
                )
                .provides(g, v, k)
                .provides("g2", v, k),
            ],
            subs: existing(),
            installed: on_cluster(),
        },
        &["opA.v1.0.1", "opB.v1.0.1"],
    );
}

/// `--installed CSV=BUNDLE` reads a CSV the catalog lacks from a bundle
/// directory: here its owned CRD provides the API a new Subscription needs.
#[test]
fn installed_csv_read_from_a_bundle_directory() {
    let bundle = crate::common::fixtures().join("crd-safety/pkg/0.1.0");
    let case = |installed: String| {
        let dir = tempfile::tempdir().expect("tempdir");
        let cat = dir.path().join("c.json");
        write_catalog(
            &cat,
            &[e("needy.v1", "1.0.0", "", "needy", "stable").requires(
                "example.com",
                "v1",
                "Widget",
            )],
        );
        let s = dir.path().join("s.yaml");
        std::fs::write(&s, "kind: Subscription\nspec:\n  name: needy\n").expect("write");
        let (code, out, err) = run(&[
            "graph",
            "rehearse",
            "--subscription",
            &s.to_string_lossy(),
            "--installed",
            &installed,
            &cat.to_string_lossy(),
        ]);
        (code, format!("{out}{err}"))
    };
    let (code, out) = case(format!("widget.v0.1.0={}", bundle.display()));
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("install needy.v1 (needy 1.0.0, channel stable)"),
        "{out}"
    );
    assert!(
        out.contains("on the cluster: widget.v0.1.0 (package widget 0.1.0), read from"),
        "{out}"
    );
    // Without the bundle nothing is known of its APIs.
    let (code, out) = case("widget.v0.1.0@widget".into());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("no bundle in the catalog provides example.com/v1 Widget, nor does any CSV on the cluster"),
        "{out}"
    );
}

// ---- test/e2e/subscription_e2e_test.go (the resolutions it waits for) ----

#[test]
fn e2e_subscription_resolutions() {
    let (g, v, k) = ("cluster.com", "v1alpha1", "Ins");
    // "an entry in the middle of a channel does not provide a required
    // GVK": the dependency's Subscription starts at its head.
    let (code, out, err) = ask(&Case {
        catalog: vec![
            e(
                "csv-dependency-1",
                "1.0.0",
                "",
                "dependency",
                "channel-dependency",
            )
            .provides(g, v, k),
            e(
                "csv-dependency-2",
                "2.0.0",
                "csv-dependency-1",
                "dependency",
                "channel-dependency",
            ),
            e(
                "csv-dependency-3",
                "3.0.0",
                "csv-dependency-2",
                "dependency",
                "channel-dependency",
            )
            .provides(g, v, k),
            e("csv-root", "1.0.0", "", "root", "channel-root").requires(g, v, k),
        ],
        subs: vec![sub("test-subscription", "root", "channel-root")],
        installed: vec![],
    });
    assert_eq!(code, 0, "{out:#}{err}");
    assert_eq!(out["install"][1]["bundle"], "csv-dependency-3", "{out:#}");
    assert_eq!(
        out["install"][1]["channel"], "channel-dependency",
        "{out:#}"
    );
    // "there exists a Subscription to an operator having dependency
    // candidates in both default and nondefault channels": the default.
    let (code, out, err) = ask(&Case {
        catalog: vec![
            e("csv-dependency", "1.0.0", "", "dependency", "nondefault")
                .provides(g, v, k)
                .default_channel("default"),
            e("csv-dependency", "1.0.0", "", "dependency", "default").provides(g, v, k),
            e("csv-root", "1.0.0", "", "root", "unimportant").requires(g, v, k),
        ],
        subs: vec![sub("test-subscription", "root", "unimportant")],
        installed: vec![],
    });
    assert_eq!(code, 0, "{out:#}{err}");
    assert_eq!(out["install"][1]["bundle"], "csv-dependency", "{out:#}");
    assert_eq!(out["install"][1]["channel"], "default", "{out:#}");
    // "skip range": the catalog now has only the updated CSV, whose
    // skipRange admits the installed one; OLM replaces it.
    let (code, out, err) = ask(&Case {
        catalog: vec![
            e("nginx-updated", "0.1.0-1556661832", "", "nginx", "stable")
                .skip_range(">=0.1.0-1556661347 <0.1.0-1556661832")
                .provides(g, v, k),
        ],
        subs: vec![Sub {
            installed_csv: "nginx-stable",
            ..sub("sub-nginx", "nginx", "stable")
        }],
        installed: vec![(
            "nginx-stable@nginx",
            vec![e("nginx-stable", "0.1.0-1556661347", "", "nginx", "stable").provides(g, v, k)],
        )],
    });
    assert_eq!(code, 0, "{out:#}{err}");
    assert_eq!(
        (
            &out["upgrades"][0]["from"],
            &out["upgrades"][0]["to"],
            &out["upgrades"][0]["kind"]
        ),
        (
            &json!("nginx-stable"),
            &json!("nginx-updated"),
            &json!("skipRange")
        ),
        "{out:#}"
    );
}
