//! # ferroflake-store-address
//!
//! The one URL grammar of every store ferroflake talks to, shared by the lease registries
//! (`ferroflake-lease-stores`) and the segment stores (`ferroflake-segment-stores`), so that
//! `redis://…?prefix=` and `postgres://…?table=` mean the same thing wherever they are given.
//! Each crate turns the parts into its own address type and error.
//!
//! ```
//! use ferroflake_store_address::{redact, StoreUrl};
//!
//! let url = StoreUrl::parse("redis://:pw@cache:6380/2?prefix=orders")?;
//! url.allow_only(&["prefix"])?;
//! let (client_url, prefix) = url.redis("segment")?;
//! assert_eq!((client_url.as_str(), prefix.as_str()), ("redis://:pw@cache:6380/2", "ferroflake:orders:"));
//! assert_eq!(redact("redis://:pw@cache:6380/2"), "redis://:***@cache:6380/2");
//! # Ok::<(), String>(())
//! ```
#![warn(missing_docs)]

use url::Url;

/// The scheme of `address` if it starts like a URI (`name:`, RFC 3986: a letter, then
/// letters, digits, `+`, `-` or `.`). Callers use it to tell a URL from a path.
pub fn scheme_of(address: &str) -> Option<&str> {
    let (scheme, _) = address.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(scheme)
}

/// A store URL taken apart. Errors are plain sentences; the caller wraps them in its own
/// error type together with the (redacted) address.
#[derive(Debug, Clone)]
pub struct StoreUrl {
    url: Url,
    host: String,
    path: String,
    query: Vec<(String, String)>,
}

impl StoreUrl {
    /// Parses `address` as a URL with a host.
    ///
    /// # Errors
    /// Not a URL, no host, a query parameter given twice (one reader would take the
    /// first, another the last: two stores for one address), or a `#` fragment.
    pub fn parse(address: &str) -> Result<Self, String> {
        let url = Url::parse(address).map_err(|e| format!("not a URL: {e}"))?;
        let host = match url.host_str() {
            Some(h) if !h.is_empty() => h.to_owned(),
            _ => return Err("no host".into()),
        };
        if url.fragment().is_some() {
            // Clients disagree on it (libpq reads `/ids#x` as the database `ids#x`), so one
            // database would have two names.
            return Err("a '#' is not part of an address: write it as %23".into());
        }
        let path = url.path().trim_end_matches('/').to_owned();
        let query: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        let repeated =
            (1..query.len()).find(|&i| query[..i].iter().any(|(seen, _)| *seen == query[i].0));
        if let Some(i) = repeated {
            return Err(format!("the parameter {:?} is given twice", query[i].0));
        }
        Ok(StoreUrl {
            url,
            host,
            path,
            query,
        })
    }

    /// The scheme: `redis`, `postgres`, ...
    pub fn scheme(&self) -> &str {
        self.url.scheme()
    }

    /// The host.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port, or `default`.
    pub fn port_or(&self, default: u16) -> u16 {
        self.url.port().unwrap_or(default)
    }

    /// The path without a trailing `/` (empty for none).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Refuses a query parameter not in `allowed`.
    ///
    /// # Errors
    /// Names the first unknown parameter.
    pub fn allow_only(&self, allowed: &[&str]) -> Result<(), String> {
        match self
            .query
            .iter()
            .find(|(k, _)| !allowed.contains(&k.as_str()))
        {
            Some((k, _)) => Err(format!("unknown parameter {k:?}")),
            None => Ok(()),
        }
    }

