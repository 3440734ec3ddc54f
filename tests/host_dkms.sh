#!/bin/bash
# DKMS, on the host: make dkms' script (scripts/dkms.sh), pointed at a
# scratch source tree and dkms tree, registers the module and builds it for
# every installed kernel that has headers; each build is that kernel's
# module (its vermagic), and the one for the kernel make built for holds
# the same sources as make's (its srcversion), with BTF where the kernel
# has module BTF (the XDP hook's kfunc needs it).
cd "$(dirname "$0")/.." || exit 1
source tests/lib.sh
trap 'rm -rf "$TEST_TMP"' EXIT

kernels=()
for b in /lib/modules/*/build; do
	[ -e "$b/Makefile" ] && kernels+=("$(basename "$(dirname "$b")")")
done
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
tree=$TEST_TMP/dkms
ktap_plan $((4 + ${#kernels[@]}))

check "scripts/dkms.sh registers and builds netagg/$ver for ${#kernels[*]} kernel(s): ${kernels[*]}" \
	env DKMS_SRC="$TEST_TMP/src" DKMS_TREE="$tree" TMPDIR="$TEST_TMP" scripts/dkms.sh
check_eq "dkms status says built for each" \
	"$(for k in "${kernels[@]}"; do echo "netagg/$ver, $k, x86_64: built"; done | sort)" \
	"$(dkms status --sourcetree "$TEST_TMP/src" --dkmstree "$tree" -m netagg 2>/dev/null | sort)"
# built KVER: the module dkms built for KVER (compressed as that kernel's
# modules are, if they are).
built() { ls "$tree/netagg/$ver/$1/x86_64/module/"netagg.ko* 2>/dev/null | head -n 1; }
for k in "${kernels[@]}"; do
	ko=$(built "$k")
	check_eq "$k: the module built is for $k (vermagic)" "$k" \
		"$(modinfo -F vermagic "$ko" 2>&1 | awk '{ print $1 }')"
done
# make's module, built for the default kernel, against dkms' for it.
k=$(modinfo -F vermagic kmod/netagg.ko 2>/dev/null | awk '{ print $1 }')
check_eq "dkms builds the sources make builds (srcversion, $k)" \
	"$(modinfo -F srcversion kmod/netagg.ko 2>&1)" \
	"$(modinfo -F srcversion "$(built "$k")" 2>&1)"
ko=$(built "$k")
case $ko in
*.xz) xz -dc "$ko" >"$TEST_TMP/netagg.ko" ;;
*.zst) zstd -qdc "$ko" >"$TEST_TMP/netagg.ko" ;;
*) cp "$ko" "$TEST_TMP/netagg.ko" ;;
esac
check_eq "dkms' module for $k carries BTF and its kfunc IDs (.BTF, .BTF_ids)" ".BTF .BTF_ids" \
	"$(readelf -SW "$TEST_TMP/netagg.ko" 2>&1 | grep -o '\.BTF[_a-z]*' | sort -u | xargs)"

ktap_finish
