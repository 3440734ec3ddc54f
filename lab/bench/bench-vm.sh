#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# The VM half of make bench (lab/bench/bench.sh starts it): the switch's cost
# per packet three ways, allreduce times, and how the cost scales. Writes a
# Markdown report to OUT and prints it. Every figure of a table is measured
# in this run, and each is also given as a ratio to that table's baseline.
#
# Each section is a file beside this one, which says what it measures:
#   (b) stream: one switch, four workers, three ways     section-b.sh
#   (c) allreduce completion time                        section-c.sh
#   (d) scaling: switch CPU per packet                   section-d.sh
#   (e) where the time goes in the aggregation path      section-e.sh
#   (f) peers: netagg against Gloo and Open MPI          section-f.sh
#       (the peers' runs, which (i) uses too:            section-f-peers.sh)
#   (n) all-reduce as nccl-tests reports it              section-n.sh
#   (g) cores: the switch on one CPU and on two          section-g.sh
#   (h) where the time goes: per send and per byte       section-h.sh
#   (k) sharing a link with TCP                          section-k.sh
#   (s) one straggler                                    section-s.sh
#   (t) training                                         section-t.sh
#   (p), (i) make profile's (lab/profile/profile.sh)     section-p.sh, section-i.sh
#   (w) make profile's: where the wall time goes         section-w.sh
# over lib.sh (the setup, the settings, the star of workers around the
# switch and its jobs) and lib-runs.sh (the stream of (b), the allreduce of
# (c), the instruction counts). SECTIONS picks the sections (default
# bcdefnghkst); they run in the order bcdefnghkstpiw.
#
# Figures come from an emulated (TCG) VM: every instruction, the vector
# ones most, is far slower than on hardware. Compare ratios, not absolutes.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib-runs.sh"
source "$(dirname "${BASH_SOURCE[0]}")/section-b.sh"
source "$(dirname "${BASH_SOURCE[0]}")/section-c.sh"
source "$(dirname "${BASH_SOURCE[0]}")/section-d.sh"
source "$(dirname "${BASH_SOURCE[0]}")/section-e.sh"
source "$(dirname "${BASH_SOURCE[0]}")/section-f-peers.sh"
source "$(dirname "${BASH_SOURCE[0]}")/section-f.sh"
source "$(dirname "${BASH_SOURCE[0]}")/section-n.sh"
source "$(dirname "${BASH_SOURCE[0]}")/section-g.sh"
source "$(dirname "${BASH_SOURCE[0]}")/section-h.sh"
source "$(dirname "${BASH_SOURCE[0]}")/section-k.sh"
source "$(dirname "${BASH_SOURCE[0]}")/section-p.sh"
source "$(dirname "${BASH_SOURCE[0]}")/section-i.sh"
source "$(dirname "${BASH_SOURCE[0]}")/section-s.sh"
source "$(dirname "${BASH_SOURCE[0]}")/section-t.sh"
source "$(dirname "${BASH_SOURCE[0]}")/section-w.sh"

ROUND=1
sysctl -qw net.core.netdev_max_backlog=10000
say "# netagg benchmark, in the VM"
say
say "Kernel $(uname -r), $(nproc) vCPUs (QEMU TCG), reduction code:" \
	"$(module_load && cat /sys/module/netagg/parameters/simd; module_unload)."
say
# Where the run is, on stderr (the report stays clean): section k of n.
order=bcdefnghkstpiw
nsec=0 ksec=0
for ((i = 0; i < ${#order}; i++)); do
	[[ $sections == *${order:i:1}* ]] && nsec=$((nsec + 1))
done
begin_section() { ksec=$((ksec + 1)); ktap_progress "$ksec" "$nsec" "bench section ($1)" >&2; }
[[ $sections == *b* ]] && { begin_section b; measure_cpu1; section_b; measure_done; }
[[ $sections == *c* ]] && { begin_section c; section_c; }
[[ $sections == *d* ]] && { begin_section d; measure_cpu1; section_d; measure_done; }
[[ $sections == *e* ]] && { begin_section e; section_e; }
[[ $sections == *f* ]] && { begin_section f; section_f; }
[[ $sections == *n* ]] && { begin_section n; section_n; }
[[ $sections == *g* ]] && { begin_section g; section_g; }
[[ $sections == *h* ]] && { begin_section h; section_h; }
[[ $sections == *k* ]] && { begin_section k; section_k; }
[[ $sections == *s* ]] && { begin_section s; section_s; }
[[ $sections == *t* ]] && { begin_section t; section_t; }
[[ $sections == *p* ]] && { begin_section p; measure_cpu1; section_p || exit 1; measure_done; }
[[ $sections == *i* ]] && { begin_section i; section_i; }
[[ $sections == *w* ]] && { begin_section w; section_w; }
echo "# bench: done in $(ktap_elapsed)" >&2
exit 0
