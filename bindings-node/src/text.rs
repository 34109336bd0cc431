//! String forms: `encode(id, format)` and `parse(text, format)`, both the core's.

use napi::{Env, Unknown};
use napi_derive::napi;

use crate::args;
use crate::decoded::id_argument;
use crate::error::{throw, Misuse, OrThrow, Refusal};
use crate::names::{one_of, quoted};

/// A format option: `'dec'` (default) or any other name of `ferroflake::Format`.
pub(crate) fn format_option(env: &Env, value: Option<Unknown>) -> napi::Result<ferroflake::Format> {
    let Some(value) = value.filter(|v| !args::is_absent(v)) else {
        return Ok(ferroflake::Format::Decimal);
    };
    let name = args::string(env, value, "format")?;
    ferroflake::Format::from_name(&name).ok_or_else(|| {
        throw(
            env,
            Refusal::misuse(
                Misuse::InvalidOption,
                format!(
                    "format must be {}, got {name:?}",
                    one_of(&quoted(
                        ferroflake::Format::ALL.map(ferroflake::Format::name)
                    ))
                ),
            ),
        )
    })
}

/// The string form of an ID: decimal (default), or fixed-width sortable base62 (11
/// characters) or Crockford base32 (13 characters); or bwmarrin/snowflake's forms:
/// `'base58-flickr'`, `'base32-bwmarrin'`, `'base36'`, `'base2'`, `'base64-decimal'` (base64
/// of the decimal text) and `'json'` (the quoted decimal). Takes what `parse` gives, 0 to
/// 2^63 - 1: a larger bigint throws RangeError `ERR_FERROFLAKE_PARSE_OVERFLOW`, as `parse`.
/// For the 8-byte big-endian form, `buf.writeBigUInt64BE(BigInt(id))` into an 8-byte
/// Buffer.
#[napi(
    ts_args_type = "id: number | bigint | string, format?: 'dec' | 'base62' | 'base32' | 'base58-flickr' | 'base32-bwmarrin' | 'base36' | 'base2' | 'base64-decimal' | 'json'"
)]
pub fn encode(env: Env, id: Unknown, format: Option<Unknown>) -> napi::Result<String> {
    let format = format_option(&env, format)?;
    let id = id_argument(&env, id)?;
    Ok(format.encode(id).or_throw(&env)?.to_string())
}

/// Parses a string form back into the ID, as a bigint. Where Go's bwmarrin/snowflake would
/// wrap a value past 64 bits or read a sign, this throws RangeError.
#[napi(
    ts_args_type = "text: string, format?: 'dec' | 'base62' | 'base32' | 'base58-flickr' | 'base32-bwmarrin' | 'base36' | 'base2' | 'base64-decimal' | 'json'"
)]
pub fn parse(env: Env, text: Unknown, format: Option<Unknown>) -> napi::Result<u64> {
    let format = format_option(&env, format)?;
    let text = args::string(&env, text, "text")?;
    format.parse(&text).or_throw(&env)
}
