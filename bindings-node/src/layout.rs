//! The `Layout` class: a validated core layout, made from a preset name or a custom spec.

use napi::bindgen_prelude::{ClassInstance, FromNapiValue};
use napi::{Env, Unknown, ValueType};
use napi_derive::napi;

use crate::args::{self, field, options, to_number, MAX_SAFE_INTEGER};
use crate::decoded::{decode_with, id_argument, DecodedId};
use crate::error::{throw, Misuse, OrThrow, Refusal};
use crate::names::{one_of, quoted};

/// The layout Node uses when none is given: `js53ms`. See the README for why.
pub(crate) const DEFAULT_LAYOUT: ferroflake::Layout = ferroflake::Layout::js53ms();

const SPEC_KEYS: [&str; 7] = [
    "timeBits",
    "nodeBits",
    "sequenceBits",
    "shardBits",
    "tickMs",
    "epochMs",
    "order",
];

/// How time, node id, sequence and shard share the bits of an ID.
///
/// Make one with `Layout.preset(name)` or `Layout.custom(spec)`; the core validates both.
#[napi]
#[derive(Clone, Copy)]
pub struct Layout {
    pub(crate) inner: ferroflake::Layout,
}

#[napi]
impl Layout {
    /// Refused: a layout comes from `Layout.preset(name)` or `Layout.custom(spec)`.
    #[napi(constructor)]
    pub fn new(env: Env) -> napi::Result<Self> {
        Err(crate::error::not_constructible(
            &env,
            "use `Layout.preset(name)` or `Layout.custom(spec)`: the core checks every layout",
        ))
    }

    /// A layout by name or spelling: a preset, one of `Layout.presetNames()`
    /// (case-insensitive), or `TIME/NODE/SEQUENCE[+SHARD]@EPOCH[,tick=Nms][,order=ORDER]`
    /// as `toString()` prints it, e.g. `'41/8/14@2010-11-04T01:42:54.657Z'`.
    /// Throws RangeError `ERR_FERROFLAKE_UNKNOWN_LAYOUT` for text that is neither, and the
    /// builder's codes for widths, tick or epoch that make no layout.
    #[napi(factory, ts_args_type = "name: string")]
    pub fn preset(env: Env, name: Unknown) -> napi::Result<Layout> {
        let name = args::string(&env, name, "layout name")?;
        let inner = ferroflake::Layout::parse(&name).or_throw(&env)?;
        Ok(Layout { inner })
    }

    /// The layout's spelling, which `Layout.preset` reads back to an equal layout.
    #[napi(js_name = "toString")]
    pub fn spelling(&self) -> String {
        self.inner.to_string()
    }

