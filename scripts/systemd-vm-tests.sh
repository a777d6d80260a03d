#!/usr/bin/env bash
# The systemd tier: the host as a user service where users run it. Debian
# 12 with systemd 252 as PID 1 and a lingering user (tether, uid 1000),
# booted under qemu (software emulation, no KVM) from a root built once per
# build folder with mmdebstrap. The Debian package this tree built
# (scripts/debian-package.sh) is installed into it on each run, as a user
# would install it; scripts/systemd-vm-guest.sh runs as root once the guest
# has booted, acts as the user, prints one "CHECK NAME ok|FAILED ..." line
# per case, then powers the guest off. The root has no GLib; its packages
# are in it, installed halfway through, and the hosts are proven again.
#
# Usage: scripts/systemd-vm-tests.sh [PACKAGE.deb]
#   (default: .build/debian/tether_*.deb; make it first: scripts/debian-package.sh)
#        scripts/systemd-vm-tests.sh --root-only
#   builds the guest's root alone, if need be, and exits (CI does it early,
#   while the CPUs have room).
# VM_CPUS (default: all), VM_MEMORY (2G), VM_TIMEOUT (600 s).
# Exits 0 when every check held, 1 when one failed (or the root could not
# be built for another reason), 3 when it cannot run here (no Debian
# mirror reachable to build the root from).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/.ci/ensure-system-libraries" --systemd-vm
root_only=false
[ "${1:-}" = --root-only ] && { root_only=true; shift; }
package=${1:-$(ls -t "$root"/.build/debian/tether_*.deb 2>/dev/null | head -n 1 || true)}
[ "$root_only" = true ] || [ -f "$package" ] || { echo "systemd-vm-tests: no package to install: make it first: scripts/debian-package.sh" >&2; exit 1; }
work="$root/.build/systemd-vm"
mkdir -p "$work"

# The root, once for its list of packages: systemd, the user's bus,
# python3 for test extensions, and what the package depends on (libcurl4,
# libsystemd0). No GLib: the user's manager is reached without it. GLib's
# packages wait in /var/cache/glib, for the second half.
packages=systemd,systemd-sysv,dbus,dbus-user-session,libpam-systemd,python3,procps,passwd,mawk,libcurl4
glib=libglib2.0-0
if [ "$(cat "$work/root.done" 2>/dev/null)" != "$packages $glib" ]; then
    [ "$(id -u)" -eq 0 ] || { echo "systemd-vm-tests: building the guest's root (mmdebstrap --mode=root) needs root" >&2; exit 3; }
    # An mmdebstrap killed mid-way (kill -9: CI's end, a reboot) leaves
    # its mounts in the root (/proc, /sys, /dev/pts, /dev/shm): they go,
    # deepest first, and the removal never crosses into a mount.
    awk -v under="$work/root/" 'index($2, under) == 1 { print $2 }' /proc/mounts | sort -r \
        | while read -r mount; do umount --lazy "$mount" || true; done
    rm -rf --one-file-system "$work/root"
    set +e
    mmdebstrap --variant=minbase --mode=root \
      --include="$packages" \
      --customize-hook='chroot "$1" useradd -m -u 1000 -s /bin/bash tether' \
      --customize-hook='mkdir -p "$1/var/lib/systemd/linger" && touch "$1/var/lib/systemd/linger/tether"' \
      --customize-hook='systemd-machine-id-setup --root "$1"' \
      --customize-hook='echo tether-vm > "$1/etc/hostname"' \
      --customize-hook='cat > "$1/etc/systemd/system/vm-test.service" <<UNIT
