#!/usr/bin/env python3
"""bench_table - the table `./stack cluster bench` prints (docs/PERFORMANCE.md,
the cluster section): from DIR/single.json, cluster-multi.json and
cluster-single.json (bench/idempay-bench --json), each workload's req/s, p50
and p99 on the single node and on the cluster (multi- and single-writer),
with the cluster's req/s as a ratio of the single node's. Usage:
bench_table.py DIR; exit 1 (a Python error) when a file is missing."""
import json, sys
d = sys.argv[1]
runs = [("single node", "single"), ("cluster multi-writer", "cluster-multi"), ("cluster single-writer", "cluster-single")]
res = {}
for _, f in runs:
    with open(f"{d}/{f}.json") as fh:
        j = json.load(fh)
    res[f] = {w["workload"]: w for w in j["workloads"]}
    # a measure is a number, or (the bench's --repeat rounds) {"median": ..., "runs": [...]}
    for w in res[f].values():
        for k in ("rps", "p50_ms", "p99_ms"):
            if isinstance(w.get(k), dict):
                w[k] = w[k]["median"]
    res[f]["_c"] = j.get("concurrency")
    res[f]["_d"] = j.get("duration_s")
titles = {"ping": "GET /api/ping", "pay_fresh": "POST /api/pay (fresh)", "pay_repeat": "POST /api/pay (repeat)",
          "callback": "POST callback (verified)", "token": "GET /api/pay/token", "rawdb": "raw DB: INSERT+UPDATE"}
print(f"idempay cluster bench: concurrency {res['single']['_c']}, {res['single']['_d']:.0f} s per phase; "
      "ratio = the cluster's req/s / the single node's")
print()
print(f"{'workload':26} {'single node':>22} | {'cluster multi-writer':>29} | {'cluster single-writer':>29}")
print(f"{'':26} {'req/s':>8} {'p50':>6} {'p99':>6} | {'req/s':>8} {'p50':>6} {'p99':>6} {'ratio':>6} | {'req/s':>8} {'p50':>6} {'p99':>6} {'ratio':>6}")
for w in ["ping", "pay_fresh", "pay_repeat", "callback", "token", "rawdb"]:
    s = res["single"][w]
    line = f"{titles[w]:26} {s['rps']:8.0f} {s['p50_ms']:6.2f} {s['p99_ms']:6.2f}"
    for f in ("cluster-multi", "cluster-single"):
        c = res[f][w]
        r = c["rps"] / s["rps"] if s["rps"] else 0
        line += f" | {c['rps']:8.0f} {c['p50_ms']:6.2f} {c['p99_ms']:6.2f} {r:6.2f}"
    errs = [res[f][w]["errors"] for _, f in runs]
    if any(errs):
        line += f"   errors {errs}"
    print(line)
print()
print("p50/p99 in ms (paced at half the closed-loop rate, from intended send time).")
print("raw DB: the same two statements from a plain C client: the single node's MariaDB, and the")
print("Galera cluster through its HAProxy front (multi: any node; single: g1).")
