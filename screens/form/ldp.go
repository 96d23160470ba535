package form

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/workload"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
)

// ldpFactor is how the form turns long-doc-permutator's context words
// into tokens: the built-in engine's tokenizer's figure until the
// engine named by the form answers its /tokenize (docs/tui.md).
type ldpFactor struct {
	perWord float64
	source  string // what measured it
	engine  string // the engine URL it was measured on ("" built-in)
	asking  bool   // a measurement is under way
}

func builtinLDPFactor() ldpFactor {
	return ldpFactor{perWord: workload.LDPBuiltinTokensPerWord, source: "built-in engine's tokenizer"}
}

// ldpTokensMsg answers a measurement of the engine's tokens per word.
type ldpTokensMsg struct {
	to      common.ID
	engine  string
	perWord float64
	err     error
}

// ldpTokens is the tokens a word count typed in the form makes ("12,900")
// and the figure used ("2.58/word, built-in engine's tokenizer"); "" when
// it is not a count.
func (m *Model) ldpTokens(words string) (tokens, factor string) {
	n, err := strconv.Atoi(strings.TrimSpace(words))
	if err != nil || n <= 0 {
		return "", ""
	}
	f := m.ldp
	src := f.source
	if f.asking {
		src = "asking the engine's /tokenize…"
	}
	return groupInt(workload.LDPContextTokens(n, f.perWord)), fmt.Sprintf("%.2f/word, %s", f.perWord, src)
}

// ldpEstimate is "≈ 12,900 tokens (2.58/word, ...)", "" when words is not
// a count.
func (m *Model) ldpEstimate(words string) string {
	n, f := m.ldpTokens(words)
	if n == "" {
		return ""
	}
	return "≈ " + n + " tokens (" + f + ")"
}

// measureLDP asks the engine the form names for its tokens per word, once
// per engine, when the workload counts pool words (long-doc-permutator)
// and the engine is not the built-in one (whose figure is known).
func (m *Model) measureLDP(c *config.Config) tea.Cmd {
	if c == nil || !countsPoolWords(c.Workload()) {
		return nil
	}
	set := c.Settings()
	url := strings.TrimSpace(set.EngineURL)
	if url == "" || url == bench.BuiltinURL {
		m.ldp = builtinLDPFactor()
		return nil
	}
	if m.ldp.engine == url {
		return nil
	}
	base, err := sender.NormalizeURL(url)
	if err != nil {
		return nil
	}
	m.ldp = builtinLDPFactor()
	m.ldp.engine, m.ldp.asking = url, true
	id, keyEnv, seed := m.id, set.APIKeyEnv, int64(set.Seed)
	model := set.RequestModel()
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		key := ""
		if keyEnv != "" {
			key = os.Getenv(keyEnv)
		}
		f, err := workload.MeasureLDPTokensPerWord(ctx, &workload.Engine{BaseURL: base, APIKey: key, Model: model}, seed)
		return ldpTokensMsg{to: id, engine: url, perWord: f, err: err}
	}
}

// setLDP takes a measurement's answer (a stale one, for another engine,
// is dropped).
func (m *Model) setLDP(msg ldpTokensMsg) {
	if msg.engine != m.ldp.engine {
		return
	}
	m.ldp.asking = false
	if msg.err != nil {
		m.ldp.source = "built-in; the engine's /tokenize failed"
		m.refreshLDP()
		return
	}
	m.ldp.perWord, m.ldp.source = msg.perWord, "the engine's /tokenize"
	m.refreshLDP()
}

// groupInt writes n with thousands separators (12,900).
func groupInt(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// countsPoolWords reports whether one of the workload's settings counts
// pool words.
func countsPoolWords(workload string) bool {
	for _, f := range config.WorkloadFields(workload) {
		if f.PoolWords {
			return true
		}
	}
	return false
}
