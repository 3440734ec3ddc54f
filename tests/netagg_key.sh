#!/bin/bash
# Keyed jobs (linux/netagg.h, "Tags"): a job given a key takes only packets
# tagged with it, bound to their sender, session, round, VID and tree; its
# workers take only results so tagged. Forged contributions, sent from a
# worker's own address and port before it starts, are dropped and counted
# (drop_tag), and the sums stay exact; the same forgery against an unkeyed
# job makes its sum wrong. A forged result sent to a worker from its
# parent's address and port is refused (bad_tags), the allreduce exact;
# an unkeyed worker takes it. The key is never shown. Two levels, over
# IPv4 and IPv6, through the netfilter hook and the XDP program.
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: job 7 (keyed), job 9 (no key), job 8
#   w3 10.0.3.1 --+   (another key), root of tree 0 each
#   w4 10.0.4.1 --+
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT
FORGE=$NETAGG_ROOT/tests/forge.py
KEY=$TEST_TMP/key7
OTHER=$TEST_TMP/key8
CHILDREN=(child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1)

ktap_plan 29
module_load
topo_star 4
head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n' >"$KEY"
echo >>"$KEY"
head -c 32 /dev/urandom >"$OTHER"

check "job add 7 key FILE (64 hex digits and a newline)" netagg_in sw job add 7 key "$KEY"
check "job add 8 key FILE (32 bytes)" netagg_in sw job add 8 key "$OTHER"
netagg_in sw job add 9
for j in 7 8 9; do netagg_in sw tree add job $j tree 0 role root "${CHILDREN[@]}"; done
check_eq "job show says which jobs are keyed, in text and JSON" \
	"keyed keyed - true true false" \
	"$(for j in 7 8 9; do netagg_in sw job show $j | grep -qw keyed && echo keyed || echo -; done | xargs) $(netagg_in sw -j job show | jq -r '[.jobs[] | select(.jid >= 7) | .keyed] | join(" ")')"
hex=$(tr -d '\n' <"$KEY")
raw=$(od -An -tx1 -v "$OTHER" | tr -d ' \n')
check_eq "the keys are in no reply: job show, stats, show, their JSON" "0" \
	"$(for a in "job show" "stats" "show"; do netagg_in sw $a; netagg_in sw -j $a; done |
	   tr -d ' \n:' | tr 'A-F' 'a-f' | grep -c -e "${hex:0:16}" -e "${raw:0:16}")"
check_err "a key file that cannot be read: exit 1, saying why" "No such file" \
	netagg_in sw job add 10 key "$TEST_TMP/none"
head -c 31 /dev/urandom >"$TEST_TMP/short"
check_err "a key of 31 bytes: refused, saying what a key is" "not 32 bytes, nor 64 hex digits" \
	netagg_in sw job add 10 key "$TEST_TMP/short"
check_eq "... exit 2 (usage), and no job 10" "2 0" \
	"$(netagg_in sw job add 10 key "$TEST_TMP/short" 2>/dev/null; echo $?) $(netagg_in sw -j job show | jq '[.jobs[] | select(.jid == 10)] | length')"

# Every worker sends from port 40001, the one forge.py takes before them.
check "a keyed job: four workers' f32 allreduce, exact" \
	star_allreduce 7 100000 2 --key "$KEY" --port 40001
check_eq "... none of its packets dropped for its tag" 0 "$(counter sw job 7 drop_tag)"
check "the unkeyed job beside it: exact" star_allreduce 9 100000 2 --port 40001
# job8 DTYPE: job 8 again, of DTYPE, keyed with the other key.
job8() {
	netagg_in sw job del 8 && netagg_in sw job add 8 dtype "$1" key "$OTHER" &&
		netagg_in sw tree add job 8 tree 0 role root "${CHILDREN[@]}"
}
halves() {
	job8 f16 && star_allreduce 8 100000 1 --key "$OTHER" --dtype f16 &&
		job8 bf16 && star_allreduce 8 100000 1 --key "$OTHER" --dtype bf16
}
check "f16 and bf16 keyed jobs (another key): exact" halves
ints() {
	job8 i32 && STAR_PLAIN="1 3" star_allreduce 8 100000 1 --key "$OTHER" --dtype i32 --segments 8
}
check "an i32 keyed job, super-packets of 8 and plain packets mixed: exact" ints

# A worker without the key: every packet of it dropped, nothing summed.
before=$(counter sw job 7 drop_tag)
ip netns exec w1 "$NETAGG_ALLREDUCE" --job 7 --tree 0=10.0.1.254 --rank 0 --workers 4 \
	--no-join --session 5 --round 100 --count 1000 --timeout-ms 1500 --quiet 2>/dev/null
