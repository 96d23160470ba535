package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/internal/hostileengine"
	"github.com/kvbench/kvbench/internal/testutil"
)

func preflightErr(t *testing.T, err error) *PreflightError {
	t.Helper()
	if !IsEngineUnavailable(err) {
		t.Fatalf("error %v is not an engine error (exit 3)", err)
	}
	var pe *PreflightError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v is not a preflight error", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("message is not one line: %q", err.Error())
	}
	return pe
}

func modelsServer(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func TestPreflightCauses(t *testing.T) {
	list := func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"tiny-llama","owned_by":"llamacpp"},{"id":"other"}],"models":[]}`)
	}
	ok := modelsServer(t, list)

	ml, err := Preflight(context.Background(), PreflightOptions{BaseURL: ok})
	if err != nil || ml.Model != "tiny-llama" || len(ml.IDs) != 2 || !ml.OllamaList {
		t.Fatalf("listed engine: %+v %v", ml, err)
	}
	if ml, err := Preflight(context.Background(), PreflightOptions{BaseURL: ok, Model: "other"}); err != nil || ml.Model != "other" {
		t.Fatalf("listed model: %+v %v", ml, err)
	}

	cases := []struct {
		name  string
		o     PreflightOptions
		cause string
		want  []string
	}{
		{"refused", PreflightOptions{BaseURL: "http://" + testutil.ClosedAddr(t) + "/v1"}, CauseRefused, []string{"connection refused", "/v1/models"}},
		{"model not listed", PreflightOptions{BaseURL: ok, Model: "llama-70b"}, CauseNotListed, []string{`"llama-70b"`, `"tiny-llama", "other"`, "--model"}},
		{"401", PreflightOptions{BaseURL: modelsServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) })}, CauseAuth, []string{"HTTP 401", "--api-key-env"}},
		{"403 with key", PreflightOptions{BaseURL: modelsServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(403) }), APIKey: "sk-secret-1"}, CauseAuth, []string{"HTTP 403", "refused the credentials"}},
		{"404", PreflightOptions{BaseURL: modelsServer(t, http.NotFound)}, CauseHTTP, []string{"HTTP 404", "--engine-url"}},
		{"not a list", PreflightOptions{BaseURL: modelsServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html>") })}, CauseNotModels, []string{"not an OpenAI model list"}},
		{"empty list", PreflightOptions{BaseURL: modelsServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"data":[]}`) })}, CauseNoModels, []string{"lists no model"}},
		{"tls to plain http", PreflightOptions{BaseURL: strings.Replace(ok, "http://", "https://", 1)}, CauseTLS, []string{"TLS", "http://"}},
	}
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(list))
	t.Cleanup(tlsSrv.Close)
	cases = append(cases, struct {
		name  string
		o     PreflightOptions
		cause string
		want  []string
	}{"untrusted certificate", PreflightOptions{BaseURL: tlsSrv.URL + "/v1"}, CauseTLS, []string{"TLS", "certificate"}})

	// An engine that accepts the connection and never answers.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	cases = append(cases, struct {
		name  string
		o     PreflightOptions
		cause string
		want  []string
	}{"timeout", PreflightOptions{BaseURL: "http://" + silent.Addr().String() + "/v1", Timeout: 200 * time.Millisecond}, CauseTimeout, []string{"no answer within 200ms"}})

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Preflight(context.Background(), c.o)
			pe := preflightErr(t, err)
			if pe.Cause != c.cause {
				t.Errorf("cause %q, want %q (%v)", pe.Cause, c.cause, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err.Error(), w)
				}
			}
			if c.o.APIKey != "" && strings.Contains(err.Error(), c.o.APIKey) {
				t.Errorf("message shows the key: %q", err.Error())
			}
		})
	}
}

// DNS failures are named as such (checked on the classifier: the test
// machine's resolver is not ours to rely on).
func TestPreflightDNSCause(t *testing.T) {
	u, _ := url.Parse("http://no-such-engine.invalid:8000/v1/models")
	err := &url.Error{Op: "Get", URL: u.String(), Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &net.DNSError{Err: "no such host", Name: "no-such-engine.invalid", IsNotFound: true}}}
	cause, msg := classifyDial(context.Background(), err, u, time.Second)
	if cause != CauseDNS || !strings.Contains(msg, `"no-such-engine.invalid"`) || !strings.Contains(msg, "DNS") {
		t.Errorf("got %s %q", cause, msg)
	}
}

func TestPreflightCredentialsNotShown(t *testing.T) {
	_, err := Preflight(context.Background(), PreflightOptions{BaseURL: "http://" + testutil.ClosedAddr(t) + "/v1",
		UserInfo: url.UserPassword("alice", "hunter2")})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v", err)
	}
}

// Model ids, owners and the Server header come out of the preflight
// clean: no terminal escape, no echoed key (an id reaches config.json).
func TestPreflightCleansModelList(t *testing.T) {
	const key = "sk-preflight-planted-77"
	e := hostileengine.Start(t, hostileengine.Config{})
	base, _ := sender.NormalizeURL(e.URL)
	ml, err := Preflight(context.Background(), PreflightOptions{BaseURL: base, APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	if len(ml.IDs) != len(hostileengine.EscapeModelIDs) || ml.Model != ml.IDs[0] {
		t.Fatalf("ids %q model %q", ml.IDs, ml.Model)
	}
	for _, s := range append(append([]string{ml.Server}, ml.IDs...), ml.OwnedBy...) {
		if hostileengine.Unsafe([]byte(s)) >= 0 || strings.Contains(s, key) {
			t.Errorf("%q is not clean", s)
		}
	}
	if !strings.HasSuffix(ml.Model, "-Bearer [redacted]") {
		t.Errorf("model %q", ml.Model)
	}
}
