//! With the `serve` feature: compiles `schema/registry.proto` with protox
//! (pure Rust, no protoc needed) and generates the tonic server and client
//! code plus a file descriptor set for gRPC server reflection. Without it
//! there is nothing to build.

#[cfg(feature = "serve")]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=schema/registry.proto");
    let fds = protox::compile(["schema/registry.proto"], ["schema"])?;
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("registry_descriptor.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(fds)?;
    Ok(())
}

#[cfg(not(feature = "serve"))]
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
}
