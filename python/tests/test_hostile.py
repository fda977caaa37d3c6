"""The binding under odd caller arguments: no value may reach libweights in a
different form than the caller wrote it (ctypes stores an int modulo 2^bits
without a word). Needs no server: wt_client_open only checks and copies."""

import pytest

import weightd
from weightd import _lib

EP = "tcp://127.0.0.1:1"  # never dialled: these clients are not used


@pytest.mark.parametrize("opt,value", [
    ("window", 2**32 + 8),               # would become window 8
    ("connect_timeout_ms", 2**32 + 5),   # would become 5 ms
    ("max_retries", -1),                 # would become 4294967295
    ("request_timeout_ms", -30000),
    ("max_message_bytes", 2**64),        # would become 0
    ("stream", 2**32 + 1),               # would become 1
    ("window", True),
    ("window", 8.0),
    ("window", "8"),
])
def test_client_option_out_of_range(opt, value):
    with pytest.raises(weightd.Error) as e:
        weightd.Client(EP, **{opt: value})
    assert e.value.code == _lib.WT_EINVAL
    assert opt in e.value.message and repr(value) in e.value.message


def test_client_option_in_range():
    c = weightd.Client(EP, window=16, connect_timeout_ms=2**32 - 1, max_message_bytes=2**64 - 1,
                       stream=True, cut_through=0)
    c.close()


@pytest.mark.parametrize("call", [
    lambda c: c.manifest("llama\0x"),                 # would ask for model "llama"
    lambda c: c.manifest("llama", exclude=["a\0b"]),  # would exclude "a"
    lambda c: c.unregister("m\0"),
    lambda c: c.register("m", "file:///models/m\0/../other"),
    lambda c: c.manifest(42),                          # was an AttributeError
    lambda c: c.manifest("\udcff"),                    # a lone surrogate: no UTF-8
])
def test_string_arguments_checked(call):
    """Strings reach libweights as C strings: a NUL would cut them short (a
    different model or path than the caller named), a non-str failed deep
    inside; both are WT_EINVAL naming the argument, before any request."""
    c = weightd.Client(EP, retry_budget_ms=1, connect_timeout_ms=100)
    try:
        with pytest.raises(weightd.Error) as e:
            call(c)
        assert e.value.code == _lib.WT_EINVAL, e.value
    finally:
        c.close()


def test_bytes_arguments_taken_as_they_are():
    """bytes are passed as they are (no AttributeError on .encode()): this one
    reaches the network and fails there, with nobody listening."""
    c = weightd.Client(EP, retry_budget_ms=1, connect_timeout_ms=100)
    try:
        with pytest.raises(weightd.Error) as e:
            c.manifest(b"llama")
        assert e.value.name == "WT_EUNAVAIL", e.value
    finally:
        c.close()