    /// A custom layout. Widths are in bits; `tickMs` defaults to 1, `epochMs` to 0 (the Unix
    /// epoch), `shardBits` to 0 and `order` to `'node_then_sequence'`.
    #[napi(
        factory,
        ts_args_type = "spec: { timeBits: number; nodeBits: number; sequenceBits: number; shardBits?: number; tickMs?: number | bigint; epochMs?: number | bigint; order?: 'node_then_sequence' | 'sequence_then_node' }"
    )]
    pub fn custom(env: Env, spec: Unknown) -> napi::Result<Layout> {
        let Some(spec) = options(&env, Some(spec), "layout spec", &SPEC_KEYS)? else {
            return Err(throw(
                &env,
                Refusal::misuse(Misuse::InvalidType, "layout spec must be an object"),
            ));
        };
        let width = |key: &str| -> napi::Result<u32> {
            match field(&spec, key)? {
                // Anything above 63 is refused by the core as TOO_MANY_BITS; 255 keeps u32 sums safe.
                Some(v) => Ok(args::bounded(&env, v, key, 255)? as u32),
                None => Err(throw(
                    &env,
                    Refusal::misuse(Misuse::InvalidType, format!("layout spec needs {key}")),
                )),
            }
        };
        let mut builder = ferroflake::Layout::builder(
            width("timeBits")?,
            width("nodeBits")?,
            width("sequenceBits")?,
        );
        if let Some(v) = field(&spec, "shardBits")? {
            builder = builder.shard_bits(args::bounded(&env, v, "shardBits", 255)? as u32);
        }
        if let Some(v) = field(&spec, "tickMs")? {
            builder = builder.tick_ms(args::unsigned(&env, v, "tickMs")?);
        }
        if let Some(v) = field(&spec, "epochMs")? {
            builder = builder.epoch_ms(args::signed(&env, v, "epochMs")?);
        }
        if let Some(v) = field(&spec, "order")? {
            let name = args::string(&env, v, "order")?;
            let order = ferroflake::FieldOrder::from_name(&name).ok_or_else(|| {
                throw(
                    &env,
                    Refusal::misuse(
                        Misuse::InvalidOption,
                        format!(
                            "order must be {}, got {name:?}",
                            one_of(&quoted(ferroflake::FieldOrder::NAMES))
                        ),
                    ),
                )
            })?;
            builder = builder.order(order);
        }
        let inner = builder.build().or_throw(&env)?;
        Ok(Layout { inner })
    }

    /// The names `Layout.preset` accepts.
    #[napi]
    pub fn preset_names() -> Vec<&'static str> {
        ferroflake::Layout::PRESET_NAMES.to_vec()
    }

    /// The layout used when none is given (`js53ms`).
    #[napi(factory, js_name = "default")]
    pub fn default_layout() -> Layout {
        Layout {
            inner: DEFAULT_LAYOUT,
        }
    }

    #[napi(getter)]
    pub fn time_bits(&self) -> u32 {
        self.inner.time_bits()
    }
    #[napi(getter)]
    pub fn node_bits(&self) -> u32 {
        self.inner.node_bits()
    }
    #[napi(getter)]
    pub fn sequence_bits(&self) -> u32 {
        self.inner.sequence_bits()
    }
    #[napi(getter)]
    pub fn shard_bits(&self) -> u32 {
        self.inner.shard_bits()
    }
    #[napi(getter)]
    pub fn total_bits(&self) -> u32 {
        self.inner.total_bits()
    }
    /// The tick (time unit) in ms.
    #[napi(getter)]
    pub fn tick_ms(&self, env: Env) -> napi::Result<f64> {
        to_number(&env, self.inner.tick_ms(), "tickMs")
    }
    /// The epoch in ms since 1970-01-01T00:00:00Z.
    #[napi(getter)]
    pub fn epoch_ms(&self, env: Env) -> napi::Result<f64> {
        to_number(&env, self.inner.epoch_ms(), "epochMs")
    }
    #[napi(getter, ts_return_type = "'node_then_sequence' | 'sequence_then_node'")]
    pub fn order(&self) -> &'static str {
        self.inner.order().name()
    }
    /// The largest node id.
    #[napi(getter)]
    pub fn max_node(&self, env: Env) -> napi::Result<f64> {
        to_number(&env, self.inner.max_node(), "maxNode")
    }
    /// The largest sequence number within one tick.
    #[napi(getter)]
    pub fn max_sequence(&self, env: Env) -> napi::Result<f64> {
        to_number(&env, self.inner.max_sequence(), "maxSequence")
    }
    /// The largest shard.
    #[napi(getter)]
    pub fn max_shard(&self, env: Env) -> napi::Result<f64> {
        to_number(&env, self.inner.max_shard(), "maxShard")
    }
    /// The largest ID the layout can make, as a bigint (it may not fit a number).
    #[napi(getter)]
    pub fn max_id(&self) -> u64 {
        self.inner.max_id()
    }
    /// True when every ID of this layout is a safe integer, so `nextId()` may return numbers.
    #[napi(getter)]
    pub fn is_js_safe(&self) -> bool {
        self.inner.max_id() <= MAX_SAFE_INTEGER
    }
    /// IDs per second one node can make at most.
    #[napi(getter)]
    pub fn capacity_per_second(&self, env: Env) -> napi::Result<f64> {
        to_number(&env, self.inner.capacity_per_second(), "capacityPerSecond")
    }
    /// The first Unix ms the time field cannot hold; `Infinity` when that lies beyond any
    /// instant a JS number holds exactly.
    #[napi(getter)]
    pub fn exhausts_at_ms(&self) -> f64 {
        match self.inner.exhausts_at() {
            ms if ms <= MAX_SAFE_INTEGER => ms as f64,
            _ => f64::INFINITY,
        }
    }

    /// The ID for these parts, as a bigint. The timestamp is rounded down to its tick.
    #[napi(
        ts_args_type = "parts: { timestampMs: number | bigint; nodeId?: number | bigint; sequence?: number | bigint; shard?: number | bigint }"
    )]
    pub fn compose(&self, env: Env, parts: Unknown) -> napi::Result<u64> {
        let keys = ["timestampMs", "nodeId", "sequence", "shard"];
        let Some(object) = options(&env, Some(parts), "parts", &keys)? else {
            return Err(throw(
                &env,
                Refusal::misuse(Misuse::InvalidType, "parts must be an object"),
            ));
        };
        let part = |key: &str| -> napi::Result<u64> {
            match field(&object, key)? {
                Some(v) => args::unsigned(&env, v, key),
                None if key == "timestampMs" => Err(throw(
                    &env,
                    Refusal::misuse(Misuse::InvalidType, "parts needs timestampMs"),
                )),
                None => Ok(0),
            }
        };
        let parts = ferroflake::Parts {
            timestamp_ms: part("timestampMs")?,
            node: part("nodeId")?,
            sequence: part("sequence")?,
            shard: part("shard")?,
        };
        self.inner.compose(&parts).or_throw(&env)
    }

    /// Splits an ID made with this layout into its parts.
    #[napi(ts_args_type = "id: number | bigint | string")]
    pub fn decode<'env>(&self, env: &'env Env, id: Unknown) -> napi::Result<DecodedId<'env>> {
        decode_with(env, &self.inner, id)
    }

    /// A plain description, for logs and `JSON.stringify`.
    #[napi(js_name = "toJSON")]
    pub fn spec(&self, env: Env) -> napi::Result<LayoutSpec> {
        Ok(LayoutSpec {
            time_bits: self.time_bits(),
            node_bits: self.node_bits(),
            sequence_bits: self.sequence_bits(),
            shard_bits: self.shard_bits(),
            tick_ms: self.tick_ms(env)?,
            epoch_ms: self.epoch_ms(env)?,
            order: self.order().to_owned(),
        })
    }

    /// The `resumeAfterMs` that puts every ID of this layout above `oldId`, the highest ID
    /// an old generator issued with `oldLayout` (a `Layout` or its name; default: this
    /// layout): new IDs are larger numbers and come after its tick in time. RangeError
    /// `ERR_FERROFLAKE_ID_OUT_OF_RANGE` if no ID of this layout can be above it.
    #[napi(ts_args_type = "oldId: number | bigint | string, oldLayout?: Layout | string")]
    pub fn resume_after_id(
        &self,
        env: Env,
        old_id: Unknown,
        old_layout: Option<Unknown>,
    ) -> napi::Result<f64> {
        let old_id = id_argument(&env, old_id)?;
        let old_layout = match old_layout {
            Some(value) if value.get_type()? != ValueType::Undefined => {
                layout_option(&env, Some(value))?
            }
            _ => self.inner,
        };
        let after = self
            .inner
            .resume_after_id(old_id, &old_layout)
            .or_throw(&env)?;
        to_number(&env, after, "resumeAfterMs")
    }

    /// True when both describe the same layout.
    #[napi]
    pub fn equals(&self, other: &Layout) -> bool {
        self.inner == other.inner
    }
}

