# cluster/cluster.sh - `./stack cluster ...` (contract section 7, docs/CLUSTER.md):
# the same service on one machine as a cluster, on loopback, from Debian
# packages: a 3-node MariaDB Galera cluster, 3 service nodes (each a lighttpd
# with its FastCGI processes, both doors), HAProxy in front of them on
# IDEMPAY_HTTP_PORT (merchant door) and IDEMPAY_HTTP_PORT + 4 (public door),
# a second HAProxy in front of the Galera nodes, Redis primary + replica + 3
# Sentinels, and the mock gateway with its ledger on a separate single MariaDB.
#
# Sourced by ./stack (it uses stack's install_packages, build, migrate,
# ensure_caller, start_mariadb, wait_for, say, die ...); sources
# cluster/nemesis.sh, cluster/bench.sh and cluster/tests.sh. Everything lives
# under $IDEMPAY_STATE_DIR/cluster; every process it starts has a pid file there,
# and `cluster down` stops exactly those.
#
# Ports, all on 127.0.0.1. The three the outside uses are the usual ones:
#   IDEMPAY_HTTP_PORT    HAProxy: the service's merchant door (the API,
#                        /healthz; signed callers), health-checked on /healthz
#   IDEMPAY_HTTP_PORT + 4  HAProxy: the service's public door (the gateway's
#                        notifications only; IDEMPAY_CLUSTER_PUBLIC_PORT, as
#                        on one node, exported as IDEMPAY_PUBLIC_PORT): the
#                        service's notify_url
#   IDEMPAY_MOCK_PORT    the mock gateway
# The cluster's own, relative to I = IDEMPAY_CLUSTER_PORT_BASE (default
# IDEMPAY_HTTP_PORT + 1000: 61080 for a 60080 service, above Linux's
# ephemeral range 32768-60999, so no outgoing connection can sit on the
# port of a node that the nemesis has killed and is restarting):
#   I+11..13   service nodes s1..s3, merchant door
#   I+15..17   service nodes s1..s3, public door (a node's merchant port + 4)
#   I+20       ledger MariaDB (the mock's ground truth; not replicated)
#   I+21..23   Galera nodes g1..g3 (SQL)
#   I+30..38   Galera g1..g3 replication: gcomm, IST, SST (3 each)
#   I+40       HAProxy: Galera, multi-writer (every synced node)
#   I+41       HAProxy: Galera, single-writer (g1; g2, g3 as backups)
#   I+50, I+51 Redis r1, r2 (r1 starts as the primary)
#   I+55..57   Redis Sentinels
#   I+71..80   `cluster bench` only: the single-node stack it compares with
#              (HTTP, mock, DB, Redis at I+71..74; its public door, nginx
#              front and mock HTTPS follow from them as for any ./stack)

CL=$STATE/cluster
CL_RUN=$CL/run
CL_LOG=$CL/log
CL_B=$IDEMPAY_HTTP_PORT
CL_I=${IDEMPAY_CLUSTER_PORT_BASE:-$((CL_B + 1000))}
# The public door's front: HTTP + 4 as on one node (./stack's
# IDEMPAY_PUBLIC_PORT default), derived here from the cluster's own HTTP port
# (not taken from a single-node stack's recorded IDEMPAY_PUBLIC_PORT), and
# exported so the simulator and the bench send their notifications there.
CL_PUB=${IDEMPAY_CLUSTER_PUBLIC_PORT:-$((CL_B + 4))}
export IDEMPAY_PUBLIC_PORT=$CL_PUB
# The cluster's development caller of the merchant door (cl_caller): its
# secret in the cluster's state dir, where the simulator and the bench read
# it (as ./stack's in $STATE/caller.secret).
export IDEMPAY_CALLER_SECRET_FILE=$STATE/cluster/caller.secret
CL_MASTER=${IDEMPAY_REDIS_MASTER:-idempay}
CL_PACKAGES=(galera-4 rsync mariadb-backup haproxy redis-sentinel socat iproute2)
# Galera keeps memory small on a shared machine: 3 nodes x this pool.
CL_GALERA_POOL=${IDEMPAY_CLUSTER_BUFFER_POOL:-96M}
CL_GCACHE=${IDEMPAY_CLUSTER_GCACHE:-64M}
# Service nodes: FastCGI processes each (threads each: IDEMPAY_THREADS).
CL_PROCS=${IDEMPAY_CLUSTER_SERVICE_PROCS:-1}

cl_port() { # cl_port KIND [N]
  case $1 in
    node) echo $((CL_I + 10 + $2)) ;;
    public) echo $((CL_I + 14 + $2)) ;;
    ledger) echo $((CL_I + 20)) ;;
    galera) echo $((CL_I + 20 + $2)) ;;
    gcomm) echo $((CL_I + 27 + 3 * $2)) ;;
    db-multi) echo $((CL_I + 40)) ;;
    db-single) echo $((CL_I + 41)) ;;
    redis) echo $((CL_I + 49 + $2)) ;;
    sentinel) echo $((CL_I + 54 + $2)) ;;
    single) echo $((CL_I + 70 + $2)) ;;
  esac
}

# the nemesis, the bench and the tests live in files of their own
source "$ROOT/cluster/nemesis.sh"
source "$ROOT/cluster/bench.sh"
source "$ROOT/cluster/tests.sh"

cl_say() { printf 'cluster: %s\n' "$*"; }
cl_die() { printf 'cluster: %s\n' "$*" >&2; exit 2; }

