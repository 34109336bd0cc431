"""One client process of cli/tests/remote_processes.rs: COUNT IDs from a segment key, or
under a leased node id, taken through ADDRESS (a ferroflake service's), one per line on
stdout, flushed one by one, so a reader that stops reading stops the issuing. Exits 1 with
the error at the first one, 0 after the last ID once the segment is given back or the
lease released.

    python remote_client.py segment ADDRESS KEY COUNT
    python remote_client.py leased ADDRESS COUNT
"""

from __future__ import annotations

import sys

import ferroflake


def main(argv: list[str]) -> int:
    out = sys.stdout
    if len(argv) == 4 and argv[0] == "segment":
        _, address, name, count = argv
        with ferroflake.SegmentAllocator(address) as allocator:
            key = allocator.key(name)
            for _ in range(int(count)):
                out.write(f"{key.next_id()}\n")
                out.flush()
        return 0
    if len(argv) == 3 and argv[0] == "leased":
        _, address, count = argv
        with ferroflake.LeasedGenerator(ferroflake.Layout.twitter(), address) as generator:
            for _ in range(int(count)):
                out.write(f"{generator.next_id()}\n")
                out.flush()
        return 0
    print("usage: remote_client.py segment ADDRESS KEY COUNT | leased ADDRESS COUNT", file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except ferroflake.FerroflakeError as error:
        print(f"remote_client.py: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
