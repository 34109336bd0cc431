//! An operator's hands on a store under test: the store's own tools (`sqlite3`, `psql`,
//! the `mariadb` client, `redis-cli`, file copies, scripts/servers/ctl.sh), as the faults
//! happen in life: a row deleted by hand, a database emptied, a dump put back.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{base_url, ctl, unique};

/// A fresh store (a new SQLite file under `scratch`, a new table, a new Redis prefix) and
/// the operator's tools on it.
pub struct Operator {
    backend: &'static str,
    /// The store's address, as the processes open it.
    pub address: String,
    /// The SQLite file, the SQL table or the Redis hash prefix.
    name: String,
}

impl Operator {
    pub fn fresh(backend: &str, scratch: &Path) -> Operator {
        let backend = ["sqlite", "postgres", "mysql", "redis"]
            .into_iter()
            .find(|b| *b == backend)
            .unwrap_or_else(|| panic!("unknown backend {backend}"));
        let table = unique("t");
        let (address, name) = match backend {
            "sqlite" => {
                let file = scratch.join(format!("{table}.db")).display().to_string();
                (file.clone(), file)
            }
            // The test server runs without an AOF (dump_restored restarts it).
            "redis" => (
                format!("{}?prefix={table}&accept=lost-writes", base_url(backend)),
                format!("ferroflake:{table}:"),
            ),
            _ => (format!("{}?table={table}", base_url(backend)), table),
        };
        Operator {
            backend,
            address,
            name,
        }
    }

    /// The SQLite table file.
    pub fn file(&self) -> &Path {
        assert_eq!(self.backend, "sqlite");
        Path::new(&self.name)
    }

    /// `DELETE FROM leaf_alloc WHERE biz_tag = 'key'`, or `DEL` of the key's hash.
    pub fn delete_record(&self, key: &str) {
        match self.backend {
            "redis" => self.redis(&["DEL", &format!("{}{key}", self.name)]),
            _ => self.sql(&format!("DELETE FROM {{table}} WHERE biz_tag = '{key}'")),
        }
    }

    /// Every record gone, the marks with the rows: a database emptied, or `FLUSHALL`.
    pub fn lose_all_records(&self) {
        match self.backend {
            "redis" => self.redis(&["FLUSHALL"]),
            _ => self.sql("DELETE FROM {table}; DELETE FROM {table}_marks;"),
        }
    }

    /// `max_id` set by hand (a DBA lowering it).
    pub fn set_max_id(&self, key: &str, max_id: i64) {
        match self.backend {
            "redis" => self.redis(&[
                "HSET",
                &format!("{}{key}", self.name),
                "max_id",
                &max_id.to_string(),
            ]),
            _ => self.sql(&format!(
                "UPDATE {{table}} SET max_id = {max_id} WHERE biz_tag = '{key}'"
            )),
        }
    }

    /// `max_id` made a value no counter holds: text where SQLite and Redis allow any, a
    /// negative number in the typed columns of PostgreSQL and MariaDB.
    pub fn garble(&self, key: &str) {
        match self.backend {
            "redis" => self.redis(&["HSET", &format!("{}{key}", self.name), "max_id", "4x2"]),
            "sqlite" => self.sql(&format!(
                "UPDATE {{table}} SET max_id = '4x2' WHERE biz_tag = '{key}'"
            )),
            _ => self.set_max_id(key, -42),
        }
    }

    /// A dump of the whole store, taken now, with nothing using it: `sqlite3 .backup`, the
    /// server's data directory copied while it is stopped, Redis's `SAVE`.
    pub fn dump(&self) -> Dump {
        match self.backend {
            "sqlite" => {
                let copy = PathBuf::from(format!("{}.dump", self.name));
                run(Command::new("sqlite3")
                    .arg(&self.name)
                    .arg(format!(".backup '{}'", copy.display())));
                Dump::File {
                    table: self.name.clone().into(),
                    copy,
                }
            }
            "redis" => {
                self.redis(&["SAVE"]);
                Dump::Snapshot
            }
            backend => {
                let dir = data_dir(backend);
                let copy = dir.with_extension("dump");
                let _ = std::fs::remove_dir_all(&copy);
                ctl("stop", backend);
                run(Command::new("cp").arg("-a").arg(&dir).arg(&copy));
                ctl("start", backend);
                Dump::DataDir {
                    backend: self.backend,
                    dir,
                    copy,
                }
            }
        }
    }

    /// The table, its marks and its id dumped now (`pg_dump -t`, `mariadb-dump`), for
    /// [`TableDump::into_new_database`].
    pub fn dump_tables(&self) -> TableDump {
        let tables = ["", "_marks", "_store"].map(|suffix| format!("{}{suffix}", self.name));
        let text = match self.backend {
            "postgres" => {
                let mut c = Command::new("pg_dump");
                c.arg(base_url("postgres"));
                for table in &tables {
                    c.args(["-t", table]);
                }
                run(&mut c)
            }
            "mysql" => run(mariadb_client("mariadb-dump", None).args(&tables)),
            other => panic!("{other} has no tables to dump"),
        };
        TableDump {
            backend: self.backend,
            table: self.name.clone(),
            text,
        }
    }