# --- pid files --------------------------------------------------------------
cl_pidfile() { # NAME -> its pid file
  case $1 in
    s[1-3]) echo "$CL/$1/run/lighttpd.pid" ;;
    mock) echo "$CL/mock/run/lighttpd.pid" ;;
    g[1-3]) echo "$CL/$1/mariadbd.pid" ;;
    ledger) echo "$CL/ledger/run/mariadb.pid" ;;
    *) echo "$CL_RUN/$1.pid" ;;
  esac
}
cl_pid() { local f; f=$(cl_pidfile "$1"); [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && cat "$f"; }
cl_running() { [ -n "$(cl_pid "$1")" ]; }

# cl_stop NAME [SIGNAL]: the recorded pid (TERM, wait up to 30 s for a
# database, 5 s for the rest, then KILL), or KILL at once with SIGNAL=9.
# lighttpd's FastCGI children go with it.
cl_stop() {
  local name=$1 sig=${2:-TERM} pid kids tenths=50
  pid=$(cl_pid "$name") || true
  [ -n "$pid" ] || { rm -f "$(cl_pidfile "$name")"; return 0; }
  case $name in g[1-3]|ledger) tenths=300 ;; esac
  kids=$(pgrep -P "$pid" 2>/dev/null | tr '\n' ' ')
  kill -s "$sig" "$pid" 2>/dev/null
  for _ in $(seq 1 "$tenths"); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null
  # lighttpd's FastCGI children (and a mariadbd's SST helpers) die with it
  [ -n "$kids" ] && kill -9 $kids 2>/dev/null
  rm -f "$(cl_pidfile "$name")"
  return 0
}

cl_wait() { # cl_wait WHAT SECONDS CMD...: poll CMD, fail with a message
  local what=$1 secs=$2; shift 2
  local end=$((SECONDS + secs))
  until "$@" > /dev/null 2>&1; do
    [ $SECONDS -ge $end ] && { cl_say "$what not ready within ${secs}s" >&2; return 1; }
    sleep 0.3
  done
}

# --- Galera -----------------------------------------------------------------
cl_sql() { # cl_sql NODE ARGS...: root over the node's socket (g1..g3, ledger)
  local sock=$CL/$1/mysqld.sock; shift
  mariadb --no-defaults -uroot --socket="$sock" --connect-timeout=3 "$@"
}

cl_galera_cnf() { # writes $CL/gN/my.cnf
  local i=$1 d=$CL/g$1 p addr=""
  p=$(cl_port gcomm "$i")
  for n in 1 2 3; do addr="$addr${addr:+,}127.0.0.1:$(cl_port gcomm $n)"; done
  cat > "$d/my.cnf" <<EOF
# written by ./stack cluster (cluster/cluster.sh); regenerated at each start
[mariadbd]
datadir=$d/data
socket=$d/mysqld.sock
port=$(cl_port galera "$i")
bind-address=127.0.0.1
pid-file=$d/mariadbd.pid
log-error=$CL_LOG/g$i.log
user=root
skip-name-resolve
max-connections=600
character-set-server=utf8mb4
collation-server=utf8mb4_general_ci
transaction-isolation=READ-COMMITTED
performance-schema=OFF
# Galera's requirements and durable commits
binlog-format=ROW
default-storage-engine=InnoDB
innodb-autoinc-lock-mode=2
innodb-flush-log-at-trx-commit=1
innodb-buffer-pool-size=$CL_GALERA_POOL
innodb-log-file-size=48M
wsrep-on=ON
wsrep-provider=/usr/lib/galera/libgalera_smm.so
wsrep-cluster-name=idempay
wsrep-cluster-address=gcomm://$addr
wsrep-node-name=g$i
wsrep-node-address=127.0.0.1:$p
wsrep-sst-receive-address=127.0.0.1:$((p + 2))
wsrep-sst-method=mariabackup
# the donor streams a hot backup (mariabackup over socat) and keeps serving;
# it logs in as root over its socket (unix_socket authentication)
wsrep-sst-auth=root:
wsrep-slave-threads=2
# a certification failure of an autocommit statement is retried once by
# the server before the client sees 1213 (the default; said here on purpose)
wsrep-retry-autocommit=1
# loopback: a killed node is noticed within ~2 s, not the 5-15 s defaults
wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$p;ist.recv_addr=127.0.0.1:$((p + 1));gcache.size=$CL_GCACHE;evs.keepalive_period=PT0.5S;evs.suspect_timeout=PT2S;evs.inactive_timeout=PT4S;evs.install_timeout=PT4S;evs.inactive_check_period=PT0.5S"
EOF
}

cl_galera_state() { # NODE -> wsrep_local_state_comment (Synced, Donor/Desynced, Joining ...)
  cl_sql "$1" -N -e "SHOW STATUS LIKE 'wsrep_local_state_comment'" 2>/dev/null | awk '{print $2}'
}
cl_galera_synced() { [ "$(cl_galera_state "$1")" = Synced ]; }
cl_galera_any_synced() { local n; for n in g1 g2 g3; do cl_running $n && cl_galera_synced $n && return 0; done; return 1; }

# cl_galera_recover N: the uuid:seqno gN's InnoDB last committed, after a
# crash left grastate.dat at seqno -1 (what galera_recovery does for the
# packaged service): with it the node rejoins by IST, without it by SST.
cl_galera_recover() {
  local i=$1 f=$CL_LOG/g$1.recover.log
  rm -f "$f"
  mariadbd --defaults-file="$CL/g$i/my.cnf" --wsrep-recover --log-error="$f" > /dev/null 2>&1
  sed -n 's/.*Recovered position: *\([0-9a-f-]*:-\{0,1\}[0-9]*\).*/\1/p' "$f" | tail -n 1
}

