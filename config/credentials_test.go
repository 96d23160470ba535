package config

import (
	"strings"
	"testing"
)

// TestURLCredentialsSplitWhereTheyEnter: whichever layer gives a URL
// with user-info, the value every reader sees is credential-free and
// the credentials are only reachable through UserInfo/ConnURL.
func TestURLCredentialsSplitWhereTheyEnter(t *testing.T) {
	const pass = "s3cr3t"
	env := func(k string) (string, bool) {
		if k == "KVBENCH_METRICS_URL" {
			return "http://bob:" + pass + "@m:9090/metrics", true
		}
		return "", false
	}
	c, err := Resolve(newFlags(t, "--engine-url", "http://alice:"+pass+"@gpu:8000", "--lmcache-url", "carol:"+pass+"@lm:9000"), Layers{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"engine_url": "http://gpu:8000", "lmcache_url": "lm:9000", "metrics_url": "http://m:9090/metrics"}
	for k, v := range want {
		if c.String(k) != v {
			t.Errorf("%s = %q, want %q", k, c.String(k), v)
		}
		if ui := c.UserInfo(k); ui == nil {
			t.Errorf("%s: credentials lost", k)
		} else if p, _ := ui.Password(); p != pass {
			t.Errorf("%s: password %q", k, p)
		}
	}
	if got := c.ConnURL("engine_url"); got != "http://alice:"+pass+"@gpu:8000" {
		t.Errorf("ConnURL = %q", got)
	}
	if got := c.ConnURL("lmcache_url"); got != "carol:"+pass+"@lm:9000" {
		t.Errorf("ConnURL(lmcache_url) = %q", got)
	}
	for _, doc := range [][]byte{c.ExportJSON(), c.RecordJSON()} {
		if s := string(doc); strings.Contains(s, pass) || strings.Contains(s, "alice") {
			t.Errorf("config JSON holds credentials: %s", s)
		}
	}

	d := c.Clone()
	if d.UserInfo("engine_url") == nil {
		t.Error("Clone dropped the credentials")
	}
	// The form sets the same URL again: the credentials stay; another URL
	// drops them.
	if err := d.SetString("engine_url", "http://gpu:8000"); err != nil || d.UserInfo("engine_url") == nil {
		t.Errorf("same URL set again: %v, %v", err, d.UserInfo("engine_url"))
	}
	if err := d.Set("engine_url", "http://other:8000"); err != nil || d.UserInfo("engine_url") != nil {
		t.Errorf("another URL must not inherit credentials: %v", d.UserInfo("engine_url"))
	}
	if c.UserInfo("engine_url") == nil {
		t.Error("Clone shares its credentials map with the original")
	}
	if err := d.SetString("engine_url", "http://dave:pw2@x:1"); err != nil || d.String("engine_url") != "http://x:1" {
		t.Errorf("SetString: %v %q", err, d.String("engine_url"))
	}
}
