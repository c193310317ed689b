//! Catalog files that are no catalog text: a file of zeros (what a
//! decompression bomb unpacks to) or one larger than
//! `fbc::text::MAX_CATALOG_FILE_BYTES`. Every reader of a catalog refuses
//! it at its first bad byte or by its size, in a bounded memory, naming the
//! file (and the image it came from), and leaves nothing in the temporary
//! directory. The bombs are made at run time: sparse files on disk, and a
//! gzip layer assembled from one compressed MiB of zeros repeated.

use crate::common;
use crate::registry;

use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// The peak resident memory any command below may reach.
const RSS_LIMIT: u64 = 256 << 20;
/// A bomb larger than the catalog file limit (1 GiB).
const HUGE: u64 = 2 << 30;
/// A bomb under that limit and larger than [`RSS_LIMIT`]: refused by its
/// content, which a reader holding the file whole would exceed the limit
/// to see.
const LARGE: u64 = 320 << 20;

/// What a command answered, and its peak resident memory.
struct Measured {
    code: i32,
    /// Standard output and error.
    said: String,
    max_rss: u64,
}

/// Runs `olm-catalog args` with `TMPDIR=tmp` to its end and measures its
/// peak resident set size (`wait4`'s `ru_maxrss`, of this child alone).
fn run_measured(args: &[&str], tmp: &Path) -> Measured {
    // Reaped by `wait4` below, which `Child::wait` cannot stand in for.
    #[allow(clippy::zombie_processes)]
    let mut child = Command::new(common::bin())
        .args(args)
        .env("TMPDIR", tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start olm-catalog");
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet waited for; both pointers are
    // to live locals.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    Measured {
        code,
        said: stdout.join().expect("stdout") + &stderr.join().expect("stderr"),
        max_rss: usage.ru_maxrss as u64 * 1024,
    }
}

/// Asserts the command was refused as the bomb deserves: exit `code`, a
/// message naming `names`, under [`RSS_LIMIT`], `tmp` left empty.
fn assert_refused(what: &str, m: &Measured, code: i32, names: &[&str], tmp: &Path) {
    assert_eq!(m.code, code, "{what}: exit code; it said:\n{}", m.said);
    for n in names {
        assert!(
            m.said.contains(n),
            "{what}: the message does not name {n}:\n{}",
            m.said
        );
    }
    assert!(
        m.max_rss <= RSS_LIMIT,
        "{what}: peak RSS {} MiB, more than {} MiB",
        m.max_rss >> 20,
        RSS_LIMIT >> 20
    );
    let left: Vec<_> = std::fs::read_dir(tmp)
        .expect("tmp")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert!(
        left.is_empty(),
        "{what} left {left:?} in the temporary directory"
    );
}

/// A catalog directory: the kube-green package of the corpus, and `bomb`
/// beside it, a sparse file of `size` zeros (no disk is written).
fn catalog_with_bomb(dir: &Path, size: u64) -> std::path::PathBuf {
    common::copy_dir(
        &common::corpus().join("catalogs/v4.18/kube-green"),
        &dir.join("kube-green"),
    );
    let bomb = dir.join("zz-bomb/catalog.yaml");
    std::fs::create_dir_all(bomb.parent().expect("parent")).expect("mkdir");
    let f = std::fs::File::create(&bomb).expect("bomb");
    f.set_len(size).expect("sparse bomb");
    bomb
}

/// `render`, `validate` and `serve` of a catalog directory holding a file
/// of zeros: refused by its size above the limit, by its first byte under
/// it, never read whole. (`validate` reports the file as a finding, exit 1;
/// the others fail, exit 2.)
#[test]
fn a_file_of_zeros_in_a_catalog_directory_is_refused_unread() {
    for (size, why) in [
        (HUGE, "more than the 1073741824"),
        (LARGE, "control character"),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let tmp = tempfile::tempdir().expect("tempdir");
        let bomb = catalog_with_bomb(dir.path(), size);
        let catalog = dir.path().to_str().expect("utf-8");
        let bomb = bomb.to_str().expect("utf-8");
        for (args, code) in [
            (vec!["render", catalog, "-o", "json"], 2),
            (vec!["validate", catalog], 1),
            (vec!["serve", catalog, "--port", "0"], 2),
            (vec!["serve", catalog, "--http", "127.0.0.1:0"], 2),
        ] {
            let what = format!("{} of a {size}-byte file", args.join(" "));
            let m = run_measured(&args, tmp.path());
            assert_refused(&what, &m, code, &[bomb, why], tmp.path());
        }
    }
}

