//! A `ferroflake+http://` store over two services on one table: a client goes on through
//! the server that answers, passes over one that does not within its timeout, sends a
//! give-back that may have been applied to no second server, and fails closed with
//! neither.

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{closed, relay, silent, Place, Server};
use ferroflake_remote::RemoteStore;
use ferroflake_segment::{Range, SegmentError, SegmentStore};

fn service(place: &Place) -> Server {
    let mut config = place.config();
    config.snowflake = false;
    place.start(config)
}

/// A service over `place`, listening at `addr` (a port another service had): a server
/// that comes up after a client's first call.
fn service_at(place: &Place, addr: SocketAddr) -> Server {
    let mut config = place.config();
    config.snowflake = false;
    config.listen = addr;
    place.start(config)
}

fn store(servers: &[SocketAddr]) -> RemoteStore {
    let list: Vec<String> = servers.iter().map(ToString::to_string).collect();
    RemoteStore::open(&format!(
        "ferroflake+http://{}/?timeout_ms=300",
        list.join(",")
    ))
    .unwrap()
}

#[test]
fn a_client_goes_on_through_the_server_left_and_fails_closed_without_any() {
    let place = Place::new();
    place.create("orders", 1, 100);
    let a = service(&place);
    let b = service(&place);
    let (a_addr, b_addr) = (a.addr.to_string(), b.addr.to_string());
    let remote = store(&[a.addr, b.addr]);
    let mut ranges: Vec<Range> = (0..5)
        .map(|_| remote.allocate("orders", 10).unwrap().range)
        .collect();
    a.stop();
    for _ in 0..5 {
        ranges.push(remote.allocate("orders", 10).unwrap().range);
    }
    ranges.sort_by_key(|r| r.start);
    assert!(
        ranges.windows(2).all(|w| w[0].end <= w[1].start),
        "{ranges:?}"
    );
    assert_eq!(place.max_id("orders"), ranges.last().unwrap().end);
    b.stop();
    let began = Instant::now();
    let refused = remote.allocate("orders", 10).unwrap_err();
    assert!(
        matches!(&refused, SegmentError::Unavailable { detail, .. }
            if detail.contains(&a_addr) && detail.contains(&b_addr)),
        "{refused:?}"
    );
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "{:?}",
        began.elapsed()
    );
}

#[test]
fn a_server_that_does_not_answer_is_passed_over_for_the_one_that_does() {
    let place = Place::new();
    place.create("orders", 1, 100);
    let (quiet, held) = silent();
    let server = service(&place);
    let remote = store(&[quiet, server.addr]);
    let began = Instant::now();
    let range = remote.allocate("orders", 10).unwrap().range;
    assert_eq!(range, Range { start: 1, end: 11 });
    assert!(
        began.elapsed() < Duration::from_secs(2),
        "{:?}",
        began.elapsed()
    );
    assert!(
        !held.lock().unwrap().is_empty(),
        "the silent server was asked first"
    );
    // The next calls go to the server that answered first, at once.
    let began = Instant::now();
    for _ in 0..3 {
        remote.allocate("orders", 10).unwrap();
    }
    assert!(
        began.elapsed() < Duration::from_millis(250),
        "{:?}",
        began.elapsed()
    );
    server.stop();
}

#[test]
fn a_give_back_that_may_have_arrived_goes_to_no_second_server() {
    let place = Place::new();
    place.create("orders", 1, 100);
    let server = service(&place);
    let (front, quiet) = relay(server.addr);
    let remote = store(&[front, server.addr]);
    let taken = remote.allocate("orders", 100).unwrap().range;
    let rest = Range {
        start: taken.start + 10,
        end: taken.end,
    };

    // Sent to a server that no longer answers: it may have applied it, so no other server
    // is asked, and the table keeps the range.
    quiet.store(true, std::sync::atomic::Ordering::SeqCst);
    let refused = remote.give_back("orders", rest, taken.end).unwrap_err();
    assert!(
        matches!(refused, SegmentError::Unavailable { .. }),
        "{refused:?}"
    );
    assert_eq!(place.max_id("orders"), taken.end);

    // Tried again, it goes to the next server (the first is passed over for a while),
    // with the range's ticket still: given back.
    assert!(remote.give_back("orders", rest, taken.end).unwrap());
    assert_eq!(place.max_id("orders"), rest.start);

    // Refused at connect, it was never sent: the next server takes it.
    let again = store(&[closed(), server.addr]);
    let taken = again.allocate("orders", 100).unwrap().range;
    let rest = Range {
        start: taken.start + 1,
        end: taken.end,
    };
    assert!(again.give_back("orders", rest, taken.end).unwrap());
    assert_eq!(place.max_id("orders"), rest.start);
    server.stop();
}

