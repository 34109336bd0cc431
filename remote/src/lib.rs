//! ferroflake's ID service (`ferroflake serve`) as a segment store and a lease registry: a
//! client takes whole ranges through the service and issues from them in its own memory,
//! at the speed of a store of its own, asking the service once per range
//! ([`RemoteStore`]); and it claims, renews and releases a node id through the service's
//! own registry, to issue snowflake IDs in its own memory ([`RemoteRegistry`]).
//!
//! The address names one or several servers of one service:
//! `ferroflake+http://ids-a:8080,ids-b:8080/?token_file=/run/secrets/ids-token`. A call goes
//! to the server that answered last; one that fails or answers 5xx is skipped for a while
//! and the call goes on to the next (see [`servers`]). The bearer token comes from
//! `token_file`, else from `FERROFLAKE_TOKEN`, and never from the address itself.
//!
//! ```no_run
//! use std::sync::Arc;
//! use ferroflake_remote::RemoteStore;
//! use ferroflake_segment::{SegmentAllocator, SegmentConfig, SegmentStore};
//!
//! let store = RemoteStore::open("ferroflake+http://127.0.0.1:8080,127.0.0.1:8081/")?;
//! let allocator = SegmentAllocator::new(Arc::new(store) as Arc<dyn SegmentStore>, SegmentConfig::default())?;
//! let orders = allocator.key("orders")?;
//! let id = orders.next_id()?; // from memory; a range is fetched ahead, in the background
//! # Ok::<(), ferroflake_segment::SegmentError>(())
//! ```

pub mod address;
mod one_service;
mod registry;
mod segment_store;
pub mod servers;

pub use address::ServiceAddress;
pub use registry::RemoteRegistry;
pub use segment_store::RemoteStore;
