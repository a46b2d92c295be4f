# shellcheck shell=bash
# tools/lib.sh - the shell helpers ./stack and cluster/cluster share (issue
# 25): messages, pid files, waiting, stopping, Debian packages, templates.
# Sourced, never run. The sourcing script sets SAY_AS (the word its messages
# start with: stack, cluster) and STATE (its state dir: the apt log).

# say WORDS: a line on stdout, "$SAY_AS: WORDS".
say() { printf '%s: %s\n' "$SAY_AS" "$*"; }
# die WORDS: the same on stderr, then exit 2 (a subshell exits only itself).
die() { printf '%s: %s\n' "$SAY_AS" "$*" >&2; exit 2; }

# pid_in FILE: prints the pid FILE records while that process runs; status 1
# (nothing printed) when FILE is missing or empty or the process has ended.
# A zombie that its parent or init has not reaped yet has ended: a daemon's
# pid file may outlive it, and spawn-fcgi's children are reaped by init.
pid_in() {
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1" 2>/dev/null) || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  case $(ps -o stat= -p "$pid" 2>/dev/null) in Z*|'') return 1 ;; esac
  echo "$pid"
}

# stop_pid_file FILE [SIGNAL [TENTHS [kids]]]: sends SIGNAL (TERM) to the pid
# FILE records, waits up to TENTHS tenths of a second (100) for it to end,
# then KILLs it; with "kids" its children of the moment are KILLed after it
# (lighttpd's FastCGI processes, a mariadbd's SST helpers). FILE is removed;
# status 0 also when nothing ran.
stop_pid_file() {
  local file=$1 sig=${2:-TERM} tenths=${3:-100} pid kids="" t
  if ! pid=$(pid_in "$file"); then rm -f "$file"; return 0; fi
  [ "${4:-}" = kids ] && kids=$(pgrep -P "$pid" 2>/dev/null | tr '\n' ' ')
  kill -s "$sig" "$pid" 2>/dev/null
  for ((t = 0; t < tenths; t++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null
  # shellcheck disable=SC2086 # a list of pids
  [ -n "$kids" ] && kill -9 $kids 2>/dev/null
  rm -f "$file"
  return 0
}

# wait_until SECONDS CMD...: runs CMD (its output dropped) every 0.2 s until
# it succeeds (status 0) or SECONDS have passed (status 1).
wait_until() {
  local end=$((SECONDS + $1)); shift
  until "$@" > /dev/null 2>&1; do
    [ $SECONDS -ge $end ] && return 1
    sleep 0.2
  done
  return 0
}

# http_code URL: the HTTP status of a GET (000 when nothing answered in 5 s).
http_code() { curl -s -o /dev/null -m 5 -w '%{http_code}' "$1"; }

# PACKAGED_DAEMONS: what Debian starts on installing our packages; the
# stack's own run privately, so install_packages stops and disables these.
PACKAGED_DAEMONS=(mariadb redis-server lighttpd nginx prometheus prometheus-node-exporter)

# install_packages PACKAGE...: installs those not installed (apt-get, log in
# $STATE/apt.log; the first time, or when an install fails, after apt-get
# update) and stops PACKAGED_DAEMONS. Dies when one is missing and this is
# not root, or when apt-get fails.
install_packages() {
  local missing=() p s
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    die "missing Debian packages: ${missing[*]} (run ./stack up as root, or apt-get install them)"
  fi
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if [ ! -f "$STATE/.apt-updated" ] || ! apt-get install -y -qq --no-install-recommends "${missing[@]}" > "$STATE/apt.log" 2>&1; then
    apt-get update -qq >> "$STATE/apt.log" 2>&1 && touch "$STATE/.apt-updated"
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >> "$STATE/apt.log" 2>&1 \
      || { tail -n 20 "$STATE/apt.log"; die "apt-get install failed"; }
  fi
  for s in "${PACKAGED_DAEMONS[@]}"; do
    command -v systemctl > /dev/null && systemctl disable --now "$s" > /dev/null 2>&1
    service "$s" stop > /dev/null 2>&1
  done
  return 0
}

# render TEMPLATE NAME=VALUE...: prints TEMPLATE with every @NAME@ replaced
# by its VALUE, taken literally (a password's & or \ included), and without
# its "#%" lines (what the template is, for its reader only); the text ends
# with one newline. Dies when TEMPLATE has an @word@ no NAME gives, so a
# template and the code that fills it cannot drift apart silently.
render() {
  local template=$1 text rest pair name
  [ -r "$template" ] || die "cannot read $template"
  text=$(sed '/^#%/d' "$template")
  rest=$text
  shift
  for pair in "$@"; do
    name=${pair%%=*}
    text=${text//"@$name@"/"${pair#*=}"}
    rest=${rest//"@$name@"/}
  done
  [[ $rest =~ @[a-z_][a-z0-9_]*@ ]] && die "$template: no value given for ${BASH_REMATCH[0]}"
  printf '%s\n' "$text"
}

# usage_text HEADLINE SYNOPSIS SUMMARY ...: a usage text from a command list
# (pairs: a synopsis, what it does in a line); a long synopsis gets a line
# of its own. ./stack's and cluster/cluster's usage are their lists
# (STACK_COMMANDS, CLUSTER_COMMANDS), which their docs' tables follow
# (tests/integration/test_stack_commands.py).
usage_text() {
  echo "$1"; shift
  while [ $# -ge 2 ]; do
    if [ ${#1} -gt 16 ]; then
      printf '  %s\n  %-16s %s\n' "$1" "" "$2"
    else
      printf '  %-16s %s\n' "$1" "$2"
    fi
    shift 2
  done
}
