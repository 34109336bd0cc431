//! The segment allocator and its store as the Python objects share them: the allocator,
//! its keys and its order numbers each hold one, so that each keeps working while the
//! program holds it, and the last to go gives the unissued rest back.

use std::sync::Arc;

use ferroflake_segment::{SegmentAllocator, SegmentStore};
use pyo3::prelude::*;

use crate::closing::Close;
use crate::errors::segment_to_pyerr;

/// The allocator and its store, shared by the Python allocator, its keys and its order
/// numbers, so that each keeps working while the program holds it.
pub(crate) struct Allocator {
    /// In an `Arc` because order numbers (`ferroflake_segment::OrderNumbers`) hold one.
    pub(crate) allocator: Arc<SegmentAllocator>,
    pub(crate) store: Arc<dyn SegmentStore>,
    /// How the store is named to people ([`StoreAddress::label`]).
    pub(crate) label: String,
}

impl Allocator {
    /// Gives the unissued rest back and closes every key; idempotent. In a forked child the
    /// crate does nothing: giving back ranges the parent is still issuing from would let
    /// the table hand them out again.
    pub(crate) fn close(&self) {
        self.allocator.shutdown();
    }
}

impl Close for Allocator {
    fn close_at_exit(&self) {
        self.close();
    }
}

impl Drop for Allocator {
    fn drop(&mut self) {
        // Gives back what is unissued, like `close()` (the crate's own drop would not). In
        // a forked child both give nothing back and leave the parent's worker alone. Order
        // numbers hold this struct as well as the allocator, so none is left when it drops.
        self.allocator.shutdown();
    }
}

/// `ForkedGeneratorError` in a process forked from the one the allocator was made in.
pub(crate) fn refuse_if_forked(py: Python<'_>, allocator: &Allocator) -> PyResult<()> {
    allocator
        .allocator
        .check_fork()
        .map_err(|e| segment_to_pyerr(py, e))
}
