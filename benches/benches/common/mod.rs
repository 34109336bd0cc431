//! The peers, built as a Rust user would build them from each crate's docs, shared by the
//! bench targets. Each bench target uses only some of them.
#![allow(dead_code)]

use std::sync::Mutex;

/// Node / machine / worker id given to every generator.
pub const NODE: u16 = 1;

/// snowflaked's thread-safe generator (feature `sync`): one `AtomicU64` updated with
/// `fetch_update`, 42 time / 10 instance / 12 sequence bits for `u64`, 1 ms: capped at
/// 4,096 IDs per ms. Panics if the clock goes back.
pub fn snowflaked() -> snowflaked::sync::Generator {
    snowflaked::sync::Generator::new(NODE)
}

/// rs-snowflake's generator takes `&mut self`; shared, it needs the user's own lock.
/// `real_time_generate` reads the clock on every call, as a snowflake must; 4,096 per ms.
pub fn rs_snowflake() -> Mutex<snowflake::SnowflakeIdGenerator> {
    Mutex::new(snowflake::SnowflakeIdGenerator::new(1, 1))
}

/// snowflake_me with its default layout: 41 time / 5 data center / 5 machine / 12 sequence
/// bits, 1 ms; lock-free (one CAS loop), capped at 4,096 per ms.
pub fn snowflake_me() -> snowflake_me::Snowflake {
    snowflake_me::Snowflake::builder()
        .machine_id(&|| Ok(NODE))
        .data_center_id(&|| Ok(NODE))
        .finalize()
        .expect("snowflake_me default layout")
}

/// snowflake_me with 20 sequence bits (41 / 1 / 1 / 20): the same lock-free loop with a
/// cap no core reaches, to compare with ferroflake's uncapped layout.
pub fn snowflake_me_uncapped() -> snowflake_me::Snowflake {
    snowflake_me::Snowflake::builder()
        .bit_len_time(41)
        .bit_len_data_center_id(1)
        .bit_len_machine_id(1)
        .bit_len_sequence(20)
        .machine_id(&|| Ok(1))
        .data_center_id(&|| Ok(1))
        .finalize()
        .expect("snowflake_me 41/1/1/20 layout")
}

/// idgenerator's process-wide instance (a `parking_lot::Mutex` inside), configured as its
/// README shows. `worker_bits + sequence_bits` may be at most 22. It never waits when a
/// tick's sequence runs out: it borrows future ticks ("over cost"), and after
/// `top_over_cost_count` (2000) borrowed ticks in a row it spins until the clock catches up.
/// Note: `init` sleeps 500 ms.
pub fn idgenerator_init(worker_bits: u8, sequence_bits: u8) {
    let options = idgenerator::IdGeneratorOptions::new()
        .worker_id(u32::from(NODE))
        .worker_id_bit_len(worker_bits)
        .seq_bit_len(sequence_bits);
    idgenerator::IdInstance::init(options).expect("idgenerator options");
}

/// sonyflake: 39 time bits in 10 ms units / 8 sequence / 16 machine, a `Mutex` inside;
/// capped at 256 IDs per 10 ms (25,600/s); sleeps when the sequence runs out.
pub fn sonyflake() -> sonyflake::Sonyflake {
    sonyflake::Sonyflake::builder()
        .machine_id(&|| Ok(NODE))
        .finalize()
        .expect("sonyflake with an explicit machine id")
}

/// ulid's monotonic generator takes `&mut self`; shared, it needs the user's own lock.
pub fn ulid_monotonic() -> Mutex<ulid::Generator> {
    Mutex::new(ulid::Generator::new())
}

/// One ID from a shared ulid generator, as a `u128`.
pub fn ulid_next(generator: &Mutex<ulid::Generator>) -> u128 {
    let mut generator = generator.lock().expect("ulid lock");
    match generator.generate() {
        Ok(ulid) => ulid.0,
        Err(_) => 0,
    }
}

/// One ID from a shared rs-snowflake generator.
pub fn rs_snowflake_next(generator: &Mutex<snowflake::SnowflakeIdGenerator>) -> i64 {
    generator
        .lock()
        .expect("rs-snowflake lock")
        .real_time_generate()
}
