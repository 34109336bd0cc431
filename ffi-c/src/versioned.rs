//! Structs that can grow: every options and status struct starts with `uint32_t
//! struct_size`, so a field can be appended without breaking programs built against an older
//! header.
//!
//! The rule, for a struct passed in or filled out:
//!
//! - `struct_size` is the size of the caller's version of the struct. The struct's `_init`
//!   function (or `FERROFLAKE_*_INIT` macro, which passes `sizeof`) sets it.
//! - Fields are only ever appended, so an older version is a prefix of the current one. A
//!   size that ends after a field and before the next one starts (any padding included) is a
//!   version: the library reads, or writes, only those bytes, and fields past them take
//!   their defaults.
//! - Any other size (0, a size inside a field, a size larger than this library's struct: a
//!   header newer than the library) is refused with `FERROFLAKE_RESULT_STRUCT_SIZE`, and
//!   nothing is read or written.
//!
//! Every field of such a struct is an integer, a double or a pointer: any bytes are a value.

use core::mem::size_of;

use crate::failure::Failure;
use crate::ferroflake_result::FERROFLAKE_RESULT_STRUCT_SIZE;

/// A `#[repr(C)]` struct of plain fields whose first field is `struct_size: u32`.
///
/// # Safety
/// The type is `#[repr(C)]`, its first field is a `u32` named `struct_size`, every bit
/// pattern of every field is valid, and `fields` lists every field in order.
pub(crate) unsafe trait Versioned: Copy {
    /// The defaults, with `struct_size` = the whole struct.
    fn defaults() -> Self;
    /// (offset, end) of every field, in declaration order.
    fn fields() -> &'static [(usize, usize)];
}

/// (offset, end) of each named field of a struct, for [`Versioned::fields`]: a constant,
/// computed by the compiler.
macro_rules! field_spans {
    ($ty:ty; $($field:ident),+ $(,)?) => {{
        const fn size_of_field<T, F>(_: fn(&T) -> &F) -> usize {
            core::mem::size_of::<F>()
        }
        const SPANS: &[(usize, usize)] = &[$(
            (
                core::mem::offset_of!($ty, $field),
                core::mem::offset_of!($ty, $field) + size_of_field(|s: &$ty| &s.$field),
            )
        ),+];
        SPANS
    }};
}
pub(crate) use field_spans;

/// Whether `size` is the size of some version of `T`: it ends right after a field, or where
/// the next field starts (the padding between them included), or at the struct's end.
pub(crate) fn is_version<T: Versioned>(size: usize) -> bool {
    let fields = T::fields();
    fields.iter().enumerate().any(|(i, &(_, end))| {
        let next = fields
            .get(i + 1)
            .map_or(size_of::<T>(), |&(start, _)| start);
        size == end || size == next
    })
}

fn checked<T: Versioned>(size: u32) -> Result<usize, Failure> {
    let size = size as usize;
    if is_version::<T>(size) {
        Ok(size)
    } else {
        Err(Failure::new(
            FERROFLAKE_RESULT_STRUCT_SIZE,
            format!(
                "struct_size {size} is not the size of a version of this struct (this \
                 library's is {}): set it with the struct's _init function",
                size_of::<T>()
            ),
        ))
    }
}

/// Reads a caller's struct: the defaults for NULL; else the caller's version of it, with the
/// defaults for every field past its `struct_size`.
///
/// # Safety
/// `ptr` is NULL, or points to `struct_size` readable bytes (any alignment) that start with
/// that `uint32_t`.
pub(crate) unsafe fn read<T: Versioned>(ptr: *const T) -> Result<T, Failure> {
    let mut value = T::defaults();
    if ptr.is_null() {
        return Ok(value);
    }
    // SAFETY: the struct starts with a u32 (the caller's promise); read_unaligned needs no
    // alignment.
    let size = checked::<T>(unsafe { ptr.cast::<u32>().read_unaligned() })?;
    // SAFETY: `size` bytes are readable (the caller's promise) and fit in `T` (checked);
    // every byte pattern is a valid field value (the trait's promise).
    unsafe {
        core::ptr::copy_nonoverlapping(ptr.cast::<u8>(), (&mut value as *mut T).cast::<u8>(), size)
    };
    Ok(value)
}

