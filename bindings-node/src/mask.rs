//! `MaskKeyring`: the core's keyed ID mask, with keys read from text, a file or the
//! environment (never from a command line, where other users can read them).
//!
//! The Feistel rounds, the text forms and every check of widths, versions and key text are
//! the core's; this module reads JS values and picks `number` or `bigint` by width.

use std::path::Path;
use std::sync::Arc;

use napi::bindgen_prelude::{
    ClassInstance, Either, FnArgs, Function, JavaScriptClassExt, JsObjectValue, Object, This,
    ToNapiValue,
};
use napi::{sys, Env, JsValue, Unknown};
use napi_derive::napi;

use ferroflake::{Error, Format};

use crate::args::{self, field_of, options};
use crate::bound::{self, define, with_data};
use crate::decoded::id_argument;
use crate::error::{refuse_without_new, throw, Misuse, OrThrow, Refusal};
use crate::text::format_option;

/// The width when no `bits` is given: masked IDs that stay exact in a JS `number`, as the
/// default `js53ms` layout's IDs do.
const DEFAULT_BITS: u32 = 53;
/// Where `fromEnv()` looks by default: the CLI's and the service's variable.
const DEFAULT_VARIABLE: &str = "FERROFLAKE_MASK_KEY";

const MASK_KEYS: [&str; 1] = ["bits"];
const UNMASK_KEYS: [&str; 2] = ["bits", "version"];
const TEXT_KEYS: [&str; 2] = ["format", "bits"];

/// A masked ID or an unmasked one: a `number` for widths up to 53 bits, else a `bigint`.
type Value = Either<f64, u64>;

fn value(bits: u32, n: u64) -> Value {
    // Every value of such a width is at most 2^53 - 1: the number is exact.
    if bits <= 53 {
        Either::A(n as f64)
    } else {
        Either::B(n)
    }
}

/// An ID or masked ID: as `id_argument`, but a decimal string may go up to 2^64 - 1, since
/// a 64-bit mask takes and gives values that are no snowflake ID (the core's decimal
/// parser stops at 2^63 - 1).
fn value_argument(env: &Env, value: Unknown) -> napi::Result<u64> {
    if value.get_type()? == napi::ValueType::String {
        let text = args::string(env, value, "id")?;
        return match Format::Decimal.parse(&text) {
            Err(e @ (Error::ParseOverflow | Error::ParseTooLong { .. })) => {
                text.parse::<u64>().map_err(|_| e)
            }
            parsed => parsed,
        }
        .or_throw(env);
    }
    id_argument(env, value)
}

/// Keys of every version in use: the current one masks, each one unmasks the IDs masked
/// with it. A masked ID's text names its key's version, so texts made before a rotation
/// still decode.
///
/// Make one from key text (`VERSION:SECRET`, one key per line, the first current), from a
/// file with `MaskKeyring.fromFile(path)` or from an environment variable with
/// `MaskKeyring.fromEnv()` (`FERROFLAKE_MASK_KEY`). `toString()`, `toJSON()` and
/// `util.inspect` show the versions, never a secret.
///
/// `bits` is the width of the IDs: the mask permutes `0 .. 2^bits - 1` (8 to 64). It
/// defaults to 53, as `Generator` defaults to the 53-bit `js53ms` layout, and then masked
/// and unmasked IDs are `number`s; widths above 53 (63 for 64-bit layouts like `twitter`)
/// give `bigint`s. IDs are taken as safe-integer numbers, bigints or decimal strings; a
/// number past `Number.MAX_SAFE_INTEGER` throws RangeError `ERR_FERROFLAKE_UNSAFE_INTEGER`.
///
/// A masked ID hides what an ID tells (time, node, count), but anyone may send any masked
/// ID: it unmasks to some ID, so check that the ID exists and may be shown.
///
/// `mask`, `unmask`, `encode` and `decode` are each keyring's own functions, bound to its
/// keys, so a detached `const { mask } = keyring` works too.
#[napi]
pub struct MaskKeyring {
    ring: Arc<ferroflake::MaskKeyring>,
}

/// What `MaskKeyring.prototype.toJSON` gives: versions only.
#[napi(object, object_from_js = false)]
pub struct MaskKeyringInfo {
    pub current_version: u32,
    pub versions: Vec<u32>,
}

