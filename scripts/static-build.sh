#!/usr/bin/env bash
# Builds tether (and, unless --no-examples, the example extensions) as fully
# static executables: no Swift runtime, Foundation or libuv needed where
# they run, and they start about as fast as flock(1). Prints the folder
# that holds them on standard output; the build's own lines go to standard
# error. Used by scripts/install.sh and scripts/debian-package.sh.
#
#   scripts/static-build.sh [--no-debug-info] [--no-examples | PRODUCT...]
#   (PRODUCT: tether or an example, to build only those; the Debian package
#   ships no token storm; --no-debug-info: for a package that strips its
#   binaries anyway, a build that makes none: less to compile and link)
#
# Installs libuv's and libseccomp's development files first if they are
# missing (.ci/ensure-system-libraries): the static link uses their
# archives.
set -euo pipefail
examples=1
products=()
debug_info=()
scratch=.build-static
# Swift and C alike; a folder of its own, as the other flags have (below).
if [ "${1:-}" = "--no-debug-info" ]; then debug_info=(-debug-info-format none); scratch=.build-static-nodebug; shift; fi
# What it can build: tether first, then the examples.
known=(tether example-widget example-keyboard example-notification example-token-storm)
case "${1:-}" in
    "") ;;
    --no-examples) examples=0 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    tether|example-*)
        for product in "$@"; do
            case " ${known[*]} " in
                *" $product "*) products+=("$product") ;;
                *) echo "static-build.sh: no product '$product' (tether or an example; see --help)" >&2; exit 2 ;;
            esac
        done ;;
    *) echo "static-build.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."

.ci/ensure-system-libraries >&2
# Debian ships the static libuv as libuv_a.a; the linker looks for libuv.a.
static_uv=""
for dir in $(pkg-config --variable=libdir libuv 2>/dev/null) /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib; do
    for name in libuv_a.a libuv.a; do
        [ -f "$dir/$name" ] && { static_uv="$dir/$name"; break 2; }
    done
done
[ -n "$static_uv" ] || { echo "static-build.sh: no static libuv found; run: sudo apt-get install -y libuv1-dev" >&2; exit 3; }
links=$(mktemp -d)
trap 'rm -rf "$links"' EXIT
ln -s "$static_uv" "$links/libuv.a"

echo "Building a static release of tether (several minutes the first time)..." >&2
if [ ${#products[@]} -eq 0 ]; then
    products=(tether)
    [ "$examples" = 1 ] && products+=("${known[@]:1}")
fi
# A build folder of its own: the static flags would rebuild .build/release.
flags=(--scratch-path "$scratch" -c release --static-swift-stdlib -Xswiftc -static-executable -Xlinker -L"$links"
       "${debug_info[@]}")
# One product at a time (the package's other targets, its test support
# among them, are not for a static link); the later ones reuse the first's.
for product in "${products[@]}"; do
    if ! log=$(swift build "${flags[@]}" --product "$product" 2>&1); then
        printf '%s\n' "$log" >&2
        exit 1
    fi
done
printf '%s\n' "$log" | tail -n 1 >&2
swift build "${flags[@]}" --show-bin-path
