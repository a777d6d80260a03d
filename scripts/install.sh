#!/usr/bin/env bash
# Builds tether and the example extensions as fully static executables
# (scripts/static-build.sh: no Swift runtime, Foundation or libuv needed
# where they run) and installs them into PREFIX/bin (default ~/.local).
# On Debian, scripts/debian-package.sh makes a package of them instead.
#
#   scripts/install.sh [--prefix DIR] [--no-examples]
#
# Installs libuv's development files first if they are missing, since the
# static link uses its archive.
set -euo pipefail

prefix="$HOME/.local"
examples=1
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a directory" >&2; exit 2; }; prefix="$2"; shift 2 ;;
        --prefix=*) prefix="${1#--prefix=}"; shift ;;
        --no-examples) examples=0; shift ;;
        -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ -n "$prefix" ] || { echo "install.sh: the prefix is empty" >&2; exit 2; }
# Relative to where it was run from, not to the repository.
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
cd "$(dirname "$0")/.."

only=()
[ "$examples" = 1 ] || only=(--no-examples)
bin=$(scripts/static-build.sh "${only[@]}")
demo_bin=""
if [ "$examples" = 1 ]; then
    # The demo's auth server is a package of its own (FlyingFox).
    if ! log=$(swift build -c release --package-path examples/DemoAuthServer 2>&1); then
        printf '%s\n' "$log" >&2
        exit 1
    fi
    demo_bin=$(swift build -c release --package-path examples/DemoAuthServer --show-bin-path)
fi

mkdir -p "$prefix/bin"
products=(tether)
[ "$examples" = 1 ] && products+=(example-widget example-keyboard example-notification example-token-storm demo-auth-server)
for product in "${products[@]}"; do
    from="$bin/$product"
    [ "$product" = demo-auth-server ] && from="$demo_bin/$product"
    # Copy then rename: a running tether keeps its old file, and no reader sees half a binary.
    install -m 0755 "$from" "$prefix/bin/.$product.new"
    mv -f "$prefix/bin/.$product.new" "$prefix/bin/$product"
done
# The man pages (docs/man, in step with the commands by ManPageTests).
mkdir -p "$prefix/share/man/man1"
for page in docs/man/*.1; do
    install -m 0644 "$page" "$prefix/share/man/man1/$(basename "$page")"
done
echo "installed ${products[*]} into $prefix/bin, and the man pages into $prefix/share/man/man1" >&2
case ":$PATH:" in *":$prefix/bin:"*) ;; *) echo "note: $prefix/bin is not on your PATH" >&2 ;; esac
