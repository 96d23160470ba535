package workload_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/workload"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/pyrandom"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/simtest"
)

// The files in testdata/lmcache are the requests LMCache's own `lmcache
// bench engine` sent to the simulator for seven workloads (parameter set
// A; testdata/lmcache/README.md says how they were captured). Each
// WORKLOAD-A.cmd holds the flags, WORKLOAD-A.jsonl the requests in
// arrival order.

// captured is one request the engine received.
type captured struct {
	Method string
	Path   string
	Body   map[string]any // nil for a GET
}

// capturingProxy stands in front of the engine at target and records
// every request it forwards, in arrival order.
func capturingProxy(t *testing.T, target string) (string, func() []captured) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	var mu sync.Mutex
	var got []captured
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c := captured{Method: r.Method, Path: r.URL.Path}
		if len(bytes.TrimSpace(body)) > 0 {
			if err := json.Unmarshal(body, &c.Body); err != nil {
				t.Errorf("%s %s: body is not a JSON object: %v", r.Method, r.URL.Path, err)
			}
		}
		mu.Lock()
		got = append(got, c)
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []captured {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// runKVBench runs one kvbench run in-process with the given flags, as
// `kvbench run` would, and returns its exit code.
func runKVBench(t *testing.T, args []string) int {
	t.Helper()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	config.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("kvbench does not take %q: %v", args, err)
	}
	if rest := fs.Args(); len(rest) > 0 {
		t.Fatalf("arguments left over: %q", rest)
	}
	// No user config file and no environment: the flags alone.
	empty := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(empty, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Resolve(fs, config.Layers{File: empty, Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := bench.Prepare(ctx, cfg)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	r, err := bench.New(context.Background(), p)
	if err != nil {
		t.Fatalf("new run: %v", err)
	}
	go func() {
		for range r.Events() {
		}
	}()
	return r.Run(ctx).ExitCode
}

// lmcacheBodyKeys are the parts of a request body the spec compares
// (spec/workloads.md, "LMCache's exact requests").
var lmcacheBodyKeys = []string{"messages", "prompt", "max_tokens", "temperature", "stream", "stream_options"}

func compared(body map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range lmcacheBodyKeys {
		if v, ok := body[k]; ok {
			out[k] = v
		}
	}
	return out
}

// chatBodies keeps the POST /v1/chat/completions bodies, in order.
func chatBodies(reqs []captured) []map[string]any {
	var out []map[string]any
	for _, r := range reqs {
		if r.Method == http.MethodPost && r.Path == "/v1/chat/completions" {
			out = append(out, compared(r.Body))
		}
	}
	return out
}

func readFixture(t *testing.T, name string) (args []string, reqs []captured) {
	t.Helper()
	cmd, err := os.ReadFile(filepath.Join("testdata", "lmcache", name+".cmd"))
	if err != nil {
		t.Fatal(err)
	}
	args = strings.Fields(string(cmd))
	data, err := os.ReadFile(filepath.Join("testdata", "lmcache", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var c captured
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("%s.jsonl line %d: %v", name, i+1, err)
		}
		reqs = append(reqs, c)
	}
	return args, reqs
}

// fillerRun is a run of filler words drawn from a one-token vocabulary:
// each word after a space, the run at the start of a text or after a
// newline. The fixed wording around runs never has a space after a
// newline.
var fillerRun = regexp.MustCompile(`(?:^|\n)((?: [a-z]+)+)`)

// byIndex replaces every filler word by its index in the vocabulary it
// was drawn from (a word not in it stays, marked), so two runs whose
// words come from different vocabularies of the same size compare equal
// exactly when they drew the same indices, in the same places, joined
// the same way.
func byIndex(v any, vocab map[string]int, n *int) any {
	switch x := v.(type) {
	case string:
		var b strings.Builder
		last := 0
		for _, m := range fillerRun.FindAllStringSubmatchIndex(x, -1) {
			b.WriteString(x[last:m[2]])
			for _, w := range strings.Fields(x[m[2]:m[3]]) {
				*n++
				if i, ok := vocab[w]; ok {
					fmt.Fprintf(&b, " <%d>", i)
				} else {
					fmt.Fprintf(&b, " <not in the vocabulary: %s>", w)
				}
			}
			last = m[3]
		}
		b.WriteString(x[last:])
		return b.String()
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = byIndex(e, vocab, n)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = byIndex(e, vocab, n)
		}
		return out
	}
	return v
}

func indexOf(words []string) map[string]int {
	m := make(map[string]int, len(words))
	for i, w := range words {
		m[w] = i
	}
	return m
}

// lmcachePool is the vocabulary LMCache built from the fixtures'
// tokenizer stand-in (testdata/lmcache/README.md): its vocabulary is
// every lowercase word of 1 to 4 letters, each one token on the
// simulator, sorted; build_single_token_pool keeps them all and takes
// random.Random(seed).sample of size.
func lmcachePool(size int, seed int64) []string {
	var words []string
	var grow func(prefix string)
	grow = func(prefix string) {
		if prefix != "" {
			words = append(words, prefix)
		}
		if len(prefix) == 4 {
			return
		}
		for c := 'a'; c <= 'z'; c++ {
			grow(prefix + string(c))
		}
	}
	grow("")
	slices.Sort(words)
	return pyrandom.SampleOf(pyrandom.New(seed), words, size)
}

// firstDiff says where two request lists first differ.
func firstDiff(got, want []map[string]any) string {
	for i := 0; i < min(len(got), len(want)); i++ {
		if reflect.DeepEqual(got[i], want[i]) {
			continue
		}
		g, w := jsonText(got[i]), jsonText(want[i])
		k := 0
		for k < min(len(g), len(w)) && g[k] == w[k] {
			k++
		}
		from := max(k-80, 0)
		return fmt.Sprintf("request %d differs at byte %d:\n got  ...%s\n want ...%s", i, k, g[from:min(len(g), k+80)], w[from:min(len(w), k+80)])
	}
	return fmt.Sprintf("%d requests, want %d", len(got), len(want))
}

// jsonText is v as JSON, with < and > as they are.
func jsonText(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return bytes.TrimSpace(b.Bytes())
}

// sortedJSON is the requests as a sorted list of their JSON texts: a set.
func sortedJSON(reqs []map[string]any) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = string(jsonText(r))
	}
	slices.Sort(out)
	return out
}

