//! `ferroflake_leased_generator`: a generator whose node id is leased from a registry
//! (ferroflake-lease's `LeasedGenerator`), and the lease result codes. Unix only.

use core::ffi::c_char;
use std::time::Duration;

use ferroflake::AnyClock;
use ferroflake_lease::{LeaseConfig, LeaseError, LeaseSettings, LeaseStatus, LeasedGenerator};
use ferroflake_lease_stores::RegistryAddress;

use crate::boundary::{borrow, borrow_str, fill_ids, guard, out};
use crate::failure::Failure;
use crate::ferroflake_result::{self, *};
use crate::layout::ferroflake_layout;
use crate::options::{ferroflake_generator_options, FERROFLAKE_CLOCK_MANUAL};
use crate::result::from_kind;
use crate::versioned::{self, field_spans, Versioned};

/// Settings for `ferroflake_leased_generator_new`. Start from
/// `FERROFLAKE_LEASE_OPTIONS_INIT(&options)` and change what you need. Durations are in ms;
/// 0 in a duration other than `ttl_ms` means "derived from `ttl_ms`" as noted.
///
/// It can grow like `ferroflake_generator_options`: `struct_size` names the caller's
/// version, fields past it take their defaults.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ferroflake_lease_options {
    /// The size of the caller's version of this struct, set by the `_init` function.
    pub struct_size: u32,
    /// How long a claim lasts unless renewed. Default 10,000; at least 10.
    pub ttl_ms: u64,
    /// The longest TTL any holder in this registry uses (a registry that lost its records
    /// makes new holders wait this long plus the quarantine). 0: the larger of `ttl_ms` and
    /// 10,000.
    pub max_ttl_ms: u64,
    /// How often the lease is renewed. 0: `ttl_ms / 3`.
    pub renew_every_ms: u64,
    /// Issuing stops this long before the lease's local deadline. 0: `ttl_ms / 10`.
    pub safety_margin_ms: u64,
    /// How long a released or expired node id rests before anyone may claim it.
    /// 0: `ttl_ms / 5`.
    pub quarantine_ms: u64,
    /// The longest `ferroflake_leased_generator_new` holds back the first id, in all: for a
    /// lost-records floor (one longer than this fails at once, `START_WAIT_TOO_LONG`), then
    /// for the clock to pass a previous holder's reserved ids (`BEHIND_HIGH_WATER`).
    /// 0: 30,000, or the longest start the timings ask for if longer (max TTL + quarantine
    /// + TTL + 1 s), so the default never fails a start for waiting.
    pub max_start_wait_ms: u64,
    /// Who holds the lease, as the registry records it (UTF-8). NULL: `hostname:pid`.
    pub holder: *const c_char,
    /// The generator's options (clock: `FERROFLAKE_CLOCK_SYSTEM` or `_FAST`; drift,
    /// backward wait, resume point). NULL: the defaults.
    pub generator_options: *const ferroflake_generator_options,
    /// How far the generator's clock may be from the registry's, checked before the first
    /// id and at every renewal (`CLOCK_SKEW` beyond it). 0: half of quarantine + safety
    /// margin, which is also the most it may be.
    pub max_clock_skew_ms: u64,
    /// A file where the holder keeps its claim (UTF-8 path), so that a process restarted
    /// while the registry cannot be reached resumes it until its deadline, and one
    /// restarted later asks for the same node id first. It holds the lease's owner token:
    /// it must be the caller's alone, and one live process uses it at a time
    /// (`STATE_FILE` otherwise). NULL: none.
    pub state_file: *const c_char,
}

impl ferroflake_lease_options {
    fn defaults() -> Self {
        let config = LeaseConfig::default();
        ferroflake_lease_options {
            struct_size: core::mem::size_of::<Self>() as u32,
            ttl_ms: duration_ms(config.ttl),
            max_ttl_ms: 0,
            renew_every_ms: 0,
            safety_margin_ms: 0,
            quarantine_ms: 0,
            max_start_wait_ms: 0,
            holder: core::ptr::null(),
            generator_options: core::ptr::null(),
            max_clock_skew_ms: 0,
            state_file: core::ptr::null(),
        }
    }

