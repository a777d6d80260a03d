#!/usr/bin/env bash
# Builds a Debian package of Tether from this clone, then checks it with
# lintian (errors and warnings fail; docs/packaging/lintian-overrides gives
# the reasons for what is overridden). Prints the package's path on
# standard output.
#
#   scripts/debian-package.sh [--out DIR] [--no-lintian]
#
# The package: the static tether (scripts/static-build.sh) in /usr/bin, the
# example extensions in /usr/libexec/tether with their manifests in
# /usr/share/tether/extensions, the man pages (docs/man), bash, zsh and fish
# completions, the tether@ user unit templates in /usr/lib/systemd/user,
# the docs, a copyright file and a changelog. Needs dpkg-deb and lintian
# (.ci/ensure-system-libraries --package installs them).
set -euo pipefail
# The package's modes are policy's, whatever the caller's umask.
umask 022
out=""
check=1
while [ $# -gt 0 ]; do
    case "$1" in
        --out) [ $# -ge 2 ] || { echo "debian-package.sh: --out needs a directory" >&2; exit 2; }; out="$2"; shift 2 ;;
        --out=*) out="${1#--out=}"; shift ;;
        --no-lintian) check=0; shift ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "debian-package.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
case "$out" in "") out="$root/.build/debian" ;; /*) ;; *) out="$PWD/$out" ;; esac
cd "$root"
.ci/ensure-system-libraries --package >&2

# Stripped below: no debug information is made to begin with.
bin=$(scripts/static-build.sh --no-debug-info tether example-widget example-keyboard example-notification)
version=$("$bin/tether" --version)
arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage="$work/tether_${version}_$arch"
share="$stage/usr/share"
doc="$share/doc/tether"
install -d -m 0755 "$stage/DEBIAN" "$stage/usr/bin" "$stage/usr/libexec/tether" "$share/tether/extensions" \
    "$share/man/man1" "$share/bash-completion/completions" "$share/zsh/vendor-completions" \
    "$share/fish/vendor_completions.d" "$stage/usr/lib/systemd/user" "$doc" "$share/lintian/overrides"

# Stripped as dh_strip strips: a static executable carries its debug info otherwise.
strip_into() { install -m 0755 "$1" "$2" && strip --strip-unneeded --remove-section=.comment --remove-section=.note "$2"; }
strip_into "$bin/tether" "$stage/usr/bin/tether"
for example in example-widget example-keyboard example-notification; do
    strip_into "$bin/$example" "$stage/usr/libexec/tether/$example"
    # A bare name is looked up beside tether: the package's are in /usr/libexec/tether.
    sed "s|\"executable\": \"$example\"|\"executable\": \"/usr/libexec/tether/$example\"|" \
        "examples/extensions/$example.extension.json" > "$share/tether/extensions/$example.extension.json"
    grep -q "/usr/libexec/tether/$example" "$share/tether/extensions/$example.extension.json" \
        || { echo "debian-package.sh: examples/extensions/$example.extension.json does not name $example" >&2; exit 1; }
done
for page in docs/man/*.1; do
    gzip -9n < "$page" > "$share/man/man1/$(basename "$page").gz"
done
# A completion is sourced, not run: no #! line (lintian).
"$bin/tether" --generate-completion-script bash | sed '1{/^#!/d}' > "$share/bash-completion/completions/tether"
"$bin/tether" --generate-completion-script zsh > "$share/zsh/vendor-completions/_tether"
"$bin/tether" --generate-completion-script fish > "$share/fish/vendor_completions.d/tether.fish"
"$bin/tether" service templates --directory "$stage/usr/lib/systemd/user" --executable /usr/bin/tether >&2
cp docs/packaging/lintian-overrides "$share/lintian/overrides/tether"

# The docs: README and docs/*.md, compressed past 4 KiB as policy asks.
for file in README.md docs/*.md; do
    name=$(basename "$file")
    if [ "$(stat -c %s "$file")" -gt 4096 ]; then gzip -9n < "$file" > "$doc/$name.gz"; else cp "$file" "$doc/$name"; fi
done
cp docs/packaging/copyright "$doc/copyright"
maintainer="${DEBFULLNAME:-$(git log -1 --format=%an 2>/dev/null || echo 'The Tether developers')} <${DEBEMAIL:-$(git log -1 --format=%ae 2>/dev/null || echo "$(id -un)@localhost")}>"
date=$(git log -1 --format=%cD 2>/dev/null || date -R)
{
    echo "tether ($version) unstable; urgency=medium"
    echo
    echo "  * Release $version, built from $(git describe --always --dirty 2>/dev/null || echo 'a source tree')."
    echo "    The changes are in the repository's history and its design record."
    echo
    echo " -- $maintainer  $date"
} | gzip -9n > "$doc/changelog.gz"

# What the static tether loads at run time: libcurl for HTTP and
# libsystemd's sd-bus for D-Bus (dlopen), which a static glibc can do only
# with the glibc it was built against; the archives it was linked with
# are named in Built-Using, as policy asks of a static link.
glibc=$(dpkg-query -W -f='${Version}' libc6)
glibc_upstream=${glibc%%-*}
next_glibc="${glibc_upstream%.*}.$(( ${glibc_upstream##*.} + 1 ))"
built_using=$(dpkg-query -W -f='${source:Package} (= ${source:Version}), ' libc6-dev libseccomp-dev libuv1-dev)
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
find "$stage" -type d -exec chmod 0755 {} +
(cd "$stage" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums"
cat > "$stage/DEBIAN/control" <<CONTROL
Package: tether
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: libc6 (>= $glibc_upstream), libc6 (<< $next_glibc), libcurl4 | libcurl3-gnutls, libsystemd0
Recommends: systemd, dbus-user-session
Suggests: gnome-keyring, ibus, dunst | notification-daemon, python3
Built-Using: ${built_using%, }
Section: utils
Priority: optional
Description: host for app extensions on Linux, as iOS has them
 Tether launches extension executables (widgets, keyboards, notification
 services) and governs them as iOS does: on demand, idle-ended, restarted
 with backoff, watched, each in a world of its own confined by Landlock,
 seccomp and its cgroup. Host and extensions share a group directory;
 any process learns whether the host or a feature is alive by probing a
 lock, and shared OAuth credentials are refreshed exactly once across
 all processes.
 .
 This package holds the tether command, its man pages and completions,
 the tether@ user unit templates (tether service install enables one per
 group) and three example extensions.
CONTROL
mkdir -p "$out"
package="$out/tether_${version}_$arch.deb"
# Checked under its final name in the work folder, moved out only if it passes.
# xz at level 1: 3 s on 2 cores, 22 MB; the default level 6 took 20 s for 19 MB.
dpkg-deb --root-owner-group -Zxz -z1 --build "$stage" "$work/$(basename "$package")" >&2
if [ "$check" = 1 ]; then
    lintian --fail-on error,warning "$work/$(basename "$package")" >&2 \
        || { echo "debian-package.sh: lintian found errors or warnings in the package; none was written" >&2; exit 1; }
fi
mv -f "$work/$(basename "$package")" "$package"
echo "$package"
