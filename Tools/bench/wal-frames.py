"""Which B-trees a ledger's commits write, counted from its write-ahead log.

usage: python3 wal-frames.py LEDGER WAL [SEGMENTS]
  LEDGER    the ledger file (read only; its pages are named through SQLite's dbstat table)
  WAL       a copy of LEDGER-wal taken while a reader held a snapshot, so no checkpoint reset it
            (every frame since the snapshot is still there)
  SEGMENTS  split the commits into this many equal parts and report each (default 3)

Prints, for each part, the WAL frames a commit wrote per table or index, most first. A frame is
one page (16 KiB in a ledger) written in full, whatever changed in it. This is a probe, not a bench
step. It was used for the 2026-12-05 section of Tools/bench/README.md (issue 21: which indexes
cost the webhook's small group commits). To take the WAL copy: start `seatledger serve` on a
fresh ledger, open the ledger with any SQLite client and keep `BEGIN; SELECT count(*) FROM
events;` open, post the stream (`seatledger-bench post`), copy the -wal file, then end the read.
"""
import collections
import sqlite3
import struct
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    ledger, wal_path = sys.argv[1], sys.argv[2]
    segments = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    connection = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
    names = {page: name for name, page in connection.execute("SELECT name, pageno FROM dbstat")}
    data = open(wal_path, "rb").read()
    if len(data) < 32:
        sys.exit(f"{wal_path}: not a WAL file (shorter than its 32-byte header)")
    magic, _, page_size, _, salt1, salt2, _, _ = struct.unpack(">IIIIIIII", data[:32])
    if magic not in (0x377F0682, 0x377F0683):
        sys.exit(f"{wal_path}: not a WAL file (magic {magic:#x})")
    frames = []
    offset = 32
    while offset + 24 + page_size <= len(data):
        page, commit_size, frame_salt1, frame_salt2 = struct.unpack(">IIII", data[offset:offset + 16])
        if (frame_salt1, frame_salt2) != (salt1, salt2):
            break  # frames of an earlier generation of the log
        frames.append((page, commit_size != 0))
        offset += 24 + page_size
    commits = [index for index, (_, ends) in enumerate(frames) if ends]
    print(f"page size {page_size}, {len(frames)} frames in {len(commits)} commits")
    if not commits:
        return
    bounds = [0] + [commits[max(0, len(commits) * (part + 1) // segments - 1)] + 1 for part in range(segments)]
    for part in range(segments):
        chunk = frames[bounds[part]:bounds[part + 1]]
        count = sum(1 for _, ends in chunk if ends)
        if count == 0:
            continue
        by_name = collections.Counter(names.get(page, "?") for page, _ in chunk)
        listed = ", ".join(f"{name} {frames_of / count:.1f}" for name, frames_of in by_name.most_common(14))
        print(f"part {part + 1}: {len(chunk) / count:.1f} frames a commit ({count} commits): {listed}")


if __name__ == "__main__":
    main()