    /// The lease crate's settings, and the generator's clock.
    ///
    /// # Safety
    /// `holder`, `generator_options` and `state_file` are NULL or valid, as documented on
    /// the struct.
    unsafe fn to_config(self, tick_ms: u64) -> Result<(LeaseConfig, AnyClock), Failure> {
        // SAFETY: the caller's promise above.
        let generator = unsafe { ferroflake_generator_options::read(self.generator_options)? };
        if generator.clock == FERROFLAKE_CLOCK_MANUAL {
            return Err(Failure::new(
                FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE,
                "a leased generator runs on the system or the fast clock, not a manual one",
            ));
        }
        let clock = generator.make_clock(tick_ms)?;
        let given = |ms: u64| (ms != 0).then_some(ms);
        let mut settings = LeaseSettings::default();
        settings.ttl_ms = Some(self.ttl_ms);
        settings.max_ttl_ms = given(self.max_ttl_ms);
        settings.renew_every_ms = given(self.renew_every_ms);
        settings.safety_margin_ms = given(self.safety_margin_ms);
        settings.quarantine_ms = given(self.quarantine_ms);
        settings.max_start_wait_ms = given(self.max_start_wait_ms);
        settings.max_clock_skew_ms = given(self.max_clock_skew_ms);
        if !self.holder.is_null() {
            // SAFETY: the caller's promise above.
            settings.holder = Some(unsafe { borrow_str(self.holder)? }.to_owned());
        }
        if !self.state_file.is_null() {
            // SAFETY: the caller's promise above.
            settings.state_file = Some(unsafe { borrow_str(self.state_file)? }.into());
        }
        settings.options = generator.to_core();
        Ok((settings.config(), clock))
    }
}

fn duration_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

// SAFETY: repr(C), struct_size first, integers and pointers, every field listed in order.
unsafe impl Versioned for ferroflake_lease_options {
    fn defaults() -> Self {
        Self::defaults()
    }
    fn fields() -> &'static [(usize, usize)] {
        field_spans!(ferroflake_lease_options; struct_size, ttl_ms, max_ttl_ms, renew_every_ms,
            safety_margin_ms, quarantine_ms, max_start_wait_ms, holder, generator_options,
            max_clock_skew_ms, state_file)
    }
}

/// Fills `*options`, a struct of `struct_size` bytes, with the defaults (TTL 10 s, the rest
/// derived from it, the generator's defaults) and sets its `struct_size`. Use
/// `FERROFLAKE_LEASE_OPTIONS_INIT(&options)`, which passes `sizeof options`.
///
/// Returns `STRUCT_SIZE` for a size that is no version of the struct, or `NULL_ARGUMENT`;
/// nothing is written then.
///
/// Ownership: `*options` is the caller's. Thread safety: any thread.
///
/// # Safety
/// `options` is NULL or valid for writing `struct_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_lease_options_init(
    struct_size: usize,
    options: *mut ferroflake_lease_options,
) -> ferroflake_result {
    // SAFETY: the caller's promise above.
    guard(|| unsafe { versioned::init(struct_size, options) })
}

/// Where a lease stands: the `state` of `ferroflake_lease_status`.
pub type ferroflake_lease_state = u32;
/// The last renewal succeeded; ids are issued up to the fence it set.
pub const FERROFLAKE_LEASE_HELD: ferroflake_lease_state = 0;
/// Renewals are failing: ids are issued until the last good renewal's deadline, then
/// refused (`LEASE_EXPIRED`) until a renewal of the same lease succeeds.
pub const FERROFLAKE_LEASE_FAILING: ferroflake_lease_state = 1;
/// The registry says the lease is no longer ours: nothing is issued again.
pub const FERROFLAKE_LEASE_LOST: ferroflake_lease_state = 2;
/// The lease was released.
pub const FERROFLAKE_LEASE_RELEASED: ferroflake_lease_state = 3;