#[napi]
impl MaskKeyring {
    /// A keyring from key text: one `VERSION:SECRET` per line (the version 0 to 31, the
    /// secret 16 bytes as 32 hex digits or base64), blank lines and `#` comments skipped,
    /// the first key current. Throws RangeError `ERR_FERROFLAKE_PARSE_*`,
    /// `..._MASK_KEY_VERSION_OUT_OF_RANGE` or `..._DUPLICATE_MASK_KEY_VERSION`; the message
    /// names the line, never the text.
    #[napi(constructor, ts_args_type = "text: string")]
    pub fn new(env: Env, this: This<Unknown>, text: Unknown) -> napi::Result<Self> {
        refuse_without_new::<MaskKeyring>(&env, &this, "MaskKeyring")?;
        let text = args::string(&env, text, "key text")?;
        let keyring = read_ring(&env, &text, "the key text")?;
        install(&env, this.raw(), &keyring.ring)?;
        Ok(keyring)
    }

    /// The same as `new MaskKeyring(text)`.
    #[napi(ts_args_type = "text: string", ts_return_type = "MaskKeyring")]
    pub fn parse<'env>(
        env: &'env Env,
        text: Unknown,
    ) -> napi::Result<ClassInstance<'env, MaskKeyring>> {
        let text = args::string(env, text, "key text")?;
        read_ring(env, &text, "the key text")?.instance(env)
    }

    /// A keyring from a key file (read now, synchronously: keys are read once, at start).
    /// Throws Error `ERR_FERROFLAKE_MASK_KEY_MISSING` if the file cannot be read or is not
    /// a key file (a FIFO, a device, over 64 KiB, not UTF-8), and as the constructor for
    /// bad key text. Keep the file private (`chmod 600`): one other users can read is used
    /// with a process warning (code `FERROFLAKE_KEY_FILE_READABLE`) saying so.
    #[napi(ts_args_type = "path: string", ts_return_type = "MaskKeyring")]
    pub fn from_file<'env>(
        env: &'env Env,
        path: Unknown,
    ) -> napi::Result<ClassInstance<'env, MaskKeyring>> {
        let path = args::string(env, path, "path")?;
        let read = ferroflake::read_key_file(Path::new(&path))
            .map_err(|e| missing(env, format!("cannot read the mask key file {path:?}: {e}")))?;
        if let Some(warning) = read.warning(Path::new(&path)) {
            emit_warning(env, warning, "FERROFLAKE_KEY_FILE_READABLE")?;
        }
        read_ring(env, &read.text, &format!("the key file {path:?}"))?.instance(env)
    }

    /// A keyring from an environment variable, `FERROFLAKE_MASK_KEY` unless `name` is
    /// given. Throws Error `ERR_FERROFLAKE_MASK_KEY_MISSING` if it is not set, and as the
    /// constructor for bad key text.
    #[napi(ts_args_type = "name?: string", ts_return_type = "MaskKeyring")]
    pub fn from_env<'env>(
        env: &'env Env,
        name: Option<Unknown>,
    ) -> napi::Result<ClassInstance<'env, MaskKeyring>> {
        let name = match name.filter(|v| !args::is_absent(v)) {
            Some(v) => args::string(env, v, "name")?,
            None => DEFAULT_VARIABLE.to_owned(),
        };
        let text = match std::env::var(&name) {
            Ok(text) => text,
            Err(std::env::VarError::NotPresent) => {
                return Err(missing(
                    env,
                    format!(
                        "no mask key: the environment variable {name} is not set (or use \
                         MaskKeyring.fromFile(path)); never put a key on a command line"
                    ),
                ))
            }
            Err(e) => return Err(missing(env, format!("{name}: {e}"))),
        };
        read_ring(env, &text, &format!("the environment variable {name}"))?.instance(env)
    }

    /// The JS object of a keyring made by a static method, with its bound functions.
    fn instance(self, env: &Env) -> napi::Result<ClassInstance<'_, MaskKeyring>> {
        let ring = self.ring.clone();
        let instance = self.into_instance(env)?;
        install(env, instance.as_object(env).raw(), &ring)?;
        Ok(instance)
    }

    /// The version of the key that masks.
    #[napi(getter)]
    pub fn current_version(&self) -> u32 {
        u32::from(self.ring.current_version())
    }

    /// The versions held, in increasing order.
    #[napi(getter)]
    pub fn versions(&self) -> Vec<u32> {
        self.ring.versions().map(u32::from).collect()
    }

    /// The masked form of `id` under the current key: a `number` for `bits` up to 53
    /// (default 53), else a `bigint`. Throws RangeError `ERR_FERROFLAKE_ID_OUT_OF_RANGE`
    /// for an ID of more than `bits` bits, `..._MASK_WIDTH_OUT_OF_RANGE` for `bits`
    /// outside 8 to 64.
    #[napi(
        ts_args_type = "id: number | bigint | string, options?: { bits?: number }",
        ts_return_type = "number | bigint"
    )]
    pub fn mask(
        &self,
        env: Env,
        id: Unknown,
        options_value: Option<Unknown>,
    ) -> napi::Result<Value> {
        mask(&self.ring, &env, id, options_value)
    }

    /// The ID that `mask` turned into `masked`, under the key of `version` (default: the
    /// current one): a `number` for `bits` up to 53, else a `bigint`. Throws RangeError
    /// `ERR_FERROFLAKE_UNKNOWN_MASK_KEY_VERSION` for a version the keyring lacks. The bare
    /// number does not say its version: prefer `encode`/`decode` where keys rotate.
    #[napi(
        ts_args_type = "masked: number | bigint | string, options?: { bits?: number; version?: number }",
        ts_return_type = "number | bigint"
    )]
    pub fn unmask(
        &self,
        env: Env,
        masked: Unknown,
        options_value: Option<Unknown>,
    ) -> napi::Result<Value> {
        unmask(&self.ring, &env, masked, options_value)
    }

    /// Masks `id` under the current key and writes it as text of fixed length: the key
    /// version first (one character; two digits in `'dec'`), then the masked number.
    /// `format` is `'base62'` (default), `'base32'`, `'dec'` or another format `encode`
    /// takes; at 53 bits the text is 10, 12 or 18 characters long, at 63 bits 12, 14 or 21.
    #[napi(
        ts_args_type = "id: number | bigint | string, options?: { format?: 'base62' | 'base32' | 'dec' | 'base58-flickr' | 'base32-bwmarrin' | 'base36' | 'base2' | 'base64-decimal' | 'json'; bits?: number }"
    )]
    pub fn encode(
        &self,
        env: Env,
        id: Unknown,
        options_value: Option<Unknown>,
    ) -> napi::Result<String> {
        encode(&self.ring, &env, id, options_value)
    }

    /// The ID of a text made by `encode` with the same format and width, unmasked with the
    /// key its version names: a `number` for `bits` up to 53, else a `bigint`. Throws
    /// RangeError `ERR_FERROFLAKE_PARSE_*` for text of another format or width,
    /// `..._UNKNOWN_MASK_KEY_VERSION` for a version the keyring lacks.
    #[napi(
        ts_args_type = "text: string, options?: { format?: 'base62' | 'base32' | 'dec' | 'base58-flickr' | 'base32-bwmarrin' | 'base36' | 'base2' | 'base64-decimal' | 'json'; bits?: number }",
        ts_return_type = "number | bigint"
    )]
    pub fn decode(
        &self,
        env: Env,
        text: Unknown,
        options_value: Option<Unknown>,
    ) -> napi::Result<Value> {
        decode(&self.ring, &env, text, options_value)
    }

    /// `MaskKeyring { currentVersion: 2, versions: [1, 2] }`: no secret.
    #[napi(js_name = "toString")]
    pub fn describe(&self) -> String {
        let versions: Vec<String> = self.versions().iter().map(u32::to_string).collect();
        format!(
            "MaskKeyring {{ currentVersion: {}, versions: [{}] }}",
            self.current_version(),
            versions.join(", ")
        )
    }

    /// The versions, for logs and `JSON.stringify`: no secret.
    #[napi(js_name = "toJSON")]
    pub fn info(&self) -> MaskKeyringInfo {
        MaskKeyringInfo {
            current_version: self.current_version(),
            versions: self.versions(),
        }
    }
}

