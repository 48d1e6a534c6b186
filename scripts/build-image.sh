#!/bin/sh
# Builds the OCI image without a daemon or a base image: a rootfs of the
# agent and exactly the shared libraries it links (as the dynamic loader
# resolves them here), committed by Debian's buildah into its own storage
# under BUILD/image and written out as an OCI archive:
#   scripts/build-image.sh BUILD VERSION -> BUILD/image/nodescope-VERSION.oci.tar
# and the image nodescope:VERSION in that storage (buildah --root BUILD/image/storage).
set -eu
build=$1
version=$2
cd "$(dirname "$0")/.."
dir="$build/image"
root="$dir/rootfs"
bin="$build/nodescope"
# Its own storage (vfs: no overlay mounts), never the machine's containers/storage.
bah() { buildah --root "$PWD/$dir/storage" --runroot "$PWD/$dir/run" --storage-driver vfs "$@"; }

rm -rf "$root"
# proc, sys: where a runtime (or a test's chroot) mounts them.
mkdir -p "$root/usr/sbin" "$root/tmp" "$root/etc" "$root/proc" "$root/sys"
chmod 1777 "$root/tmp"
install -m 0755 "$bin" "$root/usr/sbin/nodescope"
# Coroot's image's command: its operator runs the image's entrypoint, its chart and users'
# manifests `coroot-node-agent ARGS` from PATH. The same agent under that name (relative:
# it resolves in any rootfs).
mkdir -p "$root/usr/bin"
ln -s ../sbin/nodescope "$root/usr/bin/coroot-node-agent"
# The loader and each library at the path the binary will ask for (PT_INTERP, then ld.so's search).
ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u |
	while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
# The license texts travel with the binary.
mkdir -p "$root/usr/share/doc/nodescope"
cp LICENSE "$root/usr/share/doc/nodescope/"
cp -r LICENSES "$root/usr/share/doc/nodescope/"
echo "root:x:0:0:root:/:/usr/sbin/nodescope" > "$root/etc/passwd"
echo "root:x:0:" > "$root/etc/group"
# Debian's CA certificates, so that an https remote-write endpoint verifies: the ones the
# ca-certificates package ships, at the bundle path libcurl reads by default, never the
# machine's own additions (/usr/local/share/ca-certificates).
mkdir -p "$root/etc/ssl/certs"
dpkg-query -L ca-certificates | grep '^/usr/share/ca-certificates/.*\.crt$' | sort |
	xargs cat > "$root/etc/ssl/certs/ca-certificates.crt"
if [ ! -s "$root/etc/ssl/certs/ca-certificates.crt" ]; then
	echo "build-image: no CA certificates: apt-get install ca-certificates (make deps)" >&2
	exit 1
fi
# /etc/hosts before DNS, as in Debian (glibc's default without this file asks DNS first and
# stops at its answer, so a pod's hostAliases would never be read).
echo "hosts: files dns" > "$root/etc/nsswitch.conf"

name="nodescope:$version"
bah rmi -f "$name" nodescope:latest >/dev/null 2>&1 || true
c=$(bah from scratch)
bah copy "$c" "$root/" / >/dev/null
# Safe by default: 127.0.0.1 as everywhere; the DaemonSet sets LISTEN to the pod's address.
# PATH: a runtime resolves a bare command (coroot-node-agent) with it. WAL_DIR: under /tmp,
# the one writable volume Coroot's operator gives (an emptyDir, kept across container
# restarts); our DaemonSet sets its own (a host directory).
bah config --entrypoint '["/usr/sbin/nodescope"]' --cmd '["run"]' --port 9645 \
	--env PATH=/usr/sbin:/usr/bin --env WAL_DIR=/tmp/nodescope \
	--label org.opencontainers.image.title=nodescope \
	--label org.opencontainers.image.version="$version" \
	--label org.opencontainers.image.licenses="Apache-2.0 AND GPL-2.0-only" "$c"
bah commit --quiet --rm --format oci "$c" "$name" >/dev/null
bah tag "$name" nodescope:latest
rm -f "$dir"/nodescope-*.oci.tar
bah push --quiet "$name" "oci-archive:$dir/nodescope-$version.oci.tar:$name" >/dev/null
ls "$dir/nodescope-$version.oci.tar"