/// What `ferroflake_leased_generator_status` reports. Set `struct_size` first with
/// `FERROFLAKE_LEASE_STATUS_INIT(&status)`; the library writes only that many bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ferroflake_lease_status {
    /// The size of the caller's version of this struct, set by the `_init` function.
    pub struct_size: u32,
    /// A `FERROFLAKE_LEASE_*` state.
    pub state: ferroflake_lease_state,
    /// The leased node id.
    pub node: u64,
    /// The registry's epoch of this claim (grows with each claim of the node id).
    pub epoch: u64,
    /// Failed renewals in a row (`FERROFLAKE_LEASE_FAILING`), else 0.
    pub failures: u64,
    /// The result code of the last failed renewal (`FERROFLAKE_LEASE_FAILING`), else
    /// `FERROFLAKE_RESULT_OK`.
    pub last_error: ferroflake_result,
    /// The high-water mark the registry holds for this lease (Unix ms).
    pub reserved_high_water_ms: u64,
    /// The generator's fence (Unix ms): ids of ticks at or after it are refused.
    /// `FERROFLAKE_NO_FENCE` if none.
    pub fence_ms: u64,
    /// The generator's clock minus the registry's at the last reading, in ms (positive:
    /// ahead). `FERROFLAKE_NO_CLOCK_SKEW` if the registry reports no clock (etcd).
    pub clock_skew_ms: i64,
    /// Half the last reading's round trip, in ms: the true skew is within this of
    /// `clock_skew_ms`.
    pub clock_skew_uncertainty_ms: u64,
}

/// `clock_skew_ms` of a lease whose registry reports no clock to read.
pub const FERROFLAKE_NO_CLOCK_SKEW: i64 = i64::MIN;

impl ferroflake_lease_status {
    fn empty() -> Self {
        ferroflake_lease_status {
            struct_size: core::mem::size_of::<Self>() as u32,
            state: FERROFLAKE_LEASE_HELD,
            node: 0,
            epoch: 0,
            failures: 0,
            last_error: FERROFLAKE_RESULT_OK,
            reserved_high_water_ms: 0,
            fence_ms: crate::generator::FERROFLAKE_NO_FENCE,
            clock_skew_ms: FERROFLAKE_NO_CLOCK_SKEW,
            clock_skew_uncertainty_ms: 0,
        }
    }
}

// SAFETY: repr(C), struct_size first, plain integers (the result code is only ever written
// by the library, from a valid code), every field listed in order.
unsafe impl Versioned for ferroflake_lease_status {
    fn defaults() -> Self {
        Self::empty()
    }
    fn fields() -> &'static [(usize, usize)] {
        field_spans!(ferroflake_lease_status; struct_size, state, node, epoch, failures,
            last_error, reserved_high_water_ms, fence_ms, clock_skew_ms, clock_skew_uncertainty_ms)
    }
}

/// Prepares `*status`, a struct of `struct_size` bytes, for
/// `ferroflake_leased_generator_status`: fills it with empty values (no fence, no error) and
/// sets its `struct_size`. Use `FERROFLAKE_LEASE_STATUS_INIT(&status)`.
///
/// Ownership: `*status` is the caller's. Thread safety: any thread.
///
/// # Safety
/// `status` is NULL or valid for writing `struct_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_lease_status_init(
    struct_size: usize,
    status: *mut ferroflake_lease_status,
) -> ferroflake_result {
    // SAFETY: the caller's promise above.
    guard(|| unsafe { versioned::init(struct_size, status) })
}

/// The code for a lease error (the lease crate's kinds, or the core's inside them), with
/// the lease crate's own text.
pub(crate) fn lease_failure(error: LeaseError) -> Failure {
    let code = match &error {
        LeaseError::Unavailable { .. } => FERROFLAKE_RESULT_UNAVAILABLE,
        LeaseError::NoFreeNode { .. } => FERROFLAKE_RESULT_NO_FREE_NODE,
        LeaseError::Lost { .. } => FERROFLAKE_RESULT_LEASE_LOST,
        LeaseError::BehindHighWater { .. } => FERROFLAKE_RESULT_BEHIND_HIGH_WATER,
        LeaseError::StartWaitTooLong { .. } => FERROFLAKE_RESULT_START_WAIT_TOO_LONG,
        LeaseError::ClockSkew { .. } => FERROFLAKE_RESULT_CLOCK_SKEW,
        LeaseError::BadAddress { .. } => FERROFLAKE_RESULT_BAD_ADDRESS,
        LeaseError::NotBuilt { .. } => FERROFLAKE_RESULT_NOT_BUILT,
        LeaseError::Generator(core) => from_kind(core.kind()),
        LeaseError::InvalidConfig { .. } => FERROFLAKE_RESULT_INVALID_CONFIG,
        LeaseError::StateFile { .. } => FERROFLAKE_RESULT_STATE_FILE,
        LeaseError::Store { .. } => FERROFLAKE_RESULT_STORE_ERROR,
        _ => FERROFLAKE_RESULT_UNMAPPED_ERROR,
    };
    Failure::new(code, error)
}

