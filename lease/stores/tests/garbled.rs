//! Garbled records on each real server. A mark, epoch, count or record that is present but
//! unreadable must be a store error on acquire and renew: read as 0 ("nothing recorded")
//! it would hand the id out with no mark to wait past, or start a floor and overwrite it.
//! Each case claims and releases id 0 through the registry, so that its records exist,
//! garbles one with the store's own client, checks the refusal and that it names what to
//! delete, then deletes that, as the error says, and claims the id again behind a floor.
//! Needs the servers of scripts/test-lease-stores.sh, hence `#[ignore]`.

mod common;

use std::future::Future;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ferroflake_lease::{LeaseError, LeaseRequest, Registry, Renewal};
use ferroflake_lease_stores::StoreAddress;

/// One id, and a short floor window (max_ttl + quarantine) to wait out.
fn request() -> LeaseRequest {
    LeaseRequest {
        node_count: 1,
        ttl: Duration::from_secs(1),
        quarantine: Duration::from_millis(500),
        holder: "garbled test".into(),
        max_ttl: Duration::from_secs(1),
        prefer_node: None,
    }
}

/// A TTL long enough that a renewal in the middle of a case never comes late.
fn long_request() -> LeaseRequest {
    LeaseRequest {
        ttl: Duration::from_secs(5),
        max_ttl: Duration::from_secs(5),
        ..request()
    }
}

/// A high-water mark as a holder reports one: the wall clock in Unix ms.
fn mark_now() -> u64 {
    let since_1970 = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    u64::try_from(since_1970.as_millis()).unwrap()
}

/// A namespace no other test uses, and its registry.
fn fresh(backend: &str) -> (StoreAddress, Arc<dyn Registry>) {
    let base = common::base_url(backend);
    let url = common::namespaced(backend, &base, &common::unique("garbled"));
    let registry =
        ferroflake_lease_stores::connect(&url).unwrap_or_else(|e| panic!("connect {url}: {e}"));
    (StoreAddress::parse(&url).unwrap(), registry)
}

/// The text of `attempt`'s error, which must be a store error: not an id handed out, not a
/// loss, not "unavailable".
fn store_error<T: std::fmt::Debug>(what: &str, attempt: Result<T, LeaseError>) -> String {
    match attempt {
        Err(e) if e.name() == "STORE" => e.to_string(),
        other => panic!("{what}: must be a store error, got {other:?}"),
    }
}

/// Claims and releases id 0 until a claim reports no floor: the new namespace's floor is
/// over, so a floor after this one comes from records found missing.
fn claimed_past_the_first_floor(registry: &dyn Registry) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let grant = registry.acquire(&request()).expect("a claim of id 0");
        assert_eq!(grant.node_id, 0);
        registry.release(&grant, mark_now()).expect("its release");
        if grant.floor_wait.is_zero() {
            return;
        }
        assert!(Instant::now() < deadline, "the first floor never ends");
        thread::sleep(grant.floor_wait.min(Duration::from_millis(500)));
    }
}

/// One garbled record on a fresh namespace of `backend`, with id 0 claimed and released:
/// `garble` spoils it, acquire must refuse with an error that mentions each of `named`
/// (the records to delete); after `repair` (deleting them) the id is claimed again,
/// behind a floor of its own.
fn acquire_refuses(
    backend: &str,
    what: &str,
    garble: impl Fn(&StoreAddress),
    named: impl Fn(&StoreAddress) -> Vec<String>,
    repair: impl Fn(&StoreAddress),
) {
    acquire_refuses_then(backend, what, garble, named, repair, true);
}

