//! Masked IDs: a keyed, reversible permutation of the IDs of one bit width, for IDs shown
//! to people who should not read a count or a time from them. Imports run one way: the key,
//! its text forms, the permutation, the keyring of every version in use.

mod key;
#[cfg(feature = "std")]
mod key_file;
mod keyring;
mod permutation;
mod text;

pub use key::MaskKey;
#[cfg(feature = "std")]
pub use key_file::{read_key_file, KeyFileText, KeyTextError, MAX_KEY_FILE_BYTES};
pub use keyring::MaskKeyring;
pub use permutation::Mask;
pub use text::MaskedString;
