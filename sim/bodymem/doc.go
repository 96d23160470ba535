// Package bodymem measures the simulator's memory per request body:
// BenchmarkBigBodyPeak (go test ./sim/bodymem -bench .). It is a package
// of its own so that the hot-path benchmarks CI runs on ./sim stay quick.
package bodymem
