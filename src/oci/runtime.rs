//! The project's own image, made without a daemon: a layer holding the
//! running `olm-catalog` executable at `/bin/olm-catalog` (and
//! `/bin/grpc_health_probe` and `/bin/opm`, links to it) and, when it is
//! dynamically linked, its ELF interpreter and every shared library it needs
//! (recursively), copied from the host at the paths the loader searches.
//!
//! `index build --base self` puts the database layer on top of it, so the
//! index image runs by itself (entrypoint `/bin/olm-catalog`, user 65532)
//! with no base image to pull. The layer is reproducible like every layer
//! here (sorted entries, owner 0:0, fixed mtimes, fixed gzip): the same
//! executable and libraries give the same digest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::layer::{BuiltLayer, LayerBuilder};
use super::media::Platform;
use super::OciError;

/// Where the executable is in the image (root-relative).
pub const RUNTIME_BIN: &str = "bin/olm-catalog";
/// Where `grpc_health_probe` is in the image: a symbolic link to the
/// executable, which acts as the probe when started under that name (OLM's
/// catalog pods run `grpc_health_probe -addr=:50051` as their exec probe).
pub const RUNTIME_PROBE: &str = "bin/grpc_health_probe";
/// Where `opm` is in the image: a symbolic link to the executable, which
/// accepts opm's command lines when started under that name, so a
/// Dockerfile or CatalogSource written for opm's images (`/bin/opm serve
/// /configs`, `/bin/opm registry serve`) runs unchanged.
pub const RUNTIME_OPM: &str = "bin/opm";
/// The user the image runs as (distroless' `nonroot`).
pub const RUNTIME_USER: &str = "65532:65532";

/// What an ELF executable or library needs from the system to load.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ElfDeps {
    /// `PT_INTERP`: the dynamic loader's path, if dynamically linked.
    pub interpreter: Option<String>,
    /// `DT_NEEDED`: the shared libraries' names, in order.
    pub needed: Vec<String>,
}

fn read_u16(d: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(d.get(at..at + 2)?.try_into().ok()?))
}
fn read_u32(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?))
}
fn read_u64(d: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(d.get(at..at + 8)?.try_into().ok()?))
}

fn c_string(d: &[u8], at: usize) -> Option<String> {
    let rest = d.get(at..)?;
    let end = rest.iter().position(|&b| b == 0)?;
    String::from_utf8(rest[..end].to_vec()).ok()
}

/// A file that is not a 64-bit little-endian ELF file this reader follows.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ElfError(pub String);

/// Reads `PT_INTERP` and `DT_NEEDED` of a 64-bit little-endian ELF file
/// (x86-64, arm64, ppc64le, riscv64: what Linux containers run).
pub fn elf_deps(data: &[u8]) -> Result<ElfDeps, ElfError> {
    read_elf_deps(data).map_err(ElfError)
}

fn read_elf_deps(data: &[u8]) -> Result<ElfDeps, String> {
    if data.get(..4) != Some(b"\x7fELF") {
        return Err("not an ELF file".into());
    }
    if data.get(4) != Some(&2) || data.get(5) != Some(&1) {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let bad = || "truncated or malformed ELF headers".to_string();
    let phoff = read_u64(data, 0x20).ok_or_else(bad)? as usize;
    let phentsize = read_u16(data, 0x36).ok_or_else(bad)? as usize;
    let phnum = read_u16(data, 0x38).ok_or_else(bad)? as usize;
    if phentsize < 56 {
        return Err(bad());
    }
    // (vaddr, offset, filesz) of PT_LOAD segments, to map DT_STRTAB.
    let mut loads = Vec::new();
    let mut dynamic = None;
    let mut deps = ElfDeps::default();
    for i in 0..phnum {
        let ph = phoff
            .checked_add(i.checked_mul(phentsize).ok_or_else(bad)?)
            .ok_or_else(bad)?;
        let p_type = read_u32(data, ph).ok_or_else(bad)?;
        let offset = read_u64(data, ph + 8).ok_or_else(bad)? as usize;
        let vaddr = read_u64(data, ph + 16).ok_or_else(bad)?;
        let filesz = read_u64(data, ph + 32).ok_or_else(bad)? as usize;
        match p_type {
            1 => loads.push((vaddr, offset, filesz)),
            2 => dynamic = Some((offset, filesz)),
            3 => deps.interpreter = Some(c_string(data, offset).ok_or_else(bad)?),
            _ => {}
        }
    }
    let Some((dyn_off, dyn_size)) = dynamic else {
        return Ok(deps);
    };
    let mut strtab = None;
    let mut needed_offsets = Vec::new();
    for at in (dyn_off..dyn_off.saturating_add(dyn_size)).step_by(16) {
        let tag = read_u64(data, at).ok_or_else(bad)?;
        let val = read_u64(data, at + 8).ok_or_else(bad)?;
        match tag {
            0 => break,
            1 => needed_offsets.push(val as usize),
            5 => strtab = Some(val),
            _ => {}
        }
    }
    if needed_offsets.is_empty() {
        return Ok(deps);
    }
    let strtab = strtab.ok_or("DT_NEEDED without DT_STRTAB")?;
    let strtab_off = loads
        .iter()
        .find(|(v, _, size)| strtab >= *v && strtab < v + *size as u64)
        .map(|(v, off, _)| (strtab - v) as usize + off)
        .ok_or("DT_STRTAB outside every loaded segment")?;
    for n in needed_offsets {
        deps.needed
            .push(c_string(data, strtab_off.saturating_add(n)).ok_or_else(bad)?);
    }
    Ok(deps)
}

/// The OCI architecture name of this build's CPU.
pub fn host_platform() -> Platform {
    let architecture = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "powerpc64" => "ppc64le",
        "riscv64" => "riscv64",
        "s390x" => "s390x",
        other => other,
    };
    Platform {
        architecture: architecture.to_string(),
        os: "linux".to_string(),
        os_version: None,
        os_features: None,
        variant: None,
    }
}

