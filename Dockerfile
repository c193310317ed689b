# syntax=docker/dockerfile:1
# olm-catalog: release build in a full Rust image, run from a minimal,
# non-root runtime image. As an index image base it serves the catalog that
# `olm-catalog index build` adds at /database/index.db.

FROM docker.io/library/rust:1.95-bookworm AS build
WORKDIR /src
# Dependencies first, so source edits do not rebuild them.
COPY Cargo.toml Cargo.lock build.rs ./
# Build settings (aws-lc without CPU jitter entropy: see the file).
COPY .cargo ./.cargo
# Cargo.toml declares `[[bench]] oci_pull`: cargo refuses to read the manifest
# (for any command) unless benches/oci_pull.rs exists. build.rs compiles
# schema/registry.proto and src/index/db.rs includes schema/index.sql.
COPY benches ./benches
# Likewise the one integration test target, `[[test]] suite` (autotests off).
COPY tests/main.rs ./tests/main.rs
COPY schema ./schema
# A stub crate to compile the dependencies into a cached layer. The build
# must succeed (no `|| true`): a failure here would hide a broken manifest
# until the next, uncached, step.
RUN mkdir src && echo 'fn main() {}' > src/main.rs && touch src/lib.rs \
    && cargo build --release --locked --bin olm-catalog \
    && rm -rf src
COPY src ./src
RUN touch src/main.rs src/lib.rs && cargo build --release --locked --bin olm-catalog \
    && install -D -m 0755 target/release/olm-catalog /out/olm-catalog \
    && ln -s olm-catalog /out/grpc_health_probe \
    && ln -s olm-catalog /out/opm

# distroless/cc has glibc and CA certificates and no shell; user 65532.
FROM gcr.io/distroless/cc-debian12:nonroot
# /bin/grpc_health_probe is a link to olm-catalog, which acts as the probe
# under that name (OLM's catalog pods run `grpc_health_probe -addr=:50051`);
# /bin/opm is another, which accepts opm's command lines (docs/from-opm.md).
COPY --from=build /out/ /bin/
USER 65532:65532
# OLM probes catalog pods with gRPC health checks on this port.
EXPOSE 50051
ENTRYPOINT ["/bin/olm-catalog"]
CMD ["serve", "/database/index.db", "--address", "0.0.0.0", "--port", "50051"]
