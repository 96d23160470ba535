// Package sim is kvbench's built-in simulated inference engine: an
// OpenAI-compatible HTTP server that models a vLLM-style prefix cache (with
// an optional LMCache-style CPU tier), a batch scheduler and a decode loop,
// with deterministic replies, exact token accounting and injectable faults.
//
// It shares no code with the client in bench/ on purpose: a bug in one must
// not be hidden by the same bug in the other. The decisions the contract
// leaves open (tokenizer rules, decode slowdown, EOS rule, fault shapes) are
// written down in docs/sim.md.
package sim
