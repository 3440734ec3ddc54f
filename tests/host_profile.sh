#!/bin/bash
# make profile's wall-time reader (lab/profile/wall.py), on the host, on a
# trace made by hand whose attribution is known to the microsecond: one
# worker on two vCPUs marks its timed allreduce, runs 2 ms, sleeps in
# ppoll() 3 ms, is woken by a NET_RX softirq onto the other, halted, vCPU,
# which takes 100 us to run it, and ends 0.9 ms later. While one vCPU
# idles with no worker waiting, the other runs the worker's user space.
# Then make profile's names for instruction counts (lab/profile/symbols.sh),
# on snapshots of the plugin made by hand.
#
#   vCPU 0: worker user 2 ms | idle 3 ms | NET_RX 0.5 ms | idle 0.5 ms
#   vCPU 1: idle 5 ms | idle, the worker woken onto it 0.1 ms | worker 0.9 ms
cd "$(dirname "$0")/.." || exit 1
source tests/lib.sh
PY=/usr/bin/python3
trap 'rm -rf "$TEST_TMP"' EXIT

wall() { "$PY" lab/profile/wall.py "$@"; }

# The lines as `perf script --ns -F comm,pid,tid,cpu,time,event,trace` prints them.
ev() { printf '%16s %6s [%03d] %s: %s: %s\n' "$@"; }
{
	ev swapper 0/0 0 9.999000000 sched:sched_switch \
		"prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=worker next_pid=100 next_prio=120"
	ev kworker/1:1 20/20 1 9.999000000 sched:sched_switch \
		"prev_comm=kworker/1:1 prev_pid=20 prev_prio=120 prev_state=I ==> next_comm=swapper/1 next_pid=0 next_prio=120"
	ev worker 100/100 0 10.000000000 raw_syscalls:sys_enter "NR 3 (6e610001, 0, 0, 0, 0, 0)"
	ev worker 100/100 0 10.000000000 raw_syscalls:sys_exit "NR 3 = -9"
	ev worker 100/100 0 10.002000000 raw_syscalls:sys_enter "NR 271 (7ffd0, 1, 7ffe0, 0, 8, 0)"
	ev worker 100/100 0 10.002000000 sched:sched_switch \
		"prev_comm=worker prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120"
	ev swapper 0/0 0 10.005000000 irq:softirq_entry "vec=3 [action=NET_RX]"
	ev swapper 0/0 0 10.005000000 sched:sched_wakeup "comm=worker pid=100 prio=120 target_cpu=001"
	ev swapper 0/0 1 10.005100000 sched:sched_switch \
		"prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=worker next_pid=100 next_prio=120"
	ev worker 100/100 1 10.005100000 raw_syscalls:sys_exit "NR 271 = 1"
	ev swapper 0/0 0 10.005500000 irq:softirq_exit "vec=3 [action=NET_RX]"
	ev worker 100/100 1 10.006000000 raw_syscalls:sys_enter "NR 3 (6e610002, 0, 0, 0, 0, 0)"
} >"$TEST_TMP/trace"

ktap_plan 12

check "a summary of the trace" bash -c \
	"'$PY' lab/profile/wall.py summary '$TEST_TMP/trace' --reps 1 >'$TEST_TMP/s.json'"
us() { jq -r "$1 * 1e6 | round" "$TEST_TMP/s.json" 2>&1; }
check_eq "the window: from the begin mark to the end mark" 6000 "$(us .wall)"
check_eq "the vCPUs' time: user, NET_RX on the idle vCPU, idle with the worker woken onto it, idle" \
	"2900 500 100 8500" \
	"$(us '.vcpu_seconds["workers: user"]') $(us '.vcpu_seconds["softirq NET_RX (idle vCPU)"]') $(us '.vcpu_seconds["idle, a worker waiting"]') $(us '.vcpu_seconds["idle, no worker waiting"]')"
check_eq "the worker's: running, runnable, asleep in ppoll" "2900 100 3000" \
	"$(us '.worker_seconds.running') $(us '.worker_seconds.runnable') $(us '.worker_seconds["sleeping: ppoll"]')"
check_eq "while a vCPU idled with no worker waiting, the other ran the worker's user space" \
	"{\"workers: user\":2500}" "$(jq -c '.beside_idle | map_values(. * 1e6 | round)' "$TEST_TMP/s.json")"
