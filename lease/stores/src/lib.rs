//! Lease registries on coordination stores (being built).
