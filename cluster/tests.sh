# shellcheck shell=bash
# cluster/tests.sh - `./stack cluster race`, `doors` and `test` (= ./stack
# test --cluster; docs/CLUSTER.md "Tests"): the trap (tests/cluster/
# galera_race.c), the two doors (tests/cluster/test_cluster_doors.py), a
# short simulation with the nemesis. Sourced by cluster/cluster (uses its
# cl_* helpers and CL_* settings).

# --- the trap test (tests/cluster/galera_race.c, docs/CLUSTER.md) ---------------
cl_race_bin() {
  local bin=$CL/bin/galera_race src=$ROOT/tests/cluster/galera_race.c
  mkdir -p "$CL/bin"
  if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
    cc -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -o "$bin" "$src" $(mariadb_config --cflags --libs) -lpthread \
      || die "cannot build $src"
  fi
  echo "$bin"
}

# cluster race [ROUNDS]: check-then-act, FOR UPDATE and CAS, two clients per
# round, on two Galera nodes and on one. Passes when the CAS never charges
# twice anywhere, FOR UPDATE never on one node, and both naive styles do
# charge twice on two nodes (the trap is real).
cluster_race() {
  local rounds=${1:-100} bin two one rc=0
  bin=$(cl_race_bin)
  cl_galera_synced g1 && cl_galera_synced g2 || die "g1 and g2 must be Synced (./stack cluster up)"
  two=$("$bin" "$CL/g1/mysqld.sock" "$CL/g2/mysqld.sock" "$rounds" naive,for-update,cas) || die "galera_race failed"
  one=$("$bin" "$CL/g1/mysqld.sock" "$CL/g1/mysqld.sock" "$rounds" naive,for-update,cas) || die "galera_race failed"
  echo "$two"; echo "$one"
  twice() { awk -v m="$2" '$1 == m { for (i = 1; i <= NF; i++) if ($i == "twice") print $(i + 1) }' <<< "$1"; }
  [ "$(twice "$two" cas)" = 0 ] || { say "FAIL: the CAS charged twice on two Galera nodes"; rc=1; }
  [ "$(twice "$one" cas)" = 0 ] || { say "FAIL: the CAS charged twice on one node"; rc=1; }
  [ "$(twice "$one" for-update)" = 0 ] || { say "FAIL: FOR UPDATE charged twice on one node"; rc=1; }
  [ "$(twice "$two" naive)" -gt 0 ] || { say "FAIL: check-then-act never charged twice on two nodes: no race was made"; rc=1; }
  [ "$(twice "$two" for-update)" -gt 0 ] || { say "FAIL: FOR UPDATE never charged twice on two nodes: no race was made"; rc=1; }
  [ $rc = 0 ] && say "race: the trap is real (check-then-act and FOR UPDATE charge twice on two Galera nodes); the CAS never charges twice"
  return $rc
}

# cluster doors: tests/cluster/test_cluster_doors.py against the running
# cluster (both doors on every node and through HAProxy, the caller, a
# notification through the public front; docs/CLUSTER.md "The two doors").
cluster_doors() {
  local i m="" p="" n
  for i in 1 2 3; do m="$m${m:+,}$(cl_port node $i)"; p="$p${p:+,}$(cl_port public $i)"; done
  for n in g1 g2 g3; do cl_galera_synced $n && break; done
  IDEMPAY_CLUSTER_MERCHANT_DOORS=$m IDEMPAY_CLUSTER_PUBLIC_DOORS=$p IDEMPAY_DB_SOCKET=$CL/$n/mysqld.sock \
    IDEMPAY_BIN_DIR=$(cl_bin_dir) python3 "$ROOT/tests/cluster/test_cluster_doors.py" "$@"
}

# cluster test: what `./stack test --cluster` runs (docs/CLUSTER.md).
cluster_test() {
  local rc=0
  cluster_up || return 1
  say "test: the two doors (tests/cluster/test_cluster_doors.py)"
  cluster_doors || rc=1
  say "test: the trap (tests/cluster/galera_race.c)"
  cluster_race 100 || rc=1
  say "test: a short simulation with the nemesis, then every node compared"
  IDEMPAY_CLUSTER_NEMESIS_EVERY=${IDEMPAY_CLUSTER_NEMESIS_EVERY:-8} cluster_sim --orders 3000 --duration 60 || rc=1
  if [ $rc = 0 ]; then say "test --cluster: all passed"; else say "test --cluster: FAILED"; fi
  return $rc
}
