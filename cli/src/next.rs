//! `ferroflake next`: issue IDs under a given node id or a leased one.

use std::io::Write;

use ferroflake::{Error, Format, Generator, SystemClock};
use ferroflake_lease::{EmbeddedRegistry, LeaseConfig, LeaseError, LeasedGenerator};

use crate::args::{NextArgs, OutputFormat};
use crate::failure::Failure;
use crate::registry_url::RegistryAddress;

/// IDs are made in batches of this many (one CAS per batch within a tick).
const BATCH: usize = 4096;

/// Where the node id came from, for the JSON output.
struct Source {
    node: u64,
    lease: Option<(String, u64)>,
}

pub fn run(args: &NextArgs, out: &mut impl Write) -> Result<(), Failure> {
    let layout = args.layout.get();
    layout.check_shard(args.shard)?;
    if let Some(node) = args.node {
        let generator = Generator::new(layout, node)?;
        let source = Source { node, lease: None };
        return emit(args, &source, out, |ids| {
            fill(
                ids,
                args.shard,
                |s| generator.next_id_for_shard(s),
                |b| generator.next_ids(b),
            )
        });
    }
    let address = match &args.lease {
        Some(address) => RegistryAddress::parse(address).map_err(|e| refusal(None, e))?,
        None => RegistryAddress::Embedded(EmbeddedRegistry::default_dir()),
    };
    let registry = address.open().map_err(|e| refusal(Some(&address), e))?;
    let registry_name = registry.name().to_owned();
    let generator = LeasedGenerator::start(layout, SystemClock, registry, LeaseConfig::default())
        .map_err(|e| refusal(Some(&address), e))?;
    let source = Source {
        node: generator.node(),
        lease: Some((registry_name, generator.grant().epoch)),
    };
    let issued = emit(args, &source, out, |ids| {
        fill(
            ids,
            args.shard,
            |s| generator.next_id_for_shard(s),
            |b| generator.next_ids(b),
        )
    });
    let released = generator.shutdown();
    issued?;
    released.map_err(|e| {
        Failure::Run(format!(
            "IDs issued, but releasing node id {} failed (it lapses after its TTL): {e}",
            source.node
        ))
    })
}

/// Fills `ids` with a shard in the low bits if one was asked for, else by batch.
fn fill(
    ids: &mut [u64],
    shard: u64,
    one: impl Fn(u64) -> Result<u64, Error>,
    batch: impl Fn(&mut [u64]) -> Result<(), Error>,
) -> Result<(), Error> {
    if shard == 0 {
        return batch(ids);
    }
    for slot in ids {
        *slot = one(shard)?;
    }
    Ok(())
}

fn emit(
    args: &NextArgs,
    source: &Source,
    out: &mut impl Write,
    mut issue: impl FnMut(&mut [u64]) -> Result<(), Error>,
) -> Result<(), Failure> {
    let format = match args.format {
        OutputFormat::Dec | OutputFormat::Json => Format::Decimal,
        OutputFormat::Base62 => Format::Base62,
        OutputFormat::Base32 => Format::Base32,
    };
    let json = args.format == OutputFormat::Json;
    if json {
        let lease = match &source.lease {
            Some((registry, epoch)) => serde_json::json!({ "registry": registry, "epoch": epoch }),
            None => serde_json::Value::Null,
        };
        write!(
            out,
            "{{\"layout\":{},\"node\":{},\"lease\":{},\"ids\":[",
            serde_json::Value::from(args.layout.layout.as_str()),
            source.node,
            lease
        )?;
    }
    let mut buffer = vec![0u64; BATCH];
    let mut left = args.count;
    let mut first = true;
    while left > 0 {
        let take = left.min(BATCH as u64) as usize;
        issue(&mut buffer[..take])?;
        for &id in &buffer[..take] {
            if json {
                write!(out, "{}\"{id}\"", if first { "" } else { "," })?;
            } else {
                writeln!(out, "{}", &*format.encode(id))?;
            }
            first = false;
        }
        left -= take as u64;
    }
    if json {
        writeln!(out, "]}}")?;
    }
    out.flush()?;
    Ok(())
}

/// A lease that could not be had: say why, and that no id is guessed instead.
fn refusal(address: Option<&RegistryAddress>, error: LeaseError) -> Failure {
    let from = address.map_or_else(|| "the registry".to_owned(), RegistryAddress::describe);
    let message = format!(
        "cannot lease a node id from {from}: {error}\n\
         ferroflake never guesses a node id: make the registry usable, name another with \
         --lease URL, or pass --node N for an id you manage yourself"
    );
    match error {
        LeaseError::BadAddress { .. } | LeaseError::InvalidConfig { .. } => Failure::Input(message),
        _ => Failure::Run(message),
    }
}