fn mask(
    ring: &ferroflake::MaskKeyring,
    env: &Env,
    id: Unknown,
    options_value: Option<Unknown>,
) -> napi::Result<Value> {
    let object = options(env, options_value, "options", &MASK_KEYS)?;
    let bits = bits_option(env, object.as_ref())?;
    let id = value_argument(env, id)?;
    let mask = ring.current_mask(bits).or_throw(env)?;
    Ok(value(bits, mask.mask(id).or_throw(env)?))
}

fn unmask(
    ring: &ferroflake::MaskKeyring,
    env: &Env,
    masked: Unknown,
    options_value: Option<Unknown>,
) -> napi::Result<Value> {
    let object = options(env, options_value, "options", &UNMASK_KEYS)?;
    let bits = bits_option(env, object.as_ref())?;
    let version = match field_of(object.as_ref(), "version")? {
        Some(v) => args::bounded(env, v, "version", u64::from(u8::MAX))? as u8,
        None => ring.current_version(),
    };
    let masked = value_argument(env, masked)?;
    let mask = ring.mask_of(version, bits).or_throw(env)?;
    Ok(value(bits, mask.unmask(masked).or_throw(env)?))
}

fn encode(
    ring: &ferroflake::MaskKeyring,
    env: &Env,
    id: Unknown,
    options_value: Option<Unknown>,
) -> napi::Result<String> {
    let object = options(env, options_value, "options", &TEXT_KEYS)?;
    let (format, bits) = text_options(env, object.as_ref())?;
    let id = value_argument(env, id)?;
    let mask = ring.current_mask(bits).or_throw(env)?;
    Ok(mask.encode(id, format).or_throw(env)?.to_string())
}

