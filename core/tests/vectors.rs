//! Checks the core against testdata/vectors.json, the cases every language's suite reads.

use ferroflake::{
    Error, FieldOrder, Format, Generator, Layout, ManualClock, Mask, MaskKey, MaskKeyring, Options,
    Parts,
};
use serde_json::Value;

fn vectors() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/vectors.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("read vectors.json")).unwrap()
}

fn u(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.parse().unwrap(),
        other => other.as_u64().unwrap(),
    }
}

fn layout(spec: &Value) -> Result<Layout, Error> {
    let name = spec["order"].as_str().unwrap();
    let order = FieldOrder::from_name(name).unwrap_or_else(|| panic!("unknown order {name}"));
    Layout::builder(
        spec["time_bits"].as_u64().unwrap() as u32,
        spec["node_bits"].as_u64().unwrap() as u32,
        spec["sequence_bits"].as_u64().unwrap() as u32,
    )
    .shard_bits(spec["shard_bits"].as_u64().unwrap() as u32)
    .tick_ms(spec["tick_ms"].as_u64().unwrap())
    .epoch_ms(spec["epoch_ms"].as_i64().unwrap())
    .order(order)
    .build()
}

fn parts(v: &Value) -> Parts {
    Parts {
        timestamp_ms: u(&v["timestamp_ms"]),
        node: u(&v["node"]),
        sequence: u(&v["sequence"]),
        shard: u(&v["shard"]),
    }
}

fn kind_name(e: Error) -> &'static str {
    e.kind().name()
}

#[test]
fn presets_match_their_published_definitions() {
    let v = vectors();
    let presets = v["presets"].as_object().unwrap();
    assert_eq!(presets.len(), Layout::PRESET_NAMES.len());
    for (name, spec) in presets {
        let preset = Layout::from_name(name).unwrap();
        assert_eq!(layout(spec).unwrap(), preset, "{name}");
        assert_eq!(
            u64::from(preset.total_bits()),
            u(&spec["total_bits"]),
            "{name}"
        );
        assert_eq!(
            preset.capacity_per_second(),
            u(&spec["capacity_per_second"]),
            "{name}"
        );
        assert_eq!(preset.exhausts_at(), u(&spec["exhausts_at_ms"]), "{name}");
    }
}

#[test]
fn ids_compose_decode_and_encode_as_recorded() {
    for case in vectors()["ids"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let layout = layout(&case["layout"]).unwrap();
        if let Some(preset) = case["preset"].as_str() {
            assert_eq!(Layout::from_name(preset).unwrap(), layout, "{name}");
        }
        let id = u(&case["id"]);
        assert_eq!(layout.compose(&parts(&case["parts"])), Ok(id), "{name}");
        assert_eq!(layout.decode(id), Ok(parts(&case["decoded"])), "{name}");
        for format in Format::ALL {
            let text = case[format.name()].as_str().unwrap();
            assert_eq!(&*format.encode(id).unwrap(), text, "{name} {format:?}");
            assert_eq!(format.parse(text), Ok(id), "{name} {format:?}");
        }
    }
}

#[test]
fn bad_layouts_are_refused_with_their_kind() {
    for case in vectors()["layout_errors"].as_array().unwrap() {
        let err = layout(&case["spec"]).unwrap_err();
        assert_eq!(kind_name(err), case["error"].as_str().unwrap(), "{case}");
    }
}

#[test]
fn bad_generators_are_refused_with_their_kind() {
    for case in vectors()["generator_errors"].as_array().unwrap() {
        let clock = ManualClock::new(u(&case["now_ms"]));
        let mut options = Options::default();
        options.resume_after_ms = case.get("resume_after_ms").map(u);
        let err = Generator::with_clock(
            layout(&case["layout"]).unwrap(),
            u(&case["node"]),
            &clock,
            options,
        )
        .unwrap_err();
        assert_eq!(kind_name(err), case["error"].as_str().unwrap(), "{case}");
    }
}

#[test]
fn bad_parts_and_ids_are_refused_with_their_kind() {
    let v = vectors();
    for case in v["compose_errors"].as_array().unwrap() {
        let err = layout(&case["layout"])
            .unwrap()
            .compose(&parts(&case["parts"]))
            .unwrap_err();
        assert_eq!(kind_name(err), case["error"].as_str().unwrap(), "{case}");
    }
    for case in v["decode_errors"].as_array().unwrap() {
        let err = layout(&case["layout"])
            .unwrap()
            .decode(u(&case["id"]))
            .unwrap_err();
        assert_eq!(kind_name(err), case["error"].as_str().unwrap(), "{case}");
    }
}

#[test]
fn values_parse_refuses_are_refused_by_encode_too() {
    for case in vectors()["encode_errors"].as_array().unwrap() {
        let format = Format::from_name(case["format"].as_str().unwrap()).unwrap();
        let err = format.encode(u(&case["id"])).unwrap_err();
        assert_eq!(kind_name(err), case["error"].as_str().unwrap(), "{case}");
    }
}