# cl_galera_start N [bootstrap]: start gN (a joiner unless bootstrap) and
# wait until it is Synced (IST or SST from a donor on joining).
cl_galera_start() {
  local i=$1 mode=${2:-join} d=$CL/g$1 extra=() pos
  cl_running "g$i" && return 0
  mkdir -p "$d/data"
  cl_galera_cnf "$i"
  [ "$mode" = bootstrap ] && extra=(--wsrep-new-cluster)
  if [ -d "$d/data/mysql" ] && grep -q '^seqno: *-1' "$d/data/grastate.dat" 2>/dev/null; then
    pos=$(cl_galera_recover "$i")
    [ -n "$pos" ] && extra+=(--wsrep-start-position="$pos")
  fi
  rm -f "$d/mysqld.sock"
  setsid mariadbd --defaults-file="$d/my.cnf" "${extra[@]}" > /dev/null 2>> "$CL_LOG/g$i.log" < /dev/null &
  local pid=$! end=$((SECONDS + 300))
  until cl_galera_synced "g$i"; do
    if ! kill -0 "$pid" 2>/dev/null || [ $SECONDS -ge $end ]; then
      cl_say "g$i did not reach Synced; last lines of its log:" >&2
      tail -n 15 "$CL_LOG/g$i.log" >&2
      return 1
    fi
    sleep 0.3
  done
}

# The node to bootstrap from after every node stopped: the one marked
# safe_to_bootstrap, else the one with the highest recovered seqno.
cl_galera_pick_bootstrap() {
  local i best=1 bestseq=-2 seq f
  for i in 1 2 3; do
    f=$CL/g$i/data/grastate.dat
    [ -f "$f" ] && grep -q '^safe_to_bootstrap: 1' "$f" && { echo "$i"; return; }
  done
  for i in 1 2 3; do
    [ -d "$CL/g$i/data/mysql" ] || continue
    cl_galera_cnf "$i"
    seq=$(cl_galera_recover "$i"); seq=${seq##*:}
    [ -n "$seq" ] && [ "$seq" -gt "$bestseq" ] && { best=$i; bestseq=$seq; }
  done
  sed -i 's/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/' "$CL/g$best/data/grastate.dat" 2>/dev/null
  echo "$best"
}

cl_galera_up() {
  local i first
  mkdir -p "$CL/g1" "$CL/g2" "$CL/g3"
  if ! cl_galera_any_synced; then
    if [ ! -d "$CL/g1/data/mysql" ] && [ ! -d "$CL/g2/data/mysql" ] && [ ! -d "$CL/g3/data/mysql" ]; then
      cl_say "initialising Galera (g1 bootstraps, g2 and g3 join by SST)"
      mariadb-install-db --no-defaults --datadir="$CL/g1/data" --user=root \
        --auth-root-authentication-method=socket --skip-test-db --skip-name-resolve --force \
        > "$CL_LOG/g1-install.log" 2>&1 || { tail -n 20 "$CL_LOG/g1-install.log"; cl_die "mariadb-install-db failed"; }
      first=1
    else
      first=$(cl_galera_pick_bootstrap)
    fi
    cl_say "g$first bootstraps the Galera cluster"
    cl_galera_start "$first" bootstrap || cl_die "g$first did not start (log: $CL_LOG/g$first.log)"
  fi
  for i in 1 2 3; do
    cl_running "g$i" || { cl_say "g$i joins"; cl_galera_start "$i" || cl_die "g$i did not join (log: $CL_LOG/g$i.log)"; }
  done
}

cl_galera_migrate() { # migrations once, on a synced node (they replicate)
  local n
  for n in g1 g2 g3; do cl_galera_synced $n && break; done
  ( RUN=$CL_RUN IDEMPAY_DB_SOCKET=$CL/$n/mysqld.sock; migrate ) || cl_die "migrations on the Galera cluster failed"
  # HAProxy's health check user (it only connects) and the check script's
  cl_sql $n -e "CREATE USER IF NOT EXISTS 'haproxy_check'@'127.0.0.1';" || cl_die "cannot create haproxy_check"
}

# cl_caller: the development caller of the merchant door (docs/API.md,
# "Authentication"), made as ./stack makes its own (stack's ensure_caller:
# idempay-fcgi --add-caller, or --rekey-caller when the key changed, only
# under IDEMPAY_DEVELOPMENT=1) on a synced Galera node (the row replicates);
# its secret in IDEMPAY_CALLER_SECRET_FILE ($CL/caller.secret, mode 0600),
# which the simulator and the bench sign with.
cl_caller() {
  local n
  for n in g1 g2 g3; do cl_galera_synced $n && break; done
  # the nodes' settings: no client certificate for /secapi/ (the cluster's
  # mock has no HTTPS front, cl_mock_start), so none to check
  ( unset IDEMPAY_DB_HOST IDEMPAY_DB_PORT IDEMPAY_WX_CERT IDEMPAY_WX_CERT_KEY IDEMPAY_GATEWAY_CA \
      IDEMPAY_GATEWAY_SECAPI_URL
    IDEMPAY_DB_SOCKET=$CL/$n/mysqld.sock
    ensure_caller ) | sed 's/^stack: /cluster: /' || cl_die "cannot make the development caller"
}

# --- ledger: a separate single MariaDB for the mock gateway -----------------
cl_ledger_up() {
  mkdir -p "$CL/ledger/run" "$CL/ledger/log"
  ( RUN=$CL/ledger/run LOG=$CL/ledger/log DATA=$CL/ledger/data \
    IDEMPAY_DB_SOCKET=$CL/ledger/mysqld.sock IDEMPAY_DB_PORT=$(cl_port ledger)
    start_mariadb && migrate ) || cl_die "the ledger MariaDB did not start"
}

# --- Redis + Sentinel -------------------------------------------------------
# redis-cli: to a data node as the stack's Redis admin user (its default
# user is off: stack's redis_acl); to a Sentinel (no ACL) without credentials.
cl_redis_cli() {
  case " $(cl_port sentinel 1) $(cl_port sentinel 2) $(cl_port sentinel 3) " in
    *" $1 "*) redis-cli -h 127.0.0.1 -p "$1" "${@:2}" ;;
    *) redis_admin_cli "$1" "${@:2}" ;;
  esac
}
cl_redis_pong() { [ "$(redis_admin_cli "$1" ping 2>/dev/null)" = PONG ]; }
cl_redis_role() { cl_redis_cli "$1" role 2>/dev/null | head -n 1; }
cl_sentinel_master_port() { # the primary's port as the Sentinels see it
  local k
  for k in 1 2 3; do
    cl_redis_cli "$(cl_port sentinel $k)" sentinel get-master-addr-by-name "$CL_MASTER" 2>/dev/null | sed -n 2p | grep . && return 0
  done
  return 1
}

