//! OCI image layouts on disk (`oci-layout`, `index.json`, `blobs/sha256/`).
//!
//! Writes are crash-safe in the same way pushes are: blobs go first (each
//! through a temporary file renamed into place), `index.json` last, also by
//! rename, so an interrupted write never changes what a tag names.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::blob::BlobBody;
use super::media::{self, Descriptor, ImageIndex};
use super::OciError;

/// The annotation naming a manifest's tag in `index.json`.
pub const REF_NAME: &str = "org.opencontainers.image.ref.name";

/// An OCI image layout directory.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The directory.
    pub dir: PathBuf,
}

fn layout_err(path: &Path, reason: impl std::fmt::Display) -> OciError {
    OciError::Layout {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

impl Layout {
    /// The layout at `dir` (it need not exist yet).
    pub fn new(dir: impl Into<PathBuf>) -> Layout {
        Layout { dir: dir.into() }
    }

    fn blob_path(&self, digest: &str) -> Result<PathBuf, OciError> {
        let hex = media::check_digest(digest).map_err(|r| layout_err(&self.dir, r))?;
        Ok(self.dir.join("blobs/sha256").join(hex))
    }

    /// Creates the directory and `oci-layout` if missing.
    pub fn init(&self) -> Result<(), OciError> {
        std::fs::create_dir_all(self.dir.join("blobs/sha256"))
            .map_err(|e| layout_err(&self.dir, e))?;
        let marker = self.dir.join("oci-layout");
        if !marker.exists() {
            write_atomic(&marker, br#"{"imageLayoutVersion":"1.0.0"}"#)?;
        }
        Ok(())
    }

    /// Whether the layout has the blob.
    pub fn has_blob(&self, desc: &Descriptor) -> bool {
        self.blob_path(&desc.digest)
            .ok()
            .and_then(|p| std::fs::metadata(p).ok())
            .is_some_and(|m| m.len() == desc.size)
    }

    /// A descriptor for the blob `digest` (size from the file; media type
    /// unknown), or not found.
    pub fn blob_descriptor(&self, digest: &str) -> Result<Descriptor, OciError> {
        let path = self.blob_path(digest)?;
        let meta = std::fs::metadata(&path).map_err(|_| OciError::NotFound {
            reference: format!("oci:{}@{digest}", self.dir.display()),
        })?;
        Ok(Descriptor {
            media_type: String::new(),
            digest: digest.to_string(),
            size: meta.len(),
            platform: None,
            annotations: None,
        })
    }

    /// Writes a blob (its digest is computed, not trusted).
    pub fn put_blob(&self, data: &[u8]) -> Result<String, OciError> {
        let digest = media::sha256_digest(data);
        let path = self.blob_path(&digest)?;
        if std::fs::metadata(&path).is_ok_and(|m| m.len() == data.len() as u64) {
            return Ok(digest);
        }
        write_atomic(&path, data)?;
        Ok(digest)
    }

    /// [`Layout::put_blob`] of a blob that may be spooled to a file: copied
    /// into place without being read into memory. Its digest.
    pub fn put_blob_body(&self, body: &BlobBody) -> Result<String, OciError> {
        let file = match body {
            BlobBody::Bytes(data) => return self.put_blob(data),
            BlobBody::File(f) => f,
        };
        let blobs = self.dir.join("blobs/sha256");
        std::fs::create_dir_all(&blobs).map_err(|e| layout_err(&blobs, e))?;
        let mut tmp = tempfile::NamedTempFile::new_in(&blobs).map_err(|e| layout_err(&blobs, e))?;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        let digest = body
            .copy_to(&mut out)
            .and_then(|d| out.flush().map(|()| d))
            .map_err(|e| layout_err(file.path(), e))?;
        drop(out);
        let path = self.blob_path(&digest)?;
        if std::fs::metadata(&path).is_ok_and(|m| m.len() == body.len()) {
            return Ok(digest);
        }
        tmp.as_file().sync_all().map_err(|e| layout_err(&path, e))?;
        tmp.persist(&path).map_err(|e| layout_err(&path, e.error))?;
        Ok(digest)
    }

    /// The file of blob `desc`, refused when it is larger than `limit`.
    fn blob_within(&self, desc: &Descriptor, limit: u64) -> Result<PathBuf, OciError> {
        let path = self.blob_path(&desc.digest)?;
        let meta = std::fs::metadata(&path).map_err(|e| layout_err(&path, e))?;
        if meta.len() > limit {
            return Err(OciError::TooLarge {
                what: path.display().to_string(),
                limit,
                detail: format!("blob of {} bytes", meta.len()),
            });
        }
        Ok(path)
    }

    /// [`Layout::get_blob`] into a temporary file, for blobs too large to
    /// hold in memory.
    pub fn get_blob_spooled(&self, desc: &Descriptor, limit: u64) -> Result<BlobBody, OciError> {
        let path = self.blob_within(desc, limit)?;
        let mut spool = super::blob::SpoolWriter::new().map_err(|e| layout_err(&path, e))?;
        let mut file = std::fs::File::open(&path).map_err(|e| layout_err(&path, e))?;
        std::io::copy(&mut file, &mut spool).map_err(|e| layout_err(&path, e))?;
        let (body, actual) = spool.finish().map_err(|e| layout_err(&path, e))?;
        if actual != desc.digest || body.len() != desc.size {
            return Err(OciError::DigestMismatch {
                what: format!(
                    "{} ({} bytes, {} expected)",
                    path.display(),
                    body.len(),
                    desc.size
                ),
                expected: desc.digest.clone(),
                actual,
            });
        }
        Ok(body)
    }

    /// Reads a blob, at most `limit` bytes, checking its digest and size.
    pub fn get_blob(&self, desc: &Descriptor, limit: u64) -> Result<Vec<u8>, OciError> {
        let path = self.blob_within(desc, limit)?;
        let data = std::fs::read(&path).map_err(|e| layout_err(&path, e))?;
        let actual = media::sha256_digest(&data);
        if actual != desc.digest || data.len() as u64 != desc.size {
            return Err(OciError::DigestMismatch {
                what: format!(
                    "{} ({} bytes, {} expected)",
                    path.display(),
                    data.len(),
                    desc.size
                ),
                expected: desc.digest.clone(),
                actual,
            });
        }
        Ok(data)
    }

    /// The layout's `index.json` (empty if the file is missing).
    pub fn index(&self) -> Result<ImageIndex, OciError> {
        let path = self.dir.join("index.json");
        match std::fs::read(&path) {
            Ok(b) => serde_json::from_slice(&b)
                .map_err(|e| layout_err(&path, format!("not an OCI index: {e}"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ImageIndex {
                schema_version: 2,
                media_type: Some(media::OCI_INDEX.to_string()),
                manifests: Vec::new(),
                annotations: None,
            }),
            Err(e) => Err(layout_err(&path, e)),
        }
    }

    /// Writes the single-platform image tagged `tag` as a docker-archive
    /// tarball at `out` (what `docker load` and `podman load` read), naming
    /// it `repo_tag` there: its config and layer blobs plus a
    /// `manifest.json`. This is how an image built without a daemon is
    /// handed to one (the opm personality's `index add --tag`).
    pub fn write_docker_archive(
        &self,
        tag: &str,
        repo_tag: &str,
        out: &Path,
    ) -> Result<(), OciError> {
        let desc = self.resolve(tag)?;
        let bytes = self.get_blob(&desc, super::MAX_MANIFEST)?;
        let manifest: media::ImageManifest = serde_json::from_slice(&bytes).map_err(|e| {
            layout_err(
                &self.dir,
                format!("manifest {} is not an image manifest: {e}", desc.digest),
            )
        })?;
        let mut names = Vec::with_capacity(manifest.layers.len() + 1);
        for d in std::iter::once(&manifest.config).chain(&manifest.layers) {
            let path = self.blob_path(&d.digest)?;
            let rel = path
                .strip_prefix(&self.dir)
                .map_err(|e| layout_err(&self.dir, e))?
                .to_string_lossy()
                .into_owned();
            names.push((rel, path));
        }
        let docker_manifest = serde_json::json!([{
            "Config": names[0].0,
            "RepoTags": [repo_tag],
            "Layers": names[1..].iter().map(|(rel, _)| rel).collect::<Vec<_>>(),
        }]);
        let io = |context: String| move |source: std::io::Error| OciError::Io { context, source };
        let file = std::fs::File::create(out).map_err(io(format!("writing {}", out.display())))?;
        let mut tar = tar::Builder::new(file);
        let json = serde_json::to_vec(&docker_manifest)
            .map_err(|e| layout_err(&self.dir, format!("encoding manifest.json: {e}")))?;
        let mut header = tar::Header::new_gnu();
        header.set_size(json.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, "manifest.json", json.as_slice())
            .map_err(io(format!("writing {}", out.display())))?;
        for (rel, path) in &names {
            tar.append_path_with_name(path, rel).map_err(io(format!(
                "adding {} to {}",
                path.display(),
                out.display()
            )))?;
        }
        tar.into_inner()
            .and_then(|mut f| f.flush())
            .map_err(io(format!("writing {}", out.display())))
    }

    /// The descriptor tagged `tag` (or with digest `tag`). `latest` (what
    /// `oci:DIR` without a tag means) that is not there names the only image
    /// of the layout, as skopeo reads an untagged layout; cosign signature
    /// images (`sha256-H.sig`) do not count.
    pub fn resolve(&self, tag: &str) -> Result<Descriptor, OciError> {
        let index = self.index()?;
        if let Some(d) = index.manifests.iter().find(|d| {
            d.annotations
                .as_ref()
                .and_then(|a| a.get(REF_NAME))
                .map(String::as_str)
                == Some(tag)
        }) {
            return Ok(d.clone());
        }
        if tag.starts_with("sha256:") {
            if let Some(d) = index.manifests.iter().find(|d| d.digest == tag) {
                return Ok(d.clone());
            }
        }
        if tag == "latest" {
            let images: Vec<&Descriptor> = index
                .manifests
                .iter()
                .filter(|d| {
                    !d.annotations
                        .as_ref()
                        .and_then(|a| a.get(REF_NAME))
                        .is_some_and(|n| n.starts_with("sha256-"))
                })
                .collect();
            match images.as_slice() {
                [one] => return Ok((*one).clone()),
                [] => {}
                several => {
                    return Err(layout_err(
                        &self.dir,
                        format!(
                            "no image tagged latest, and {} images to choose from; name one as oci:DIR:TAG",
                            several.len()
                        ),
                    ))
                }
            }
        }
        Err(OciError::NotFound {
            reference: format!("oci:{}:{tag}", self.dir.display()),
        })
    }

    /// Points `tag` at `desc` in `index.json` (replacing what it named).
    pub fn set_tag(&self, tag: &str, desc: &Descriptor) -> Result<(), OciError> {
        let mut index = self.index()?;
        let mut entry = desc.clone();
        entry.platform = None;
        entry
            .annotations
            .get_or_insert_with(Default::default)
            .insert(REF_NAME.to_string(), tag.to_string());
        match index.manifests.iter_mut().find(|d| {
            d.annotations
                .as_ref()
                .and_then(|a| a.get(REF_NAME))
                .map(String::as_str)
                == Some(tag)
        }) {
            Some(existing) => *existing = entry,
            None => index.manifests.push(entry),
        }
        index.media_type = Some(media::OCI_INDEX.to_string());
        write_atomic(&self.dir.join("index.json"), &media::to_json_bytes(&index))
    }
}

/// Writes through a temporary file in the same directory, then renames.
fn write_atomic(path: &Path, data: &[u8]) -> Result<(), OciError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| layout_err(dir, e))?;
    tmp.write_all(data).map_err(|e| layout_err(path, e))?;
    tmp.as_file().sync_all().map_err(|e| layout_err(path, e))?;
    tmp.persist(path).map_err(|e| layout_err(path, e.error))?;
    Ok(())
}
