//! The binary's allocator, chosen by command before the first allocation.
//!
//! CPU-bound batch jobs (`bundle validate`, `graph check`, `render`,
//! `migrate`, `validate`) build and drop millions of small located-YAML and
//! JSON nodes; under glibc's malloc that was a quarter of their CPU, and
//! mimalloc takes about 30% off their user time (BENCHMARKS.md,
//! "mimalloc"), for two to three times the peak RSS. Two command groups
//! keep glibc's malloc, because their memory is what counts: `serve`
//! (long-running: mimalloc's per-thread heaps raised its idle RSS from 15
//! to 26 MiB and its working set under 64 clients from ~30 to ~100 MiB) and
//! `index`/`registry` (adding from images waits on the registry; mimalloc
//! saved no wall time there and raised the peak from 45 to 120 MiB). The
//! command is the first word of the command line that is not a flag, the
//! one after `opm` for the opm personality.
//!
//! `OLM_CATALOG_ALLOCATOR=system` or `=mimalloc` overrides the choice, for
//! measuring (heap profilers see only glibc's malloc) or to trade CPU for
//! memory.
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
            let c = if wants_system_allocator() {
                SYSTEM
            } else {
                MIMALLOC
            };
            CHOICE.store(c, Ordering::Relaxed);
            c
        }
        c => c,
    }
}

/// Whether this process's command keeps glibc's malloc, read without
/// allocating. A command line too long for the buffer is judged on its
/// start, where the command is.
fn wants_system_allocator() -> bool {
    // SAFETY: a NUL-terminated name; getenv neither allocates nor keeps the
    // pointer, and nothing sets the environment this early.
    let forced = unsafe { libc::getenv(c"OLM_CATALOG_ALLOCATOR".as_ptr()) };
    if !forced.is_null() {
        // SAFETY: getenv returned a NUL-terminated string owned by libc.
        let value = unsafe { std::ffi::CStr::from_ptr(forced) }.to_bytes();
        match value {
            b"system" => return true,
            b"mimalloc" => return false,
            _ => {}
        }
    }
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
    system_allocator_command(&buf[..len.min(buf.len())])
}

/// Whether a command line (NUL-separated, as the kernel gives it) runs
/// `serve`, `index` or `registry`, natively or through the opm personality
/// (the program named `opm`, or `olm-catalog opm ...`).
fn system_allocator_command(cmdline: &[u8]) -> bool {
    let mut args = cmdline.split(|&b| b == 0);
    let program = args.next().unwrap_or_default();
    let name = program.rsplit(|&b| b == b'/').next().unwrap_or_default();
    // Skips flags, and the value of the one global flag that takes its
    // value as the next word (`--color auto`), which is not the command.
    let mut words = std::iter::from_fn({
        let mut after_color = false;
        move || loop {
            let a = args.next()?;
            let value_of_color = std::mem::replace(&mut after_color, a == b"--color");
            if !value_of_color && !a.is_empty() && !a.starts_with(b"-") {
                return Some(a);
            }
        }
    });
    let mut command = words.next();
    if name != b"opm" && command == Some(b"opm") {
        command = words.next();
    }
    matches!(command, Some(b"serve" | b"index" | b"registry"))
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
    use super::system_allocator_command;

    #[test]
    fn serve_and_index_command_lines_use_the_system_allocator() {
        for yes in [
            &b"olm-catalog\0serve\0index.db\0"[..],
            b"/bin/opm\0registry\0serve\0--database\0/database/index.db\0",
            b"opm\0serve\0/configs\0--cache-dir=/tmp/cache\0",
            b"olm-catalog\0opm\0serve\0/configs",
            b"olm-catalog\0-q\0index\0add\0-d\0i.db\0",
            b"/usr/bin/opm\0index\0add\0--bundles\0a,b\0",
            b"olm-catalog\0--color\0never\0serve\0index.db\0",
            b"olm-catalog\0--color=always\0index\0add\0-d\0i.db\0",
        ] {
            assert!(
                system_allocator_command(yes),
                "{}",
                String::from_utf8_lossy(yes)
            );
        }
        for no in [
            &b"olm-catalog\0bundle\0validate\0dir\0"[..],
            b"olm-catalog\0render\0index\0",
            b"olm-catalog\0render\0serve.db\0",
            b"opm\0render\0index.db\0",
            b"olm-catalog\0opm\0validate\0dir\0",
            b"olm-catalog\0--color\0auto\0render\0serve.db\0",
            b"olm-catalog\0",
            b"",
        ] {
            assert!(
                !system_allocator_command(no),
                "{}",
                String::from_utf8_lossy(no)
            );
        }
    }
}
