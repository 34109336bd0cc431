//! A `ferroflake+https://` store: ranges over TLS from a service that asks for a token,
//! the certificate authority and the token each read from a file; a missing or wrong token
//! is a typed error that says so.

mod common;

use common::{Place, TestCert};
use ferroflake_remote::RemoteStore;
use ferroflake_segment::{Range, SegmentError, SegmentStore};

#[test]
fn ranges_over_tls_with_a_token_from_a_file_and_refusals_that_say_why() {
    let place = Place::new();
    place.create("orders", 1, 100);
    let cert = TestCert::new();
    let tokens = place.dir.path().join("tokens.toml");
    common::write_whole(
        &tokens,
        &common::tokens_toml(&[("orders", "t-orders", &["issue:orders"])]),
    );
    let mut config = place.config();
    config.snowflake = false;
    config.tokens_file = Some(tokens);
    let server = place.start_tls(config, &cert);
    let dir = place.dir.path();
    let (ca, _) = cert.write(dir);
    let token_file = dir.join("token");
    common::write_whole(&token_file, "t-orders\n");
    let wrong_file = dir.join("wrong");
    common::write_whole(&wrong_file, "t-other\n");
    let address = |token: &std::path::Path| {
        format!(
            "ferroflake+https://{}/?ca_file={}&token_file={}",
            server.addr,
            ca.display(),
            token.display()
        )
    };

    let store = RemoteStore::open(&address(&token_file)).unwrap();
    assert_eq!(
        store.allocate("orders", 10).unwrap().range,
        Range { start: 1, end: 11 }
    );
    let refused = store.allocate("users", 10).unwrap_err();
    assert!(
        matches!(&refused, SegmentError::InvalidConfig { detail } if detail.contains("OUT_OF_SCOPE")),
        "{refused:?}"
    );
    let wrong = RemoteStore::open(&address(&wrong_file)).unwrap();
    let refused = wrong.allocate("orders", 10).unwrap_err();
    assert!(
        matches!(&refused, SegmentError::InvalidConfig { detail }
            if detail.contains("refused this client's token") && detail.contains("BAD_TOKEN")),
        "{refused:?}"
    );
    assert!(!format!("{refused:?}").contains("t-other"), "{refused:?}");
    // Plain HTTP to a TLS server answers nothing a store can use.
    let plain = RemoteStore::open(&format!("ferroflake+http://{}/", server.addr)).unwrap();
    assert!(matches!(
        plain.allocate("orders", 10),
        Err(SegmentError::Unavailable { .. })
    ));
    assert_eq!(place.max_id("orders"), 11, "no refused call took a range");
    server.stop();
}
