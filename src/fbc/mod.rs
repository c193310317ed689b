//! File-based catalogs (FBC): olm.package, olm.channel, olm.bundle, olm.deprecations.