check_eq "its wake-ups: one onto an idle vCPU, 100 us to run; none onto a busy one" "1 100 0" \
	"$(jq -r '.wakeups["onto an idle vCPU"].count' "$TEST_TMP/s.json") $(us '.wakeups["onto an idle vCPU"].median_us / 1e6') $(jq -r '.wakeups["onto a busy vCPU"].count' "$TEST_TMP/s.json")"
wall summary "$TEST_TMP/trace" --reps 1 --name netagg >"$TEST_TMP/n.json"
wall table "$TEST_TMP/n.json" >"$TEST_TMP/table" 2>&1
check_eq "the table's rows of idle and of wake-ups" \
	"| vCPUs: idle, a worker waiting | 1 % |
| vCPUs: idle, no worker waiting | 71 % |
| while a vCPU idles, no worker waiting, the others run | a worker's user space 100 % |
| a worker's wake-ups onto an idle vCPU (median latency) | 1 (100 µs) |" \
	"$(grep -E 'idle, |idles|wake-ups onto an idle' "$TEST_TMP/table")"
grep -v 6e61000 "$TEST_TMP/trace" >"$TEST_TMP/unmarked"
check_err "a trace without marks is refused, saying so" "no marks in the trace" \
	wall summary "$TEST_TMP/unmarked" --reps 1

# (i)'s functions: netagg-allreduce and libc mapped as a worker without
# address randomization has them; blocks in netagg_recv_batch, in libc's
# memmove, in no mapping, and in the kernel, each counted in a timed
# region (the snapshot's last eight columns), 200, 100, 50 and 50
# instructions between snapshots 1 and 2.
source lab/profile/symbols.sh
dir=$TEST_TMP
exe=$(readlink -f "$NETAGG_ALLREDUCE") libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
cat >"$TEST_TMP/maps" <<MAPS
555555554000-555555556000 r--p 00000000 00:1d 1 $exe
555555556000-555555600000 r-xp 00002000 00:1d 1 $exe
7ffff7dcc000-7ffff7df2000 r--p 00000000 00:16 2 $libc
7ffff7df2000-7ffff7f48000 r-xp 00026000 00:16 2 $libc
7ffff7fc8000-7ffff7fca000 r-xp 00000000 00:00 0 [vdso]
MAPS
echo "ffffffff81000000 T copy_user_enhanced_fast_string" >"$TEST_TMP/kallsyms"
sym() { nm "$1" 2>/dev/null | awk -v f="$2" '$3 == f { print $1; exit }'; }
recv=$(printf %x $((0x555555554000 + 0x$(sym "$exe" netagg_recv_batch) + 16)))
memmove=$(printf %x $((0x7ffff7dcc000 + 0x$(sym "$(debug_file "$libc")" __memmove_avx_unaligned_erms) + 4)))
# ADDRESS INSTRUCTIONS TIMES: a block's line, its times in the last column.
block() { echo "$1 $2 $3 0 0 0 0 0 0 0 0 0 0 0 0 0 0 $3"; }
{ block "$recv" 10 10; block "$memmove" 5 0; block 600000000000 1 0; block ffffffff81000010 2 0; } \
	>"$TEST_TMP/mark.1"
{ block "$recv" 10 30; block "$memmove" 5 20; block 600000000000 1 50; block ffffffff81000010 2 25; } \
	>"$TEST_TMP/mark.2"
check_eq "user space named by the worker's map, per byte" \
	"2.0000 netagg_recv_batch (netagg-allreduce)
1.0000 __memmove_avx_unaligned_erms (libc.so.6)
0.5000 [user space, elsewhere]
0.5000 copy_user_enhanced_fast_string" \
	"$(timed_by_function "$TEST_TMP/kallsyms" 1 2 100 "$TEST_TMP/maps" | LC_ALL=C sort -k1,1nr -k2)"
check_eq "without a map, user space as one" "3.5000 [user space]
0.5000 copy_user_enhanced_fast_string" "$(timed_by_function "$TEST_TMP/kallsyms" 1 2 100)"
check_eq "the end of an executable mapping ends its last function" \
	"[user space, elsewhere]" \
	"$(user_symbols "$TEST_TMP/maps" | sort | awk '$1 == "0000555555600000" { $1 = $2 = ""; print substr($0, 3) }')"
user_symbols "$TEST_TMP/maps" >"$TEST_TMP/user_symbols"
check "libc's own (debug) symbols, not only its exported ones" \
	grep -q ' __memmove_avx_unaligned_erms (libc.so.6)$' "$TEST_TMP/user_symbols"
ktap_finish
