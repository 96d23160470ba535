package results

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/screens/common"
)

// qualityMsg carries a rag-qa-quality run's per-sample scores.
type qualityMsg struct {
	to  common.ID
	q   *runs.RAGQuality
	err error
}

// readQuality reads the scores of a rag-qa-quality run (nil for any
// other run).
func readQuality(to common.ID, det *runs.Detail) tea.Cmd {
	if !runs.IsRAGQuality(det) {
		return nil
	}
	return func() tea.Msg {
		q, err := runs.ReadRAGQuality(det)
		return qualityMsg{to: to, q: q, err: err}
	}
}

// gotQuality keeps the scores for the table and the receipts.
func (t *requestTable) gotQuality(msg qualityMsg) {
	if msg.err != nil {
		t.qualityErr = msg.err
		return
	}
	t.quality = msg.q.ByRequest()
}

// sample is r's rag-qa-quality sample, nil when it has none (a warmup,
// another workload, the file not read).
func (t *requestTable) sample(r *sender.Result) *record.RAGSample {
	if t.quality == nil {
		return nil
	}
	return t.quality[r.RequestID]
}

// f1Cell is r's F1: the score, "n/a" for a sample whose answer did not
// parse, "" for a request that is no sample.
func (t *requestTable) f1Cell(r *sender.Result) string {
	s := t.sample(r)
	switch {
	case s == nil:
		return ""
	case s.F1 == nil:
		return "n/a"
	}
	return fmt.Sprintf("%.3f", *s.F1)
}
