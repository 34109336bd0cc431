use std::time::{Duration, Instant};

/// Polls `done` until it holds, for at most `limit`; panics with `what` if it never does.
/// The first looks come at once and the pauses grow to 20 ms, so a quick event is seen
/// quickly and a slow one costs little.
pub fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let give_up = Instant::now() + limit;
    let mut pause = Duration::from_millis(1);
    while !done() {
        assert!(
            Instant::now() < give_up,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_once_the_condition_holds() {
        let mut looks = 0;
        wait_for("the third look", Duration::from_secs(5), || {
            looks += 1;
            looks == 3
        });
        assert_eq!(looks, 3);
    }

    #[test]
    #[should_panic(expected = "waiting for never")]
    fn gives_up_after_the_limit() {
        wait_for("never", Duration::from_millis(30), || false);
    }
}
