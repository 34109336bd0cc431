//! Taking IDs for a request, in either mode, shared by the Leaf-compatible and the native
//! routes.
//!
//! Where the work runs: nothing here waits on an async worker. A single ID is taken on
//! the worker only where that cannot wait: snowflake's `try_next_id` is one
//! compare-and-swap, and a segment key's `try_next_id` an atomic increment; moving them
//! to the blocking pool would cost a thread hand-off (microseconds) per request for
//! nothing. Where either would wait (a snowflake tick used up, which is up to a second
//! with `js53`; a clock gone back; both of a segment key's buffers empty) or would talk
//! to a store or a registry (opening a key, a refused lease's renewal), the call moves to
//! the blocking pool. So do batches, which may span segment fetches or ticks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ferroflake_segment::Range;

use crate::app_state::AppState;
use crate::keys;
use crate::metrics::REFUSALS;
use crate::query::Params;
use crate::refusal::Refusal;
use crate::segments::OpenKey;
use crate::snowflake::{Leased, Snowflake};

/// The mode a request asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Snowflake IDs.
    Snowflake,
    /// Segment IDs.
    Segment,
}

impl Mode {
    /// `snowflake` or `segment`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Snowflake => "snowflake",
            Mode::Segment => "segment",
        }
    }
}

/// Counts a refusal and passes it on.
pub fn refused(state: &AppState, mode: Mode, refusal: Refusal) -> Refusal {
    state
        .metrics
        .counter(REFUSALS, &[("mode", mode.name()), ("kind", refusal.kind)])
        .increment(1);
    refusal
}

/// Checks a key from a URL.
///
/// # Errors
/// 400 `INVALID_KEY`.
pub fn check_key(key: &str) -> Result<(), Refusal> {
    keys::check(key).map_err(|why| Refusal::bad_input("INVALID_KEY", why))
}

/// Reads `count` from a request's parameters: absent is 1; otherwise 1 to `max`.
///
/// # Errors
/// 400 `BAD_COUNT` for a count that is not a whole number, is 0, or is above `max`.
pub fn count(params: &Params, max: u64) -> Result<u64, Refusal> {
    let Some(raw) = params.get("count") else {
        return Ok(1);
    };
    let bad = |why: String| Refusal::bad_input("BAD_COUNT", why);
    let shown: String = raw.chars().take(40).collect();
    match raw.parse::<u64>() {
        Ok(0) => Err(bad("count must be at least 1".to_owned())),
        Ok(n) if n > max => Err(bad(format!(
            "count {n} is above this server's limit of {max} IDs per request"
        ))),
        Ok(n) => Ok(n),
        Err(_) if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) => Err(bad(format!(
            "count {shown} is above this server's limit of {max} IDs per request"
        ))),
        Err(_) => Err(bad(format!(
            "count {shown:?} is not a whole number from 1 to {max}"
        ))),
    }
}

pub(crate) fn segment_off() -> Refusal {
    Refusal {
        status: axum::http::StatusCode::NOT_FOUND,
        kind: "MODE_OFF",
        message: "segment mode is off on this server".to_owned(),
        retry: false,
    }
}

pub(crate) fn snowflake_off() -> Refusal {
    Refusal {
        status: axum::http::StatusCode::NOT_FOUND,
        kind: "MODE_OFF",
        message: "snowflake mode is off on this server".to_owned(),
        retry: false,
    }
}

/// The open key, opening it on the blocking pool on its first request. Requests that
/// find the key closed at once share one open, and wait for it without holding a thread.
///
/// # Errors
/// 404 for an unknown key or with segment mode off; 400 for a spelling the store's table
/// folds onto another key; 503 if the store cannot serve or `max_keys` keys are open.
pub async fn segment_key(state: &Arc<AppState>, key: &str) -> Result<Arc<OpenKey>, Refusal> {
    let segments = state.segments.as_ref().ok_or_else(segment_off)?;
    if let Some(open) = segments.cached(key) {
        return Ok(open);
    }
    let flight = segments.flight(key);
    let outcome = flight
        .get_or_init(|| {
            let segments = Arc::clone(segments);
            let owned = key.to_owned();
            async move {
                tokio::task::spawn_blocking(move || segments.open_key(&owned))
                    .await
                    .unwrap_or_else(|e| {
                        Err(Refusal::unavailable(
                            "INTERNAL",
                            format!("opening the key failed: {e}"),
                        ))
                    })
            }
        })
        .await
        .clone();
    segments.landed(key, &flight);
    outcome
}

