//! The scope grammar: what a bearer token may do, and what each route asks of it.
//!
//! | scope | grants |
//! |---|---|
//! | `issue:KEY` | IDs for the key `KEY`, on every ID route, segment or snowflake, and its ranges on the store routes `/v1/store/segment/KEY...` |
//! | `issue:PREFIX*` | IDs for every key that starts with `PREFIX` |
//! | `issue:*` | IDs for every key, and node ids on the lease store routes `/v1/store/lease/...` |
//! | `read` | `/v1/status`, `/v1/segment/{key}/status`, `/metrics`, `/v1/decode/{id}`, `/decodeSnowflakeId`, `/v1/constant` |
//! | `admin` | everything, `/v1/unmask/{text}` and the admin routes `/v1/admin/...` included (no other scope reaches them) |
//!
//! The key is the one in the path, whatever the mode: `issue:orders` reaches
//! `/api/segment/get/orders`, `/api/snowflake/get/orders`, `/v1/segment/orders`,
//! `/v1/snowflake/orders` and both masked routes for `orders`. A snowflake key only labels
//! metrics, so one rule for both modes keeps a team's grant to the name it knows.
//!
//! Only a trailing `*` is a wildcard; a `*` anywhere else makes the scope invalid, so that
//! nobody writes `issue:user-*-eu` believing it a glob. `/healthz` and `/readyz` need no
//! token: orchestrators probe them, and they hold no secret.

use crate::keys;

/// One grant of a token, parsed from the tokens file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// `issue:KEY`: IDs for exactly this key.
    IssueKey(String),
    /// `issue:PREFIX*` (and `issue:*`, the empty prefix): IDs for keys starting with it.
    IssuePrefix(String),
    /// `read`: the status and metrics routes.
    Read,
    /// `admin`: every route.
    Admin,
}

/// What a route asks of the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need<'a> {
    /// No token: the probes.
    Open,
    /// `read` (or `admin`).
    Read,
    /// IDs for this key: a matching `issue:` scope (or `admin`).
    Issue(&'a str),
    /// IDs for every key: `issue:*` (or `admin`). A node id leased through the lease
    /// store routes issues snowflake IDs under any key, so only a grant of every key
    /// covers it.
    EveryKey,
    /// `admin` only.
    Admin,
}

/// What the scope list of the tokens file accepts, for messages.
pub const GRAMMAR: &str = "issue:KEY, issue:PREFIX*, issue:*, read or admin";

impl Scope {
    /// Parses one scope; `None` if it is not in the grammar (see [`GRAMMAR`]).
    pub fn parse(text: &str) -> Option<Scope> {
        match text {
            "read" => return Some(Scope::Read),
            "admin" => return Some(Scope::Admin),
            _ => {}
        }
        let rest = text.strip_prefix("issue:")?;
        let (name, wildcard) = match rest.strip_suffix('*') {
            Some(prefix) => (prefix, true),
            None => (rest, false),
        };
        if name.contains('*') {
            return None;
        }
        if wildcard {
            // A prefix is part of a key: it cannot hold what no key can.
            if !name.is_empty() && keys::check(name).is_err() {
                return None;
            }
            return Some(Scope::IssuePrefix(name.to_owned()));
        }
        keys::check(name).ok()?;
        Some(Scope::IssueKey(name.to_owned()))
    }

    /// Whether this scope alone meets `need`.
    pub fn meets(&self, need: Need<'_>) -> bool {
        match (self, need) {
            (_, Need::Open) | (Scope::Admin, _) => true,
            (Scope::Read, Need::Read) => true,
            (Scope::IssueKey(granted), Need::Issue(key)) => granted == key,
            (Scope::IssuePrefix(prefix), Need::Issue(key)) => key.starts_with(prefix.as_str()),
            (Scope::IssuePrefix(prefix), Need::EveryKey) => prefix.is_empty(),
            _ => false,
        }
    }
}

impl Need<'_> {
    /// The scope a caller could be given to meet this need, for the 403's message.
    pub fn wanted(&self) -> String {
        match self {
            Need::Open => "none".to_owned(),
            Need::Read => "read (or admin)".to_owned(),
            Need::Issue(key) => {
                // Escaped: the key comes from the path, and may hold a NUL or a newline.
                let shown: String = key.chars().take(128).flat_map(char::escape_debug).collect();
                format!("issue:{shown} (or a matching issue:PREFIX*, issue:* or admin)")
            }
            Need::EveryKey => "issue:* (or admin): a node id issues for every key".to_owned(),
            Need::Admin => "admin".to_owned(),
        }
    }
}

/// Whether any of `scopes` meets `need`.
pub fn allows(scopes: &[Scope], need: Need<'_>) -> bool {
    need == Need::Open || scopes.iter().any(|scope| scope.meets(need))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(texts: &[&str]) -> Vec<Scope> {
        texts.iter().map(|t| Scope::parse(t).unwrap()).collect()
    }

    #[test]
    fn the_scope_wanted_shows_control_characters_escaped() {
        let wanted = Need::Issue("a\0b\nc").wanted();
        assert!(wanted.starts_with("issue:a\\0b\\nc "), "{wanted}");
        assert!(!wanted.chars().any(char::is_control), "{wanted:?}");
    }

    #[test]
    fn the_grammar_accepts_keys_prefixes_read_and_admin_and_nothing_else() {
        assert_eq!(
            Scope::parse("issue:order"),
            Some(Scope::IssueKey("order".into()))
        );
        assert_eq!(
            Scope::parse("issue:user-*"),
            Some(Scope::IssuePrefix("user-".into()))
        );
        assert_eq!(
            Scope::parse("issue:*"),
            Some(Scope::IssuePrefix(String::new()))
        );
        assert_eq!(Scope::parse("read"), Some(Scope::Read));
        assert_eq!(Scope::parse("admin"), Some(Scope::Admin));
        for bad in [
            "",
            "issue:",
            "issue",
            "Issue:order",
            "READ",
            "write",
            "issue:a*b",
            "issue:**",
            "issue:a/b",
            "issue:a/*",
            " read",
        ] {
            assert_eq!(Scope::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn each_scope_meets_only_its_routes() {
        let order = parsed(&["issue:order"]);
        assert!(allows(&order, Need::Issue("order")));
        assert!(!allows(&order, Need::Issue("orders")));
        assert!(!allows(&order, Need::Issue("")));
        assert!(!allows(&order, Need::Read));
        assert!(!allows(&order, Need::Admin));
        assert!(allows(&order, Need::Open));

        let users = parsed(&["issue:user-*"]);
        assert!(allows(&users, Need::Issue("user-")));
        assert!(allows(&users, Need::Issue("user-eu")));
        assert!(!allows(&users, Need::Issue("user")));
        assert!(!allows(&users, Need::Issue("users")));

        assert!(!allows(&users, Need::EveryKey));
        assert!(!allows(&order, Need::EveryKey));
        let any = parsed(&["issue:*"]);
        assert!(allows(&any, Need::Issue("anything")));
        assert!(allows(&any, Need::EveryKey));
        assert!(!allows(&any, Need::Read));

        let read = parsed(&["read"]);
        assert!(allows(&read, Need::Read));
        assert!(!allows(&read, Need::Issue("order")));
        assert!(!allows(&read, Need::Admin));
        assert!(!allows(&read, Need::EveryKey));

        let admin = parsed(&["admin"]);
        for need in [
            Need::Read,
            Need::Issue("x"),
            Need::EveryKey,
            Need::Admin,
            Need::Open,
        ] {
            assert!(allows(&admin, need));
        }
        assert!(!allows(&[], Need::Read));
    }
}
