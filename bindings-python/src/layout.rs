//! `Layout`: the core's validated bit layouts, presets and compose/decode.

use ferroflake::{FieldOrder, Layout};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};

use crate::datetimes::{datetime_from_unix_ms, unix_ms_from_int_or_datetime};
use crate::errors::to_pyerr;
use crate::ints::uint;
use crate::names::{one_of, quoted};
use crate::parts::Parts;

/// How time, node, sequence and shard share the 63 bits below the sign bit.
#[pyclass(frozen, eq, hash, name = "Layout", module = "ferroflake")]
#[derive(PartialEq, Eq, Hash)]
pub struct PyLayout {
    pub(crate) inner: Layout,
}

fn order_from_name(name: &str) -> PyResult<FieldOrder> {
    FieldOrder::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown order {name:?}: expected {}",
            one_of(&quoted(FieldOrder::NAMES))
        ))
    })
}

/// Widths beyond u32 saturate, so the core reports them as too many bits.
fn width(bits: u64) -> u32 {
    u32::try_from(bits).unwrap_or(u32::MAX)
}

impl PyLayout {
    fn wrap(inner: Layout) -> Self {
        PyLayout { inner }
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        py: Python<'_>,
        time_bits: u64,
        node_bits: u64,
        sequence_bits: u64,
        shard_bits: u64,
        tick_ms: u64,
        epoch: Option<&Bound<'_, PyAny>>,
        order: &str,
    ) -> PyResult<Self> {
        let epoch_ms = match epoch {
            Some(epoch) => unix_ms_from_int_or_datetime(epoch, "epoch")?,
            None => 0,
        };
        Layout::builder(width(time_bits), width(node_bits), width(sequence_bits))
            .shard_bits(width(shard_bits))
            .tick_ms(tick_ms)
            .epoch_ms(epoch_ms)
            .order(order_from_name(order)?)
            .build()
            .map(Self::wrap)
            .map_err(|e| to_pyerr(py, e))
    }
}

