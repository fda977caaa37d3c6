#!/usr/bin/env python3
"""shard_oracle_batch.py — shard_oracle.py's check for many layouts in one process: one case a
line on stdin, `CTL MODEL TP EP QUANT [up_gate]` (whitespace-separated), so numpy and the
oracle modules are imported once rather than once a case (shard_python.sh runs ~490). A case
that cannot run (weightctl failing, a source it cannot read) counts as a failure and the
others still run. Exit 1 when any case failed."""
import sys, traceback

from shard_oracle import check


def main():
    fail = 0
    for line in sys.stdin:
        a = line.split()
        if not a:
            continue
        try:
            bad = check(a[0], a[1], int(a[2]), int(a[3]), a[4], a[5:6] == ["up_gate"])
        except Exception:  # the case is a failure; say which and why, go on
            print("FAIL:", " ".join(a[1:]))
            traceback.print_exc(limit=3)
            bad = 1
        fail += bad != 0
    print(f"shard_oracle_batch: {fail} of the cases failed" if fail else "shard_oracle_batch: ok")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
