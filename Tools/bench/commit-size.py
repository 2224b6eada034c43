"""What SQLite alone spends a notification on a ledger's writes, by group-commit size.

usage: python3 commit-size.py LEDGER MODE EVENTS BATCH [SCRATCH]
  LEDGER   a ledger a webhook run filled (read only; its schema and rows are replayed)
  MODE     all: every row of an event in its commit (what an append does now)
           split: only the event, its decoded text and its notificationUUID key per commit;
           the other keys, the arrival, the facts and the group index rows in batches of ~1,500 events
  EVENTS   how many events to replay; BATCH events per commit
  SCRATCH  the file to write (default /tmp/commit-size.sqlite), 16 KiB pages, WAL, synchronous FULL

Prints µs an event. Used for the 2026-12-04 section of Tools/bench/README.md (issue 21: why the
webhook at 64 connections stays under 0.8x the file ingest).
"""
import sqlite3, sys, time, os
src = sqlite3.connect(f'file:{sys.argv[1]}?mode=ro', uri=True)
schema = [r[0] for r in src.execute("select sql from sqlite_master where sql is not null and name not like 'sqlite_%' and type in ('table','index')")]
mode = sys.argv[2]; N = int(sys.argv[3]); B = int(sys.argv[4])
ev = src.execute("select * from events where position <= ? order by position", (N,)).fetchall()
dec = {r[0]: r for r in src.execute("select * from event_decoded where position <= ?", (N,))}
keys = {}
for r in src.execute("select * from event_keys where position <= ?", (N,)): keys.setdefault(r[2], []).append(r)
arr = {r[0]: r for r in src.execute("select * from arrivals where id <= ?", (N,))}
facts = {r[0]: r for r in src.execute("select * from event_facts where position <= ?", (N,))}
gi = src.execute("select * from group_index").fetchall()
gi_per = max(1, len(gi) // N)
path = sys.argv[5] if len(sys.argv) > 5 else '/tmp/commit-size.sqlite'
for f in (path, path + '-wal', path + '-shm'):
    if os.path.exists(f): os.remove(f)
db = sqlite3.connect(path, isolation_level=None)
db.execute("pragma page_size=16384"); db.execute("pragma journal_mode=WAL"); db.execute("pragma synchronous=FULL"); db.execute("pragma cache_size=-65536")
for s in schema: db.execute(s)
def ins(table, row): db.execute(f"insert into {table} values ({','.join('?' * len(row))})", row)
deferred = []
t0 = time.time(); commits = 0
gi_i = 0
for start in range(0, len(ev), B):
    db.execute("begin immediate")
    for e in ev[start:start + B]:
        p = e[0]
        ins('events', e); ins('event_decoded', dec[p])
        ks = keys.get(p, [])
        if mode == 'all':
            for k in ks: ins('event_keys', k)
            ins('arrivals', arr[p]); ins('event_facts', facts[p])
            for g in gi[gi_i:gi_i + gi_per]: db.execute("insert or ignore into group_index values (?,?,?)", g)
        else:
            for k in ks:
                if k[1] == 'notificationUUID': ins('event_keys', k)
                else: deferred.append(('event_keys', k))
            deferred.append(('arrivals', arr[p])); deferred.append(('event_facts', facts[p]))
            for g in gi[gi_i:gi_i + gi_per]: deferred.append(('gi', g))
        gi_i += gi_per
    db.execute("commit"); commits += 1
    if mode != 'all' and len(deferred) > 6000:
        db.execute("begin immediate")
        for t, r in deferred:
            if t == 'gi': db.execute("insert or ignore into group_index values (?,?,?)", r)
            else: ins(t, r)
        db.execute("commit"); commits += 1; deferred = []
el = time.time() - t0
print(mode, "batch", B, "events", len(ev), "commits", commits, f"{el:.2f} s", f"{el / len(ev) * 1e6:.0f} us/event", f"{len(ev) / el:.0f}/s")
