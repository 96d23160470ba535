// Package load owns when measured requests go out and how a run proves
// the load it claims (spec/load.md): the arrival processes (constant,
// Poisson, gamma) with an optional ramp-up, the concurrency cap, the
// release gate that times the next eligible request of a workload, the
// `load` block with its delivered verdict, and the SLO judgement behind
// per-request `slo_met` and the `goodput` block.
//
// The gate never reorders a workload: a workload asks for the release of
// its next eligible request (a chat turn still follows its reply) and the
// gate only decides when it goes. Warmups and reference requests are
// never gated.
package load
