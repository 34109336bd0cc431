//! Standard output that stops waiting for a stalled reader once a stop signal came.
//!
//! A command that holds something to give back (`next`'s lease, `segment next`'s unissued
//! rest) must act on SIGTERM even while its reader has stopped reading: a plain write to a
//! full pipe blocks until the reader drains it, and the signal, caught on another thread,
//! does not interrupt it. So each write first waits in poll(2) for the output to take bytes
//! or for the first stop signal ([`crate::signals::stop_wake`]), and writes at most
//! `PIPE_BUF` bytes, which a pipe with room never blocks on. While the reader keeps up, a
//! stop does not cut the output short: bytes the output can take are written first.
//!
//! Another writer of the same pipe can fill it between the poll and the write; that write
//! then waits as before. Commands that catch no signal write as plain standard output does.

use std::io::{self, Write};
use std::os::fd::AsFd;

use rustix::event::{poll, PollFd, PollFlags};

use crate::signals::stop_wake;

/// Bytes a pipe takes in one write without blocking once poll(2) says it has room.
const PIPE_BUF: usize = 4096;

/// Descriptor 1, written directly; wrap it in a `BufWriter`.
pub struct Stdout;

/// The error of a write that gave up: a stop signal came while the output took nothing.
#[derive(Debug)]
struct StoppedWaiting;

impl std::fmt::Display for StoppedWaiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a stop signal came while its reader was not reading")
    }
}

impl std::error::Error for StoppedWaiting {}

/// Whether `e` is a write that gave up on a stalled reader at a stop signal: the IDs
/// written but not read are lost, and the command stops as the signal asks.
pub fn gave_up(e: &io::Error) -> bool {
    e.get_ref()
        .is_some_and(|inner| inner.is::<StoppedWaiting>())
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let out = io::stdout();
        if let Some(stop) = stop_wake() {
            loop {
                let mut fds = [
                    PollFd::new(&out, PollFlags::OUT),
                    PollFd::from_borrowed_fd(stop, PollFlags::IN),
                ];
                match poll(&mut fds, None) {
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(e) => return Err(e.into()),
                    Ok(_) => {}
                }
                // Room, or an error or hang-up that the write itself reports.
                if !fds[0].revents().is_empty() {
                    break;
                }
                if !fds[1].revents().is_empty() {
                    return Err(io::Error::other(StoppedWaiting));
                }
            }
        }
        let len = buf.len().min(PIPE_BUF);
        Ok(rustix::io::write(out.as_fd(), &buf[..len])?)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