    /// Runs `statements` with the table's own client; `{table}` names the table.
    fn sql(&self, statements: &str) {
        let mut command = match self.backend {
            "sqlite" => {
                let mut c = Command::new("sqlite3");
                c.arg(&self.name)
                    .arg(".timeout 10000")
                    .arg(statements.replace("{table}", "leaf_alloc"));
                c
            }
            "postgres" => {
                let mut c = Command::new("psql");
                c.args(["-X", "-q", "-v", "ON_ERROR_STOP=1"])
                    .arg(base_url("postgres"))
                    .arg("-c")
                    .arg(statements.replace("{table}", &self.name));
                c
            }
            _ => {
                let mut c = mariadb_client("mariadb", None);
                c.arg("-e").arg(statements.replace("{table}", &self.name));
                c
            }
        };
        run(&mut command);
    }

    fn redis(&self, args: &[&str]) {
        run(Command::new("redis-cli")
            .args(["-u", &base_url("redis")])
            .args(args));
    }
}

/// The test server's `program` (`mariadb`, `mariadb-dump`) on `database`, or the one the
/// test address names.
fn mariadb_client(program: &str, database: Option<&str>) -> Command {
    let url = url::Url::parse(&base_url("mysql")).unwrap();
    let mut c = Command::new(program);
    c.arg("--no-defaults")
        .arg(format!("-h{}", url.host_str().unwrap()))
        .arg(format!("-P{}", url.port().unwrap()))
        .arg(format!("-u{}", url.username()))
        .arg(database.unwrap_or_else(|| url.path().trim_start_matches('/')));
    c
}

/// A SQL store's tables as a dump of them made them ([`Operator::dump_tables`]).
pub struct TableDump {
    backend: &'static str,
    table: String,
    text: String,
}

impl TableDump {
    /// Loads the dump into a new database on the same server, as an operator restoring a
    /// backup beside the live data does, and returns the store's address there.
    pub fn into_new_database(self) -> String {
        let database = unique("restored");
        let load = |command: &mut Command| {
            let mut child = command
                .stdin(std::process::Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("{command:?}: {e}"));
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(self.text.as_bytes())
                .unwrap();
            assert!(child.wait().unwrap().success(), "{command:?} failed");
        };
        let mut url = url::Url::parse(&base_url(self.backend)).unwrap();
        match self.backend {
            "postgres" => {
                run(Command::new("psql")
                    .arg(url.as_str())
                    .args(["-c", &format!("CREATE DATABASE {database}")]));
                url.set_path(&database);
                load(
                    Command::new("psql")
                        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1"])
                        .arg(url.as_str()),
                );
            }
            _ => {
                run(mariadb_client("mariadb", None)
                    .args(["-e", &format!("CREATE DATABASE {database}")]));
                load(&mut mariadb_client("mariadb", Some(&database)));
                url.set_path(&database);
            }
        }
        format!("{url}?table={}", self.table)
    }
}

/// A dump of a store, to put back with [`Dump::restore`].
pub enum Dump {
    File {
        table: PathBuf,
        copy: PathBuf,
    },
    /// Redis's `dump.rdb`, which the next start loads.
    Snapshot,
    DataDir {
        backend: &'static str,
        dir: PathBuf,
        copy: PathBuf,
    },
}

impl Dump {
    /// Puts the dump back in place of the store's data, as an operator restoring a backup.
    pub fn restore(self) {
        match self {
            Dump::File { table, copy } => {
                run(Command::new("sqlite3")
                    .arg(&table)
                    .arg(".timeout 10000")
                    .arg(format!(".restore '{}'", copy.display())));
            }
            Dump::Snapshot => {
                ctl("kill", "redis");
                ctl("start", "redis");
                // Later restarts of the shared server start empty again.
                std::fs::remove_file(data_dir("redis").join("dump.rdb")).unwrap();
            }
            Dump::DataDir { backend, dir, copy } => {
                ctl("stop", backend);
                std::fs::remove_dir_all(&dir).unwrap();
                std::fs::rename(&copy, &dir).unwrap();
                ctl("start", backend);
            }
        }
    }
}

/// A test server's data directory, as scripts/servers/ctl.sh lays it out.
pub fn data_dir(backend: &str) -> PathBuf {
    let servers = PathBuf::from(std::env::var_os("FF_SERVERS_DIR").expect("FF_SERVERS_DIR"));
    match backend {
        "mysql" => servers.join("mysql/data"),
        other => servers.join(other),
    }
}

/// Runs `command`, which must succeed; its standard output.
fn run(command: &mut Command) -> String {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{command:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
