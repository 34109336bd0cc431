//! `--store URL`: which segment table a command uses, read and opened.

use std::sync::Arc;

use ferroflake_segment::{SegmentError, SegmentStore, SqliteStore};
use ferroflake_segment_stores::{redact, StoreAddress};

use super::refusal::{explain, Refusal};
use crate::registry_url::scheme_of;

/// An open store and how messages name it.
pub struct Opened {
    pub store: Arc<dyn SegmentStore>,
    /// "the SQLite file /srv/s.db", or the URL with any password hidden.
    pub label: String,
}

/// Opens the store at `address`, or the embedded SQLite default for `None`. A refusal
/// names the store once the address could be read.
pub fn open(address: Option<&str>) -> Result<Opened, Refusal> {
    let Some(address) = address else {
        let label = format!(
            "the embedded SQLite file {}",
            SqliteStore::default_path().display()
        );
        return match ferroflake_segment_stores::open(None) {
            Ok(store) => Ok(Opened { store, label }),
            Err(e) => Err(Refusal::of(&e, explain(&e, Some(&label)))),
        };
    };
    let parsed = parse(address).map_err(|e| Refusal::of(&e, explain(&e, None)))?;
    let label = match &parsed {
        StoreAddress::Sqlite { path } => format!("the SQLite file {}", path.display()),
        _ => redact(address),
    };
    match ferroflake_segment_stores::open_address(&parsed) {
        Ok(store) => Ok(Opened { store, label }),
        Err(e) => Err(Refusal::of(&e, explain(&e, Some(&label)))),
    }
}

/// Reads `--store`. Refuses, besides what [`StoreAddress::parse`] refuses, a relative path
/// (with the absolute one it would have meant) and, in builds without the `stores` feature,
/// a server store (saying how to get one).
fn parse(address: &str) -> Result<StoreAddress, SegmentError> {
    let bad = |detail: &str| SegmentError::InvalidConfig {
        detail: format!("store address {:?}: {detail}", redact(address)),
    };
    if address.is_empty() {
        return Err(bad("empty (give an absolute path or a URL)"));
    }
    if !address.starts_with('/') && scheme_of(address).is_none() {
        let here = std::env::current_dir()
            .map(|cwd| format!(" (here: {})", cwd.join(address).display()))
            .unwrap_or_default();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(address: &str) -> String {
        match parse(address) {
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
            parse("/srv/s.db"),
            Ok(StoreAddress::Sqlite { .. })
        ));
    }

    #[test]
    fn server_stores_need_the_stores_feature() {
        let parsed = parse("mysql://root:pw@127.0.0.1:1/leaf");
        if cfg!(feature = "stores") {
            assert!(parsed.is_ok());
        } else {
            let message = refused("mysql://root:pw@127.0.0.1:1/leaf");
            assert!(message.contains("--features stores"), "{message}");
            assert!(!message.contains("pw"), "{message}");
        }
    }
}