/// Opens the registry at `address` (NULL: the embedded default directory) for a holder
/// with `config`.
fn open_registry(
    address: Option<&str>,
    config: &LeaseConfig,
) -> Result<std::sync::Arc<dyn ferroflake_lease::Registry>, Failure> {
    let address = match address {
        None => RegistryAddress::Default,
        Some(text) => RegistryAddress::parse(text).map_err(lease_failure)?,
    };
    address.open_for(config).map_err(lease_failure)
}

/// Issues ids under a node id leased from a registry, and only while the lease is held.
///
/// Opaque: make one with `ferroflake_leased_generator_new`; end it with
/// `ferroflake_leased_generator_release` (which reports the release's outcome) or
/// `ferroflake_leased_generator_free`. Every other function may be called from any number
/// of threads at once. A background thread renews the lease; past the lease's deadline
/// (renewals failing) or once it is lost, calls return `LEASE_EXPIRED` and
/// `ferroflake_last_error_message` says why.
///
/// After `fork()`: the lease, and the renewal thread, stay the parent's. In the child every
/// function on an inherited handle returns `FERROFLAKE_RESULT_GENERATOR_FORKED`, and
/// `_release`/`_free` there release nothing (the parent goes on issuing under its lease).
/// Make a new leased generator in the child.
pub struct ferroflake_leased_generator {
    inner: LeasedGenerator<AnyClock>,
}

const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<ferroflake_leased_generator>();
};

impl ferroflake_leased_generator {
    /// The generator, unless this process is a fork of the one that made it.
    fn live(&self) -> Result<&LeasedGenerator<AnyClock>, Failure> {
        if self.inner.generator().is_forked() {
            return Err(self.forked());
        }
        Ok(&self.inner)
    }

    /// The core's refusal of a forked generator, in its words.
    #[cold]
    fn forked(&self) -> Failure {
        // In a forked child the core refuses every call without issuing anything.
        match self.inner.generator().next_id() {
            Err(error) => error.into(),
            Ok(_) => FERROFLAKE_RESULT_GENERATOR_FORKED.into(),
        }
    }

    /// A refusal from issuing: a lease expiry is explained (lost, renewals failing, clock
    /// jump) in the lease crate's words.
    #[cold]
    fn refused(&self, error: ferroflake::Error) -> Failure {
        Failure::new(from_kind(error.kind()), self.inner.explain(&error))
    }
}

/// Leases a node id for `layout` from the registry at `registry_address` and starts issuing
/// under it, renewing in a background thread.
///
/// `registry_address`: NULL for the embedded registry in the default directory
/// (`/var/tmp/ferroflake-leases-<uid>`, shared by every process of the user); an absolute
/// directory or `file:///dir` for an embedded registry there; `etcd://`, `redis://`,
/// `zk://` or `postgres://` URLs for the store backends (built with the `stores` feature,
/// else `NOT_BUILT`). `options` may be NULL for the defaults.
///
/// May block: a new (or emptied) registry makes the first holder wait the longest TTL plus
/// the quarantine (about 12 s with the defaults), and a previous holder's reserved ids are
/// waited out, the two together within `max_start_wait_ms`; a wait is announced first, in
/// one line on stderr that starts `ferroflake: `. An unreachable store fails within
/// seconds.
///
/// Returns `BAD_ADDRESS`, `NOT_BUILT`, `UNAVAILABLE`, `STORE_ERROR`, `NO_FREE_NODE`,
/// `BEHIND_HIGH_WATER`, `START_WAIT_TOO_LONG`, `CLOCK_SKEW`, `STATE_FILE`, `INVALID_CONFIG`, `STRUCT_SIZE`, `UNKNOWN_ENUM_VALUE` (a manual or
/// unknown clock), `INVALID_UTF8`, a core code (`EPOCH_IN_FUTURE`, `LAYOUT_EXHAUSTED`, ...)
/// or `NULL_ARGUMENT`; `ferroflake_last_error_message` has the details.
///
/// Ownership: `layout`, `registry_address` and `options` are only read during the call. On
/// success the caller owns `*out_generator` and ends it with `_release` or `_free`.
/// Thread safety: any thread.
///
/// # Safety
/// `layout` is NULL or a live handle; `registry_address` is NULL or a NUL-terminated string;
/// `options` is NULL or valid for its `struct_size` bytes (and its pointers NULL or valid);
/// `out_generator` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_leased_generator_new(
    layout: *const ferroflake_layout,
    registry_address: *const c_char,
    options: *const ferroflake_lease_options,
    out_generator: *mut *mut ferroflake_leased_generator,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (layout, options, out_generator) = unsafe {
            (
                borrow(layout)?.inner,
                versioned::read(options)?,
                out(out_generator)?,
            )
        };
        let address = if registry_address.is_null() {
            None
        } else {
            // SAFETY: the caller's promise above.
            Some(unsafe { borrow_str(registry_address)? })
        };
        // SAFETY: the caller's promise above.
        let (config, clock) = unsafe { options.to_config(layout.tick_ms())? };
        let registry = open_registry(address, &config)?;
        let inner = LeasedGenerator::start_reporting(
            layout,
            clock,
            registry,
            config,
            &mut ferroflake_lease::report_to_stderr,
        )
        .map_err(lease_failure)?;
        out_generator.set(Box::into_raw(Box::new(ferroflake_leased_generator {
            inner,
        })));
        Ok(())
    })
}

