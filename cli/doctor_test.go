package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/kvbench/kvbench/bench/doctor"
	"github.com/kvbench/kvbench/internal/testbin"
	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/internal/textclean/cleantest"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
	"github.com/kvbench/kvbench/theme"
)

// runDoctorCmd runs the command in-process, as main would.
func runDoctorCmd(t *testing.T, args ...string) (stdout string, code int, msg string) {
	t.Helper()
	cmd := NewDoctorCommand()
	UsageErrors(cmd) // as the root does for every command
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	code, msg = Code(err)
	return out.String(), code, msg
}

func TestDoctorBuiltinJSON(t *testing.T) {
	out, code, msg := runDoctorCmd(t, "--engine-url", "builtin", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d (%s)\n%s", code, msg, out)
	}
	var rep doctor.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep.EngineURL != "builtin" || rep.Model != "kvbench-sim" || len(rep.Checks) != len(doctor.IDs) {
		t.Errorf("report %+v", rep)
	}
	for _, c := range rep.Checks {
		if c.Status == doctor.Fail || c.Status == doctor.Warn {
			t.Errorf("%s: %s %s", c.ID, c.Status, c.Message)
		}
	}
	// The keys of spec/cli.md, in order, and nothing else.
	top := testutil.ObjectKeys(t, []byte(out), "")
	if !reflect.DeepEqual(top, []string{"engine_url", "model", "checks"}) {
		t.Errorf("keys %v", top)
	}
	var raw struct{ Checks []map[string]any }
	json.Unmarshal([]byte(out), &raw)
	for _, c := range raw.Checks {
		if len(c) != 4 || c["id"] == nil || c["status"] == nil || c["message"] == nil || c["hint"] == nil {
			t.Errorf("check keys %v", c)
		}
	}
}

func TestDoctorUnreachableExitsOneFast(t *testing.T) {
	url := "http://" + testutil.ClosedAddr(t)
	t0 := time.Now()
	out, code, _ := runDoctorCmd(t, "--engine-url", url)
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("took %v against a closed port", d)
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(out, "FAIL  models         cannot reach "+url+"/v1/models") {
		t.Errorf("output does not name the URL:\n%s", out)
	}
	// One failure; the checks that could not run say so, apart.
	if !strings.Contains(out, "SKIP  stream         engine unreachable") {
		t.Errorf("stream not skipped:\n%s", out)
	}
	if n := strings.Count(out, "\nFAIL "); n != 1 {
		t.Errorf("%d FAIL lines against a dead engine, want 1 (the models check):\n%s", n, out)
	}
	if !strings.Contains(out, "1 fail, 0 info, 9 skipped") {
		t.Errorf("tally does not count the skipped checks apart:\n%s", out)
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("escape codes without a terminal:\n%q", out)
	}
}

func TestDoctorEngineWithoutUsageExitsOne(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			fmt.Fprint(w, `{"data":[{"id":"m","owned_by":"vllm"}]}`)
		case "/v1/chat/completions", "/v1/completions":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"text\":\"hi\"}]}\n\n")
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	out, code, _ := runDoctorCmd(t, "--engine-url", srv.URL)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(out, "FAIL  usage") || !strings.Contains(out, "hint: vLLM sends the usage chunk") {
		t.Errorf("usage failure or its vLLM hint missing:\n%s", out)
	}
	if !strings.Contains(out, "PASS  stream") {
		t.Errorf("stream should pass:\n%s", out)
	}
}

func TestDoctorBadFlagsExitTwo(t *testing.T) {
	t.Setenv("KVBENCH_TEST_UNSET_KEY", "")
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--engine-url", "builtin", "--format", "yaml"}, "--format"},
		{[]string{}, "--engine-url"},
		{[]string{"--engine-url", "ftp://h"}, "--engine-url"},
		{[]string{"--engine-url", "builtin", "--metrics-url", "ftp://h/metrics"}, "--metrics-url"},
		{[]string{"--engine-url", "builtin", "--lmcache-url", "http://"}, "--lmcache-url"},
		{[]string{"--engine-url", "builtin", "--api-key-env", "KVBENCH_TEST_UNSET_KEY"}, "--api-key-env"},
		{[]string{"--engine-url", "builtin", "--no-such-flag"}, "--no-such-flag"},
	} {
		out, code, msg := runDoctorCmd(t, tc.args...)
		if code != 2 || !strings.Contains(msg, tc.flag) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, message %q; want 2 and one line naming %s", tc.args, code, msg, tc.flag)
		}
		if out != "" {
			t.Errorf("%v: printed a report on a usage error:\n%s", tc.args, out)
		}
	}
}

func TestDoctorOmitZeroCachedWarnsButPasses(t *testing.T) {
	url := simtest.Start(t, func(c *sim.Config) { c.OmitZeroCached = true })
	out, code, _ := runDoctorCmd(t, "--engine-url", url)
	if code != 0 {
		t.Errorf("exit %d: a warning is not a failure\n%s", code, out)
	}
	if !strings.Contains(out, "WARN  cached_tokens") || !strings.Contains(out, "--omit-zero-cached") {
		t.Errorf("cached_tokens warning with the hint missing:\n%s", out)
	}
}

func sampleReport() doctor.Report {
	return doctor.Report{EngineURL: "http://h:8000/v1", Model: "m", Checks: []doctor.Check{
		{ID: "models", Status: doctor.Pass, Message: "GET /v1/models lists 1 model"},
		{ID: "cached_tokens", Status: doctor.Warn, Message: "cached_tokens is absent on a unique prompt", Hint: "start vLLM with --enable-prompt-tokens-details"},
		{ID: "stream", Status: doctor.Fail, Message: strings.Repeat("a long message ", 12), Hint: "see the models check"},
		{ID: "reasoning", Status: doctor.Info, Message: "replies carry no reasoning fields"},
	}}
}

