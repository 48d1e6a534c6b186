#!/bin/sh
# PID 1 of a test VM (copied into the image as /sbin/nodescope-vm-init, the
# kernel's init=): mounts what the agent needs, runs /payload/run from the
# second disk, prints its exit status where scripts/vm/run.sh looks for it,
# and powers the VM off. No systemd: the test is the only thing running.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
mkdir -p /dev/pts /run /tmp /payload
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t bpf bpf /sys/fs/bpf
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
hostname nodescope-vm
ip link set lo up
status=125
if mount -o ro /dev/vdb /payload; then
	mkdir -p /tmp/out
	(cd /payload && sh ./run /tmp/out)
	status=$?
else
	echo "nodescope-vm: no payload disk (/dev/vdb)"
fi
echo "nodescope-vm: exit $status"
sync
echo o >/proc/sysrq-trigger
sleep 10
