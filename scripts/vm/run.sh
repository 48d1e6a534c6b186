#!/bin/sh
# Boots a test VM of ARCH and runs a payload in it: Debian's kernel and
# userland from CACHE (built by scripts/vm/rootfs.sh), the directory PAYLOAD
# as a second disk whose ./run the guest's init runs (with a scratch dir as
# $1). The root disk is a snapshot: every run starts from the same image.
# The console goes to stdout and to LOG; the exit status is the payload's
# (124 when the VM ran out of TIMEOUT seconds, 125 when it printed none).
# Usage: run.sh ARCH CACHE PAYLOAD LOG [TIMEOUT]
set -e
arch=$1 cache=$2 payload=$3 log=$4 timeout=${5:-1800}
[ -n "$log" ] || { echo "usage: $0 ARCH CACHE PAYLOAD LOG [TIMEOUT]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/arch.sh"
[ -f "$cache/done" ] || { echo "nodescope: no $arch VM userland in $cache (scripts/vm/rootfs.sh)" >&2; exit 1; }
command -v "$qemu" >/dev/null || { echo "nodescope: $qemu missing (make deps-arm64)" >&2; exit 1; }

# The root image, rebuilt when the tree or the init changed. mkfs.ext4 -d
# copies a directory into a new file system without mounting anything.
img=$cache/root.img
if [ ! -f "$img" ] || [ "$cache/done" -nt "$img" ] || [ "$here/guest-init.sh" -nt "$img" ]; then
	install -m 755 "$here/guest-init.sh" "$cache/root/sbin/nodescope-vm-init"
	mb=$(( $(du -sm "$cache/root" | cut -f1) + 1024 ))
	rm -f "$img.tmp"
	mkfs.ext4 -q -F -L nsroot -d "$cache/root" "$img.tmp" "${mb}M"
	mv "$img.tmp" "$img"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/nodescope-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT
mb=$(( $(du -sm "$payload" | cut -f1) + 64 ))
mkfs.ext4 -q -F -L nspayload -d "$payload" "$work/payload.img" "${mb}M"

echo "nodescope: booting $arch ($(cat "$cache/kernel-release")) under $qemu; console in $log" >&2
{
timeout --foreground -k 10 "$timeout" "$qemu" $qemu_machine -smp 2 -m 2048 \
	-nographic -no-reboot -nic none \
	-kernel "$cache/vmlinuz" -initrd "$cache/initrd.img" \
	-append "root=/dev/vda rw console=$console init=/sbin/nodescope-vm-init panic=-1 loglevel=4" \
	-drive "file=$img,format=raw,if=none,id=root,snapshot=on" -device "$disk,drive=root" \
	-drive "file=$work/payload.img,format=raw,if=none,id=payload,readonly=on" \
	-device "$disk,drive=payload" \
	-device virtio-rng-pci </dev/null
echo $? >"$work/rc"
} 2>&1 | tee "$log"
rc=$(cat "$work/rc")
[ "$rc" = 124 ] && { echo "nodescope: the $arch VM did not finish in ${timeout}s" >&2; exit 124; }
status=$(sed -n 's/^nodescope-vm: exit \([0-9]*\).*/\1/p' "$log" | tail -1)
[ -n "$status" ] || { echo "nodescope: the $arch VM ended without a payload status (see $log)" >&2; exit 125; }
exit "$status"
