//! Serving a catalog over gRPC: operator-registry's api.Registry, health and reflection.
