# shellcheck shell=bash
# cluster/nemesis.sh - `./stack cluster`'s nemesis (docs/CLUSTER.md, "The
# nemesis"): one seeded fault at a time, each healed before it returns.
# Sourced by cluster/cluster (uses its cl_* helpers and CL_* settings).

# --- nemesis (docs/CLUSTER.md) -------------------------------------------------
# One event per call, drawn from a seed: event k of seed S is a fixed function
# of (S, k), so a seed replays the same sequence of faults (their timing
# against the traffic depends on the machine). Every 4 events are a seeded
# permutation of the 4 kinds, so each kind comes once per 4 events. Events
# are serialised (a lock) and each one heals before it returns: at most one
# Galera node and one Redis node are ever down, so the Galera primary
# component and the Sentinel quorum always survive.
cl_hash() { printf '%s' "$*" | sha256sum | cut -c1-12 | { read -r h; echo $((16#$h)); }; }


cl_nemesis_log() { # appends "time +s event" to the nemesis log and says it
  local line
  line="$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ) $*"
  echo "$line" >> "$CL_LOG/nemesis.log"
  echo "nemesis: $*" >&2
}

cl_galera_kill() { # kill -9 gN, down SECS, restart (IST, or SST when sst)
  local i=$1 secs=$2 how=$3 t0=$SECONDS
  local pid kids; pid=$(cl_pid "g$i")
  kids=$(pgrep -P "$pid" 2>/dev/null | tr '\n' ' ') # its SST helpers, if any
  [ -n "$pid" ] && kill -9 $pid $kids 2>/dev/null
  rm -f "$(cl_pidfile "g$i")"
  sleep "$secs"
  if [ "$how" = sst ]; then # forget the node's state: it must take a full SST
    rm -f "$CL/g$i/data/grastate.dat" "$CL/g$i/data/galera.cache"
  fi
  cl_galera_start "$i" || return 1
  echo "back Synced after $((SECONDS - t0))s"
}


cl_redis_wait_new_primary() { # until the Sentinels name a primary other than PORT, and it has a replica
  local old=$1 end=$((SECONDS + 60)) p
  while :; do
    p=$(cl_sentinel_master_port)
    [ -n "$p" ] && [ "$p" != "$old" ] && cl_redis_cli "$p" info replication 2>/dev/null | grep -q '^connected_slaves:[1-9]' && return 0
    [ $SECONDS -ge $end ] && return 1
    sleep 0.3
  done
}

cl_redis_fail() { # failover (SENTINEL FAILOVER) or kill (kill -9 the primary, restart it later)
  local how=$1 secs=$2 i old t0=$SECONDS
  i=$(cl_redis_primary_index); old=$(cl_port redis "$i")
  if [ "$how" = failover ]; then
    cl_redis_cli "$(cl_port sentinel 1)" sentinel failover "$CL_MASTER" > /dev/null
    # the old primary comes back as the new one's replica by itself
  else
    kill -9 "$(cl_pid "r$i")" 2>/dev/null; rm -f "$(cl_pidfile "r$i")"
    local end=$((SECONDS + 30))
    until p=$(cl_sentinel_master_port) && [ "$p" != "$old" ]; do
      [ $SECONDS -ge $end ] && return 1; sleep 0.3
    done
    sleep "$secs"
    cl_redis_start "$i" "$p" || return 1
  fi
  cl_redis_wait_new_primary "$old" || return 1
  echo "primary :$old -> :$(cl_sentinel_master_port) in $((SECONDS - t0))s"
}

cl_nemesis_event() { # cl_nemesis_event SEED K: run event K of SEED, log it
  local seed=$1 k=$2 kinds=(galera service redis haproxy) round perm=() r j t kind n secs how out rc
  round=$((k / 4))
  # the round's permutation: sort the 4 kinds by a seeded key
  perm=($(for t in "${kinds[@]}"; do echo "$(cl_hash "$seed" "$round" "$t") $t"; done | sort -n | awk '{print $2}'))
  kind=${perm[k % 4]}
  r=$(cl_hash "$seed" "$k" pick)
  n=$((r % 3 + 1)); secs=$((r / 3 % 5 + 2)); j=$((r / 15 % 3))
  case $kind in
    galera)
      how=ist; [ $j = 0 ] && how=sst
      if ! cl_galera_synced g1 || ! cl_galera_synced g2 || ! cl_galera_synced g3; then
        cl_nemesis_log "event $k galera-kill g$n: skipped, the cluster is not fully Synced"; return 0
      fi
      cl_nemesis_log "event $k galera-kill g$n: kill -9, down ${secs}s, rejoin by $how"
      out=$(cl_galera_kill "$n" "$secs" "$how" 2>&1); rc=$? ;;
    service)
      cl_nemesis_log "event $k service-kill s$n: kill -9 lighttpd and its FastCGI processes, down ${secs}s"
      cl_stop "s$n" 9; sleep "$secs"
      out=$(IDEMPAY_BIN_DIR=$(cl_bin_dir) cl_node_start "$n" 2>&1 && echo "back"); rc=$? ;;
    redis)
      how=failover; [ $j != 0 ] && how=kill
      cl_nemesis_log "event $k redis-$how: $( [ $how = failover ] && echo "SENTINEL FAILOVER" || echo "kill -9 the primary, down ${secs}s")"
      out=$(cl_redis_fail "$how" "$secs" 2>&1); rc=$? ;;
    haproxy)
      cl_nemesis_log "event $k haproxy-restart: kill -9 the service's HAProxy, start it again"
      cl_stop haproxy-http 9
      out=$(cl_haproxy_start http 2>&1 && echo "back"); rc=$? ;;
  esac
  cl_nemesis_log "event $k done (exit $rc): $(echo "$out" | tail -n 1)"
  return $rc
}

# cluster nemesis-step SEED: the next event of SEED (the counter lives in the
# state dir; `cluster sim` resets it). This is the simulator's --chaos-cmd.
# One event at a time: the lock is held by flock around the event, and not
# inherited by the daemons the event starts (flock -o).
cluster_nemesis_step() {
  local seed=${1:?seed}
  flock -o "$CL_RUN/nemesis.lk" "$ROOT/stack" cluster nemesis-locked "$seed"
}

cluster_nemesis_locked() {
  local seed=$1 k
  k=$(cat "$CL_RUN/nemesis.counter" 2>/dev/null || echo 0)
  echo $((k + 1)) > "$CL_RUN/nemesis.counter"
  cl_nemesis_event "$seed" "$k"
}

# Brings back anything a nemesis left down (after a failed event).
cl_heal() {
  local i
  for i in 1 2 3; do cl_running "g$i" || cl_galera_start "$i"; done
  for i in 1 2; do cl_running "r$i" || cl_redis_start "$i" "$(cl_sentinel_master_port)"; done
  for i in 1 2 3; do cl_running "sn$i" || cl_sentinel_start "$i" "$(cl_sentinel_master_port)"; done
  cl_haproxy_start db
  export IDEMPAY_BIN_DIR=$(cl_bin_dir)
  for i in 1 2 3; do cl_running "s$i" || cl_node_start "$i"; done
  cl_haproxy_start http
}
