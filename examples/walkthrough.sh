#!/usr/bin/env bash
# A tour of Tether with real processes, in a throwaway group directory:
# liveness locks (probe, hold, flock(1) interop, a watcher, kill -9), then the
# host with the example extensions, an extension started from the shell,
# a feature probed from a keyboard, a push, and the host killed -9.
set -euo pipefail
cd "$(dirname "$0")/.."
.ci/ensure-system-libraries
echo "Building tether and the example extensions..."
if ! log=$(swift build 2>&1); then printf '%s\n' "$log"; exit 1; fi
printf '%s\n' "$log" | tail -n 1
bin="$(swift build --show-bin-path)"
tether="$bin/tether"

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

kill -9 "$WATCH_PID" 2>/dev/null || true
wait "$WATCH_PID" 2>/dev/null || true
[ -n "$child" ] && kill "$child" 2>/dev/null || true

step "6. Start the host with the three example extensions (the notification one rests idle until a push)" "tether host --extensions-dir examples/extensions &"
mkfifo "$(dirname "$group")/host.out"
"$tether" host --extensions-dir examples/extensions >"$(dirname "$group")/host.out" 2>&1 &
HOST_PID=$!
pids+=("$HOST_PID")
disown "$HOST_PID"
exec 3<"$(dirname "$group")/host.out"
attached=0
# The widget and the keyboard; the notification extension is on demand.
while [ "$attached" -lt 2 ] && read -r line <&3; do
    echo "  host| $line"
    case "$line" in "extension '"*"' attached"*) attached=$((attached + 1)) ;; esac
done
run "$tether" status

step "7. A keyboard started from the shell asks about a feature and starts it" \
    "printf 'is recording running?\\nstart recording\\nis recording running?\\n' | example-keyboard --name shell-keyboard"
printf 'is recording running?\nstart recording\nis recording running?\n' | "$bin/example-keyboard" --name shell-keyboard

step "8. Probe the feature from anywhere" "tether probe feature recording --json"
run "$tether" probe feature recording --json

step "9. A push launches the notification extension, which rewrites it" "tether push '{\"title\":\"Order shipped\",\"body\":\"#42\"}'"
run "$tether" push '{"title":"Order shipped","body":"#42"}'
run "$tether" extension list

step "10. Kill -9 the host: it reads \"not running\" at once, and its extensions end" "kill -9 <host>"
extension_pids=$("$tether" status --json | grep -o '"pid":[0-9]*' | cut -d: -f2 | sort -u | grep -vx "$HOST_PID" || true)
kill -9 "$HOST_PID"
# Gone, or a zombie nobody has reaped yet (it has exited all the same).
ended() { local state; state=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null || true); [ -z "$state" ] || [ "$state" = Z ]; }
wait_gone() { for _ in $(seq 100); do ended "$1" && return 0; sleep 0.01; done; return 1; }
run "$tether" probe host
run "$tether" probe feature recording
for pid in $extension_pids; do
    if wait_gone "$pid"; then echo "extension pid $pid: gone"; else echo "extension pid $pid: STILL RUNNING"; fi
done

printf '\nDone. Next: tether --help, and "tether bench" for the numbers.\n'
