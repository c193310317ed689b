//! Image layers: deterministic tar+gzip building and safe unpacking.
//!
//! Building is reproducible: entries are sorted by path, parent directories
//! are added explicitly, owners are 0:0 with empty names, modes are fixed
//! (0644 files, 0755 directories), every mtime is the same epoch, and the gzip
//! header carries no name, mtime 0 and OS "unknown".
//!
//! Unpacking never touches the file system: files are collected in memory
//! ([`LayerFs::write_to`] then writes them under a directory of the
//! caller's choosing, for `bundle unpack`).
//! Entries whose names escape the root (`..`) make the layer fail; links are
//! resolved inside the layer only; the decompressed stream is counted, so a
//! gzip or zstd bomb stops at the limit instead of filling memory.
//!
//! Layers may be gzip, zstd (`tar+zstd`, including zstd:chunked's many
//! frames and skippable frames) or plain tar, told apart by their magic
//! bytes. zstd is decoded with ruzstd, in Rust, with its window capped at
//! [`MAX_ZSTD_WINDOW`].

use std::collections::BTreeMap;
use std::io::{self, BufRead, Read, Write};

use flate2::{Compression, GzBuilder};

use std::path::{Path, PathBuf};

use super::blob::{BlobBody, HashingWriter, SpoolWriter};
use super::media::sha256_digest;
use super::OciError;

/// A file or directory to put in a layer.
#[derive(Debug, Clone)]
enum Entry {
    Dir {
        mode: u32,
    },
    File {
        data: Vec<u8>,
        mode: u32,
    },
    /// A file read when the layer is written, so that a layer of many
    /// large files never holds them all.
    Disk {
        source: PathBuf,
        mode: u32,
    },
    Symlink {
        target: String,
    },
}

/// Collects entries, then writes them as a reproducible layer.
#[derive(Debug, Default, Clone)]
pub struct LayerBuilder {
    entries: BTreeMap<String, Entry>,
}

/// A built layer: the gzip blob and the digest of the uncompressed tar.
#[derive(Debug, Clone)]
pub struct BuiltLayer {
    /// The gzip-compressed tar (the blob pushed): in memory from
    /// [`LayerBuilder::build`], in a temporary file from
    /// [`LayerBuilder::build_spooled`].
    pub blob: BlobBody,
    /// `sha256:` of `blob`.
    pub digest: String,
    /// `sha256:` of the uncompressed tar (the config's `rootfs.diff_ids`).
    pub diff_id: String,
}

impl LayerBuilder {
    /// An empty layer.
    pub fn new() -> LayerBuilder {
        LayerBuilder::default()
    }

    /// Adds a regular file at `path` (relative, `/`-separated), with its
    /// parent directories.
    pub fn file(&mut self, path: &str, data: Vec<u8>, mode: u32) {
        let path = path.trim_start_matches('/').to_string();
        self.parents(&path);
        self.entries.insert(path, Entry::File { data, mode });
    }

    /// Adds the regular file `source` at `path`, read only when the layer
    /// is written (see [`LayerBuilder::build_spooled`]).
    pub fn file_from_disk(&mut self, path: &str, source: &Path, mode: u32) {
        let path = path.trim_start_matches('/').to_string();
        self.parents(&path);
        self.entries.insert(
            path,
            Entry::Disk {
                source: source.to_path_buf(),
                mode,
            },
        );
    }

    /// Adds a directory at `path` with its parents (mode 0755).
    pub fn dir(&mut self, path: &str) {
        let path = path.trim_matches('/').to_string();
        self.parents(&path);
        self.entries
            .entry(path)
            .or_insert(Entry::Dir { mode: 0o755 });
    }

    /// Adds a directory at `path` with `mode` (e.g. 0o1777 for a `/tmp`
    /// anyone may write to), its parents 0755.
    pub fn dir_with_mode(&mut self, path: &str, mode: u32) {
        let path = path.trim_matches('/').to_string();
        self.parents(&path);
        self.entries.insert(path, Entry::Dir { mode });
    }

    /// Adds a symbolic link at `path` pointing to `target` (as written,
    /// usually relative to the link's directory), with its parents.
    pub fn symlink(&mut self, path: &str, target: &str) {
        let path = path.trim_start_matches('/').to_string();
        self.parents(&path);
        self.entries.insert(
            path,
            Entry::Symlink {
                target: target.to_string(),
            },
        );
    }

    fn parents(&mut self, path: &str) {
        let mut end = 0;
        while let Some(i) = path[end..].find('/') {
            let dir = &path[..end + i];
            self.entries
                .entry(dir.to_string())
                .or_insert(Entry::Dir { mode: 0o755 });
            end += i + 1;
        }
    }

