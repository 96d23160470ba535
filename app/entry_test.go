package app

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/run"
)

// Leaving a finished full-screen run leaves on the terminal what
// headless mode prints: the summary on stdout, the record on stderr.
func TestLeavingPrintsSummaryAndRecord(t *testing.T) {
	var out, errOut bytes.Buffer
	printLast(&out, &errOut, nil)
	if out.Len()+errOut.Len() != 0 {
		t.Errorf("printed %q %q with no run", out.String(), errOut.String())
	}

	info := runInfo()
	sess := run.NewSession(&fakeSource{}, info)
	fin := &run.FinishedMsg{Session: sess, Code: 1, Summary: finishedSummary(),
		Text: "=== Engine Benchmark Result (long-doc-qa) ===\n", Dir: info.Dir}
	printLast(&out, &errOut, fin)
	if out.String() != fin.Text {
		t.Errorf("stdout %q, want the text summary", out.String())
	}
	if errOut.String() != "kvbench: run record in "+info.Dir+"\n" {
		t.Errorf("stderr %q", errOut.String())
	}

	// --format json: the summary as JSON, as headless prints it.
	info.Config = config.Default()
	info.Config.SetString("format", "json")
	fin.Session = run.NewSession(&fakeSource{}, info)
	out.Reset()
	printLast(&out, &errOut, fin)
	var back map[string]any
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back["results"] == nil {
		t.Errorf("stdout is not the JSON summary (%v):\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "Engine Benchmark Result") {
		t.Error("text summary printed with --format json")
	}
}
