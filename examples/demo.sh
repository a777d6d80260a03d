#!/usr/bin/env bash
# The README's first command: install libuv if needed, build tether and the
# example extensions, and run `tether demo` (arguments are passed on, such
# as --json or --verbose).
set -euo pipefail
cd "$(dirname "$0")/.."
.ci/ensure-system-libraries
# Build messages go to stderr: with --json, stdout carries only the summary.
echo "Building tether, the example extensions and the demo auth server (a few minutes the first time)..." >&2
if ! log=$(swift build 2>&1); then printf '%s\n' "$log" >&2; exit 1; fi
printf '%s\n' "$log" | tail -n 1 >&2
exec "$(swift build --show-bin-path)/tether" demo "$@"
