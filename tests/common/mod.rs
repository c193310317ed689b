//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The community-operators-prod corpus. CI has it beside the clone at
/// `../shared`; `OLM_CATALOG_CORPUS` overrides. Missing corpus fails the test:
/// nothing is skipped.
pub fn corpus() -> PathBuf {
    if let Ok(p) = std::env::var("OLM_CATALOG_CORPUS") {
        return PathBuf::from(p);
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for base in manifest.ancestors().skip(1) {
        let p = base.join("shared/corpus/community-operators-prod");
        if p.is_dir() {
            return p;
        }
    }
    panic!(
        "corpus not found: expected ../shared/corpus/community-operators-prod beside the repository \
         (or set OLM_CATALOG_CORPUS)"
    );
}

/// The repository's fixtures directory.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The built `olm-catalog` binary.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_olm-catalog"))
}
