//! One fault suite for every registry address, in the segment stores' vocabulary: a
//! record lost, all records lost, the history restored, a replica promoted, a value
//! garbled, a lock or file replaced. Each fault is one function here, struck with the
//! store's own tools under a live `ferroflake-lease-probe` holder issuing on node 0, the
//! only id (a 1-id layout); then a newcomer probe starts on the same registry. The
//! newcomer must wait out a floor and issue only after the holder's last ID, or be
//! refused; the IDs both wrote hold no duplicate.
//!
//! The matrix at the bottom runs each fault on every registry it applies to, in each way
//! the store can suffer it, as `<registry>::<fault>::<way>`; where a fault cannot apply, it
//! says why. The embedded registry needs nothing and always runs; the servers are those of
//! scripts/test-lease-stores.sh (and its `FF_SERVERS_DIR`, to kill, wipe and restore
//! them), hence `#[ignore]`. Some cells take their server away: .config/nextest.toml runs
//! one cell per server at a time.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::probes::*;
use common::strikes;
use ferroflake_lease::{EmbeddedRegistry, LeaseRequest, Registry};

/// How the newcomer must come through a fault.
#[derive(Debug, Clone, Copy)]
enum Newcomer {
    /// Given node 0, it waits out a floor, so that it issues only after the holder's
    /// last ID.
    WaitsOut,
    /// Its start is refused (exit 2), and its error says this.
    Refused(&'static str),
    /// It finds node 0 held by the holder's record, which the fault left alone (exit 3).
    FindsNode0Held,
}

/// How the holder must end.
#[derive(Debug, Clone, Copy)]
enum Holder {
    /// It learns at a renewal that its lease is lost (exit 4), and its error says this.
    Lost(&'static str),
    /// Its renewals fail, so it stops issuing at its deadline (exit 5 once refused for
    /// `--give-up-ms`).
    Refused,
    /// Nothing it holds was touched: it issues to the end of its run (exit 0).
    KeepsIssuing,
}

/// What a cell expects of the two probes.
struct Expect {
    newcomer: Newcomer,
    holder: Holder,
    /// The holder stopped (SIGSTOP) from just before the strike until the newcomer has
    /// started, then continued: where its renewals would otherwise learn of the loss
    /// before the newcomer claims (a server restart, a strike in several steps), and the
    /// cell would pass without a floor. Continued within its deadline, it issues beside a
    /// newcomer that waited out none; after the floor, its deadline has passed.
    pause_holder: bool,
}

/// A holder issues on node 0 of `holder_at`; `strike` applies the fault; a newcomer starts
/// on `newcomer_at` (the same registry, or where clients go after a failover). Checks
/// both against `expect`, and that the IDs they wrote hold no duplicate.
fn strike_under_a_holder(
    b: &Backend,
    holder_at: &str,
    newcomer_at: &str,
    expect: Expect,
    strike: impl FnOnce(),
) {
    let dir = scratch("fault");
    let layout = layout(0);
    let (holder_out, newcomer_out) = (dir.join("holder.ids"), dir.join("newcomer.ids"));
    // A lost lease ends the holder at once; a refused one after a short give-up, long
    // enough for a server restart not to end it first.
    let (run_ms, give_up_ms) = match expect.holder {
        Holder::Lost(_) => ("30000", "20000"),
        Holder::Refused => ("30000", "2000"),
        Holder::KeepsIssuing => ("5000", "2000"),
    };
    let mut holder = b
        .probe(holder_at, 0)
        .args(["issue", "--run-ms", run_ms, "--per-ms", "20"])
        .args(["--give-up-ms", give_up_ms])
        .args(["--out", holder_out.to_str().unwrap()])
        .spawn()
        .unwrap();
    started_on_node_0(&mut holder, &format!("{}: the holder", b.name));
    wait_for("the holder to issue", Duration::from_secs(10), || {
        !read_ids(&holder_out).is_empty()
    });
    let paused_at = Instant::now();
    let paused = expect.pause_holder.then(|| Paused::stop(&holder));
    strike();
    let mut newcomer = b
        .probe(newcomer_at, 0)
        .args(["issue", "--count", "20000", "--per-ms", "20"])
        .args(["--out", newcomer_out.to_str().unwrap()])
        .spawn()
        .unwrap();
    // Its node line comes once its start has waited out any floor, just before it issues.
    let started = match paused {
        Some(paused) => {
            let line = first_line(&mut newcomer);
            drop(paused);
            // How long the holder stood still: a break test's failure needs it within the
            // holder's deadline.
            eprintln!(
                "{}: the holder paused for {:?}",
                b.name,
                paused_at.elapsed()
            );
            line
        }
        None => String::new(),
    };
    let mut newcomer = finish(newcomer, Duration::from_secs(60), "the newcomer");
    newcomer.stdout.insert_str(0, &started);
    let holder = finish(holder, Duration::from_secs(60), "the holder");
    let (holder_ids, newcomer_ids) = (read_ids(&holder_out), read_ids(&newcomer_out));
    let name = b.name;
    // What both said, for a failure's report.
    eprintln!(
        "{name}: holder: exit {} {}{}\nnewcomer: exit {} {}{}",
        holder.code(),
        holder.stdout,
        holder.stderr,
        newcomer.code(),
        newcomer.stdout,
        newcomer.stderr
    );
    match expect.holder {
        Holder::Lost(says) => {
            assert_eq!(
                holder.code(),
                4,
                "{name}: the holder must stop with its lease lost: {}",
                holder.stderr
            );
            assert!(
                said(&holder.stdout, |l| l == "lost node=0"),
                "{name}: the holder must learn at a renewal that its lease is lost: {}",
                holder.stdout
            );
            assert!(
                holder.stderr.contains(says),
                "{name}: the holder's error must say {says:?}: {}",
                holder.stderr
            );
        }
        Holder::Refused => assert_eq!(
            holder.code(),
            5,
            "{name}: the holder must be refused to the end: {}{}",
            holder.stdout,
            holder.stderr
        ),
        Holder::KeepsIssuing => assert!(
            holder.code() == 0 && !said(&holder.stdout, |l| l.starts_with("refused ")),
            "{name}: the holder must issue to the end: {}{}",
            holder.stdout,
            holder.stderr
        ),
    }
    let holder_last = holder_ids.iter().max().copied().expect("the holder issued");
    match expect.newcomer {
        Newcomer::WaitsOut => {
            assert_eq!(
                (newcomer.code(), newcomer.nodes()),
                (0, vec![0]),
                "{name}: the newcomer must get node 0: {}{}",
                newcomer.stdout,
                newcomer.stderr
            );
            assert_eq!(newcomer_ids.len(), 20_000);
            assert!(
                newcomer_ids.iter().min() > Some(&holder_last),
                "{name}: the newcomer issued beside the live holder, with no floor to wait \
                 out ({} of its IDs at or below the holder's last)",
                newcomer_ids.iter().filter(|&&id| id <= holder_last).count()
            );
        }
        Newcomer::Refused(says) => {
            assert_eq!(
                (newcomer.code(), newcomer_ids.len()),
                (2, 0),
                "{name}: the newcomer must be refused: {}{}",
                newcomer.stdout,
                newcomer.stderr
            );
            assert!(
                newcomer.stderr.contains(says),
                "{name}: the newcomer's error must say {says:?}: {}",
                newcomer.stderr
            );
        }
        Newcomer::FindsNode0Held => assert_eq!(
            (newcomer.code(), newcomer_ids.len()),
            (3, 0),
            "{name}: the newcomer must find node 0 held: {}{}",
            newcomer.stdout,
            newcomer.stderr
        ),
    }
    let mut all = [holder_ids, newcomer_ids].concat();
    assert_unique(&mut all, &layout);
    std::fs::remove_dir_all(&dir).ok();
}

/// A probe stopped with SIGSTOP, continued (SIGCONT) when this is dropped, also when a
/// strike panics: a stopped holder would never end.
struct Paused(u32);

impl Paused {
    fn stop(probe: &std::process::Child) -> Paused {
        signal(probe, "-STOP");
        Paused(probe.id())
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .args(["-c", &format!("kill -CONT {}", self.0)])
            .status();
    }
}

/// The registry at `address`, as the probe opens it.
fn connect(address: &str) -> Arc<dyn Registry> {
    if Path::new(address).is_absolute() {
        Arc::new(EmbeddedRegistry::open(address).unwrap())
    } else {
        ferroflake_lease_stores::connect(address).unwrap()
    }
}

/// Node 0 of `address` claimed past the new registry's floor and given back, with
/// `b`'s usual timings: what a backup taken now holds is a registry in use, so that
/// restoring it is not taken for a new one.
fn settle(b: &Backend, address: &str) {
    let registry = connect(address);
    let timings = Backend::new(b.name);
    let ttl = Duration::from_millis(timings.ttl_ms);
    let request = LeaseRequest {
        node_count: 1,
        ttl,
        quarantine: Duration::from_millis(timings.quarantine_ms),
        holder: "settling".into(),
        max_ttl: ttl,
        prefer_node: None,
    };
    let grant = common::settled_claim(registry.as_ref(), &request);
    registry.release(&grant, wall_ms()).unwrap();
}

/// What records lost under a holder must come to: the newcomer waits out a floor, and the
/// holder is told at its next renewal. A removed directory can only be missing; a store
/// may see the newcomer's claim before the holder's next renewal, and then the holder is
/// told its id was taken.
fn records_lost(b: &Backend, pause_holder: bool) -> Expect {
    Expect {
        newcomer: Newcomer::WaitsOut,
        holder: Holder::Lost(if b.is_embedded() {
            "no record of it"
        } else {
            "was lost"
        }),
        pause_holder,
    }
}

/// The holder's record alone deleted, the rest kept: its entry cut out of the embedded
/// registry's records file (still valid JSON), the per-id keys, znodes or rows of a store
/// deleted.
fn record_lost(b: &Backend, way: &str) {
    let address = b.fresh_address("record_lost");
    // etcd's record is five key prefixes, deleted one after another, and a renewal in
    // between writes the mark again for the newcomer to wait past, floor or none: the
    // holder is paused. And just after a namespace's first floor ends, its etcd lease still
    // reads as a second left (etcd rounds down, the registry up), as long as the holder's
    // renewal period: settled first, the newcomer waits out the lost record's floor alone.
    let etcd = b.name == "etcd";
    if etcd {
        settle(b, &address);
    }
    let expect = records_lost(b, etcd);
    strike_under_a_holder(b, &address, &address, expect, || match way {
        "entry_cut_out" => {
            let path = Path::new(&address).join("leases.json");
            let mut records: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            let nodes = records["nodes"].as_object_mut().expect("a records file");
            assert!(nodes.remove("0").is_some(), "no record of node 0 to delete");
            std::fs::write(&path, serde_json::to_vec_pretty(&records).unwrap()).unwrap();
        }
        "record_deleted" => common::lose_node_records(&address),
        other => panic!("no way {other:?} to lose a record"),
    });
}

/// Every record lost: the embedded registry's directory removed (logind at logout, a tmp
/// cleaner), `etcdctl del --prefix`, Redis `FLUSHALL`, a recursive ZooKeeper delete,
/// PostgreSQL `DELETE FROM`, `TRUNCATE` or `DROP TABLE`, or the server's data wiped.
fn all_records_lost(b: &Backend, way: &str) {
    // A restart: the holder, paused over it (its renewals would learn of the loss as soon as
    // the server is back) just after its start's renewal, must still be within its deadline
    // (0.9 TTL) once a newcomer without a floor would issue: a TTL that outlasts the restart
    // and the newcomer's start, with room for a loaded machine (about 3.5 s for PostgreSQL's
    // initdb and start, 2.5 s for the others, in the suite).
    let restart = way == "wiped_restart";
    let ttl_ms = match b.name {
        _ if !restart => b.ttl_ms,
        "postgres" => 6_000,
        _ => 5_000,
    };
    let b = &Backend {
        ttl_ms,
        ..Backend::new(b.name)
    };
    let address = b.fresh_address("all_lost");
    let expect = records_lost(b, restart);
    strike_under_a_holder(b, &address, &address, expect, || match way {
        "directory_removed" => std::fs::remove_dir_all(&address).unwrap(),
        "records_deleted" => common::lose_records(b.name, &address),
        "flushall" => strikes::run(Command::new("redis-cli").args(["-u", b.base(), "FLUSHALL"])),
        "table_truncated" => strikes::psql(&address, "TRUNCATE {t}"),
        "table_dropped" => strikes::psql(&address, "DROP TABLE {t}"),
        "wiped_restart" => strikes::wiped_restart(b.name),
        other => panic!("no way {other:?} to lose all records"),
    });
}

/// The registry brought back to a backup taken before the holder claimed: its records
/// have forgotten the live claim. Each store shows it in its own way (the embedded
/// registry's write count, etcd's raft index and term, a Redis or ZooKeeper restart, the
/// PostgreSQL count kept beside the table).
fn history_restored(b: &Backend, way: &str) {
    // A restore that restarts the server must leave the holder within its TTL, or the
    // newcomer's wait proves nothing: a TTL that outlasts the restart (the holder then
    // learns at a renewal that its lease is lost, rather than run past its deadline).
    let ttl_ms = match way {
        "snapshot_restored" => 10_000,
        "data_dir_copied_back" => 8_000,
        "restarted_on_an_old_dump" => 5_000,
        _ => b.ttl_ms,
    };
    let b = &Backend {
        ttl_ms,
        ..Backend::new(b.name)
    };
    let address = b.fresh_address("restored");
    settle(b, &address);
    let backup = scratch("backup");
    let embedded_files: &[&str] = match way {
        "records_copied_back" => &["leases.json"],
        "directory_copied_back" => &["leases.json", "leases.lock"],
        _ => &[],
    };
    let etcd_endpoint = || match ferroflake_lease_stores::StoreAddress::parse(&address) {
        Ok(ferroflake_lease_stores::StoreAddress::Etcd { endpoint, .. }) => endpoint,
        other => panic!("not an etcd address: {other:?}"),
    };
    let (snapshot, dump, copy) = (
        backup.join("snapshot.db"),
        backup.join("dump.sql"),
        backup.join("zookeeper"),
    );
    match way {
        "records_copied_back" | "directory_copied_back" => {
            for file in embedded_files {
                std::fs::copy(Path::new(&address).join(file), backup.join(file)).unwrap();
            }
        }
        "snapshot_restored" => strikes::etcd_snapshot_save(&etcd_endpoint(), &snapshot),
        "restarted_on_an_old_dump" => strikes::redis_save(b.base()),
        "data_dir_copied_back" => strikes::zk_copy_data_dir(&copy),
        "table_dump_restored" => strikes::pg_dump_table(&address, &dump),
        other => panic!("no way {other:?} to restore a registry"),
    }
    let expect = Expect {
        // A restart on an old dump: as a wiped restart (all_records_lost).
        pause_holder: way == "restarted_on_an_old_dump",
        // An etcd restore floors by the longest window a claim may ask for (no record
        // says how long the forgotten holders may issue): past any start's limit.
        newcomer: if way == "snapshot_restored" {
            Newcomer::Refused("max_start_wait")
        } else {
            Newcomer::WaitsOut
        },
        holder: Holder::Lost("was lost"),
    };
    strike_under_a_holder(b, &address, &address, expect, || match way {
        "records_copied_back" | "directory_copied_back" => {
            for file in embedded_files {
                std::fs::copy(backup.join(file), Path::new(&address).join(file)).unwrap();
            }
        }
        "snapshot_restored" => strikes::etcd_snapshot_restore(&etcd_endpoint(), &snapshot),
        "restarted_on_an_old_dump" => strikes::redis_restart_on_saved_dump(),
        "data_dir_copied_back" => strikes::zk_put_back_data_dir(&copy, true),
        "table_dump_restored" => strikes::pg_restore_table(&address, &dump),
        other => unreachable!("{other}"),
    });
    std::fs::remove_dir_all(&backup).ok();
}

/// A replica that stops following its primary (a partition, a lag) and is promoted; the
/// primary, which took the holder's claim since, dies, and clients go to the promoted
/// replica, which never saw that claim: a Redis replica, or a PostgreSQL streaming
/// standby.
fn replica_promoted(b: &Backend, way: &str) {
    let expect = Expect {
        newcomer: Newcomer::WaitsOut,
        holder: Holder::Refused,
        pause_holder: false,
    };
    match way {
        "lagging_replica_promoted" => {
            let primary = common::redis_pair::Server::start(&[]);
            let replica = common::redis_pair::Server::start(&[
                "--replicaof",
                "127.0.0.1",
                &primary.port.to_string(),
            ]);
            replica.wait_for("INFO replication", "master_link_status:up");
            let prefix = common::unique("promoted");
            let (on_primary, on_replica) = (primary.url(&prefix), replica.url(&prefix));
            settle(b, &on_primary);
            // Every write so far on the replica, then it follows no more.
            assert_eq!(primary.cli(&["WAIT", "1", "5000"]).trim(), "1");
            replica.cli(&["REPLICAOF", "NO", "ONE"]);
            replica.wait_for("INFO replication", "role:master");
            let mut primary = Some(primary);
            strike_under_a_holder(b, &on_primary, &on_replica, expect, || {
                drop(primary.take());
            });
        }
        "lagging_standby_promoted" => {
            let primary = common::pg_pair::Server::primary();
            let standby = common::pg_pair::Server::standby_of(&primary);
            let table = common::unique("promoted").to_lowercase();
            let (on_primary, on_standby) = (primary.url(&table), standby.url(&table));
            settle(b, &on_primary);
            standby.cut_off_from(&primary);
            let mut primary = Some(primary);
            strike_under_a_holder(b, &on_primary, &on_standby, expect, || {
                drop(primary.take());
                standby.promote();
            });
        }
        other => panic!("no way {other:?} to promote a replica"),
    }
}

/// A value in the holder's record garbled (by hand, a bad migration, a bit flip): read as
/// 0 it would say "expired" or "nothing reserved", so it must be a store error, for the
/// newcomer's claim and the holder's renewal alike. What is garbled is what a store keeps
/// in the record: the expiry, or for etcd (whose expiry is an etcd lease) the mark.
fn value_garbled(b: &Backend, way: &str) {
    let address = b.fresh_address("garbled");
    let says = match way {
        "records_unparseable" => "unreadable",
        "mark_garbled" => "marks/0",
        "expiry_garbled" if b.name == "redis" => "node:0",
        "expiry_garbled" => "nodes/0",
        "expiry_negative" => "node_id = 0",
        other => panic!("no way {other:?} to garble a value"),
    };
    let expect = match way {
        // The claim is an etcd lease, which the garbled mark leaves alone: the newcomer
        // finds node 0 held, and the holder, whose renewals the mark refuses, lets the
        // claim run out.
        "mark_garbled" => Expect {
            newcomer: Newcomer::FindsNode0Held,
            holder: Holder::Lost("TTL passed without a renewal"),
            pause_holder: false,
        },
        _ => Expect {
            newcomer: Newcomer::Refused(says),
            holder: Holder::Refused,
            pause_holder: false,
        },
    };
    strike_under_a_holder(b, &address, &address, expect, || match (way, b.name) {
        ("records_unparseable", _) => {
            let path = Path::new(&address).join("leases.json");
            let text = std::fs::read(&path).unwrap();
            std::fs::write(&path, &text[..text.len() / 2]).unwrap();
        }
        ("mark_garbled", _) => strikes::etcd_put(&address, "marks/0", "garbage"),
        // EPOCH MARK EXPIRES ...: the third field.
        ("expiry_garbled", "redis") => strikes::redis_set_field(&address, "node:0", 2, "soon"),
        ("expiry_garbled", _) => strikes::zk_set_field(&address, "nodes/0", 2, "soon"),
        ("expiry_negative", _) => {
            strikes::psql(&address, "UPDATE {t} SET expires_ms = -1 WHERE node_id = 0")
        }
        (other, _) => unreachable!("{other}"),
    });
}

/// The embedded registry's files replaced under the holder. The records file replaced by
/// a valid but empty one means lost records: the newcomer waits out a floor. The lock
/// file deleted (it is never written to, so an age-based cleaner of `/var/tmp` may take
/// it) loses the write count it carries, but no record: the holder's claim stands, and
/// the newcomer finds node 0 held.
fn lock_or_file_replaced(b: &Backend, way: &str) {
    let address = b.fresh_address("replaced");
    let dir = Path::new(&address);
    let expect = match way {
        "lock_deleted" => Expect {
            newcomer: Newcomer::FindsNode0Held,
            holder: Holder::KeepsIssuing,
            pause_holder: false,
        },
        _ => Expect {
            newcomer: Newcomer::WaitsOut,
            holder: Holder::Lost("was lost"),
            pause_holder: false,
        },
    };
    strike_under_a_holder(b, &address, &address, expect, || match way {
        "lock_deleted" => std::fs::remove_file(dir.join("leases.lock")).unwrap(),
        "records_emptied" => std::fs::write(
            dir.join("leases.json"),
            r#"{"format":1,"next_epoch":0,"nodes":{}}"#,
        )
        .unwrap(),
        other => panic!("no way {other:?} to replace the registry's files"),
    });
}

/// The matrix: per registry, each fault that applies, in each way the store can suffer
/// it, as a test `<registry>::<fault>::<way>`; `#[ignore]` for the servers, which
/// scripts/test-lease-stores.sh starts.
macro_rules! faults {
    (#[$attribute:meta] $registry:ident { $($fault:ident: $($way:ident),+;)+ }) => {
        mod $registry {
            $(
                mod $fault {
                    $(
                        #[test]
                        #[$attribute]
                        fn $way() {
                            super::super::$fault(
                                &crate::common::probes::Backend::new(stringify!($registry)),
                                stringify!($way),
                            );
                        }
                    )+
                }
            )+
        }
    };
    // No attribute: `cfg(all())` always holds.
    ($registry:ident $cells:tt) => {
        faults!(#[cfg(all())] $registry $cells);
    };
}

faults!(embedded {
    record_lost: entry_cut_out;
    all_records_lost: directory_removed;
    history_restored: records_copied_back, directory_copied_back;
    // replica_promoted: one directory on one host has no replica.
    value_garbled: records_unparseable;
    lock_or_file_replaced: lock_deleted, records_emptied;
});

faults!(#[ignore = "needs the servers of scripts/test-lease-stores.sh"] etcd {
    record_lost: record_deleted;
    all_records_lost: records_deleted, wiped_restart;
    history_restored: snapshot_restored;
    // replica_promoted: raft elects only a member that has every committed write.
    value_garbled: mark_garbled;
    // lock_or_file_replaced: the records are the server's; it has no lock or file of
    // the registry's own (its data directory copied back is a restore that
    // `ferroflake lease restored` must announce).
});

faults!(#[ignore = "needs the servers of scripts/test-lease-stores.sh"] redis {
    record_lost: record_deleted;
    all_records_lost: flushall, wiped_restart;
    // Keys copied back into the running server with RESTORE show nothing: after one,
    // `ferroflake lease restored` (the conformance check `restored_starts_a_floor`).
    history_restored: restarted_on_an_old_dump;
    replica_promoted: lagging_replica_promoted;
    value_garbled: expiry_garbled;
    // lock_or_file_replaced: no lock or file of the registry's own.
});

faults!(#[ignore = "needs the servers of scripts/test-lease-stores.sh"] zookeeper {
    record_lost: record_deleted;
    all_records_lost: records_deleted, wiped_restart;
    history_restored: data_dir_copied_back;
    // replica_promoted: ZAB elects only a server that has every committed write.
    value_garbled: expiry_garbled;
    // lock_or_file_replaced: no lock or file of the registry's own.
});

faults!(#[ignore = "needs the servers of scripts/test-lease-stores.sh"] postgres {
    record_lost: record_deleted;
    all_records_lost: records_deleted, table_truncated, table_dropped, wiped_restart;
    // A database restored whole brings the count kept beside the table back too: after
    // one, `ferroflake lease restored`.
    history_restored: table_dump_restored;
    replica_promoted: lagging_standby_promoted;
    value_garbled: expiry_negative;
    // lock_or_file_replaced: no lock or file of the registry's own.
});
