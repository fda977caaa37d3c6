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
