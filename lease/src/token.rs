//! Owner tokens: 128 random bits from the operating system, as 32 hex digits.

use crate::LeaseError;

/// A fresh owner token. Fails (closed) only if the OS has no randomness to give.
pub fn new_token() -> Result<String, LeaseError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| LeaseError::Store {
        registry: "embedded".into(),
        detail: format!("no randomness for an owner token: {e}"),
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::new_token;

    #[test]
    fn tokens_are_128_bit_hex_and_differ() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