/// The fields of a layout, as `Layout.prototype.toJSON` gives them.
#[napi(object, object_from_js = false)]
pub struct LayoutSpec {
    pub time_bits: u32,
    pub node_bits: u32,
    pub sequence_bits: u32,
    pub shard_bits: u32,
    pub tick_ms: f64,
    pub epoch_ms: f64,
    #[napi(ts_type = "'node_then_sequence' | 'sequence_then_node'")]
    pub order: String,
}

/// A layout option: a `Layout`, a preset name or layout spelling, or absent (the default).
pub(crate) fn layout_option(env: &Env, value: Option<Unknown>) -> napi::Result<ferroflake::Layout> {
    let Some(value) = value else {
        return Ok(DEFAULT_LAYOUT);
    };
    match value.get_type()? {
        ValueType::String => {
            let name = args::string(env, value, "layout")?;
            ferroflake::Layout::parse(&name).or_throw(env)
        }
        ValueType::Object => {
            // SAFETY: a live JS object from this call; the type tag check refuses other classes.
            match unsafe { ClassInstance::<Layout>::from_napi_value(env.raw(), args::raw(&value)) }
            {
                Ok(layout) => Ok(layout.inner),
                Err(_) => Err(not_a_layout(env)),
            }
        }
        _ => Err(not_a_layout(env)),
    }
}

fn not_a_layout(env: &Env) -> napi::Error {
    throw(
        env,
        Refusal::misuse(
            Misuse::InvalidType,
            "layout must be a Layout or a preset name (see Layout.presetNames())",
        ),
    )
}
