//! Why an export failed, as the boundary records it.

use crate::ferroflake_result;

/// Why an export failed: its result code, and the text of the error behind it when there is
/// one (the core's, the lease crate's or the segment crate's own `Display`), which becomes
/// the calling thread's `ferroflake_last_error_message`.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) code: ferroflake_result,
    pub(crate) detail: Option<String>,
}

impl Failure {
    /// A code with the error's own words.
    pub(crate) fn new(code: ferroflake_result, detail: impl ToString) -> Self {
        Failure {
            code,
            detail: Some(detail.to_string()),
        }
    }
}

impl From<ferroflake_result> for Failure {
    fn from(code: ferroflake_result) -> Self {
        Failure { code, detail: None }
    }
}

impl From<ferroflake::Error> for Failure {
    #[cold]
    fn from(error: ferroflake::Error) -> Self {
        Failure::new(crate::result::from_kind(error.kind()), error)
    }
}