rc=$?
grew=$(( $(counter sw job 7 drop_tag) - before ))
check_eq "a worker without the key fails (exit 1), its packets dropped as drop_tag" \
	"1 yes" "$rc $([ "$grew" -ge 3 ] && echo yes || echo "no: $grew")"

# forged JOB ARGS...: forge.py as w1 (its address, port 40001) to sw:
# contributions to session 77, round 1000, VIDs 0-5 of JOB, of a keyed
# chunk's 360 elements (the packet its MTU's, tag and all); prints the
# job's drop_tag count after, less before.
forged() {
	local job=$1 before
	shift
	before=$(counter sw job "$job" drop_tag)
	ip netns exec w1 python3 "$FORGE" --dst 10.0.1.254 --port 40001 --job "$job" \
		--session 77 --round 1000 --vids 0-5 --count 360 "$@" >/dev/null || return 1
	echo $(( $(wait_counter "$((before + 6))" sw job "$job" drop_tag) - before ))
}
# run77 JOB ARGS...: the four workers' allreduce of that session and round.
run77() {
	local job=$1
	shift
	STAR_NOJOIN=1 star_allreduce "$job" 2000 1 --session 77 --port 40001 "$@"
}
# A run of session 77 whose first round is 1000: star_allreduce takes its
# rounds from next_round, so the reservation below gives it 1000.
echo 999 >"$TEST_TMP/round"
check_eq "forged contributions: no tag, a random one, another job's key, another sender's, another VID's, tree's, round's: all dropped" \
	"6 6 6 6 6 6 6" \
	"$(forged 7 --no-tag) $(forged 7 --random-tag) $(forged 7 --key "$OTHER") $(forged 7 --key "$KEY" --as 10.0.2.1:40001) $(forged 7 --key "$KEY" --tag-vid 9) $(forged 7 --key "$KEY" --tag-tree 1) $(forged 7 --key "$KEY" --tag-round 999)"
check "... and the allreduce of that session and round after them: exact" run77 7 --key "$KEY"
echo 999 >"$TEST_TMP/round"
# (VIDs 0-4: the run's whole chunks, so that its last completes and its
# workers see the sums.)
ip netns exec w1 python3 "$FORGE" --dst 10.0.1.254 --port 40001 --job 9 \
	--session 77 --round 1000 --vids 0-4 --count 362 --no-tag >/dev/null
run77 9 >/dev/null
check_eq "the same forgery against the unkeyed job: its sum is wrong" "false" \
	"$(jq -r .ok "$TEST_TMP/ar.1")"

# w1's packets of round 1000 (its whole chunks, VIDs 0-4), rightly tagged
# (a capture's bytes, as far as the node can tell), replayed before the
# workers' next round: duplicates of the round the node is in, not summed
# again.
echo 1000 >"$TEST_TMP/round"
dup0=$(counter sw tree 7 0 duplicate)
ip netns exec w1 python3 "$FORGE" --dst 10.0.1.254 --port 40001 --job 7 \
	--session 77 --round 1000 --vids 0-4 --count 360 --key "$KEY" >/dev/null
check_eq "the last round's packets replayed: 5 duplicates, not summed" 5 \
	"$(( $(wait_counter $((dup0 + 5)) sw tree 7 0 duplicate) - dup0 ))"
check "... then the next round: exact" run77 7 --key "$KEY"

# result_forged JOB ARGS...: the run of session 77 with w4 2 s late
# (scaled), and sw sending w1 results for its VIDs once w1's socket is
# open, for 0.5 s, from sw's address and port 7177 (w1's parent's),
# forge.py --result ARGS (of 362 elements, an unkeyed chunk's, unless ARGS
# say); w1's JSON in $TEST_TMP/ar.1.
result_forged() {
	local job=$1 round rc=0
	shift
	round=$(( $(cat "$TEST_TMP/round") + 1 ))
	(for i in $(seq 300); do
		ip netns exec w1 ss -Hlun 'sport = :40001' | grep -q . && break
		sleep 0.1
	 done
	 ip netns exec sw python3 "$FORGE" --dst 10.0.1.1:40001 --port 7177 --job "$job" \
		--session 77 --round "$round" --vids 0-1 --count 362 --result \
		--contributors 4 --for 0.5 "$@" >/dev/null) &
	STAR_LATE="4 $(scaled 2)" run77 "$job" "${KEYARG[@]}" >/dev/null || rc=1
	wait
	return $rc
}
KEYARG=(--key "$KEY")
check "forged results to a keyed worker from its parent's address: refused, the allreduce exact" \
	result_forged 7 --key "$OTHER" --count 360