/// A gzip layer (built and returned as a blob with its digest) whose tar
/// holds one file, `path`, of `size` zeros (`size` a multiple of 1 MiB).
/// One MiB of zeros is compressed once after a full flush, which makes its
/// bytes independent of what came before, and repeated: gigabytes of
/// zeros in a few MB, made in well under a second.
fn zeros_layer(path: &str, size: u64) -> (olm_catalog::oci::BlobBody, String) {
    use flate2::{Compress, Compression, FlushCompress};
    const MIB: usize = 1 << 20;
    assert_eq!(size % MIB as u64, 0);
    let mut header = tar::Header::new_gnu();
    header.set_path(path).expect("path");
    header.set_size(size);
    header.set_mode(0o644);
    header.set_entry_type(tar::EntryType::Regular);
    header.set_cksum();
    let deflate = |c: &mut Compress, data: &[u8], flush| {
        let mut out = Vec::with_capacity(data.len() + 1024);
        let before = c.total_in();
        c.compress_vec(data, &mut out, flush).expect("deflate");
        assert_eq!(
            c.total_in() - before,
            data.len() as u64,
            "all of it compressed"
        );
        out
    };
    let mut c = Compress::new(Compression::best(), false);
    let zeros = vec![0u8; MIB];
    let head = deflate(&mut c, header.as_bytes(), FlushCompress::Full);
    let mib = deflate(&mut c, &zeros, FlushCompress::Full);
    // The tar's end: two blocks of zeros (the file needs no padding).
    let end = deflate(&mut c, &zeros[..1024], FlushCompress::Finish);
    let mut crc = flate2::Crc::new();
    crc.update(header.as_bytes());
    let mut blob = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    blob.extend_from_slice(&head);
    for _ in 0..size / MIB as u64 {
        blob.extend_from_slice(&mib);
        crc.update(&zeros);
    }
    blob.extend_from_slice(&end);
    crc.update(&zeros[..1024]);
    blob.extend_from_slice(&crc.sum().to_le_bytes());
    blob.extend_from_slice(&crc.amount().to_le_bytes());
    let digest = olm_catalog::oci::media::sha256_digest(&blob);
    (olm_catalog::oci::BlobBody::from(blob), digest)
}

/// `render IMAGE`, `migrate IMAGE` and `serve IMAGE` of a catalog image
/// whose one file is zeros: the image is refused as it is unpacked, by the
/// file's size (2 GiB, never written) or by its first byte (320 MiB),
/// naming the image and the file's path in it.
#[test]
fn a_catalog_image_of_zeros_is_refused_as_it_is_unpacked() {
    let reg = registry::Registry::start();
    for (size, why) in [
        (HUGE, "more than the 1073741824"),
        (LARGE, "control character"),
    ] {
        let (layer, digest) = zeros_layer("configs/bomb/catalog.yaml", size);
        assert!(layer.len() < 8 << 20, "the layer is {} bytes", layer.len());
        // The layer decompresses to the tar it claims to be.
        let bytes = layer.to_vec().expect("layer bytes");
        let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(bytes.as_slice()));
        {
            let mut entries = tar.entries().expect("entries");
            let first = entries.next().expect("an entry").expect("entry");
            let path = first.path().expect("path");
            assert_eq!(path.to_str(), Some("configs/bomb/catalog.yaml"));
            assert_eq!(first.size(), size);
        }
        let tag = format!("v{}", size >> 20);
        registry::push_one_layer_image(
            &reg.host(),
            "bomb/catalog",
            &tag,
            (&digest, &layer),
            &serde_json::json!({
                "architecture": "amd64", "os": "linux",
                "config": {"Labels": {"operators.operatorframework.io.index.configs.v1": "/configs"}},
                "rootfs": {"type": "layers", "diff_ids": []},
            }),
        );
        let image = format!("{}/bomb/catalog:{tag}", reg.host());
        let tmp = tempfile::tempdir().expect("tempdir");
        let out = tempfile::tempdir().expect("tempdir");
        let migrated = out.path().join("migrated");
        let migrated = migrated.to_str().expect("utf-8");
        for args in [
            vec!["render", &image, "-o", "json"],
            vec!["migrate", &image, migrated],
            vec!["serve", &image, "--port", "0"],
        ] {
            let what = format!("{} of a {size}-byte file", args.join(" "));
            let m = run_measured(&args, tmp.path());
            assert_refused(
                &what,
                &m,
                2,
                &[&image, "/configs/bomb/catalog.yaml", why],
                tmp.path(),
            );
        }
    }
}
