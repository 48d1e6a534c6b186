#!/bin/sh
# Builds the Debian package (debian/) with dpkg-buildpackage from a copy of the
# tree (tracked and new files, as git sees them), so neither the build nor its
# clean touches the checkout: scripts/build-deb.sh OUTDIR VERSION.
# The .deb (and its -dbgsym) land in OUTDIR.
set -eu
out=$1
version=$2
cd "$(dirname "$0")/.."
src="$out/nodescope-src"
rm -rf "$src"
mkdir -p "$src"
git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - | tar -xf - -C "$src"
rm -f "$out"/nodescope_*.deb "$out"/nodescope-dbgsym_*.deb "$out"/nodescope_*.buildinfo "$out"/nodescope_*.changes
# npm (the web page's graph library) reuses the checkout's download cache.
mkdir -p build/npm-cache
export NPM_CACHE="$(pwd)/build/npm-cache"
# -b: binary only; -us -uc: nothing to sign with here.
(cd "$src" && NODESCOPE_VERSION="$version" dpkg-buildpackage -b -us -uc -j"$(nproc)")
rm -rf "$src"
ls "$out"/nodescope_*.deb
