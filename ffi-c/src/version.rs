//! The library version, as a string at run time and as macros in the header.

use core::ffi::c_char;

/// The crate version with a NUL, from Cargo.toml at build time.
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");

/// The version of the linked library, e.g. "0.1.0": compare it with the header's
/// `FERROFLAKE_VERSION` to catch a header and library from different releases.
///
/// Never fails and never returns NULL.
/// Ownership: the string is static; do not free or modify it.
/// Thread safety: may be called from any thread at any time.
#[no_mangle]
pub extern "C" fn ferroflake_version() -> *const c_char {
    VERSION.as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> String {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../include/ferroflake.h");
        std::fs::read_to_string(path).expect("include/ferroflake.h is committed")
    }

    fn macro_value(header: &str, name: &str) -> String {
        let prefix = format!("#define {name} ");
        let line = header
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("{name} is not defined in the header"));
        line[prefix.len()..].trim().to_string()
    }

    #[test]
    fn header_version_macros_match_cargo_toml() {
        let header = header();
        assert_eq!(
            macro_value(&header, "FERROFLAKE_VERSION"),
            format!("\"{}\"", env!("CARGO_PKG_VERSION"))
        );
        assert_eq!(
            macro_value(&header, "FERROFLAKE_VERSION_MAJOR"),
            env!("CARGO_PKG_VERSION_MAJOR")
        );
        assert_eq!(
            macro_value(&header, "FERROFLAKE_VERSION_MINOR"),
            env!("CARGO_PKG_VERSION_MINOR")
        );
        assert_eq!(
            macro_value(&header, "FERROFLAKE_VERSION_PATCH"),
            env!("CARGO_PKG_VERSION_PATCH")
        );
    }

    #[test]
    fn runtime_version_is_the_crate_version() {
        // SAFETY: a static NUL-terminated string.
        let text = unsafe { core::ffi::CStr::from_ptr(ferroflake_version()) };
        assert_eq!(text.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    }
}
