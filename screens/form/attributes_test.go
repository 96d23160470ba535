package form

import (
	"strings"
	"testing"

	"github.com/kvbench/kvbench/config"
)

// Every setting that holds a JSON object is checked as typed, naming its
// own flag, as the command line would refuse it.
func TestJSONObjectFieldsCheckedAsTyped(t *testing.T) {
	n := 0
	for _, f := range config.Fields {
		if !f.JSONObject {
			continue
		}
		n++
		if err := check(f)(`{"draft":false}`); err != nil {
			t.Errorf("--%s: an object refused: %v", f.Flag, err)
		}
		if err := check(f)(`[1]`); err == nil || !strings.HasPrefix(err.Error(), "--"+f.Flag+" must be a JSON object") {
			t.Errorf("--%s: [1] gave %v", f.Flag, err)
		}
	}
	if n < 2 {
		t.Errorf("%d JSON-object settings, want --extra-body and --ce-reference-extra-body", n)
	}
}

// The plan shows the length a workload's schedule fixes, from the
// setting marked as its run length, and none for a workload that runs
// as long as its requests take.
func TestFixedDurationFromTheRunLengthSetting(t *testing.T) {
	c := config.Default()
	c.SetString("workload", config.MultiRoundChat)
	c.SetString("mrc_duration", "90")
	if got := fixedDuration(c); got != "90 s (--mrc-duration)" {
		t.Errorf("multi-round-chat: %q", got)
	}
	c.SetString("workload", config.LongDocQA)
	if got := fixedDuration(c); got != "" {
		t.Errorf("long-doc-qa: %q", got)
	}
}
