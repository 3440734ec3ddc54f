#!/bin/bash
# The man pages, on the host: each source in man/ renders with
# scripts/man-gen.sh into a page that man and groff format without a
# warning, and the pages say what the programs and the library have:
# netagg(8) every command of the CLI's usage, every counter of the spec
# (the list generated from it) and every long option; netagg-allreduce(1)
# every option its --help lists; libnetagg(3) the prototype of every
# function the library exports; each page the version of VERSION. The
# names are looked for in the section that explains them, in the page as
# a reader gets it (formatted as text, on lines too long to break), so
# that a name in a comment or an example alone does not count.
#
# NETAGG_MAN=DIR takes the pages' sources from DIR instead of man/, to see a
# case fail on a copy with something taken out.
cd "$(dirname "$0")/.." || exit 1
source tests/lib.sh
PY=/usr/bin/python3
trap 'rm -rf "$TEST_TMP"' EXIT
src=$(realpath "${NETAGG_MAN:-man}")
PAGES=(netagg.8 netagg-allreduce.1 libnetagg.3)

# Formatting the pages is the test: without the tools it fails, saying so.
command -v man >/dev/null || fail_setup "man is not installed (Debian: man-db)"
command -v groff >/dev/null || fail_setup "groff is not installed (Debian: groff-base)"
if [ ! -x "$NETAGG" ] || [ ! -x "$NETAGG_ALLREDUCE" ]; then
	fail_setup "not built: run make"
fi

ktap_plan 9

# Each page rendered, and formatted as plain text: lines as long as a
# paragraph, so that no name is broken across two, runs of blanks one.
for p in "${PAGES[@]}"; do
	if scripts/man-gen.sh "$src/$p.in" "$TEST_TMP/$p" >"$TEST_TMP/$p.err" 2>&1; then
		groff -man -Tascii -P-cbou -rLL=5000n "$TEST_TMP/$p" 2>/dev/null |
			tr -s ' ' >"$TEST_TMP/$p.txt"
	else
		: >"$TEST_TMP/$p.txt"
	fi
done

# section PAGE NAME: the text of the formatted PAGE's section NAME.
section()
{
	awk -v s="$2" '$0 == s { f = 1; next } /^[A-Z]/ { f = 0 } f' "$TEST_TMP/$1.txt"
}