#[test]
fn strings_parse_or_fail_as_recorded() {
    let v = vectors();
    for case in v["parse_errors"].as_array().unwrap() {
        let format = Format::from_name(case["format"].as_str().unwrap()).unwrap();
        let err = format.parse(case["input"].as_str().unwrap()).unwrap_err();
        assert_eq!(kind_name(err), case["error"].as_str().unwrap(), "{case}");
    }
    for case in v["parse_ok"].as_array().unwrap() {
        let format = Format::from_name(case["format"].as_str().unwrap()).unwrap();
        assert_eq!(
            format.parse(case["input"].as_str().unwrap()),
            Ok(u(&case["id"])),
            "{case}"
        );
    }
}

fn keyring(spec: &Value) -> MaskKeyring {
    let lines: Vec<&str> = spec
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    MaskKeyring::parse(&lines.join("\n")).unwrap()
}

#[test]
fn mask_matches_the_reference_model() {
    let v = vectors();
    let cases = v["mask"]["cases"].as_array().unwrap();
    assert!(cases.len() > 100);
    for case in cases {
        let key = MaskKey::parse(case["key"].as_str().unwrap()).unwrap();
        let bits = case["bits"].as_u64().unwrap() as u32;
        let (id, masked) = (u(&case["id"]), u(&case["masked"]));
        let mask = Mask::new(&key, bits).unwrap();
        assert_eq!(mask.mask(id), Ok(masked), "{case}");
        assert_eq!(mask.unmask(masked), Ok(id), "{case}");
        let ring = MaskKeyring::new(key);
        for format in Format::ALL {
            let text = case["text"][format.name()].as_str().unwrap();
            assert_eq!(&*mask.encode(id, format).unwrap(), text, "{case}");
            assert_eq!(ring.decode(text, format, bits), Ok(id), "{case}");
        }
    }
}

#[test]
fn mask_refusals_match_the_vectors() {
    let v = vectors();
    let mask = &v["mask"];
    for case in mask["decode_errors"].as_array().unwrap() {
        let format = Format::from_name(case["format"].as_str().unwrap()).unwrap();
        let bits = case["bits"].as_u64().unwrap() as u32;
        let got = keyring(&case["keyring"]).decode(case["input"].as_str().unwrap(), format, bits);
        assert_eq!(
            got.map_err(kind_name),
            Err(case["error"].as_str().unwrap()),
            "{case}"
        );
    }
    for case in mask["key_errors"].as_array().unwrap() {
        let got = MaskKeyring::parse(case["input"].as_str().unwrap());
        assert_eq!(
            got.map_err(kind_name),
            Err(case["error"].as_str().unwrap()),
            "{case}"
        );
    }
    let first = MaskKey::parse(mask["cases"][0]["key"].as_str().unwrap()).unwrap();
    for spelling in mask["key_spellings"].as_array().unwrap() {
        assert_eq!(
            MaskKey::parse(spelling.as_str().unwrap()).as_ref(),
            Ok(&first)
        );
    }
}

#[test]
fn layout_spellings_read_print_and_decode_as_recorded() {
    let v = vectors();
    let cases = v["layout_spellings"].as_array().unwrap();
    assert!(!cases.is_empty(), "no layout spellings");
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let spelling = case["spelling"].as_str().unwrap();
        let parsed = Layout::parse(spelling).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(parsed, layout(&case["layout"]).unwrap(), "{name}");
        let display = parsed.to_string();
        assert_eq!(display, case["display"].as_str().unwrap(), "{name}");
        assert_eq!(Layout::parse(&display), Ok(parsed), "{name}");
        let id = u(&case["id"]);
        assert_eq!(parsed.compose(&parts(&case["parts"])), Ok(id), "{name}");
        assert_eq!(parsed.decode(id), Ok(parts(&case["decoded"])), "{name}");
    }
}

#[test]
fn bad_layout_spellings_fail_with_their_kind() {
    for case in vectors()["layout_spelling_errors"].as_array().unwrap() {
        let spelling = case["spelling"].as_str().unwrap();
        let error = Layout::parse(spelling).expect_err(spelling);
        assert_eq!(kind_name(error), case["error"], "{spelling:?}");
    }
}

#[test]
fn peer_views_match_the_reference_model() {
    let v = vectors();
    let cases = v["peer_views"].as_array().unwrap();
    assert!(cases.len() >= 30, "only {} peer views", cases.len());
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let peer = case["peer"].as_str().unwrap();
        let form = ferroflake::PeerParts::from_name(peer).unwrap_or_else(|| panic!("{peer}"));
        let layout = layout(&case["layout"]).unwrap();
        let shown = form.show(&layout, u(&case["id"])).unwrap().to_string();
        assert_eq!(shown, case["text"].as_str().unwrap(), "{name}, as {peer}");
    }
}