/// The key if it is open, without opening it: reading a status never allocates.
///
/// # Errors
/// 404 with segment mode off, or `KEY_NOT_OPEN` for a key this server has not opened.
pub fn open_segment_key(state: &AppState, key: &str) -> Result<Arc<OpenKey>, Refusal> {
    let segments = state.segments.as_ref().ok_or_else(segment_off)?;
    segments.cached(key).ok_or_else(|| Refusal {
        status: axum::http::StatusCode::NOT_FOUND,
        kind: "KEY_NOT_OPEN",
        message: format!(
            "key {key:?} is not open on this server, so it has no status here: it opens, \
             with its first segment, on its first ID request"
        ),
        retry: false,
    })
}

/// One segment ID.
///
/// # Errors
/// As [`segment_key`], and the allocator's refusals.
pub async fn segment_one(state: &Arc<AppState>, key: &str) -> Result<u64, Refusal> {
    if let Some(id) = segment_now(state, key) {
        return Ok(id);
    }
    // Boxed, so that the state of a wait stays out of every request that does not wait.
    Box::pin(segment_waiting(state, key)).await
}

/// One segment ID of `key` if it can be had at once: the key is open and has an ID in
/// memory. `None` in every other case, which [`segment_one`] then takes the long way.
#[inline]
pub fn segment_now(state: &AppState, key: &str) -> Option<u64> {
    state.segments.as_ref()?.next_id_now(key)
}

/// One segment ID, the key opened or the buffers refilled first if they must be.
async fn segment_waiting(state: &Arc<AppState>, key: &str) -> Result<u64, Refusal> {
    let open = segment_key(state, key).await?;
    let id = match open.handle.try_next_id() {
        Ok(Some(id)) => Ok(id),
        // Both buffers are empty: wait for the fetch in flight on the blocking pool, not
        // on this worker.
        Ok(None) => {
            let handle = open.handle.clone();
            tokio::task::spawn_blocking(move || handle.next_id())
                .await
                .map_err(|e| Refusal::unavailable("INTERNAL", format!("the wait failed: {e}")))?
        }
        Err(e) => Err(e),
    }
    .map_err(|e| Refusal::segment(&e))?;
    open.issued.increment(1);
    Ok(id)
}

/// `count` segment IDs, as increasing ranges.
///
/// # Errors
/// As [`segment_one`].
pub async fn segment_many(
    state: &Arc<AppState>,
    key: &str,
    count: u64,
) -> Result<Vec<Range>, Refusal> {
    let open = segment_key(state, key).await?;
    let ranges = tokio::task::spawn_blocking(move || {
        let ranges = open.handle.next_ids(count)?;
        open.issued.increment(count);
        Ok(ranges)
    })
    .await
    .map_err(|e| Refusal::unavailable("INTERNAL", format!("the batch failed: {e}")))?;
    ranges.map_err(|e| Refusal::segment(&e))
}

/// One snowflake ID under the leased node id: the compare-and-swap on this worker; a
/// wait (the tick's sequence used up, a clock gone back) or a refusal (which may renew
/// the lease with the registry) on the blocking pool.
///
/// # Errors
/// 404 with snowflake mode off; 503 without a lease or past its fence.
pub async fn snowflake_one(state: &AppState, key: &str) -> Result<u64, Refusal> {
    if let Some(id) = snowflake_now(state, key) {
        return Ok(id);
    }
    let snowflake = state.snowflake.as_ref().ok_or_else(snowflake_off)?;
    // The guard's scope ends before any await.
    let slow = {
        let guard = snowflake.generator();
        let Some(generator) = guard.as_ref() else {
            return Err(no_lease(snowflake.readiness().err()));
        };
        Arc::clone(generator)
    };
    // Boxed, so that the state of a wait stays out of every request that does not wait.
    Box::pin(snowflake_waiting(snowflake, slow, key)).await
}

