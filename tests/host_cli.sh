#!/bin/bash
# The CLI's conventions, as ip's, on the host: what needs no module. Options
# take one dash or two and shorten to a unique prefix, short ones do not
# combine; -V prints the version; OBJECT help lists OBJECT's commands, and
# an object alone is its show command; -n NETNS runs the command in the
# named namespace; bash completion offers what the usage says:
#
#   host (this namespace)        netagg-cli-PID
#     no device d9               d9 (veth, peer d8)
#
# The host's kernel has no netagg module: a command that reaches the kernel
# fails there (exit 1, "module not loaded"), one refused on its command
# line exits 2 first, which tells the two apart.
cd "$(dirname "$0")/.." || exit 1
source tests/lib.sh
ns=netagg-cli-$$
trap 'ip netns del "$ns" 2>/dev/null; rm -rf "$TEST_TMP"' EXIT

# run ARGS...: "EXIT first-line-of-output" of netagg ARGS.
run() {
	local out rc
	out=$("$NETAGG" "$@" 2>&1)
	rc=$?
	echo "$rc ${out%%$'\n'*}"
}
nomod="1 Error: netagg module not loaded (generic netlink family \"netagg\" not found)"

ktap_plan 13

v=$(cat VERSION)
check_eq "-V, -Version, -ver, --version: the version" \
	"0 netagg $v|0 netagg $v|0 netagg $v|0 netagg $v" \
	"$(run -V)|$(run -Version)|$(run -ver)|$(run --version)"
check_eq "-j, -json, -js, --json, -pretty, -details, -t, -ts: taken, the command reaches the kernel" \
	"$nomod|$nomod|$nomod|$nomod|$nomod|$nomod|$nomod|$nomod" \
	"$(run -j show)|$(run -json show)|$(run -js show)|$(run --json show)|$(run -pretty show)|$(run -details stats)|$(run -t monitor)|$(run -ts monitor)"
check_eq "short options do not combine (-jp), an unknown long one is named" \
	"2 netagg: unknown option \"-jp\" (see -help)|2 netagg: unknown option \"-bogus\" (see -help)" \
	"$(run -jp show)|$(run -bogus show)"
printf 'help # a comment\n' >"$TEST_TMP/batch"
check_eq "-batch FILE and -b FILE run the file's commands" \
	"0 Usage: netagg [OPTIONS] OBJECT COMMAND [ARGS]|0 Usage: netagg [OPTIONS] OBJECT COMMAND [ARGS]" \
	"$(run -batch "$TEST_TMP/batch")|$(run -b "$TEST_TMP/batch")"
check_eq "-batch without its FILE: said" "2 netagg: option \"-batch\" needs a value" "$(run -batch)"

check_eq "job help: the job commands' lines (add's continued), nothing else" \
	"$(printf 'Usage:\nnetagg job add JID\n[key FILE]\nnetagg job del JID\nnetagg job show [JID]')" \
	"$("$NETAGG" job help | awk '{ print $1, $2, $3, $4 }' | sed 's/ *$//')"
check_eq "OBJECT help of an object without commands (stats, show): its line" \
	"0 Usage:|  netagg stats [job JID] [format text|prometheus]|  netagg show" \
	"$(run stats help)|$("$NETAGG" stats help | sed -n 2p)|$("$NETAGG" show help | sed -n 2p)"
check_eq "tree help: each command with the lines that continue it" \
	"6 3" "$("$NETAGG" tree help | tail -n +2 | wc -l) $("$NETAGG" tree help | grep -c '^  netagg tree ')"
check_eq "an object alone is its show command (job, xdp's needs no module); tree has none" \
	"$nomod|0 |2 netagg: tree: missing command (try \"netagg tree help\")" \
	"$(run job)|$(run xdp)|$(run tree)"

check_eq "-n: a namespace that does not exist, or a path, is refused" \
	"2 netagg: no network namespace \"$ns\" (ip netns list)|2 netagg: invalid network namespace name \"a/b\"" \
	"$(run -n "$ns" show)|$(run -netns a/b show)"
if [ "$(id -u)" -ne 0 ]; then
	ktap_result skip "-n NETNS: the command runs there" "not root: no namespace to make"
	ktap_result skip "... -netns too" "not root"
elif ! ip netns add "$ns" || ! ip -n "$ns" link add d9 type veth peer name d8; then
	ktap_result skip "-n NETNS: the command runs there" "no veth on this host"
	ktap_result skip "... -netns too" "no veth on this host"
else
	# Only in $ns is there a d9: attaching finds it there, and stops at the
	# module; here, at the device.
	check_eq "-n NETNS: the command runs there (its device found, here none)" \
		"1 Error: the netagg module is not loaded|2 netagg: xdp attach: no device \"d9\" in this namespace" \
		"$(run -n "$ns" xdp attach d9)|$(run xdp attach d9)"
	check_eq "... -netns too, with other options" "1 Error: the netagg module is not loaded" \
		"$(run -j -netns "$ns" xdp attach d9)"
fi

# Completion (cli/netagg.bash-completion), as bash-completion runs it.
# comp LINE: what completing LINE (up to the cursor) offers.
comp() {
	bash -c 'source /usr/share/bash-completion/bash_completion &&
		source cli/netagg.bash-completion || exit 1
		COMP_LINE=$1 COMP_POINT=${#1}
		read -ra COMP_WORDS <<<"$1"
		[[ $1 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_netagg netagg "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		echo "${COMPREPLY[*]}"' comp "$1" 2>&1
}
if [ ! -e /usr/share/bash-completion/bash_completion ]; then
	ktap_result skip "bash completion: objects, commands, keywords, names" \
		"bash-completion is not installed (scripts/deps.sh installs it)"
else
	check_eq "bash completion: objects, commands, keywords, names" \
		"job tree show stats reset set monitor xdp help|add del show help|dtype op window mtu memcap|root aggregator|text prometheus|-j -json" \
		"$(comp "netagg ")|$(comp "netagg -n sw job ")|$(comp "netagg job add 7 ")|$(comp "netagg tree add job 7 tree 0 role ")|$(comp "netagg stats format ")|$(comp "netagg -j")"
fi
ktap_finish
