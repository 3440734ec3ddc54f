#!/bin/bash
# The code's shape, on the host, from the objects make built: which C file
# uses which (scripts/deps-graph.sh, by the symbols each object leaves
# undefined). The module's files use each other one way but for two pairs
# the kernel's callback shape makes: job.c and timers.c (job.c sets up and
# shuts down a tree's timers, naming timers.c's callbacks to timer_setup(),
# and the eviction timer changes the tree's members through job.c), and
# netlink.c and netlink-gen.c (the generated op table names netlink.c's
# handlers; netlink.c registers the family with it). Their includes run
# one way too, but for job.c and timers.c: the types every file works on
# are in state.h, which names no function of a .c file. The CLI's and
# the library's files use each other one way. No C file of kmod/ or userspace/ is over 900 lines.
cd "$(dirname "$0")/.." || exit 1
source tests/lib.sh

ktap_plan 4

check_eq "kmod/: no circle but job.c and timers.c, netlink.c and netlink-gen.c (callbacks named)" \
	"kmod/job.c kmod/timers.c
kmod/netlink-gen.c kmod/netlink.c" "$(scripts/deps-graph.sh circles kmod 2>&1)"
check_eq "kmod/'s includes: no circle but job.c and timers.c (the types in state.h)" \
	"kmod/job.c kmod/timers.c" "$(scripts/deps-graph.sh circles includes kmod 2>&1)"
check_eq "userspace/: the CLI and libnetagg without a circle" \
	"" "$(scripts/deps-graph.sh circles userspace userspace/libnetagg 2>&1)"
check_eq "no C file of kmod/ or userspace/ over 900 lines" "" \
	"$(wc -l kmod/*.[ch] userspace/*.[ch] userspace/libnetagg/*.[ch] |
		awk '$2 != "total" && $1 > 900 { print $2 ": " $1 }')"

ktap_finish
