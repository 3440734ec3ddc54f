#!/bin/bash
# The code's shape, on the host, after make.
#
# The folders: core/ (the portable cores) stands alone; the module (kmod/)
# and the library (lib/) are built on it; the CLI (cli/) on util/ (what
# the programs share); tools/ on util/, core/ and the library's API
# (lib/libnetagg.h, as any program of the library's). Each folder includes
# only its own headers and those of the folders below it, by the compiler's
# flags and by its #include lines, so that dependencies run one way.
#
# Inside the module, which C file uses which (scripts/deps-graph.sh, by the
# symbols each object leaves undefined): one way but for the pair the
# kernel's callback shape makes, netlink.c and netlink-gen.c (the
# generated op table names netlink.c's handlers; netlink.c registers the
# family with it). Their includes run one way without exception: the types
# every file works on are in state.h, which names no function of a .c
# file. The library's, the CLI's and util/'s files use each other one way.
#
# No C or Python file of the product is over 700 lines.
cd "$(dirname "$0")/.." || exit 1
source tests/lib.sh

ktap_plan 6

check_eq "kmod/: no circle but netlink.c and netlink-gen.c (handlers named)" \
	"kmod/netlink-gen.c kmod/netlink.c" "$(scripts/deps-graph.sh circles kmod kmod/compat core 2>&1)"
check_eq "kmod/'s includes: no circle (the types in state.h)" \
	"" "$(scripts/deps-graph.sh circles includes kmod kmod/compat core 2>&1)"
check_eq "lib/, cli/ and util/: no circle" \
	"" "$(scripts/deps-graph.sh circles lib cli util 2>&1)"

# The folders each product folder may include from, besides itself (uapi/'s
# headers come in by <linux/netagg.h>, the compiler's flags below).
declare -A below=(
	[core]=""
	[kmod]="core"
	[kmod/compat]=""
	[lib]="core"
	[util]=""
	[cli]="util lib/libnetagg.h"
	[tools]="util core lib/libnetagg.h"
)

# Every #include "x.h" of DIR found in DIR or what it may include.
includes_outside()
{
	local d f inc ok b
	for d in "${!below[@]}"; do
		for f in "$d"/*.[ch]; do
			case $f in *.mod.c) continue ;; esac
			sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
				ok=
				[ -e "$d/$inc" ] && ok=1
				for b in ${below[$d]}; do
					[ "$b" = "${b%.h}" ] && [ -e "$b/$inc" ] && ok=1
					[ "$b" = "lib/$inc" ] && ok=1
				done
				[ -n "$ok" ] || echo "$f includes \"$inc\" from outside what it may"
			done
		done
	done | sort
}
check_eq "each folder includes its own headers and those below it only (#include lines)" \
	"" "$(includes_outside)"

# The include paths the product's Makefiles give: uapi/ (and the top, for
# the kernel's <uapi/linux/...> form), core/, util/ (every userspace
# program's, but the library's, which drops it: util/ is GPL-2.0), and the
# library's folder to tools/ for its API; none into another folder (the
# system's under /usr/include aside). The CLI takes one call of the
# library's, netagg_key_read().
check_eq "the product's include paths: uapi/, core/, util/, lib/ to tools/ and cli/ only" \
	"kmod/Kbuild: -I\$(src)/../uapi -I\$(src)/.. -I\$(src)/../core
util/build.mk: -I\$(ROOT)uapi -I\$(ROOT)core -I\$(UTIL)
lib/Makefile: -I\$(UTIL),\$(NETAGG_CFLAGS))
cli/Makefile: -I\$(ROOT)uapi -I\$(LIB)
tools/Makefile: -I\$(LIB)" \
	"$(for mk in kmod/Kbuild util/build.mk lib/Makefile cli/Makefile tools/Makefile; do
		echo "$mk: $(grep -v '^#' "$mk" | grep -o -- '-I[^ ]*' | grep -v '^-I/usr/' | xargs)"
	done)"

# Lines past that are a second concern waiting for a file of its own.
check_eq "no C or Python file of the product over 700 lines" \
	"" \
	"$(wc -l core/*.[ch] kmod/*.[ch] lib/*.[ch] util/*.[ch] cli/*.[ch] tools/*.[ch] \
		kmod/compat/*.[ch] python/netagg/*.py xdp/*.c 2>/dev/null |
		awk '$2 != "total" && $1 > 700 { print $2 }' | grep -v '\.mod\.c$' | xargs)"

ktap_finish