cl_redis_start() { # cl_redis_start N [PRIMARY_PORT]
  local i=$1 primary=${2:-} port d=$CL/redis
  cl_running "r$i" && return 0
  port=$(cl_port redis "$i")
  mkdir -p "$d/r$i"
  cat > "$d/r$i.conf" <<EOF
bind 127.0.0.1
port $port
protected-mode yes
daemonize yes
pidfile $CL_RUN/r$i.pid
logfile $CL_LOG/r$i.log
dir $d/r$i
appendonly yes
appendfsync everysec
save ""
maxclients 4096
# A token consumed on the primary must be on the replica before a failover
# can promote it (docs/CLUSTER.md): with no replica attached the primary
# refuses writes (503 for tokens, nothing charged) rather than accept writes
# a failover would forget.
min-replicas-to-write 1
min-replicas-max-lag 10
replica-announce-ip 127.0.0.1
# the same ACL as ./stack's Redis (stack's redis_acl); a replica syncs as the admin user
masteruser $IDEMPAY_REDIS_ADMIN_USER
masterauth $IDEMPAY_REDIS_ADMIN_PASSWORD
EOF
  redis_acl >> "$d/r$i.conf"
  chmod 600 "$d/r$i.conf"
  [ -n "$primary" ] && [ "$primary" != "$port" ] && echo "replicaof 127.0.0.1 $primary" >> "$d/r$i.conf"
  redis-server "$d/r$i.conf" > /dev/null 2>&1
  cl_wait "r$i" 30 cl_redis_pong "$port"
}

cl_sentinel_start() { # cl_sentinel_start K PRIMARY_PORT
  local k=$1 primary=$2 f=$CL/redis/sentinel$1.conf
  cl_running "sn$k" && return 0
  # Written anew at each start, pointing at the current primary; Sentinel
  # rewrites it while it runs (what it learns: replicas, the other Sentinels).
  cat > "$f" <<EOF
bind 127.0.0.1
port $(cl_port sentinel "$k")
daemonize yes
pidfile $CL_RUN/sn$k.pid
logfile $CL_LOG/sentinel$k.log
dir $CL/redis
sentinel announce-ip 127.0.0.1
sentinel monitor $CL_MASTER 127.0.0.1 $primary 2
sentinel down-after-milliseconds $CL_MASTER 1000
sentinel failover-timeout $CL_MASTER 6000
sentinel parallel-syncs $CL_MASTER 1
sentinel auth-user $CL_MASTER $IDEMPAY_REDIS_ADMIN_USER
sentinel auth-pass $CL_MASTER $IDEMPAY_REDIS_ADMIN_PASSWORD
EOF
  chmod 600 "$f"
  redis-sentinel "$f" > /dev/null 2>&1
  cl_wait "sentinel $k" 30 cl_redis_cli "$(cl_port sentinel "$k")" ping
}

# Which of r1, r2 is the primary: the Sentinels' word while they run, else
# the one recorded at the last `down`, else r1.
cl_redis_primary_index() {
  local p
  if p=$(cl_sentinel_master_port 2>/dev/null); then
    [ "$p" = "$(cl_port redis 2)" ] && echo 2 || echo 1
  else
    cat "$CL_RUN/redis-primary" 2>/dev/null || echo 1
  fi
}

cl_redis_up() {
  local i k primary
  mkdir -p "$CL/redis"
  i=$(cl_redis_primary_index); primary=$(cl_port redis "$i")
  cl_redis_start "$i" ""
  cl_redis_start $((3 - i)) "$primary"
  for k in 1 2 3; do cl_sentinel_start "$k" "$primary"; done
  # Writable only once its replica is attached (min-replicas-to-write): until
  # then every signed API request answers 503 (its nonce is a write), so `up`
  # is not done before.
  cl_wait "the Redis primary's replica" 60 cl_redis_has_replica "$primary" \
    || cl_die "the Redis primary has no replica attached (logs: $CL_LOG/r1.log, r2.log)"
}
cl_redis_has_replica() { cl_redis_cli "$1" info replication 2>/dev/null | grep -q '^min_slaves_good_slaves:[1-9]'; }