/// One snowflake ID for `key` if it can be had at once: the lease is held and the tick
/// has an ID left. `None` in every other case, which [`snowflake_one`] then takes the long
/// way (and explains).
#[inline]
pub fn snowflake_now(state: &AppState, key: &str) -> Option<u64> {
    let snowflake = state.snowflake.as_ref()?;
    let id = snowflake
        .generator()
        .as_ref()?
        .generator()
        .try_next_id()
        .ok()??;
    snowflake.counter(key).increment(1);
    Some(id)
}

/// One snowflake ID from `generator` after a wait or a renewal, on the blocking pool.
async fn snowflake_waiting(
    snowflake: &Snowflake,
    generator: Arc<Leased>,
    key: &str,
) -> Result<u64, Refusal> {
    let id = tokio::task::spawn_blocking(move || {
        generator
            .next_id()
            .map_err(|e| Refusal::snowflake(&e, generator.explain(&e)))
    })
    .await
    .map_err(|e| Refusal::unavailable("INTERNAL", format!("the wait failed: {e}")))??;
    snowflake.counter(key).increment(1);
    Ok(id)
}

/// `count` snowflake IDs, increasing.
///
/// # Errors
/// As [`snowflake_one`].
pub async fn snowflake_many(
    state: &Arc<AppState>,
    key: &str,
    count: u64,
) -> Result<(u64, Vec<u64>), Refusal> {
    let snowflake = Arc::clone(state.snowflake.as_ref().ok_or_else(snowflake_off)?);
    let Some(generator) = snowflake.generator().as_ref().map(Arc::clone) else {
        return Err(no_lease(snowflake.readiness().err()));
    };
    let key = key.to_owned();
    let abandoned = Arc::new(AtomicBool::new(false));
    // Dropped with this future: when the request's time runs out or its client leaves.
    let _abandon = AbandonOnDrop(Arc::clone(&abandoned));
    tokio::task::spawn_blocking(move || {
        let mut ids = vec![0u64; usize::try_from(count).unwrap_or(usize::MAX)];
        // A batch waits for ticks (4,096 IDs a second with js53): taken a part at a time,
        // it stops once its request is gone, rather than spend the node's IDs for nobody
        // while the requests behind it time out too.
        for part in ids.chunks_mut(BATCH_PART) {
            if abandoned.load(Ordering::Relaxed) {
                return Err(Refusal::unavailable(
                    "TIMEOUT",
                    "the request ended before its batch was taken".to_owned(),
                ));
            }
            generator
                .next_ids(part)
                .map_err(|e| Refusal::snowflake(&e, generator.explain(&e)))?;
        }
        snowflake.counter(&key).increment(count);
        Ok((generator.node(), ids))
    })
    .await
    .map_err(|e| Refusal::unavailable("INTERNAL", format!("the batch failed: {e}")))?
}

/// How many IDs of a snowflake batch are taken between two looks at whether its request
/// is still there.
const BATCH_PART: usize = 256;

/// Marks a batch abandoned when the request that asked for it is dropped.
struct AbandonOnDrop(Arc<AtomicBool>);

impl Drop for AbandonOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

fn no_lease(why: Option<String>) -> Refusal {
    Refusal::unavailable(
        "NO_LEASE",
        format!(
            "no node id is leased yet: {}",
            why.unwrap_or_else(|| "the lease is being claimed".to_owned())
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::Params;

    fn count(query: Option<&str>, max: u64) -> Result<u64, crate::refusal::Refusal> {
        super::count(&Params::parse(query).unwrap(), max)
    }

    #[test]
    fn counts() {
        assert_eq!(count(None, 10).unwrap(), 1);
        assert_eq!(count(Some("x=1"), 10).unwrap(), 1);
        assert_eq!(count(Some("a=b&count=10"), 10).unwrap(), 10);
        for bad in [
            "count=0",
            "count=11",
            "count=",
            "count=-1",
            "count=1e3",
            "count=99999999999999999999999",
        ] {
            let refusal = count(Some(bad), 10).unwrap_err();
            assert_eq!(refusal.status, 400, "{bad}");
            assert_eq!(refusal.kind, "BAD_COUNT");
        }
        assert!(count(Some("count=99999999999999999999999"), 10)
            .unwrap_err()
            .message
            .contains("above"));
    }
}
