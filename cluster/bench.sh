# cluster/bench.sh - `./stack cluster bench` (docs/PERFORMANCE.md, the
# cluster section): the bench against a single-node stack beside the cluster
# and against the cluster. Sourced by cluster/cluster.sh (uses its cl_*
# helpers and CL_* settings, and stack's FLAVOR).

# --- bench (docs/PERFORMANCE.md, the cluster section) ----------------------------
cl_fcgi_pids() { local i p; for i in 1 2 3; do p=$(cl_pid "s$i") && pgrep -P "$p" -f idempay-fcgi; done | tr '\n' ' '; }

# The settings ./stack derives from its state dir or its ports (the public
# door, nginx's, the TLS material, the caller's secret file ...): `env -u`
# options for each, so that the single-node stack `cluster bench` starts
# beside the cluster derives them from its own (not the cluster's public
# front on HTTP + 4, nor the cluster's caller secret).
cl_single_unset() {
  local v
  for v in $(grep -E '^\s*export (IDEMPAY_[A-Z0-9_]+)=\$\{[A-Z0-9_]+:-[^}]*(\$STATE|\$TLS|\$RUN|IDEMPAY_[A-Z_]*PORT)' "$ROOT/stack" \
             | sed -E 's/^\s*export //; s/=.*//') IDEMPAY_WX_APIV3_KEY_FILE IDEMPAY_DB_HOST; do
    printf -- '-u %s ' "$v"
  done
}

# cluster bench [ARGS]: bench/idempay-bench (ARGS passed on) three times in
# one run: against a single-node stack started beside the cluster (ports
# I+71..74, the same build), against the cluster through HAProxy with the
# service nodes on the multi-writer Galera front, and on the single-writer
# front; then one table of ratios to the single node.
cluster_bench() {
  local out bin single=$CL/single mode0 rc=0
  cluster_up > /dev/null || exit 2
  bin=$(cl_bin_dir); mode0=$(cl_db_mode)
  out=$CL/bench/$(date -u +%Y%m%dT%H%M%SZ); mkdir -p "$out" "$single"; ln -sfn "$out" "$CL/bench/latest"
  ln -sfn "$bin" "$single/$(basename "$bin")"
  local drop=(); read -r -a drop <<< "$(cl_single_unset)"
  local senv=("${drop[@]}" IDEMPAY_STATE_DIR="$single" IDEMPAY_HTTP_PORT="$(cl_port single 1)" IDEMPAY_MOCK_PORT="$(cl_port single 2)"
              IDEMPAY_DB_PORT="$(cl_port single 3)" IDEMPAY_REDIS_PORT="$(cl_port single 4)"
              IDEMPAY_DB_SOCKET="$single/run/mysqld.sock" IDEMPAY_FLAVOR="$FLAVOR")
  cl_say "bench: the single-node stack on :$(cl_port single 1) (state $single)"
  env "${senv[@]}" "$ROOT/stack" up > "$out/single-up.log" 2>&1 || { tail "$out/single-up.log"; cl_die "the single-node stack did not start"; }
  local spids; spids=$(env "${senv[@]}" "$ROOT/stack" status | awk '$1 == "service" {for (i = 6; i <= NF; i++) printf "%s ", $i}')
  cl_say "bench: single node"
  env "${senv[@]}" "$bin/bench/idempay-bench" --target "http://127.0.0.1:$(cl_port single 1)" \
    --gateway "http://127.0.0.1:$(cl_port single 2)" --pids "$spids" --json "$out/single.json" "$@" > "$out/single.txt" 2>&1 || rc=1
  env "${senv[@]}" "$ROOT/stack" down > /dev/null 2>&1
  for mode in multi single; do
    [ "$(cl_db_mode)" = $mode ] || cluster_mode $mode > /dev/null
    cl_wait haproxy 30 cl_http_ok "http://127.0.0.1:$CL_B/healthz"
    sleep 3 # HAProxy sees every node up again
    cl_say "bench: cluster, $mode-writer"
    env -u IDEMPAY_DB_SOCKET IDEMPAY_DB_HOST=127.0.0.1 IDEMPAY_DB_PORT="$(cl_port "db-$mode")" \
      "$bin/bench/idempay-bench" --target "http://127.0.0.1:$CL_B" --gateway "http://127.0.0.1:$IDEMPAY_MOCK_PORT" \
      --pids "$(cl_fcgi_pids)" --json "$out/cluster-$mode.json" "$@" > "$out/cluster-$mode.txt" 2>&1 || rc=1
  done
  [ "$(cl_db_mode)" = "$mode0" ] || cluster_mode "$mode0" > /dev/null
  python3 - "$out" <<'PY' | tee "$out/table.txt"
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
PY
  [ "${PIPESTATUS[0]}" = 0 ] || { cl_say "bench: the table could not be made"; rc=1; }
  cl_say "bench: results in $out (exit $rc)"
  return $rc
}