# --- HAProxy ------------------------------------------------------------------
cl_haproxy_cfg() {
  local i
  cat > "$CL/haproxy-http.cfg" <<EOF
# written by ./stack cluster: the service's front (cluster/cluster.sh)
global
  maxconn 8192
  pidfile $CL_RUN/haproxy-http.pid
defaults
  mode http
  timeout connect 1s
  timeout client 60s
  # longer than a request may take (three gateway calls, docs/FENCE.md)
  timeout server 30s
  timeout http-keep-alive 30s
  # a request is sent again to another node only when the connection to
  # the first failed: never after it may have reached the service
  retries 2
  retry-on conn-failure
  option redispatch
  # the contract's JSON error, not HAProxy's HTML page, if no node answers
  errorfile 503 $ROOT/cluster/haproxy-503.http
frontend service
  bind 127.0.0.1:$CL_B
  default_backend nodes
backend nodes
  balance roundrobin
  option httpchk GET /healthz
  http-check expect status 200
  default-server inter 1s fall 2 rise 2 on-marked-down shutdown-sessions
EOF
  for i in 1 2 3; do echo "  server s$i 127.0.0.1:$(cl_port node $i) check" >> "$CL/haproxy-http.cfg"; done
  # The same nodes, unchecked, used only when every checked one is down: a
  # Redis failover or a Galera view change fails /healthz on all three at
  # once, yet the nodes still answer (payments without a token, or their own
  # JSON 503). A node that is really gone refuses the connection and the
  # request goes to the next one (retry-on conn-failure).
  echo "  option allbackups" >> "$CL/haproxy-http.cfg"
  for i in 1 2 3; do echo "  server s${i}b 127.0.0.1:$(cl_port node $i) backup" >> "$CL/haproxy-http.cfg"; done
  # The public door (docs/SECURITY.md "Doors"): the gateway's notifications,
  # sent to the notify_url every node gives (this front), go to any node's
  # public-door process; it answers nothing else (404), /healthz included,
  # which is its check: a 404 from the door's own process (lighttpd without
  # its backend answers 5xx, a merchant-door process 200). Unlike the
  # merchant door's /healthz it does not ask Redis, so a failover does not
  # take the nodes out; a notification a node cannot apply is answered FAIL
  # and sent again by the gateway.
  cat >> "$CL/haproxy-http.cfg" <<EOF
frontend public
  bind 127.0.0.1:$CL_PUB
  default_backend public_nodes
backend public_nodes
  balance roundrobin
  option httpchk GET /healthz
  http-check expect status 404
  default-server inter 1s fall 2 rise 2 on-marked-down shutdown-sessions
EOF
  for i in 1 2 3; do echo "  server s${i}p 127.0.0.1:$(cl_port public $i) check" >> "$CL/haproxy-http.cfg"; done

  cat > "$CL/haproxy-db.cfg" <<EOF
# written by ./stack cluster: the Galera front (cluster/cluster.sh). A node
# is used only while it says Synced (cluster/galera-check).
global
  maxconn 8192
  pidfile $CL_RUN/haproxy-db.pid
  external-check
  insecure-fork-wanted
defaults
  mode tcp
  timeout connect 1s
  timeout client 1h
  timeout server 1h
  option external-check
  external-check path "/usr/bin:/bin"
  external-check command $ROOT/cluster/galera-check
  default-server inter 1s fall 2 rise 2 on-marked-down shutdown-sessions
listen galera-multi
  bind 127.0.0.1:$(cl_port db-multi)
  balance roundrobin
EOF
  for i in 1 2 3; do echo "  server g$i 127.0.0.1:$(cl_port galera $i) check" >> "$CL/haproxy-db.cfg"; done
  cat >> "$CL/haproxy-db.cfg" <<EOF
listen galera-single
  bind 127.0.0.1:$(cl_port db-single)
  server g1 127.0.0.1:$(cl_port galera 1) check
  server g2 127.0.0.1:$(cl_port galera 2) check backup
  server g3 127.0.0.1:$(cl_port galera 3) check backup
EOF
}

cl_haproxy_start() { # cl_haproxy_start http|db
  local name=haproxy-$1
  cl_running "$name" && return 0
  [ -f "$CL/$name.cfg" ] || cl_haproxy_cfg
  setsid haproxy -db -f "$CL/$name.cfg" >> "$CL_LOG/$name.log" 2>&1 < /dev/null &
  echo $! > "$CL_RUN/$name.pid"
  sleep 0.3
  cl_running "$name" || { tail -n 10 "$CL_LOG/$name.log" >&2; return 1; }
}

# --- mock gateway and service nodes -------------------------------------------
cl_http_ok() { [ "$(curl -s -o /dev/null -m 3 -w '%{http_code}' "$1")" = 200 ]; }
# a public door answers (its own FastCGI process), and /healthz is not there
cl_public_up() { [ "$(curl -s -o /dev/null -m 3 -w '%{http_code}' "$1/healthz")" = 404 ]; }