/// Directories searched for shared libraries, as the Debian/Ubuntu and
/// Fedora loaders search them without an `ld.so.cache`.
pub fn library_dirs() -> Vec<String> {
    let triplet = format!("{}-linux-gnu", std::env::consts::ARCH);
    vec![
        format!("/lib/{triplet}"),
        format!("/usr/lib/{triplet}"),
        "/lib64".into(),
        "/usr/lib64".into(),
        "/lib".into(),
        "/usr/lib".into(),
    ]
}

/// The runtime layer and what went into it.
#[derive(Debug)]
pub struct RuntimeLayer {
    /// The layer.
    pub layer: BuiltLayer,
    /// Root-relative paths of its files, sorted.
    pub files: Vec<String>,
    /// The platform it runs on (this machine's).
    pub platform: Platform,
}

/// Builds the runtime layer of the executable at `exe` (normally
/// `/proc/self/exe`): `/bin/olm-catalog`, and for a dynamically linked
/// executable its interpreter at the `PT_INTERP` path and each `DT_NEEDED`
/// library (and theirs) at the first of [`library_dirs`] that has it.
/// A library that is not found is an error with a hint.
pub fn runtime_layer(exe: &Path, epoch: u64) -> Result<RuntimeLayer, OciError> {
    let fail = |reason: String| OciError::RuntimeLayer {
        exe: exe.to_path_buf(),
        reason,
    };
    let bin = std::fs::read(exe).map_err(|e| fail(format!("reading the executable: {e}")))?;
    let deps = elf_deps(&bin).map_err(|e| fail(format!("the executable: {e}")))?;
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    if let Some(interp) = &deps.interpreter {
        let data = std::fs::read(interp)
            .map_err(|e| fail(format!("reading its ELF interpreter {interp}: {e}")))?;
        files.insert(interp.trim_start_matches('/').to_string(), data);
    }
    let dirs = library_dirs();
    let mut queue: Vec<String> = deps.needed.clone();
    let mut seen: Vec<String> = Vec::new();
    while let Some(name) = queue.pop() {
        if seen.contains(&name) {
            continue;
        }
        seen.push(name.clone());
        if name.contains('/') {
            return Err(fail(format!(
                "it needs {name}, a path; only library names are supported"
            )));
        }
        let found = dirs
            .iter()
            .map(|d| PathBuf::from(d).join(&name))
            .find(|p| p.is_file())
            .ok_or_else(|| {
                fail(format!(
                    "it needs the shared library {name}, which is in none of {}",
                    dirs.join(", ")
                ))
            })?;
        let data =
            std::fs::read(&found).map_err(|e| fail(format!("reading {}: {e}", found.display())))?;
        let lib_deps = elf_deps(&data).map_err(|e| fail(format!("{}: {e}", found.display())))?;
        queue.extend(lib_deps.needed);
        files.insert(
            found.to_string_lossy().trim_start_matches('/').to_string(),
            data,
        );
    }
    let mut layer = LayerBuilder::new();
    // A /tmp anyone may write to, as in any base image: serve keeps its
    // lookup tables and unpacked catalogs there.
    layer.dir_with_mode("tmp", 0o1777);
    layer.file(RUNTIME_BIN, bin, 0o755);
    layer.symlink(RUNTIME_PROBE, "olm-catalog");
    layer.symlink(RUNTIME_OPM, "olm-catalog");
    let mut names = vec![
        RUNTIME_BIN.to_string(),
        RUNTIME_PROBE.to_string(),
        RUNTIME_OPM.to_string(),
    ];
    for (path, data) in files {
        names.push(path.clone());
        layer.file(&path, data, 0o755);
    }
    names.sort();
    Ok(RuntimeLayer {
        layer: layer.build(epoch)?,
        files: names,
        platform: host_platform(),
    })
}

/// [`runtime_layer`] of the running executable.
pub fn self_runtime_layer(epoch: u64) -> Result<RuntimeLayer, OciError> {
    let exe = Path::new("/proc/self/exe");
    if exe.exists() {
        return runtime_layer(exe, epoch);
    }
    let exe = std::env::current_exe().map_err(|e| OciError::Io {
        context: "finding the running executable".into(),
        source: e,
    })?;
    runtime_layer(&exe, epoch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_interpreter_and_needed_of_this_test_binary() {
        let exe = std::fs::read("/proc/self/exe").expect("read self");
        let deps = elf_deps(&exe).expect("parse");
        if let Some(interp) = &deps.interpreter {
            assert!(Path::new(interp).exists(), "{interp}");
            assert!(
                deps.needed.iter().any(|n| n.starts_with("libc.so")),
                "{deps:?}"
            );
        }
        assert!(elf_deps(b"#!/bin/sh\n").is_err());
        assert!(elf_deps(&exe[..64]).is_err());
    }
}
