use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A name no other test run or call has used: `<tag>_<pid>_<ms>_<n>`, in lowercase (a
/// table name on every SQL server, a key prefix, a path).
pub fn unique(tag: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("the clock is after 1970")
        .as_millis()
        % 100_000_000;
    format!(
        "{tag}_{}_{ms}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
    .to_lowercase()
}

/// The base address of a running test server, from `FERROFLAKE_TEST_<NAME>`, which the
/// suites' scripts set when they start the servers (`scripts/servers/ctl.sh`).
pub fn base_url(backend: &str) -> String {
    let var = format!("FERROFLAKE_TEST_{}", backend.to_uppercase());
    std::env::var(&var).unwrap_or_else(|_| {
        panic!(
            "{var} is not set: run this suite through its script (scripts/test-*.sh), \
             which starts the servers"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_differ_and_are_lowercase() {
        let (a, b) = (unique("Tab"), unique("Tab"));
        assert_ne!(a, b);
        assert!(a.starts_with("tab_"), "{a}");
        assert_eq!(a, a.to_lowercase());
    }
}
