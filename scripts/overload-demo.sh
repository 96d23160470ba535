#!/usr/bin/env bash
# The client overload detector on one core (docs/cli.md, "Client overload
# warning"): the simulator in measuring mode (every TTFT exactly 10 ms,
# a chunk every 25 ms, no queueing) pinned to CPU 0, kvbench pinned to
# CPU 1 with 1000 and then 4000 concurrent streams. For each run it prints
# the TTFT kvbench measured against the 10 ms truth and what the detector
# concluded. Expected: at 1000 streams TTFT close to 10 ms and no overload
# (on an otherwise idle machine); at 4000 streams either TTFT within 50 ms
# of 10 ms or `overloaded` with its reasons.
#
#   scripts/overload-demo.sh            # 1000 and 4000 streams, 20 tokens each
#   STREAMS="4000" TOKENS=40 scripts/overload-demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in taskset curl python3; do
	command -v "$tool" >/dev/null 2>&1 || { echo "overload-demo: $tool not found" >&2; exit 2; }
done
streams=${STREAMS:-"1000 4000"}
tokens=${TOKENS:-20}
port=${PORT:-$((20000 + RANDOM % 20000))}
tmp=$(mktemp -d)
bin="$tmp/kvbench"
go build -o "$bin" .
taskset -c 0 "$bin" sim --listen "127.0.0.1:$port" --fixed-ttft 10ms --fixed-itl 25ms >"$tmp/sim.log" 2>&1 &
sim=$!
trap 'kill "$sim" 2>/dev/null; wait "$sim" 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do
	curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
	sleep 0.1
done
for n in $streams; do
	set +e
	taskset -c 1 "$bin" run --engine-url "http://127.0.0.1:$port" --model kvbench-sim \
		--workload concurrent-exactness --ce-levels "$n" --ce-tokens "$tokens" --ignore-eos \
		--no-interactive -q --format json --output-dir "$tmp/runs-$n" >"$tmp/sum-$n.json" 2>"$tmp/err-$n.txt"
	code=$?
	set -e
	python3 - "$n" "$code" "$tmp/sum-$n.json" <<'PY'
import json, sys
n, code, path = sys.argv[1], sys.argv[2], sys.argv[3]
s = json.load(open(path))
r, c = s["results"], s["client"]
fmt = lambda v: "n/a" if v is None else "%.1f" % v
print(f"{n} streams: exit {code}, {r['successful_requests']}/{r['total_requests']} ok, "
      f"TTFT p50 {fmt(r['p50_ttft_ms'])} ms p99 {fmt(r['p99_ttft_ms'])} ms (truth 10 ms), "
      f"ITL p50 {fmt(s['latency']['itl_ms']['p50'])} ms (truth 25 ms)")
print(f"  client: cpu {c['cpu_seconds']:.1f} s, timing error p99 {fmt(c.get('timing_error_p99_ms'))} ms "
      f"max {fmt(c.get('timing_error_max_ms'))} ms, sched p99 {fmt(c['sched_latency_p99_ms'])} ms, "
      f"machine busy max {fmt(c['machine_cpu_busy_max'])} %, overloaded {c['overloaded']}")
for reason in c["overload_reasons"]:
    print(f"    reason: {reason}")
p50 = r["p50_ttft_ms"]
ok = c["overloaded"] or (p50 is not None and abs(p50 - 10) <= 50)
print("  verdict:", "honest" if ok else "WRONG: TTFT off by more than 50 ms and no overload reported")
PY
done