    /// Writes the tar and compresses it, in memory. `mtime` is the
    /// timestamp of every entry (seconds since the epoch).
    pub fn build(&self, mtime: u64) -> Result<BuiltLayer, OciError> {
        let (gz, diff_id) = self
            .write_gzip(mtime, Vec::new())
            .map_err(|e| layer_io("writing layer", e))?;
        let digest = sha256_digest(&gz);
        Ok(BuiltLayer {
            blob: BlobBody::from(gz),
            digest,
            diff_id,
        })
    }

    /// [`LayerBuilder::build`] into a temporary file: neither the tar nor
    /// the compressed blob is ever whole in memory, and files added with
    /// [`LayerBuilder::file_from_disk`] are read one at a time. The same
    /// bytes as `build`.
    pub fn build_spooled(&self, mtime: u64) -> Result<BuiltLayer, OciError> {
        let spool = SpoolWriter::new().map_err(|e| layer_io("creating a temporary file", e))?;
        let (spool, diff_id) = self
            .write_gzip(mtime, spool)
            .map_err(|e| layer_io("writing layer", e))?;
        let (blob, digest) = spool.finish().map_err(|e| layer_io("writing layer", e))?;
        Ok(BuiltLayer {
            blob,
            digest,
            diff_id,
        })
    }

    /// Writes the tar through gzip into `out`, hashing the tar on the way:
    /// `out` and the tar's `sha256:` digest (the diff id).
    fn write_gzip<W: Write>(&self, mtime: u64, out: W) -> io::Result<(W, String)> {
        let gz = gzip_writer(out);
        let tar = HashingWriter::new(gz);
        let tar = self.tar(mtime, tar)?;
        let (diff_id, _, gz) = tar.finish();
        Ok((gz.finish()?, diff_id))
    }

    fn tar<W: Write>(&self, mtime: u64, out: W) -> io::Result<W> {
        let mut builder = tar::Builder::new(out);
        // Paths are compared as strings; a directory "a" sorts before "a/x"
        // because BTreeMap orders "a" < "a/x".
        for (path, entry) in &self.entries {
            let mut header = tar::Header::new_ustar();
            header.set_uid(0);
            header.set_gid(0);
            header.set_mtime(mtime);
            header.set_username("")?;
            header.set_groupname("")?;
            match entry {
                Entry::Dir { mode } => {
                    header.set_entry_type(tar::EntryType::Directory);
                    header.set_mode(*mode);
                    header.set_size(0);
                    builder.append_data(&mut header, format!("{path}/"), io::empty())?;
                }
                Entry::File { data, mode } => {
                    header.set_entry_type(tar::EntryType::Regular);
                    header.set_mode(*mode);
                    header.set_size(data.len() as u64);
                    builder.append_data(&mut header, path, data.as_slice())?;
                }
                Entry::Disk { source, mode } => {
                    let data = std::fs::read(source).map_err(|e| {
                        io::Error::new(e.kind(), format!("reading {}: {e}", source.display()))
                    })?;
                    header.set_entry_type(tar::EntryType::Regular);
                    header.set_mode(*mode);
                    header.set_size(data.len() as u64);
                    builder.append_data(&mut header, path, data.as_slice())?;
                }
                Entry::Symlink { target } => {
                    header.set_entry_type(tar::EntryType::Symlink);
                    header.set_mode(0o777);
                    header.set_size(0);
                    builder.append_link(&mut header, path, target)?;
                }
            }
        }
        builder.into_inner()
    }
}

fn layer_io(context: &str, source: io::Error) -> OciError {
    OciError::Io {
        context: context.into(),
        source,
    }
}

/// The gzip stream every layer is written with: no file name, mtime 0,
/// OS byte 255 ("unknown"), level 6.
fn gzip_writer<W: Write>(out: W) -> flate2::write::GzEncoder<W> {
    GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(out, Compression::new(6))
}

/// Deterministic gzip: no file name, mtime 0, OS byte 255 ("unknown").
pub fn gzip(data: &[u8]) -> io::Result<Vec<u8>> {
    let mut enc = gzip_writer(Vec::with_capacity(data.len() / 3 + 64));
    enc.write_all(data)?;
    enc.finish()
}

/// Largest zstd window accepted (what a decoder must hold in memory per
/// layer). zstd's own levels use at most 8 MiB below `--ultra`; 128 MiB is
/// `--long`'s default.
pub const MAX_ZSTD_WINDOW: u64 = 128 * 1024 * 1024;

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// A skippable frame (magic 0x184D2A50..=0x184D2A5F, little-endian), which
/// zstd:chunked layers may start with.
fn is_skippable_frame(blob: &[u8]) -> bool {
    blob.len() >= 4 && blob[0] & 0xf0 == 0x50 && blob[1..4] == [0x2a, 0x4d, 0x18]
}

