# shellcheck shell=bash
# Section (e) of lab/bench/bench-vm.sh, which sources this after lib.sh
# and lib-runs.sh (stream, setup_mode, stop_mode).

# Where the switch's time goes in the aggregation path: the function graph
# tracer's inclusive time of chosen functions over an unpaced stream. The
# tracer's own cost inflates every traced call (more so for short ones):
# read it as shares, not as the untraced cost.
TRACED="netagg_hook netagg_tree_rx netagg_sum netagg_scale netagg_xmit_alloc netagg_xmit
	pskb_copy __pskb_copy_fclone skb_copy_bits consume_skb nf_ip_checksum
	kernel_fpu_begin_mask kernel_fpu_end ip_local_out ip_route_output_key_hash"

section_e() {
	local T=/sys/kernel/tracing f n=3000 calls
	say "## (e) Where the time goes in the aggregation path"
	say
	say "MTU 1500, the stream of (b) unpaced, $n VIDs a worker; function graph"
	say "tracer on the functions below (inclusive times, tracing overhead included)."
	say "Per packet: total time over the packets the switch took in ($((4 * n)))."
	say
	setup_mode netagg 1500 || return
	echo 0 >$T/tracing_on
	echo function_graph >$T/current_tracer
	echo funcgraph-tail >$T/trace_options
	echo 65536 >$T/buffer_size_kb
	: >$T/set_ftrace_filter
	for f in $TRACED; do echo "$f" >>$T/set_ftrace_filter 2>/dev/null; done
	: >$T/trace
	echo 1 >$T/tracing_on
	stream netagg 1500 0 "$n" >/dev/null
	echo 0 >$T/tracing_on
	say "| function | calls per packet | µs per call | µs per packet |"
	say "|---|---|---|---|"
	perl -ne '
		next unless /([0-9.]+) us\s+\|/;
		my $d = $1; my $fn;
		if (m{\} /\* ([\w.]+)(?: \[\w+\])? \*/}) { $fn = $1 }
		elsif (/([\w.]+)\(\);/) { $fn = $1 } else { next }
		$n{$fn}++; $t{$fn} += $d;
		END {
			printf "| %s | %.2f | %.2f | %.2f |\n", $_, $n{$_} / '"$((4 * n))"',
				$t{$_} / $n{$_}, $t{$_} / '"$((4 * n))"'
				for sort { $t{$b} <=> $t{$a} } keys %n
		}' $T/trace | tee -a "$out"
	echo nop >$T/current_tracer
	: >$T/set_ftrace_filter
	stop_mode netagg
	say
}
