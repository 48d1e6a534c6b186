#!/bin/sh
# Installs what the arm64 build and its VM check need, beside scripts/install-deps.sh
# (which `make deps` runs; nothing here slows it down): Debian's arm64 libraries through
# multiarch (the cross build links against them with clang and lld), qemu-system-arm
# to boot Debian's arm64 kernel, debootstrap and qemu-user-static for the arm64
# userland. Registers qemu-user for arm64 ELF files with binfmt_misc (for
# debootstrap's package scripts) when nothing did. Quick when all is there.
set -e
# gcc-aarch64-linux-gnu would be the usual cross compiler, but Debian makes every gcc
# cross compiler conflict with gcc-multilib, which the x86 tests need (32-bit clients):
# clang cross-compiles instead, and lld links.
PKGS="clang lld libc6-dev:arm64 libgcc-12-dev:arm64 libbpf-dev:arm64 libelf-dev:arm64
      zlib1g-dev:arm64 libmicrohttpd-dev:arm64 libcapstone-dev:arm64 libssl3:arm64
      libgnutls30:arm64 libcmocka-dev:arm64 libjansson-dev:arm64
      libprotobuf-c-dev:arm64 libsnappy-dev:arm64 libcurl4-openssl-dev:arm64 libssl-dev:arm64 qemu-system-arm qemu-user-static debootstrap
      golang-go
      e2fsprogs"
root() {
	if [ "$(id -u)" != 0 ]; then
		echo "nodescope: $1; run as root (sudo make ...)" >&2
		exit 1
	fi
}
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	root "missing Debian packages:$missing"
	export DEBIAN_FRONTEND=noninteractive
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		echo "nodescope: adding arm64 as a dpkg architecture (multiarch)" >&2
		dpkg --add-architecture arm64
	fi
	echo "nodescope: installing:$missing" >&2
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# binfmt_misc: in a container nobody may have mounted or registered it.
if ! grep -qs enabled /proc/sys/fs/binfmt_misc/qemu-aarch64; then
	root "qemu-aarch64 is not registered with binfmt_misc"
	[ -e /proc/sys/fs/binfmt_misc/register ] ||
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
	# the F flag: the interpreter is opened now, so it works inside a chroot too
	/lib/systemd/systemd-binfmt /usr/lib/binfmt.d/qemu-aarch64.conf
	grep -qs enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 || {
		echo "nodescope: could not register qemu-aarch64 with binfmt_misc" >&2
		exit 1
	}
fi