/// A client that closes gives back its preloaded range, then the rest of its current one,
/// each with its own ticket: the table goes back to the first unissued ID.
#[test]
fn a_closing_client_gives_back_both_its_ranges_top_first() {
    let place = Place::new();
    place.create("orders", 1, 100);
    let server = service(&place);
    let remote = store(&[server.addr]);
    let current = remote.allocate("orders", 100).unwrap().range;
    let preloaded = remote.allocate("orders", 100).unwrap().range;
    assert!(remote
        .give_back("orders", preloaded, preloaded.end)
        .unwrap());
    let rest = Range {
        start: current.start + 60,
        end: current.end,
    };
    assert!(remote.give_back("orders", rest, current.end).unwrap());
    assert_eq!(place.max_id("orders"), rest.start);
    // Each ticket is good once: the same give-back again moves nothing.
    let again = store(&[server.addr]).allocate("orders", 100).unwrap().range;
    assert_eq!(again.start, rest.start);
    assert!(!remote.give_back("orders", rest, current.end).unwrap());
    assert_eq!(place.max_id("orders"), again.end);

    // Or in one give-back spanning both (an allocator's rest when its preloaded range
    // follows its current one): each piece with its own ticket.
    let current = remote.allocate("orders", 100).unwrap().range;
    let preloaded = remote.allocate("orders", 100).unwrap().range;
    assert_eq!(current.end, preloaded.start);
    let rest = Range {
        start: current.start + 40,
        end: preloaded.end,
    };
    assert!(remote.give_back("orders", rest, preloaded.end).unwrap());
    assert_eq!(place.max_id("orders"), rest.start);
    server.stop();
}

#[test]
fn servers_of_two_tables_found_by_the_first_call_refuse_every_call() {
    let (first, second) = (Place::new(), Place::new());
    first.create("orders", 1, 100);
    second.create("orders", 1, 100);
    let a = service(&first);
    let b = service(&second);
    // Another client with the servers in the other order issues from the second table;
    // neither may go on once both are seen.
    for remote in [store(&[a.addr, b.addr]), store(&[b.addr, a.addr])] {
        for _ in 0..2 {
            let refused = remote.allocate("orders", 10).unwrap_err();
            assert!(
                matches!(&refused, SegmentError::InvalidConfig { detail } if detail.contains("two tables")),
                "{refused:?}"
            );
        }
    }
    // A key the other table does not have is still read there, and told apart.
    first.create("invoices", 1, 100);
    assert_two_tables(
        &store(&[a.addr, b.addr])
            .allocate("invoices", 10)
            .unwrap_err(),
    );
    a.stop();
    b.stop();
}

/// Clients that began while one server was down take ranges from their own first
/// server's table, and clients that began on the other from that one: the same IDs.
/// The servers not heard from are asked again in the background, and two tables found
/// refuse every call, though each client's own server still answers.
#[test]
fn a_server_down_at_the_first_call_is_asked_again_when_it_is_back() {
    let (first, second) = (Place::new(), Place::new());
    first.create("orders", 1, 100);
    second.create("orders", 1, 100);
    let a = service(&first);
    let b_addr = closed();
    let remote = store(&[a.addr, b_addr]);
    remote.allocate("orders", 10).unwrap();
    let b = service_at(&second, b_addr);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let refused = loop {
        match remote.allocate("orders", 10) {
            Err(e) => break e,
            Ok(_) => assert!(
                std::time::Instant::now() < deadline,
                "never asked the late server"
            ),
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_two_tables(&refused);
    // For good, and with its own server gone, the other serves nothing it may use.
    a.stop();
    assert_two_tables(&remote.allocate("orders", 10).unwrap_err());
    b.stop();
}

fn assert_two_tables(refused: &SegmentError) {
    assert!(
        matches!(refused, SegmentError::InvalidConfig { detail } if detail.contains("two tables")),
        "{refused:?}"
    );
}
