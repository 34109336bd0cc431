//! Standard output, written by a thread of its own, so that no stalled reader holds off a
//! stop signal.
//!
//! A command that holds something to give back (`next`'s lease, `segment next`'s unissued
//! rest) must act on SIGTERM even while its reader has stopped reading. A write to a full
//! pipe, a terminal stopped with Ctrl-S or a socket nobody reads blocks in the kernel, and
//! the signal, caught on another thread, does not end it. So the command never writes
//! itself: it fills a buffer and hands full ones to the writer thread, at most two at once,
//! waiting for room or for the first stop signal, whichever comes first
//! ([`crate::signals::stopped`]). After a stop it waits no more: it takes the bytes and
//! goes on to its next check of the signal, with nothing lost from its buffer.
//!
//! [`flush`](Write::flush) waits until the writer thread has written everything, so what a
//! command printed before it stopped (and the end of its JSON) still reaches a reader that
//! reads, however slowly. After a stop signal it gives up after a whole [`STALL`] in which
//! the output took nothing (so 1 to 2 s after its last progress): the error [`gave_up`]
//! names. Commands that catch no signal wait as long as plain standard output does. An
//! output its parent left non-blocking is waited on with poll(2), not failed.

use std::io::{self, Write};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use rustix::event::{poll, PollFd, PollFlags};

use crate::signals::stopped;

/// Bytes gathered before they are handed to the writer thread.
const CHUNK: usize = 64 * 1024;
/// Buffers handed over and not yet written: one being written, one waiting.
const IN_FLIGHT: usize = 2;
/// After a stop signal, how long the output may take nothing before the rest is given up.
pub const STALL: Duration = Duration::from_secs(1);

/// Standard output (descriptor 1), buffered, written by a thread of its own.
pub struct Stdout {
    pending: Vec<u8>,
    to_writer: Sender<Vec<u8>>,
    written: Receiver<io::Result<()>>,
    in_flight: usize,
    /// Bytes the writer thread has written, to tell a slow reader from a stalled one.
    progress: Arc<AtomicU64>,
    /// The writer thread's failure, reported at every later call.
    failed: Option<(io::ErrorKind, String)>,
    /// Whether a flush gave up on a stalled reader: later calls give up at once.
    stalled: bool,
}

/// The error of a flush that gave up: after a stop signal, its reader took nothing for
/// [`STALL`].
#[derive(Debug)]
struct StoppedWaiting;

impl std::fmt::Display for StoppedWaiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a stop signal came, and its reader then took nothing for {} s",
            STALL.as_secs()
        )
    }
}

impl std::error::Error for StoppedWaiting {}

/// Whether `e` is a flush that gave up on a stalled reader after a stop signal: what it
/// did not write is lost, and the command stops as the signal asks.
pub fn gave_up(e: &io::Error) -> bool {
    e.get_ref()
        .is_some_and(|inner| inner.is::<StoppedWaiting>())
}

