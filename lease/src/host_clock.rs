//! The time the embedded registry judges expiry by: one clock shared by every process on the
//! host, which keeps running while a holder is stopped and never jumps with NTP.
//!
//! That is `CLOCK_BOOTTIME` on Linux (monotonic, counts suspend). It restarts at boot, so
//! every record also carries the boot id: a record written before a reboot has surely
//! expired (its holder is gone), whatever its numbers say.

/// Milliseconds on the host's shared monotonic clock.
pub fn host_now_ms() -> u64 {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let id = rustix::time::ClockId::Boottime;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let id = rustix::time::ClockId::Monotonic;
    let t = rustix::time::clock_gettime(id);
    (t.tv_sec as u64) * 1000 + (t.tv_nsec as u64) / 1_000_000
}

/// This boot's id (Linux), or "" where the OS does not say.
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn host_clock_moves_forward() {
        let a = super::host_now_ms();
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert!(super::host_now_ms() >= a + 5);
    }
}