/// Reads every frame of a zstd stream in turn (ruzstd's streaming decoder
/// reads one), skipping skippable frames. The input is any buffered reader:
/// a blob in memory, or a layer spooled to disk and read as it is decoded.
struct ZstdFrames<R: BufRead> {
    input: Counted<R>,
    decoder: ruzstd::decoding::FrameDecoder,
    in_frame: bool,
}

/// A reader that counts the bytes taken from it (to tell a decoder that
/// makes no progress from one that does).
struct Counted<R> {
    inner: R,
    taken: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.taken += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> ZstdFrames<R> {
    fn new(input: R) -> ZstdFrames<R> {
        let mut decoder = ruzstd::decoding::FrameDecoder::new();
        decoder.set_max_window_size(MAX_ZSTD_WINDOW);
        ZstdFrames {
            input: Counted {
                inner: input,
                taken: 0,
            },
            decoder,
            in_frame: false,
        }
    }
}

impl<R: BufRead> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
        use ruzstd::decoding::BlockDecodingStrategy;
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if !self.in_frame {
                if self.input.inner.fill_buf()?.is_empty() {
                    return Ok(0);
                }
                match self.decoder.reset(&mut self.input) {
                    Ok(()) => self.in_frame = true,
                    Err(FrameDecoderError::ReadFrameHeaderError(
                        ReadFrameHeaderError::SkipFrame { length, .. },
                    )) => {
                        let skipped = io::copy(
                            &mut (&mut self.input).take(u64::from(length)),
                            &mut io::sink(),
                        )?;
                        if skipped < u64::from(length) {
                            return Err(io::Error::other(
                                "zstd: a skippable frame runs past the end",
                            ));
                        }
                        continue;
                    }
                    Err(e) => return Err(io::Error::other(format!("zstd: {e}"))),
                }
            }
            let n = self.decoder.read(buf)?;
            if n > 0 {
                return Ok(n);
            }
            if self.decoder.is_finished() {
                if self.decoder.can_collect() == 0 {
                    self.in_frame = false;
                }
                continue;
            }
            let before = self.input.taken;
            self.decoder
                .decode_blocks(
                    &mut self.input,
                    BlockDecodingStrategy::UptoBytes(buf.len().max(64 * 1024)),
                )
                .map_err(|e| io::Error::other(format!("zstd: {e}")))?;
            if self.input.taken == before
                && !self.decoder.is_finished()
                && self.decoder.can_collect() == 0
            {
                return Err(io::Error::other("zstd: the stream ends inside a frame"));
            }
        }
    }
}

/// Limits applied while unpacking layers.
#[derive(Debug, Clone, Copy)]
pub struct UnpackLimits {
    /// Largest compressed layer blob accepted.
    pub max_blob: u64,
    /// Largest total of decompressed bytes read from all layers of one image
    /// (tar headers and skipped files count: this is what stops gzip bombs).
    pub max_decompressed: u64,
    /// Largest single file kept.
    pub max_file: u64,
    /// Most tar entries per layer.
    pub max_entries: usize,
}

impl Default for UnpackLimits {
    fn default() -> Self {
        UnpackLimits {
            max_blob: 64 * 1024 * 1024,
            max_decompressed: 256 * 1024 * 1024,
            max_file: crate::bundle::MAX_FILE_SIZE,
            max_entries: 10_000,
        }
    }
}

/// What an unpacked path holds.
#[derive(Debug, Clone)]
pub enum Unpacked {
    /// A regular file.
    File(Vec<u8>),
    /// A symbolic link with its target as written.
    Symlink(String),
    /// A hard link to another path of the layer (root-relative).
    Hardlink(String),
}

/// The merged file system of an image's layers, in memory, restricted to the
/// paths `keep` accepts (others are read through and dropped).
#[derive(Debug, Default)]
pub struct LayerFs {
    /// Root-relative normalized path → content.
    pub entries: BTreeMap<String, Unpacked>,
    decompressed: u64,
}

/// Counts bytes read through it and fails past a limit.
struct CountingReader<R> {
    inner: R,
    count: u64,
    limit: u64,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        if self.count > self.limit {
            return Err(io::Error::other(LimitExceeded));
        }
        Ok(n)
    }
}

#[derive(Debug)]
struct LimitExceeded;

impl std::fmt::Display for LimitExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("decompressed size limit exceeded")
    }
}
impl std::error::Error for LimitExceeded {}

fn is_limit(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|i| i.is::<LimitExceeded>())
}

/// Normalizes a tar entry name to a root-relative path: strips `./` and a
/// leading `/`, rejects `..`.
pub(crate) fn normalize_entry_path(name: &str) -> Result<String, String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err(format!(
                    "tar entry `{name}` climbs out of the image root with `..`"
                ))
            }
            p => parts.push(p),
        }
    }
    Ok(parts.join("/"))
}