impl Stdout {
    pub fn new() -> io::Result<Stdout> {
        let (to_writer, buffers) = crossbeam_channel::bounded::<Vec<u8>>(IN_FLIGHT);
        let (done, written) = crossbeam_channel::unbounded();
        let progress = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&progress);
        thread::Builder::new()
            .name("ferroflake-stdout".into())
            .spawn(move || {
                for buffer in buffers {
                    let outcome = write_out(&buffer, &counted);
                    let failed = outcome.is_err();
                    if done.send(outcome).is_err() || failed {
                        return;
                    }
                }
            })?;
        Ok(Stdout {
            pending: Vec::with_capacity(CHUNK),
            to_writer,
            written,
            in_flight: 0,
            progress,
            failed: None,
            stalled: false,
        })
    }

    /// The writer thread's failure, if it had one, or the give-up on a stalled reader.
    fn check(&self) -> io::Result<()> {
        match &self.failed {
            Some((kind, message)) => Err(io::Error::new(*kind, message.clone())),
            None if self.stalled => Err(io::Error::other(StoppedWaiting)),
            None => Ok(()),
        }
    }

    /// Counts one written buffer, keeping the first failure.
    fn acknowledge(&mut self, outcome: io::Result<()>) {
        self.in_flight -= 1;
        if let (Err(e), None) = (outcome, &self.failed) {
            self.failed = Some((e.kind(), e.to_string()));
        }
    }

    /// Acknowledges what the writer thread has finished, without waiting.
    fn collect(&mut self) {
        while let Ok(outcome) = self.written.try_recv() {
            self.acknowledge(outcome);
        }
    }

    /// Why the writer thread is gone: the failure it reported before it went, if it did.
    fn gone(&mut self) -> io::Error {
        self.collect();
        self.check()
            .err()
            .unwrap_or_else(|| io::Error::other("the standard output writer thread stopped"))
    }

    /// Waits for one buffer to be written: before a stop signal, as long as it takes;
    /// after one, `Ok(false)` at once if `patient` is false, and otherwise until the output
    /// has taken nothing for [`STALL`] (then the [`gave_up`] error).
    fn wait_one(&mut self, patient: bool) -> io::Result<bool> {
        self.check()?;
        let stop = stopped();
        let before_stop = stop
            .as_ref()
            .map(|s| s.try_recv() == Err(TryRecvError::Empty));
        let outcome = match (stop, before_stop) {
            (None, _) => self.written.recv().map_err(|_| self.gone()),
            (Some(stop), Some(true)) => crossbeam_channel::select! {
                recv(self.written) -> outcome => outcome.map_err(|_| self.gone()),
                recv(stop) -> _ => return self.wait_one(patient),
            },
            _ if !patient => return Ok(false),
            _ => loop {
                let seen = self.progress.load(Ordering::Relaxed);
                match self.written.recv_timeout(STALL) {
                    Ok(outcome) => break Ok(outcome),
                    Err(RecvTimeoutError::Timeout)
                        if self.progress.load(Ordering::Relaxed) != seen =>
                    {
                        continue
                    }
                    Err(RecvTimeoutError::Timeout) => {
                        self.stalled = true;
                        return self.check().map(|()| false);
                    }
                    Err(RecvTimeoutError::Disconnected) => break Err(self.gone()),
                }
            },
        };
        self.acknowledge(outcome?);
        self.check().map(|()| true)
    }

    /// Hands the pending bytes over once there is room; see [`wait_one`](Self::wait_one)
    /// for `patient`. Not patient and stopped: the bytes stay pending.
    fn hand_over(&mut self, patient: bool) -> io::Result<()> {
        self.collect();
        self.check()?;
        while self.in_flight >= IN_FLIGHT {
            if !self.wait_one(patient)? {
                return Ok(());
            }
        }
        let buffer = std::mem::replace(&mut self.pending, Vec::with_capacity(CHUNK));
        if self.to_writer.send(buffer).is_err() {
            return Err(self.gone());
        }
        self.in_flight += 1;
        Ok(())
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.check()?;
        self.pending.extend_from_slice(buf);
        if self.pending.len() >= CHUNK {
            self.hand_over(false)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            self.hand_over(true)?;
        }
        while self.in_flight > 0 {
            self.wait_one(true)?;
        }
        self.check()
    }
}

/// Writes `buffer` to descriptor 1 a pipe page at a time, counting each page's progress.
fn write_out(mut buffer: &[u8], progress: &AtomicU64) -> io::Result<()> {
    let out = io::stdout();
    while !buffer.is_empty() {
        match rustix::io::write(out.as_fd(), &buffer[..buffer.len().min(4096)]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                buffer = &buffer[n..];
                progress.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(rustix::io::Errno::INTR) => {}
            // Left non-blocking by whoever shares it: wait for room, as a blocking write would.
            Err(rustix::io::Errno::AGAIN) => {
                match poll(&mut [PollFd::new(&out, PollFlags::OUT)], None) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}
