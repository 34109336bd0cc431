//! `--store URL`: which segment table IDs come from, for `ferroflake segment` and
//! `ferroflake serve` alike.

use std::sync::Arc;

use ferroflake_segment::{SegmentError, SegmentStore, SqliteStore};
use ferroflake_segment_stores::{redact, StoreAddress};

use ferroflake_store_address::{meant_here, scheme_of};

/// Reads a store address. Refuses, besides what [`StoreAddress::parse`] refuses, an empty
/// address, a relative path (with the absolute one it would have meant: each working
/// directory would name another table, and two tables hand out the same IDs) and, in
/// builds without the `stores` feature, a store on a server (saying how to get one).
///
/// # Errors
/// [`SegmentError::InvalidConfig`], with any password in the address hidden.
pub fn parse_store_address(address: &str) -> Result<StoreAddress, SegmentError> {
    let bad = |detail: &str| SegmentError::InvalidConfig {
        detail: format!("store address {:?}: {detail}", redact(address)),
    };
    if address.is_empty() {
        return Err(bad("empty (give an absolute path or a URL)"));
    }
    if !address.starts_with('/') && scheme_of(address).is_none() {
        let here = meant_here(address);
        return Err(bad(&format!(
            "a relative path names a different file in each working directory, and two \
             files hand out the same IDs; give an absolute path{here}"
        )));
    }
    let parsed = StoreAddress::parse(address)?;
    if !cfg!(feature = "stores") && !matches!(parsed, StoreAddress::Sqlite { .. }) {
        return Err(bad(
            "this ferroflake was built without the stores on servers; rebuild it with \
             `cargo install --path cli --features stores` (needs protoc: apt-get install \
             protobuf-compiler), or use a SQLite file (an absolute path)",
        ));
    }
    Ok(parsed)
}

/// How messages name the store at `address` (`None`: the embedded default): "the SQLite
/// file /srv/s.db", or the URL with any password hidden.
pub fn store_label(address: Option<&str>) -> String {
    match address {
        None => format!(
            "the embedded SQLite file {}",
            SqliteStore::default_path().display()
        ),
        Some(address) => match StoreAddress::parse(address) {
            Ok(StoreAddress::Sqlite { path }) => format!("the SQLite file {}", path.display()),
            _ => redact(address),
        },
    }
}

/// Opens the store at `address`, or the embedded SQLite default for `None`.
///
/// # Errors
/// What [`parse_store_address`] refuses; the store's error if it cannot be opened.
pub fn open_store(address: Option<&str>) -> Result<Arc<dyn SegmentStore>, SegmentError> {
    match address {
        None => ferroflake_segment_stores::open(None),
        Some(address) => ferroflake_segment_stores::open_address(&parse_store_address(address)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(address: &str) -> String {
        match parse_store_address(address) {
            Err(e @ SegmentError::InvalidConfig { .. }) => e.to_string(),
            other => panic!("{address:?}: {other:?}"),
        }
    }

    #[test]
    fn refuses_relative_paths_and_says_which_file_they_meant() {
        let message = refused("s.db");
        assert!(message.contains("relative path"), "{message}");
        assert!(message.contains("/s.db)"), "{message}");
        assert!(refused("dir/s.db").contains("relative path"));
        assert!(refused("").contains("empty"));
        assert!(refused("sqlite://s.db").contains("absolute path"));
        assert!(matches!(
            parse_store_address("/srv/s.db"),
            Ok(StoreAddress::Sqlite { .. })
        ));
    }

    #[test]
    fn server_stores_need_the_stores_feature() {
        let parsed = parse_store_address("mysql://root:pw@127.0.0.1:1/leaf");
        if cfg!(feature = "stores") {
            assert!(parsed.is_ok());
        } else {
            let message = refused("mysql://root:pw@127.0.0.1:1/leaf");
            assert!(message.contains("--features stores"), "{message}");
            assert!(!message.contains("pw"), "{message}");
        }
    }

    #[test]
    fn labels_hide_passwords() {
        assert_eq!(store_label(Some("/srv/s.db")), "the SQLite file /srv/s.db");
        assert!(!store_label(Some("postgres://u:secret@h:1/d")).contains("secret"));
    }
}
