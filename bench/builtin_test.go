package bench

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The built-in engine listens on loopback only, serves the model asked
// for, and stops on Close.
func TestStartBuiltin(t *testing.T) {
	run, err := StartBuiltin("my-model", 0)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(run.URL())
	if err != nil || u.Hostname() != "127.0.0.1" {
		t.Fatalf("URL %q is not loopback", run.URL())
	}
	resp, err := http.Get(run.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"my-model"`) {
		t.Errorf("/v1/models does not list my-model: %s", body)
	}
	run.Close()
	if resp, err := http.Get(run.URL() + "/v1/models"); err == nil {
		resp.Body.Close()
		t.Error("the engine still answers after Close")
	}
}