check_eq "... counted in its bad_tags; nothing resent for them" "bad_tags=some retransmits=0" \
	"$(jq -r '"bad_tags=\(.bad_tags) retransmits=\(.retransmits)"' "$TEST_TMP/ar.1" |
	   sed -E 's/bad_tags=[1-9][0-9]*/bad_tags=some/')"
KEYARG=()
result_forged 9 --no-tag
check_eq "the same forgery to an unkeyed worker: its sum is wrong" "false" \
	"$(jq -r .ok "$TEST_TMP/ar.1")"

# README's keyed job, as printed: the key made, the switch's lines in sw,
# each worker's in its namespace.
readme() {
	local line pids=() rc=0
	cd "$TEST_TMP" || return 1
	while read -r line; do
		line=${line/#netagg-allreduce /$NETAGG_ALLREDUCE --quiet }
		line=${line/#netagg /$NETAGG }
		case $line in
		head*) eval "$line" || return 1 ;;
		*"# worker "[12]) ip netns exec "w${line: -1}" bash -c "$line" & pids+=($!) ;;
		*) ip netns exec sw bash -c "$line" || return 1 ;;
		esac
	done < <(sed -n '/^    head -c 32 \/dev\/urandom >job11.key/,/# worker 2$/s/^    //p' \
		"$NETAGG_ROOT/README.md")
	[ ${#pids[@]} = 2 ] || return 1
	for line in "${pids[@]}"; do wait "$line" || rc=1; done
	return $rc
}
check "README's keyed job, as printed: exact" readme

# Two levels: each aggregator tags the sums it sends up, bound to the
# address routing picks towards root; root and the aggregators tag results.
#
#   w1 w2 w3 (10.1.0.1-3) --br-- agg1 --\
#                                         root     job 17 on IPv4, job 18 on
#   w4 w5 w6 (10.2.0.4-6) --br-- agg2 --/          the IPv6 twins; one key
del_ns_all
topo_racks
for r in 1 2; do
	netagg_in "agg$r" job add 17 key "$KEY"
	netagg_in "agg$r" tree add job 17 tree 0 role aggregator parent "10.9.$r.254" \
		$(for w in 1 2 3 4 5 6; do [ "$(rack_of $w)" = $r ] && echo "child 10.$r.0.$w"; done)
	netagg_in "agg$r" job add 18 key "$KEY"
	netagg_in "agg$r" tree add job 18 tree 0 role aggregator parent "fd00:9:$r::254" \
		$(for w in 1 2 3 4 5 6; do [ "$(rack_of $w)" = $r ] && echo "child fd00:$r:0::$w"; done)
done
netagg_in root job add 17 key "$KEY"
netagg_in root tree add job 17 tree 0 role root child 10.9.1.1 child 10.9.2.1
netagg_in root job add 18 key "$KEY"
netagg_in root tree add job 18 tree 0 role root child fd00:9:1::1 child fd00:9:2::1

check "two levels over IPv4, keyed: exact" racks 17 v4 --key "$KEY"
check_eq "... the aggregators' sums went up and were taken, none dropped for its tag" \
	"yes yes 0 0 0" \
	"$(for n in agg1 agg2; do [ "$(counter "$n" tree 17 0 emitted_up)" -gt 0 ] && echo yes || echo no; done | xargs) $(for n in root agg1 agg2; do counter "$n" job 17 drop_tag; done | xargs)"
check "two levels over IPv6, keyed: exact" racks 18 v6 --key "$KEY"
before=$(counter root job 17 drop_tag)
ip netns exec agg1 python3 "$FORGE" --dst 10.9.1.254 --port 7177 --job 17 \
	--session 0 --round 5 --vids 0-3 --count 360 --key "$OTHER" >/dev/null
check_eq "a sum forged as agg1's (its address and port, another key): root drops it" 4 \
	"$(( $(wait_counter $((before + 4)) root job 17 drop_tag) - before ))"

# The same through the XDP program on every node's ports.
if [ -e /sys/kernel/btf/vmlinux ]; then
	xdp0=$(counter agg1 namespace ns_xdp)
	check "through the XDP program on every node's ports: netagg xdp attach" racks_xdp
	check "... two levels over IPv4, keyed: exact" racks 17 v4 --key "$KEY"
	check_eq "... agg1's XDP hook took them" yes \
		"$([ "$(( $(counter agg1 namespace ns_xdp) - xdp0 ))" -gt 0 ] && echo yes)"
	racks_xdp_off
else
	for i in 1 2 3; do ktap_result skip "through the XDP program (case $i)" "this kernel has no BTF"; done
fi
ktap_finish
