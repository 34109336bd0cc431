//! `ferroflake segment`: IDs from a table of per-key counters (Leaf's segment mode).
//!
//! One file per subcommand; `store.rs` reads and opens `--store`, `refusal.rs` turns a
//! [`SegmentError`](ferroflake_segment::SegmentError) into a message, an exit status and a
//! JSON error.

mod create;
mod next;
mod order_number;
mod recover;
mod refusal;
mod set_step;
mod status;
mod store;

use std::io::Write;

use crate::args::SegmentCommand;
use crate::failure::Failure;

pub fn run(command: &SegmentCommand, out: &mut impl Write) -> Result<(), Failure> {
    match command {
        SegmentCommand::Next(args) => next::run(args, out),
        SegmentCommand::Create(args) => create::run(args, out),
        SegmentCommand::Status(args) => status::run(args, out),
        SegmentCommand::Recover(args) => recover::run(args, out),
        SegmentCommand::SetStep(args) => set_step::run(args, out),
        SegmentCommand::OrderNumber(args) => order_number::run(args, out),
    }
}
