#!/bin/sh
# A Debian 12 userland for test VMs of another architecture, built once and
# cached: debootstrap for ARCH (a Debian architecture: arm64) into DIR/root,
# the --root of scripts/vm-run.sh (busybox-static for its init) and of
# tests/kernels/matrix.py, which boots it under the kernels of
# tests/kernels/ARCH.list. It holds what the smoke suite (tests/kernels/smoke.py)
# runs: python3, nginx, curl, openssl, bpftool, and the libraries the agent
# links to. No kernel: the matrix boots its own (scripts/fetch-kernels.sh). A
# foreign ARCH runs its package scripts through qemu-user-static
# (scripts/install-deps-arm64.sh registers it).
# DIR/done marks a finished build and holds its package list: a run that was
# cut short starts over, a list that gained packages adds them to the tree.
# Usage: rootfs.sh ARCH DIR
set -e
arch=$1 dir=$2
[ -n "$arch" ] && [ -n "$dir" ] || { echo "usage: $0 ARCH DIR" >&2; exit 2; }
suite=bookworm
mirror=http://deb.debian.org/debian
# What the smoke suite runs, the agent's own shared libraries, and
# busybox-static for vm-run.sh's init.
pkgs="python3,nginx,curl,openssl,ca-certificates,bpftool,iproute2,procps,
libbpf1,libelf1,zlib1g,libmicrohttpd12,libcapstone4,libjansson4,libprotobuf-c1,libsnappy1v5,
libcurl4,busybox-static"
pkgs=$(echo "$pkgs" | tr -d ' \n')
[ -f "$dir/done" ] && [ "$(cat "$dir/done")" = "$pkgs" ] && exit 0
[ "$(id -u)" = 0 ] || { echo "nodescope: building the $arch VM userland needs root (debootstrap)" >&2; exit 1; }

host=$(dpkg --print-architecture)
if [ "$arch" != "$host" ]; then
	case $arch in arm64) q=aarch64 ;; *) q=$arch ;; esac
	if ! grep -qs enabled "/proc/sys/fs/binfmt_misc/qemu-$q"; then
		echo "nodescope: $arch binaries cannot run here (no qemu-$q in binfmt_misc);" \
			"run scripts/install-deps-arm64.sh" >&2
		exit 1
	fi
fi

# A debootstrap killed half-way leaves its /proc mounted in the tree.
awk -v d="$(realpath -m "$dir")/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r |
	while read -r m; do umount -l "$m"; done
if [ -f "$dir/done" ]; then
	# Packages the list gained, installed into the cached tree by its own apt.
	missing=
	for p in $(echo "$pkgs" | tr , ' '); do
		dpkg-query --admindir="$dir/root/var/lib/dpkg" -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q "install ok installed" || missing="$missing $p"
	done
	echo "nodescope: adding$missing to the $arch userland in $dir" >&2
	mount -t proc proc "$dir/root/proc"
	rc=0
	chroot "$dir/root" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends $missing" >>"$dir/debootstrap.log" 2>&1 || rc=$?
	umount "$dir/root/proc"
	[ $rc = 0 ] || { tail -20 "$dir/debootstrap.log" >&2; exit 1; }
	rm -f "$dir/root"/var/cache/apt/archives/*.deb
	echo "$pkgs" >"$dir/done"
	exit 0
fi
rm -rf --one-file-system "$dir" && mkdir -p "$dir"
log=$dir/debootstrap.log
echo "nodescope: debootstrap $suite $arch into $dir/root (a few minutes; log $log)" >&2
fail() {
	tail -20 "$log" >&2
	echo "nodescope: debootstrap failed (whole log: $log)" >&2
	exit 1
}
# Two stages: the first unpacks (no arm64 code runs), the second configures the
# packages by running their scripts under qemu-user in the tree.
debootstrap --foreign --arch="$arch" --variant=minbase --include="$pkgs" "$suite" "$dir/root" \
	"$mirror" >"$log" 2>&1 || fail
chroot "$dir/root" /debootstrap/debootstrap --second-stage >>"$log" 2>&1 || fail
# The downloaded packages are not needed in the image.
rm -f "$dir/root"/var/cache/apt/archives/*.deb
echo "$pkgs" >"$dir/done"
