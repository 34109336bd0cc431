//! `ferroflake layout`: a layout's bits drawn, its capacity and exhaustion date.

use std::fmt::Write as _;
use std::io::Write;

use ferroflake::{FieldOrder, Layout};

use crate::args::LayoutArgs;
use crate::failure::Failure;
use crate::iso::iso_ms;

pub fn run(args: &LayoutArgs, out: &mut impl Write) -> Result<(), Failure> {
    if args.all {
        for (i, name) in Layout::PRESET_NAMES.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            let layout = Layout::from_name(name)?;
            write!(out, "{}", describe(name, &layout))?;
        }
        return Ok(());
    }
    if let Some(peer) = args.like {
        return crate::peers::run(peer, args, out);
    }
    write!(out, "{}", describe(args.layout.name(), &args.layout.get()))?;
    Ok(())
}

/// One field of the drawing: its label and its highest and lowest bit.
struct Field {
    label: String,
    high: u32,
    low: u32,
}

/// The fields from bit 63 down, skipping empty ones.
fn fields(layout: &Layout) -> Vec<Field> {
    let mut fields = vec![Field {
        label: "0".into(),
        high: 63,
        low: 63,
    }];
    let total = layout.total_bits();
    if total < 63 {
        fields.push(Field {
            label: format!("unused {}", 63 - total),
            high: 62,
            low: total,
        });
    }
    let mut add = |name: &str, bits: u32, shift: u32| {
        if bits > 0 {
            fields.push(Field {
                label: format!("{name} {bits}"),
                high: shift + bits - 1,
                low: shift,
            });
        }
    };
    add("time", layout.time_bits(), layout.time_shift());
    match layout.order() {
        FieldOrder::NodeThenSequence => {
            add("node", layout.node_bits(), layout.node_shift());
            add("sequence", layout.sequence_bits(), layout.sequence_shift());
        }
        FieldOrder::SequenceThenNode => {
            add("sequence", layout.sequence_bits(), layout.sequence_shift());
            add("node", layout.node_bits(), layout.node_shift());
        }
    }
    add("shard", layout.shard_bits(), layout.shard_shift());
    fields
}

/// The bit diagram: bit numbers, then boxes as wide as their bits (and their labels).
fn diagram(layout: &Layout) -> String {
    let fields = fields(layout);
    let widths: Vec<usize> = fields
        .iter()
        .map(|f| {
            let numbers = if f.high == f.low {
                f.high.to_string().len()
            } else {
                f.high.to_string().len() + f.low.to_string().len() + 1
            };
            (f.label.len() + 2)
                .max(numbers + 1)
                .max((f.high - f.low + 1) as usize)
        })
        .collect();
    let mut numbers = String::from(" ");
    let mut border = String::from("+");
    let mut labels = String::from("|");
    for (field, &width) in fields.iter().zip(&widths) {
        let high = field.high.to_string();
        if field.high == field.low {
            let _ = write!(numbers, "{high:<width$} ");
        } else {
            let low = field.low.to_string();
            let gap = width - high.len();
            let _ = write!(numbers, "{high}{low:>gap$} ");
        }
        border.push_str(&"-".repeat(width));
        border.push('+');
        let _ = write!(labels, "{:^width$}|", field.label);
    }
    format!("{}\n{border}\n{labels}\n{border}\n", numbers.trim_end())
}

/// The full description of one layout.
pub fn describe(name: &str, layout: &Layout) -> String {
    let order = match layout.order() {
        FieldOrder::NodeThenSequence => "node above sequence",
        FieldOrder::SequenceThenNode => "sequence above node",
    };
    let mut text = format!(
        "{name}: {} time + {} node + {} sequence{} bits ({order}); {} bits used, the sign bit is always 0\n\n",
        layout.time_bits(),
        layout.node_bits(),
        layout.sequence_bits(),
        if layout.shard_bits() > 0 { format!(" + {} shard", layout.shard_bits()) } else { String::new() },
        layout.total_bits(),
    );
    text.push_str(&diagram(layout));
    text.push('\n');
    let per_tick = layout.max_sequence() + 1;
    let lines = [
        ("tick", format!("{} ms", layout.tick_ms())),
        (
            "epoch",
            format!(
                "{}  ({} ms since the Unix epoch)",
                iso_ms(layout.epoch_ms()),
                layout.epoch_ms()
            ),
        ),
        (
            "node ids",
            format!("0 to {} ({} ids)", layout.max_node(), layout.max_node() + 1),
        ),
        (
            "capacity",
            format!(
                "{} IDs/s per node ({per_tick} per tick)",
                layout.capacity_per_second()
            ),
        ),
        ("exhausts", iso_ms(layout.exhausts_at())),
    ];
    if layout.shard_bits() > 0 {
        let _ = writeln!(text, "{:<10}0 to {}", "shards", layout.max_shard());
    }
    for (label, value) in lines {
        let _ = writeln!(text, "{label:<10}{value}");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twitter_diagram_puts_each_field_at_its_bits() {
        let text = diagram(&Layout::twitter());
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with(" 63  62 "), "{text}");
        assert!(lines[0].ends_with(" 0"), "{text}");
        assert!(
            lines[2].contains("time 41")
                && lines[2].contains("node 10")
                && lines[2].contains("sequence 12")
        );
        assert!(lines[2].find("time").unwrap() < lines[2].find("node").unwrap());
        assert!(lines[2].find("node").unwrap() < lines[2].find("sequence").unwrap());
        assert_eq!(lines[1].len(), lines[2].len(), "boxes line up:\n{text}");
    }

    #[test]
    fn sonyflake_has_sequence_above_node_and_an_unused_bit_range() {
        let names: Vec<String> = fields(&Layout::sonyflake())
            .into_iter()
            .map(|f| f.label)
            .collect();
        assert_eq!(names, ["0", "time 39", "sequence 8", "node 16"]);
        let js53: Vec<String> = fields(&Layout::js53())
            .into_iter()
            .map(|f| f.label)
            .collect();
        assert_eq!(js53[1], "unused 11");
    }
}
