package workload

import "time"

// SetPSFSettle shortens prefix-suffix-tuner's pause between its passes
// for tests outside the package; the returned func restores it.
func SetPSFSettle(d time.Duration) (restore func()) {
	old := psfSettle
	psfSettle = d
	return func() { psfSettle = old }
}

// EngineTokenize is the engine's /tokenize as the workloads call it.
func EngineTokenize(e *Engine) TokenizeFunc { return newTokenizer(e).tokenize }
