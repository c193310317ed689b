//! The binary's allocator, chosen by command before the first allocation.
//!
//! Batch jobs (`bundle validate`, `graph check`, `render`, `index add`)
//! build and drop millions of small located-YAML and JSON nodes; under
//! glibc's malloc that was a quarter of their CPU, and mimalloc takes about
//! 30% off their user time (BENCHMARKS.md, "mimalloc"). A long-running
//! `serve` is the opposite case: mimalloc's per-thread heaps raised its idle
//! RSS from 15 to 26 MiB and its working set under 64 clients from ~30 to
//! ~100 MiB, while glibc's malloc keeps it small. So a command line with a
//! `serve` word (`serve`, `registry serve`, `opm serve`) allocates with the
//! system allocator, and every other with mimalloc.
//!
//! The choice is made once, at the first allocation (before `main`, on the
//! only thread), from `/proc/self/cmdline` read into a stack buffer, and
//! never changes, so every block is freed by the allocator that made it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU8, Ordering};

const UNDECIDED: u8 = 0;
const SYSTEM: u8 = 1;
const MIMALLOC: u8 = 2;

static CHOICE: AtomicU8 = AtomicU8::new(UNDECIDED);

/// Dispatches to glibc's malloc or to mimalloc (see the module documentation).
pub struct ByCommand;

fn choice() -> u8 {
    match CHOICE.load(Ordering::Relaxed) {
        UNDECIDED => {
            let c = if serves() { SYSTEM } else { MIMALLOC };
            CHOICE.store(c, Ordering::Relaxed);
            c
        }
        c => c,
    }
}

/// Whether an argument after the program's name is `serve`, read without
/// allocating. A command line too long for the buffer is judged on its
/// start, where the subcommand is.
fn serves() -> bool {
    let mut buf = [0u8; 4096];
    // SAFETY: a NUL-terminated path, a buffer of the length passed, and a
    // descriptor closed once; no allocation happens here.
    let len = unsafe {
        let fd = libc::open(
            c"/proc/self/cmdline".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return false;
        }
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        n
    };
    let Ok(len) = usize::try_from(len) else {
        return false;
    };
    is_serve_command(&buf[..len.min(buf.len())])
}

/// Whether a command line (NUL-separated, as the kernel gives it) has a
/// `serve` argument after the program's name.
fn is_serve_command(cmdline: &[u8]) -> bool {
    cmdline
        .split(|&b| b == 0)
        .skip(1)
        .any(|arg| arg == b"serve")
}

// SAFETY: every call goes to the allocator `choice()` names, which is the
// same for the whole life of the process, so each block is freed, resized
// or zero-allocated by the allocator that owns it.
unsafe impl GlobalAlloc for ByCommand {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match choice() {
            SYSTEM => unsafe { System.alloc(layout) },
            _ => unsafe { mimalloc::MiMalloc.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match choice() {
            SYSTEM => unsafe { System.alloc_zeroed(layout) },
            _ => unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match choice() {
            SYSTEM => unsafe { System.dealloc(ptr, layout) },
            _ => unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match choice() {
            SYSTEM => unsafe { System.realloc(ptr, layout, new_size) },
            _ => unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_serve_command;

    #[test]
    fn serve_command_lines_use_the_system_allocator() {
        for yes in [
            &b"olm-catalog\0serve\0index.db\0"[..],
            b"/bin/opm\0registry\0serve\0--database\0/database/index.db\0",
            b"opm\0serve\0/configs\0--cache-dir=/tmp/cache\0",
            b"olm-catalog\0opm\0serve\0/configs",
        ] {
            assert!(is_serve_command(yes), "{}", String::from_utf8_lossy(yes));
        }
        for no in [
            &b"olm-catalog\0bundle\0validate\0dir\0"[..],
            b"serve\0render\0index.db\0",
            b"olm-catalog\0render\0serve.db\0",
            b"",
        ] {
            assert!(!is_serve_command(no), "{}", String::from_utf8_lossy(no));
        }
    }
}
