#!/usr/bin/env bash
# The local Temporal dev server for keel: install the CLI, start, stop, inspect.
#
#   ./temporal-dev.sh install   build the Temporal CLI if no binary is found (takes minutes once)
#   ./temporal-dev.sh start     start the dev server in the background (SQLite state, Web UI)
#   ./temporal-dev.sh stop      stop it
#   ./temporal-dev.sh status    say whether it runs, and where
#   ./temporal-dev.sh logs      follow its log (`logs -n 100` prints the last lines only)
#   ./temporal-dev.sh path      print the temporal binary it uses
#
# Environment: TEMPORAL_PORT (default 7233), TEMPORAL_UI_PORT (default 8233),
# KEEL_TEMPORAL_STATE (default .temporal/ beside this script), KEEL_DEV_SERVER_FLAGS (extra flags),
# TEMPORAL_BIN (a temporal binary to use instead of looking for one).
set -euo pipefail

TEMPORAL_VERSION=v1.5.1
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PORT=${TEMPORAL_PORT:-7233}
UI_PORT=${TEMPORAL_UI_PORT:-8233}
STATE=${KEEL_TEMPORAL_STATE:-$ROOT/.temporal}
LOCAL_BIN=$ROOT/.temporal/bin
# A build outside the clone, so a fresh clone on the same machine (CI) does not rebuild.
SHARED_BIN=${XDG_CACHE_HOME:-$HOME/.cache}/keel/temporal-$TEMPORAL_VERSION/bin
DB=$STATE/dev-$PORT.db
PIDFILE=$STATE/dev-$PORT.pid
LOG=$STATE/dev-$PORT.log

# Search attributes keel writes; the dev server must know them before a run upserts them.
SEARCH_ATTRIBUTES=(KeelAgent=Keyword KeelStatus=Keyword)

say() { printf 'temporal-dev: %s\n' "$*" >&2; }

find_temporal() {
  local candidate gopath
  gopath=$(go env GOPATH 2>/dev/null || echo "$HOME/go")
  for candidate in "${TEMPORAL_BIN:-}" "$LOCAL_BIN/temporal" "$SHARED_BIN/temporal" "$(command -v temporal 2>/dev/null || true)" "$gopath/bin/temporal" "$HOME/go/bin/temporal"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

cmd_install() {
  local bin
  if bin=$(find_temporal); then
    say "Temporal CLI found: $bin"
    return 0
  fi
  if ! command -v go >/dev/null 2>&1; then
    say "no temporal binary and no Go toolchain to build one."
    say "install Go (https://go.dev/dl) or the Temporal CLI, or set TEMPORAL_BIN to a temporal binary."
    exit 1
  fi
  say "no temporal binary found; building the Temporal CLI $TEMPORAL_VERSION from the Go module proxy."
  say "this takes a few minutes the first time (later builds reuse Go's cache)..."
  mkdir -p "$SHARED_BIN" "$LOCAL_BIN"
  GOBIN=$SHARED_BIN GOFLAGS=-mod=mod go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_VERSION"
  ln -sf "$SHARED_BIN/temporal" "$LOCAL_BIN/temporal"
  say "installed $SHARED_BIN/temporal (linked from $LOCAL_BIN/temporal)"
}

frontend_answers() {
  "$1" operator cluster health --address "127.0.0.1:$PORT" >/dev/null 2>&1
}

running_pid() {
  [ -f "$PIDFILE" ] || return 1
  local pid
  pid=$(cat "$PIDFILE")
  kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

cmd_start() {
  cmd_install
  local bin pid
  bin=$(find_temporal)
  if frontend_answers "$bin"; then
    say "already running on 127.0.0.1:$PORT (Web UI http://localhost:$UI_PORT)"
    return 0
  fi
  mkdir -p "$STATE"
  local sa_flags=()
  for sa in "${SEARCH_ATTRIBUTES[@]}"; do sa_flags+=(--search-attribute "$sa"); done
  # shellcheck disable=SC2086 # KEEL_DEV_SERVER_FLAGS is a list of flags on purpose
  nohup "$bin" server start-dev \
    --ip 127.0.0.1 --port "$PORT" --ui-port "$UI_PORT" \
    --db-filename "$DB" --log-level warn \
    "${sa_flags[@]}" ${KEEL_DEV_SERVER_FLAGS:-} \
    >>"$LOG" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$PIDFILE"
  say "starting the dev server on 127.0.0.1:$PORT (pid $pid, state $DB, log $LOG)..."
  for _ in $(seq 1 120); do
    if frontend_answers "$bin"; then
      say "ready: 127.0.0.1:$PORT, Web UI http://localhost:$UI_PORT"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      say "the dev server exited; the end of its log ($LOG):"
      tail -n 20 "$LOG" >&2
      rm -f "$PIDFILE"
      exit 1
    fi
    sleep 0.5
  done
  say "the dev server did not answer within 60 s; see $LOG"
  exit 1
}

cmd_stop() {
  local pid
  if ! pid=$(running_pid); then
    say "not running (no live process in $PIDFILE)"
    rm -f "$PIDFILE"
    return 0
  fi
  kill "$pid"
  for _ in $(seq 1 40); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  rm -f "$PIDFILE"
  say "stopped (pid $pid)"
}

cmd_status() {
  local bin pid
  if ! bin=$(find_temporal); then
    say "no temporal binary; run ./temporal-dev.sh install"
    exit 1
  fi
  if frontend_answers "$bin"; then
    pid=$(running_pid || echo "not started by this script")
    echo "running: 127.0.0.1:$PORT, Web UI http://localhost:$UI_PORT, pid $pid, state $DB"
  else
    echo "not running on 127.0.0.1:$PORT (start it with ./temporal-dev.sh start)"
    exit 3
  fi
}

cmd_logs() {
  [ -f "$LOG" ] || { say "no log yet at $LOG"; exit 1; }
  if [ "${1:-}" = "-n" ]; then tail -n "${2:-50}" "$LOG"; else tail -n 50 -f "$LOG"; fi
}

case "${1:-}" in
  install) cmd_install ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  logs) shift; cmd_logs "$@" ;;
  path) find_temporal || { say "no temporal binary; run ./temporal-dev.sh install"; exit 1; } ;;
  -h | --help | help | "") sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) say "unknown command '$1'"; sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
