//! What `decode` returns, and reading an ID argument.

use napi::{Env, JsDate, Unknown, ValueType};
use napi_derive::napi;

use crate::args::{self, to_number};
use crate::error::OrThrow;

/// The fields of an ID. Every number is exact (else decoding throws RangeError
/// `ERR_FERROFLAKE_UNSAFE_INTEGER`, possible only for exotic custom layouts).
#[napi(object, object_from_js = false)]
pub struct DecodedId<'env> {
    /// Start of the ID's tick, in ms since 1970-01-01T00:00:00Z.
    pub timestamp_ms: f64,
    /// The same instant as a `Date`.
    pub date: JsDate<'env>,
    pub node_id: f64,
    pub sequence: f64,
    pub shard: f64,
}

/// An ID given as a safe-integer number, a bigint or a decimal string (parsed by the core).
pub(crate) fn id_argument(env: &Env, id: Unknown) -> napi::Result<u64> {
    if id.get_type()? == ValueType::String {
        let text = args::string(env, id, "id")?;
        return ferroflake::Format::Decimal.parse(&text).or_throw(env);
    }
    args::unsigned(env, id, "id")
}

/// Decodes `id` with `layout` (the core checks that the layout could have made it).
pub(crate) fn decode_with<'env>(
    env: &'env Env,
    layout: &ferroflake::Layout,
    id: Unknown,
) -> napi::Result<DecodedId<'env>> {
    let id = id_argument(env, id)?;
    let parts = layout.decode(id).or_throw(env)?;
    let timestamp_ms = to_number(env, parts.timestamp_ms, "timestampMs")?;
    Ok(DecodedId {
        timestamp_ms,
        date: env.create_date(timestamp_ms)?,
        node_id: to_number(env, parts.node, "nodeId")?,
        sequence: to_number(env, parts.sequence, "sequence")?,
        shard: to_number(env, parts.shard, "shard")?,
    })
}
