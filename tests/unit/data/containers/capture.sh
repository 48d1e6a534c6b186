#!/bin/sh
# Captures the real runtime files the container naming tests read, for each
# runtime named (default: all): `capture.sh [podman] [containerd] [docker]`.
#  - podman: a container's /proc/PID/cgroup, its monitor's, its OCI
#    config.json and the containers-storage index;
#  - containerd: a task started with ctr the way the CRI plugin would
#    (namespace k8s.io, a kubepods cgroup, the CRI annotations);
#  - docker: a container's /proc/PID/cgroup and config.v2.json, from a
#    dockerd of its own (own socket, no network setup) stopped afterwards.
# Run as root on a Debian 12 machine (it runs scripts/install-deps.sh
# --fixtures); it builds its own image from busybox-static (no registry
# needed) and removes what it started. Not part of any test run: the files it
# writes are checked in, and the tests name the ids they hold.
#
# This build machine mounts cgroups in hybrid mode inside a sandbox: crun
# refuses hybrid mode (runc is used) and the sandbox cannot raise
# RLIMIT_NOFILE/NPROC past its own limits (both are set to 1024).
set -eu
out=$(cd "$(dirname "$0")" && pwd)
"$out/../../../../scripts/install-deps.sh" --fixtures
work=$(mktemp -d)
CID=9d3c4a2b1e0f9d3c4a2b1e0f9d3c4a2b1e0f9d3c4a2b1e0f9d3c4a2b1e0f9d3c
DOCKER="/usr/bin/docker -H unix:///run/nodescope-fixture-docker.sock"
cleanup() {
	podman rm -f ns-fixture >/dev/null 2>&1 || true
	ctr -n k8s.io task kill -s KILL $CID >/dev/null 2>&1 || true
	sleep 1
	ctr -n k8s.io container rm $CID >/dev/null 2>&1 || true
	[ -n "${CTRD_PID:-}" ] && kill $CTRD_PID
	if [ -n "${DOCKERD_PID:-}" ]; then
		$DOCKER rm -f shop-web-1 >/dev/null 2>&1 || true
		kill $DOCKERD_PID
	fi
	rm -rf "$work"
}
trap cleanup EXIT
want() { [ -z "$ALL" ] && return 0; case " $ALL " in *" $1 "*) return 0 ;; esac; return 1; }
ALL="$*"

mkdir -p "$work/rootfs/bin"
cp /bin/busybox "$work/rootfs/bin/busybox"
ln -s busybox "$work/rootfs/bin/sleep"
tar -C "$work/rootfs" -cf "$work/busybox.tar" .

if want podman; then
	# rootful, cgroupfs manager (no systemd here)
	podman import "$work/busybox.tar" localhost/nodescope-busybox:test >/dev/null
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
	chmod 644 "$out/podman.containers.json"
	echo "$id" >"$out/podman.id"
	cat /proc/self/cgroup >"$out/host-self.cgroup"
fi

if want containerd; then
	# as the CRI plugin would lay it out
	if ! [ -S /run/containerd/containerd.sock ]; then
		containerd >"$work/containerd.log" 2>&1 &
		CTRD_PID=$!
		for i in $(seq 50); do [ -S /run/containerd/containerd.sock ] && break; sleep 0.2; done
	fi
	podman import "$work/busybox.tar" localhost/nodescope-busybox:test >/dev/null
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
fi

if want docker; then
	# a dockerd of its own: no bridge, no iptables, vfs storage (no overlay in a sandbox)
	dockerd --iptables=false --ip6tables=false --bridge=none --storage-driver=vfs \
		-H unix:///run/nodescope-fixture-docker.sock \
		--pidfile /run/nodescope-fixture-docker.pid >"$work/dockerd.log" 2>&1 &
	DOCKERD_PID=$!
	for i in $(seq 100); do $DOCKER version >/dev/null 2>&1 && break; sleep 0.2; done
	$DOCKER import "$work/busybox.tar" nodescope-busybox:test >/dev/null
	$DOCKER run -d --name shop-web-1 --label com.docker.compose.service=web \
		-e NOMAD_TASK_NAME=web --ulimit nofile=1024:1024 \
		nodescope-busybox:test /bin/sleep 600 >/dev/null
	id=$($DOCKER inspect -f '{{.Id}}' shop-web-1)
	pid=$($DOCKER inspect -f '{{.State.Pid}}' shop-web-1)
	cat /proc/$pid/cgroup >"$out/docker.cgroup"
	cp /var/lib/docker/containers/$id/config.v2.json "$out/docker.config.v2.json"
	echo "$id" >"$out/docker.id"
fi
