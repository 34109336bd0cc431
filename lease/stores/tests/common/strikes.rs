//! The faults the store tests strike a registry with, each with the store's own tools, as
//! an operator, a backup tool or a failover would: the servers of scripts/servers/ctl.sh
//! killed, wiped, restored or started again, and records edited by hand.

use std::path::{Path, PathBuf};
use std::process::Command;

use ferroflake_lease_stores::StoreAddress;

/// Runs `command`, panicking with its stderr if it fails.
pub fn run(command: &mut Command) {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `scripts/servers/ctl.sh COMMAND SERVER`.
pub fn ctl(command: &str, server: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/servers/ctl.sh");
    run(Command::new("bash").arg(script).args([command, server]));
}

/// The data directory ctl.sh gives `server`.
pub fn data_dir(server: &str) -> PathBuf {
    let servers = std::env::var("FF_SERVERS_DIR")
        .expect("FF_SERVERS_DIR: the directory of the servers ctl.sh started");
    Path::new(&servers).join(server)
}

/// The server killed, its data directory wiped, and started again.
pub fn wiped_restart(server: &str) {
    ctl("kill", server);
    let data = data_dir(server);
    if server == "postgres" {
        // initdb wants the directory itself; ctl.sh makes it again.
        std::fs::remove_dir_all(&data).unwrap();
    } else {
        for entry in std::fs::read_dir(&data).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                std::fs::remove_dir_all(&path).unwrap();
            } else {
                std::fs::remove_file(&path).unwrap();
            }
        }
    }
    ctl("start", server);
}

/// Runs `sql` with psql on a PostgreSQL address's database, `{t}` standing for its table.
pub fn psql(address: &str, sql: &str) {
    let StoreAddress::Postgres { url, table } = StoreAddress::parse(address).unwrap() else {
        panic!("not a PostgreSQL address: {address}");
    };
    let sql = sql.replace("{t}", &table);
    run(Command::new("psql").args([&url, "-v", "ON_ERROR_STOP=1", "-qc", &sql]));
}

/// `pg_dump -t` of a PostgreSQL address's lease table into `dump`, to be restored with
/// [`pg_restore_table`] (the table dropped and made again with the old rows).
pub fn pg_dump_table(address: &str, dump: &Path) {
    let StoreAddress::Postgres { url, table } = StoreAddress::parse(address).unwrap() else {
        panic!("not a PostgreSQL address: {address}");
    };
    run(Command::new("pg_dump")
        .args(["-d", &url, "-t", &table, "--clean", "--if-exists", "-f"])
        .arg(dump));
}

pub fn pg_restore_table(address: &str, dump: &Path) {
    let StoreAddress::Postgres { url, .. } = StoreAddress::parse(address).unwrap() else {
        panic!("not a PostgreSQL address: {address}");
    };
    run(Command::new("psql")
        .args(["-d", &url, "-q", "-v", "ON_ERROR_STOP=1", "-f"])
        .arg(dump));
}

/// `etcdctl snapshot save` of the member at `endpoint` (`http://host:port`).
pub fn etcd_snapshot_save(endpoint: &str, snapshot: &Path) {
    run(Command::new("etcdctl")
        .args(["--endpoints", endpoint, "snapshot", "save"])
        .arg(snapshot));
}

/// The test etcd stopped, restored from `snapshot` with `etcdutl snapshot restore` (or
/// `etcdctl`, before etcd 3.6) into a new data directory under the member's name and
/// peer address as before (the same cluster id, the revision and raft index back where
/// they were, or lower), and started.
pub fn etcd_snapshot_restore(endpoint: &str, snapshot: &Path) {
    let port: u16 = endpoint.rsplit(':').next().unwrap().parse().unwrap();
    let peer = format!("http://127.0.0.1:{}", port + 1);
    ctl("stop", "etcd");
    let data = data_dir("etcd");
    std::fs::remove_dir_all(&data).unwrap();
    let tool = if Command::new("etcdutl").arg("version").output().is_ok() {
        "etcdutl"
    } else {
        "etcdctl"
    };
    run(Command::new(tool)
        .env("ETCDCTL_API", "3")
        .args(["snapshot", "restore"])
        .arg(snapshot)
        .arg("--data-dir")
        .arg(&data)
        .args(["--name", "default", "--initial-cluster"])
        .arg(format!("default={peer}"))
        .args(["--initial-advertise-peer-urls", &peer]));
    ctl("start", "etcd");
}

