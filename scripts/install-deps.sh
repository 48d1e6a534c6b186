#!/bin/sh
# Installs the Debian packages nodescope needs to build, run and test; quick when all are there.
set -e
PKGS="clang llvm lld bpftool libbpf-dev libelf-dev zlib1g-dev libmicrohttpd-dev pkg-config make gcc
      libcmocka-dev python3 python3-pytest prometheus iproute2 procps util-linux nftables
      libclang-rt-14-dev curl wrk libbpf-tools nginx libcapstone-dev golang-go
      gnutls-bin openssl libssl-dev python3-cryptography gcc-multilib stress-ng strace
      python3-aiohttp libjansson-dev qemu-system-x86 busybox-static cpio xz-utils zstd kmod
      podman runc containerd docker.io e2fsprogs ca-certificates
      dpkg-dev debhelper help2man buildah man-db python3-yaml libcap2-bin systemd
      postgresql mariadb-server mariadb-client redis-server redis-tools memcached
      clickhouse-server clickhouse-client python3-psycopg2 python3-pymysql python3-redis
      python3-pymemcache python3-pymongo libdbd-mariadb-perl
      python3-kafka zookeeperd python3-kazoo nats-server rabbitmq-server python3-pika python3-cassandra
      nghttp2-server nghttp2-client python3-hpack python3-grpcio
      libprotobuf-c-dev protobuf-c-compiler libsnappy-dev libcurl4-openssl-dev
      dnsmasq-base bind9-dnsutils python3-dnspython chromium python3-websocket"
# npm fetches the web page's graph library at build time (web/package-lock.json). Debian's
# npm, unless an npm is already there: a nodejs from elsewhere that bundles its own npm
# conflicts with Debian's package.
command -v npm >/dev/null 2>&1 || PKGS="$PKGS npm"
# Only for tests/unit/data/containers/capture.sh (scripts/install-deps.sh --fixtures),
# which re-captures the container runtime fixtures.
if [ "${1:-}" = --fixtures ]; then
	PKGS="$PKGS crun"
fi
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "nodescope: missing Debian packages:$missing" >&2
	echo "nodescope: run as root (sudo make ...) so they can be installed" >&2
	exit 1
fi
echo "nodescope: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# prometheus' package would start a server (so would the databases'); tests start their own
# on loopback.
apt-get install -y -qq --no-install-recommends $missing >/dev/null
