//! Owner tokens: 128 random bits from the OS, as 32 hex digits. Every registry (the
//! embedded one here, the stores in `ferroflake-lease-stores`) makes its tokens with this.

use crate::LeaseError;

/// A fresh owner token. Two claims never share one, so a stale holder's renew or release
/// can never touch a newer claim of the same id.
pub fn new_token(registry: &str) -> Result<String, LeaseError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| LeaseError::Store {
        registry: registry.into(),
        detail: format!("no randomness for an owner token: {e}"),
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_128_bit_hex_and_differ() {
        let a = new_token("test").unwrap();
        let b = new_token("test").unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
