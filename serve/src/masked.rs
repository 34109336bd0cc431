//! Public IDs: the native routes that answer masked IDs, and the one that unmasks them with
//! the server's key.
//!
//! | route | answer |
//! |---|---|
//! | `GET /v1/masked/segment/{key}?count=N&format=F` | `{"mode","key","key_version","format","ids":[..]}` |
//! | `GET /v1/masked/snowflake/{key}?count=N&format=F` | the same, for snowflake IDs |
//! | `GET /v1/unmask/{text}?format=F` | `{"id","key_version","bits","format"}` |
//!
//! The key (or keyring, one key per line, the first current) is read once at start from
//! the file `mask_key_file` names (`--mask-key-file`, `FERROFLAKE_MASK_KEY_FILE`), or else
//! from the `FERROFLAKE_MASK_KEY` variable; it is never a flag. Without one these routes
//! answer 404 `NO_MASK_KEY`.
//!
//! The width follows the IDs: 53 bits for a segment key in `js_keys` and for a snowflake
//! layout of at most 53 bits, so masked IDs stay exact in JavaScript; 63 otherwise. A
//! masked text's length tells the two widths apart, so `/v1/unmask` needs only the format
//! (`base62` by default, `base32` or `dec`; `mask_format` in the config).
//!
//! Anyone who can reach `/v1/unmask` can unmask: keep it where only trusted callers reach
//! it. Any text of the right form unmasks to some ID, so a caller must still look the ID
//! up; see `ferroflake::Mask` for what the mask protects and what it does not.

use std::path::Path as FsPath;
use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use ferroflake::{Format, KeyFileText, Mask, MaskKeyring};
use serde_json::json;

use crate::app_state::AppState;
use crate::issue::{self, refused, Mode};
use crate::query::Params;
use crate::refusal::Refusal;
use crate::Config;

/// The environment variable that holds the key text when no key file is configured.
pub const KEY_VARIABLE: &str = "FERROFLAKE_MASK_KEY";

/// The widths the server masks at: JavaScript-safe IDs, and every other ferroflake ID.
const WIDTHS: [u32; 2] = [53, 63];

