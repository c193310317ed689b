//! The cosign signature image (`sha256-H.sig`): its layers, manifest and
//! config, independent of where it is stored.

use std::collections::BTreeMap;

use super::payload::{SimpleSigning, COSIGN_SIGNATURE_TYPE};
use super::{
    SignatureMaterial, SignerIdentity, Verifier, SIGNATURE_ANNOTATION, SIMPLE_SIGNING_MEDIA_TYPE,
};
use crate::oci::media::{self, sha256_digest, Descriptor, ImageManifest};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

/// One signature: a payload blob and its descriptor annotations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureLayer {
    /// The layer's media type (normally [`SIMPLE_SIGNING_MEDIA_TYPE`]).
    pub media_type: String,
    /// The digest the manifest claims for the payload.
    pub digest: String,
    /// The payload bytes as stored.
    pub payload: Vec<u8>,
    /// The descriptor's annotations (signature, certificate, bundle...).
    pub annotations: BTreeMap<String, String>,
}

impl SignatureLayer {
    /// A layer for `payload` signed with `material`.
    pub fn new(payload: Vec<u8>, material: &SignatureMaterial) -> Self {
        let mut annotations = material.annotations.clone();
        annotations.insert(
            SIGNATURE_ANNOTATION.to_string(),
            BASE64.encode(&material.signature),
        );
        SignatureLayer {
            media_type: SIMPLE_SIGNING_MEDIA_TYPE.to_string(),
            digest: sha256_digest(&payload),
            payload,
            annotations,
        }
    }

    /// Checks this layer as a signature of `image_digest`: media type,
    /// payload digest, signature (by `verifier`), payload type and digest
    /// claim, and `required` annotations. Returns the payload as JSON and
    /// who signed it (for keyless signatures).
    pub fn check(
        &self,
        image_digest: &str,
        verifier: &dyn Verifier,
        required: &BTreeMap<String, String>,
    ) -> Result<(serde_json::Value, Option<SignerIdentity>), String> {
        if self.media_type != SIMPLE_SIGNING_MEDIA_TYPE {
            return Err(format!(
                "layer media type is {:?}, not {SIMPLE_SIGNING_MEDIA_TYPE}",
                self.media_type
            ));
        }
        let actual = sha256_digest(&self.payload);
        if actual != self.digest {
            return Err(format!(
                "payload digest is {actual}, but the manifest says {}",
                self.digest
            ));
        }
        let sig_b64 = self
            .annotations
            .get(SIGNATURE_ANNOTATION)
            .ok_or_else(|| format!("no {SIGNATURE_ANNOTATION} annotation"))?;
        let signature = BASE64
            .decode(sig_b64.trim().as_bytes())
            .map_err(|e| format!("{SIGNATURE_ANNOTATION} is not base64: {e}"))?;
        let signer = verifier.verify(&self.payload, &signature, &self.annotations)?;
        // Claims are read only after the signature holds, as cosign does.
        let parsed = SimpleSigning::parse(&self.payload).map_err(|e| e.to_string())?;
        if parsed.critical.kind != COSIGN_SIGNATURE_TYPE {
            return Err(format!(
                "payload type is {:?}, not {COSIGN_SIGNATURE_TYPE:?}",
                parsed.critical.kind
            ));
        }
        if parsed.critical.image.docker_manifest_digest != image_digest {
            return Err(format!(
                "payload signs {}, not this image ({image_digest})",
                parsed.critical.image.docker_manifest_digest
            ));
        }
        let unmet = parsed.unmet_annotations(required);
        if !unmet.is_empty() {
            return Err(format!(
                "required annotations not in payload: {}",
                unmet.join(", ")
            ));
        }
        let payload = serde_json::from_slice(&self.payload)
            .map_err(|e| format!("payload is not JSON: {e}"))?;
        Ok((payload, signer))
    }
}

/// The whole signature image: all signatures of one digest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SignatureImage {
    /// One layer per signature, oldest first.
    pub layers: Vec<SignatureLayer>,
}