#[pymethods]
impl PyLayout {
    /// A custom layout, validated by the core. `epoch` is Unix ms or an aware `datetime`
    /// (default: the Unix epoch).
    #[new]
    #[pyo3(signature = (time_bits, node_bits, sequence_bits, *, shard_bits=0, tick_ms=1, epoch=None, order="node_then_sequence"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        #[pyo3(from_py_with = uint)] time_bits: u64,
        #[pyo3(from_py_with = uint)] node_bits: u64,
        #[pyo3(from_py_with = uint)] sequence_bits: u64,
        #[pyo3(from_py_with = uint)] shard_bits: u64,
        #[pyo3(from_py_with = uint)] tick_ms: u64,
        epoch: Option<&Bound<'_, PyAny>>,
        order: &str,
    ) -> PyResult<Self> {
        Self::build(
            py,
            time_bits,
            node_bits,
            sequence_bits,
            shard_bits,
            tick_ms,
            epoch,
            order,
        )
    }

    /// Same as the constructor, under a name that reads well next to the presets.
    #[classmethod]
    #[pyo3(signature = (time_bits, node_bits, sequence_bits, *, shard_bits=0, tick_ms=1, epoch=None, order="node_then_sequence"))]
    #[allow(clippy::too_many_arguments)]
    fn custom(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        #[pyo3(from_py_with = uint)] time_bits: u64,
        #[pyo3(from_py_with = uint)] node_bits: u64,
        #[pyo3(from_py_with = uint)] sequence_bits: u64,
        #[pyo3(from_py_with = uint)] shard_bits: u64,
        #[pyo3(from_py_with = uint)] tick_ms: u64,
        epoch: Option<&Bound<'_, PyAny>>,
        order: &str,
    ) -> PyResult<Self> {
        Self::build(
            py,
            time_bits,
            node_bits,
            sequence_bits,
            shard_bits,
            tick_ms,
            epoch,
            order,
        )
    }

    /// Twitter's snowflake: 41 time / 10 node / 12 sequence, 1 ms, epoch 2010-11-04.
    #[classmethod]
    fn twitter(_cls: &Bound<'_, PyType>) -> Self {
        Self::wrap(Layout::twitter())
    }

    /// Discord's: Twitter's widths, epoch 2015-01-01.
    #[classmethod]
    fn discord(_cls: &Bound<'_, PyType>) -> Self {
        Self::wrap(Layout::discord())
    }

    /// sonyflake: 39 time in 10 ms ticks / 8 sequence / 16 machine (lowest).
    #[classmethod]
    fn sonyflake(_cls: &Bound<'_, PyType>) -> Self {
        Self::wrap(Layout::sonyflake())
    }

    /// 53 bits, exact in a JavaScript number: 32 time in seconds / 8 node / 12 sequence.
    #[classmethod]
    fn js53(_cls: &Bound<'_, PyType>) -> Self {
        Self::wrap(Layout::js53())
    }

    /// 53 bits with ms ticks: 41 time / 4 node / 8 sequence.
    #[classmethod]
    fn js53ms(_cls: &Bound<'_, PyType>) -> Self {
        Self::wrap(Layout::js53ms())
    }

    /// 41 time / 6 node / 12 sequence / 4 shard (lowest), 1 ms.
    #[classmethod]
    fn sharded(_cls: &Bound<'_, PyType>) -> Self {
        Self::wrap(Layout::sharded())
    }

    /// A layout by name or spelling: a preset (one of `PRESET_NAMES`, case-insensitive) or
    /// `TIME/NODE/SEQUENCE[+SHARD]@EPOCH[,tick=Nms][,order=ORDER]`, as `str()` prints it.
    #[classmethod]
    fn from_name(_cls: &Bound<'_, PyType>, py: Python<'_>, name: &str) -> PyResult<Self> {
        Layout::parse(name)
            .map(Self::wrap)
            .map_err(|e| to_pyerr(py, e))
    }

    /// A Twitter node id from its 5-bit datacenter and 5-bit worker halves.
    #[staticmethod]
    fn twitter_node(
        py: Python<'_>,
        #[pyo3(from_py_with = uint)] datacenter: u64,
        #[pyo3(from_py_with = uint)] worker: u64,
    ) -> PyResult<u64> {
        Layout::twitter_node(datacenter, worker).map_err(|e| to_pyerr(py, e))
    }

    #[getter]
    fn time_bits(&self) -> u32 {
        self.inner.time_bits()
    }
    #[getter]
    fn node_bits(&self) -> u32 {
        self.inner.node_bits()
    }
    #[getter]
    fn sequence_bits(&self) -> u32 {
        self.inner.sequence_bits()
    }
    #[getter]
    fn shard_bits(&self) -> u32 {
        self.inner.shard_bits()
    }
    #[getter]
    fn total_bits(&self) -> u32 {
        self.inner.total_bits()
    }
    #[getter]
    fn tick_ms(&self) -> u64 {
        self.inner.tick_ms()
    }
    #[getter]
    fn epoch_ms(&self) -> u64 {
        self.inner.epoch_ms()
    }
    /// The epoch as an aware UTC `datetime`.
    #[getter]
    fn epoch<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        datetime_from_unix_ms(py, self.inner.epoch_ms())
    }
    /// `"node_then_sequence"` (Twitter) or `"sequence_then_node"` (sonyflake).
    #[getter]
    fn order(&self) -> &'static str {
        self.inner.order().name()
    }
    #[getter]
    fn max_node(&self) -> u64 {
        self.inner.max_node()
    }
    #[getter]
    fn max_sequence(&self) -> u64 {
        self.inner.max_sequence()
    }
    #[getter]
    fn max_shard(&self) -> u64 {
        self.inner.max_shard()
    }
    #[getter]
    fn max_id(&self) -> u64 {
        self.inner.max_id()
    }
    /// IDs per second one node can issue at most.
    #[getter]
    fn capacity_per_second(&self) -> u64 {
        self.inner.capacity_per_second()
    }
    /// The first Unix ms the time field cannot hold.
    #[getter]
    fn exhausts_at_ms(&self) -> u64 {
        self.inner.exhausts_at()
    }

    /// The ID for these fields; the timestamp is rounded down to its tick.
    #[pyo3(signature = (timestamp_ms, node=0, sequence=0, shard=0))]
    fn compose(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = uint)] timestamp_ms: u64,
        #[pyo3(from_py_with = uint)] node: u64,
        #[pyo3(from_py_with = uint)] sequence: u64,
        #[pyo3(from_py_with = uint)] shard: u64,
    ) -> PyResult<u64> {
        let parts = ferroflake::Parts {
            timestamp_ms,
            node,
            sequence,
            shard,
        };
        self.inner.compose(&parts).map_err(|e| to_pyerr(py, e))
    }

    /// The `resume_after_ms` that puts every ID of this layout above `old_id`, the highest
    /// ID an old generator issued with `old_layout` (default: this layout): new IDs are
    /// larger numbers and come after its tick in time. `OutOfRangeError` if no ID of this
    /// layout can be above it.
    #[pyo3(signature = (old_id, old_layout=None))]
    fn resume_after_id(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = uint)] old_id: u64,
        old_layout: Option<&PyLayout>,
    ) -> PyResult<u64> {
        let old_layout = old_layout.map_or(self.inner, |l| l.inner);
        self.inner
            .resume_after_id(old_id, &old_layout)
            .map_err(|e| to_pyerr(py, e))
    }

    /// The fields of an ID made with this layout.
    fn decode(&self, py: Python<'_>, #[pyo3(from_py_with = uint)] id: u64) -> PyResult<Parts> {
        self.inner
            .decode(id)
            .map(Parts::from)
            .map_err(|e| to_pyerr(py, e))
    }

    fn __getnewargs_ex__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<((u32, u32, u32), Bound<'py, PyDict>)> {
        let l = &self.inner;
        let kwargs = PyDict::new(py);
        kwargs.set_item("shard_bits", l.shard_bits())?;
        kwargs.set_item("tick_ms", l.tick_ms())?;
        kwargs.set_item("epoch", l.epoch_ms())?;
        kwargs.set_item("order", l.order().name())?;
        Ok(((l.time_bits(), l.node_bits(), l.sequence_bits()), kwargs))
    }

    /// The layout's spelling, which `Layout.from_name` reads back to an equal layout.
    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    pub(crate) fn __repr__(&self) -> String {
        let l = &self.inner;
        if let Some(name) = l.preset_name() {
            return format!("Layout.{name}()");
        }
        format!(
            "Layout({}, {}, {}, shard_bits={}, tick_ms={}, epoch={}, order={:?})",
            l.time_bits(),
            l.node_bits(),
            l.sequence_bits(),
            l.shard_bits(),
            l.tick_ms(),
            l.epoch_ms(),
            l.order().name()
        )
    }
}
