package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/bench/stats"
	"github.com/kvbench/kvbench/internal/testutil"
)

var started = time.Date(2026, 5, 5, 14, 3, 9, 0, time.UTC)

func iptr(v int) *int         { return &v }
func fptr(v float64) *float64 { return &v }
func sptr(v string) *string   { return &v }

func TestRunsDir(t *testing.T) {
	t.Setenv("KVBENCH_RUNS_DIR", "/x/runs")
	t.Setenv("XDG_STATE_HOME", "/state")
	t.Setenv("HOME", "/home/u")
	if got := RunsDir(); got != "/x/runs" {
		t.Errorf("with KVBENCH_RUNS_DIR: %s", got)
	}
	t.Setenv("KVBENCH_RUNS_DIR", "")
	if got := RunsDir(); got != filepath.Join("/state", "kvbench", "runs") {
		t.Errorf("with XDG_STATE_HOME: %s", got)
	}
	t.Setenv("XDG_STATE_HOME", "")
	if got := RunsDir(); got != filepath.Join("/home/u", ".local", "state", "kvbench", "runs") {
		t.Errorf("from HOME: %s", got)
	}
}

func TestFolderNaming(t *testing.T) {
	cases := []struct{ workload, name, want string }{
		{"long-doc-qa", "", "20260505-140309-long-doc-qa"},
		{"long-doc-qa", "vllm 0.9/tp=2", "20260505-140309-long-doc-qa-vllm-0.9-tp-2"},
		{"cache-probe", "../../etc", "20260505-140309-cache-probe-etc"},
		{"random-prefill", "  ***  ", "20260505-140309-random-prefill"},
		{"random-prefill", "héllo_wörld.v1", "20260505-140309-random-prefill-h-llo_w-rld.v1"},
	}
	for _, c := range cases {
		if got := FolderName(c.workload, c.name, started); got != c.want {
			t.Errorf("FolderName(%q, %q) = %q, want %q", c.workload, c.name, got, c.want)
		}
	}
	if got := Sanitize(strings.Repeat("a", 100)); len(got) != maxNameLen {
		t.Errorf("long name kept %d characters", len(got))
	}
}

func TestCreateNeverOverwrites(t *testing.T) {
	out := filepath.Join(t.TempDir(), "nested", "runs") // parent created
	var ids []string
	for range 3 {
		w, err := Create(out, "long-doc-qa", "a b", started)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteConfig(map[string]int{"seed": len(ids)}); err != nil {
			t.Fatal(err)
		}
		if filepath.Base(w.Dir()) != w.ID() || filepath.Dir(w.Dir()) != out {
			t.Errorf("dir %s does not match id %s under %s", w.Dir(), w.ID(), out)
		}
		ids = append(ids, w.ID())
		w.Close()
	}
	want := []string{"20260505-140309-long-doc-qa-a-b", "20260505-140309-long-doc-qa-a-b-2", "20260505-140309-long-doc-qa-a-b-3"}
	for i := range want {
		if ids[i] != want[i] {
			t.Errorf("run %d id = %s, want %s", i, ids[i], want[i])
		}
	}
	// The first folder still holds its own config.
	b, err := os.ReadFile(filepath.Join(out, want[0], ConfigFile))
	if err != nil || string(b) != "{\n  \"seed\": 0\n}\n" {
		t.Errorf("first config = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(out, want[0], RequestsFile)); err != nil {
		t.Errorf("requests.jsonl not created: %v", err)
	}
}

func TestCreateUnwritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(file, "runs")
	_, err := Create(out, "long-doc-qa", "", started)
	if err == nil || !strings.Contains(err.Error(), out) {
		t.Errorf("Create under a file: err = %v, want one naming %s", err, out)
	}

	if os.Geteuid() == 0 {
		return // root writes anywhere
	}
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	_, err = Create(ro, "long-doc-qa", "", started)
	if err == nil || !strings.Contains(err.Error(), ro) {
		t.Errorf("Create in a read-only dir: err = %v, want one naming %s", err, ro)
	}
}