[Unit]
Description=The systemd tier: runs /usr/local/bin/vm-test once booted, then powers off
After=user@1000.service
[Service]
Type=simple
ExecStart=/usr/local/bin/vm-test
ExecStopPost=/bin/systemctl poweroff --no-block
StandardOutput=tty
StandardError=inherit
TTYPath=/dev/ttyS0
[Install]
WantedBy=multi-user.target
UNIT
chroot "$1" systemctl enable vm-test.service' \
      --customize-hook='chroot "$1" systemctl mask serial-getty@ttyS0.service getty@tty1.service' \
      --customize-hook="rm -f \"\$1\"/var/cache/apt/archives/*.deb && chroot \"\$1\" apt-get install --download-only -y -q $glib && mkdir -p \"\$1/var/cache/glib\" && mv \"\$1\"/var/cache/apt/archives/*.deb \"\$1/var/cache/glib/\"" \
      --customize-hook='rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*' \
      bookworm "$work/root" > "$work/mmdebstrap.log" 2>&1
    built=$?
    set -e
    # No mirror to be had (no network, no name service, a proxy refusing)
    # is a machine that cannot run this tier; any other failure (a hook, a
    # package's name) is this script's, and fails. apt's final verdicts
    # only: a lookup that failed once and then worked leaves its line too.
    unreachable='Temporary failure resolving|Something wicked happened resolving|Could not resolve|Could not connect|Unable to connect|Connection (timed out|refused|failed)|Network is unreachable|No route to host|(403|407|502|503|504)  '
    if [ "$built" -ne 0 ] && grep -qE "^(E|W): .*($unreachable)" "$work/mmdebstrap.log"; then
        echo "systemd-vm-tests: cannot build the guest's root (no Debian mirror reachable): $(grep -m1 -E '^E: ' "$work/mmdebstrap.log")" >&2
        exit 3
    elif [ "$built" -ne 0 ]; then
        echo "systemd-vm-tests: mmdebstrap failed building the guest's root:" >&2
        grep -E '^(E|W): ' "$work/mmdebstrap.log" | tail -n 5 >&2 || tail -n 5 "$work/mmdebstrap.log" >&2
        exit 1
    fi
    echo "$packages $glib" > "$work/root.done"
fi
[ "$root_only" = false ] || exit 0

# This run's package, installed as a user installs it (apt would fetch
# nothing: what it depends on is in the root).
[ "$(id -u)" -eq 0 ] || { echo "systemd-vm-tests: installing the package into the guest's root (chroot) needs root" >&2; exit 3; }
rm -rf "$work/root/opt/swift" "$work/root/usr/local/bin/tether"
cp "$package" "$work/root/tmp/tether.deb"
chroot "$work/root" dpkg -i /tmp/tether.deb > "$work/dpkg.log" 2>&1 \
    || { echo "systemd-vm-tests: the package does not install: $(tail -3 "$work/dpkg.log")" >&2; exit 1; }
rm -f "$work/root/tmp/tether.deb"
mkdir -p "$work/root/usr/local/bin"
install -m 0755 "$root/scripts/systemd-vm-guest.sh" "$work/root/usr/local/bin/vm-test"
size_mb=$(( $(du -sm "$work/root" | cut -f1) * 13 / 10 + 64 ))
rm -f "$work/root.img"
mke2fs -q -t ext4 -L vm-root -d "$work/root" "$work/root.img" "${size_mb}M"

kernel=$(ls /boot/vmlinuz-* | tail -1)
initrd=/boot/initrd.img-${kernel#/boot/vmlinuz-}
. "$root/scripts/tcg-guest.sh"
log="$work/console.log"
exec </dev/null
set +e -o pipefail
timeout --kill-after=15 "${VM_TIMEOUT:-600}" qemu-system-x86_64 \
    -machine q35 -accel tcg -cpu "$tcg_cpu" -smp "${VM_CPUS:-$(nproc)}" -m "${VM_MEMORY:-2G}" \
    -display none -monitor none -serial stdio -no-reboot \
    -kernel "$kernel" -initrd "$initrd" \
    -drive file="$work/root.img",if=virtio,format=raw,snapshot=on \
    -append "root=/dev/vda rw console=ttyS0 quiet loglevel=1 systemd.show_status=0 $tcg_kernel_args" \
    2>&1 | stdbuf -o0 tr -d '\000' | tee "$log"
rc=${PIPESTATUS[0]}
[ "$rc" = 124 ] && { echo "systemd-vm-tests: the guest did not finish within ${VM_TIMEOUT:-600} s" >&2; exit 1; }
grep -q "^VM-TEST-DONE" "$log" || { echo "systemd-vm-tests: the guest's test did not finish" >&2; exit 1; }
if grep -q "^CHECK .* FAILED" "$log"; then exit 1; fi
echo "systemd-vm-tests: $(grep -c "^CHECK .* ok" "$log") checks held in $SECONDS s"