/// As [`acquire_refuses`], for a record whose loss needs no floor (the widest window
/// asked for: without it, claims floor by their own) when `floor_after_repair` is false.
fn acquire_refuses_then(
    backend: &str,
    what: &str,
    garble: impl Fn(&StoreAddress),
    named: impl Fn(&StoreAddress) -> Vec<String>,
    repair: impl Fn(&StoreAddress),
    floor_after_repair: bool,
) {
    let (address, registry) = fresh(backend);
    claimed_past_the_first_floor(&*registry);
    garble(&address);
    let error = store_error(what, registry.acquire(&request()));
    let listed = store_error(&format!("{what}, listed"), registry.list());
    for name in named(&address) {
        assert!(
            listed.contains(&name),
            "{what}: the listing's error names no {name}: {listed}"
        );
        assert!(
            error.contains(&name),
            "{what}: the error names no {name}: {error}"
        );
    }
    assert!(
        error.contains("delete") || error.contains("set it"),
        "{what}: the error says nothing to do: {error}"
    );
    repair(&address);
    let again = registry
        .acquire(&request())
        .unwrap_or_else(|e| panic!("{what}, deleted: {e}"));
    assert_eq!(again.node_id, 0);
    assert!(
        again.floor_wait > Duration::ZERO || !floor_after_repair,
        "{what}, deleted: claimed with no floor: {again:?}"
    );
    registry.release(&again, mark_now()).unwrap();
}

/// A held id whose record `garble` spoils: the renewal must be a store error.
fn renew_refuses(backend: &str, what: &str, garble: impl Fn(&StoreAddress)) {
    let (address, registry) = fresh(backend);
    let grant = registry.acquire(&long_request()).expect("the claim");
    let ttl = long_request().ttl;
    registry
        .renew(&grant, &Renewal::new(ttl, mark_now()))
        .expect("the first renewal");
    garble(&address);
    store_error(what, registry.renew(&grant, &Renewal::new(ttl, mark_now())));
}

fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

mod etcd {
    use super::*;

    /// The registry's keys under the address's prefix, read and written with etcd-client.
    struct Keys {
        endpoint: String,
        prefix: String,
    }

    impl Keys {
        fn of(address: &StoreAddress) -> Keys {
            let StoreAddress::Etcd { endpoint, prefix } = address else {
                panic!("not an etcd address: {address:?}");
            };
            Keys {
                endpoint: endpoint.clone(),
                prefix: prefix.clone(),
            }
        }

        /// `P/name`.
        fn key(&self, name: &str) -> String {
            format!("{}/{name}", self.prefix)
        }

        async fn client(&self) -> etcd_client::Client {
            etcd_client::Client::connect([self.endpoint.as_str()], None)
                .await
                .unwrap()
        }

        fn put(&self, name: &str, value: &str) {
            block_on(async {
                self.client()
                    .await
                    .put(self.key(name), value, None)
                    .await
                    .unwrap()
            });
        }

        fn delete(&self, name: &str) {
            block_on(async {
                self.client()
                    .await
                    .delete(self.key(name), None)
                    .await
                    .unwrap()
            });
        }

        /// The seconds left and granted of the etcd lease that key `name` is attached to.
        fn lease_ttl(&self, name: &str) -> (i64, i64) {
            block_on(async {
                let mut client = self.client().await;
                let got = client.get(self.key(name), None).await.unwrap();
                let lease = got.kvs().first().expect("the key").lease();
                let ttl = client.lease_time_to_live(lease, None).await.unwrap();
                (ttl.ttl(), ttl.granted_ttl())
            })
        }

        fn exists(&self, name: &str) -> bool {
            block_on(async {
                let got = self.client().await.get(self.key(name), None).await.unwrap();
                !got.kvs().is_empty()
            })
        }
    }

