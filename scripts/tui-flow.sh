#!/usr/bin/env bash
# Drives the built kvbench binary's full-screen interface in tmux through
# home -> config form -> live run -> summary against the built-in engine,
# prints a capture of each screen, and exits non-zero when an expected
# text never appears (each wait polls the pane until a timeout).
#
#   scripts/tui-flow.sh            # build, drive, print the captures
#   KEEP=1 scripts/tui-flow.sh     # keep the work directory
#   WIDTH=80 HEIGHT=24 scripts/tui-flow.sh
#
# Needs go and tmux (installed with apt-get when missing and run as root).
set -euo pipefail

cd "$(dirname "$0")/.."
WIDTH=${WIDTH:-120}
HEIGHT=${HEIGHT:-35}
TIMEOUT=${TIMEOUT:-60}

if ! command -v tmux >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "tui-flow: installing tmux" >&2
		apt-get update -qq >/dev/null && apt-get install -y -qq tmux >/dev/null
	else
		echo "tui-flow: tmux is needed (apt-get install tmux)" >&2
		exit 2
	fi
fi

work=$(mktemp -d)
sock="kvbench-flow-$$"
cleanup() {
	tmux -L "$sock" kill-server >/dev/null 2>&1 || true
	if [ -z "${KEEP:-}" ]; then rm -rf "$work"; else echo "tui-flow: kept $work" >&2; fi
}
trap cleanup EXIT

echo "tui-flow: building" >&2
go build -o "$work/kvbench" .

# A private tmux server: the user's sessions are never touched. The
# program's exit status lands in a file once it ends.
tmux -L "$sock" new-session -d -s flow -x "$WIDTH" -y "$HEIGHT" \
	"env TERM=xterm-256color KVBENCH_RUNS_DIR='$work/runs' KVBENCH_CONFIG_DIR='$work/config' '$work/kvbench'; echo \$? > '$work/status'; sleep 600"

capture() { tmux -L "$sock" capture-pane -p -t flow; }

# wait_for TEXT...: poll the pane until every TEXT shows, or fail.
wait_for() {
	local deadline=$((SECONDS + TIMEOUT)) pane t missing
	while :; do
		pane=$(capture)
		missing=""
		for t in "$@"; do
			if ! grep -qF -- "$t" <<<"$pane"; then missing=$t; break; fi
		done
		[ -z "$missing" ] && return 0
		if [ $SECONDS -ge $deadline ]; then
			echo "tui-flow: FAIL: \"$missing\" did not appear within ${TIMEOUT}s; the screen was:" >&2
			echo "$pane" >&2
			exit 1
		fi
		sleep 0.1
	done
}

# wait_gone TEXT: poll the pane until TEXT has gone, or fail.
wait_gone() {
	local deadline=$((SECONDS + TIMEOUT)) pane
	while pane=$(capture) && grep -qF -- "$1" <<<"$pane"; do
		if [ $SECONDS -ge $deadline ]; then
			echo "tui-flow: FAIL: \"$1\" still shown after ${TIMEOUT}s; the screen was:" >&2
			echo "$pane" >&2
			exit 1
		fi
		sleep 0.1
	done
}

keys() { tmux -L "$sock" send-keys -t flow "$@"; }
# type_into TEXT: clear the focused input and type TEXT.
type_into() { keys C-u; keys -l "$1"; }

show() {
	echo "===== $1 (${WIDTH}x${HEIGHT}) ====="
	capture
	echo
}

# Home.
wait_for "Workloads" "long-doc-qa" "Recent runs" "no run yet"
show "home"

# The form: walk every field of long-doc-qa, small sizes.
keys Enter
wait_for "configure long-doc-qa" "┃ --engine-url"
show "form: engine"
step() { # step FOCUSED-TITLE [VALUE]
	wait_for "┃ $1"
	if [ $# -gt 1 ]; then type_into "$2"; fi
	keys Enter
}
step "--engine-url"
step "--model"
step "--served-model-name"
step "--api-key-env"
step "Is there an LMCache server?"
step "--kv-cache-volume" 1
step "--tokens-per-gb-kvcache"
wait_for "┃ --ldqa-document-length"
type_into 2000
show "form: long-doc-qa settings"
keys Enter
step "--ldqa-query-per-document"
step "--ldqa-shuffle-policy"
step "--ldqa-num-inflight-requests"
step "--ldqa-max-output-length"
step "--seed"
step "--ignore-eos"
step "--output-dir"
step "--name" tui-flow
step "Show the advanced settings?"

# The summary, then start.
wait_for "Summary" "KV cache volume" "--ldqa-document-length" "2000" "[ Start ]"
show "form: summary"
keys s

# The live run screen: phase, charts, counters, cache, log; captured once
# measured requests came back and the charts have their first second.
wait_for "run long-doc-qa" "in flight" "TTFT ms" "Cache" "Log" "phase measuring" "ms  reused"
wait_gone "waiting for the first"
show "live run"

# The summary once finished.
wait_for "Engine Benchmark Result (long-doc-qa)" "run finished, exit code 0"
show "run summary"

# Back home: the run is listed; q quits with the run's exit code.
keys q
wait_for "Recent runs" "long-doc-qa tui-flow"
show "home after the run"
keys q
deadline=$((SECONDS + TIMEOUT))
while [ ! -s "$work/status" ]; do
	if [ $SECONDS -ge $deadline ]; then
		echo "tui-flow: FAIL: the program did not exit" >&2
		exit 1
	fi
	sleep 0.1
done
status=$(cat "$work/status")
if [ "$status" != 0 ]; then
	echo "tui-flow: FAIL: exit status $status, want 0" >&2
	exit 1
fi
runs=$(find "$work/runs" -name bench_summary.json | wc -l)
if [ "$runs" != 1 ]; then
	echo "tui-flow: FAIL: $runs run summaries written, want 1" >&2
	exit 1
fi
echo "tui-flow: ok: home -> form -> run -> summary, exit 0, one run recorded" >&2
