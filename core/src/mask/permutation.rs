//! The ID mask: a keyed, reversible permutation of the IDs of one bit width.

use siphasher::sip::SipHasher24;

use super::key::MaskKey;
use super::text::{self, MaskedString};
use crate::{Error, Format};

/// A keyed permutation of the IDs of one bit width; see below for what it is built from and
/// what it protects.
///
/// Cheap to make and to copy around (the key and two bytes); `Send` and `Sync`, with no
/// interior state, so one mask serves any number of threads. `Debug` shows the width and
/// the key's version, never the secret.
///
/// A keyed, reversible permutation of IDs: public IDs that hide counts, times and nodes.
///
/// A snowflake ID tells anyone when it was made and by which node; a segment ID tells how
/// many came before it. [`Mask`] maps every ID of a given bit width to another ID of the same
/// width, one to one, under a secret [`MaskKey`]: the key holder can [`unmask`](Mask::unmask)
/// it, anyone else sees a number that looks random. Masked IDs of a 63-bit mask stay
/// positive in every signed 64-bit integer, and those of a 53-bit mask stay exact in a
/// JavaScript `number`.
///
/// ```
/// use ferroflake::{Format, Mask, MaskKey};
///
/// let key = MaskKey::parse("1:000102030405060708090a0b0c0d0e0f")?; // version 1
/// let mask = Mask::new(&key, 63)?;
/// let public = mask.mask(1_000_001)?;
/// assert_eq!(mask.unmask(public), Ok(1_000_001));
/// assert!(mask.mask(1_000_002)? != public + 1); // neighbours are unrelated
///
/// // The text form names the key version in its first character; its length is fixed.
/// let text = mask.encode(1_000_001, Format::Base62)?;
/// assert_eq!((text.len(), &text[..1]), (12, "1"));
/// assert_eq!(mask.decode(&text, Format::Base62), Ok(1_000_001));
/// # Ok::<(), ferroflake::Error>(())
/// ```
///
/// # The construction
///
/// An alternating Feistel network of [`Mask::ROUNDS`] (10) rounds on the `w`-bit ID, split
/// as in NIST SP 800-38G's FF1 into a high half `A` of `u = w / 2` bits and a low half `B`
/// of `v = w - u` bits (unequal when `w` is odd). Round `i` computes
/// `A, B = B, A xor (F(i, B) mod 2^m)` where `m` is `u` in even rounds and `v` in odd ones, so
/// the halves keep their sizes after an even number of rounds and the output is `A:B` again,
/// `w` bits, with no cycle-walking. Unmasking runs the rounds backwards. A Feistel network is
/// a permutation whatever its round function, so the mask is a bijection on `0..2^w` by
/// construction; the tests check it exhaustively at 16 bits.
///
/// The round function `F` is SipHash-2-4 (Aumasson and Bernstein, 2012), keyed with the
/// key's 128-bit secret, from the `siphasher` crate. SipHash was designed as a PRF for
/// short inputs: one round's input is 15 bytes, which SipHash absorbs in two compressions
/// (tens of ns), where keyed BLAKE2s would compress a whole 64-byte block of ten rounds for
/// each of them. Its 64-bit output is wider than any half (at most 32 bits), so one call
/// gives a round all it needs. The crate is `no_std`, has no dependencies and allocates
/// nothing. A whole mask costs a few hundred ns, several times a `next_id` (see the `mask`
/// group of the benches).
///
/// **Rounds.** Luby and Rackoff (1988) proved 3 rounds of independent random functions a
/// pseudorandom permutation and 4 rounds a strong one (both directions queried), but only
/// up to about `2^(n/2)` queries for `n`-bit halves: for a 53-bit mask, some 2^13. Patarin
/// ("Luby-Rackoff: 7 rounds are enough for 2^{n(1-e)} security", CRYPTO 2003; "Security of
/// random Feistel schemes with 5 or more rounds", CRYPTO 2004) raised the bound towards
/// `2^n` queries with 7 or more rounds. FF1 uses 10 rounds and FF3-1 8; we use FF1's 10,
/// above Patarin's 7 with margin, at about 10 SipHash calls per mask.
///
/// **Domain separation.** Each round's PRF input is `B` (8 bytes, little-endian), the round
/// index, the width `w`, the key version (one byte each) and the ASCII bytes `mask`. The
/// round index makes the ten round functions independent, as the proofs assume; the width
/// makes the 53-bit and 63-bit masks of one key unrelated permutations; the version makes
/// two versions that were given the same secret by mistake still mask differently; the
/// label keeps these inputs apart from other uses of SipHash with the same secret.
///
/// # What it protects, and what it does not
///
/// It hides what an ID says (its time, node, sequence, or its place in a counter) from
/// anyone without the key: a competitor cannot count your orders from two order numbers or
/// date an account from its ID, and consecutive IDs give unrelated masked IDs.
///
/// It is **not** encryption with integrity, and it does not stop:
///
/// - **Forgery.** Every number of the width unmasks to some ID: anyone can submit any masked
///   ID and get a valid-looking ID back. Look the ID up and check that it exists and that
///   the caller may see it; never treat "it unmasked" as "it is genuine".
/// - **Linking.** Masking is deterministic: equal IDs give equal masked IDs, so one
///   object's masked ID can be recognised wherever it appears.
/// - **The key holder.** Anyone with the key reverses every masked ID, past and future; a
///   leaked key reveals everything it ever masked. Rotate by adding a key of a new version
///   to the [`MaskKeyring`]: new IDs use it, old ones still unmask with theirs.
/// - **Tiny widths.** Widths below about 32 bits have few enough values to tabulate; the
///   small widths exist for tests.
///
/// [`MaskKeyring`]: crate::MaskKeyring
#[derive(Clone)]
pub struct Mask {
    prf: SipHasher24,
    version: u8,
    bits: u8,
    /// Bits of the high half `A` (`bits / 2`).
    high: u8,
    /// Bits of the low half `B` (`bits - high`).
    low: u8,
}