cl_mock_start() {
  cl_running mock && return 0
  mkdir -p "$CL/mock/run" "$CL/mock/log" "$CL/mock/www"
  ( unset IDEMPAY_DB_HOST IDEMPAY_DB_PORT
    # The cluster's mock has no HTTPS front: its service nodes send refunds
    # over plain HTTP without the client certificate, so it may not ask for one.
    export IDEMPAY_STATE_DIR=$CL/mock IDEMPAY_DB_SOCKET=$CL/ledger/mysqld.sock \
      IDEMPAY_MOCK_REQUIRE_CLIENT_CERT=0
    lighttpd -f "$ROOT/cluster/lighttpd-mock.conf" ) > "$CL_LOG/mock.start.log" 2>&1 \
    || { cat "$CL_LOG/mock.start.log"; cl_die "the mock gateway's lighttpd did not start"; }
  cl_wait mock 30 cl_http_ok "http://127.0.0.1:$IDEMPAY_MOCK_PORT/mock/config" || cl_die "the mock gateway is not answering"
}

cl_db_mode() { cat "$CL_RUN/db-mode" 2>/dev/null || echo "${IDEMPAY_CLUSTER_DB_MODE:-multi}"; }

cl_node_start() { # cl_node_start N: service node sN
  local i=$1 d=$CL/s$1 sentinels="" k
  cl_running "s$i" && return 0
  mkdir -p "$d/run" "$d/log" "$d/www"
  for k in 1 2 3; do sentinels="$sentinels${sentinels:+,}127.0.0.1:$(cl_port sentinel $k)"; done
  ( unset IDEMPAY_DB_SOCKET IDEMPAY_REDIS_HOST IDEMPAY_REDIS_PORT
    export IDEMPAY_STATE_DIR=$d IDEMPAY_HTTP_PORT=$(cl_port node "$i") IDEMPAY_SERVICE_PROCS=$CL_PROCS \
      IDEMPAY_DB_HOST=127.0.0.1 IDEMPAY_DB_PORT=$(cl_port "db-$(cl_db_mode)") \
      IDEMPAY_REDIS_SENTINELS=$sentinels IDEMPAY_REDIS_MASTER=$CL_MASTER \
      IDEMPAY_PUBLIC_PORT=$(cl_port public "$i") \
      IDEMPAY_GATEWAY_URL=http://127.0.0.1:$IDEMPAY_MOCK_PORT \
      IDEMPAY_NOTIFY_URL=http://127.0.0.1:$CL_PUB/api/pay/callback/wechat \
      IDEMPAY_REFUND_NOTIFY_URL=http://127.0.0.1:$CL_PUB/api/pay/callback/wechat/refund
    lighttpd -f "$ROOT/cluster/lighttpd-node.conf" ) > "$CL_LOG/s$i.start.log" 2>&1 \
    || { cat "$CL_LOG/s$i.start.log"; return 1; }
  cl_wait "s$i" 60 cl_http_ok "http://127.0.0.1:$(cl_port node "$i")/healthz" \
    || { tail -n 20 "$d/log/fastcgi.log" >&2; return 1; }
  cl_wait "s$i public door" 60 cl_public_up "http://127.0.0.1:$(cl_port public "$i")" \
    || { tail -n 20 "$d/log/fastcgi.log" >&2; return 1; }
}

# the build the cluster runs (recorded at up)
cl_bin_dir() { cat "$CL_RUN/bin-dir" 2>/dev/null || builddir; }

# --- every node agrees ------------------------------------------------------------
CL_TABLES=(payment_order payment_callback_record payment_refund payment_idempotent payment_statement_job)

# cluster compare: the same rows on every Galera node. The service nodes are
# stopped meanwhile (their reconcilers and statement jobs write), every node
# must be Synced with an empty receive queue, then each node gives, per
# table, its row count and CHECKSUM TABLE; all three lines must be equal.
cluster_compare() {
  local n t line lines=() rc=0 end
  for i in 1 2 3; do cl_stop "s$i"; done
  end=$((SECONDS + 60))
  for n in g1 g2 g3; do
    until cl_galera_synced $n && [ "$(cl_sql $n -N -e "SHOW STATUS LIKE 'wsrep_local_recv_queue'" | awk '{print $2}')" = 0 ]; do
      [ $SECONDS -ge $end ] && { cl_say "$n is not Synced with an empty queue"; rc=1; break; }
      sleep 0.5
    done
  done
  printf '%-6s' node; for t in "${CL_TABLES[@]}"; do printf ' %28s' "$t"; done; echo
  for n in g1 g2 g3; do
    line=""
    for t in "${CL_TABLES[@]}"; do
      line="$line $(cl_sql $n -N -e "SET SESSION wsrep_sync_wait=1; SELECT CONCAT(COUNT(*), ' rows') FROM idempay.$t; CHECKSUM TABLE idempay.$t EXTENDED" \
        | awk 'NR==1{c=$1} NR==2{s=$2} END{printf "%28s", c" rows/"s}')"
    done
    printf '%-6s%s\n' "$n" "$line"
    lines+=("$line")
  done
  if [ "${lines[0]}" = "${lines[1]}" ] && [ "${lines[1]}" = "${lines[2]}" ] && [ $rc = 0 ]; then
    cl_say "every Galera node holds the same rows"
  else
    cl_say "the Galera nodes DIFFER"; rc=1
  fi
  export IDEMPAY_BIN_DIR=$(cl_bin_dir)
  for i in 1 2 3; do cl_node_start "$i" || rc=1; done
  return $rc
}