/// The tar stream of a layer blob: gzip, zstd (zstd:chunked's frames and
/// skippable frames included, window capped at [`MAX_ZSTD_WINDOW`]) or
/// plain tar, told apart by their magic bytes. The one decoder every reader
/// of layers uses; callers count what they read against their own limits.
pub fn decompressed(blob: &[u8]) -> Box<dyn Read + '_> {
    match decompressed_from(blob) {
        Ok(r) => r,
        // Peeking at a slice cannot fail; an empty stream is the answer
        // for an empty blob anyway.
        Err(_) => Box::new(io::empty()),
    }
}

/// [`decompressed`] over any buffered reader (a layer spooled to a file is
/// decoded as it is read, never held in memory): the magic bytes are
/// peeked at, not consumed.
pub fn decompressed_from<'a, R: BufRead + 'a>(mut input: R) -> io::Result<Box<dyn Read + 'a>> {
    let head = input.fill_buf()?;
    Ok(if head.starts_with(&[0x1f, 0x8b]) {
        Box::new(flate2::bufread::GzDecoder::new(input))
    } else if head.starts_with(&ZSTD_MAGIC) || is_skippable_frame(head) {
        Box::new(ZstdFrames::new(input))
    } else {
        Box::new(input)
    })
}

impl LayerFs {
    /// Applies one layer blob (gzip, zstd or plain tar) on top of what is there.
    /// `what` names the layer in errors.
    pub fn apply(
        &mut self,
        blob: &[u8],
        what: &str,
        limits: &UnpackLimits,
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<(), OciError> {
        let unsafe_layer = |reason: String| OciError::UnsafeLayer {
            layer: what.to_string(),
            reason,
        };
        let raw = decompressed(blob);
        let remaining = limits.max_decompressed.saturating_sub(self.decompressed);
        let mut counting = CountingReader {
            inner: raw,
            count: 0,
            limit: remaining,
        };
        let too_big = || OciError::TooLarge {
            what: what.to_string(),
            limit: limits.max_decompressed,
            detail: "decompressed content of the image's layers".into(),
        };
        let map_io = |e: io::Error| {
            if is_limit(&e) {
                too_big()
            } else {
                unsafe_layer(format!("not a readable tar archive: {e}"))
            }
        };
        {
            let mut archive = tar::Archive::new(&mut counting);
            let entries = archive.entries().map_err(map_io)?;
            for (n, entry) in entries.enumerate() {
                if n >= limits.max_entries {
                    return Err(unsafe_layer(format!(
                        "more than {} entries in one layer",
                        limits.max_entries
                    )));
                }
                let mut entry = entry.map_err(map_io)?;
                let name_bytes = entry.path_bytes().into_owned();
                let name = String::from_utf8_lossy(&name_bytes).into_owned();
                let path = normalize_entry_path(&name).map_err(unsafe_layer)?;
                if path.is_empty() {
                    continue;
                }
                // Whiteouts (overlay deletions) from layers built by docker.
                let (parent, base) = path.rsplit_once('/').unwrap_or(("", path.as_str()));
                if base == ".wh..wh..opq" {
                    let prefix = format!("{parent}/");
                    self.entries.retain(|k, _| !k.starts_with(&prefix));
                    continue;
                }
                if let Some(hidden) = base.strip_prefix(".wh.") {
                    let target = if parent.is_empty() {
                        hidden.to_string()
                    } else {
                        format!("{parent}/{hidden}")
                    };
                    let prefix = format!("{target}/");
                    self.entries
                        .retain(|k, _| k != &target && !k.starts_with(&prefix));
                    continue;
                }
                let kind = entry.header().entry_type();
                let link_target = || -> Result<String, OciError> {
                    entry
                        .link_name_bytes()
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                        .ok_or_else(|| unsafe_layer(format!("link `{name}` has no target")))
                };
                match kind {
                    tar::EntryType::Regular | tar::EntryType::Continuous => {
                        if !keep(&path) {
                            // Read through it so the size counter sees it.
                            io::copy(&mut entry, &mut io::sink()).map_err(map_io)?;
                            continue;
                        }
                        let size = entry.header().size().unwrap_or(u64::MAX);
                        if size > limits.max_file {
                            return Err(OciError::TooLarge {
                                what: what.to_string(),
                                limit: limits.max_file,
                                detail: format!("file {path}"),
                            });
                        }
                        let mut data = Vec::with_capacity(size as usize);
                        (&mut entry)
                            .take(limits.max_file + 1)
                            .read_to_end(&mut data)
                            .map_err(map_io)?;
                        self.entries.insert(path, Unpacked::File(data));
                    }
                    tar::EntryType::Symlink if keep(&path) => {
                        let t = link_target()?;
                        self.entries.insert(path, Unpacked::Symlink(t));
                    }
                    tar::EntryType::Link if keep(&path) => {
                        let t = link_target()?;
                        let t = normalize_entry_path(&t).map_err(unsafe_layer)?;
                        self.entries.insert(path, Unpacked::Hardlink(t));
                    }
                    tar::EntryType::Directory => {}
                    // Devices, FIFOs, …: nothing a bundle needs.
                    _ => {}
                }
            }
        }
        // Read to the end of the stream so trailing garbage cannot hide data
        // and the counter covers the whole layer.
        io::copy(&mut counting, &mut io::sink()).map_err(map_io)?;
        self.decompressed += counting.count;
        Ok(())
    }

    /// Writes the merged file system under `dir` (which must exist): files
    /// and hard links as regular files (a hard link gets its target's
    /// content), then symbolic links as links, with their targets as
    /// written. Links come last and never replace a path already written,
    /// so nothing is written through a link. Paths are root-relative
    /// without `..` (see `normalize_entry_path`), so nothing lands outside
    /// `dir`. The paths written, sorted.
    pub fn write_to(&self, dir: &Path) -> Result<Vec<String>, OciError> {
        let io_err = |what: String| {
            move |source: io::Error| OciError::Io {
                context: what,
                source,
            }
        };
        let mut written = Vec::new();
        let mut links = Vec::new();
        for (path, entry) in &self.entries {
            let data = match entry {
                Unpacked::File(data) => data.as_slice(),
                Unpacked::Hardlink(_) => {
                    self.resolve(path, &|_| true)
                        .map_err(|reason| OciError::Invalid {
                            what: format!("layer entry {path}"),
                            reason,
                        })?
                }
                Unpacked::Symlink(target) => {
                    links.push((path, target));
                    continue;
                }
            };
            let dest = dir.join(path);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(io_err(format!("creating {}", parent.display())))?;
            }
            std::fs::write(&dest, data).map_err(io_err(format!("writing {}", dest.display())))?;
            written.push(path.clone());
        }
        for (path, target) in links {
            // A link under another link would be created through it.
            let mut ancestor = path.as_str();
            while let Some((parent, _)) = ancestor.rsplit_once('/') {
                if matches!(self.entries.get(parent), Some(Unpacked::Symlink(_))) {
                    return Err(OciError::Invalid {
                        what: format!("layer entry {path}"),
                        reason: format!("its parent {parent} is a symbolic link"),
                    });
                }
                ancestor = parent;
            }
            let dest = dir.join(path);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(io_err(format!("creating {}", parent.display())))?;
            }
            std::os::unix::fs::symlink(target, &dest).map_err(io_err(format!(
                "creating the symbolic link {} -> {target}",
                dest.display()
            )))?;
            written.push(path.clone());
        }
        written.sort();
        Ok(written)
    }

    /// The content of `path`, following links inside `allowed` (a predicate on
    /// root-relative paths) for at most 16 hops.
    pub(crate) fn resolve(
        &self,
        path: &str,
        allowed: &dyn Fn(&str) -> bool,
    ) -> Result<&[u8], String> {
        let mut current = path.to_string();
        for _ in 0..16 {
            match self.entries.get(&current) {
                Some(Unpacked::File(data)) => return Ok(data),
                Some(Unpacked::Hardlink(t)) => {
                    if !allowed(t) {
                        return Err(format!("{path} is a hard link to {t}, outside the bundle"));
                    }
                    current = t.clone();
                }
                Some(Unpacked::Symlink(t)) => {
                    let joined = if t.starts_with('/') {
                        t.clone()
                    } else {
                        let parent = current.rsplit_once('/').map(|(p, _)| p).unwrap_or("");
                        format!("{parent}/{t}")
                    };
                    let resolved = lexical_resolve(&joined).ok_or_else(|| {
                        format!("{path} is a symbolic link to {t}, outside the image root")
                    })?;
                    if !allowed(&resolved) {
                        return Err(format!(
                            "{path} is a symbolic link to {t}, outside the bundle"
                        ));
                    }
                    current = resolved;
                }
                None => {
                    return Err(format!(
                        "{path} is a link to {current}, which the image does not have"
                    ))
                }
            }
        }
        Err(format!("{path}: too many levels of links"))
    }
}

