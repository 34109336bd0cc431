//! Property tests: compose/decode round trips, field isolation, order, string forms.

use ferroflake::{Error, FieldOrder, Format, Layout, Parts};
use proptest::prelude::*;

/// Any valid layout: widths summing to at most 63, any tick, an epoch in the past.
fn layouts() -> impl Strategy<Value = Layout> {
    (
        1u32..=41,
        0u32..=16,
        1u32..=22,
        0u32..=8,
        1u64..=1000,
        0i64..=1_600_000_000_000,
        any::<bool>(),
    )
        .prop_filter("fits 63 bits", |(t, n, s, h, ..)| t + n + s + h <= 63)
        .prop_map(|(t, n, s, h, tick, epoch, sony)| {
            let order = if sony {
                FieldOrder::SequenceThenNode
            } else {
                FieldOrder::NodeThenSequence
            };
            Layout::builder(t, n, s)
                .shard_bits(h)
                .tick_ms(tick)
                .epoch_ms(epoch)
                .order(order)
                .build()
                .unwrap()
        })
}

/// A layout with parts that fit it.
fn layout_and_parts() -> impl Strategy<Value = (Layout, Parts)> {
    layouts().prop_flat_map(|l| {
        let span = (l.exhausts_at() - l.epoch_ms()).min(1 << 50);
        (
            Just(l),
            0..span,
            0..=l.max_node(),
            0..=l.max_sequence(),
            0..=l.max_shard(),
        )
            .prop_map(|(l, dt, node, sequence, shard)| {
                (
                    l,
                    Parts {
                        timestamp_ms: l.epoch_ms() + dt,
                        node,
                        sequence,
                        shard,
                    },
                )
            })
    })
}

fn floor_to_tick(l: &Layout, ms: u64) -> u64 {
    l.epoch_ms() + (ms - l.epoch_ms()) / l.tick_ms() * l.tick_ms()
}

proptest! {
    #[test]
    fn decode_inverts_compose((l, p) in layout_and_parts()) {
        let id = l.compose(&p).unwrap();
        prop_assert!(id <= l.max_id());
        prop_assert!(id < 1 << 63);
        let back = l.decode(id).unwrap();
        prop_assert_eq!(back, Parts { timestamp_ms: floor_to_tick(&l, p.timestamp_ms), ..p });
        prop_assert_eq!(l.compose(&back), Ok(id));
    }

    #[test]
    fn each_field_only_touches_its_own_bits((l, p) in layout_and_parts()) {
        let id = l.compose(&p).unwrap();
        let zero = Parts { timestamp_ms: l.epoch_ms(), node: 0, sequence: 0, shard: 0 };
        let only = |q: Parts| l.compose(&q).unwrap();
        let time = only(Parts { timestamp_ms: p.timestamp_ms, ..zero });
        let node = only(Parts { node: p.node, ..zero });
        let seq = only(Parts { sequence: p.sequence, ..zero });
        let shard = only(Parts { shard: p.shard, ..zero });
        // The fields are disjoint bit ranges whose union is the ID.
        prop_assert_eq!(time & node | time & seq | time & shard | node & seq | node & shard | seq & shard, 0);
        prop_assert_eq!(time | node | seq | shard, id);
        prop_assert_eq!(node >> l.node_shift(), p.node);
        prop_assert_eq!(seq >> l.sequence_shift(), p.sequence);
    }

    #[test]
    fn later_ticks_make_larger_ids((l, p) in layout_and_parts(), other_node in any::<u64>()) {
        let later = p.timestamp_ms + l.tick_ms();
        prop_assume!(later < l.exhausts_at());
        let q = Parts { timestamp_ms: later, node: other_node & l.max_node(), sequence: 0, shard: 0 };
        prop_assert!(l.compose(&q).unwrap() > l.compose(&p).unwrap());
    }

    #[test]
    fn encode_and_parse_agree_on_their_domain(v in any::<u64>()) {
        for f in Format::ALL {
            match f.encode(v) {
                Ok(s) => prop_assert_eq!(f.parse(&s), Ok(v)),
                Err(e) => {
                    prop_assert!(v > i64::MAX as u64, "{} refused {}", f.name(), v);
                    prop_assert_eq!(e, Error::ParseOverflow);
                }
            }
        }
    }

    #[test]
    fn strings_round_trip_and_sort_like_numbers(a in 0..=i64::MAX as u64, b in 0..=i64::MAX as u64) {
        for f in Format::ALL {
            let (sa, sb) = (f.encode(a).unwrap(), f.encode(b).unwrap());
            prop_assert_eq!(f.parse(&sa), Ok(a));
            if let Some(width) = f.width() {
                prop_assert_eq!(sa.len(), width);
                prop_assert_eq!(a.cmp(&b), sa.as_bytes().cmp(sb.as_bytes()));
            }
        }
    }

    #[test]
    fn parsing_never_panics(s in "\\PC{0,72}") {
        for f in Format::ALL {
            if let Ok(v) = f.parse(&s) {
                prop_assert!(v < 1 << 63);
            }
        }
    }

    #[test]
    fn building_layouts_never_panics(t in any::<u32>(), n in any::<u32>(), s in any::<u32>(), h in any::<u32>(), tick in any::<u64>(), epoch in any::<i64>()) {
        if let Ok(l) = Layout::builder(t, n, s).shard_bits(h).tick_ms(tick).epoch_ms(epoch).build() {
            prop_assert!(l.total_bits() <= 63);
            let _ = (l.capacity_per_second(), l.exhausts_at(), l.check_usable_at(u64::MAX));
        }
    }
}

