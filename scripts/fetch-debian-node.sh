#!/bin/sh
# Extracts Debian 12's own Node.js 18 (nodejs + libnode108, linked to the system libssl3, unlike
# the machine's Node 20 with OpenSSL inside) under DIR, without installing it: installing
# nodejs would replace the machine's /usr/bin/node. DIR/node runs it: in a private mount
# namespace /usr/share is overlaid with the extracted one, where libnode108 reads some of its
# built-in JavaScript from absolute paths. Usage: fetch-debian-node.sh DIR
set -e
dir=$1
[ -n "$dir" ] || { echo "usage: $0 DIR" >&2; exit 2; }
[ -x "$dir/node" ] && exit 0
v=$(apt-cache madison nodejs | awk -F' *[|] *' '$2 ~ /^18\./ { print $2; exit }')
[ -n "$v" ] || { echo "nodescope: no Debian nodejs 18 in apt's lists (apt-get update?)" >&2; exit 1; }
rm -rf "$dir.tmp" && mkdir -p "$dir.tmp/debs" && cd "$dir.tmp/debs"
apt-get download -q "nodejs=$v" "libnode108=$v" node-cjs-module-lexer node-acorn node-undici \
	node-busboy node-xtend >/dev/null
for d in *.deb; do dpkg-deb -x "$d" ../root; done
cd .. && rm -rf debs
cat > node <<EOS
#!/bin/sh
exec unshare -m --propagation private sh -c 'mount -t overlay overlay -o lowerdir=$dir/root/usr/share:/usr/share /usr/share && LD_LIBRARY_PATH=$dir/root/usr/lib/x86_64-linux-gnu exec $dir/root/usr/bin/node "\$@"' node18 "\$@"
EOS
chmod +x node
cd / && rm -rf "$dir" && mv "$dir.tmp" "$dir"
