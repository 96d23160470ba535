package runs

import "testing"

// A change smaller than the delta's precision prints 0.0%, never -0.0%,
// and carries no better/worse.
func TestNegligibleDeltaIsSame(t *testing.T) {
	a, b := 1000.0, 999.9996
	f := figure("Results", "mean_ttft_ms", "Mean TTFT", "ms", Lower, &a, &b)
	if got := FormatDelta(f); got != "0.0%" {
		t.Errorf("delta %q, want 0.0%%", got)
	}
	if f.Verdict != Same {
		t.Errorf("verdict %v, want same", f.Verdict)
	}
	b = 999.0
	if f := figure("Results", "mean_ttft_ms", "Mean TTFT", "ms", Lower, &a, &b); FormatDelta(f) != "-0.1%" || f.Verdict != Better {
		t.Errorf("a visible change: %q %v", FormatDelta(f), f.Verdict)
	}
}
