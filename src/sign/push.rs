//! Pushing an image and signing it as one step, so that a tag never names
//! an unsigned image: the image is stored by digest, the signature is
//! stored, and only then does the tag move. Whatever fails on the way leaves
//! the destination's tags as they were.

use std::sync::Arc;

use super::error::{Error, Result};
use futures::FutureExt as _;

use super::target::{SignOptions, SignOutcome, Target};
use super::Signer;
use crate::oci::batch::BeforeTag;
use crate::oci::build::ImageSet;
use crate::oci::progress::ProgressMode;
use crate::oci::registry::RegistryClient;
use crate::oci::{self, ImageRef, OciError};

/// Pushes `set` to `dest`, signs it with `signer` and then moves the tag;
/// returns the image digest and where the signature went. A failed push or
/// signature leaves the tag where it was (the image and signature blobs
/// stored before the failure are unreferenced, and a retry reuses them).
pub async fn push_and_sign(
    client: &RegistryClient,
    set: &ImageSet,
    dest: &ImageRef,
    mode: ProgressMode,
    signer: &dyn Signer,
    options: &SignOptions,
) -> Result<(String, SignOutcome)> {
    let digest = oci::push_image_untagged(client, set, dest, mode)
        .await
        .map_err(|source| Error::Push {
            image: dest.to_string(),
            source: Box::new(source),
        })?;
    let outcome = Target::new(client, dest)
        .sign_digest(&digest, signer, options)
        .await
        .map_err(|e| Error::SignPushed {
            image: dest.to_string(),
            digest: digest.clone(),
            source: Box::new(e),
        })?;
    oci::tag_image(client, set, dest)
        .await
        .map_err(|source| Error::Tag {
            image: dest.to_string(),
            digest: digest.clone(),
            source: Box::new(source),
        })?;
    Ok((digest, outcome))
}

/// The step [`crate::oci::batch::push_bundles_with`] runs between storing
/// each bundle image by digest and moving its tag: signing it.
pub fn sign_before_tag(
    client: &RegistryClient,
    signer: Arc<dyn Signer>,
    options: SignOptions,
) -> BeforeTag {
    let client = client.clone();
    Arc::new(move |dest: ImageRef, digest: String| {
        let client = client.clone();
        let signer = signer.clone();
        let options = options.clone();
        async move {
            Target::new(&client, &dest)
                .sign_digest(&digest, signer.as_ref(), &options)
                .await
                .map(|_| ())
                .map_err(|e| OciError::BeforeTag {
                    step: "signing".into(),
                    image: dest.to_string(),
                    digest: digest.clone(),
                    source: Box::new(e),
                })
        }
        .boxed()
    })
}