# names DESC FILE PATTERN NAME...: every NAME is on a line of FILE that
# matches PATTERN, an extended regular expression with @ where the name
# goes; the case fails naming those that are not.
names()
{
	local desc=$1 file=$2 pattern=$3 name quoted missing=()
	shift 3
	if [ $# -eq 0 ]; then
		ktap_result fail "$desc" "no names to look for: their source gave none"
		return
	fi
	for name in "$@"; do
		quoted=$(sed 's/[][\.*^$()+?{}|]/\\&/g' <<<"$name")
		grep -Eq -- "${pattern//@/"$quoted"}" "$file" || missing+=("$name")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		ktap_result ok "$desc"
	else
		ktap_result fail "$desc" "missing: $(printf '"%s" ' "${missing[@]}")"
	fi
}

# (a) Without a warning, from man (as a reader's man formats it) or groff
# (every warning it has).
for p in "${PAGES[@]}"; do
	if [ ! -s "$TEST_TMP/$p" ]; then
		ktap_result fail "$p renders without a warning (man --warnings, groff -ww)" \
			"scripts/man-gen.sh $src/$p.in failed:" "$(cat "$TEST_TMP/$p.err")"
		continue
	fi
	warn=$( (MANWIDTH=80 man --warnings -l "$TEST_TMP/$p" 2>&1 >/dev/null | sed 's/^/man: /'
		 groff -man -ww -z "$TEST_TMP/$p" 2>&1 | sed 's/^/groff: /') )
	if [ -z "$warn" ]; then
		ktap_result ok "$p renders without a warning (man --warnings, groff -ww)"
	else
		ktap_result fail "$p renders without a warning (man --warnings, groff -ww)" "$warn"
	fi
done

# (b) Every command of the usage ("  netagg OBJECT [COMMAND] ..."), in
# COMMANDS, where each is explained.
section netagg.8 COMMANDS >"$TEST_TMP/commands"
mapfile -t cmds < <("$NETAGG" help |
	awk '/^  netagg / { c = $2; if ($3 ~ /^[a-z]+$/) c = c " " $3; print c }')
names "netagg.8 explains every command of netagg help, in COMMANDS" \
	"$TEST_TMP/commands" '(^| )netagg @( |$)' "${cmds[@]}"

# (c) Every counter of the spec, as netagg stats names it, an entry of
# COUNTERS's list: its name, then what the spec says it counts (the
# section on one line: a short name and its text share one, a long one
# does not). The prose before the list names counters too, but never so.
section netagg.8 COUNTERS | tr '\n' ' ' | tr -s ' ' >"$TEST_TMP/counters"
mapfile -t counters < <("$PY" -c '
import sys, yaml
spec = yaml.safe_load(open(sys.argv[1]))
stats = next(s for s in spec["attribute-sets"] if s["name"] == "stats")
for a in stats["attributes"]:
    if a["type"] != "unused":
        print(a["name"].replace("-", "_"), " ".join(a["doc"].split()))
' uapi/netagg.yaml)
names "netagg.8 lists every counter of uapi/netagg.yaml's stats set, with its meaning, in COUNTERS" \
	"$TEST_TMP/counters" '(^| )@( |$)' "${counters[@]}"

# (d) Every long option of the usage, and -help (which prints it), in OPTIONS.
section netagg.8 OPTIONS >"$TEST_TMP/options"
mapfile -t opts < <({ "$NETAGG" help | grep '^  -' | grep -oE -- '-[A-Za-z]{2,}'
		      echo -help; } | sort -u)
names "netagg.8 explains every long option of the CLI, in OPTIONS" \
	"$TEST_TMP/options" '(^|[ ,])@([ ,]|$)' "${opts[@]}"

# (e) Every option netagg-allreduce --help lists, in OPTIONS.
section netagg-allreduce.1 OPTIONS >"$TEST_TMP/ar-options"
mapfile -t opts < <("$NETAGG_ALLREDUCE" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u)
names "netagg-allreduce.1 explains every option of its --help, in OPTIONS" \
	"$TEST_TMP/ar-options" '(^|[ ,])@([ ,=]|$)' "${opts[@]}"

# (f) Every function the library exports, its prototype in SYNOPSIS.
section libnetagg.3 SYNOPSIS >"$TEST_TMP/synopsis"
mapfile -t funcs < <(awk '/global:/ { f = 1; next } /local:|}/ { f = 0 }
	f { gsub(/[ \t;]/, ""); if ($0 != "") print }' lib/libnetagg.map)
names "libnetagg.3 gives the prototype of every function of libnetagg.map, in SYNOPSIS" \
	"$TEST_TMP/synopsis" '[ *]@\(' "${funcs[@]}"

# (g) The version: VERSION's, in every page's title line; no @VERSION@ left.
v=$(cat VERSION)
bad=()
for p in "${PAGES[@]}"; do
	grep -q "^\.TH .* \"netagg $v\" " "$TEST_TMP/$p" 2>/dev/null && ! grep -q '@VERSION@' "$TEST_TMP/$p" ||
		bad+=("$p: $(grep -m1 -e '^\.TH' -e '@VERSION@' "$TEST_TMP/$p" 2>&1)")
done
if [ ${#bad[@]} -eq 0 ]; then
	ktap_result ok "every page says version $v (VERSION), none @VERSION@"
else
	ktap_result fail "every page says version $v (VERSION), none @VERSION@" "${bad[@]}"
fi

ktap_finish
