"""MaskKeyring: the shared vectors' mask section, round trips, keys from files and the
environment, typed refusals, and one keyring shared by threads."""

from __future__ import annotations

import errno
import os
import pickle
import random
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest

import ferroflake
from ferroflake import (
    MaskError,
    MaskKeyError,
    MaskKeyring,
    OutOfRangeError,
    ParseError,
    UnknownMaskKeyVersionError,
)
from spec import FORMATS

KEY1 = "1:000102030405060708090a0b0c0d0e0f"
KEY2 = "2:f0e1d2c3b4a5968778695a4b3c2d1e0f"
SECRETS = ("000102030405060708090a0b0c0d0e0f", "f0e1d2c3b4a5968778695a4b3c2d1e0f")
WIDTHS = (8, 16, 53, 63, 64)
CODES = {name: code for name, code, _ in ferroflake.error_kinds()}


def check_kind(err: ferroflake.FerroflakeError, kind: str) -> None:
    assert err.kind == kind, (err.kind, str(err))
    assert err.code == CODES[kind]


def test_every_vector_masks_unmasks_encodes_and_decodes(vectors: dict[str, Any]) -> None:
    cases = vectors["mask"]["cases"]
    assert len(cases) > 100
    for case in cases:
        ring = MaskKeyring(case["key"])
        bits, id_, masked = case["bits"], int(case["id"]), int(case["masked"])
        assert ring.mask(id_, bits) == masked, case
        assert ring.unmask(masked, bits) == id_, case
        assert ring.unmask(masked, bits, version=ring.current_version) == id_, case
        for fmt, text in case["text"].items():
            assert ring.encode(id_, fmt, bits) == text, (case, fmt)
            assert ring.decode(text, fmt, bits) == id_, (case, fmt)
            assert ring.text_len(fmt, bits) == len(text), (case, fmt)


def test_every_vector_decode_error_raises_its_kind(vectors: dict[str, Any]) -> None:
    for case in vectors["mask"]["decode_errors"]:
        ring = MaskKeyring("\n".join(case["keyring"]))
        with pytest.raises(ferroflake.InvalidInputError) as info:
            ring.decode(case["input"], case["format"], case["bits"])
        check_kind(info.value, case["error"])


def test_every_vector_key_error_raises_its_kind(vectors: dict[str, Any]) -> None:
    for case in vectors["mask"]["key_errors"]:
        with pytest.raises(ferroflake.InvalidInputError) as info:
            MaskKeyring(case["input"])
        check_kind(info.value, case["error"])
        for secret in SECRETS:
            assert secret not in str(info.value)


def test_every_vector_key_spelling_is_the_same_key(vectors: dict[str, Any]) -> None:
    reference = MaskKeyring(KEY1)
    for spelling in vectors["mask"]["key_spellings"]:
        ring = MaskKeyring(spelling)
        assert ring.current_version == 1
        assert ring.encode(12345) == reference.encode(12345), spelling


def test_errors_raise_their_classes() -> None:
    ring = MaskKeyring(KEY1)
    with pytest.raises(UnknownMaskKeyVersionError) as unknown:
        ring.decode(MaskKeyring(KEY2).encode(7))
    assert isinstance(unknown.value, LookupError) and isinstance(unknown.value, ValueError)
    with pytest.raises(MaskKeyError) as dup:
        MaskKeyring(f"{KEY1}\n1:{SECRETS[1]}")
    check_kind(dup.value, "DUPLICATE_MASK_KEY_VERSION")
    with pytest.raises(MaskKeyError) as high:
        MaskKeyring("32:" + SECRETS[0])
    check_kind(high.value, "MASK_KEY_VERSION_OUT_OF_RANGE")
    with pytest.raises(MaskError) as wide:
        ring.mask(1, 65)
    check_kind(wide.value, "MASK_WIDTH_OUT_OF_RANGE")
    with pytest.raises(ParseError):
        MaskKeyring("1:" + SECRETS[0] + "\nnot a key")


@pytest.mark.parametrize("bits", [-1, 0, 7, 65, 2**32, 2**64])
def test_a_width_outside_8_to_64_is_a_mask_error(bits: int) -> None:
    ring = MaskKeyring(KEY1)
    for call in (
        lambda: ring.mask(1, bits),
        lambda: ring.unmask(1, bits),
        lambda: ring.encode(1, "base62", bits),
        lambda: ring.decode("1" + "0" * 11, "base62", bits),
        lambda: ring.text_len("dec", bits),
    ):
        with pytest.raises(MaskError) as info:
            call()
        check_kind(info.value, "MASK_WIDTH_OUT_OF_RANGE")