# cluster sim [ARGS]: idempay-sim's default scenarios through HAProxy while
# the nemesis runs: every IDEMPAY_CLUSTER_NEMESIS_EVERY seconds (default 15)
# while traffic runs, and as the simulator's --chaos-cmd during its crash
# scenario. Then every node must agree. Exit: the simulator's, or 1
# when the nodes differ.
cluster_sim() {
  local seed="" orders=20000 duration=360 every=${IDEMPAY_CLUSTER_NEMESIS_EVERY:-15} a out rc rc2 loop
  local args=("$@")
  for ((a = 0; a < ${#args[@]}; a++)); do
    case ${args[a]} in
      --seed) seed=${args[a + 1]} ;;
      --orders) orders=${args[a + 1]} ;;
      --duration) duration=${args[a + 1]} ;;
    esac
  done
  [ -n "$seed" ] || { seed=$(( $(date +%s%N) % 1000000007 )); args+=(--seed "$seed"); }
  cluster_up > /dev/null || exit 2
  out=$CL/sim/$(date -u +%Y%m%dT%H%M%SZ)-seed$seed
  mkdir -p "$out"; ln -sfn "$out" "$CL/sim/latest"
  echo 0 > "$CL_RUN/nemesis.counter"; : > "$CL_LOG/nemesis.log"; rm -f "$CL_RUN/nemesis.stop"
  cl_say "sim: seed $seed, $orders orders over ${duration}s, a nemesis event every ${every}s (results: $out)"
  # The loop runs while the simulator sends traffic: until it says
  # "settling:" (then it reads orders and the ledger, which a fault would
  # only make unreadable), at most twice the traffic budget.
  ( end=$((SECONDS + 2 * duration))
    while [ $SECONDS -lt "$end" ] && [ ! -f "$CL_RUN/nemesis.stop" ]; do
      sleep "$every"
      [ -f "$CL_RUN/nemesis.stop" ] && break
      grep -q '^settling:' "$out/sim.stderr" 2>/dev/null && break
      "$ROOT/stack" cluster nemesis-step "$seed" > /dev/null 2>&1
    done ) &
  loop=$!
  ( unset IDEMPAY_DB_SOCKET
    IDEMPAY_DB_HOST=127.0.0.1 IDEMPAY_DB_PORT=$(cl_port db-multi) \
    "$(cl_bin_dir)/sim/idempay-sim" --target "http://127.0.0.1:$CL_B" --gateway "http://127.0.0.1:$IDEMPAY_MOCK_PORT" \
      --orders "$orders" --duration "$duration" --db \
      --chaos-cmd "'$ROOT/stack' cluster nemesis-step $seed" --chaos-every "$every" \
      --json "$out/report.json" --history "$out/history.jsonl" "${args[@]}" ) 2>"$out/sim.stderr" | tee "$out/report.txt"
  rc=${PIPESTATUS[0]}
  touch "$CL_RUN/nemesis.stop"; wait "$loop"
  cl_heal > /dev/null 2>&1
  echo; echo "nemesis events (seed $seed):"; cat "$CL_LOG/nemesis.log" | tee "$out/nemesis.log"
  echo; cluster_compare | tee "$out/nodes.txt"; rc2=${PIPESTATUS[0]}
  [ "$rc" = 0 ] && [ "$rc2" != 0 ] && rc=1
  cl_say "sim: exit $rc (seed $seed; results in $out)"
  return "$rc"
}

# --- commands -----------------------------------------------------------------
cl_install() {
  PACKAGES+=("${CL_PACKAGES[@]}")
  local fresh=0 p
  for p in "${CL_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || fresh=1
  done
  install_packages
  if [ $fresh = 1 ]; then # Debian starts the packaged daemons; ours are private
    for s in haproxy redis-sentinel; do
      command -v systemctl > /dev/null && systemctl disable --now "$s" > /dev/null 2>&1
      service "$s" stop > /dev/null 2>&1
    done
  fi
  return 0
}

cluster_up() {
  mkdir -p "$CL_RUN" "$CL_LOG" "$RUN" "$LOG"
  [ "$(id -u)" = 0 ] || cl_die "the cluster runs its Galera nodes as root: run ./stack cluster up as root"
  cl_install
  build
  export IDEMPAY_BIN_DIR
  echo "$IDEMPAY_BIN_DIR" > "$CL_RUN/bin-dir"
  cl_galera_up
  cl_galera_migrate
  cl_caller
  cl_ledger_up
  cl_redis_up
  cl_haproxy_cfg
  cl_haproxy_start db || cl_die "HAProxy (Galera front) did not start"
  cl_mock_start
  for i in 1 2 3; do cl_node_start "$i" || cl_die "service node s$i did not start (log: $CL/s$i/log/fastcgi.log)"; done
  cl_haproxy_start http || cl_die "HAProxy (service front) did not start"
  cl_wait haproxy 30 cl_http_ok "http://127.0.0.1:$CL_B/healthz" || cl_die "the service is not healthy through HAProxy"
  cl_wait "haproxy public front" 30 cl_public_up "http://127.0.0.1:$CL_PUB" || cl_die "the public door is not answering through HAProxy"
  cl_say "up: public door (notifications only) http://127.0.0.1:$CL_PUB (HAProxy -> s1..s3 :$(cl_port public 1)-$(cl_port public 3)); merchant-door caller $IDEMPAY_CALLER, secret in $IDEMPAY_CALLER_SECRET_FILE"
  cl_say "up: service http://127.0.0.1:$CL_B (HAProxy -> s1..s3 :$(cl_port node 1)-$(cl_port node 3))  mock http://127.0.0.1:$IDEMPAY_MOCK_PORT  Galera :$(cl_port galera 1)-$(cl_port galera 3) ($(cl_db_mode)-writer via :$(cl_port "db-$(cl_db_mode)"))  Redis :$(cl_port redis 1),:$(cl_port redis 2) Sentinels :$(cl_port sentinel 1)-$(cl_port sentinel 3)"
}