impl Mask {
    /// The narrowest width a mask takes.
    pub const MIN_BITS: u32 = 8;
    /// The widest width a mask takes.
    pub const MAX_BITS: u32 = 64;
    /// Feistel rounds, as NIST FF1.
    pub const ROUNDS: u8 = 10;

    /// A mask of `bits`-bit IDs under `key`: 63 for any ferroflake layout (IDs below
    /// 2^63), 53 for IDs that must stay exact in JavaScript.
    ///
    /// # Errors
    /// [`Error::MaskWidthOutOfRange`] for a width outside 8..=64.
    pub fn new(key: &MaskKey, bits: u32) -> Result<Mask, Error> {
        if !(Self::MIN_BITS..=Self::MAX_BITS).contains(&bits) {
            return Err(Error::MaskWidthOutOfRange { bits });
        }
        let high = bits / 2;
        Ok(Mask {
            prf: SipHasher24::new_with_key(key.secret()),
            version: key.version(),
            bits: bits as u8,
            high: high as u8,
            low: (bits - high) as u8,
        })
    }

    /// The width in bits: the mask permutes `0..2^bits`.
    pub const fn bits(&self) -> u32 {
        self.bits as u32
    }

    /// The version of the key the mask was made with.
    pub const fn version(&self) -> u8 {
        self.version
    }

    /// The largest value of the width: `2^bits - 1`.
    pub const fn max_value(&self) -> u64 {
        u64::MAX >> (64 - self.bits as u32)
    }

    /// The masked form of `id`, a number of the same width.
    ///
    /// # Errors
    /// [`Error::IdOutOfRange`] if `id` has bits set above the width.
    #[inline]
    pub fn mask(&self, id: u64) -> Result<u64, Error> {
        self.check(id)?;
        let low_mask = self.max_value() >> self.high;
        let (mut a, mut b) = (id >> self.low, id & low_mask);
        for round in 0..Self::ROUNDS {
            let c = a ^ self.round(round, b);
            a = b;
            b = c;
        }
        Ok((a << self.low) | b)
    }

    /// The ID that [`mask`](Self::mask) turned into `masked`.
    ///
    /// Every value of the width unmasks to some ID: a caller that got `masked` from outside
    /// must still check that the ID exists and may be shown.
    ///
    /// # Errors
    /// [`Error::IdOutOfRange`] if `masked` has bits set above the width.
    #[inline]
    pub fn unmask(&self, masked: u64) -> Result<u64, Error> {
        self.check(masked)?;
        let low_mask = self.max_value() >> self.high;
        let (mut a, mut b) = (masked >> self.low, masked & low_mask);
        for round in (0..Self::ROUNDS).rev() {
            // Round `round` made (a, b) from (p, q) as (q, p ^ F(q)).
            let p = b ^ self.round(round, a);
            b = a;
            a = p;
        }
        Ok((a << self.low) | b)
    }