// kvbenchExtra are the requests kvbench makes besides LMCache's
// (docs/workloads.md lists them): model detection and, for the workloads
// whose text is sized by the engine's tokenizer, /tokenize.
var kvbenchExtra = map[string]bool{"GET /v1/models": true, "POST /tokenize": true}

// TestLMCacheFixtures replays each captured LMCache command with
// --prompt-salt none against the in-process simulator and compares the
// request bodies the simulator receives with LMCache's: equal and in
// order; random-prefill's, sent together, as a set; kv-tier-pressure's
// and rag-qa-quality's with their filler words (drawn from each
// tokenizer's vocabulary) compared by their index in it.
func TestLMCacheFixtures(t *testing.T) {
	// Restored once the parallel subtests have finished.
	t.Cleanup(workload.SetPSFSettle(time.Millisecond))
	for _, name := range []string{
		"long-doc-qa-A", "multi-round-chat-A", "random-prefill-A", "long-doc-permutator-A",
		"prefix-suffix-tuner-A", "kv-tier-pressure-A", "rag-qa-quality-A",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args, fixture := readFixture(t, name)
			for i, a := range args {
				if a == "--rag-dataset" && i+1 < len(args) {
					args[i+1] = filepath.Join("testdata", args[i+1])
				}
			}
			engine := simtest.Start(t, func(c *sim.Config) { c.ZeroLatency = true })
			proxy, received := capturingProxy(t, engine)
			args = append(args, "--engine-url", proxy, "--prompt-salt", "none", "--output-dir", t.TempDir(), "--quiet")
			if code := runKVBench(t, args); code != 0 {
				t.Fatalf("kvbench %s: exit %d", strings.Join(args, " "), code)
			}
			reqs := received()
			for _, r := range reqs {
				if key := r.Method + " " + r.Path; r.Path != "/v1/chat/completions" && !kvbenchExtra[key] {
					t.Errorf("kvbench sent %s, which is neither LMCache's nor a documented extra", key)
				}
			}
			got, want := chatBodies(reqs), chatBodies(fixture)
			switch {
			case strings.HasPrefix(name, "random-prefill"):
				if g, w := sortedJSON(got), sortedJSON(want); !slices.Equal(g, w) {
					t.Fatalf("random-prefill: a different set of requests (%d, want %d)", len(g), len(w))
				}
				return
			case strings.HasPrefix(name, "kv-tier-pressure"), strings.HasPrefix(name, "rag-qa-quality"):
				// The filler words come from each tokenizer's vocabulary:
				// compared by their index in it (both of the same size).
				size := 8000 // kv-tier-pressure's vocabulary
				if strings.HasPrefix(name, "rag") {
					size = 4096 // rag-qa-quality's filler
				}
				seed := int64(42)
				if i := slices.Index(args, "--seed"); i >= 0 {
					fmt.Sscan(args[i+1], &seed)
				}
				ours, err := workload.LearnVocab(context.Background(),
					workload.EngineTokenize(&workload.Engine{BaseURL: engine + "/v1", Model: "kvbench-sim"}), size, seed)
				if err != nil || len(ours.Words) != size {
					t.Fatalf("kvbench's vocabulary: %d words, %v", len(ours.Words), err)
				}
				gi, wi := indexOf(ours.Words), indexOf(lmcachePool(size, seed))
				var gn, wn int
				for i := range got {
					got[i] = byIndex(got[i], gi, &gn).(map[string]any)
				}
				for i := range want {
					want[i] = byIndex(want[i], wi, &wn).(map[string]any)
				}
				if wn == 0 {
					t.Fatal("no filler word found in LMCache's requests")
				}
				t.Logf("%d filler words compared by index (LMCache's %d)", gn, wn)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatal(firstDiff(got, want))
			}
		})
	}
}

// TestLMCacheFixturesSalted: a salted run sends LMCache's requests in
// LMCache's order, each with one salt line before its first message and
// nothing else changed.
func TestLMCacheFixturesSalted(t *testing.T) {
	for _, name := range []string{"long-doc-qa-A", "long-doc-permutator-A"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args, fixture := readFixture(t, name)
			engine := simtest.Start(t, func(c *sim.Config) { c.ZeroLatency = true })
			proxy, received := capturingProxy(t, engine)
			args = append(args, "--engine-url", proxy, "--prompt-salt", "lmcache parity", "--output-dir", t.TempDir(), "--quiet")
			if code := runKVBench(t, args); code != 0 {
				t.Fatalf("exit %d", code)
			}
			got, want := chatBodies(received()), chatBodies(fixture)
			if len(got) != len(want) {
				t.Fatalf("%d requests, want %d", len(got), len(want))
			}
			for i := range got {
				msgs := got[i]["messages"].([]any)
				first := msgs[0].(map[string]any)
				text := first["content"].(string)
				line, rest, ok := strings.Cut(text, "\n")
				if !ok || !strings.HasSuffix(line, " lmcache parity") {
					t.Fatalf("request %d: first message %.60q does not start with a salt line", i, text)
				}
				first["content"] = rest
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatal(firstDiff(got, want))
			}
		})
	}
}