/// Stops issuing, stops renewing, releases the node id (recording the end of the last
/// issued tick, so the next holder starts after it) and frees the handle, returning the
/// registry's answer: `OK`, or `UNAVAILABLE`/`STORE_ERROR` (the claim then lapses after its
/// TTL). In a child process that inherited the handle through `fork()` it releases nothing
/// and returns `GENERATOR_FORKED`. NULL gives `NULL_ARGUMENT`.
///
/// Ownership: takes the handle back whatever the result; it must not be used again.
/// Thread safety: no other thread may be using the generator any more.
///
/// # Safety
/// `generator` is NULL or a live handle from this library.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_leased_generator_release(
    generator: *mut ferroflake_leased_generator,
) -> ferroflake_result {
    guard(|| {
        if generator.is_null() {
            return Err(FERROFLAKE_RESULT_NULL_ARGUMENT.into());
        }
        // SAFETY: the caller hands back a pointer from Box::into_raw, exactly once.
        let generator = unsafe { Box::from_raw(generator) };
        if generator.inner.generator().is_forked() {
            let refusal = generator.forked();
            drop(generator); // releases nothing in a forked child
            return Err(refusal);
        }
        generator.inner.shutdown().map_err(lease_failure)
    })
}

/// Stops issuing and renewing, releases the node id (ignoring the registry's answer; use
/// `_release` to see it) and frees the handle. In a child process that inherited the handle
/// through `fork()` it only frees the child's copy: the lease stays the parent's. NULL is
/// accepted and ignored.
///
/// Ownership: takes the handle back; it must not be used again.
/// Thread safety: no other thread may be using the generator any more.
///
/// # Safety
/// `generator` is NULL or a live handle from this library.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_leased_generator_free(
    generator: *mut ferroflake_leased_generator,
) {
    if !generator.is_null() {
        // A panic while releasing must not unwind into C; the handle is gone either way.
        let _ = guard(|| {
            // SAFETY: the caller hands back a pointer from Box::into_raw, exactly once.
            drop(unsafe { Box::from_raw(generator) });
            Ok(())
        });
    }
}

/// The next id.
///
/// Returns `LEASE_EXPIRED` when the lease cannot be proven (lost, or renewals failing past
/// its deadline; `ferroflake_last_error_message` says which), `GENERATOR_FORKED` in a forked
/// child, any error of `ferroflake_generator_next_id`, or `NULL_ARGUMENT`.
///
/// Ownership: `generator` is borrowed; `*out_id` is the caller's.
/// Thread safety: any number of threads may call this on one generator at once.
///
/// # Safety
/// `generator` is NULL or a live handle; `out_id` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_leased_generator_next_id(
    generator: *const ferroflake_leased_generator,
    out_id: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (generator, out_id) = unsafe { (borrow(generator)?, out(out_id)?) };
        match generator.inner.next_id() {
            Ok(id) => {
                out_id.set(id);
                Ok(())
            }
            Err(error) => Err(generator.refused(error)),
        }
    })
}