    /// The value of query parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// A Redis address: `redis://[user[:password]@]host[:port][/db][?prefix=NAME]`. Returns
    /// the client's URL (`redis://auth@host:port/db`, port 6379 and database 0 by default)
    /// and the key prefix `ferroflake:NAME:` (`default_name` without `prefix`).
    ///
    /// # Errors
    /// A path that is not a database number, or a prefix with other characters than
    /// letters, digits, `_`, `-` and `.`.
    pub fn redis(&self, default_name: &str) -> Result<(String, String), String> {
        let db = match self.path.trim_start_matches('/') {
            "" => 0,
            db => db
                .parse::<u32>()
                .map_err(|_| "the path must be a database number".to_owned())?,
        };
        let name = self.param("prefix").unwrap_or(default_name);
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
        {
            return Err("prefix must be letters, digits, '_', '-' or '.'".into());
        }
        let auth = match (self.url.username(), self.url.password()) {
            ("", None) => String::new(),
            (user, Some(pass)) => format!("{user}:{pass}@"),
            (user, None) => format!("{user}@"),
        };
        let (host, port) = (&self.host, self.port_or(6379));
        Ok((
            format!("redis://{auth}{host}:{port}/{db}"),
            format!("ferroflake:{name}:"),
        ))
    }

    /// A SQL address: `scheme://user@host:port/db[?table=NAME&...]`. Returns the connection
    /// URL without `table` (other parameters kept) and the table (`default_table` without
    /// `table`).
    ///
    /// # Errors
    /// No database name, or a table name [`check_table`] refuses.
    pub fn sql(&self, default_table: &str) -> Result<(String, String), String> {
        let table = self.param("table").unwrap_or(default_table).to_owned();
        check_table(&table)?;
        if self.path.trim_start_matches('/').is_empty() {
            return Err(format!(
                "no database name ({}://user@host:port/db)",
                self.scheme()
            ));
        }
        let mut plain = self.url.clone();
        let rest: Vec<&(String, String)> = self
            .query
            .iter()
            .filter(|(k, _)| k != "table" && k != "accept")
            .collect();
        if rest.is_empty() {
            plain.set_query(None);
        } else {
            plain.query_pairs_mut().clear().extend_pairs(rest);
        }
        Ok((plain.to_string(), table))
    }
}

/// A table name that can go into SQL unquoted: lowercase letters, digits and `_`, at most
/// 63 bytes (PostgreSQL's limit), not starting with a digit.
///
/// # Errors
/// Says what a table name may hold.
pub fn check_table(table: &str) -> Result<(), String> {
    let valid = !table.is_empty()
        && table.len() <= 63
        && table.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && table
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if valid {
        Ok(())
    } else {
        Err("table must be lowercase letters, digits and '_' (at most 63)".into())
    }
}

/// What a relative path would mean here, for a message that refuses it: ` (here:
/// /working/dir/PATH)`, or nothing if the path may hold a secret (a mistyped URL such as
/// `postgres//user:password@host/db` reads as a relative path; [`redact`] would hide part
/// of it, and the joined path would show it whole).
pub fn meant_here(relative: &str) -> String {
    if redact(relative) != relative {
        return String::new();
    }
    std::env::current_dir()
        .map(|cwd| format!(" (here: {})", cwd.join(relative).display()))
        .unwrap_or_default()
}

/// `address` with its secrets shown as `***`: addresses reach error messages, statuses and
/// logs. Hidden: the password (and in a `ferroflake+http(s)://` address, which takes no
/// user, the user name: a token put there by mistake), and the value of any query parameter whose name speaks of a
/// secret (`password`, `token`, `secret`, `auth`, `key`...). An address that does not parse
/// as a URL with a host (`postgres:app:pw@db/ids`, its `//` left out, parses with none)
/// keeps only its scheme and what follows its last `@`, as it may hold a password the
/// parser could not find.
pub fn redact(address: &str) -> String {
    let Some(mut url) = Url::parse(address).ok().filter(|url| url.host().is_some()) else {
        return hide_secret_parameters(&hide_before_last_at(address));
    };
    let mut changed = false;
    if url.password().is_some() {
        let _ = url.set_password(Some("***"));
        changed = true;
    }
    // A ferroflake service's address takes no user: a name there is a token put in by
    // mistake.
    if url.scheme().starts_with("ferroflake+") && !url.username().is_empty() {
        let _ = url.set_username("***");
        changed = true;
    }
    if url.query_pairs().any(|(name, _)| names_a_secret(&name)) {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(name, value)| {
                let value = if names_a_secret(&name) {
                    "***".into()
                } else {
                    value.into_owned()
                };
                (name.into_owned(), value)
            })
            .collect();
        url.query_pairs_mut().clear().extend_pairs(pairs);
        changed = true;
    }
    if changed {
        url.to_string()
    } else {
        address.to_owned()
    }
}

