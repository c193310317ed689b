//! The integration tests, as one test binary: each file of `tests/` is a
//! module here, so the suite links the library once instead of once per
//! file. A new `tests/NAME.rs` must be listed below; `every_test_file_is_a_module`
//! fails when one is not (Cargo does not discover test files on its own here:
//! `autotests = false`).
//!
//! Run one file's tests with `cargo test --test suite NAME::`.

#[path = "common/browser.rs"]
#[allow(dead_code)]
mod browser;
mod common;
#[path = "common/registry.rs"]
#[allow(dead_code)]
mod registry;
mod sign_common;

mod build_sign;
mod catalog_diff;
mod catalog_file_limits;
mod catalog_filter;
mod catalog_images;
mod catalog_mirror;
mod cli_conventions;
mod fbc_validate;
mod graph_checks;
mod graph_corpus;
mod graph_pictures;
mod graph_rehearse;
mod graph_rules;
mod index_corpus;
mod index_images;
mod index_opm_rules;
mod index_ops;
mod index_overwrite;
mod index_render;
mod index_safety;
mod index_tables;
mod library_errors;
mod oci_batch;
mod oci_faults;
mod oci_registries;
mod oci_registry;
mod olm_v0_resolver_cases;
mod olm_v1_crdify_cases;
mod olm_v1_resolve_cases;
mod opm_action_cases;
mod opm_convert_template;
mod opm_model_cases;
mod opm_personality;
mod opm_property_cases;
mod opm_template_cases;
mod ops;
mod render_properties;
mod serve_http;
mod serve_image;
mod serve_manifests;
mod serve_python;
mod sign_attest;
mod sign_cli;
mod sign_gate;
mod sign_interop;
mod sign_keyless;
mod sigstore_verify;
mod validate_cli;
mod validate_corpus;
mod validate_multiarch;
mod validate_optional;
mod validate_optional_corpus;
mod validate_rules;
mod yaml_differential;

/// Every `tests/*.rs` file is compiled into this binary.
#[test]
fn every_test_file_is_a_module() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let this = include_str!("main.rs");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("tests/") {
        let path = entry.expect("entry").path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|e| e == "rs")
            && stem != "main"
            && !this.contains(&format!("\nmod {stem};\n"))
        {
            missing.push(stem.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "tests/{{...}}.rs not listed as modules in tests/main.rs (so never run): {missing:?}"
    );
}
