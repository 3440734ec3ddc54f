#!/bin/bash
# Tallying one test script's KTAP output, as kselftest's runner does: the
# cases are counted against the script's plan, so a script that stops
# early, or emits more cases than it planned, fails even if every case it
# emitted passed. Sourced by tests/run.sh (host checks) and tests/vm-suite.sh.

# ktap_tally LOG NAME SKIPS: sets tally_pass, tally_fail, tally_skip and
# tally_problem (why the script failed as a whole, or empty). Each skipped
# case, and a script skipped whole ("1..0 # SKIP reason"), is appended to
# the file SKIPS as "NAME: case: reason"; a skip must give its reason.
ktap_tally()
{
	local log=$1 name=$2 skips=$3 plan line n=0 reason
	local skip_all='^1\.\.0([[:space:]]*#[[:space:]]*SKIP[[:space:]]*(.*))?$'
	local skip_case='^ok [0-9]+ (.*[^[:space:]])?[[:space:]]*#[[:space:]]*SKIP[[:space:]]*(.*)$'

	tally_pass=0 tally_fail=0 tally_skip=0 tally_problem=
	plan=$(grep -m 1 -E '^1\.\.[0-9]+' "$log")
	if [ -z "$plan" ]; then
		tally_problem="no KTAP plan (1..N)"
		return
	fi
	if [[ $plan =~ $skip_all ]]; then
		reason=${BASH_REMATCH[2]}
		if [ -z "${BASH_REMATCH[1]}" ] || [ -z "$reason" ]; then
			tally_problem="planned no case and gave no reason to skip"
			return
		fi
		tally_skip=1
		echo "$name: (all): $reason" >>"$skips"
		return
	fi
	plan=${plan#1..}
	plan=${plan%%[!0-9]*}
	# A here-string, not < <(...): a minimal /dev may have no /dev/fd.
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		n=$((n + 1))
		if [[ $line == not\ ok* ]]; then
			tally_fail=$((tally_fail + 1))
		elif [[ $line =~ $skip_case ]]; then
			tally_skip=$((tally_skip + 1))
			reason=${BASH_REMATCH[2]}
			if [ -z "$reason" ]; then
				tally_fail=$((tally_fail + 1))
				tally_problem="case $n skipped without a reason"
			fi
			echo "$name: ${BASH_REMATCH[1]:-case $n}: ${reason:-(no reason given)}" >>"$skips"
		else
			tally_pass=$((tally_pass + 1))
		fi
	done <<<"$(grep -E '^(not )?ok [0-9]+( |$)' "$log")"
	if [ "$n" -ne "$plan" ]; then
		tally_problem="planned $plan cases, ran $n"
	fi
}

# ktap_elapsed: the time since the script that sourced this started
# (bash's SECONDS), as "12m05s".
ktap_elapsed()
{
	printf '%dm%02ds' $((SECONDS / 60)) $((SECONDS % 60))
}

# ktap_progress K N NAME: where a long run is, as a KTAP diagnostic line
# that every reader skips: "# [K/N] NAME, 12m05s in".
ktap_progress()
{
	echo "# [$1/$2] $3, $(ktap_elapsed) in"
}
