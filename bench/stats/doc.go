// Package stats owns the figures of a run: it aggregates sender.Results as
// they finish into live snapshots for the run screen and, at the end, into
// the results, cache, latency and client blocks of bench_summary.json
// (spec/record.md).
//
// Which requests count: warmup and reference results are only counted
// (Snapshot.Warmup, Snapshot.Reference); every other phase is measured
// (sender.Result.Measured) and enters the figures.
//
// Percentiles: the LMCache fields (results block) use Linear, linear
// interpolation at rank (n-1)p/100, 0 when empty. The receipt latency
// figures (ITL, round gaps, prefill tok/s) use NearestRank, the smallest
// value whose rank is at least ceil(p/100 * n).
//
// Empty values. A figure that is undefined is null, never 0, so that
// "nothing measured" is not mistaken for "zero": in the results block the
// TTFT, decode-speed and latency means and percentiles when no request
// defines one (every request failed; no request produced two tokens),
// and elsewhere hit_ratio without a request with valid counts, ITL and
// round gap figures without a kept gap, tokens_per_chunk_mean and
// prefill_tps without a defined value, aggregate_prefill_tps unless
// every measured request is cold, and the dispatch-lag figures when no
// request had a
// scheduled time. Objects (itl_ms, round_gap_ms, prefill_tps,
// unverified_reasons) are always present, with null or empty members.
//
// Results details: means and percentiles cover successful measured
// requests; TTFT figures cover those of them that have a first token (a
// request can succeed on completion_tokens alone). Decode speed enters as
// the sender computed it; requests where it is undefined (null) are left
// out. Token totals
// are over successful requests: input = prompt_tokens, output =
// completion_tokens when > 0, else the number of chunks (LMCache's
// num_output_tokens). elapsed_time is last finish minus first submit over
// all measured requests, failures included, and both throughputs divide by
// it.
//
// Counts: a token count outside [0, sender.MaxCount] (2^40) counts as
// none (the sender never keeps one; a line edited by hand may hold one),
// and every total adds with saturation, so no sum, throughput or ratio
// can overflow or turn negative.
//
// Cache details: cold, reused and unverified count every measured request
// (a failure is unverified); a state other than cold or reused counts as
// unverified, under its unverified_reason or "unknown". prompt_tokens and
// cached_tokens sum the requests whose two counts are known and consistent
// (cached <= prompt), the same requests hit_ratio = cached/prompt covers.
//
// Latency details: every figure covers successful measured requests. The
// pooled ITL is every request's round gaps plus tokens - chunks zeros per
// request; the gaps come from Result.RoundGapsMs, so the runner sets
// Request.KeepGaps on measured requests. Gaps are kept as float32 and the
// zeros only counted. A stream of more than 16384 chunks brings its gaps
// as a sender.GapHistogram (Result.RoundGapHist) instead: once one has,
// the pooled percentiles come from one histogram of every gap (within
// 1/128 of the exact ones; the means stay exact). decode_unmeasured
// counts the successful measured requests whose output arrived in one
// read (Result.DecodeUnmeasured); the sender left their decode speed and
// ITL null, so they are in no decode or ITL figure. aggregate_prefill_tps in Final treats the whole
// measured phase as requests "sent together": that holds only for
// workloads that send everything at once (random-prefill, a concurrent
// group); for other workloads the runner replaces it, e.g. with
// AggregatePrefill over the group that was sent together, or nil.
package stats
