#!/usr/bin/env bash
# The VM test tier: tests that need a kernel this machine may not give them
# (a pure cgroup v2 hierarchy with the memory and pids controllers and
# cgroup.kill) run in Debian's kernel booted under qemu with virtme-ng
# (software emulation: no KVM needed), as an unprivileged user in a cgroup
# delegated as systemd's Delegate=yes does: the directory, cgroup.procs,
# cgroup.subtree_control and cgroup.threads chowned to the user (each
# test's cgroup is marked delegated by the test).
#
# Usage: scripts/vm-tests.sh [FILTER]   (default the cgroup, sandbox and doctor
# tests, on Debian's 6.1 kernel with Landlock ABI 2; a Swift Testing
# filter). The tests must be built first (swift build --build-tests). Exits
# with the tests' status; 3 when qemu cannot run here (said in one line).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
filter=${1:-CgroupTests|SandboxTests|DoctorTests|ExtensionWorld}
"$root/.ci/ensure-system-libraries" --vm

# virtme-ng, pinned, in a virtual environment of its own (PyPI).
venv="$root/.build/virtme-ng"
if [ ! -x "$venv/bin/vng" ]; then
    echo "Installing virtme-ng 1.42 into $venv..." >&2
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q 'virtme-ng==1.42' >&2
fi
export PATH="$venv/bin:$PATH"  # vng runs virtme-run through PATH

kernel=""
for candidate in /boot/vmlinuz-*; do  # the newest whose modules (9p) are installed
    [ -d "/lib/modules/${candidate#/boot/vmlinuz-}/kernel/fs/9p" ] && kernel=$candidate
done
[ -n "$kernel" ] || { echo "vm-tests: no Debian kernel with its modules in /boot: run apt-get install linux-image-amd64" >&2; exit 3; }
bundle="$root/.build/debug/TetherPackageTests.xctest"
[ -x "$bundle" ] || { echo "vm-tests: build the tests first: swift build --build-tests" >&2; exit 3; }
# The guest runs the tests as nobody, through this machine's directories.
if [ "$(id -u)" = 0 ] && ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$bundle"; then
    echo "vm-tests: nobody cannot reach $bundle, and the guest runs the tests as nobody: clone the repository where every directory above it is searchable by others (chmod o+x), not in one of root's alone" >&2
    exit 2
fi

