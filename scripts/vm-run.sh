#!/bin/bash
# Boots a kernel under qemu (TCG: no KVM needed) and runs one command inside, on a root
# filesystem shared from this machine; exits with the command's exit code.
#
#   vm-run.sh [options] KERNEL_DIR [--] COMMAND [ARG...]
#
# KERNEL_DIR holds vmlinuz and lib/modules/VERSION with its modules.dep (scripts/fetch-kernels.sh
# makes them). Inside the VM: ROOT (default /) over virtio-9p read-only, with a tmpfs overlay on
# top so the command may write anywhere (and nothing reaches ROOT); proc, sys, dev, devpts,
# tracefs, debugfs, bpffs and cgroup2 mounted; /tmp and /run tmpfs; loopback up. The command
# runs as root in the caller's directory, then the VM powers off.
#
# Options:
#   --arch ARCH      Debian's name of the VM's architecture (default amd64; the table below)
#   --root DIR       root filesystem: a userland of ARCH with busybox-static at bin/busybox
#   --share DIR      also share DIR read-write at the same path (repeatable): results come out here
#   --share-ro DIR   also share DIR read-only at the same path (repeatable; the kernel matrix
#                    shares the checkout so); shares are mounted in the order given
#   --timeout S      power off by force after S seconds (default 300): exit 124, console shown
#   --log FILE       the serial console (kernel and command output) goes here too
#   --quiet          console only to --log, and to stderr when the run fails
#   --mem MB, --cpus N   the VM's size (default 1024, 2)
#
# Exit: the command's code; 124 timed out; 125 the VM stopped without running it to the end
# (module, mount or kernel failure: the console log says which).
set -euo pipefail
usage() { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
die() { echo "vm-run: $*" >&2; exit 125; }

kdir= arch=amd64 root=/ timeout=300 log= quiet= mem=1024 cpus=2 shares=()
while [ $# -gt 0 ]; do
	case $1 in
	--arch) arch=$2; shift 2 ;;
	--root) root=$2; shift 2 ;;
	--share) shares+=("rw $(realpath "$2")"); shift 2 ;;
	--share-ro) shares+=("ro $(realpath "$2")"); shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--log) log=$2; shift 2 ;;
	--quiet) quiet=1; shift ;;
	--mem) mem=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	-h|--help) usage ;;
	--) shift; break ;;
	-*) echo "vm-run: unknown option $1" >&2; usage ;;
	*) [ -n "$kdir" ] && break; kdir=$(realpath "$1"); shift ;;
	esac
done
[ -n "$kdir" ] && [ $# -ge 1 ] || usage

# Everything that depends on the architecture: qemu and its machine, the serial console's name,
# and the modules the 9p root needs (with their dependencies, unless built in).
case $arch in
amd64)
	qemu=qemu-system-x86_64
	# qboot and the ELF inside the bzImage (booted through its PVH entry) start the kernel in
	# under a second; SeaBIOS and a bzImage decompressing itself under TCG took ~10 s.
	machine=(-M pc -cpu max -bios /usr/share/qemu/qboot.rom)
	image=vmlinux
	console=ttyS0
	modules="virtio_pci 9pnet_virtio 9p overlay" ;;
arm64)
	qemu=qemu-system-aarch64
	machine=(-M virt -cpu max)
	image=vmlinuz
	console=ttyAMA0
	modules="virtio_pci 9pnet_virtio 9p overlay" ;;
*) die "no machine known for architecture '$arch' (amd64, arm64)" ;;
esac

command -v $qemu >/dev/null || die "$qemu is missing (scripts/install-deps.sh installs it)"
for t in cpio modprobe readelf; do
	command -v $t >/dev/null || die "$t is missing (scripts/install-deps.sh installs it)"
done
[ -f "$kdir/vmlinuz" ] || die "$kdir/vmlinuz is missing (scripts/fetch-kernels.sh makes it)"
kver=$(ls "$kdir/lib/modules" 2>/dev/null | head -1)
[ -f "$kdir/lib/modules/$kver/modules.dep" ] || die "no lib/modules/*/modules.dep in $kdir"
busybox=$root/bin/busybox
[ -x "$busybox" ] || die "$busybox is missing (the VM's init needs busybox-static in ROOT)"
if readelf -l "$busybox" 2>/dev/null | grep -q 'program interpreter'; then
	die "$busybox is dynamically linked: the VM's init needs busybox-static"
