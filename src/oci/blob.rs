//! The bytes of a blob to push: in memory, or spooled to a temporary file
//! when a blob is too large to hold (the layer of a whole catalog can be
//! hundreds of MiB compressed).

use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;

use sha2::{Digest as _, Sha256};

/// The bytes of a blob.
#[derive(Clone, Debug)]
pub enum BlobBody {
    /// Held in memory.
    Bytes(Arc<Vec<u8>>),
    /// Written to a temporary file, removed when the last clone goes.
    File(Arc<SpooledBlob>),
}

impl From<Vec<u8>> for BlobBody {
    fn from(data: Vec<u8>) -> BlobBody {
        BlobBody::Bytes(Arc::new(data))
    }
}

impl BlobBody {
    /// Its size in bytes.
    pub fn len(&self) -> u64 {
        match self {
            BlobBody::Bytes(b) => b.len() as u64,
            BlobBody::File(f) => f.len,
        }
    }

    /// True when it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every byte, read into memory (a spooled blob from its file).
    pub fn to_vec(&self) -> io::Result<Vec<u8>> {
        match self {
            BlobBody::Bytes(b) => Ok(b.as_ref().clone()),
            BlobBody::File(f) => std::fs::read(f.path()),
        }
    }

    /// A buffered reader over its bytes (a spooled blob is read from its
    /// file as it is consumed, not loaded).
    pub fn reader(&self) -> io::Result<Box<dyn io::BufRead + '_>> {
        Ok(match self {
            BlobBody::Bytes(b) => Box::new(b.as_slice()),
            BlobBody::File(f) => Box::new(io::BufReader::with_capacity(
                256 * 1024,
                std::fs::File::open(f.path())?,
            )),
        })
    }

    /// Copies every byte to `out`; the `sha256:` digest of what was copied.
    pub fn copy_to(&self, out: &mut dyn Write) -> io::Result<String> {
        match self {
            BlobBody::Bytes(b) => {
                out.write_all(b)?;
                Ok(super::media::sha256_digest(b))
            }
            BlobBody::File(f) => {
                let mut file = std::fs::File::open(f.path())?;
                let mut hashing = HashingWriter::new(out);
                io::copy(&mut file, &mut hashing)?;
                Ok(hashing.finish().0)
            }
        }
    }

    /// Reads the blob in `chunk`-byte pieces, one after the other (a file
    /// is opened when the first piece is asked for).
    pub fn chunks(
        &self,
        chunk: usize,
    ) -> impl futures::Stream<Item = Result<Vec<u8>, io::Error>> + Send + 'static {
        let body = self.clone();
        let state: (u64, Option<std::fs::File>) = (0, None);
        futures::stream::try_unfold(state, move |(offset, file)| {
            let body = body.clone();
            async move {
                if offset >= body.len() {
                    return Ok(None);
                }
                let (piece, file) = match &body {
                    BlobBody::Bytes(b) => {
                        let start = offset as usize;
                        let end = (start + chunk).min(b.len());
                        (b[start..end].to_vec(), None)
                    }
                    BlobBody::File(f) => {
                        let mut file = match file {
                            Some(file) => file,
                            None => std::fs::File::open(f.path())?,
                        };
                        let mut piece = Vec::with_capacity(chunk);
                        (&mut file).take(chunk as u64).read_to_end(&mut piece)?;
                        if piece.is_empty() {
                            return Err(io::Error::new(
                                io::ErrorKind::UnexpectedEof,
                                format!("{} is shorter than its blob", f.path().display()),
                            ));
                        }
                        (piece, Some(file))
                    }
                };
                let next = offset + piece.len() as u64;
                Ok(Some((piece, (next, file))))
            }
        })
    }
}

/// A blob in a temporary file.
#[derive(Debug)]
pub struct SpooledBlob {
    path: tempfile::TempPath,
    len: u64,
}

impl SpooledBlob {
    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Where a blob is written as it is made: a temporary file, with the size
/// and digest of what went in.
pub struct SpoolWriter {
    inner: HashingWriter<io::BufWriter<tempfile::NamedTempFile>>,
}

impl SpoolWriter {
    /// A new temporary file (in the system's temporary directory).
    pub fn new() -> io::Result<SpoolWriter> {
        let file = tempfile::NamedTempFile::new()?;
        Ok(SpoolWriter {
            inner: HashingWriter::new(io::BufWriter::with_capacity(1 << 20, file)),
        })
    }

    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        self.inner.count
    }

    /// True when nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Closes the file: the blob and its `sha256:` digest.
    pub fn finish(self) -> io::Result<(BlobBody, String)> {
        let (digest, len, buffered) = self.inner.finish();
        let file = buffered.into_inner().map_err(|e| e.into_error())?;
        let spooled = SpooledBlob {
            path: file.into_temp_path(),
            len,
        };
        Ok((BlobBody::File(Arc::new(spooled)), digest))
    }
}

impl Write for SpoolWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Passes bytes on and hashes them (SHA-256) and counts them on the way.
pub struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
    count: u64,
}

impl<W: Write> HashingWriter<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> HashingWriter<W> {
        HashingWriter {
            inner,
            hasher: Sha256::new(),
            count: 0,
        }
    }

    /// The `sha256:` digest and count of what was written, and `inner`.
    pub fn finish(self) -> (String, u64, W) {
        let digest = format!("sha256:{}", hex::encode(self.hasher.finalize()));
        (digest, self.count, self.inner)
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.count += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::TryStreamExt;

    #[test]
    fn spooled_blob_reads_back_in_chunks_with_its_digest() {
        let data: Vec<u8> = (0..10_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let mut w = SpoolWriter::new().expect("spool");
        w.write_all(&data).expect("write");
        let (body, digest) = w.finish().expect("finish");
        assert_eq!(digest, crate::oci::media::sha256_digest(&data));
        assert_eq!(body.len(), data.len() as u64);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("rt");
        for b in [body.clone(), BlobBody::from(data.clone())] {
            let pieces: Vec<Vec<u8>> = rt.block_on(b.chunks(4096).try_collect()).expect("chunks");
            assert_eq!(pieces.len(), data.len().div_ceil(4096));
            assert_eq!(pieces.concat(), data);
            let mut copy = Vec::new();
            assert_eq!(b.copy_to(&mut copy).expect("copy"), digest);
            assert_eq!(copy, data);
        }
        let path = match &body {
            BlobBody::File(f) => f.path().to_path_buf(),
            BlobBody::Bytes(_) => unreachable!("spooled"),
        };
        drop(body);
        assert!(!path.exists(), "the spool file goes with the blob");
    }
}