    fn refused(what: &str, garble: &[(&str, Option<&str>)], delete: &[&'static str]) {
        let spoil = |address: &StoreAddress| {
            let keys = Keys::of(address);
            for (name, value) in garble {
                match value {
                    Some(value) => keys.put(name, value),
                    None => keys.delete(name),
                }
            }
        };
        acquire_refuses(
            "etcd",
            what,
            spoil,
            |address| {
                delete
                    .iter()
                    .map(|name| Keys::of(address).key(name))
                    .collect()
            },
            |address| {
                delete
                    .iter()
                    .for_each(|name| Keys::of(address).delete(name))
            },
        );
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_garbled_mark() {
        refused(
            "a garbled mark",
            &[("marks/0", Some("garbage"))],
            &["marks/0", "epochs/0"],
        );
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_an_empty_mark() {
        refused(
            "an empty mark",
            &[("marks/0", Some(""))],
            &["marks/0", "epochs/0"],
        );
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_garbled_epoch() {
        refused(
            "a garbled epoch",
            &[("epochs/0", Some("garbage"))],
            &["epochs/0"],
        );
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_garbled_history() {
        refused(
            "a garbled history",
            &[("history", Some("1234 garbage"))],
            &["history"],
        );
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_garbled_window() {
        acquire_refuses_then(
            "etcd",
            "a garbled lost-records window",
            |address| Keys::of(address).put("window", "-1500"),
            |address| vec![Keys::of(address).key("window")],
            |address| Keys::of(address).delete("window"),
            false,
        );
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_garbled_claimed_count() {
        refused(
            "a garbled claimed count",
            &[("namespace", Some("garbage"))],
            &["namespace"],
        );
    }

    /// An id whose epoch key is gone counts as lost, so its mark is read only by the claim's
    /// own transaction: the claim is made, then given back.
    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_garbled_mark_of_a_lost_id_and_gives_the_claim_back() {
        let (address, registry) = fresh("etcd");
        claimed_past_the_first_floor(&*registry);
        let keys = Keys::of(&address);
        keys.put("marks/0", "garbage");
        keys.delete("epochs/0");
        let error = store_error("a lost id's garbled mark", registry.acquire(&request()));
        assert!(error.contains(&keys.key("marks/0")), "{error}");
        assert!(!keys.exists("claims/0"), "the refused claim is still held");
        keys.delete("marks/0");
        let again = registry.acquire(&request()).expect("claimed once deleted");
        assert!(again.floor_wait > Duration::ZERO, "{again:?}");
        registry.release(&again, mark_now()).unwrap();
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn renew_refuses_a_garbled_mark() {
        renew_refuses("etcd", "a garbled mark", |address| {
            Keys::of(address).put("marks/0", "garbage")
        });
    }

    /// A renewal that finds the mark garbled fails before it keeps the claim's etcd lease
    /// alive: the claim runs out as if that renewal had not been made.
    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn renew_refuses_a_garbled_mark_before_keeping_the_claim_alive() {
        let (address, registry) = fresh("etcd");
        let keys = Keys::of(&address);
        let grant = registry.acquire(&long_request()).expect("the claim");
        let ttl = long_request().ttl;
        registry
            .renew(&grant, &Renewal::new(ttl, mark_now()))
            .expect("the first renewal");
        let (_, granted) = keys.lease_ttl("claims/0");
        let give_up = Instant::now() + Duration::from_secs(20);
        let left = loop {
            let (left, _) = keys.lease_ttl("claims/0");
            if left <= granted - 2 {
                break left;
            }
            assert!(
                Instant::now() < give_up,
                "the claim's etcd lease never ran down"
            );
            thread::sleep(Duration::from_millis(100));
        };
        keys.put("marks/0", "garbage");
        store_error(
            "a garbled mark",
            registry.renew(&grant, &Renewal::new(ttl, mark_now())),
        );
        let (after, _) = keys.lease_ttl("claims/0");
        assert!(
            after <= left,
            "a renewal refused for a garbled mark kept the claim alive: its etcd lease had \
             {left} s of {granted} s left, and {after} s after"
        );
    }
}

mod redis {
    use super::*;

    /// The registry's keys under the address's prefix, read and written with redis-rs.
    struct Keys {
        connection: std::sync::Mutex<::redis::Connection>,
        prefix: String,
    }

    impl Keys {
        fn of(address: &StoreAddress) -> Keys {
            let StoreAddress::Redis { url, prefix } = address else {
                panic!("not a Redis address: {address:?}");
            };
            let client = ::redis::Client::open(url.as_str()).unwrap();
            Keys {
                connection: std::sync::Mutex::new(client.get_connection().unwrap()),
                prefix: prefix.clone(),
            }
        }

        /// `P` + `name` (`node:0`, `namespace`).
        fn key(&self, name: &str) -> String {
            format!("{}{name}", self.prefix)
        }

        fn run<T: ::redis::FromRedisValue>(&self, command: &str, name: &str, value: &[&str]) -> T {
            let mut connection = self.connection.lock().unwrap();
            ::redis::cmd(command)
                .arg(self.key(name))
                .arg(value)
                .query(&mut *connection)
                .unwrap()
        }

        fn get(&self, name: &str) -> String {
            let value: Option<String> = self.run("GET", name, &[]);
            value.unwrap_or_else(|| panic!("no {}", self.key(name)))
        }

        fn set(&self, name: &str, value: &str) {
            self.run::<()>("SET", name, &[value]);
        }

        fn del(&self, name: &str) {
            self.run::<()>("DEL", name, &[]);
        }

        /// Rewrites `name`'s space-separated fields with `change`.
        fn edit(&self, name: &str, change: impl Fn(&mut Vec<String>)) {
            let mut fields: Vec<String> = self.get(name).split(' ').map(str::to_owned).collect();
            change(&mut fields);
            self.set(name, &fields.join(" "));
        }
    }

    fn refused(what: &str, name: &'static str, garble: impl Fn(&Keys)) {
        acquire_refuses(
            "redis",
            what,
            |address| garble(&Keys::of(address)),
            |address| vec![Keys::of(address).key(name)],
            |address| Keys::of(address).del(name),
        );
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_record_with_a_garbled_mark() {
        refused("a garbled mark", "node:0", |keys| {
            keys.edit("node:0", |fields| fields[1] = "garbage".into())
        });
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_an_empty_record() {
        refused("an empty record", "node:0", |keys| keys.set("node:0", ""));
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_truncated_record() {
        refused("a record cut after its token", "node:0", |keys| {
            keys.edit("node:0", |fields| fields.truncate(6))
        });
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_garbled_window() {
        acquire_refuses_then(
            "redis",
            "a garbled lost-records window",
            |address| Keys::of(address).set("window", "1500ms"),
            |address| vec![Keys::of(address).key("window")],
            |address| Keys::of(address).del("window"),
            false,
        );
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_an_empty_marker() {
        refused("an empty marker", "namespace", |keys| {
            keys.set("namespace", "")
        });
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_marker_with_trailing_garbage() {
        refused("a marker with trailing garbage", "namespace", |keys| {
            keys.edit("namespace", |fields| fields.push("garbage".into()))
        });
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn renew_refuses_an_empty_record() {
        renew_refuses("redis", "an empty record", |address| {
            Keys::of(address).set("node:0", "")
        });
    }
}

mod zookeeper {
    use super::*;

    /// The registry's znodes under the address's base path, read and written with
    /// zookeeper-client.
    struct Znodes {
        hosts: String,
        root: String,
    }

    impl Znodes {
        fn of(address: &StoreAddress) -> Znodes {
            let StoreAddress::ZooKeeper { hosts, root } = address else {
                panic!("not a ZooKeeper address: {address:?}");
            };
            Znodes {
                hosts: hosts.clone(),
                root: root.clone(),
            }
        }

        /// `B/name`.
        fn path(&self, name: &str) -> String {
            format!("{}/{name}", self.root)
        }

        async fn client(&self) -> zookeeper_client::Client {
            zookeeper_client::Client::connect(&self.hosts)
                .await
                .unwrap()
        }

        fn get(&self, name: &str) -> String {
            block_on(async {
                let (data, _) = self
                    .client()
                    .await
                    .get_data(&self.path(name))
                    .await
                    .unwrap();
                String::from_utf8(data).unwrap()
            })
        }

        fn set(&self, name: &str, data: &str) {
            block_on(async {
                let client = self.client().await;
                client
                    .set_data(&self.path(name), data.as_bytes(), None)
                    .await
                    .unwrap()
            });
        }

        fn delete(&self, name: &str) {
            block_on(async {
                let client = self.client().await;
                client.delete(&self.path(name), None).await.unwrap()
            });
        }

        /// Rewrites `name`'s space-separated fields with `change`.
        fn edit(&self, name: &str, change: impl Fn(&mut Vec<String>)) {
            let mut fields: Vec<String> = self.get(name).split(' ').map(str::to_owned).collect();
            change(&mut fields);
            self.set(name, &fields.join(" "));
        }
    }

    fn refused(what: &str, name: &'static str, garble: impl Fn(&Znodes)) {
        acquire_refuses(
            "zookeeper",
            what,
            |address| garble(&Znodes::of(address)),
            |address| vec![Znodes::of(address).path(name)],
            |address| Znodes::of(address).delete(name),
        );
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_garbage_record() {
        refused("a garbage record", "nodes/0", |znodes| {
            znodes.set("nodes/0", "garbage")
        });
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_an_empty_record() {
        refused("an empty record", "nodes/0", |znodes| {
            znodes.set("nodes/0", "")
        });
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_truncated_record() {
        refused("a record cut after its token", "nodes/0", |znodes| {
            znodes.edit("nodes/0", |fields| fields.truncate(6))
        });
    }

    /// A standalone server numbers its sessions as server 1.
    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_garbled_server_start() {
        refused("a garbled server start", "history/1", |znodes| {
            znodes.set("history/1", "garbage")
        });
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_garbled_window() {
        acquire_refuses_then(
            "zookeeper",
            "a garbled lost-records window",
            |address| Znodes::of(address).set("window", ""),
            |address| vec![Znodes::of(address).path("window")],
            |address| Znodes::of(address).delete("window"),
            false,
        );
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_marker_with_trailing_garbage() {
        refused("a marker with trailing garbage", "namespace", |znodes| {
            znodes.edit("namespace", |fields| fields.push("garbage".into()))
        });
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn renew_refuses_a_truncated_record() {
        renew_refuses("zookeeper", "a record cut after its token", |address| {
            Znodes::of(address).edit("nodes/0", |fields| fields.truncate(6))
        });
    }
}

mod postgres {
    use super::*;

    /// Runs `sql` (`{t}` stands for the address's table) with tokio-postgres.
    fn execute(address: &StoreAddress, sql: &str) {
        let StoreAddress::Postgres { url, table } = address else {
            panic!("not a PostgreSQL address: {address:?}");
        };
        let sql = sql.replace("{t}", table);
        block_on(async {
            let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(connection);
            let changed = client.execute(sql.as_str(), &[]).await.unwrap();
            assert_eq!(changed, 1, "{sql}");
        });
    }

    fn refused(what: &str, node_id: i64, garble: &'static str) {
        acquire_refuses(
            "postgres",
            what,
            |address| execute(address, garble),
            |_| vec![format!("node_id = {node_id}")],
            |address| {
                execute(
                    address,
                    &format!("DELETE FROM {{t}} WHERE node_id = {node_id}"),
                )
            },
        );
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_negative_window() {
        acquire_refuses_then(
            "postgres",
            "a negative lost-records window",
            |address| execute(address, "UPDATE {t}_history SET floor_window_ms = -1"),
            |address| match address {
                StoreAddress::Postgres { table, .. } => vec![format!("{table}_history")],
                other => panic!("not a PostgreSQL address: {other:?}"),
            },
            |address| execute(address, "UPDATE {t}_history SET floor_window_ms = 0"),
            false,
        );
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_negative_mark() {
        refused(
            "a negative mark",
            0,
            "UPDATE {t} SET high_water_ms = -5 WHERE node_id = 0",
        );
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_negative_epoch() {
        refused(
            "a negative epoch",
            0,
            "UPDATE {t} SET epoch = -1 WHERE node_id = 0",
        );
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn acquire_refuses_a_negative_claimed_count() {
        refused(
            "a negative claimed count",
            -1,
            "UPDATE {t} SET claimed = -1 WHERE node_id = -1",
        );
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn renew_refuses_a_negative_mark() {
        renew_refuses("postgres", "a negative mark", |address| {
            execute(
                address,
                "UPDATE {t} SET high_water_ms = -5 WHERE node_id = 0",
            )
        });
    }

    #[test]
    #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
    fn renew_refuses_a_negative_expiry() {
        renew_refuses("postgres", "a negative expiry", |address| {
            execute(address, "UPDATE {t} SET expires_ms = -1 WHERE node_id = 0")
        });
    }
}
