//! A small tokio runtime that turns a store client's async calls into the blocking calls
//! the [`Registry`](ferroflake_lease::Registry) trait makes, each bounded in time.

use std::future::Future;
use std::time::Duration;

use ferroflake_lease::LeaseError;
use tokio::runtime::Runtime;

/// How long establishing a connection may take before the store counts as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// How long one registry call (a few round trips) may take. A hung store must not hang
/// the renewal thread: it gets an error, and the generator's fence does the rest.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(3);

/// How long a renewal may take: half the TTL, within [250 ms, [`CALL_TIMEOUT`]]. An answer
/// later than that is of little use (the holder's deadline counts from the send), and a
/// quick error lets the leased generator retry sooner.
pub fn renew_limit(ttl: Duration) -> Duration {
    (ttl / 2).clamp(Duration::from_millis(250), CALL_TIMEOUT)
}

/// One runtime per registry, with one worker thread that keeps the client's background
/// tasks (connection drivers, ZooKeeper pings, etcd keepalive streams) running between calls.
pub struct Blocking {
    runtime: Runtime,
    registry: &'static str,
}

impl Blocking {
    /// A runtime for the registry called `registry` (used in error messages).
    pub fn new(registry: &'static str) -> Result<Self, LeaseError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(format!("ferroflake-{registry}"))
            .enable_all()
            .build()
            .map_err(|e| LeaseError::Store {
                registry: registry.into(),
                detail: format!("cannot start a runtime for the client: {e}"),
            })?;
        Ok(Blocking { runtime, registry })
    }

    /// Runs `call` to completion, or gives [`LeaseError::Unavailable`] after `limit`.
    ///
    /// Must not be called from inside an async runtime (the trait is blocking).
    pub fn run<T>(
        &self,
        what: &str,
        limit: Duration,
        call: impl Future<Output = Result<T, LeaseError>>,
    ) -> Result<T, LeaseError> {
        self.runtime.block_on(async {
            match tokio::time::timeout(limit, call).await {
                Ok(result) => result,
                Err(_) => Err(LeaseError::Unavailable {
                    registry: self.registry.into(),
                    detail: format!("{what} got no answer within {limit:?}"),
                }),
            }
        })
    }

    /// Starts `task` in the background (a connection driver).
    pub fn spawn<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.runtime.spawn(task);
    }

    /// [`LeaseError::Unavailable`] for this registry.
    pub fn unavailable(&self, detail: impl std::fmt::Display) -> LeaseError {
        LeaseError::Unavailable {
            registry: self.registry.into(),
            detail: detail.to_string(),
        }
    }

    /// [`LeaseError::Store`] for this registry.
    pub fn store_error(&self, detail: impl std::fmt::Display) -> LeaseError {
        LeaseError::Store {
            registry: self.registry.into(),
            detail: detail.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renewals_get_half_the_ttl_within_bounds() {
        assert_eq!(renew_limit(Duration::from_secs(2)), Duration::from_secs(1));
        assert_eq!(
            renew_limit(Duration::from_millis(100)),
            Duration::from_millis(250)
        );
        assert_eq!(renew_limit(Duration::from_secs(60)), CALL_TIMEOUT);
    }
}
