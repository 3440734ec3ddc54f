#!/bin/bash
# Which C file of a folder uses which. By default read from the built
# objects: an object that leaves a netagg_ symbol undefined (nm's U) uses
# the object that defines it (a function called, or named as a callback; a
# variable); run after make. With "includes", read from the sources: a
# file (x.c with its x.h) uses another (y.c, or y.h alone) when x.c or x.h
# includes "y.h", its types and inline functions counted too; "y.h" is
# looked for beside the file first, then in each DIR given.
# Prints one line a file, "file: the files it uses", then every circle:
# files that use each other, directly or through others.
#
#   scripts/deps-graph.sh [circles] [includes] DIR...
#       kmod core                    the module and the cores it is built with
#       lib cli tools util           the library and the programs
#   with "circles", the circles only, one a line ("" if none).
set -euo pipefail
cd "$(dirname "$0")/.."

only= includes=false
while :; do
	case ${1:-} in
	circles) only=circles ;;
	includes) includes=true ;;
	*) break ;;
	esac
	shift
done
[ $# -gt 0 ] || { echo "usage: scripts/deps-graph.sh [circles] [includes] DIR..." >&2; exit 2; }

# includes DIR...: "E file file" an include between two files of DIR.
includes()
{
	local d f unit inc
	for d in "$@"; do
		for f in "$d"/*.[ch]; do
			case $f in *.mod.c) continue ;; esac
			unit=${f%.[ch]}
			[ -e "$unit.c" ] && unit=$unit.c || unit=$unit.h
			echo "F $unit"
			sed -n 's/^#include "\([^"/]*\)\.h".*/\1/p' "$f" | while read -r inc; do
				for e in "$d" "$@"; do
					if [ -e "$e/$inc.c" ]; then
						echo "E $unit $e/$inc.c"
						break
					elif [ -e "$e/$inc.h" ]; then
						echo "E $unit $e/$inc.h"
						break
					fi
				done
			done
		done
	done
}

# symbols: the same from the objects' symbols.
symbols()
{
	local d o
	local objs=()
	for d in "$@"; do
		for o in "$d"/*.o; do
			case $o in
			# the linked module, modpost's, the shared library's copies
			kmod/netagg.o | *.mod.o | *.pic.o) ;;
			*) [ -e "$o" ] && objs+=("$o") ;;
			esac
		done
	done
	[ ${#objs[@]} -gt 1 ] || { echo "deps-graph: no objects in $*: run make" >&2; exit 1; }
	for o in "${objs[@]}"; do
		nm "$o" | awk -v f="${o%.o}.c" '
			$1 == "U" && $2 ~ /^netagg_/ { print "U", f, $2 }
			NF == 3 && $2 ~ /^[TDRB]$/ && $3 ~ /^netagg_/ { print "D", f, $3 }'
	done | awk '
		$1 == "D" { def[$3] = $2; print "F", $2; next }
		{ use[++n] = $2 " " $3; print "F", $2 }
		END {
			for (i = 1; i <= n; i++) {
				split(use[i], u, " ")
				if ((u[2] in def) && def[u[2]] != u[1])
					print "E", u[1], def[u[2]]
			}
		}'
}

if $includes; then includes "$@"; else symbols "$@"; fi | awk -v only="$only" '
	$1 == "F" { files[$2] = 1; next }
	$1 == "E" && $2 != $3 { e[$2, $3] = 1; files[$2] = 1; files[$3] = 1 }
	END {
		m = 0
		for (a in files)
			names[++m] = a
		# sorted, for stable output
		for (i = 2; i <= m; i++)
			for (j = i; j > 1 && names[j] < names[j - 1]; j--) {
				t = names[j]; names[j] = names[j - 1]; names[j - 1] = t
			}
		for (i = 1; i <= m; i++)
			for (j = 1; j <= m; j++)
				r[i, j] = e[names[i], names[j]]
		# what each reaches, through others too
		for (k = 1; k <= m; k++)
			for (i = 1; i <= m; i++)
				if (r[i, k])
					for (j = 1; j <= m; j++)
						if (r[k, j])
							r[i, j] = 1
		for (i = 1; i <= m && only != "circles"; i++) {
			line = names[i] ":"
			for (j = 1; j <= m; j++)
				if (e[names[i], names[j]])
					line = line " " names[j]
			print line
		}
		for (i = 1; i <= m; i++) {
			if (!r[i, i] || seen[i])
				continue
			line = ""
			for (j = 1; j <= m; j++)
				if (r[i, j] && r[j, i]) {
					line = line (line ? " " : "") names[j]
					seen[j] = 1
				}
			print (only ? "" : "circle: ") line
		}
	}'
