//! Keys as they arrive in a URL: checked before any store or metric sees them.

use ferroflake_segment::MAX_KEY_BYTES;

/// Refuses a key that no table row can hold or that a URL path cannot carry plainly:
/// empty, longer than [`MAX_KEY_BYTES`] bytes (Leaf's `biz_tag` is `varchar(128)`), or
/// holding a control character, `/` or `\` (a `..%2F`-style path trick decodes to one).
///
/// # Errors
/// A sentence saying which rule the key breaks.
pub fn check(key: &str) -> Result<(), String> {
    if key.is_empty() {
        return Err("the key is empty".to_owned());
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(format!(
            "the key is {} bytes long; at most {MAX_KEY_BYTES} are allowed (the table's \
             biz_tag is varchar(128))",
            key.len()
        ));
    }
    if let Some(c) = key
        .chars()
        .find(|c| c.is_control() || matches!(c, '/' | '\\'))
    {
        return Err(format!(
            "the key holds {c:?}; control characters, '/' and '\\' are not allowed"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn keys_a_table_and_a_path_can_hold() {
        assert!(check("orders").is_ok());
        assert!(check("订单-2024.v1").is_ok());
        assert!(check(&"k".repeat(128)).is_ok());
        assert!(check(&"k".repeat(129)).unwrap_err().contains("129 bytes"));
        assert!(check("").is_err());
        assert!(check("../etc").unwrap_err().contains("'/'"));
        assert!(check("a\\b").is_err());
        assert!(check("a\u{0}b").is_err());
        assert!(check("a\nb").is_err());
    }
}