func TestDoctorPlainText(t *testing.T) {
	var b strings.Builder
	writeDoctorPlain(&b, sampleReport())
	want := `kvbench doctor: http://h:8000/v1, model m
PASS  models         GET /v1/models lists 1 model
WARN  cached_tokens  cached_tokens is absent on a unique prompt
                     hint: start vLLM with --enable-prompt-tokens-details
FAIL  stream         ` + strings.Repeat("a long message ", 12) + `
                     hint: see the models check
INFO  reasoning      replies carry no reasoning fields
1 pass, 1 warn, 1 fail, 1 info
`
	if b.String() != want {
		t.Errorf("plain report\n got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestDoctorStyledChecklist(t *testing.T) {
	prev := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.ANSI)
	defer lipgloss.SetColorProfile(prev)
	var b strings.Builder
	writeDoctorStyled(&b, sampleReport(), theme.New(theme.Default), 80)
	out := b.String()
	if !strings.Contains(out, "\x1b[") {
		t.Fatalf("no colour on a terminal:\n%q", out)
	}
	plain := stripANSI(out)
	for _, want := range []string{
		"kvbench doctor http://h:8000/v1 model m",
		"  ✓ models         GET /v1/models lists 1 model",
		"  ! cached_tokens  cached_tokens is absent on a unique prompt",
		"\n                   → start vLLM with --enable-prompt-tokens-details\n",
		"  ✗ stream         a long message",
		"\n                   a long message", // wrapped beneath its column
		"  i reasoning      replies carry no reasoning fields",
		"1 pass, 1 warn, 1 fail, 1 info",
	} {
		if !strings.Contains(plain, want) {
			t.Errorf("styled checklist lacks %q:\n%s", want, plain)
		}
	}
	for _, l := range strings.Split(plain, "\n") {
		if len([]rune(l)) > 80 {
			t.Errorf("line wider than the terminal: %q", l)
		}
		if strings.HasSuffix(l, " ") {
			t.Errorf("trailing spaces: %q", l)
		}
	}
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < '@' || s[j] > '~') {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// The built binary, as a user runs it: exit codes, one-line errors, no
// escapes without a terminal.
func TestDoctorBinary(t *testing.T) {
	url := "http://" + testutil.ClosedAddr(t)
	t0 := time.Now()
	res := testbin.Run(t, 60*time.Second, nil, "doctor", "--engine-url", url)
	if res.Code != 1 || !strings.Contains(res.Stdout, url+"/v1/models") || res.Stderr != "" {
		t.Errorf("unreachable: exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if strings.Contains(res.Stdout, "\x1b") {
		t.Errorf("escape codes in piped output: %q", res.Stdout)
	}
	if d := time.Since(t0); d > 30*time.Second {
		t.Errorf("unreachable engine took %v (binary build included)", d)
	}

	res = testbin.Run(t, 60*time.Second, nil, "doctor", "--engine-url", "builtin", "--format", "yaml")
	if res.Code != 2 || res.Stderr != "kvbench: --format: must be text or json, got \"yaml\"\n" || res.Stdout != "" {
		t.Errorf("bad --format: exit %d, stderr %q", res.Code, res.Stderr)
	}

	res = testbin.Run(t, 60*time.Second, []string{"NO_COLOR=1"}, "doctor", "--engine-url", "builtin", "--format", "json")
	var rep doctor.Report
	if res.Code != 0 || json.Unmarshal([]byte(res.Stdout), &rep) != nil || rep.EngineURL != "builtin" {
		t.Errorf("builtin: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
}

func TestDoctorAPIKeyNotShown(t *testing.T) {
	const key = "sk-test-never-shown-9"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"invalid key %s"}}`, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	t.Setenv("KVBENCH_TEST_KEY", key)
	for _, format := range []string{"text", "json"} {
		out, code, _ := runDoctorCmd(t, "--engine-url", srv.URL, "--api-key-env", "KVBENCH_TEST_KEY", "--format", format)
		if code != 1 {
			t.Errorf("%s: exit %d", format, code)
		}
		if strings.Contains(out, key) {
			t.Errorf("%s output shows the key:\n%s", format, out)
		}
	}
}

// doctor's header names the model an engine listed: cleaned, whatever
// the id holds, in the plain and the styled report.
func TestDoctorHeaderCleansTheModelID(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"object":"list","data":[{"id":"`+cleantest.JSON+`","object":"model"}]}`)
	}))
	t.Cleanup(srv.Close)
	out, code, msg := runDoctorCmd(t, "--engine-url", srv.URL)
	if code != 1 {
		t.Fatalf("exit %d (%s), want 1 (the generation checks fail)", code, msg)
	}
	header, _, _ := strings.Cut(out, "\n")
	cleantest.Check(t, "doctor header", header)
	cleantest.Clean(t, "doctor report", out)

	rep := doctor.Run(context.Background(), doctor.Options{EngineURL: srv.URL, Timeout: 5 * time.Second})
	var b bytes.Buffer
	prev := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.Ascii)
	defer lipgloss.SetColorProfile(prev)
	writeDoctorStyled(&b, rep, theme.New(theme.Default), 100)
	cleantest.Check(t, "styled doctor report", b.String())
}
