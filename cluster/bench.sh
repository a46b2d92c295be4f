# shellcheck shell=bash
# cluster/bench.sh - `./stack cluster bench` (docs/PERFORMANCE.md, the
# cluster section): the bench against a single-node stack beside the cluster
# and against the cluster. Sourced by cluster/cluster (uses its cl_*
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
  say "bench: the single-node stack on :$(cl_port single 1) (state $single)"
  env "${senv[@]}" "$ROOT/stack" up > "$out/single-up.log" 2>&1 || { tail "$out/single-up.log"; die "the single-node stack did not start"; }
  local spids; spids=$(env "${senv[@]}" "$ROOT/stack" status | awk '$1 == "service" {for (i = 6; i <= NF; i++) printf "%s ", $i}')
  say "bench: single node"
  env "${senv[@]}" "$bin/bench/idempay-bench" --target "http://127.0.0.1:$(cl_port single 1)" \
    --gateway "http://127.0.0.1:$(cl_port single 2)" --pids "$spids" --json "$out/single.json" "$@" > "$out/single.txt" 2>&1 || rc=1
  env "${senv[@]}" "$ROOT/stack" down > /dev/null 2>&1
  for mode in multi single; do
    [ "$(cl_db_mode)" = $mode ] || cluster_mode $mode > /dev/null
    cl_wait haproxy 30 cl_http_ok "http://127.0.0.1:$CL_B/healthz"
    sleep 3 # HAProxy sees every node up again
    say "bench: cluster, $mode-writer"
    env -u IDEMPAY_DB_SOCKET IDEMPAY_DB_HOST=127.0.0.1 IDEMPAY_DB_PORT="$(cl_port "db-$mode")" \
      "$bin/bench/idempay-bench" --target "http://127.0.0.1:$CL_B" --gateway "http://127.0.0.1:$IDEMPAY_MOCK_PORT" \
      --pids "$(cl_fcgi_pids)" --json "$out/cluster-$mode.json" "$@" > "$out/cluster-$mode.txt" 2>&1 || rc=1
  done
  [ "$(cl_db_mode)" = "$mode0" ] || cluster_mode "$mode0" > /dev/null
  python3 "$ROOT/cluster/bench_table.py" "$out" | tee "$out/table.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || { say "bench: the table could not be made"; rc=1; }
  say "bench: results in $out (exit $rc)"
  return $rc
}