/// Fills `ids[0..len]` with consecutive new ids, as `ferroflake_generator_next_ids`: on
/// error `ids` is left untouched.
///
/// Returns the errors of `ferroflake_leased_generator_next_id`, `BUFFER_TOO_LARGE`, or
/// `NULL_ARGUMENT` (also for a NULL `ids` with `len` 0).
///
/// Ownership: `generator` is borrowed; `ids` is the caller's buffer, written only on success.
/// Thread safety: any number of threads may call this on one generator at once.
///
/// # Safety
/// `generator` is NULL or a live handle; `ids` is NULL or valid for writing `len`
/// `uint64_t`s.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_leased_generator_next_ids(
    generator: *const ferroflake_leased_generator,
    ids: *mut u64,
    len: usize,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let generator = unsafe { borrow(generator)? };
        // SAFETY: the caller's promise above.
        unsafe {
            fill_ids(ids, len, |scratch| {
                generator
                    .inner
                    .next_ids(scratch)
                    .map_err(|error| generator.refused(error))
            })
        }
    })
}

/// The leased node id.
///
/// Returns `GENERATOR_FORKED` in a forked child, or `NULL_ARGUMENT`.
///
/// Ownership: `generator` is borrowed. Thread safety: any thread.
///
/// # Safety
/// `generator` is NULL or a live handle; `out_node` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_leased_generator_node(
    generator: *const ferroflake_leased_generator,
    out_node: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (generator, out_node) = unsafe { (borrow(generator)?, out(out_node)?) };
        out_node.set(generator.live()?.node());
        Ok(())
    })
}

