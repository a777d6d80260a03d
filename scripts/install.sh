#!/usr/bin/env bash
# Builds tether and the example extensions as fully static executables (no
# Swift runtime, Foundation or libuv needed where they run; they start about
# as fast as flock(1)) and installs them into PREFIX/bin (default ~/.local).
#
#   scripts/install.sh [--prefix DIR] [--no-examples]
#
# Installs libuv's development files first if they are missing (as
# .ci/ensure-system-libraries does), since the static link uses its libuv_a.a.
set -euo pipefail

prefix="$HOME/.local"
examples=1
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a directory" >&2; exit 2; }; prefix="$2"; shift 2 ;;
        --prefix=*) prefix="${1#--prefix=}"; shift ;;
        --no-examples) examples=0; shift ;;
        -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ -n "$prefix" ] || { echo "install.sh: the prefix is empty" >&2; exit 2; }
# Relative to where it was run from, not to the repository.
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
cd "$(dirname "$0")/.."

.ci/ensure-system-libraries
# Debian ships the static libuv as libuv_a.a; the linker looks for libuv.a.
static_uv=""
for dir in $(pkg-config --variable=libdir libuv 2>/dev/null) /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib; do
    for name in libuv_a.a libuv.a; do
        [ -f "$dir/$name" ] && { static_uv="$dir/$name"; break 2; }
    done
done
[ -n "$static_uv" ] || { echo "install.sh: no static libuv found; run: sudo apt-get install -y libuv1-dev" >&2; exit 3; }
links=$(mktemp -d)
trap 'rm -rf "$links"' EXIT
ln -s "$static_uv" "$links/libuv.a"

echo "Building a static release of tether (several minutes the first time)..." >&2
only=()
[ "$examples" = 1 ] || only=(--product tether)
if ! log=$(swift build -c release --static-swift-stdlib -Xswiftc -static-executable -Xlinker -L"$links" "${only[@]}" 2>&1); then
    printf '%s\n' "$log" >&2
    exit 1
fi
printf '%s\n' "$log" | tail -n 1 >&2
bin=$(swift build -c release --show-bin-path)
demo_bin=""
if [ "$examples" = 1 ]; then
    # The demo's auth server is a package of its own (Hummingbird).
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