fn decode(
    ring: &ferroflake::MaskKeyring,
    env: &Env,
    text: Unknown,
    options_value: Option<Unknown>,
) -> napi::Result<Value> {
    let object = options(env, options_value, "options", &TEXT_KEYS)?;
    let (format, bits) = text_options(env, object.as_ref())?;
    let text = args::string(env, text, "text")?;
    Ok(value(bits, ring.decode(&text, format, bits).or_throw(env)?))
}

/// Defines `mask`, `unmask`, `encode` and `decode` on `this`, bound to `ring`.
fn install(
    env: &Env,
    this: sys::napi_value,
    ring: &Arc<ferroflake::MaskKeyring>,
) -> napi::Result<()> {
    define(
        env,
        this,
        &[
            (c"mask", bound::function(env, c"mask", mask_callback, ring)?),
            (
                c"unmask",
                bound::function(env, c"unmask", unmask_callback, ring)?,
            ),
            (
                c"encode",
                bound::function(env, c"encode", encode_callback, ring)?,
            ),
            (
                c"decode",
                bound::function(env, c"decode", decode_callback, ring)?,
            ),
        ],
    )
}

/// The callback of a bound function: `call` with the keyring and the call's two
/// arguments.
///
/// # Safety
/// `env` and `info` must be those of a call to a function that `install` made.
unsafe fn call_bound<R: ToNapiValue>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    call: fn(&ferroflake::MaskKeyring, &Env, Unknown, Option<Unknown>) -> napi::Result<R>,
) -> sys::napi_value {
    // SAFETY: per this function's contract.
    unsafe {
        with_data(
            env,
            info,
            |ring: &ferroflake::MaskKeyring, js_env, [first, second]| {
                let result = call(ring, js_env, first, Some(second))?;
                // SAFETY: a live env inside its callback.
                R::to_napi_value(env, result)
            },
        )
    }
}

unsafe extern "C" fn mask_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: called by Node as the callback of the function `install` made.
    unsafe { call_bound(env, info, mask) }
}

unsafe extern "C" fn unmask_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: called by Node as the callback of the function `install` made.
    unsafe { call_bound(env, info, unmask) }
}

unsafe extern "C" fn encode_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: called by Node as the callback of the function `install` made.
    unsafe { call_bound(env, info, encode) }
}

unsafe extern "C" fn decode_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: called by Node as the callback of the function `install` made.
    unsafe { call_bound(env, info, decode) }
}

fn missing(env: &Env, message: String) -> napi::Error {
    throw(env, Refusal::misuse(Misuse::MaskKeyMissing, message))
}

/// Parses key text from `source`; the refusal keeps the core's kind and names the line,
/// never the text (it holds secrets).
fn read_ring(env: &Env, text: &str, source: &str) -> napi::Result<MaskKeyring> {
    ferroflake::MaskKeyring::parse_from(text, source)
        .map(|ring| MaskKeyring {
            ring: Arc::new(ring),
        })
        .map_err(|e| throw(env, Refusal::Explained(e.error(), e.to_string())))
}

/// `process.emitWarning(message, 'Warning', code)`: shown on stderr once per code unless
/// the program listens for warnings or runs with `--no-warnings`.
fn emit_warning(env: &Env, message: String, code: &str) -> napi::Result<()> {
    let global = env.get_global()?;
    let process: Object = global.get_named_property("process")?;
    let emit: Function<FnArgs<(String, String, String)>, Unknown> =
        process.get_named_property("emitWarning")?;
    emit.apply(
        process,
        FnArgs::from((message, "Warning".to_owned(), code.to_owned())),
    )?;
    Ok(())
}

/// The `bits` option; the core checks the range (8 to 64).
fn bits_option(env: &Env, object: Option<&Object>) -> napi::Result<u32> {
    match field_of(object, "bits")? {
        Some(v) => Ok(args::bounded(env, v, "bits", u64::from(u32::MAX))? as u32),
        None => Ok(DEFAULT_BITS),
    }
}

/// The `format` (default base62, as the CLI's) and `bits` options of the text forms.
fn text_options(env: &Env, object: Option<&Object>) -> napi::Result<(Format, u32)> {
    let format = match field_of(object, "format")? {
        Some(v) => format_option(env, Some(v))?,
        None => Format::Base62,
    };
    Ok((format, bits_option(env, object)?))
}
