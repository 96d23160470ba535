package form

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/screens/common"
	"github.com/kvbench/kvbench/screens/screentest"
)

func testCommon() *common.Common {
	c := screentest.Common(100, 30, screentest.Now)
	c.RunsDir, c.ConfigDir = "/runs", "/cfg"
	return c
}

// Every field's inline check gives the CLI's own message: the range
// check of config.Field.Check, or the parse error of config.Parse.
func TestChecksAreTheCLIs(t *testing.T) {
	for _, f := range config.Fields {
		switch f.Kind {
		case config.Int, config.Float, config.Duration:
		default:
			continue
		}
		for _, bad := range []string{"-1", "0", "nope"} {
			got := check(f)(bad)
			var want error
			v, err := config.Parse(f, bad)
			if err != nil {
				want = err
			} else {
				want = f.Check(v)
			}
			if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
				t.Errorf("%s %q: form says %v, CLI says %v", f.Flag, bad, got, want)
			}
		}
	}
	// Choices too.
	f, _ := config.Lookup("ldqa_shuffle_policy")
	if err := check(f)("sideways"); err == nil || err.Error() != f.Check("sideways").Error() {
		t.Errorf("choices: %v", err)
	}
}

func TestGuidedAsksWhatIsMissing(t *testing.T) {
	cases := []struct {
		name                     string
		set                      map[string]string
		url, workload, budgetAsk bool
	}{
		{"nothing given", nil, true, true, true},
		{"engine and workload given", map[string]string{"engine_url": "http://x:1", "workload": config.LongDocQA}, false, false, true},
		{"tokens given", map[string]string{"workload": config.LongDocQA, "tokens_per_gb_kvcache": "100"}, true, false, false},
		{"lmcache given", map[string]string{"engine_url": "http://x:1", "lmcache_url": "http://x:2"}, false, true, false},
		{"a workload without a budget", map[string]string{"engine_url": "http://x:1", "workload": config.CacheProbe}, false, false, false},
	}
	for _, tc := range cases {
		cfg := config.Default()
		for k, v := range tc.set {
			cfg.SetString(k, v)
		}
		m := NewGuided(testCommon(), cfg)
		if m.askURL != tc.url || m.askWorkload != tc.workload || m.askBudget != tc.budgetAsk {
			t.Errorf("%s: asks url %v workload %v budget %v", tc.name, m.askURL, m.askWorkload, m.askBudget)
		}
	}
}

func TestApply(t *testing.T) {
	cfg := config.Default()
	cfg.SetString("workload", config.LongDocQA)
	cfg.SetString("engine_url", "http://gpu:8000")
	cfg.SetString("lmcache_url", "http://gpu:9000")
	m := New(testCommon(), cfg)
	if !m.useLMCache {
		t.Fatal("an LMCache URL given: the form should start with yes")
	}
	*m.vals["ldqa_document_length"] = "1234"
	*m.bools["ignore_eos"] = true
	got, err := m.apply()
	if err != nil {
		t.Fatal(err)
	}
	if got.Int("ldqa_document_length") != 1234 || !got.Bool("ignore_eos") || got.String("lmcache_url") != "http://gpu:9000" {
		t.Errorf("applied: %s lmcache %q", got.ExportJSON(), got.String("lmcache_url"))
	}
	// Unchanged values stay unset, as they would on the command line.
	if got.IsSet("seed") {
		t.Error("an untouched seed is marked as set")
	}
	// No LMCache: its URL goes, tokens per GB is required.
	m.useLMCache, m.tokens = false, ""
	if _, err := m.apply(); err == nil || err.Error() != "missing required arguments: --tokens-per-gb-kvcache or --lmcache-url" {
		t.Errorf("without a budget: %v", err)
	}
	m.tokens = "6553"
	got, err = m.apply()
	if err != nil || got.String("lmcache_url") != "" || got.Int("tokens_per_gb_kvcache") != 6553 {
		t.Errorf("tokens: %v %q %d", err, got.String("lmcache_url"), got.Int("tokens_per_gb_kvcache"))
	}
	// A value out of range fails with the CLI's message.
	*m.vals["ldqa_query_per_document"] = "0"
	if _, err := m.apply(); err == nil || err.Error() != "--ldqa-query-per-document must be in [1, 1000000] (got 0)" {
		t.Errorf("range: %v", err)
	}
}

// The fixes a first user ran into: --extra-body checked as typed, an
// empty value keeps the default shown, no prefilled profile name, no
// raw backticks, choices listed, the builtin engine's real budget.
func TestFieldsAsAUserMeetsThem(t *testing.T) {
	eb := check(field("extra_body"))
	if err := eb(`{"chat_template_kwargs":{"enable_thinking":false}}`); err != nil {
		t.Errorf("a JSON object refused: %v", err)
	}
	for _, bad := range []string{`{"a":`, `[1,2]`, `null`, `hello`} {
		if err := eb(bad); err == nil || !strings.Contains(err.Error(), "--extra-body") {
			t.Errorf("extra body %q: %v", bad, err)
		}
	}
	if err := check(field("kv_cache_volume"))(""); err != nil {
		t.Errorf("an empty KV volume is refused: %v", err)
	}
	cfg := config.Default()
	cfg.SetString("workload", config.LongDocQA)
	m := New(testCommon(), cfg)
	*m.vals["kv_cache_volume"] = ""
	if got, _ := m.apply(); got.Float("kv_cache_volume") != 100 || got.IsSet("kv_cache_volume") {
		t.Errorf("an empty KV volume gave %v (set %v), want the default 100", got.Float("kv_cache_volume"), got.IsSet("kv_cache_volume"))
	}
	if m.profileName != "" {
		t.Errorf("profile name prefilled with %q", m.profileName)
	}
	for _, f := range config.Fields {
		if strings.Contains(describe(f), "`") {
			t.Errorf("%s: backticks in %q", f.Key, describe(f))
		}
	}
	m.toSummary()
	if v := m.summaryView(); !strings.Contains(v, "8 GB (the built-in engine's cache)") || !strings.Contains(v, "requests") || !strings.Contains(v, "KV budget") {
		t.Errorf("summary for builtin:\n%s", v)
	}
}