cluster_down() {
  local p
  cl_stop haproxy-http
  for i in 1 2 3; do cl_stop "s$i"; done
  cl_stop mock
  cl_stop haproxy-db
  cl_redis_primary_index > "$CL_RUN/redis-primary.new" && mv "$CL_RUN/redis-primary.new" "$CL_RUN/redis-primary"
  for k in 1 2 3; do cl_stop "sn$k"; done
  cl_stop r1; cl_stop r2
  # one at a time: the last one stopped is safe to bootstrap from
  cl_stop g3; cl_stop g2; cl_stop g1
  cl_stop ledger
  cl_say "down"
}

cluster_status() {
  local name port pid detail
  for name in haproxy-http s1 s2 s3 mock haproxy-db g1 g2 g3 ledger r1 r2 sn1 sn2 sn3; do
    detail=""
    case $name in
      haproxy-http) port="$CL_B,$CL_PUB" ;;
      s[1-3]) port="$(cl_port node "${name#s}"),$(cl_port public "${name#s}")" ;;
      mock) port=$IDEMPAY_MOCK_PORT ;;
      haproxy-db) port="$(cl_port db-multi),$(cl_port db-single)"; detail="db mode $(cl_db_mode)" ;;
      g[1-3]) port=$(cl_port galera "${name#g}") ;;
      ledger) port=$(cl_port ledger) ;;
      r[1-2]) port=$(cl_port redis "${name#r}") ;;
      sn[1-3]) port=$(cl_port sentinel "${name#sn}") ;;
    esac
    pid=$(cl_pid "$name")
    if [ -n "$pid" ]; then
      case $name in
        g*) detail=$(cl_galera_state "$name") ;;
        r*) detail=$(cl_redis_role "$port") ;;
      esac
      printf '%-12s running  port %-12s pid %-8s %s\n' "$name" "$port" "$pid" "$detail"
    else
      printf '%-12s stopped  port %-12s\n' "$name" "$port"
    fi
  done
}

cluster_logs() {
  local f
  if [ $# -gt 0 ]; then
    case $1 in
      s[1-3]) f=$CL/$1/log/fastcgi.log ;;
      mock) f=$CL/mock/log/fastcgi.log ;;
      ledger) f=$CL/ledger/log/mariadb.log ;;
      *) f=$CL_LOG/$1.log ;;
    esac
    [ -f "$f" ] || cl_die "no log $f (logs: $(ls "$CL_LOG" | tr '\n' ' ') s1 s2 s3 mock ledger)"
    tail -n 100 "$f"
  else
    tail -n 15 "$CL_LOG"/*.log "$CL"/s[1-3]/log/fastcgi.log "$CL"/mock/log/fastcgi.log 2>/dev/null
  fi
}

# cluster mode multi|single: the service nodes' database route (restarts them)
cluster_mode() {
  case ${1:-} in multi|single) ;; *) cl_die "mode multi|single (now: $(cl_db_mode))" ;; esac
  echo "$1" > "$CL_RUN/db-mode"
  export IDEMPAY_BIN_DIR=${IDEMPAY_BIN_DIR:-$(builddir)}
  for i in 1 2 3; do cl_stop "s$i"; cl_node_start "$i" || cl_die "s$i did not restart"; done
  cl_say "service nodes use the Galera cluster $1-writer (:$(cl_port "db-$1"))"
}

cluster_main() {
  local sub=${1:-}; shift || true
  mkdir -p "$CL_RUN" "$CL_LOG"
  case $sub in
    up) cluster_up ;;
    down) cluster_down ;;
    reset) cluster_down; rm -rf "$CL"; cl_say "reset: $CL removed" ;;
    status) cluster_status ;;
    logs) cluster_logs "$@" ;;
    mode) cluster_mode "$@" ;;
    sim) cluster_sim "$@" ;;
    compare) cluster_compare ;;
    nemesis-step) cluster_nemesis_step "$@" ;;
    nemesis-locked) cluster_nemesis_locked "$@" ;;
    heal) cl_heal ;;
    race) cluster_race "$@" ;;
    doors) cluster_doors "$@" ;;
    test) cluster_test ;;
    bench) cluster_bench "$@" ;;
    *) cat <<EOF
usage: ./stack cluster COMMAND   (docs/CLUSTER.md)
  up        3 Galera nodes, 3 service nodes, HAProxy, Redis + Sentinels, mock gateway
  down      stop what up started (keeps data)
  reset     down and delete $CL
  status    one line per component
  logs [NAME]  g1 g2 g3 s1 s2 s3 mock ledger r1 r2 sentinel1.. haproxy-http haproxy-db nemesis
  mode multi|single   the service nodes' route to Galera (any node / one node)
  sim [ARGS]   idempay-sim through HAProxy with the nemesis, then compare the nodes
  compare   the same rows on every Galera node (stops the service nodes meanwhile)
  nemesis-step SEED   one nemesis event (the simulator's --chaos-cmd)
  heal      start whatever is down
  race [ROUNDS]   the trap: check-then-act vs idempay's CAS on two Galera nodes
  doors [TEST...]  both doors on every node and through HAProxy, the caller, a notification
  bench [ARGS]    idempay-bench: single node vs the cluster (multi- and single-writer)
  test      up, doors, race, a short sim with the nemesis (= ./stack test --cluster)
EOF
       [ -z "$sub" ] && exit 2; [ "$sub" = help ] || exit 2 ;;
  esac
}
