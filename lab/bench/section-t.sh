# shellcheck shell=bash
# Section (t) of lab/bench/bench-vm.sh, which sources this after lib.sh
# and lib-runs.sh.
#
# (t) Training. The example of make train (lab/train.sh, EPOCHS_T
#     epochs): time a DDP step with gloo's allreduce, with the netagg hook,
#     with the hook blocking backward, and over the "netagg" backend with
#     no hook; ratios to gloo.

section_t() {
	local dir=$NETAGG_ROOT/tests/out/bench-train sum mode
	say "## (t) A training step: DDP through gloo, the netagg hook and the backend"
	say
	say "make train's example (python/examples/train_digits.py: a 64-128-128-10"
	say "network on scikit-learn's digits, 4 workers, the star of (c), one DDP"
	say "bucket a layer), ${EPOCHS_T:-3} epochs a mode; median time of a step"
	say "(forward, backward with its allreduces, optimizer), the slowest worker's."
	say
	ip -all netns delete
	NS_LIST=()
	module_unload
	if ! TRAIN_OUT=$dir EPOCHS=${EPOCHS_T:-3} bash "$NETAGG_ROOT/lab/train.sh" \
		>"$dir.log" 2>&1; then
		say "(the run failed: tests/out/bench-train.log)"
		tail -n 20 "$dir.log" >&2
		return 0
	fi
	sum=$dir/summary.json
	say "| mode | step ms | vs gloo | final accuracy |"
	say "|---|---|---|---|"
	for mode in gloo netagg netagg-blocking netagg-backend; do
		say "$(jq -r --arg m "$mode" '"| \($m) | \(.step_seconds_median[$m] * 1000 |
			. * 100 | round / 100) | \(.step_seconds_median[$m] /
			.step_seconds_median.gloo | . * 100 | round / 100) | \(.final_accuracy[$m] |
			. * 1000 | round / 1000) |"' "$sum")"
	done
	say
}
