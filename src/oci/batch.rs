//! Building and pushing many bundle images in one go, as CI does for a
//! catalog repository: one client (one connection pool, credentials looked
//! up once per registry), at most `concurrency` bundles in flight, each
//! bundle pushed blobs first and its tag last, so a bundle that fails leaves
//! its tag where it was and the others carry on.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures::{Stream, StreamExt as _};

use super::build::{build_bundle_image, BuildOptions, BundleImage};
use super::progress::{Progress, ProgressMode};
use super::registry::RegistryClient;
use super::transfer::{push_image, push_image_untagged, tag_image};
use super::{ImageRef, OciError};

/// Where a bundle image goes.
#[derive(Debug, Clone)]
pub enum Destination {
    /// A given reference.
    Ref(ImageRef),
    /// A reference made from the bundle with a [`TagTemplate`].
    Template(TagTemplate),
}

/// A destination template such as `quay.io/me/{package}-bundle:v{version}`.
///
/// Placeholders: `{package}` (the package annotation), `{version}` (the
/// CSV's `spec.version`; only then is the CSV parsed) and `{dir}` (the
/// bundle directory's name). `{{` and `}}` stand for braces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagTemplate {
    text: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Package,
    Version,
    Dir,
}

impl TagTemplate {
    /// Parses `text`; unknown placeholders and stray braces are errors.
    pub fn parse(text: &str) -> Result<TagTemplate, OciError> {
        let invalid = |reason: String| OciError::InvalidReference {
            reference: text.to_string(),
            reason,
        };
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            if rest.starts_with("{{") || rest.starts_with("}}") {
                literal.push(c);
                rest = &rest[2..];
                continue;
            }
            if c == '}' {
                return Err(invalid("a `}` with no `{` (write `}}` for a brace)".into()));
            }
            if c != '{' {
                literal.push(c);
                rest = &rest[c.len_utf8()..];
                continue;
            }
            let end = rest
                .find('}')
                .ok_or_else(|| invalid("a `{` with no `}`".into()))?;
            let part = match &rest[1..end] {
                "package" => Part::Package,
                "version" => Part::Version,
                "dir" => Part::Dir,
                other => {
                    return Err(invalid(format!(
                        "unknown placeholder {{{other}}}; use {{package}}, {{version}} or {{dir}}"
                    )))
                }
            };
            if !literal.is_empty() {
                parts.push(Part::Text(std::mem::take(&mut literal)));
            }
            parts.push(part);
            rest = &rest[end + 1..];
        }
        if !literal.is_empty() {
            parts.push(Part::Text(literal));
        }
        if !parts.iter().any(|p| !matches!(p, Part::Text(_))) {
            return Err(invalid(
                "no placeholder: every bundle would get the same tag; use {package}, {version} or {dir}".into(),
            ));
        }
        Ok(TagTemplate {
            text: text.to_string(),
            parts,
        })
    }

    /// The reference for the bundle built from `dir`.
    pub fn render(&self, image: &BundleImage, dir: &Path) -> Result<ImageRef, OciError> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Package => out.push_str(image.package()),
                Part::Version => out.push_str(&image.csv_version()?),
                Part::Dir => {
                    let name = dir
                        .canonicalize()
                        .ok()
                        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                        .ok_or_else(|| OciError::Invalid {
                            what: dir.display().to_string(),
                            reason: "has no directory name for {dir}".into(),
                        })?;
                    out.push_str(&name);
                }
            }
        }
        out.parse::<ImageRef>().map_err(|e| match e {
            OciError::InvalidReference { reason, .. } => OciError::InvalidReference {
                reference: out.clone(),
                reason: format!("{reason} (made from the template {})", self.text),
            },
            other => other,
        })
    }
}

impl std::fmt::Display for TagTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// One bundle directory to build and push.
#[derive(Debug, Clone)]
pub struct BundleJob {
    /// The bundle directory.
    pub dir: PathBuf,
    /// Where its image goes.
    pub dest: Destination,
}

/// What became of one [`BundleJob`].
#[derive(Debug)]
pub struct BundleOutcome {
    /// The bundle directory.
    pub dir: PathBuf,
    /// The destination, once known (a template needs the built bundle).
    pub dest: Option<ImageRef>,
    /// The digest pushed, or why not.
    pub result: Result<String, OciError>,
}

/// What runs between storing a bundle image by digest and moving its tag
/// (given the destination and the digest), e.g. signing it: when it fails,
/// the tag is not moved and the bundle fails.
pub type BeforeTag = Arc<
    dyn Fn(ImageRef, String) -> futures::future::BoxFuture<'static, Result<(), OciError>>
        + Send
        + Sync,
