# shellcheck shell=bash
# tools/stack_parts.sh - the parts a single-node stack and the cluster both
# run (sourced by ./stack and cluster/cluster, after tools/lib.sh): the
# Debian packages and the build, a private MariaDB, the migrations, the
# development caller, Redis's ACL and its admin client.
#
# The sourcing script sets ROOT (the checkout), STATE, RUN (pid files), LOG,
# DATA (MariaDB's data dir) and FLAVOR (release | asan), and exports the
# stack's IDEMPAY_* settings; the cluster runs these functions in subshells
# with RUN, LOG, DATA and IDEMPAY_DB_* pointing at one of its own databases.

# The Debian packages the stack builds with (configure needs no more) and
# those it runs and tests with (install_packages); PACKAGES is both.
BUILD_PACKAGES=(build-essential autoconf automake libtool pkg-config
  libfcgi-dev libmariadb-dev libhiredis-dev libcurl4-openssl-dev libmxml-dev
  libcunit1-dev libjansson-dev libssl-dev zlib1g-dev)
RUN_PACKAGES=(lighttpd mariadb-server mariadb-client redis-server redis-tools
  curl python3 python3-cryptography procps psmisc valgrind clang libclang-rt-14-dev
  nginx-light spawn-fcgi prometheus chromium)
# Node.js + npm for the real SDK's test (tests/sdk, ./stack sdk). Debian's
# npm only when no npm is on the machine: a Node.js that bundles its own npm
# (NodeSource's nodejs Conflicts: npm) would be removed by installing it.
command -v npm > /dev/null 2>&1 || RUN_PACKAGES+=(nodejs npm)
PACKAGES=("${BUILD_PACKAGES[@]}" "${RUN_PACKAGES[@]}")

# --- pid files under $RUN ------------------------------------------------
# pid_of NAME: the pid of $RUN/NAME.pid while it runs (tools/lib.sh pid_in).
pid_of() { pid_in "$RUN/$1.pid"; }
running() { [ -n "$(pid_of "$1")" ]; }
# stop_pid NAME: TERM the recorded pid, wait up to 10 s, then KILL.
stop_pid() { stop_pid_file "$RUN/$1.pid"; }

# wait_for NAME SECONDS CMD...: polls CMD until it succeeds; on timeout says
# which component did not come up, shows the end of its log and exits 2.
wait_for() {
  local name=$1 secs=$2; shift 2
  wait_until "$secs" "$@" && return 0
  say "$name did not come up within ${secs}s; last lines of its log:" >&2
  tail -n 25 "$LOG/$name.log" >&2 2>/dev/null
  [ "$name" = lighttpd ] && tail -n 25 "$LOG/fastcgi.log" >&2 2>/dev/null
  exit 2
}

# --- build ----------------------------------------------------------------
builddir() { echo "$STATE/build-$FLAVOR"; }

build() {
  local b; b=$(builddir)
  if [ -f "$ROOT/config.status" ]; then
    say "the source tree was configured in place; cleaning it (./stack builds in $STATE/build-*)"
    make -C "$ROOT" distclean > /dev/null 2>&1 || rm -f "$ROOT/config.status" "$ROOT/Makefile"
  fi
  if [ ! -x "$ROOT/configure" ] || [ ! -f "$ROOT/Makefile.in" ] || [ "$ROOT/configure.ac" -nt "$ROOT/configure" ] \
     || [ -n "$(find "$ROOT" -name local.mk -newer "$ROOT/Makefile.in" -o -name Makefile.am -newer "$ROOT/Makefile.in" | head -n 1)" ]; then
    say "autoreconf"
    (cd "$ROOT" && autoreconf -fi > "$LOG/build.log" 2>&1) || { tail -n 30 "$LOG/build.log"; die "autoreconf failed"; }
  fi
  mkdir -p "$b"
  if [ ! -f "$b/Makefile" ] || [ "$ROOT/configure" -nt "$b/config.status" ]; then
    local flags=(--enable-werror)
    [ "$FLAVOR" = asan ] && flags+=(--enable-sanitizers CFLAGS="-O1 -g")
    [ "$FLAVOR" = release ] && flags+=(CFLAGS="-O2 -g")
    say "configure ($FLAVOR)"
    (cd "$b" && "$ROOT/configure" "${flags[@]}" > "$LOG/configure.log" 2>&1) \
      || { tail -n 30 "$LOG/configure.log"; die "configure failed (log: $LOG/configure.log)"; }
  fi
  make -C "$b" -j"$(nproc)" > "$LOG/build.log" 2>&1 || { grep -E 'error|Error' "$LOG/build.log" | head -n 30; die "build failed (log: $LOG/build.log)"; }
  export IDEMPAY_BIN_DIR=$b
}

# --- MariaDB --------------------------------------------------------------
# mariadb_cli ARGS...: the client as the database root over IDEMPAY_DB_SOCKET.
mariadb_cli() { mariadb --no-defaults -uroot --socket="$IDEMPAY_DB_SOCKET" "$@"; }