# The guest: root sets up the delegation, then the tests run as nobody.
# Test cgroups go beside the runner's (its own holds a process, and a
# cgroup with processes cannot hand controllers to its children). One
# cgroup is delegated by ownership alone, as systemd's Delegate=yes with
# User= leaves it (chowned, in a parent root owns, no attribute). Then the
# tests that need root (trusted.* attributes are root's to read) run as
# root. The guest runs 10-20 times slower, so every wait a test bounds is
# given three times as long; three tests at a time (but those that load
# the whole guest; TestTiming's width, VM_TEST_WIDTH): with one, the
# guest's CPUs were idle 58% of the run (9p's round trips), and the tier
# took 1.7 times as long; with two, they were still idle 39%.
guest="$root/.build/vm-guest.sh"
# The filter as a file of its own: no quoting to get wrong.
printf '%s' "$filter" > "$root/.build/vm-filter"
cat > "$guest" <<GUEST
set -e
VM_FILTER=\$(cat "$root/.build/vm-filter")
# The guest's /tmp was this machine's, through an overlay on 9p: with a
# few thousand entries there (SwiftPM leaves one at each run), the tests
# took twice as long. A tmpfs of its own, first (the copies below bind
# into the tree), with the repository bound back where it is when it
# lives in /tmp (a clone in mktemp -d).
case "$root" in /tmp/*) mkdir -p /run/repository && mount --bind "$root" /run/repository ;; esac
mount -t tmpfs -o mode=1777 tmpfs /tmp
case "$root" in /tmp/*) mkdir -p "$root" && mount --bind /run/repository "$root" ;; esac
# The root is 9p without a cache: every exec reads its executable's and
# libraries' pages again from the host, and a start of tether took 4x as
# long as from memory. What the tests exec is copied once into a tmpfs
# (read-only) and bound over itself: same paths, same bytes. Python
# (the tests' extensions) reads little else: its modules are frozen in.
mkdir -p /run/exec-cache && mount -t tmpfs -o mode=0755 tmpfs /run/exec-cache
for file in /opt/swift/usr/lib/swift/linux/*.so "$root"/.build/debug/tether "$root"/.build/debug/example-* \\
        "$root"/.build/debug/SDKFixture "$root"/.build/debug/TetherPackageTests.xctest \\
        /lib64/ld-linux-x86-64.so.2 /lib/x86_64-linux-gnu/libc.so.6 /lib/x86_64-linux-gnu/libm.so.6 \\
        /lib/x86_64-linux-gnu/libstdc++.so.6 /lib/x86_64-linux-gnu/libgcc_s.so.1 \\
        /lib/x86_64-linux-gnu/libuv.so.1 /lib/x86_64-linux-gnu/libseccomp.so.2 \\
        "\$(readlink -f /usr/bin/python3)" /lib/x86_64-linux-gnu/libexpat.so.1 /lib/x86_64-linux-gnu/libz.so.1; do
    [ -f "\$file" ] || continue
    copy=/run/exec-cache/\$(printf '%s' "\$file" | tr / _)
    cp -L "\$file" "\$copy" && mount --bind "\$copy" "\$file"
done
mount -o remount,ro /run/exec-cache
echo '+memory +pids' > /sys/fs/cgroup/cgroup.subtree_control
delegated=/sys/fs/cgroup/tether-vm
mkdir \$delegated \$delegated/runner \$delegated/system \$delegated/system/owned
for file in "" /cgroup.procs /cgroup.subtree_control /cgroup.threads; do
    chown nobody:nogroup "\$delegated\$file" "\$delegated/system/owned\$file"
done
chown -R nobody:nogroup \$delegated/runner
echo '+memory +pids' > \$delegated/cgroup.subtree_control
echo '+memory +pids' > \$delegated/system/cgroup.subtree_control
mkdir -p /tmp/home && chown nobody:nogroup /tmp/home
echo \$\$ > \$delegated/runner/cgroup.procs
cd "$root"
# Waits stretched 5 times: under emulation, in a busy hour, a host took
# over 30 s to say it was ready (3 times the 10 s bound).
set -- env HOME=/tmp/home TMPDIR=/tmp PATH=/usr/local/bin:/usr/bin:/bin TETHER_TEST_TIMINGS=/tmp/vm-test-times TETHER_TEST_CGROUP_PARENT=/tether-vm TETHER_TEST_TIMEOUT_SCALE=5 TETHER_TEST_WIDTH=${VM_TEST_WIDTH:-3} \\
    TETHER_TEST_OWNED_CGROUP=/tether-vm/system/owned "$bundle" --testing-library swift-testing
mountpoint -q /sys/kernel/security || mount -t securityfs securityfs /sys/kernel/security || true
echo "vm-tests: Linux \$(uname -r), security modules \$(cat /sys/kernel/security/lsm 2>/dev/null)"
status=0
read -r _ user nice system idle rest < /proc/stat
# Tests that load the whole guest (a fork bomb, memory hogs) run after
# the others, one at a time: beside another test, its host's answers
# waited on theirs (CI: a status unanswered in 15 s while the hog grew).
alone='aForkBomb|aHogIsKilled|aWidgetAllocatingWithoutBound'
# Pure computation the filter's module name takes in (the ELF reader's
# fuzzing: the same on any kernel, and the guest's third dearest test at
# 19 s): the host's tests prove it.
hostOnly='aHostileELFNeverTrapsTheHost'
setpriv --reuid=nobody --regid=nogroup --clear-groups "\$@" --filter "\$VM_FILTER" --skip "\$alone|\$hostOnly" || status=\$?
# (An ID matching both: the filter's lookahead. 69: none did.)
setpriv --reuid=nobody --regid=nogroup --clear-groups "\$@" --no-parallel --filter "^(?=.*(\$VM_FILTER)).*(\$alone)" \\
    || { code=\$?; [ \$code -eq 69 ] || status=\$code; }
# 69: no test matched (a filter without a root test).
"\$@" --filter "(\$VM_FILTER).*ByRoot" || { code=\$?; [ \$code -eq 69 ] || status=\$code; }
read -r _ user2 nice2 system2 idle2 rest < /proc/stat
busy=\$(( user2 + nice2 + system2 - user - nice - system ))
sort -rn /tmp/vm-test-times 2>/dev/null | awk -F '\t' 'NR <= 10 { printf "vm-tests: %7.1f s  %s\\n", \$1, \$2 }'
echo "vm-tests: the guest's CPUs were idle \$(( 100 * (idle2 - idle) / (busy + idle2 - idle + 1) ))% of the tests' run"
exit \$status
GUEST

. "$root/scripts/tcg-guest.sh"
[ -t 0 ] && exec </dev/null  # a terminal on stdin would stop the VM (SIGTTIN)
set +e -o pipefail
# The guest's console pads its output with NUL bytes: dropped. (vng asks
# for `-cpu max`; the later -cpu wins.)
timeout --kill-after=15 "${VM_TIMEOUT:-600}" vng --run "$kernel" --force-9p --disable-kvm \
    --memory "${VM_MEMORY:-2G}" --cpus "$(nproc)" --qemu-opts="-cpu $tcg_cpu" --append "$tcg_kernel_args lsm=landlock,lockdown,yama,integrity" \
    --exec "sh $guest" <&0 2>&1 | tr -d '\000'
exit "${PIPESTATUS[0]}"
