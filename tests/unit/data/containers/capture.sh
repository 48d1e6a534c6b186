#!/bin/sh
# Captures the real runtime files the container naming tests read: a podman
# container's /proc/PID/cgroup, its OCI config.json and the containers-storage
# index, and the same for a containerd task started with ctr the way the CRI
# plugin would (namespace k8s.io, a kubepods cgroup, the CRI annotations).
# Run as root on a Debian 12 machine (it runs scripts/install-deps.sh --fixtures); it builds
# its own image from busybox-static (no registry needed) and removes what it
# started. Not part of any test run: the files it writes are checked in.
#
# This build machine mounts cgroups in hybrid mode inside a sandbox: crun
# refuses hybrid mode (runc is used) and the sandbox cannot raise
# RLIMIT_NOFILE/NPROC past its own limits (both are set to 1024).
set -eu
out=$(cd "$(dirname "$0")" && pwd)
"$out/../../../../scripts/install-deps.sh" --fixtures
work=$(mktemp -d)
trap 'podman rm -f ns-fixture >/dev/null 2>&1 || true; ctr -n k8s.io task kill -s KILL $CID >/dev/null 2>&1 || true; sleep 1; ctr -n k8s.io container rm $CID >/dev/null 2>&1 || true; [ -n "${CTRD_PID:-}" ] && kill $CTRD_PID; rm -rf "$work"' EXIT
CID=9d3c4a2b1e0f9d3c4a2b1e0f9d3c4a2b1e0f9d3c4a2b1e0f9d3c4a2b1e0f9d3c

mkdir -p "$work/rootfs/bin"
cp /bin/busybox "$work/rootfs/bin/busybox"
ln -s busybox "$work/rootfs/bin/sleep"
tar -C "$work/rootfs" -cf "$work/busybox.tar" .
podman import "$work/busybox.tar" localhost/nodescope-busybox:test >/dev/null

# podman, rootful, cgroupfs manager (no systemd here)
podman --runtime runc run -d --name ns-fixture --label app=demo \
	--annotation io.kubernetes.pod.namespace=demo-ns \
	-e NOMAD_JOB_NAME=job1 --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
	localhost/nodescope-busybox:test /bin/sleep 600 >/dev/null
id=$(podman inspect -f '{{.Id}}' ns-fixture)
pid=$(podman inspect -f '{{.State.Pid}}' ns-fixture)
cat /proc/$pid/cgroup >"$out/podman.cgroup"
cat /proc/$(cat /run/containers/storage/overlay-containers/$id/userdata/conmon.pid)/cgroup >"$out/podman-conmon.cgroup"
cp /var/lib/containers/storage/overlay-containers/$id/userdata/config.json "$out/podman.config.json"
cp /var/lib/containers/storage/overlay-containers/containers.json "$out/podman.containers.json"
echo "$id" >"$out/podman.id"

# containerd, as the CRI plugin would lay it out
if ! [ -S /run/containerd/containerd.sock ]; then
	containerd >"$work/containerd.log" 2>&1 &
	CTRD_PID=$!
	for i in $(seq 50); do [ -S /run/containerd/containerd.sock ] && break; sleep 0.2; done
fi
podman save --format oci-archive -o "$work/oci.tar" localhost/nodescope-busybox:test
ctr -n k8s.io image import --index-name docker.io/library/busybox:fixture "$work/oci.tar" >/dev/null
ctr -n k8s.io run -d --cgroup /kubepods/besteffort/pod0d6c7a1e-5b2f-4e8a-9c3d-2f1e0a9b8c7d/$CID \
	--annotation io.kubernetes.cri.container-type=container \
	--annotation io.kubernetes.cri.container-name=web \
	--annotation io.kubernetes.cri.sandbox-name=web-7d4b9c8f6d-x2x7q \
	--annotation io.kubernetes.cri.sandbox-namespace=shop \
	--annotation io.kubernetes.cri.image-name=docker.io/library/busybox:fixture \
	docker.io/library/busybox:fixture $CID /bin/sleep 600 >/dev/null
sleep 1
pid=$(ctr -n k8s.io task ls | awk -v c=$CID '$1 == c {print $2}')
cat /proc/$pid/cgroup >"$out/containerd.cgroup"
cp /run/containerd/io.containerd.runtime.v2.task/k8s.io/$CID/config.json "$out/containerd.config.json"
echo "$CID" >"$out/containerd.id"
cat /proc/self/cgroup >"$out/host-self.cgroup"