/// The server's keyring: from the configured file, else from [`KEY_VARIABLE`], else none.
///
/// # Errors
/// The file cannot be read, or the text holds no valid keyring. Messages say where the
/// key is, never what it holds.
pub fn load_keyring(config: &Config) -> Result<Option<MaskKeyring>, String> {
    let (text, source) = match &config.mask_key_file {
        Some(path) => (
            read_key_file(path)?,
            format!("the key file {}", path.display()),
        ),
        None => match std::env::var(KEY_VARIABLE) {
            Ok(text) => (text, KEY_VARIABLE.to_owned()),
            Err(std::env::VarError::NotPresent) => return Ok(None),
            Err(e) => return Err(format!("{KEY_VARIABLE}: {e}")),
        },
    };
    MaskKeyring::parse_from(&text, &source)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// The key file's text, read as every file the service trusts is; a file other users may
/// read is loaded, with a warning in the log (they can unmask every public ID).
fn read_key_file(path: &FsPath) -> Result<String, String> {
    let cannot =
        |e: std::io::Error| format!("cannot read the mask key file {}: {e}", path.display());
    let text = crate::small_file::read_to_string(path).map_err(cannot)?;
    let metadata = std::fs::metadata(path).map_err(cannot)?;
    let judged = KeyFileText::judged(text, &metadata);
    if let Some(warning) = judged.warning(path) {
        tracing::warn!(event = "mask_key_file_readable", "{warning}");
    }
    Ok(judged.text)
}

/// The format a request asks for (`format=`), or the configured one.
fn format_from(params: &Params, config: &Config) -> Result<Format, Refusal> {
    let name = params.get("format").unwrap_or(&config.mask_format);
    Format::from_name(name).ok_or_else(|| {
        let shown: String = name.chars().take(40).collect();
        Refusal::bad_input(
            "BAD_FORMAT",
            format!(
                "unknown format {shown:?} ({})",
                Format::ALL.map(Format::name).join(", ")
            ),
        )
    })
}

fn keyring(state: &AppState) -> Result<&MaskKeyring, Refusal> {
    state.mask.as_ref().ok_or_else(|| Refusal {
        status: StatusCode::NOT_FOUND,
        kind: "NO_MASK_KEY",
        message: format!(
            "this server has no mask key: start it with --mask-key-file PATH (or \
             mask_key_file in the config, or {KEY_VARIABLE})"
        ),
        retry: false,
    })
}

fn core_refusal(e: ferroflake::Error, message: String) -> Refusal {
    Refusal::bad_input(e.kind().name(), message)
}

async fn masked(
    state: Arc<AppState>,
    mode: Mode,
    path: Result<Path<String>, PathRejection>,
    query: Option<String>,
) -> Response {
    let result = async {
        let ring = keyring(&state)?;
        let params = Params::parse_only(query.as_deref(), &["count", "format"])?;
        let format = format_from(&params, &state.config)?;
        let Path(key) = path.map_err(|e| {
            Refusal::bad_input(
                "INVALID_KEY",
                format!("the key is not valid UTF-8 once percent-decoded ({e})"),
            )
        })?;
        issue::check_key(&key)?;
        let count = issue::count(&params, state.config.max_batch)?;
        let (ids, bits) = match mode {
            Mode::Segment => {
                let ids: Vec<u64> = if count == 1 {
                    vec![issue::segment_one(&state, &key).await?]
                } else {
                    let ranges = issue::segment_many(&state, &key, count).await?;
                    ranges.iter().flat_map(|r| r.start..r.end).collect()
                };
                let js = state.config.js_keys.contains(&key);
                (ids, if js { 53 } else { 63 })
            }
            Mode::Snowflake => {
                let ids = if count == 1 {
                    vec![issue::snowflake_one(&state, &key).await?]
                } else {
                    issue::snowflake_many(&state, &key, count).await?.1
                };
                let narrow = state
                    .config
                    .layout()
                    .is_ok_and(|layout| layout.total_bits() <= 53);
                (ids, if narrow { 53 } else { 63 })
            }
        };
        let mask = ring
            .current_mask(bits)
            .map_err(|e| core_refusal(e, e.to_string()))?;
        let texts = ids
            .iter()
            .map(|&id| mask.encode(id, format).map(|t| t.to_string()))
            .collect::<Result<Vec<String>, _>>()
            .map_err(|e| core_refusal(e, format!("an ID does not fit {bits} bits: {e}")))?;
        Ok::<_, Refusal>(json!({
            "mode": mode.name(),
            "key": key,
            "key_version": mask.version(),
            "format": format.name(),
            "ids": texts,
        }))
    }
    .await;
    match result {
        Ok(body) => crate::routes::json_response(StatusCode::OK, body.to_string()),
        Err(refusal) => refused(&state, mode, refusal).json(),
    }
}

/// `GET /v1/masked/segment/{key}`.
pub async fn masked_segment(
    State(state): State<Arc<AppState>>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Response {
    masked(state, Mode::Segment, path, query).await
}

/// `GET /v1/masked/snowflake/{key}`.
pub async fn masked_snowflake(
    State(state): State<Arc<AppState>>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Response {
    masked(state, Mode::Snowflake, path, query).await
}

/// `GET /v1/unmask/{text}`: the ID behind a masked text, with the key its version names.
pub async fn unmask(
    State(state): State<Arc<AppState>>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Response {
    let result = (|| {
        let ring = keyring(&state)?;
        let format = format_from(
            &Params::parse_only(query.as_deref(), &["format"])?,
            &state.config,
        )?;
        let Path(text) = path.map_err(|e| {
            Refusal::bad_input(
                "BAD_MASKED_ID",
                format!("the text is not valid UTF-8 ({e})"),
            )
        })?;
        let shown: String = text.chars().take(40).collect();
        let lengths = WIDTHS.map(|bits| Mask::text_len_of(bits, format));
        let Some(bits) = WIDTHS
            .into_iter()
            .zip(lengths)
            .find_map(|(bits, len)| (len == text.len()).then_some(bits))
        else {
            return Err(Refusal::bad_input(
                "PARSE_WRONG_LENGTH",
                format!(
                    "{shown:?} is not a masked ID in {}: those are {} or {} characters long",
                    format.name(),
                    lengths[1],
                    lengths[0]
                ),
            ));
        };
        let unmasked = Mask::version_of(&text, format, bits)
            .and_then(|version| Ok((version, ring.decode(&text, format, bits)?)));
        let (version, id) = unmasked.map_err(|e| {
            let detail = match e {
                ferroflake::Error::UnknownMaskKeyVersion { version } => {
                    format!("it names mask key version {version}, which this server does not hold")
                }
                other => other.to_string(),
            };
            core_refusal(e, format!("cannot unmask {shown:?}: {detail}"))
        })?;
        Ok::<_, Refusal>(json!({
            "id": id.to_string(),
            "key_version": version,
            "bits": bits,
            "format": format.name(),
        }))
    })();
    match result {
        Ok(body) => crate::routes::json_response(StatusCode::OK, body.to_string()),
        Err(refusal) => refused(&state, Mode::Snowflake, refusal).json(),
    }
}
