//! cosign-compatible signing and verification.
