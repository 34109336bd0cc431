//! The time the embedded registry judges expiry by: one clock shared by every process on the
//! host, which keeps running while a holder is stopped and never jumps with NTP.
//!
//! That is `CLOCK_BOOTTIME` on Linux (monotonic, counts suspend). It restarts at boot, so
//! every record also carries the boot id: a record written before a reboot has surely
//! expired (its holder is gone), whatever its numbers say. A process in a time namespace
//! of its own reads that clock shifted; the shift is taken off, so it keeps the host's time.

/// Milliseconds on the host's shared monotonic clock.
pub fn host_now_ms() -> u64 {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let id = rustix::time::ClockId::Boottime;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let id = rustix::time::ClockId::Monotonic;
    let t = rustix::time::clock_gettime(id);
    let ns = i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec) - namespace_offset_ns();
    (ns.max(0) / 1_000_000) as u64
}

/// The host's wall clock (`CLOCK_REALTIME`) in Unix ms, read by the system call itself on
/// Linux rather than through the C library (or rustix, which may use it), so that a
/// library preloaded to fake this process's clock (libfaketime) does not fake this one.
/// Time namespaces do not shift `CLOCK_REALTIME`.
pub fn host_wall_clock_ms() -> u64 {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; the call only writes to it.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_clock_gettime,
                libc::CLOCK_REALTIME,
                &mut ts as *mut libc::timespec,
            )
        };
        if rc == 0 {
            let ns = i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec);
            return (ns.max(0) / 1_000_000) as u64;
        }
    }
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    let ns = i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec);
    (ns.max(0) / 1_000_000) as u64
}

/// How far this process's `CLOCK_BOOTTIME` is set ahead of the host's, in nanoseconds.
///
/// A process in a time namespace of its own (`unshare --time`, some container runtimes)
/// reads `CLOCK_BOOTTIME` shifted by the namespace's offset. Records written on such a
/// clock would expire hours early or late for every other process on the host, so the
/// offset is taken off again. A kernel without time namespaces has no offsets file: 0.
fn namespace_offset_ns() -> i128 {
    if !cfg!(any(target_os = "linux", target_os = "android")) {
        return 0;
    }
    std::fs::read_to_string("/proc/self/timens_offsets")
        .map(|text| boottime_offset_ns(&text))
        .unwrap_or(0)
}

/// The `boottime` line of a `timens_offsets` file (`boottime <seconds> <nanoseconds>`).
fn boottime_offset_ns(offsets: &str) -> i128 {
    offsets
        .lines()
        .find_map(|line| {
            let mut fields = line.split_whitespace();
            if fields.next()? != "boottime" {
                return None;
            }
            let secs: i64 = fields.next()?.parse().ok()?;
            let nanos: i64 = fields.next()?.parse().ok()?;
            Some(i128::from(secs) * 1_000_000_000 + i128::from(nanos))
        })
        .unwrap_or(0)
}

/// This boot's id (Linux), or "" where the OS has none.
///
/// # Errors
/// On Linux, the id cannot be read (no `/proc`, or a `/proc` that hides `/proc/sys`, as
/// systemd's `ProcSubset=pid` does): every record carries its boot, and one from another
/// boot counts as long expired, so an unknown boot must not be guessed.
pub fn boot_id() -> std::io::Result<String> {
    if !cfg!(any(target_os = "linux", target_os = "android")) {
        return Ok(String::new());
    }
    let id = std::fs::read_to_string(BOOT_ID)?.trim().to_owned();
    if id.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{BOOT_ID} is empty"),
        ));
    }
    Ok(id)
}

/// Where Linux tells this boot's id.
pub const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";

#[cfg(test)]
mod tests {
    #[test]
    fn host_clock_moves_forward() {
        let a = super::host_now_ms();
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert!(super::host_now_ms() >= a + 5);
    }

    #[test]
    fn the_boottime_offset_is_read_from_its_line() {
        let offsets = "monotonic           0         0\nboottime        -3600       250\n";
        assert_eq!(super::boottime_offset_ns(offsets), -3_600_000_000_000 + 250);
        assert_eq!(
            super::boottime_offset_ns("monotonic 7 0\nboottime 0 0\n"),
            0
        );
        assert_eq!(super::boottime_offset_ns(""), 0);
    }
}
