//! The id each server registry keeps in its namespace's records
//! ([`Registry::identity`](ferroflake_lease::Registry::identity)): made once, by the first
//! registry to connect to the namespace, with the store's create-if-absent, and read back
//! by every other. Two servers at one address (a `127.0.0.1` on two hosts), or a server
//! wiped and started again, keep two ids, where their locators read the same.

use ferroflake_lease::{new_token, LeaseError};

/// The longest id read back: ours are 32 hex digits.
const LONGEST: usize = 64;

/// A new id: 128 random bits from the OS as 32 hex digits, like the embedded registry's.
/// Random rather than taken from the server, which two servers set up alike may share.
pub(crate) fn new_id(registry: &str) -> Result<String, LeaseError> {
    new_token(registry)
}

/// The id as stored, if it is one to report: printable ASCII with no spaces, at most
/// [`LONGEST`] bytes. Anything else is no id any registry wrote, and reporting it would
/// hand clients a name an operator cannot have meant.
pub(crate) fn readable(stored: &[u8]) -> Option<String> {
    let fine =
        !stored.is_empty() && stored.len() <= LONGEST && stored.iter().all(u8::is_ascii_graphic);
    fine.then(|| String::from_utf8_lossy(stored).into_owned())
}

/// What an error about an unreadable id tells the operator to do.
pub(crate) const DELETE_IT: &str = "delete it (the next registry to connect then makes a new id)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_random_hex_and_read_back() {
        let (a, b) = (new_id("test").unwrap(), new_id("test").unwrap());
        assert_ne!(a, b);
        assert_eq!(readable(a.as_bytes()), Some(a));
    }

    #[test]
    fn odd_values_are_no_id() {
        for odd in [
            &b""[..],
            b" ",
            b"a b",
            b"a\n",
            &[0xff, 0x41],
            &[b'a'; LONGEST + 1],
        ] {
            assert_eq!(readable(odd), None, "{odd:?}");
        }
        assert!(readable(&[b'a'; LONGEST]).is_some());
    }
}
