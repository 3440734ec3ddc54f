#!/bin/bash
# make dkms: register the module's source with DKMS (dkms.conf) and build
# it for every installed kernel that has headers; DKMS rebuilds it for the
# kernels installed later (AUTOINSTALL). A version registered before is
# replaced. Then `dkms install netagg/VERSION -k KVER` puts it where
# modprobe finds it.
#
#   DKMS_SRC=DIR    where the source goes (DIR/netagg-VERSION; default
#                   /usr/src, where dkms looks)
#   DKMS_TREE=DIR   dkms' own tree (default its own, /var/lib/dkms)
#   KERNELS="K..."  these kernels only
#
# Prints one line per kernel and exits 1 if a build failed.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v dkms >/dev/null || { echo "dkms: not installed: run scripts/deps.sh" >&2; exit 1; }
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
src=${DKMS_SRC:-/usr/src}
opts=(--sourcetree "$src")
if [ -n "${DKMS_TREE:-}" ]; then
	mkdir -p "$DKMS_TREE"
	opts+=(--dkmstree "$DKMS_TREE")
fi

if [ -n "${KERNELS:-}" ]; then
	read -r -a kernels <<<"$KERNELS"
else
	kernels=()
	for b in /lib/modules/*/build; do
		[ -e "$b/Makefile" ] && kernels+=("$(basename "$(dirname "$b")")")
	done
fi
if [ ${#kernels[@]} -eq 0 ]; then
	echo "dkms: no kernel headers installed (/lib/modules/*/build)" >&2
	exit 1
fi

if [ -n "$(dkms status "${opts[@]}" -m netagg -v "$ver")" ]; then
	dkms remove "${opts[@]}" -m netagg -v "$ver" --all >/dev/null
fi
# The sources only: no object of an earlier build in the checkout.
dest=$src/netagg-$ver
rm -rf "$dest"
mkdir -p "$dest/kmod/compat" "$dest/core" "$dest/uapi/linux" "$dest/scripts"
cp dkms.conf Kbuild VERSION "$dest/"
# What the build tree needs for the module's BTF (dkms.conf, PRE_BUILD).
cp scripts/kbuild-btf scripts/ksrc "$dest/scripts/"
cp kmod/Kbuild "$dest/kmod/"
cp kmod/compat/compat.mk kmod/compat/*.[ch] "$dest/kmod/compat/"
for f in kmod/*.[ch]; do
	case $f in *.mod.c) ;; *) cp "$f" "$dest/kmod/" ;; esac
done
cp core/*.[ch] "$dest/core/"
cp uapi/linux/*.h "$dest/uapi/linux/"
dkms add "${opts[@]}" -m netagg -v "$ver" >/dev/null

failed=0
for k in "${kernels[@]}"; do
	if dkms build "${opts[@]}" -m netagg -v "$ver" -k "$k" >"${TMPDIR:-/tmp}/netagg-dkms-$k.log" 2>&1; then
		echo "dkms: netagg/$ver built for $k"
	else
		echo "dkms: netagg/$ver failed to build for $k:"
		tail -n 20 "${TMPDIR:-/tmp}/netagg-dkms-$k.log"
		failed=1
	fi
done
exit $failed