/// The running ZooKeeper's data directory copied to `copy` (as a file-level backup
/// takes it).
pub fn zk_copy_data_dir(copy: &Path) {
    run(Command::new("cp")
        .arg("-a")
        .arg(data_dir("zookeeper"))
        .arg(copy));
}

/// ZooKeeper stopped (or killed, if `crash`), `copy` put back as its data directory, and
/// started: the znodes, and the zxid, go back to the copy.
pub fn zk_put_back_data_dir(copy: &Path, crash: bool) {
    ctl(if crash { "kill" } else { "stop" }, "zookeeper");
    let data = data_dir("zookeeper");
    std::fs::remove_dir_all(&data).unwrap();
    run(Command::new("cp").arg("-a").arg(copy).arg(&data));
    ctl("start", "zookeeper");
}

/// The test Redis made to write `dump.rdb` now (`SAVE`: it keeps no snapshots of its own).
pub fn redis_save(base: &str) {
    run(Command::new("redis-cli").args(["-u", base, "SAVE"]));
}

/// The test Redis killed and started again on the `dump.rdb` of [`redis_save`], which is
/// then deleted, so that later restarts start empty, as the tests expect.
pub fn redis_restart_on_saved_dump() {
    ctl("kill", "redis");
    let dump = data_dir("redis").join("dump.rdb");
    assert!(dump.exists(), "no dump.rdb to restart on");
    ctl("start", "redis");
    std::fs::remove_file(dump).unwrap();
}

/// Rewrites field `index` (0-based, space-separated) of the Redis record `name` under a
/// Redis address's prefix to `value`, in one script.
pub fn redis_set_field(address: &str, name: &str, index: usize, value: &str) {
    let StoreAddress::Redis { url, prefix } = StoreAddress::parse(address).unwrap() else {
        panic!("not a Redis address: {address}");
    };
    let script = "local v = redis.call('GET', KEYS[1]) \
        if not v then return redis.error_reply('no such record') end \
        local fields = {} \
        for f in string.gmatch(v, '%S+') do fields[#fields + 1] = f end \
        fields[tonumber(ARGV[1]) + 1] = ARGV[2] \
        return redis.call('SET', KEYS[1], table.concat(fields, ' '))";
    run(Command::new("redis-cli")
        .args(["-u", &url, "EVAL", script, "1"])
        .arg(format!("{prefix}{name}"))
        .args([&index.to_string(), value]));
}

/// Rewrites field `index` (0-based, space-separated) of the znode `name` under a
/// ZooKeeper address's base path to `value`, guarded by the version read.
pub fn zk_set_field(address: &str, name: &str, index: usize, value: &str) {
    let StoreAddress::ZooKeeper { hosts, root } = StoreAddress::parse(address).unwrap() else {
        panic!("not a ZooKeeper address: {address}");
    };
    let path = format!("{root}/{name}");
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let client = zookeeper_client::Client::connect(&hosts).await.unwrap();
            loop {
                let (data, stat) = client.get_data(&path).await.unwrap();
                let text = String::from_utf8(data).unwrap();
                let mut fields: Vec<&str> = text.split(' ').collect();
                fields[index] = value;
                match client
                    .set_data(&path, fields.join(" ").as_bytes(), Some(stat.version))
                    .await
                {
                    Ok(_) => return,
                    // A renewal wrote in between: garble what it wrote.
                    Err(zookeeper_client::Error::BadVersion) => continue,
                    Err(e) => panic!("setting {path}: {e}"),
                }
            }
        });
}

/// `etcdctl put` of `value` at `name` under an etcd address's prefix.
pub fn etcd_put(address: &str, name: &str, value: &str) {
    let StoreAddress::Etcd { endpoint, prefix } = StoreAddress::parse(address).unwrap() else {
        panic!("not an etcd address: {address}");
    };
    run(Command::new("etcdctl").args([
        "--endpoints",
        &endpoint,
        "put",
        &format!("{prefix}/{name}"),
        value,
    ]));
}