fi

# The uncompressed ELF of an x86 bzImage: the first xz, zstd or gzip stream in it that
# decompresses to an ELF file (what the kernel's scripts/extract-vmlinux does). Kept beside it.
vmlinux_of() {
	# Several VMs may boot the same fresh kernel at once: each extracts into its own file,
	# and the rename is atomic (the contents are the same).
	local z=$1/vmlinuz out=$1/vmlinux tmp=$1/vmlinux.tmp.$$ magic off
	[ -s "$out" ] && [ "$out" -nt "$z" ] && { echo "$out"; return; }
	for magic in "xz $'\xfd7zXZ'" "zstd $'\x28\xb5\x2f\xfd'" "gzip $'\x1f\x8b\x08'"; do
		eval "set -- $magic"
		for off in $(LC_ALL=C grep -aboF "$2" "$z" | cut -d: -f1); do
			tail -c +$((off + 1)) "$z" | $1 -dcq 2>/dev/null >"$tmp" || true
			if [ "$(head -c 4 "$tmp")" = $'\x7fELF' ]; then
				mv "$tmp" "$out"
				echo "$out"
				return
			fi
		done
	done
	rm -f "$tmp"
	die "cannot find the kernel ELF inside $z"
}
if [ "$image" = vmlinux ]; then kernel=$(vmlinux_of "$kdir"); else kernel=$kdir/vmlinuz; fi

work=$(mktemp -d "${TMPDIR:-/tmp}/vm-run.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/initrd/bin" "$work/initrd/modules" "$work/state"

# Modules in load order, decompressed here (busybox's insmod reads plain .ko only).
: >"$work/initrd/modules/order"
while read -r what path _; do
	[ "$what" = insmod ] || continue # "builtin NAME": nothing to load
	base=$(basename "$path")
	[ -f "$work/initrd/modules/${base%%.ko*}.ko" ] && continue # a dependency of two
	case $path in
	*.ko) cp "$path" "$work/initrd/modules/" ;;
	*.ko.xz) xz -dc "$path" >"$work/initrd/modules/${base%.xz}" ;;
	*.ko.zst) zstd -qdc "$path" >"$work/initrd/modules/${base%.zst}" ;;
	*.ko.gz) gzip -dc "$path" >"$work/initrd/modules/${base%.gz}" ;;
	*) die "cannot load module $path: unknown compression" ;;
	esac
	echo "${base%%.ko*}.ko" >>"$work/initrd/modules/order"
done < <(modprobe -d "$kdir" -S "$kver" --show-depends -a $modules 2>"$work/modprobe.err") ||
	die "$kdir: cannot resolve modules $modules: $(cat "$work/modprobe.err")"
[ -s "$work/modprobe.err" ] && die "$kdir: modules: $(cat "$work/modprobe.err")"

