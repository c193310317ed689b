//! OCI images: bundle and index images, registries and OCI image layouts.
