//! The ID mask: a bijection on its width, keyed, versioned, and without visible structure.

use std::collections::HashSet;

use ferroflake::{Error, ErrorKind, Format, Mask, MaskKey, MaskKeyring};
use proptest::prelude::*;

const KEY: &str = "1:000102030405060708090a0b0c0d0e0f";
const OTHER: &str = "1:000102030405060708090a0b0c0d0e0e"; // one bit off
const KEY_V2: &str = "2:000102030405060708090a0b0c0d0e0f"; // same secret, version 2

fn mask(key: &str, bits: u32) -> Mask {
    Mask::new(&MaskKey::parse(key).unwrap(), bits).unwrap()
}

/// A fixed sequence of well-mixed 64-bit numbers (splitmix64), so the samples repeat.
fn samples(seed: u64) -> impl Iterator<Item = u64> {
    let mut state = seed;
    std::iter::repeat_with(move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn round_trips_every_63_bit_id(id in 0u64..1 << 63) {
        let m = mask(KEY, 63);
        let masked = m.mask(id).unwrap();
        prop_assert!(masked < 1 << 63);
        prop_assert_eq!(m.unmask(masked), Ok(id));
        prop_assert_eq!(m.mask(m.unmask(id).unwrap()), Ok(id));
    }

    #[test]
    fn round_trips_every_53_bit_id(id in 0u64..1 << 53) {
        let m = mask(KEY, 53);
        let masked = m.mask(id).unwrap();
        prop_assert!(masked < 1 << 53);
        prop_assert_eq!(m.unmask(masked), Ok(id));
    }

    #[test]
    fn round_trips_any_width(bits in 8u32..=64, raw in any::<u64>()) {
        let m = mask(KEY, bits);
        let id = raw & m.max_value();
        let masked = m.mask(id).unwrap();
        prop_assert!(masked <= m.max_value());
        prop_assert_eq!(m.unmask(masked), Ok(id));
    }

    #[test]
    fn text_round_trips_in_every_format(id in 0u64..1 << 63, js in any::<bool>()) {
        let bits = if js { 53 } else { 63 };
        let id = id & (u64::MAX >> (64 - bits));
        let ring = MaskKeyring::parse(KEY).unwrap();
        let m = ring.current_mask(bits).unwrap();
        for format in Format::ALL {
            let text = m.encode(id, format).unwrap();
            prop_assert_eq!(text.len(), m.text_len(format));
            prop_assert_eq!(m.decode(&text, format), Ok(id));
            prop_assert_eq!(ring.decode(&text, format, bits), Ok(id));
        }
    }

    #[test]
    fn a_wrong_key_does_not_round_trip(id in 0u64..1 << 63) {
        let masked = mask(KEY, 63).mask(id).unwrap();
        prop_assert_ne!(mask(OTHER, 63).unmask(masked), Ok(id));
        prop_assert_ne!(mask(KEY_V2, 63).unmask(masked), Ok(id));
        prop_assert_ne!(mask(KEY, 62).unmask(masked & ((1 << 62) - 1)), Ok(id));
    }
}

#[test]
fn every_16_bit_input_has_its_own_output() {
    for bits in [8, 9, 16] {
        let m = mask(KEY, bits);
        let mut seen = vec![false; 1 << bits];
        for id in 0..1u64 << bits {
            let masked = m.mask(id).unwrap() as usize;
            assert!(!seen[masked], "{bits} bits: two inputs give {masked}");
            seen[masked] = true;
            assert_eq!(m.unmask(masked as u64), Ok(id));
        }
        assert!(seen.iter().all(|&s| s), "{bits} bits: not onto");
    }
}

#[test]
fn a_million_63_bit_ids_give_a_million_masks() {
    let m = mask(KEY, 63);
    let mut seen = HashSet::new();
    // Consecutive IDs (the common case) and scattered ones.
    let consecutive = 1_541_815_603_606_036_480u64..1_541_815_603_606_536_480;
    let scattered = samples(7).map(|x| x >> 1).take(500_000);
    for id in consecutive.chain(scattered) {
        assert!(seen.insert(m.mask(id).unwrap()), "collision at {id}");
    }
    assert_eq!(seen.len(), 1_000_000);
}

#[test]
fn a_wrong_key_or_version_is_refused_or_gives_another_id() {
    let ring = MaskKeyring::parse(KEY).unwrap();
    let text = ring
        .current_mask(63)
        .unwrap()
        .encode(42, Format::Base62)
        .unwrap();
    // The text names version 1: a keyring without it refuses.
    let v2 = MaskKeyring::parse(KEY_V2).unwrap();
    assert_eq!(
        v2.decode(&text, Format::Base62, 63),
        Err(Error::UnknownMaskKeyVersion { version: 1 })
    );
    assert_eq!(
        mask(KEY_V2, 63).decode(&text, Format::Base62),
        Err(Error::UnknownMaskKeyVersion { version: 1 })
    );
    // Another secret under the same version unmasks to some other ID.
    let other = MaskKeyring::parse(OTHER).unwrap();
    assert_ne!(other.decode(&text, Format::Base62, 63), Ok(42));
    // The same text read at another width is refused (its length is the width's).
    assert!(matches!(
        ring.decode(&text, Format::Base62, 53),
        Err(Error::ParseWrongLength { expected: 10, .. })
    ));
}

#[test]
fn one_flipped_input_bit_flips_about_half_the_output_bits() {
    for bits in [53u32, 63] {
        let m = mask(KEY, bits);
        let (mut flipped, mut compared) = (0u64, 0u64);
        let mut per_output_bit = vec![0u64; bits as usize];
        for id in samples(bits.into()).take(4_000) {
            let id = id & m.max_value();
            let base = m.mask(id).unwrap();
            for bit in 0..bits {
                let diff = base ^ m.mask(id ^ (1 << bit)).unwrap();
                flipped += u64::from(diff.count_ones());
                compared += u64::from(bits);
                for (i, count) in per_output_bit.iter_mut().enumerate() {
                    *count += (diff >> i) & 1;
                }
            }
        }
        let share = flipped as f64 / compared as f64;
        assert!((0.49..0.51).contains(&share), "{bits} bits: {share}");
        // Every output bit flips about half the time, none is stuck or follows the input.
        let trials = 4_000.0 * f64::from(bits);
        for (i, &count) in per_output_bit.iter().enumerate() {
            let p = count as f64 / trials;
            assert!(
                (0.47..0.53).contains(&p),
                "{bits} bits: output bit {i}: {p}"
            );
        }
    }
}

#[test]
fn masked_consecutive_ids_show_no_order() {
    for (bits, start) in [
        (63u32, 1_541_815_603_606_036_480u64),
        (53, 1 << 40),
        (63, 0),
    ] {
        let m = mask(KEY, bits);
        let masked: Vec<u64> = (start..start + 100_000)
            .map(|id| m.mask(id).unwrap())
            .collect();
        let ascending = masked.windows(2).filter(|w| w[0] < w[1]).count();
        let share = ascending as f64 / (masked.len() - 1) as f64;
        assert!(
            (0.49..0.51).contains(&share),
            "{bits} bits from {start}: {share}"
        );
        // Neither do their distances: the mean gap is about a third of the range.
        let mean_gap = masked
            .windows(2)
            .map(|w| w[0].abs_diff(w[1]) as f64)
            .sum::<f64>()
            / (masked.len() - 1) as f64;
        let third = m.max_value() as f64 / 3.0;
        assert!(
            (mean_gap / third - 1.0).abs() < 0.02,
            "{bits} bits: {mean_gap}"
        );
    }
}

#[test]
fn widths_and_ids_outside_the_mask_are_typed_errors() {
    let key = MaskKey::parse(KEY).unwrap();
    for bits in [0, 7, 65, u32::MAX] {
        assert_eq!(
            Mask::new(&key, bits).unwrap_err(),
            Error::MaskWidthOutOfRange { bits }
        );
    }
    let m = Mask::new(&key, 53).unwrap();
    assert_eq!(
        m.mask(1 << 53),
        Err(Error::IdOutOfRange {
            id: 1 << 53,
            bits: 53
        })
    );
    assert_eq!(
        m.unmask(u64::MAX),
        Err(Error::IdOutOfRange {
            id: u64::MAX,
            bits: 53
        })
    );
    assert_eq!(m.max_value(), (1 << 53) - 1);
    assert!(Mask::new(&key, 64).unwrap().mask(u64::MAX).is_ok());
}

#[test]
fn text_forms_have_fixed_lengths_and_name_the_version() {
    let key = MaskKey::parse("31:000102030405060708090a0b0c0d0e0f").unwrap();
    let cases = [
        (63, Format::Base62, 12, "V"),
        (63, Format::Base32, 14, "Z"),
        (63, Format::Decimal, 21, "31"),
        (53, Format::Base62, 10, "V"),
        (53, Format::Base32, 12, "Z"),
        (53, Format::Decimal, 18, "31"),
        (64, Format::Base32, 14, "Z"),
        (64, Format::Decimal, 22, "31"),
    ];
    for (bits, format, len, marker) in cases {
        let m = Mask::new(&key, bits).unwrap();
        assert_eq!(m.text_len(format), len);
        for id in [0, 1, m.max_value()] {
            let text = m.encode(id, format).unwrap();
            assert_eq!(text.len(), len, "{bits} {format:?} {id}");
            assert!(text.starts_with(marker), "{text}");
            assert_eq!(m.decode(&text, format), Ok(id));
        }
    }
}

#[test]
fn bad_masked_text_is_a_typed_error() {
    let ring = MaskKeyring::parse(KEY).unwrap();
    let m = ring.current_mask(63).unwrap();
    let good = m.encode(5, Format::Base62).unwrap().to_string();
    let good32 = m.encode(5, Format::Base32).unwrap().to_string();
    let cases: Vec<(String, Format, u32, ErrorKind)> = vec![
        (String::new(), Format::Base62, 63, ErrorKind::ParseEmpty),
        (
            good[..11].into(),
            Format::Base62,
            63,
            ErrorKind::ParseWrongLength,
        ),
        (
            format!("{good}0"),
            Format::Base62,
            63,
            ErrorKind::ParseWrongLength,
        ),
        (
            format!("1{}-", &good[1..11]),
            Format::Base62,
            63,
            ErrorKind::ParseInvalidCharacter,
        ),
        (
            format!("U{}", &good32[1..]),
            Format::Base32,
            63,
            ErrorKind::ParseInvalidCharacter,
        ),
        // Version 5 is not in the keyring; version 40 cannot exist.
        (
            format!("5{}", &good[1..]),
            Format::Base62,
            63,
            ErrorKind::UnknownMaskKeyVersion,
        ),
        (
            format!("e{}", &good[1..]),
            Format::Base62,
            63,
            ErrorKind::UnknownMaskKeyVersion,
        ),
        (
            format!("99{}", "0".repeat(19)),
            Format::Decimal,
            63,
            ErrorKind::UnknownMaskKeyVersion,
        ),
        // Numbers above the width.
        (
            "1zzzzzzzzzzz".into(),
            Format::Base62,
            63,
            ErrorKind::ParseOverflow,
        ),
        (
            "1F0000000000".into(),
            Format::Base62,
            63,
            ErrorKind::IdOutOfRange,
        ),
        (
            format!("01{}", "9".repeat(19)),
            Format::Decimal,
            63,
            ErrorKind::IdOutOfRange,
        ),
        (
            good.clone(),
            Format::Base62,
            65,
            ErrorKind::MaskWidthOutOfRange,
        ),
    ];
    for (text, format, bits, kind) in cases {
        assert_eq!(
            ring.decode(&text, format, bits).map_err(|e| e.kind()),
            Err(kind),
            "{text:?} {format:?} {bits}"
        );
    }
    assert_eq!(ring.decode(&good, Format::Base62, 63), Ok(5));
    // Crockford reads lower case and the usual confusions in the marker as elsewhere.
    let b32 = m.encode(5, Format::Base32).unwrap().to_ascii_lowercase();
    assert_eq!(ring.decode(&b32, Format::Base32, 63), Ok(5));
    assert_eq!(
        ring.decode(&format!("l{}", &b32[1..]), Format::Base32, 63),
        Ok(5)
    );
}

#[test]
fn keys_parse_from_hex_and_base64_and_refuse_anything_else() {
    let hex = MaskKey::parse(KEY).unwrap();
    for same in [
        "1:000102030405060708090A0B0C0D0E0F",
        "1:AAECAwQFBgcICQoLDA0ODw",
        "1:AAECAwQFBgcICQoLDA0ODw==",
        "01:AAECAwQFBgcICQoLDA0ODw",
    ] {
        assert_eq!(MaskKey::parse(same).as_ref(), Ok(&hex), "{same}");
    }
    // URL-safe base64 reads as the standard alphabet does.
    assert_eq!(
        MaskKey::parse("3:-_-_-_-_-_-_-_-_-_-_-w"),
        MaskKey::parse("3:+/+/+/+/+/+/+/+/+/+/+w")
    );
    let cases = [
        ("", Error::ParseEmpty),
        (":00", Error::ParseInvalidCharacter { index: 0 }),
        ("1", Error::ParseInvalidCharacter { index: 1 }),
        (
            "1-000102030405060708090a0b0c0d0e0f",
            Error::ParseInvalidCharacter { index: 1 },
        ),
        (
            "1:000102030405060708090a0b0c0d0e0g",
            Error::ParseInvalidCharacter { index: 33 },
        ),
        (
            "1:AAECAwQFBgcICQoLDA0ODx",
            Error::ParseInvalidCharacter { index: 23 },
        ),
        (
            "1:AAECAwQFBgcICQoLDA0ODw=A",
            Error::ParseInvalidCharacter { index: 25 },
        ),
        (
            "1:AAECAwQFBgcICQoLDA0OD*",
            Error::ParseInvalidCharacter { index: 23 },
        ),
        (
            "1:0001",
            Error::ParseWrongLength {
                expected: 32,
                found: 4,
            },
        ),
        (
            "1:",
            Error::ParseWrongLength {
                expected: 32,
                found: 0,
            },
        ),
        (
            "32:000102030405060708090a0b0c0d0e0f",
            Error::MaskKeyVersionOutOfRange {
                version: 32,
                max: 31,
            },
        ),
        (
            "99999999999:000102030405060708090a0b0c0d0e0f",
            Error::MaskKeyVersionOutOfRange {
                version: u32::MAX,
                max: 31,
            },
        ),
    ];
    for (text, error) in cases {
        assert_eq!(MaskKey::parse(text), Err(error), "{text:?}");
    }
    assert_eq!(
        MaskKey::new(32, [0; 16]),
        Err(Error::MaskKeyVersionOutOfRange {
            version: 32,
            max: 31
        })
    );
}

#[test]
fn debug_never_shows_the_secret() {
    let key = MaskKey::parse("9:deadbeefdeadbeefdeadbeefdeadbeef").unwrap();
    let ring = MaskKeyring::new(key.clone());
    let m = Mask::new(&key, 63).unwrap();
    for shown in [
        format!("{key:?}"),
        format!("{ring:?}"),
        format!("{m:?}"),
        format!("{key:#?}"),
    ] {
        let lower = shown.to_ascii_lowercase();
        assert!(!lower.contains("dead") && !lower.contains("222"), "{shown}");
        assert!(shown.contains('9'), "{shown}");
    }
    assert_eq!(
        format!("{ring:?}"),
        "MaskKeyring { current: 9, versions: [9], .. }"
    );
}

#[test]
fn keyrings_parse_one_key_a_line_the_first_current() {
    let text =
        "# keys\n\n  2:f0e1d2c3b4a5968778695a4b3c2d1e0f \r\n1:000102030405060708090a0b0c0d0e0f\n";
    let ring = MaskKeyring::parse(text).unwrap();
    assert_eq!(ring.current_version(), 2);
    assert_eq!(ring.versions().collect::<Vec<_>>(), [1, 2]);
    assert!(ring.contains(1) && !ring.contains(3) && !ring.contains(200));
    assert_eq!(
        ring.mask_of(3, 63).unwrap_err(),
        Error::UnknownMaskKeyVersion { version: 3 }
    );
    // A repeated key is harmless; a second secret for one version is refused.
    let repeated = format!("{KEY}\n{KEY}\n");
    assert_eq!(MaskKeyring::parse(&repeated).unwrap().versions().count(), 1);
    assert_eq!(
        MaskKeyring::parse(&format!("{KEY}\n{OTHER}")),
        Err(Error::DuplicateMaskKeyVersion { version: 1 })
    );
    assert_eq!(MaskKeyring::parse("# nothing\n\n"), Err(Error::ParseEmpty));
    assert_eq!(MaskKeyring::parse(""), Err(Error::ParseEmpty));
    // Errors point into the whole text.
    assert_eq!(
        MaskKeyring::parse(&format!("{KEY}\n  1:00x102030405060708090a0b0c0d0e0f")),
        Err(Error::ParseInvalidCharacter { index: 35 + 2 + 4 })
    );
}

#[test]
fn new_error_kinds_are_appended_with_names_and_messages() {
    let errors = [
        (
            Error::MaskWidthOutOfRange { bits: 7 },
            25,
            "MASK_WIDTH_OUT_OF_RANGE",
        ),
        (
            Error::MaskKeyVersionOutOfRange {
                version: 32,
                max: 31,
            },
            26,
            "MASK_KEY_VERSION_OUT_OF_RANGE",
        ),
        (
            Error::UnknownMaskKeyVersion { version: 3 },
            27,
            "UNKNOWN_MASK_KEY_VERSION",
        ),
        (
            Error::DuplicateMaskKeyVersion { version: 3 },
            28,
            "DUPLICATE_MASK_KEY_VERSION",
        ),
    ];
    for (error, code, name) in errors {
        let kind = error.kind();
        assert_eq!((kind.code(), kind.name()), (code, name));
        assert_eq!(ErrorKind::from_name(name), Some(kind));
        assert_eq!(ErrorKind::ALL[code as usize - 1], kind);
        assert!(kind.is_invalid_input());
        assert!(!error.to_string().is_empty());
    }
}
