#!/bin/bash
# Downloads the pinned kernels of tests/kernels/ARCH.list from Debian's archive with apt and
# extracts each into DIR/ARCH/NAME (vmlinuz, config, lib/modules/VERSION with its modules.dep),
# which scripts/vm-run.sh boots. apt runs on a private configuration under DIR/apt (its own
# sources list naming the suites of the list, state and cache), so the machine's apt setup is
# neither read nor changed. The .debs stay in DIR/debs: a second run downloads nothing and
# re-extracts only a kernel whose pin changed.
# Usage: fetch-kernels.sh [--dir DIR] [--download-only] ARCH [NAME...]
#   DIR: build/kernels; ARCH: Debian's name; --download-only: the .debs, no extracting (so that
#   the kernels can then be extracted one by one, concurrently: apt itself runs one at a time)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$top/build/kernels
download_only=
while :; do
	case ${1-} in
	--dir) dir=$(realpath -m "$2"); shift 2 ;;
	--download-only) download_only=1; shift ;;
	*) break ;;
	esac
done
arch=${1:?usage: fetch-kernels.sh [--dir DIR] [--download-only] ARCH [NAME...]}
shift
list=$top/tests/kernels/$arch.list
[ -f "$list" ] || { echo "fetch-kernels: no kernel list for $arch ($list)" >&2; exit 2; }
die() { echo "fetch-kernels: $*" >&2; exit 1; }
for t in apt-get dpkg-deb depmod; do
	command -v $t >/dev/null || die "$t is missing (scripts/install-deps.sh installs it)"
done

# The rows asked for (all without NAMEs): name suite version expect features packages.
rows=$(awk -v want=" $* " '!/^#/ && NF >= 6 && (want == "  " || index(want, " " $1 " "))' "$list")
for n in "$@"; do
	grep -q "^$n " <<<"$rows" || die "no kernel '$n' in $list"
done

apt_dir=$dir/apt
mkdir -p "$apt_dir/state/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/etc/parts" \
	"$dir/debs/$arch"
: >"$apt_dir/status"
# Security suites live in another archive. Valid-Until is not checked: versions are pinned and
# every .deb is checked against the signed index's hash, while sid's Release expires within a
# week of being published (the mirror this was written on served one 27 days past it).
awk '!/^#/ && NF >= 6 { print $2 }' "$list" | sort -u | while read -r suite; do
	case $suite in
	*-security) uri=http://deb.debian.org/debian-security ;;
	*) uri=http://deb.debian.org/debian ;;
	esac
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg check-valid-until=no]" \
		"$uri $suite main"
done >"$apt_dir/etc/sources.list"
cat >"$apt_dir/etc/apt.conf" <<EOF
Dir::Etc::sourcelist "$apt_dir/etc/sources.list";
Dir::Etc::sourceparts "$apt_dir/etc/parts";
Dir::Etc::parts "$apt_dir/etc/parts";
Dir::Etc::preferences "$apt_dir/etc/preferences";
Dir::Etc::preferencesparts "$apt_dir/etc/parts";
Dir::State "$apt_dir/state";
Dir::State::status "$apt_dir/status";
Dir::Cache "$apt_dir/cache";
APT::Architecture "$arch";
APT::Architectures { "$arch"; };
Acquire::Languages "none";
APT::Sandbox::User "root";
EOF
export APT_CONFIG=$apt_dir/etc/apt.conf

