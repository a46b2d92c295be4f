# shellcheck shell=bash
# stack_memory.sh - the configuration a stack was started with, sourced by
# ./stack (issue 25: "a stack that remembers how it was started").
#
# `./stack up`, `start` and `restart` record every setting the stack gives
# its programs (the IDEMPAY_* variables `stack` exports with a default) in
# $STATE/run/stack.env (mode 0600: it holds the merchant key). Every later
# command reads the record before its own defaults:
#   - a setting the caller's environment leaves unset is taken from the
#     record, so `./stack sim` from a new shell signs with the key the
#     running stack has, not with the development default;
#   - a setting the caller's environment gives differently is the caller's:
#     start/restart (and an up of a stopped stack) start processes with it and
#     record it; any other command uses it for what it runs itself (the
#     simulator, the bench) while the running programs keep the recorded one,
#     and the stack says so, naming the setting, never its value; nothing but
#     start/restart/up-of-a-stopped-stack rewrites the record.
# `./stack reset` deletes the record with the state; `down` keeps it.

# stack_memory_settings FILE: the names of the settings stack records (the
# IDEMPAY_* it exports with a default), one per line.
stack_memory_settings() {
  grep -oE '^export (IDEMPAY_[A-Z0-9_]+)=\$\{' "$1" | sed -E 's/^export //; s/=.*//' \
    | grep -v '^IDEMPAY_STATE_DIR$' | sort -u
}

# stack_memory_running RUN: 0 when a component of the stack runs (its pid
# file names a live process).
stack_memory_running() {
  local f pid
  for f in "$1"/lighttpd.pid "$1"/mariadb.pid "$1"/redis.pid; do
    [ -s "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null) && kill -0 "$pid" 2>/dev/null && return 0
  done
  return 1
}

# stack_memory_recall CMD RUN: applies the record (above) to this shell.
stack_memory_recall() {
  local cmd=$1 run=$2 file=$2/stack.env entry name rec filled=0 caller_wins=0
  local -a differ=()
  STACK_MEMORY_RECORD=1   # up may record: nothing was recorded yet
  [ -f "$file" ] || return 0
  STACK_MEMORY_RECORD=0
  case $cmd in
    reset|down|help|-h|'') return 0 ;;
    start|restart) caller_wins=1 ;;
    up) stack_memory_running "$run" || caller_wins=1 ;;
  esac
  STACK_MEMORY_RECORD=$caller_wins
  while IFS= read -r -d '' entry; do
    name=${entry%%=*}
    rec=${entry#*=}
    [[ $name =~ ^IDEMPAY_[A-Z0-9_]+$ ]] || continue
    if [ -z "${!name+x}" ]; then
      export "$name=$rec"
      filled=$((filled + 1))
    elif [ "${!name}" != "$rec" ]; then
      differ+=("$name")
    fi
  done < "$file"
  if [ $filled -gt 0 ] || [ ${#differ[@]} -gt 0 ]; then
    printf 'stack: configuration: the one recorded at up (%s): %d settings from it\n' "$file" "$filled"
  fi
  if [ ${#differ[@]} -gt 0 ]; then
    if [ $caller_wins = 1 ]; then
      printf 'stack: configuration: your environment sets %s otherwise than the record; %s uses yours\n' \
        "${differ[*]}" "$cmd"
    else
      printf 'stack: configuration: your environment sets %s otherwise than the running stack; %s uses yours, the running programs keep theirs (./stack restart, or down then up, to change them)\n' \
        "${differ[*]}" "$cmd"
    fi
  fi
}

# stack_memory_record STACK RUN [up]: writes the settings now in effect
# (with "up": only when recall said this command may: no record yet, or an
# up of a stopped stack; an up inside sim or bench of a running stack
# started nothing and records nothing).
stack_memory_record() {
  local stack=$1 file=$2/stack.env name
  [ "${3:-}" = up ] && [ "${STACK_MEMORY_RECORD:-1}" != 1 ] && return 0
  mkdir -p "$2"
  ( umask 077
    while IFS= read -r name; do
      [ -n "${!name+x}" ] && printf '%s=%s\0' "$name" "${!name}"
    done < <(stack_memory_settings "$stack") > "$file.tmp" && mv "$file.tmp" "$file" )
}
