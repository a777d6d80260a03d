#!/usr/bin/env bash
# A tour of Tether's liveness locks with real processes, in a throwaway group
# directory: probe, hold, flock(1) interop, a watcher, kill -9.
set -euo pipefail
cd "$(dirname "$0")/.."
.ci/ensure-libuv
echo "Building tether..."
swift build --product tether 2>&1 | tail -n 1
tether="$(swift build --show-bin-path)/tether"

group="$(mktemp -d /tmp/tether-walkthrough.XXXXXX)/group"
# Every tether command below uses this group directory (same as --group DIR).
export TETHER_GROUP="$group"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    rm -rf "$(dirname "$group")"
}
trap cleanup EXIT

if [ -t 1 ]; then bold=$'\033[1m'; plain=$'\033[0m'; else bold=""; plain=""; fi
step() { printf '\n%s== %s%s\n$ %s\n' "$bold" "$1" "$plain" "$2"; }
run() { "$@" || echo "(exit $?)"; }

step "1. Nobody holds the 'recording' feature yet" "tether probe feature recording"
run "$tether" probe feature recording

step "2. Hold it while a command runs (in the background)" "tether hold feature recording -- sleep 300 &"
"$tether" hold feature recording -- sleep 300 &
holder=$!
disown "$holder"
pids+=("$holder")
"$tether" watch feature recording --until running --timeout 10 >/dev/null
child=$(pgrep -P "$holder" sleep || true)
[ -n "$child" ] && pids+=("$child")
run "$tether" probe feature recording --json

step "3. util-linux flock(1) sees the same lock" "flock -n \$TETHER_GROUP/locks/features/recording.lock true"
if flock -n "$group/locks/features/recording.lock" true; then echo "acquired (unexpected)"; else echo "busy (exit $?)"; fi

step "4. A second holder is refused" "tether hold feature recording -- true"
run "$tether" hold feature recording -- true

step "5. A watcher is told the instant the holder is killed -9" "tether watch feature recording   # then: kill -9 <holder>"
coproc WATCH { exec "$tether" watch feature recording; }
pids+=("$WATCH_PID")
disown "$WATCH_PID"
read -r state <&"${WATCH[0]}"
echo "watcher: $state"
start=$(date +%s%N)
kill -9 "$holder"
read -r state <&"${WATCH[0]}"
echo "watcher: $state  ($(( ($(date +%s%N) - start) / 1000 )) us after kill -9, shell overhead included)"
echo "The holder's command (pid ${child:-?}) still runs, but it never had the lock:"
run "$tether" probe feature recording

printf '\nDone. Next: tether --help, and "tether bench" for the numbers.\n'