# The .debs not downloaded yet, as apt's name=version.
deb_of() { echo "$dir/debs/$arch/${1}_${2/:/%3a}_$arch.deb"; }
missing=()
while read -r name suite version expect features packages; do
	for p in ${packages//,/ }; do
		[ -f "$(deb_of "$p" "$version")" ] || missing+=("$p=$version")
	done
done <<<"$rows"
if [ ${#missing[@]} -gt 0 ]; then
	start=$SECONDS
	apt-get update -qq || die "apt-get update failed for $apt_dir/etc/sources.list"
	for pv in "${missing[@]}"; do
		apt-cache show "$pv" >/dev/null 2>&1 && continue
		echo "fetch-kernels: ${pv%%=*} version ${pv#*=} is not in the archive any more; it has:" >&2
		apt-cache madison "${pv%%=*}" >&2 || true
		die "pin another version in $list (newest of the suite: apt-cache search, same APT_CONFIG=$APT_CONFIG)"
	done
	(cd "$dir/debs/$arch" && apt-get download -q "${missing[@]}") ||
		die "apt-get download ${missing[*]} failed"
	echo "fetch-kernels: downloaded ${#missing[@]} package(s) in $((SECONDS - start)) s" >&2
fi

[ -n "$download_only" ] && exit 0

# Extract a kernel into DIR/ARCH/NAME, the stamp naming what it came from, unless already there.
extract() {
	local name=$1 version=$2 packages=$3
	local out=$dir/$arch/$name stamp="$2 $3"
	[ "$(cat "$out/.pinned" 2>/dev/null)" = "$stamp" ] && return 0
	rm -rf "$out" "$out.tmp" && mkdir -p "$out.tmp/x"
	# Only what a VM boots with: the image, the module lists, and the module trees its 9p root,
	# overlay and virtio transport come from with their dependencies (the driver trees that make
	# up most of a package, several hundred MB, are left in the .deb: writing them out was most
	# of the time this took).
	local p pat=() d
	for d in ./ ./usr/; do
		pat+=("${d}boot/*" "${d}lib/modules/*/modules.*" "${d}lib/modules/*/config"
		      "${d}lib/modules/*/vmlinuz*")
		for m in fs net lib crypto drivers/virtio drivers/char/hw_random; do
			pat+=("${d}lib/modules/*/kernel/$m/*")
		done
	done
	for p in ${packages//,/ }; do
		dpkg-deb --fsys-tarfile "$(deb_of "$p" "$version")" |
			tar -x -C "$out.tmp/x" --wildcards "${pat[@]}" 2>/dev/null || true
	done
	# Modules are in lib/modules or, merged-/usr packages, in usr/lib/modules.
	local mods= kver m
	for m in "$out.tmp"/x/lib/modules/* "$out.tmp"/x/usr/lib/modules/*; do
		[ -d "$m" ] && mods=$m && break
	done
	[ -n "$mods" ] || die "$name: no lib/modules in $packages"
	kver=$(basename "$mods")
	# The image: boot/vmlinuz-VERSION, or (Debian 14's split packages) beside the modules.
	local img=
	for m in "$out.tmp/x/boot/vmlinuz-$kver" "$mods/vmlinuz.unsigned" "$mods/vmlinuz"; do
		[ -f "$m" ] && img=$m && break
	done
	[ -n "$img" ] || die "$name: no kernel image (boot/vmlinuz-$kver) in $packages"
	mkdir -p "$out.tmp/lib/modules"
	mv "$img" "$out.tmp/vmlinuz"
	rm -f "$mods/vmlinuz" "$mods/vmlinuz.unsigned"
	mv "$out.tmp/x/boot/config-$kver" "$out.tmp/config" 2>/dev/null ||
		mv "$mods/config" "$out.tmp/config" 2>/dev/null || true
	mv "$mods" "$out.tmp/lib/modules/"
	rm -rf "$out.tmp/x"
	# The packages leave modules.dep to the machine that installs them.
	depmod -b "$out.tmp" "$kver" || die "$name: depmod failed"
	echo "$stamp" >"$out.tmp/.pinned"
	mv "$out.tmp" "$out"
	echo "fetch-kernels: $name: $kver in $out" >&2
}
# Two at a time: extracting is xz decompression, one core each.
pids=()
while read -r name suite version expect features packages; do
	extract "$name" "$version" "$packages" &
	pids+=($!)
	if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}" || exit 1; pids=("${pids[@]:1}"); fi
done <<<"$rows"
for p in "${pids[@]}"; do wait "$p" || exit 1; done
