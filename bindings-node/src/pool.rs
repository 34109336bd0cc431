//! Blocking work (a registry claim, a store connection, a first segment) on libuv's thread
//! pool, settled as a promise on the JS thread: never on the event loop.

use napi::bindgen_prelude::{AsyncTask, ToNapiValue, TypeName};
use napi::{sys, Env, Task, Unknown, ValueType};

use crate::error::{throw, Refusal};

/// Work for the pool and how its result becomes a JS value.
pub struct PoolTask<T: Send + 'static> {
    work: Option<Box<dyn FnOnce() -> Result<T, Refusal> + Send>>,
    finish: fn(&Env, T) -> napi::Result<sys::napi_value>,
}

/// The work's outcome: its value, or the refusal the promise rejects with.
pub struct Outcome<T>(Result<T, Refusal>);

/// A JS value made on the JS thread, handed to napi as it is.
pub struct RawValue(sys::napi_value);

impl TypeName for RawValue {
    fn type_name() -> &'static str {
        "object"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ToNapiValue for RawValue {
    unsafe fn to_napi_value(_env: sys::napi_env, value: Self) -> napi::Result<sys::napi_value> {
        Ok(value.0)
    }
}

impl<T: Send + 'static> Task for PoolTask<T> {
    type Output = Outcome<T>;
    type JsValue = RawValue;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let work = self.work.take().ok_or_else(|| {
            napi::Error::new(napi::Status::GenericFailure, "ferroflake: work ran twice")
        })?;
        Ok(Outcome(work()))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<RawValue> {
        match output.0 {
            Ok(value) => (self.finish)(&env, value).map(RawValue),
            Err(refusal) => Err(rejection(&env, refusal)),
        }
    }
}

/// A promise of `work`'s result, made into a JS value by `finish` on the JS thread; a
/// refusal rejects it with its coded error.
pub(crate) fn spawn<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, Refusal> + Send + 'static,
    finish: fn(&Env, T) -> napi::Result<sys::napi_value>,
) -> AsyncTask<PoolTask<T>> {
    AsyncTask::new(PoolTask {
        work: Some(Box::new(work)),
        finish,
    })
}

/// The error a promise rejects with: the refusal's coded JS error itself.
fn rejection(env: &Env, refusal: Refusal) -> napi::Error {
    let thrown = throw(env, refusal);
    let mut error = std::ptr::null_mut();
    // SAFETY: a live env on its JS thread; a valid out-pointer.
    let status = unsafe { sys::napi_get_and_clear_last_exception(env.raw(), &mut error) };
    if status != sys::Status::napi_ok || error.is_null() {
        return thrown;
    }
    // SAFETY: `error` is a live value of this env, just taken from it.
    napi::Error::from(unsafe { Unknown::from_raw_unchecked(env.raw(), error) })
}
