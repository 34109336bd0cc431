//! [`ClockKind`]: the names of the crate's clocks, for faces and configuration that pick a
//! clock by name.

/// Which of the crate's clocks a generator reads, without the clock itself.
///
/// The C, Python and Node faces and configuration files name clocks with these words;
/// [`AnyClock::kind`](crate::AnyClock::kind) tells which one a run-time clock is.
///
/// ```
/// use ferroflake::ClockKind;
/// assert_eq!(ClockKind::from_name("fast"), Some(ClockKind::Fast));
/// assert_eq!(ClockKind::NAMES, ["system", "fast", "manual"]);
/// for kind in ClockKind::ALL {
///     assert_eq!(ClockKind::from_name(kind.name()), Some(kind));
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClockKind {
    /// The operating system's wall clock: `SystemClock`.
    System,
    /// A cheaper wall clock that stays within one tick of real time: `FastClock`.
    Fast,
    /// A clock that moves only when told to: [`ManualClock`](crate::ManualClock).
    Manual,
}

impl ClockKind {
    /// Every kind, in the order of [`NAMES`](Self::NAMES).
    pub const ALL: [ClockKind; 3] = [ClockKind::System, ClockKind::Fast, ClockKind::Manual];

    /// The name of every kind, for messages that list the valid ones.
    pub const NAMES: [&'static str; 3] = [
        Self::ALL[0].name(),
        Self::ALL[1].name(),
        Self::ALL[2].name(),
    ];

    /// The kind's name: `system`, `fast` or `manual`.
    pub const fn name(self) -> &'static str {
        match self {
            ClockKind::System => "system",
            ClockKind::Fast => "fast",
            ClockKind::Manual => "manual",
        }
    }

    /// The kind with this [`name`](Self::name) (exact, lower case), if any.
    pub fn from_name(name: &str) -> Option<ClockKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}