impl SignatureImage {
    /// Adds `layer` unless an identical signature is already there, so
    /// signing twice with the same deterministic input does not duplicate.
    pub fn append(&mut self, layer: SignatureLayer) {
        if !self.layers.contains(&layer) {
            self.layers.push(layer);
        }
    }

    /// The config blob cosign writes: an empty image config whose rootfs
    /// lists the layer digests.
    pub fn config_bytes(&self) -> Vec<u8> {
        let diff_ids: Vec<&str> = self.layers.iter().map(|l| l.digest.as_str()).collect();
        let history: Vec<serde_json::Value> = self
            .layers
            .iter()
            .map(|_| serde_json::json!({"created": "0001-01-01T00:00:00Z"}))
            .collect();
        serde_json::to_vec(&serde_json::json!({
            "architecture": "",
            "created": "0001-01-01T00:00:00Z",
            "history": history,
            "os": "",
            "rootfs": {"type": "layers", "diff_ids": diff_ids},
            "config": {}
        }))
        .unwrap_or_default()
    }

    /// The manifest for this image (OCI media types, as cosign writes),
    /// given its config blob.
    pub fn manifest(&self, config: &[u8]) -> ImageManifest {
        ImageManifest {
            schema_version: 2,
            media_type: Some(media::OCI_MANIFEST.to_string()),
            artifact_type: None,
            config: Descriptor::of(media::OCI_CONFIG, config),
            layers: self
                .layers
                .iter()
                .map(|l| Descriptor {
                    media_type: l.media_type.clone(),
                    digest: l.digest.clone(),
                    size: l.payload.len() as u64,
                    platform: None,
                    annotations: Some(l.annotations.clone()),
                })
                .collect(),
            subject: None,
            annotations: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::{KeySigner, KeyVerifier, PrivateKey, Signer};

    fn signed(digest: &str, key: &PrivateKey) -> SignatureLayer {
        let payload = SimpleSigning::new("r/x", digest, &BTreeMap::new()).to_bytes();
        let m = KeySigner::new(key.clone()).sign(&payload).expect("sign");
        SignatureLayer::new(payload, &m)
    }

    #[test]
    fn check_accepts_good_and_names_each_failure() {
        let key = PrivateKey::generate().expect("key");
        let v = KeyVerifier::new(key.public_key());
        let none = BTreeMap::new();
        let good = signed("sha256:aa", &key);
        good.check("sha256:aa", &v, &none).expect("verifies");

        let err = good
            .check("sha256:bb", &v, &none)
            .expect_err("other digest");
        assert!(err.contains("not this image"), "{err}");

        let mut tampered = good.clone();
        tampered.payload[3] ^= 1;
        let err = tampered
            .check("sha256:aa", &v, &none)
            .expect_err("tampered");
        assert!(err.contains("payload digest"), "{err}");
        tampered.digest = sha256_digest(&tampered.payload);
        let err = tampered
            .check("sha256:aa", &v, &none)
            .expect_err("tampered");
        assert!(err.contains("signature does not match"), "{err}");

        let other = KeyVerifier::new(PrivateKey::generate().expect("key").public_key());
        assert!(good.check("sha256:aa", &other, &none).is_err());

        let want: BTreeMap<_, _> = [("k".to_string(), "v".to_string())].into();
        let err = good.check("sha256:aa", &v, &want).expect_err("annotation");
        assert!(err.contains("k=v"), "{err}");
    }

    #[test]
    fn manifest_lists_layers_with_signature_annotation() {
        let key = PrivateKey::generate().expect("key");
        let mut img = SignatureImage::default();
        img.append(signed("sha256:aa", &key));
        let l = img.layers[0].clone();
        img.append(l);
        assert_eq!(img.layers.len(), 1);
        let config = img.config_bytes();
        let m = img.manifest(&config);
        let back = ImageManifest::parse(&media::to_json_bytes(&m), "m").expect("parse");
        assert_eq!(back.layers.len(), 1);
        assert_eq!(back.layers[0].media_type, SIMPLE_SIGNING_MEDIA_TYPE);
        assert!(back.layers[0]
            .annotations
            .as_ref()
            .expect("ann")
            .contains_key(SIGNATURE_ANNOTATION));
    }
}