>;

/// Builds and pushes `jobs` with at most `concurrency` bundles in flight,
/// yielding one outcome per job in the order of `jobs`. `progress` counts
/// bundles (one unit each). Building runs on the blocking pool, so it uses
/// every core while other bundles upload. Two bundles whose templates give
/// the same reference: the second one to get there fails, naming the first.
pub fn push_bundles(
    client: &RegistryClient,
    jobs: Vec<BundleJob>,
    opts: &BuildOptions,
    concurrency: usize,
    progress: Arc<Progress>,
) -> impl Stream<Item = BundleOutcome> {
    push_bundles_with(client, jobs, opts, concurrency, progress, None)
}

/// [`push_bundles`], running `before_tag` for each bundle after its image
/// is stored by digest and before its tag moves (`bundle build --sign`).
pub fn push_bundles_with(
    client: &RegistryClient,
    jobs: Vec<BundleJob>,
    opts: &BuildOptions,
    concurrency: usize,
    progress: Arc<Progress>,
    before_tag: Option<BeforeTag>,
) -> impl Stream<Item = BundleOutcome> {
    let claimed: Arc<Mutex<HashMap<String, PathBuf>>> = Arc::default();
    let client = client.clone();
    let opts = opts.clone();
    futures::stream::iter(jobs)
        .map(move |job| {
            let client = client.clone();
            let opts = opts.clone();
            let claimed = claimed.clone();
            let progress = progress.clone();
            let before_tag = before_tag.clone();
            async move {
                let mut dest = match &job.dest {
                    Destination::Ref(r) => Some(r.clone()),
                    Destination::Template(_) => None,
                };
                let result =
                    build_and_push(&client, &job, &opts, &claimed, &mut dest, before_tag).await;
                progress.inc(1);
                BundleOutcome {
                    dir: job.dir,
                    dest,
                    result,
                }
            }
        })
        .buffered(concurrency.max(1))
}

async fn build_and_push(
    client: &RegistryClient,
    job: &BundleJob,
    opts: &BuildOptions,
    claimed: &Mutex<HashMap<String, PathBuf>>,
    dest_out: &mut Option<ImageRef>,
    before_tag: Option<BeforeTag>,
) -> Result<String, OciError> {
    let dir = job.dir.clone();
    let build_opts = opts.clone();
    let template = match &job.dest {
        Destination::Template(t) => Some(t.clone()),
        Destination::Ref(_) => None,
    };
    let (image, templated) = tokio::task::spawn_blocking(move || {
        let image = build_bundle_image(&dir, &build_opts)?;
        let dest = template.map(|t| t.render(&image, &dir)).transpose()?;
        Ok::<_, OciError>((image, dest))
    })
    .await
    .map_err(|e| OciError::Task {
        what: format!("building {}", job.dir.display()),
        reason: e.to_string(),
    })??;
    if let Some(d) = templated {
        *dest_out = Some(d);
    }
    let dest = dest_out
        .clone()
        .ok_or_else(|| OciError::NoDestination(job.dir.clone()))?;
    {
        let mut claimed = claimed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(first) = claimed.get(&dest.to_string()) {
            return Err(OciError::DuplicateDestination {
                destination: dest.to_string(),
                first: first.clone(),
            });
        }
        claimed.insert(dest.to_string(), job.dir.clone());
    }
    let Some(before_tag) = before_tag else {
        return push_image(client, &image.image, &dest, ProgressMode::Off).await;
    };
    let digest = push_image_untagged(client, &image.image, &dest, ProgressMode::Off).await?;
    before_tag(dest.clone(), digest.clone()).await?;
    tag_image(client, &image.image, &dest).await?;
    Ok(digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_templates() {
        let t = TagTemplate::parse("quay.io/me/{package}-bundle:v{version}").expect("parse");
        assert_eq!(
            t.parts,
            vec![
                Part::Text("quay.io/me/".into()),
                Part::Package,
                Part::Text("-bundle:v".into()),
                Part::Version,
            ]
        );
        let t = TagTemplate::parse("r/{{x}}/{dir}").expect("braces");
        assert_eq!(t.parts, vec![Part::Text("r/{x}/".into()), Part::Dir]);
        for bad in ["r/{name}:x", "r/{package", "r/x}:{dir}", "r/plain:tag"] {
            assert!(TagTemplate::parse(bad).is_err(), "{bad}");
        }
    }
}