@pytest.mark.parametrize("value", [-1, -(2**70), 2**53, 2**64, 2**100])
def test_a_value_outside_the_width_is_out_of_range(value: int) -> None:
    ring = MaskKeyring(KEY1)
    for call in (
        lambda: ring.mask(value, 53),
        lambda: ring.unmask(value, 53),
        lambda: ring.encode(value, "dec", 53),
    ):
        with pytest.raises(OutOfRangeError) as info:
            call()
        check_kind(info.value, "ID_OUT_OF_RANGE")
        assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("bad", [True, 1.0, "1", None, b"1"])
def test_a_value_that_is_not_an_int_is_a_type_error(bad: Any) -> None:
    ring = MaskKeyring(KEY1)
    for call in (
        lambda: ring.mask(bad),
        lambda: ring.unmask(bad),
        lambda: ring.encode(bad),
        lambda: ring.mask(1, bad),
    ):
        with pytest.raises(TypeError):
            call()
    if not isinstance(bad, str):
        with pytest.raises(TypeError):
            MaskKeyring(bad)


def test_an_unknown_format_is_a_value_error() -> None:
    ring = MaskKeyring(KEY1)
    with pytest.raises(ValueError, match="unknown format"):
        ring.encode(1, "hex")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown format"):
        ring.decode("1", "hex")  # type: ignore[arg-type]


def test_random_ids_round_trip_in_every_width_and_format() -> None:
    ring = MaskKeyring(KEY1)
    rng = random.Random(13)
    for bits in WIDTHS:
        top = 2**bits - 1
        for id_ in [0, 1, top - 1, top] + [rng.randint(0, top) for _ in range(300)]:
            masked = ring.mask(id_, bits)
            assert 0 <= masked <= top
            assert ring.unmask(masked, bits) == id_
            for fmt in FORMATS:
                assert ring.decode(ring.encode(id_, fmt, bits), fmt, bits) == id_


def test_the_mask_is_a_permutation_at_8_bits() -> None:
    ring = MaskKeyring(KEY1)
    assert sorted(ring.mask(i, 8) for i in range(256)) == list(range(256))


def test_a_wrong_key_does_not_round_trip() -> None:
    """Same version, another secret: the number unmasks to another ID, and the text says
    nothing that could catch it (both keys are version 1)."""
    right = MaskKeyring(KEY1)
    wrong = MaskKeyring("1:" + SECRETS[1])
    rng = random.Random(7)
    ids = [rng.randint(0, 2**63 - 1) for _ in range(200)]
    assert all(wrong.unmask(right.mask(i)) != i for i in ids)
    assert all(wrong.decode(right.encode(i)) != i for i in ids)


def test_a_wrong_version_does_not_round_trip() -> None:
    """The same secret under another version is another permutation; text names its
    version, so the wrong keyring refuses it outright."""
    v1 = MaskKeyring(KEY1)
    v2 = MaskKeyring("2:" + SECRETS[0])
    ids = list(range(1000, 1200))
    assert all(v2.unmask(v1.mask(i)) != i for i in ids)
    with pytest.raises(UnknownMaskKeyVersionError):
        v2.decode(v1.encode(1000))
    with pytest.raises(UnknownMaskKeyVersionError):
        v2.unmask(v1.mask(1000), version=1)
    for version in (-1, 32, 256, 2**64):
        with pytest.raises(UnknownMaskKeyVersionError):
            v1.unmask(1, version=version)


def test_a_rotated_keyring_masks_with_the_first_key_and_unmasks_with_all() -> None:
    old = MaskKeyring(KEY1)
    issued = [old.encode(i, "base32") for i in range(50)]
    ring = MaskKeyring(f"# the key that masks\n\n{KEY2}\r\n  {KEY1}  \n")
    assert (ring.current_version, ring.versions) == (2, (1, 2))
    assert [ring.decode(text, "base32") for text in issued] == list(range(50))
    assert ring.encode(5, "base32").startswith("2")
    assert ring.unmask(old.mask(5), version=1) == 5
    assert ring.unmask(ring.mask(5)) == 5


def test_repr_names_versions_never_the_secret() -> None:
    ring = MaskKeyring(f"{KEY2}\n{KEY1}")
    assert repr(ring) == "<ferroflake.MaskKeyring current_version=2 versions=(1, 2)>"
    for secret in SECRETS:
        assert secret not in repr(ring) and secret not in str(ring)


def test_a_keyring_cannot_be_pickled_or_changed() -> None:
    ring = MaskKeyring(KEY1)
    with pytest.raises(TypeError):
        pickle.dumps(ring)
    with pytest.raises(AttributeError):
        ring.current_version = 2  # type: ignore[misc]