# The command, run by the guest's /bin/sh in the caller's directory. The guest mounts tmpfs on
# /tmp and /run, hiding what the root share has there: a caller's directory below them (a
# checkout in /tmp) is shared read-only as well, first, so that shares inside it mount on top.
case $PWD/ in
/tmp/* | /run/*) shares=("ro $PWD" "${shares[@]}") ;;
esac
{
	echo "cd $(printf %q "$PWD") || exit 125"
	printf 'exec'
	printf ' %q' "$@"
	echo
} >"$work/state/command"
printf '%s\n' "${shares[@]}" >"$work/initrd/shares"

cp "$busybox" "$work/initrd/bin/busybox"
cat >"$work/initrd/init" <<'EOF'
#!/bin/busybox sh
# PID 1: modules, the overlay root, the mounts, then the command in a chroot; it reports the
# command's exit code in the state share and powers off. A failure here says what failed and
# powers off without a code, which vm-run reports as the VM's failure.
/bin/busybox mkdir -p /proc /sys /dev /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
mount -t devtmpfs dev /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sys /sys
fail() { echo "vm-run init: $*"; poweroff -f; }
for m in $(cat /modules/order); do insmod /modules/$m || fail "insmod $m failed"; done
mkdir -p /lower /rw /state /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 root /lower ||
	fail "cannot mount the 9p root"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 state /state || fail "cannot mount state"
mount -t tmpfs -o mode=0755 rw /rw && mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot ||
	fail "cannot mount the overlay root"
r=/newroot
mount -t proc proc $r/proc && mount -t sysfs sys $r/sys && mount -t devtmpfs dev $r/dev &&
	mkdir -p $r/dev/pts $r/dev/shm && mount -t devpts devpts $r/dev/pts &&
	mount -t tmpfs tmpfs $r/dev/shm && mount -t tmpfs tmpfs $r/tmp &&
	mount -t tmpfs tmpfs $r/run && mount -t tracefs tracefs $r/sys/kernel/tracing &&
	mount -t debugfs debugfs $r/sys/kernel/debug && mount -t bpf bpf $r/sys/fs/bpf &&
	mount -t cgroup2 cgroup2 $r/sys/fs/cgroup || fail "cannot mount the kernel's filesystems"
# The shares after the tmpfs mounts, so that one below /tmp or /run is not hidden by them.
n=0
while read -r mode dir; do
	[ -n "$dir" ] || continue
	mkdir -p "/newroot$dir"
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,$mode share$n "/newroot$dir" ||
		fail "cannot mount share $dir"
	n=$((n + 1))
done </shares
ip link set lo up || fail "cannot bring up lo"
hostname vm
cp /state/command $r/run/vm-run.command
echo "vm-run init: running the command, $(cut -d' ' -f1 /proc/uptime) s after boot"
HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
	TERM=dumb chroot $r /bin/sh /run/vm-run.command
echo $? >/state/rc
sync
echo "vm-run init: command exited $(cat /state/rc)"
poweroff -f
EOF
chmod +x "$work/initrd/init"
(cd "$work/initrd" && find . | cpio -o -H newc --quiet >"$work/initrd.cpio")

virtfs=(-virtfs "local,path=$root,mount_tag=root,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$work/state,mount_tag=state,security_model=none")
n=0
for s in "${shares[@]}"; do
	ro=
	[ "${s%% *}" = ro ] && ro=,readonly=on
	virtfs+=(-virtfs "local,path=${s#* },mount_tag=share$n,security_model=none,multidevs=remap$ro")
	n=$((n + 1))
done

: "${log:=$work/console}"
set +e
# panic=-1 and -no-reboot: a panicking kernel ends qemu at once instead of waiting out the timeout.
# One host thread for all the VM's CPUs (thread=single): with a thread each, a kernel patching
# its own code (static keys, jump labels) at boot could see the other CPU run the patch's int3
# after the patch was done, which that kernel takes for a stray breakpoint: an oops in
# sched_clock_cpu right after "sched_clock: Marking stable", about one boot in 30 of 7.2 with
# the host busy, and once a boot that never reached init. Serialized, the CPUs see every patch
# whole; the matrix also ran in half the time (27 s against 52: two VMs of two CPUs each were
# four busy threads on this machine's two cores).
# A quiet run keeps the kernel's whole boot log (shown when the run fails); else warnings only.
[ -n "$quiet" ] && : "${VM_LOGLEVEL:=7}"
timeout -k 5 "$timeout" $qemu "${machine[@]}" -accel tcg,thread=single -m "$mem" -smp "$cpus" \
	-display none -monitor none -serial stdio -no-reboot \
	-kernel "$kernel" -initrd "$work/initrd.cpio" \
	-append "console=$console panic=-1 loglevel=${VM_LOGLEVEL:-4}" "${virtfs[@]}" </dev/null 2>&1 |
	if [ -n "$quiet" ]; then cat >"$log"; else tee "$log"; fi
qrc=${PIPESTATUS[0]}
set -e
show_log() { [ -n "$quiet" ] && { echo "--- console of $kdir:"; cat "$log"; echo "---"; } >&2; true; }
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	show_log
	echo "vm-run: $kdir: no power-off after $timeout s: killed (the console log above shows how far it got)" >&2
	exit 124
fi
if [ ! -s "$work/state/rc" ]; then
	show_log
	echo "vm-run: $kdir: the VM stopped (qemu exit $qrc) before the command ended: see the console log" >&2
	exit 125
fi
rc=$(cat "$work/state/rc")
[ "$rc" = 0 ] || show_log
exit "$rc"