/// Resolves `.` and `..` without touching the file system; `None` if the path
/// climbs above the root.
fn lexical_resolve(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keep_all(_: &str) -> bool {
        true
    }

    #[test]
    fn build_is_reproducible_and_sorted() {
        let mut a = LayerBuilder::new();
        a.file("metadata/annotations.yaml", b"x".to_vec(), 0o644);
        a.file("manifests/b.yaml", b"b".to_vec(), 0o644);
        let mut b = LayerBuilder::new();
        b.file("manifests/b.yaml", b"b".to_vec(), 0o644);
        b.file("metadata/annotations.yaml", b"x".to_vec(), 0o644);
        let la = a.build(0).expect("build");
        let lb = b.build(0).expect("build");
        assert_eq!(la.digest, lb.digest);
        let blob = la.blob.to_vec().expect("bytes");
        assert_eq!(blob, lb.blob.to_vec().expect("bytes"));
        // Streamed through gzip, the bytes are those of gzipping the whole
        // tar at once (what layers were before they were streamed).
        let tar_bytes = a.tar(0, Vec::new()).expect("tar");
        assert_eq!(la.diff_id, sha256_digest(&tar_bytes));
        assert_eq!(blob, gzip(&tar_bytes).expect("gzip"));
        let mut fs = LayerFs::default();
        fs.apply(&blob, "l", &UnpackLimits::default(), &keep_all)
            .expect("apply");
        let names: Vec<_> = fs.entries.keys().cloned().collect();
        assert_eq!(names, vec!["manifests/b.yaml", "metadata/annotations.yaml"]);
    }

    #[test]
    fn spooled_layer_of_files_on_disk_is_the_in_memory_layer() {
        let dir = tempfile::tempdir().expect("tmp");
        let big: Vec<u8> = (0..300_000u32).flat_map(|i| i.to_be_bytes()).collect();
        std::fs::write(dir.path().join("big.json"), &big).expect("write");
        std::fs::write(dir.path().join("small.yaml"), b"a: 1\n").expect("write");
        let mut memory = LayerBuilder::new();
        memory.file("configs/p/big.json", big.clone(), 0o644);
        memory.file("configs/small.yaml", b"a: 1\n".to_vec(), 0o644);
        let mut disk = LayerBuilder::new();
        disk.file_from_disk("configs/p/big.json", &dir.path().join("big.json"), 0o644);
        disk.file_from_disk("configs/small.yaml", &dir.path().join("small.yaml"), 0o644);
        let (m, d) = (
            memory.build(7).expect("build"),
            disk.build_spooled(7).expect("spooled"),
        );
        assert!(matches!(d.blob, BlobBody::File(_)));
        assert_eq!((&m.digest, &m.diff_id), (&d.digest, &d.diff_id));
        assert_eq!(m.blob.to_vec().expect("m"), d.blob.to_vec().expect("d"));
        std::fs::remove_file(dir.path().join("small.yaml")).expect("rm");
        let e = disk.build_spooled(7).expect_err("a file went");
        let cause = std::error::Error::source(&e).map(|c| c.to_string());
        assert!(
            cause.as_deref().unwrap_or("").contains("small.yaml"),
            "{e}: {cause:?}"
        );
    }

    #[test]
    fn a_directory_keeps_its_mode_and_sticky_bit() {
        let mut l = LayerBuilder::new();
        l.dir_with_mode("tmp", 0o1777);
        l.dir("tmp");
        l.file("bin/x", b"x".to_vec(), 0o755);
        let tar_bytes = l.tar(0, Vec::new()).expect("tar");
        let mut archive = tar::Archive::new(tar_bytes.as_slice());
        let modes: Vec<(String, u32)> = archive
            .entries()
            .expect("entries")
            .map(|e| {
                let e = e.expect("entry");
                let path = e.path().expect("path").to_string_lossy().into_owned();
                (path, e.header().mode().expect("mode"))
            })
            .collect();
        assert_eq!(
            modes,
            vec![
                ("bin/".to_string(), 0o755),
                ("bin/x".to_string(), 0o755),
                ("tmp/".to_string(), 0o1777)
            ]
        );
    }

    fn tar_with(f: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        f(&mut b);
        b.into_inner().expect("tar")
    }

    #[test]
    fn rejects_dotdot_entries() {
        let data = tar_with(|b| {
            let mut h = tar::Header::new_gnu();
            h.set_size(1);
            h.set_entry_type(tar::EntryType::Regular);
            // set_path refuses `..`, so write the raw name field.
            let name = b"manifests/../../etc/passwd";
            h.as_old_mut().name[..name.len()].copy_from_slice(name);
            h.set_cksum();
            b.append(&h, &b"x"[..]).expect("append");
        });
        let mut fs = LayerFs::default();
        let err = fs
            .apply(&data, "l", &UnpackLimits::default(), &keep_all)
            .expect_err("must fail");
        assert!(err.to_string().contains(".."), "{err}");
    }

    #[test]
    fn links_stay_inside() {
        let data = tar_with(|b| {
            let mut h = tar::Header::new_gnu();
            h.set_size(1);
            h.set_entry_type(tar::EntryType::Regular);
            b.append_data(&mut h, "manifests/real.yaml", &b"a"[..])
                .expect("append");
            for (name, target) in [
                ("manifests/ok.yaml", "real.yaml"),
                ("manifests/out.yaml", "../../etc/passwd"),
                ("manifests/abs.yaml", "/etc/passwd"),
            ] {
                let mut h = tar::Header::new_gnu();
                h.set_size(0);
                h.set_entry_type(tar::EntryType::Symlink);
                b.append_link(&mut h, name, target).expect("link");
            }
        });
        let mut fs = LayerFs::default();
        fs.apply(&data, "l", &UnpackLimits::default(), &keep_all)
            .expect("apply");
        let allowed = |p: &str| p.starts_with("manifests/");
        assert_eq!(fs.resolve("manifests/ok.yaml", &allowed).expect("ok"), b"a");
        assert!(fs.resolve("manifests/out.yaml", &allowed).is_err());
        assert!(fs.resolve("manifests/abs.yaml", &allowed).is_err());
    }

    fn zstd(data: &[u8]) -> Vec<u8> {
        ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest)
    }

    #[test]
    fn reads_zstd_layers_of_many_frames() {
        let mut layer = LayerBuilder::new();
        layer.file("manifests/a.yaml", b"kind: A\n".repeat(1000), 0o644);
        layer.file(
            "metadata/annotations.yaml",
            b"annotations: {}\n".to_vec(),
            0o644,
        );
        let tar_bytes = layer.tar(0, Vec::new()).expect("tar");
        // A skippable frame, then the tar split over two frames, as
        // zstd:chunked writes them.
        let mut blob = vec![0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3];
        let (first, second) = tar_bytes.split_at(700);
        blob.extend(zstd(first));
        blob.extend(zstd(second));
        let mut fs = LayerFs::default();
        fs.apply(&blob, "l", &UnpackLimits::default(), &keep_all)
            .expect("apply");
        assert!(matches!(
            fs.entries.get("manifests/a.yaml"),
            Some(Unpacked::File(d)) if d.len() == 8000
        ));
        assert!(fs.entries.contains_key("metadata/annotations.yaml"));

        // Cut short: an error, not a partial layer.
        let mut fs = LayerFs::default();
        let cut = &blob[..blob.len() - 10];
        assert!(fs
            .apply(cut, "l", &UnpackLimits::default(), &keep_all)
            .is_err());
    }

    #[test]
    fn stops_gzip_and_zstd_bombs() {
        // 32 MiB of zeros compresses to a few KiB either way.
        let zeros = vec![0u8; 32 * 1024 * 1024];
        let data = tar_with(|b| {
            let mut h = tar::Header::new_gnu();
            h.set_size(zeros.len() as u64);
            h.set_entry_type(tar::EntryType::Regular);
            b.append_data(&mut h, "junk/zeros", zeros.as_slice())
                .expect("append");
        });
        let limits = UnpackLimits {
            max_decompressed: 8 * 1024 * 1024,
            ..UnpackLimits::default()
        };
        for blob in [gzip(&data).expect("gzip"), zstd(&data)] {
            assert!(blob.len() < 4 * 1024 * 1024, "{}", blob.len());
            let mut fs = LayerFs::default();
            let err = fs
                .apply(&blob, "l", &limits, &|p| p.starts_with("manifests/"))
                .expect_err("must stop");
            assert!(matches!(err, OciError::TooLarge { .. }), "{err}");
        }
    }

    #[test]
    fn caps_file_size_and_entry_count() {
        let data = tar_with(|b| {
            let mut h = tar::Header::new_gnu();
            h.set_size(2048);
            b.append_data(&mut h, "manifests/big.yaml", &[b'a'; 2048][..])
                .expect("append");
        });
        let limits = UnpackLimits {
            max_file: 1024,
            ..UnpackLimits::default()
        };
        let err = LayerFs::default()
            .apply(&data, "l", &limits, &keep_all)
            .expect_err("file over the cap");
        assert!(
            matches!(&err, OciError::TooLarge { detail, limit: 1024, .. } if detail.contains("manifests/big.yaml")),
            "{err}"
        );
        // A big file outside the bundle is read through, not kept: no error.
        LayerFs::default()
            .apply(&data, "l", &limits, &|p| p.starts_with("metadata/"))
            .expect("skipped file");

        let many = tar_with(|b| {
            for i in 0..20 {
                let mut h = tar::Header::new_gnu();
                h.set_size(1);
                b.append_data(&mut h, format!("manifests/{i}.yaml"), &b"x"[..])
                    .expect("append");
            }
        });
        let limits = UnpackLimits {
            max_entries: 10,
            ..UnpackLimits::default()
        };
        let err = LayerFs::default()
            .apply(&gzip(&many).expect("gzip"), "l", &limits, &keep_all)
            .expect_err("too many entries");
        assert!(err.to_string().contains("more than 10 entries"), "{err}");
    }

    #[test]
    fn hard_links_leaving_the_bundle_are_not_followed() {
        let data = tar_with(|b| {
            let mut h = tar::Header::new_gnu();
            h.set_size(6);
            b.append_data(&mut h, "etc/shadow", &b"secret"[..])
                .expect("append");
            let mut h = tar::Header::new_gnu();
            h.set_size(0);
            h.set_entry_type(tar::EntryType::Link);
            b.append_link(&mut h, "manifests/x.yaml", "etc/shadow")
                .expect("link");
            let mut h = tar::Header::new_gnu();
            h.set_size(0);
            h.set_entry_type(tar::EntryType::Link);
            b.append_link(&mut h, "manifests/up.yaml", "../etc/shadow")
                .expect("link");
        });
        let allowed = |p: &str| p.starts_with("manifests/") || p.starts_with("metadata/");
        let mut fs = LayerFs::default();
        // `..` in a hard link target climbs out of the root: the layer is refused.
        let err = fs
            .apply(&data, "l", &UnpackLimits::default(), &allowed)
            .expect_err("hard link with ..");
        assert!(err.to_string().contains(".."), "{err}");
        let data = tar_with(|b| {
            let mut h = tar::Header::new_gnu();
            h.set_size(6);
            b.append_data(&mut h, "etc/shadow", &b"secret"[..])
                .expect("append");
            let mut h = tar::Header::new_gnu();
            h.set_size(0);
            h.set_entry_type(tar::EntryType::Link);
            b.append_link(&mut h, "manifests/x.yaml", "etc/shadow")
                .expect("link");
        });
        let mut fs = LayerFs::default();
        fs.apply(&data, "l", &UnpackLimits::default(), &keep_all)
            .expect("apply");
        let err = fs
            .resolve("manifests/x.yaml", &allowed)
            .expect_err("outside the bundle");
        assert!(
            err.contains("hard link") && err.contains("outside the bundle"),
            "{err}"
        );
    }

    #[test]
    fn whiteouts_delete() {
        let l1 = tar_with(|b| {
            let mut h = tar::Header::new_gnu();
            h.set_size(1);
            b.append_data(&mut h, "manifests/a.yaml", &b"a"[..])
                .expect("append");
        });
        let l2 = tar_with(|b| {
            let mut h = tar::Header::new_gnu();
            h.set_size(0);
            b.append_data(&mut h, "manifests/.wh.a.yaml", &b""[..])
                .expect("append");
        });
        let mut fs = LayerFs::default();
        fs.apply(&l1, "1", &UnpackLimits::default(), &keep_all)
            .expect("1");
        fs.apply(&l2, "2", &UnpackLimits::default(), &keep_all)
            .expect("2");
        assert!(fs.entries.is_empty());
    }

    #[test]
    fn write_to_writes_files_then_links_and_never_through_a_link() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut fs = LayerFs::default();
        fs.entries.insert(
            "manifests/a.yaml".into(),
            Unpacked::File(b"a: 1\n".to_vec()),
        );
        fs.entries.insert(
            "manifests/hard.yaml".into(),
            Unpacked::Hardlink("manifests/a.yaml".into()),
        );
        fs.entries.insert(
            "manifests/soft.yaml".into(),
            Unpacked::Symlink("a.yaml".into()),
        );
        let written = fs.write_to(dir.path()).expect("write");
        assert_eq!(
            written,
            vec![
                "manifests/a.yaml",
                "manifests/hard.yaml",
                "manifests/soft.yaml"
            ]
        );
        let m = dir.path().join("manifests");
        assert_eq!(std::fs::read(m.join("hard.yaml")).expect("hard"), b"a: 1\n");
        assert!(!std::fs::symlink_metadata(m.join("hard.yaml"))
            .expect("meta")
            .file_type()
            .is_symlink());
        assert_eq!(
            std::fs::read_link(m.join("soft.yaml")).expect("link"),
            std::path::Path::new("a.yaml")
        );
        // A link under a link would be created through it, outside the dir.
        let outside = tempfile::tempdir().expect("tmp");
        let dir = tempfile::tempdir().expect("tmp");
        let mut fs = LayerFs::default();
        fs.entries.insert(
            "escape".into(),
            Unpacked::Symlink(outside.path().display().to_string()),
        );
        fs.entries
            .insert("escape/x".into(), Unpacked::Symlink("/etc/passwd".into()));
        let err = fs.write_to(dir.path()).expect_err("refused");
        assert!(err.to_string().contains("escape/x"), "{err}");
        assert!(std::fs::read_dir(outside.path())
            .expect("read")
            .next()
            .is_none());
        // A file under a link: the file is written first, in a directory,
        // and the link is then refused.
        let dir = tempfile::tempdir().expect("tmp");
        let mut fs = LayerFs::default();
        fs.entries.insert(
            "d".into(),
            Unpacked::Symlink(outside.path().display().to_string()),
        );
        fs.entries
            .insert("d/f".into(), Unpacked::File(b"x".to_vec()));
        assert!(fs.write_to(dir.path()).is_err());
        assert!(std::fs::read_dir(outside.path())
            .expect("read")
            .next()
            .is_none());
    }
}