// After "change settings" on a rejected value the form is at that value,
// not at the first of twenty fields.
func TestChangeResumesAtTheRejectedField(t *testing.T) {
	cfg := config.Default()
	cfg.SetString("workload", config.LongDocQA)
	cfg.SetString("engine_url", "http://gpu-box:8000")
	cfg.SetString("tokens_per_gb_kvcache", "6553")
	m := New(testCommon(), cfg)
	m.form.Init()
	*m.vals["ldqa_query_per_document"] = "0"
	m.toSummary()
	if m.cfgErr == nil {
		t.Fatal("a value out of range was accepted")
	}
	m.updateSummary(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'c'}})
	if f := m.form.GetFocusedField(); f == nil || f.GetKey() != "ldqa_query_per_document" {
		t.Errorf("focus on %v, want the rejected --ldqa-query-per-document", f.GetKey())
	}
}

// The long-doc-permutator's context length counts words: the summary and
// the field show the tokens they make, at the built-in engine's tokenizer
// figure, then at the figure the engine's own /tokenize gives.
func TestLDPContextTokens(t *testing.T) {
	cfg := config.Default()
	cfg.SetString("workload", config.LongDocPermutator)
	cfg.SetString("engine_url", "builtin")
	cfg.SetString("ldp_context_length", "5000")
	m := NewReview(testCommon(), cfg, false)
	if cmd := m.Init(); cmd != nil {
		t.Fatal("the built-in engine's figure is known: nothing to ask")
	}
	if v := m.View(); !strings.Contains(v, "--ldp-context-length") || !regexp.MustCompile(`--ldp-context-length +5000 words\n +≈ tokens +12,900 \(2.58/word, built-in engine's tokenizer\)`).MatchString(ansi.Strip(v)) {
		t.Fatalf("summary:\n%s", v)
	}
	if d := m.ldpEstimate("1000"); d != "≈ 2,580 tokens (2.58/word, built-in engine's tokenizer)" {
		t.Errorf("field estimate %q", d)
	}
	if d := m.ldpEstimate("many"); d != "" {
		t.Errorf("estimate of a non-number: %q", d)
	}

	// An engine with a tokenizer of three tokens per word.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/tokenize" {
			http.NotFound(w, r)
			return
		}
		var body struct{ Prompt string }
		json.NewDecoder(r.Body).Decode(&body)
		ids := make([]int, 3*len(strings.Fields(body.Prompt)))
		json.NewEncoder(w).Encode(map[string]any{"count": len(ids), "tokens": ids})
	}))
	defer srv.Close()
	cfg.SetString("engine_url", srv.URL)
	m = NewReview(testCommon(), cfg, false)
	cmd := m.Init()
	if cmd == nil {
		t.Fatal("no /tokenize measurement for an engine given by URL")
	}
	if v := m.View(); !strings.Contains(v, "12,900 (2.58/word, asking the engine's /tokenize…)") {
		t.Fatalf("while asking:\n%s", v)
	}
	m.Update(cmd())
	if v := m.View(); !strings.Contains(v, "15,000 (3.00/word, the engine's /tokenize)") {
		t.Fatalf("after the engine answered:\n%s", v)
	}
	// Asked once per engine.
	if m.measureLDP(m.cfg) != nil {
		t.Error("asked the same engine again")
	}

	// An engine without /tokenize: the built-in figure, and why.
	cfg.SetString("engine_url", srv.URL+"/nothing")
	m = NewReview(testCommon(), cfg, false)
	m.Update(m.Init()())
	if v := m.View(); !strings.Contains(v, "12,900 (2.58/word, built-in; the engine's /tokenize failed)") {
		t.Fatalf("engine without /tokenize:\n%s", v)
	}
}

// A start the run refused (its error names a setting) reopens the form at
// that setting, and the summary of a refused config gives no estimates.
func TestChangeAfterARefusedStart(t *testing.T) {
	cfg := config.Default()
	cfg.SetString("workload", config.LongDocQA)
	cfg.SetString("engine_url", "http://gpu-box:8000")
	cfg.SetString("tokens_per_gb_kvcache", "6553")
	m := New(testCommon(), cfg)
	m.form.Init()
	m.toSummary()
	if m.cfgErr != nil {
		t.Fatal(m.cfgErr)
	}
	if v := m.summaryView(); !strings.Contains(v, "prompt tokens") {
		t.Fatalf("a valid config's summary has no estimate:\n%s", v)
	}
	m.Update(common.PreparedMsg{To: m.id, Err: fmt.Errorf("--ldqa-num-inflight-requests 3 is more than the engine's 2 slots")})
	if v := m.summaryView(); strings.Contains(v, "prompt tokens") || strings.Contains(v, "≈") {
		t.Errorf("a refused config's summary estimates:\n%s", v)
	}
	m.updateSummary(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'c'}})
	if f := m.form.GetFocusedField(); f == nil || f.GetKey() != "ldqa_num_inflight_requests" {
		t.Errorf("focus on %v, want the refused --ldqa-num-inflight-requests", f.GetKey())
	}
}
