#!/bin/bash
# The debug kernel of make check-debug: Debian's linux-source-6.12 built
# with lab/debug-kernel/config on allnoconfig (every checker of KASAN,
# KFENCE, UBSAN, lockdep, PROVE_RCU, DEBUG_OBJECTS, KMEMLEAK, SLUB
# debugging), and
# installed beside Debian's kernels, so that everything which takes a
# kernel version takes it: lab/vm-run --kernel, make KVER=,
# tests/run.sh. Prints the version (6.12.N-netagg-debug).
#
# Built once: the build is kept in a cache, keyed by the source package's
# version, the config and this script, and only installed again while
# none of them changes. Building takes 9 minutes on an idle 2-core machine
# (BTF included), up to 30 with a VM beside it.
#
#   lab/debug-kernel/build.sh          build if needed, install, print the version
#   lab/debug-kernel/build.sh --print  print the version it would build
set -euo pipefail
cd "$(dirname "$0")/../.." || exit 1

srcpkg=linux-source-6.12
tarball=/usr/src/$srcpkg.tar.xz
frag=$PWD/lab/debug-kernel/config

die() { echo "debug-kernel: $*" >&2; exit 1; }

[ $# -eq 0 ] || [ "$1" = --print ] || { echo "usage: lab/debug-kernel/build.sh [--print]" >&2; exit 2; }
scripts/deps.sh --debug-kernel >&2 || exit 1
[ -r "$tarball" ] || die "no $tarball: run scripts/deps.sh"

pkgver=$(dpkg-query -W -f='${Version}' "$srcpkg")
key=$({ echo "$pkgver"; cat "$frag" "$0"; } | sha256sum | cut -c1-16)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/netagg-debug-kernel
dir=$cache/$key
src=$dir/$srcpkg
obj=$dir/build

release() { make -s -C "$src" O="$obj" kernelrelease; }

if [ ! -e "$dir/built" ]; then
	# Another key's build is stale: its source is 1.7 GB.
	rm -rf "$cache"
	mkdir -p "$dir"
	echo "debug-kernel: unpacking $srcpkg $pkgver" >&2
	tar -C "$dir" -xf "$tarball"
	mkdir -p "$obj"
	KCONFIG_ALLCONFIG=$frag make -s -C "$src" O="$obj" allnoconfig >&2
	# An option that did not come out as written (a dependency missing, a
	# name changed) would leave a checker silently off.
	bad=0
	while IFS= read -r line; do
		case $line in
		CONFIG_*=n) want="# ${line%=n} is not set" ;;
		CONFIG_*) want=$line ;;
		*) continue ;;
		esac
		if ! grep -qxF -- "$want" "$obj/.config"; then
			echo "debug-kernel: $line did not take: $(grep -E "^(# )?${line%%=*}[= ]" "$obj/.config" || echo "absent")" >&2
			bad=1
		fi
	done <"$frag"
	[ $bad -eq 0 ] || die "lab/debug-kernel/config does not apply to $srcpkg $pkgver"
	echo "debug-kernel: building $(release) in $obj" >&2
	start=$SECONDS
	make -s -C "$src" O="$obj" -j"$(nproc)" bzImage modules >&2 ||
		die "the build failed"
	echo "debug-kernel: built in $(((SECONDS - start) / 60)) min" >&2
	touch "$dir/built"
fi

rel=$(release)
if [ "${1:-}" = --print ]; then
	echo "$rel"
	exit 0
fi

# Installed as Debian installs a kernel: image, config and symbols in
# /boot, /lib/modules/VERSION with its build tree (every driver is built
# in: modules.builtin lets modprobe say so).
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
if ! cmp -s "$obj/arch/x86/boot/bzImage" "/boot/vmlinuz-$rel" ||
   [ "$(readlink "/lib/modules/$rel/build" 2>/dev/null)" != "$obj" ]; then
	"${sudo[@]}" install -m 0644 "$obj/arch/x86/boot/bzImage" "/boot/vmlinuz-$rel"
	"${sudo[@]}" install -m 0644 "$obj/.config" "/boot/config-$rel"
	"${sudo[@]}" install -m 0644 "$obj/System.map" "/boot/System.map-$rel"
	"${sudo[@]}" make -s -C "$src" O="$obj" INSTALL_MOD_PATH= modules_install >&2
	"${sudo[@]}" ln -sfn "$obj" "/lib/modules/$rel/build"
fi
echo "$rel"
