#!/bin/bash
# Which C file of a folder uses which, read from the built objects: an
# object that leaves a netagg_ symbol undefined (nm's U) uses the object
# that defines it (a function called, or named as a callback; a variable).
# Prints one line a file, "file: the files it uses", then every circle:
# files that use each other, directly or through others. Run after make.
#
#   scripts/deps-graph.sh [circles] DIR...
#       kmod                         the module
#       userspace userspace/libnetagg  the CLI and the library
#   with "circles", the circles only, one a line ("" if none).
set -euo pipefail
cd "$(dirname "$0")/.."

only=
if [ "${1:-}" = circles ]; then
	only=circles
	shift
fi
[ $# -gt 0 ] || { echo "usage: scripts/deps-graph.sh [circles] DIR..." >&2; exit 2; }
objs=()
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
done | awk -v only="$only" '
	$1 == "D" { def[$3] = $2; next }
	{ use[++n] = $2 " " $3 }
	END {
		for (i = 1; i <= n; i++) {
			split(use[i], u, " ")
			if ((u[2] in def) && def[u[2]] != u[1])
				e[u[1], def[u[2]]] = 1
		}
		for (s in def)
			files[def[s]] = 1
		for (i = 1; i <= n; i++) {
			split(use[i], u, " ")
			files[u[1]] = 1
		}
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
