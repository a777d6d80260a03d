#!/usr/bin/env bash
# The README's first command: install what the build needs if it is
# missing, build tether, the example extensions and the demo auth server (a
# package of its own, examples/DemoAuthServer), and run `tether demo`
# (arguments are passed on, such as --json or --verbose).
set -euo pipefail
cd "$(dirname "$0")/.."
.ci/ensure-system-libraries
# Build messages go to stderr: with --json, stdout carries only the summary.
echo "Building tether, the example extensions and the demo auth server (a few minutes the first time)..." >&2
build() {
    local log
    if ! log=$("$@" 2>&1); then printf '%s\n' "$log" >&2; exit 1; fi
    printf '%s\n' "$log" | tail -n 1 >&2
}
build swift build
build swift build --package-path examples/DemoAuthServer
server="$(swift build --package-path examples/DemoAuthServer --show-bin-path)/demo-auth-server"
exec "$(swift build --show-bin-path)/tether" demo --auth-server "$server" "$@"