func TestAppendConcurrent(t *testing.T) {
	w, err := Create(t.TempDir(), "cache-probe", "", started)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &sender.Result{RequestID: fmt.Sprintf("req-%d", i), Phase: sender.PhaseConcurrent,
				Successful: true, Complete: true, CacheState: sender.StateCold,
				Text: strings.Repeat("x", 10000), RoundGapsMs: []float64{1, 2}}
			if err := w.Append(r); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(&sender.Result{RequestID: "late"}); err == nil {
		t.Error("Append after Close succeeded")
	}
	seen := map[string]bool{}
	corrupt, err := ReadRequests(w.Dir(), func(r *sender.Result) error {
		seen[r.RequestID] = true
		return nil
	})
	if err != nil || corrupt != 0 || len(seen) != 50 {
		t.Errorf("read back %d distinct results, %d corrupt, err %v", len(seen), corrupt, err)
	}
	// Prompts, replies and gaps are not stored.
	b, _ := os.ReadFile(filepath.Join(w.Dir(), RequestsFile))
	if bytes.Contains(b, []byte("xxxx")) || bytes.Count(b, []byte("\n")) != 50 {
		t.Errorf("requests.jsonl holds reply text or wrong line count")
	}
}

func TestReadRequestsCorrupt(t *testing.T) {
	dir := t.TempDir()
	good := func(id string) string {
		b, _ := json.Marshal(&sender.Result{RequestID: id, Phase: "measured"})
		return string(b)
	}
	content := good("a") + "\n" +
		"{not json\n" +
		"\n" +
		"[1,2]\n" +
		"{}\n" +
		good("b") + "\r\n" +
		good("c")[:30] // cut short by a kill
	if err := os.WriteFile(filepath.Join(dir, RequestsFile), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	var ids []string
	corrupt, err := ReadRequests(dir, func(r *sender.Result) error {
		ids = append(ids, r.RequestID)
		return nil
	})
	if err != nil || corrupt != 4 || strings.Join(ids, ",") != "a,b" {
		t.Errorf("ids %v, corrupt %d, err %v; want a,b with 4 corrupt", ids, corrupt, err)
	}
	// A valid last line without its newline still counts.
	if err := os.WriteFile(filepath.Join(dir, RequestsFile), []byte(good("a")+"\n"+good("b")), 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	corrupt, err = ReadRequests(dir, func(*sender.Result) error { n++; return nil })
	if n != 2 || corrupt != 0 || err != nil {
		t.Errorf("unterminated valid line: %d results, %d corrupt, %v", n, corrupt, err)
	}
	// fn's error stops the reading.
	stop := fmt.Errorf("stop")
	if _, err := ReadRequests(dir, func(*sender.Result) error { return stop }); err != stop {
		t.Errorf("fn error = %v, want stop", err)
	}
	if _, err := ReadRequests(filepath.Join(dir, "missing"), func(*sender.Result) error { return nil }); err == nil {
		t.Error("missing file: no error")
	}
}

func TestWriteCSV(t *testing.T) {
	w, err := Create(t.TempDir(), "long-doc-qa", "", started)
	if err != nil {
		t.Fatal(err)
	}
	ok := &sender.Result{
		RequestID: "ldqa-0-1", Phase: sender.PhaseMeasured, Successful: true,
		SubmitTime: 1714917789.25, FirstTokenTime: fptr(1714917789.5), FinishTime: 1714917790,
		TTFT: fptr(0.25), RequestLatency: 0.75, PromptTokens: iptr(10000), CachedTokens: iptr(9984),
		CompletionTokens: iptr(32), Chunks: 16, DecodeSpeed: fptr(64), CacheState: sender.StateReused,
		Complete: true, ITLMeanMs: fptr(15.5), OutputSHA256: sptr("ab12"),
	}
	bad := &sender.Result{
		RequestID: "ldqa-1-0", Phase: sender.PhaseMeasured, Successful: false,
		SubmitTime: 1714917790, FinishTime: 1714917791.5, RequestLatency: 1.5,
		Error: sptr("http_503"), ErrorDetail: sptr(`engine said "busy", retry`),
		CacheState: sender.StateUnverified, UnverifiedReason: sptr("error"),
	}
	warm := &sender.Result{RequestID: "warmup-0", Phase: sender.PhaseWarmup, Successful: true}
	ref := &sender.Result{RequestID: "ref-0", Phase: sender.PhaseReference, Successful: true}
	for _, r := range []*sender.Result{warm, ok, ref, bad} {
		if err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteCSV(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(w.Dir(), CSVFile))
	if err != nil {
		t.Fatal(err)
	}
	want := "request_id,successful,ttft,request_latency,num_input_tokens,num_output_tokens,decode_speed,submit_time,first_token_time,finish_time,error,prompt_tokens,cached_tokens,cache_state,complete,chunks,itl_mean_ms,output_sha256\r\n" +
		"ldqa-0-1,True,0.25,0.75,10000,32,64.0,1714917789.25,1714917789.5,1714917790.0,,10000,9984,reused,True,16,15.5,ab12\r\n" +
		"ldqa-1-0,False,-1.0,1.5,0,0,0.0,1714917790.0,0.0,1714917791.5,\"http_503: engine said \"\"busy\"\", retry\",,,unverified,False,0,,\r\n"
	if string(b) != want {
		t.Errorf("csv\n got %q\nwant %q", b, want)
	}
	w.Close()
}

func TestPyFloat(t *testing.T) {
	cases := map[float64]string{
		0: "0.0", 1: "1.0", -1: "-1.0", 0.1: "0.1", 64: "64.0", 1.5e-5: "1.5e-05",
		0.0001: "0.0001", 123456.789: "123456.789", 1e16: "1e+16", 1.25e22: "1.25e+22",
		1714917789.123456: "1714917789.123456", 1e15: "1000000000000000.0", 2.5e-7: "2.5e-07",
	}
	for v, want := range cases {
		if got := pyFloat(v); got != want {
			t.Errorf("pyFloat(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestSummaryRoundTrip(t *testing.T) {
	w, err := Create(t.TempDir(), "long-doc-qa", "nightly", started)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s := &Summary{
		SchemaVersion: SchemaVersion,
		Tool:          Tool{Name: "kvbench", Version: "0.1.0"},
		Run: RunInfo{ID: w.ID(), Name: "nightly", StartedAt: started.Format(time.RFC3339),
			FinishedAt: started.Add(90 * time.Second).Format(time.RFC3339), Interrupted: true, ExitCode: 130},
		Config:   json.RawMessage(`{"workload":"long-doc-qa","model":"m","seed":42,"kv_cache_volume_gb":100.5}`),
		Results:  stats.Results{TotalRequests: 3, SuccessfulRequests: 2, FailedRequests: 1, P99TTFTms: fptr(12.5)},
		Cache:    stats.Cache{Cold: 1, UnverifiedReasons: map[string]int{"error": 1}, HitRatio: fptr(0.25)},
		Client:   stats.Client{CPUSeconds: 0.5},
		Workload: map[string]any{"qualified": true},
	}
	if err := w.WriteSummary(s); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(w.Dir(), SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(raw, []byte("}\n")) || !bytes.Contains(raw, []byte("\n  \"schema_version\": 1,\n")) {
		t.Errorf("summary not 2-space indented with a trailing newline:\n%s", raw)
	}
	if !bytes.Contains(raw, []byte(`"started_at": "2026-05-05T14:03:09Z"`)) ||
		!bytes.Contains(raw, []byte(`"finished_at": "2026-05-05T14:04:39Z"`)) {
		t.Errorf("run times not RFC 3339:\n%s", raw)
	}
	if bytes.Contains(raw, []byte("server_metrics")) {
		t.Errorf("empty server_metrics written")
	}

	wantTop := []string{"schema_version", "tool", "run", "config", "results", "cache", "latency", "client", "load", "goodput", "workload", "cache_reset"}
	if got := testutil.ObjectKeys(t, raw, ""); strings.Join(got, ",") != strings.Join(wantTop, ",") {
		t.Errorf("top-level keys = %v, want %v", got, wantTop)
	}
	wantResults := []string{"total_requests", "successful_requests", "failed_requests", "elapsed_time",
		"mean_ttft_ms", "mean_decode_speed", "mean_request_latency_ms", "input_throughput",
		"output_throughput", "total_input_tokens", "total_output_tokens", "p50_ttft_ms", "p90_ttft_ms",
		"p99_ttft_ms", "p50_decode_speed", "p90_decode_speed", "p99_decode_speed",
		"p50_request_latency_ms", "p90_request_latency_ms", "p99_request_latency_ms"}
	if got := testutil.ObjectKeys(t, raw, "results"); strings.Join(got, ",") != strings.Join(wantResults, ",") {
		t.Errorf("results keys = %v\nwant %v", got, wantResults)
	}
	if got := testutil.ObjectKeys(t, raw, "run"); strings.Join(got, ",") != "id,name,started_at,finished_at,interrupted,exit_code" {
		t.Errorf("run keys = %v", got)
	}
	if got := testutil.ObjectKeys(t, raw, "config"); strings.Join(got, ",") != "workload,model,seed,kv_cache_volume_gb" {
		t.Errorf("config key order lost: %v", got)
	}

	back, err := ReadSummary(w.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if !back.Run.StartedTime().Equal(started) || back.Run.FinishedTime().Sub(started) != 90*time.Second {
		t.Errorf("run times = %v, %v", back.Run.StartedTime(), back.Run.FinishedTime())
	}
	if (RunInfo{StartedAt: "yesterday"}).StartedTime() != (time.Time{}) {
		t.Error("unparsable time not zero")
	}
	if back.Run != s.Run {
		t.Errorf("run = %+v", back.Run)
	}
	if !reflect.DeepEqual(back.Results, s.Results) || back.Cache.Cold != 1 || *back.Cache.HitRatio != 0.25 ||
		back.Cache.UnverifiedReasons["error"] != 1 || back.Tool != s.Tool || back.ServerMetrics != nil {
		t.Errorf("blocks not round-tripped: %+v", back)
	}
	if v, ok := Field(back.Config, "seed"); !ok || v != json.Number("42") {
		t.Errorf("config seed = %v %v", v, ok)
	}
	if v, ok := Field(back.Workload, "qualified"); !ok || v != true {
		t.Errorf("workload qualified = %v %v", v, ok)
	}
	if _, ok := Field(back.Config, "absent"); ok {
		t.Error("absent key found")
	}
	// Writing what was read gives the same file.
	if err := w.WriteSummary(back); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(filepath.Join(w.Dir(), SummaryFile))
	if !bytes.Equal(again, raw) {
		t.Errorf("rewrite differs:\n%s\n---\n%s", raw, again)
	}
}

func TestAppendLineIsMarshal(t *testing.T) {
	w, err := Create(t.TempDir(), "concurrent-exactness", "", started)
	if err != nil {
		t.Fatal(err)
	}
	rs := []*sender.Result{
		{RequestID: "a<b>&", Phase: sender.PhaseMeasured, TTFT: fptr(0.1234567), PromptTokens: iptr(7),
			ErrorDetail: sptr("quote \" and \u2028"), CacheState: sender.StateCold},
		{RequestID: "b", Phase: sender.PhaseWarmup},
	}
	var want []byte
	for _, r := range rs {
		if err := w.Append(r); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		want = append(append(want, b...), '\n')
	}
	w.Close()
	got, _ := os.ReadFile(filepath.Join(w.Dir(), RequestsFile))
	if !bytes.Equal(got, want) {
		t.Errorf("requests.jsonl\n%s\nwant json.Marshal lines\n%s", got, want)
	}
}

func TestReadRequestsLongLines(t *testing.T) {
	dir := t.TempDir()
	line := func(id string, detail int) string {
		b, _ := json.Marshal(&sender.Result{RequestID: id, Phase: "measured", ErrorDetail: sptr(strings.Repeat("d", detail))})
		return string(b)
	}
	// Longer than the reader's 64 KiB buffer, between short ones, and an
	// unterminated long last line.
	content := line("a", 10) + "\n" + line("b", 200<<10) + "\n" + line("c", 5) + "\n" +
		line("d", 130<<10) + "\n" + line("e", 70<<10)
	if err := os.WriteFile(filepath.Join(dir, RequestsFile), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	corrupt, err := ReadRequests(dir, func(r *sender.Result) error {
		got = append(got, fmt.Sprintf("%s:%d", r.RequestID, len(*r.ErrorDetail)))
		return nil
	})
	want := fmt.Sprintf("a:10,b:%d,c:5,d:%d,e:%d", 200<<10, 130<<10, 70<<10)
	if err != nil || corrupt != 0 || strings.Join(got, ",") != want {
		t.Errorf("got %v, corrupt %d, err %v; want %s", got, corrupt, err, want)
	}
}