/// `text` with every word in it that reads as an address (`scheme:` then more) shown as
/// [`redact`] shows it: for messages of other libraries that quote what they were given.
pub fn redact_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if scheme_of(word).is_some() {
            out.push_str(&redact(word));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ',' | '(' | ')' | '[' | ']') {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Whether a query parameter of this name holds a secret. One that names a file
/// (`token_file`, libpq's `passfile`) holds a path, which is shown: what to check when
/// the file cannot be read.
fn names_a_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    if name.ends_with("file") {
        return false;
    }
    [
        "pass",
        "pwd",
        "secret",
        "token",
        "auth",
        "key",
        "credential",
    ]
    .iter()
    .any(|word| name.contains(word))
}

/// `address` with the value of each query parameter that [`names_a_secret`] shown as
/// `***`, read as text: for addresses the URL parser does not take whole (a libpq socket
/// address, `postgres:///ids?password=...`, has no host).
fn hide_secret_parameters(address: &str) -> String {
    let Some((base, query)) = address.split_once('?') else {
        return address.to_owned();
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if names_a_secret(name) => format!("{name}=***"),
            _ => pair.to_owned(),
        })
        .collect();
    format!("{base}?{}", pairs.join("&"))
}

/// `address` with all between its scheme (and the slashes after it) and its last `@`
/// shown as `***`.
fn hide_before_last_at(address: &str) -> String {
    let Some(at) = address.rfind('@') else {
        return address.to_owned();
    };
    let start = scheme_of(address).map_or(0, |scheme| {
        let after = &address[scheme.len() + 1..];
        scheme.len() + 1 + (after.len() - after.trim_start_matches('/').len())
    });
    if at <= start {
        return address.to_owned();
    }
    format!("{}***{}", &address[..start], &address[at..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_written_before_a_services_host_is_hidden() {
        for address in [
            "ferroflake+http://SeCrEt@a:1/",
            "ferroflake+https://SeCrEt@a:1,b:2/",
            "ferroflake+http://a:1/?token=SeCrEt",
        ] {
            let shown = redact(address);
            assert!(
                !shown.contains("SeCrEt") && shown.contains("***"),
                "{shown}"
            );
        }
        assert_eq!(redact("postgres://app@db/ids"), "postgres://app@db/ids");
        // Where the token is kept is not the token.
        let kept = "ferroflake+http://a:1/?token_file=/run/secrets/ids-token";
        assert_eq!(redact(kept), kept);
    }

    #[test]
    fn redis_defaults_and_auth() {
        let parts = |a: &str| StoreUrl::parse(a).unwrap().redis("lease");
        assert_eq!(
            parts("redis://cache").unwrap(),
            ("redis://cache:6379/0".into(), "ferroflake:lease:".into())
        );
        assert_eq!(
            parts("redis://app@cache/3?prefix=x.y").unwrap(),
            ("redis://app@cache:6379/3".into(), "ferroflake:x.y:".into())
        );
        assert!(parts("redis://cache/db0").is_err());
        assert!(parts("redis://cache/0?prefix=a:b").is_err());
        assert!(parts("redis://cache/0?prefix=").is_err());
    }

    #[test]
    fn sql_keeps_other_parameters_and_drops_table() {
        let parts = |a: &str| StoreUrl::parse(a).unwrap().sql("leaf_alloc");
        assert_eq!(
            parts("postgres://u@h/db?table=t1&sslmode=disable").unwrap(),
            ("postgres://u@h/db?sslmode=disable".into(), "t1".into())
        );
        assert_eq!(
            parts("mysql://u@h:3306/db").unwrap(),
            ("mysql://u@h:3306/db".into(), "leaf_alloc".into())
        );
        assert!(parts("postgres://u@h").is_err());
        assert!(parts("postgres://u@h/db?table=Leaf").is_err());
        assert!(parts("postgres://u@h/db?table=a;drop").is_err());
        assert!(parts("postgres://u@h/db?table=1a").is_err());
    }

    #[test]
    fn unknown_parameters_and_hosts() {
        let url = StoreUrl::parse("etcd://h:1/a?x=1").unwrap();
        assert!(url.allow_only(&[]).is_err());
        assert!(url.allow_only(&["x"]).is_ok());
        assert!(StoreUrl::parse("etcd://").is_err());
        assert!(StoreUrl::parse("not a url").is_err());
        // One reader would take the first, another the last.
        for twice in [
            "postgres://h/db?table=a&table=b",
            "redis://h/0?prefix=a&pr%65fix=b",
        ] {
            let refused = StoreUrl::parse(twice).unwrap_err();
            assert!(refused.contains("given twice"), "{twice}: {refused}");
        }
        let refused = StoreUrl::parse("postgres://h/ids#x").unwrap_err();
        assert!(refused.contains("%23"), "{refused}");
        assert_eq!(
            StoreUrl::parse("postgres://h/ids%23x").unwrap().path(),
            "/ids%23x"
        );
    }

    #[test]
    fn passwords_are_hidden() {
        assert_eq!(redact("redis://:s3cr@t@cache/0"), "redis://:***@cache/0");
        assert_eq!(
            redact("mysql://root:pw@db:3306/leaf"),
            "mysql://root:***@db:3306/leaf"
        );
        assert_eq!(
            redact("postgres://app@db/ids?table=t&password=s3cret"),
            "postgres://app@db/ids?table=t&password=***"
        );
        assert_eq!(
            redact("redis://app:pw@cache/0?prefix=x&auth_token=abc"),
            "redis://app:***@cache/0?prefix=x&auth_token=***"
        );
        // Not a URL the parser takes (a port that is not a number): all before the last
        // `@` is hidden.
        assert_eq!(
            redact("postgres://app:s3/cret@db:port/ids"),
            "postgres://***@db:port/ids"
        );
        // A scheme without `//` parses with no host: the password sits in the path.
        assert_eq!(
            redact("postgres:app:HUNTER2@127.0.0.1:5432/ids"),
            "postgres:***@127.0.0.1:5432/ids"
        );
        assert_eq!(
            redact("redis:/:HUNTER2@127.0.0.1:6379/0"),
            "redis:/***@127.0.0.1:6379/0"
        );
        assert_eq!(redact("etcd:u:HUNTER2@h:2379"), "etcd:***@h:2379");
        // Host-less addresses (libpq's socket form) keep their secret parameters too.
        for (address, shown) in [
            (
                "postgres:///ids?password=HUNTER2",
                "postgres:///ids?password=***",
            ),
            (
                "postgres://:5432/ids?sslmode=disable&password=HUNTER2",
                "postgres://:5432/ids?sslmode=disable&password=***",
            ),
            ("redis:///0?password=HUNTER2", "redis:///0?password=***"),
        ] {
            assert_eq!(redact(address), shown);
        }
        assert_eq!(
            redact_words("invalid type: string \"postgres://app:HUNTER2@db/ids\", expected x"),
            "invalid type: string \"postgres://app:***@db/ids\", expected x"
        );
        for plain in [
            "postgres://app@db/ids",
            "redis://cache/0?prefix=a@b",
            "/srv/s.db",
            "sqlite:///srv/s.db",
        ] {
            assert_eq!(redact(plain), plain);
        }
    }
}