/// Where the lease stands: state, node id, claim epoch, failing renewals, reserved mark and
/// fence. Set `out_status->struct_size` first (`FERROFLAKE_LEASE_STATUS_INIT`); only that
/// many bytes are written.
///
/// Returns `GENERATOR_FORKED` in a forked child, `STRUCT_SIZE`, or `NULL_ARGUMENT`.
///
/// Ownership: `generator` is borrowed; `*out_status` is the caller's.
/// Thread safety: any thread, while others issue ids.
///
/// # Safety
/// `generator` is NULL or a live handle; `out_status` is NULL or valid for its
/// `struct_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_leased_generator_status(
    generator: *const ferroflake_leased_generator,
    out_status: *mut ferroflake_lease_status,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promise above.
        let generator = unsafe { borrow(generator)? }.live()?;
        if out_status.is_null() {
            return Err(FERROFLAKE_RESULT_NULL_ARGUMENT.into());
        }
        let mut status = ferroflake_lease_status::empty();
        status.node = generator.node();
        status.epoch = generator.grant().epoch;
        status.reserved_high_water_ms = generator.reserved_high_water_ms();
        status.fence_ms = generator
            .generator()
            .fence_ms()
            .unwrap_or(crate::generator::FERROFLAKE_NO_FENCE);
        if let Some(reading) = generator.clock_skew() {
            status.clock_skew_ms = reading.skew_ms.max(FERROFLAKE_NO_CLOCK_SKEW + 1);
            status.clock_skew_uncertainty_ms = reading.uncertainty_ms;
        }
        status.state = match generator.status() {
            LeaseStatus::Held => FERROFLAKE_LEASE_HELD,
            LeaseStatus::Failing {
                failures,
                last_error,
            } => {
                status.failures = u64::from(failures);
                status.last_error = lease_failure(last_error).code;
                FERROFLAKE_LEASE_FAILING
            }
            LeaseStatus::Lost => FERROFLAKE_LEASE_LOST,
            _ => FERROFLAKE_LEASE_RELEASED,
        };
        // SAFETY: the caller's promise above.
        unsafe { versioned::write(out_status, status) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{ferroflake_layout_free, ferroflake_layout_new_preset};
    use core::ffi::CStr;
    use core::ptr::{null, null_mut};

    fn last_text() -> String {
        // SAFETY: a NUL-terminated string that lives until the next failure on this thread.
        unsafe { CStr::from_ptr(crate::ferroflake_last_error_message()) }
            .to_string_lossy()
            .into_owned()
    }

    fn start(address: &str) -> (ferroflake_result, *mut ferroflake_leased_generator) {
        let address = std::ffi::CString::new(address).unwrap();
        let mut layout = null_mut();
        let mut generator = null_mut();
        // SAFETY: valid pointers; the layout is freed once.
        unsafe {
            assert_eq!(
                ferroflake_layout_new_preset(crate::FERROFLAKE_PRESET_TWITTER, &mut layout),
                FERROFLAKE_RESULT_OK
            );
            let code =
                ferroflake_leased_generator_new(layout, address.as_ptr(), null(), &mut generator);
            ferroflake_layout_free(layout);
            (code, generator)
        }
    }

    #[test]
    fn address_errors_carry_the_lease_crates_text() {
        let (code, generator) = start("ftp://x");
        assert_eq!(code, FERROFLAKE_RESULT_BAD_ADDRESS);
        assert!(generator.is_null());
        assert_eq!(
            last_text(),
            RegistryAddress::parse("ftp://x").unwrap_err().to_string()
        );
    }

    #[cfg(not(feature = "stores"))]
    #[test]
    fn store_schemes_are_not_built_without_the_feature() {
        let (code, _) = start("redis://127.0.0.1:1");
        assert_eq!(code, FERROFLAKE_RESULT_NOT_BUILT);
        assert!(last_text().contains("left out of this build"));
    }

    #[test]
    fn every_lease_error_has_a_code() {
        let errors = [
            LeaseError::Unavailable {
                registry: "r".into(),
                detail: "d".into(),
            },
            LeaseError::NoFreeNode { node_count: 1 },
            LeaseError::BehindHighWater {
                node_id: 1,
                resume_after_ms: 2,
                now_ms: 1,
            },
            LeaseError::BadAddress {
                address: "a".into(),
                detail: "d".into(),
            },
            LeaseError::NotBuilt {
                scheme: "zk".into(),
                feature: "zookeeper".into(),
            },
            LeaseError::Generator(ferroflake::Error::ZeroTick),
            LeaseError::InvalidConfig { detail: "d".into() },
            LeaseError::Store {
                registry: "r".into(),
                detail: "d".into(),
            },
        ];
        let mut codes: Vec<u32> = Vec::new();
        for error in errors {
            let text = error.to_string();
            let failure = lease_failure(error);
            assert_ne!(failure.code, FERROFLAKE_RESULT_UNMAPPED_ERROR, "{text}");
            assert_eq!(failure.detail.as_deref(), Some(text.as_str()));
            codes.push(failure.code as u32);
        }
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), 8, "two lease errors share a code");
    }

    #[test]
    fn options_left_at_their_defaults_are_the_lease_crates() {
        let config_of = |options: ferroflake_lease_options| {
            // SAFETY: the defaults' pointers are NULL.
            match unsafe { options.to_config(1) } {
                Ok((config, _clock)) => config,
                Err(failure) => panic!("{failure:?}"),
            }
        };
        let defaults = ferroflake_lease_options::defaults();
        assert_eq!(config_of(defaults), LeaseConfig::default());
        let longer = ferroflake_lease_options {
            ttl_ms: 20_000,
            ..defaults
        };
        assert_eq!(
            config_of(longer),
            LeaseConfig::with_ttl(Duration::from_secs(20))
        );
    }

    #[test]
    fn a_leased_generator_issues_under_its_node_and_releases_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut options = ferroflake_lease_options::defaults();
        options.ttl_ms = 1000;
        options.max_ttl_ms = 1000;
        options.quarantine_ms = 10;
        let address = std::ffi::CString::new(dir.path().to_str().unwrap()).unwrap();
        let mut layout = null_mut();
        let mut generator = null_mut();
        let (mut id, mut node) = (0, 0);
        let mut status = ferroflake_lease_status::empty();
        // SAFETY: valid pointers, each handle ended once.
        unsafe {
            ferroflake_layout_new_preset(crate::FERROFLAKE_PRESET_TWITTER, &mut layout);
            assert_eq!(
                ferroflake_leased_generator_new(layout, address.as_ptr(), &options, &mut generator),
                FERROFLAKE_RESULT_OK
            );
            assert_eq!(
                ferroflake_leased_generator_next_id(generator, &mut id),
                FERROFLAKE_RESULT_OK
            );
            assert_eq!(
                ferroflake_leased_generator_node(generator, &mut node),
                FERROFLAKE_RESULT_OK
            );
            assert_eq!((*layout).inner.decode(id).unwrap().node, node);
            assert_eq!(
                ferroflake_leased_generator_status(generator, &mut status),
                FERROFLAKE_RESULT_OK
            );
            assert_eq!((status.state, status.node), (FERROFLAKE_LEASE_HELD, node));
            assert_eq!(
                ferroflake_leased_generator_release(generator),
                FERROFLAKE_RESULT_OK
            );
            ferroflake_layout_free(layout);
        }
    }
}