/// Writes `value` into a caller's struct whose `struct_size` the caller has set: only that
/// many bytes, with `struct_size` left as it was.
///
/// # Safety
/// `ptr` is not NULL and points to `struct_size` writable bytes (any alignment) that start
/// with that `uint32_t`.
pub(crate) unsafe fn write<T: Versioned>(ptr: *mut T, value: T) -> Result<(), Failure> {
    // SAFETY: as in `read`.
    let size = checked::<T>(unsafe { ptr.cast::<u32>().read_unaligned() })?;
    // SAFETY: `size` bytes are writable (the caller's promise); the first four bytes are
    // the caller's own `struct_size`, which stays as it was.
    unsafe {
        core::ptr::copy_nonoverlapping(
            (&value as *const T).cast::<u8>().add(4),
            ptr.cast::<u8>().add(4),
            size - 4,
        )
    };
    Ok(())
}

/// Fills a caller's struct of `size` bytes with the defaults and sets its `struct_size`:
/// what every `_init` function does.
///
/// # Safety
/// `ptr` is NULL or points to `size` writable bytes (any alignment).
pub(crate) unsafe fn init<T: Versioned>(size: usize, ptr: *mut T) -> Result<(), Failure> {
    if ptr.is_null() {
        return Err(crate::ferroflake_result::FERROFLAKE_RESULT_NULL_ARGUMENT.into());
    }
    let size = checked::<T>(u32::try_from(size).unwrap_or(u32::MAX))?;
    let value = T::defaults();
    // SAFETY: `size` bytes are writable (the caller's promise) and fit in `T` (checked).
    unsafe {
        core::ptr::copy_nonoverlapping((&value as *const T).cast::<u8>(), ptr.cast::<u8>(), size);
        ptr.cast::<u32>().write_unaligned(size as u32);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Grown {
        struct_size: u32,
        a: u32,
        b: u64,
        c: u32,
        d: u64,
    }

    // SAFETY: repr(C), plain integers, struct_size first, every field listed.
    unsafe impl Versioned for Grown {
        fn defaults() -> Self {
            Grown {
                struct_size: size_of::<Grown>() as u32,
                a: 1,
                b: 2,
                c: 3,
                d: 4,
            }
        }
        fn fields() -> &'static [(usize, usize)] {
            field_spans!(Grown; struct_size, a, b, c, d)
        }
    }

    #[test]
    fn versions_end_between_fields() {
        let ok: Vec<usize> = (0..64).filter(|&n| is_version::<Grown>(n)).collect();
        // struct_size alone (4), +a (8), +b (16), +c (20, or 24 with its padding), +d (32).
        assert_eq!(ok, [4, 8, 16, 20, 24, 32]);
    }

    #[test]
    fn an_older_prefix_gets_defaults_for_the_rest() {
        let mut old = Grown {
            struct_size: 16,
            a: 10,
            b: 20,
            c: 99,
            d: 99,
        };
        // SAFETY: a live struct, larger than 16 bytes.
        let read = unsafe { read(&old) }.unwrap();
        assert_eq!((read.a, read.b, read.c, read.d), (10, 20, 3, 4));
        // SAFETY: as above.
        unsafe { write(&mut old, Grown::defaults()) }.unwrap();
        assert_eq!(
            old,
            Grown {
                struct_size: 16,
                a: 1,
                b: 2,
                c: 99,
                d: 99
            }
        );
    }

    #[test]
    fn other_sizes_are_refused_and_nothing_is_touched() {
        for size in [0, 3, 5, 12, 22, 33, u32::MAX] {
            let mut value = Grown {
                struct_size: size,
                ..Grown::defaults()
            };
            let before = value;
            // SAFETY: a live struct; refused sizes are never used to read or write.
            unsafe {
                assert_eq!(
                    read(&value).unwrap_err().code,
                    FERROFLAKE_RESULT_STRUCT_SIZE
                );
                assert_eq!(
                    write(&mut value, Grown::defaults()).unwrap_err().code,
                    FERROFLAKE_RESULT_STRUCT_SIZE
                );
                assert_eq!(
                    init(size as usize, &mut value).unwrap_err().code,
                    FERROFLAKE_RESULT_STRUCT_SIZE
                );
            }
            assert_eq!(value, before);
        }
    }
}