    /// Masks `id` and writes it as text: the key version in the first character (two digits
    /// for [`Format::Decimal`], five for [`Format::Base2`]), then the masked number in fixed
    /// width (base64-decimal and JSON wrap the decimal text)
    /// ([`text_len`](Self::text_len) characters in all), so the length says nothing about
    /// the ID.
    ///
    /// # Errors
    /// As [`mask`](Self::mask).
    pub fn encode(&self, id: u64, format: Format) -> Result<MaskedString, Error> {
        let masked = self.mask(id)?;
        Ok(text::write(self.version, masked, self.bits(), format))
    }

    /// The ID of a text made by [`encode`](Self::encode) with this mask's key and width.
    ///
    /// # Errors
    /// [`Error::ParseEmpty`], [`Error::ParseWrongLength`], [`Error::ParseInvalidCharacter`]
    /// or [`Error::ParseOverflow`] for text that is not of this format and width;
    /// [`Error::IdOutOfRange`] for a number above the width;
    /// [`Error::UnknownMaskKeyVersion`] if the text names another key version (unmask it
    /// with a [`MaskKeyring`](crate::MaskKeyring) that holds every version in use).
    pub fn decode(&self, text: &str, format: Format) -> Result<u64, Error> {
        let (version, masked) = text::read(text, self.bits(), format)?;
        if version != self.version {
            return Err(Error::UnknownMaskKeyVersion {
                version: u32::from(version),
            });
        }
        self.unmask(masked)
    }

    /// The length of every text of this mask in `format`: 12 characters for 63 bits in
    /// base62, 14 in base32, 21 in decimal; 10, 12 and 18 for 53 bits.
    pub fn text_len(&self, format: Format) -> usize {
        text::len(self.bits(), format)
    }

    /// The length of every masked text of `bits`-bit IDs in `format`, without a key (`0`
    /// for a width outside 8..=64).
    pub fn text_len_of(bits: u32, format: Format) -> usize {
        if (Self::MIN_BITS..=Self::MAX_BITS).contains(&bits) {
            text::len(bits, format)
        } else {
            0
        }
    }

    /// The key version a masked text of `bits`-bit IDs names, read without a key: which
    /// key would unmask it.
    ///
    /// ```
    /// use ferroflake::{Format, Mask, MaskKey};
    /// let mask = Mask::new(&MaskKey::parse("12:000102030405060708090a0b0c0d0e0f")?, 53)?;
    /// let text = mask.encode(7, Format::Decimal)?;
    /// assert_eq!(Mask::version_of(&text, Format::Decimal, 53), Ok(12));
    /// # Ok::<(), ferroflake::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`decode`](Self::decode) for text that is not of this format and width, with
    /// [`Error::UnknownMaskKeyVersion`] for a version no key can have (above 31);
    /// [`Error::MaskWidthOutOfRange`].
    pub fn version_of(text: &str, format: Format, bits: u32) -> Result<u8, Error> {
        if !(Self::MIN_BITS..=Self::MAX_BITS).contains(&bits) {
            return Err(Error::MaskWidthOutOfRange { bits });
        }
        text::read(text, bits, format).map(|(version, _)| version)
    }

    fn check(&self, value: u64) -> Result<(), Error> {
        if value > self.max_value() {
            return Err(Error::IdOutOfRange {
                id: value,
                bits: self.bits(),
            });
        }
        Ok(())
    }

    /// The round function: SipHash-2-4 of `half | round | bits | version | "mask"`, cut to
    /// the width of the half it is xored into (the high half in even rounds).
    #[inline]
    fn round(&self, round: u8, half: u64) -> u64 {
        let mut input = [0u8; 15];
        input[..8].copy_from_slice(&half.to_le_bytes());
        input[8] = round;
        input[9] = self.bits;
        input[10] = self.version;
        input[11..].copy_from_slice(b"mask");
        let width = if round % 2 == 0 { self.high } else { self.low };
        self.prf.hash(&input) & (u64::MAX >> (64 - u32::from(width)))
    }
}

impl core::fmt::Debug for Mask {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Mask")
            .field("bits", &self.bits)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}
