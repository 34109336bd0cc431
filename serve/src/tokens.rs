//! The tokens file: who may call the service, as SHA-256 hashes of bearer tokens, each with
//! a name and scopes ([`scopes`](crate::scopes)).
//!
//! ```toml
//! [[token]]
//! name = "orders-service"
//! sha256 = "<64 hex digits: printf %s TOKEN | sha256sum>"
//! scopes = ["issue:order", "issue:user-*"]
//!
//! [[token]]
//! name = "ops"
//! sha256 = "<64 hex digits>"
//! scopes = ["read", "admin"]
//! ```
//!
//! The file holds no token, so reading it gives none away. It is read at start and again
//! on SIGHUP; a file that does not parse keeps the tokens already loaded. No message ever
//! quotes the file: a mistake is named by line, entry number and name.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arc_swap::ArcSwap;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::{ConditionallySelectable, ConstantTimeEq};

use crate::scopes::{Scope, GRAMMAR};

/// One token the server accepts.
#[derive(Debug, Clone)]
pub struct Token {
    /// Who holds it, for logs and messages; never a secret.
    pub name: String,
    /// What it may do.
    pub scopes: Vec<Scope>,
    sha256: [u8; 32],
}

/// Every token of one reading of the file.
#[derive(Debug, Clone)]
pub struct TokenTable {
    tokens: Vec<Token>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileForm {
    #[serde(default)]
    token: Vec<EntryForm>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryForm {
    name: String,
    sha256: String,
    scopes: Vec<String>,
}

impl TokenTable {
    /// Reads the tokens file at `path`.
    ///
    /// # Errors
    /// The file cannot be read or is not a valid tokens file; the message names the path
    /// and the mistake, never the file's text.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = crate::small_file::read_to_string(path)
            .map_err(|e| format!("cannot read the tokens file {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("tokens file {}: {e}", path.display()))
    }

    /// Parses the text of a tokens file.
    ///
    /// # Errors
    /// Not TOML of the expected form, a hash that is not 64 hex digits, a scope outside
    /// the grammar, two entries with one name or one hash, no entry at all.
    pub fn parse(text: &str) -> Result<Self, String> {
        // toml's and serde's messages quote the offending text: only its line is shown.
        let form: FileForm = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
            let at = line.map_or_else(String::new, |n| format!("line {n}: "));
            format!(
                "{at}not a tokens file: expected [[token]] tables, each with name, sha256 \
                 and scopes, and nothing else"
            )
        })?;
        if form.token.is_empty() {
            // Most likely a file caught half-written: locking everyone out is never meant.
            return Err("holds no [[token]] entry".to_owned());
        }
        let mut tokens: Vec<Token> = Vec::with_capacity(form.token.len());
        for (index, entry) in form.token.into_iter().enumerate() {
            let which = format!("token {} ({:?})", index + 1, entry.name);
            if entry.name.trim().is_empty() {
                return Err(format!("token {}: the name is empty", index + 1));
            }
            let sha256 = parse_hash(&entry.sha256).ok_or_else(|| {
                format!(
                    "{which}: sha256 is not 64 hex digits (the file holds the hash of a \
                     token, never the token: printf %s TOKEN | sha256sum)"
                )
            })?;
            let scopes = entry
                .scopes
                .iter()
                .enumerate()
                .map(|(n, scope)| {
                    Scope::parse(scope)
                        .ok_or_else(|| format!("{which}: scope {} is not one of {GRAMMAR}", n + 1))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if scopes.is_empty() {
                return Err(format!("{which}: no scope: give at least one of {GRAMMAR}"));
            }
            if let Some(same) = tokens.iter().position(|t| t.name == entry.name) {
                return Err(format!("{which}: token {} has the same name", same + 1));
            }
            if let Some(same) = tokens.iter().find(|t| t.sha256 == sha256) {
                return Err(format!(
                    "{which}: the same token as {:?}: give each holder its own",
                    same.name
                ));
            }
            tokens.push(Token {
                name: entry.name,
                scopes,
                sha256,
            });
        }
        Ok(TokenTable { tokens })
    }

    /// How many tokens the table holds.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether the table is empty (a parsed table never is).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The token whose hash is the SHA-256 of `presented`, if any.
    ///
    /// Every entry is compared, each in constant time, and the match is picked without a
    /// branch: the time taken tells neither whether nor which entry matched.
    pub fn identify(&self, presented: &[u8]) -> Option<&Token> {
        let hash: [u8; 32] = Sha256::digest(presented).into();
        let mut found = subtle::Choice::from(0);
        let mut index = 0u64;
        for (i, token) in self.tokens.iter().enumerate() {
            let same = token.sha256.ct_eq(&hash);
            index.conditional_assign(&(i as u64), same);
            found |= same;
        }
        bool::from(found).then(|| &self.tokens[index as usize])
    }
}

/// 64 hex digits (either case) as 32 bytes.
fn parse_hash(text: &str) -> Option<[u8; 32]> {
    let digits = text.as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let mut hash = [0u8; 32];
    for (byte, pair) in hash.iter_mut().zip(digits.chunks_exact(2)) {
        let high = char::from(pair[0]).to_digit(16)?;
        let low = char::from(pair[1]).to_digit(16)?;
        *byte = u8::try_from(high * 16 + low).ok()?;
    }
    Some(hash)
}

/// The tokens in force and the file they come from; [`reload`](Self::reload) swaps in a
/// new reading without stopping a request.
pub struct Tokens {
    path: PathBuf,
    table: ArcSwap<TokenTable>,
}

impl Tokens {
    /// Loads `path`.
    ///
    /// # Errors
    /// As [`TokenTable::load`].
    pub fn open(path: &Path) -> Result<Self, String> {
        let table = TokenTable::load(path)?;
        Ok(Tokens {
            path: path.to_owned(),
            table: ArcSwap::from_pointee(table),
        })
    }

    /// The file's path (which may be shown; its contents may not).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The tokens in force.
    pub fn current(&self) -> Arc<TokenTable> {
        self.table.load_full()
    }

    /// Reads the file again. On success the new tokens replace the old at once and the
    /// count is returned; on failure the old ones stay.
    ///
    /// # Errors
    /// As [`TokenTable::load`].
    pub fn reload(&self) -> Result<usize, String> {
        let table = TokenTable::load(&self.path)?;
        let count = table.len();
        self.table.store(Arc::new(table));
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(token: &str) -> String {
        Sha256::digest(token.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn file(entries: &[(&str, &str, &[&str])]) -> String {
        entries
            .iter()
            .map(|(name, token, scopes)| {
                format!(
                    "[[token]]\nname = {name:?}\nsha256 = {:?}\nscopes = {scopes:?}\n",
                    hash(token)
                )
            })
            .collect()
    }

    #[test]
    fn a_token_is_found_by_its_hash_and_no_other_is() {
        let table = TokenTable::parse(&file(&[
            ("orders", "t-orders", &["issue:order"]),
            ("ops", "t-ops", &["read", "admin"]),
        ]))
        .unwrap();
        assert_eq!(table.len(), 2);
        assert_eq!(table.identify(b"t-orders").unwrap().name, "orders");
        let ops = table.identify(b"t-ops").unwrap();
        assert_eq!(ops.name, "ops");
        assert_eq!(ops.scopes, [Scope::Read, Scope::Admin]);
        assert!(table.identify(b"t-order").is_none());
        assert!(table.identify(b"").is_none());
        // The hash itself is not a token.
        assert!(table.identify(hash("t-ops").as_bytes()).is_none());
    }

    #[test]
    fn upper_case_hashes_are_the_same_hashes() {
        let text = format!(
            "[[token]]\nname = \"a\"\nsha256 = \"{}\"\nscopes = [\"read\"]\n",
            hash("x").to_uppercase()
        );
        assert!(TokenTable::parse(&text).unwrap().identify(b"x").is_some());
    }

    #[test]
    fn mistakes_are_named_without_quoting_the_file() {
        let secret = "sekrit-in-the-file";
        let cases = [
            // A token where its hash should be.
            format!("[[token]]\nname = \"a\"\nsha256 = \"{secret}\"\nscopes = [\"read\"]\n"),
            // Not TOML, the secret on the bad line.
            format!("[[token]]\nname = \"a\"\nsha256 = {secret}\n"),
            // A scope outside the grammar.
            format!(
                "[[token]]\nname = \"a\"\nsha256 = \"{}\"\nscopes = [\"{secret}\"]\n",
                hash("x")
            ),
            // The wrong type, which serde would quote.
            format!(
                "[[token]]\nname = \"a\"\nsha256 = \"{}\"\nscopes = \"{secret}\"\n",
                hash("x")
            ),
            // An unknown field.
            format!("[[token]]\n{secret} = 1\n"),
            String::new(),
            file(&[("a", "x", &["read"]), ("a", "y", &["read"])]),
            file(&[("a", "x", &["read"]), ("b", "x", &["read"])]),
            file(&[("a", "x", &[])]),
            file(&[(" ", "x", &["read"])]),
        ];
        let expected = [
            "sha256 is not 64 hex digits",
            "line 3: not a tokens file",
            "scope 1 is not one of",
            "not a tokens file",
            "not a tokens file",
            "holds no [[token]] entry",
            "token 1 has the same name",
            "the same token as \"a\"",
            "no scope",
            "the name is empty",
        ];
        for (text, expected) in cases.iter().zip(expected) {
            let error = TokenTable::parse(text).unwrap_err();
            assert!(error.contains(expected), "{error:?} lacks {expected:?}");
            assert!(!error.contains(secret), "{error:?} quotes the file");
            assert!(!error.contains(&hash("x")), "{error:?} quotes a hash");
        }
    }

    #[test]
    fn a_bad_reload_keeps_the_tokens_in_force() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.toml");
        std::fs::write(&path, file(&[("old", "t-old", &["read"])])).unwrap();
        let tokens = Tokens::open(&path).unwrap();
        std::fs::write(&path, "[[token]]\nname = ").unwrap();
        assert!(tokens.reload().unwrap_err().contains("line 2"));
        assert!(tokens.current().identify(b"t-old").is_some());
        std::fs::write(&path, file(&[("new", "t-new", &["read"])])).unwrap();
        assert_eq!(tokens.reload().unwrap(), 1);
        assert!(tokens.current().identify(b"t-old").is_none());
        assert!(tokens.current().identify(b"t-new").is_some());
    }
}