def test_from_file_reads_a_key_file(tmp_path: Path) -> None:
    path = tmp_path / "mask.key"
    path.write_text(f"# rotated 2026-11-23\n{KEY2}\n{KEY1}\n", encoding="utf-8")
    path.chmod(0o600)
    for where in (path, str(path), os.fsencode(path)):  # as open() takes a path
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a private key file is read without a word
            ring = MaskKeyring.from_file(where)
        assert (ring.current_version, ring.versions) == (2, (1, 2))
        assert ring.encode(9) == MaskKeyring(KEY2).encode(9)


def test_from_file_warns_of_a_key_file_others_can_read(tmp_path: Path) -> None:
    path = tmp_path / "mask.key"
    path.write_text(f"{KEY1}\n", encoding="utf-8")
    path.chmod(0o644)
    with pytest.warns(UserWarning, match=r"can be read by other users \(mode 644\); `chmod 600` it"):
        ring = MaskKeyring.from_file(path)
    assert ring.versions == (1,)


def test_from_file_refuses_what_is_not_a_key_file_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.key"
    huge.write_text("#" * 70_000, encoding="utf-8")
    # A FIFO would block the call for ever, /dev/zero fill memory: both refused at once.
    for path, said in ((fifo, "not a regular file"), ("/dev/zero", "not a regular file"), (huge, "larger than")):
        with pytest.raises(OSError) as refused:
            MaskKeyring.from_file(path)
        assert refused.value.errno == errno.EINVAL and said in str(refused.value), refused.value


def test_key_text_is_read_as_from_a_file_bom_and_all() -> None:
    assert MaskKeyring("\ufeff" + KEY1).encode(3) == MaskKeyring(KEY1).encode(3)
    with pytest.raises(ParseError) as info:
        MaskKeyring(f"{KEY1}\n2 {SECRETS[1]}\n")
    check_kind(info.value, "PARSE_INVALID_CHARACTER")
    assert "the key text: line 2" in str(info.value)
    assert SECRETS[1] not in str(info.value)


def test_from_file_errors_name_the_file_and_line_never_the_secret(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as missing:
        MaskKeyring.from_file(tmp_path / "absent.key")
    assert missing.value.filename == str(tmp_path / "absent.key")
    bad = tmp_path / "bad.key"
    bad.write_text(f"{KEY1}\n2 {SECRETS[1]}\n", encoding="utf-8")
    bad.chmod(0o600)
    with pytest.raises(ParseError) as info:
        MaskKeyring.from_file(bad)
    check_kind(info.value, "PARSE_INVALID_CHARACTER")
    assert str(bad) in str(info.value) and "line 2" in str(info.value)
    assert SECRETS[0] not in str(info.value) and SECRETS[1] not in str(info.value)
    accented = tmp_path / "accented.key"
    accented.write_text(f"# clé de test\n1:é{SECRETS[0][2:]}\n", encoding="utf-8")
    accented.chmod(0o600)
    with pytest.raises(ParseError, match="line 2"):
        MaskKeyring.from_file(accented)
    empty = tmp_path / "empty.key"
    empty.write_text("# no key yet\n", encoding="utf-8")
    empty.chmod(0o600)
    with pytest.raises(ParseError) as none:
        MaskKeyring.from_file(empty)
    check_kind(none.value, "PARSE_EMPTY")


def test_from_env_reads_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FERROFLAKE_MASK_KEY", KEY1)
    assert MaskKeyring.from_env().encode(3) == MaskKeyring(KEY1).encode(3)
    monkeypatch.setenv("ORDERS_MASK_KEY", f"{KEY2}\n{KEY1}")
    assert MaskKeyring.from_env("ORDERS_MASK_KEY").versions == (1, 2)


def test_from_env_without_the_variable_raises_mask_key_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("FERROFLAKE_MASK_KEY", raising=False)
    with pytest.raises(MaskKeyError) as info:
        MaskKeyring.from_env()
    assert (info.value.kind, info.value.code) == ("NO_MASK_KEY", 0)
    assert "FERROFLAKE_MASK_KEY" in str(info.value)
    monkeypatch.setenv("FERROFLAKE_MASK_KEY", "  ")
    with pytest.raises(ParseError) as blank:
        MaskKeyring.from_env()
    assert "FERROFLAKE_MASK_KEY" in str(blank.value)
    monkeypatch.setenv("FERROFLAKE_MASK_KEY", "1:" + SECRETS[1][:-2])
    with pytest.raises(ParseError) as short:
        MaskKeyring.from_env()
    assert SECRETS[1][:-2] not in str(short.value)


def test_one_keyring_serves_many_threads() -> None:
    ring = MaskKeyring(f"{KEY2}\n{KEY1}")
    expected = {i: ring.encode(i) for i in range(2000)}
    failures: list[str] = []

    def work(offset: int) -> None:
        for i in range(offset, 2000, 4):
            text = ring.encode(i)
            if text != expected[i] or ring.decode(text) != i or ring.unmask(ring.mask(i)) != i:
                failures.append(f"{i}: {text}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