start_mariadb() {
  running mariadb && return 0
  if [ ! -d "$DATA/mysql" ]; then
    # --force: a fresh root may have no /etc/hosts, and the install script
    # refuses to run when it cannot resolve the host name (grants then use
    # IP addresses; the server runs with --skip-name-resolve anyway)
    say "initialising MariaDB data dir"
    mariadb-install-db --no-defaults --datadir="$DATA" --user="$(id -un)" \
      --auth-root-authentication-method=socket --skip-test-db --skip-name-resolve --force > "$LOG/mariadb-install.log" 2>&1 \
      || { tail -n 20 "$LOG/mariadb-install.log"; die "mariadb-install-db failed"; }
  fi
  setsid mariadbd --no-defaults --datadir="$DATA" --socket="$IDEMPAY_DB_SOCKET" \
    --port="$IDEMPAY_DB_PORT" --bind-address=127.0.0.1 --pid-file="$RUN/mariadb.pid" \
    --log-error="$LOG/mariadb.log" --user="$(id -un)" --skip-name-resolve \
    --innodb-flush-log-at-trx-commit=1 --sync-binlog=1 --innodb-buffer-pool-size=256M \
    --innodb-log-file-size=128M --max-connections=1000 --character-set-server=utf8mb4 \
    --collation-server=utf8mb4_general_ci --transaction-isolation=READ-COMMITTED \
    > /dev/null 2>&1 < /dev/null &
  wait_for mariadb 60 mariadb-admin --no-defaults -uroot --socket="$IDEMPAY_DB_SOCKET" ping
}

# migrate: the installed tool's way (idempay-migrate --create-users): the
# database root over the socket makes every program's account (the
# IDEMPAY_*DB_USER settings ./stack exports), then
# the migration account applies every sql/ migration not yet in
# idempay.schema_migrations, under GET_LOCK, and the simulator's table grant
# follows.
migrate() {
  "$(builddir)/tools/idempay-migrate" --sql-dir "$ROOT/sql" \
    --create-users --quiet | sed "s/^idempay-migrate: /$SAY_AS: /" \
    || die "migration failed"
}

# ensure_caller: the development caller IDEMPAY_CALLER of the merchant door,
# its secret in IDEMPAY_CALLER_SECRET_FILE (mode 0600), made with the
# service's own commands when the file or the enabled row is missing, or
# when the file's secret is not the key the service derives with this
# IDEMPAY_WX_KEY (the stack restarted with another key: --rekey-caller, which
# keeps the caller's id and so its orders); only under IDEMPAY_DEVELOPMENT=1.
ensure_caller() {
  local f=$IDEMPAY_CALLER_SECRET_FILE salt want out cmd=--add-caller
  salt=$(mariadb_cli -N -B -e "SELECT key_salt FROM idempay.payment_caller WHERE name = '$IDEMPAY_CALLER' AND enabled = 1" 2>/dev/null)
  if [ -n "$salt" ] && [ -s "$f" ]; then
    [ -z "${IDEMPAY_WX_KEY:-}" ] && return 0   # a key file: nothing to compare with here
    want=$(printf 'idempay-caller-v1\n%s\n%s' "$IDEMPAY_CALLER" "$salt" \
      | openssl dgst -sha256 -hmac "$IDEMPAY_WX_KEY" -r | cut -d' ' -f1)
    [ "$want" = "$(head -n 1 "$f")" ] && return 0
  fi
  if [ "$IDEMPAY_DEVELOPMENT" != 1 ]; then
    say "no merchant-door caller made: outside IDEMPAY_DEVELOPMENT=1 add one with idempay-fcgi --add-caller NAME"
    return 0
  fi
  if [ -n "$salt" ]; then
    cmd=--rekey-caller
  else   # absent, or disabled: made anew
    mariadb_cli -e "DELETE FROM idempay.payment_caller WHERE name = '$IDEMPAY_CALLER'" || die "cannot reset caller $IDEMPAY_CALLER"
  fi
  out=$("$(builddir)/app/idempay-fcgi" "$cmd" "$IDEMPAY_CALLER" 2>&1) || { echo "$out"; die "idempay-fcgi $cmd failed"; }
  (umask 077 && printf '%s\n' "$out" | tail -n 1 > "$f") || die "cannot write $f"
  say "development caller $IDEMPAY_CALLER: $cmd (secret in $f)"
}

# --- Redis ----------------------------------------------------------------
# redis_admin_cli PORT ARGS...: redis-cli as the admin user (the default user
# is off).
redis_admin_cli() {
  redis-cli -h 127.0.0.1 -p "$1" --user "$IDEMPAY_REDIS_ADMIN_USER" --pass "$IDEMPAY_REDIS_ADMIN_PASSWORD" \
    --no-auth-warning "${@:2}"
}

# redis_acl: the ACL lines of every Redis the stack and the cluster write
# (tools/conf/redis-acl.conf.in says what each allows).
redis_acl() {
  render "$ROOT/tools/conf/redis-acl.conf.in" user="$IDEMPAY_REDIS_USER" password="$IDEMPAY_REDIS_PASSWORD" \
    admin_user="$IDEMPAY_REDIS_ADMIN_USER" admin_password="$IDEMPAY_REDIS_ADMIN_PASSWORD"
}