/// An ID of `old` and the ms its tick ends: the highest a fleet issued.
fn old_fleet_id() -> impl Strategy<Value = (Layout, u64, Layout)> {
    (layout_and_parts(), layouts()).prop_map(|((old, parts), new)| {
        let id = old.compose(&parts).unwrap();
        (old, id, new)
    })
}

proptest! {
    /// A generator resumed with `resume_after_id` issues above the old fleet's highest ID,
    /// as a number and in time, whatever either layout; or is refused as out of range when
    /// no ID of the new layout can be above it.
    #[test]
    fn resume_after_id_issues_above_the_old_id((old, old_id, new) in old_fleet_id()) {
        let old_ends_ms = old.decode(old_id).unwrap().timestamp_ms + old.tick_ms() - 1;
        match new.resume_after_id(old_id, &old) {
            // No ID of the new layout can be above it: wider than the layout, or no tick
            // left after the point.
            Err(Error::IdOutOfRange { id, bits }) => {
                prop_assert!(old_id > new.max_id());
                prop_assert_eq!((id, bits), (old_id, new.total_bits()));
            }
            Err(Error::LayoutExhausted { exhausts_at_ms }) => {
                prop_assert_eq!(exhausts_at_ms, new.exhausts_at());
                let last_tick_start = new.tick_start_ms(new.max_tick());
                prop_assert!(last_tick_start <= old_ends_ms.max(new.decode(old_id).unwrap().timestamp_ms));
            }
            Err(e) => prop_assert!(false, "{e}"),
            Ok(after) => {
                prop_assert!(after >= old_ends_ms);
                // Started with its clock at the resume point (as a fleet switches over).
                let clock = ferroflake::ManualClock::new(after.max(new.epoch_ms()));
                let options = ferroflake::Options::given(None, None, Some(after));
                match ferroflake::Generator::with_clock(new, 0, clock, options) {
                    Ok(generator) => {
                        let first = generator.next_id().unwrap();
                        prop_assert!(first > old_id, "{first} <= {old_id}");
                        let issued_at = new.decode(first).unwrap().timestamp_ms;
                        prop_assert!(issued_at > old_ends_ms);
                    }
                    // resume_after_id refuses a point no tick follows.
                    Err(e) => prop_assert!(false, "{e}"),
                }
            }
        }
    }
}

#[test]
fn resume_after_id_refuses_a_point_no_tick_of_the_layout_follows() {
    // 8 time bits of 1 ms from 1970: the layout runs out at 256 ms.
    let tiny = Layout::parse("8/4/4@0").unwrap();
    let last_tick = tiny.max_id();
    assert_eq!(
        tiny.resume_after_id(last_tick, &tiny),
        Err(Error::LayoutExhausted {
            exhausts_at_ms: 256
        })
    );
    let before_last = last_tick - (1 << tiny.time_shift());
    assert_eq!(tiny.resume_after_id(before_last, &tiny), Ok(254));
    // Twitter's IDs run out in 2080; a sonyflake ID of 2188 has no Twitter ID after it.
    let late_sonyflake = (1u64 << 63) - 1;
    assert_eq!(
        Layout::twitter().resume_after_id(late_sonyflake, &Layout::sonyflake()),
        Err(Error::LayoutExhausted {
            exhausts_at_ms: Layout::twitter().exhausts_at()
        })
    );
}
