package cli_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/bench/runs/runstest"
	"github.com/kvbench/kvbench/internal/testbin"
)

func TestReportWritesHTMLAndSVG(t *testing.T) {
	dir := t.TempDir()
	a := runstest.Write(t, dir, runstest.Spec{Name: "a", Started: resT0, Requests: 20, BaseTTFTms: 100, ReusedEvery: 2, Summary: true,
		EngineURL: "http://user:hunter2@127.0.0.1:8000/v1"})
	b := runstest.Write(t, dir, runstest.Spec{Name: "b", Started: resT0.Add(time.Hour), Requests: 20, BaseTTFTms: 50, ReusedEvery: 2, Summary: true})

	// One run by id: report.html in its folder, the path on stdout.
	res := testbin.Run(t, 60*time.Second, nil, "report", filepath.Base(a), "--runs-dir", dir)
	want := filepath.Join(a, "report.html")
	if res.Code != 0 || strings.TrimSpace(res.Stdout) != want {
		t.Fatalf("exit %d, stdout %q, stderr %q; want %s", res.Code, res.Stdout, res.Stderr, want)
	}
	html, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(html, []byte(`data-chart="ttft-cdf"`)) || bytes.Contains(html, []byte("hunter2")) || bytes.Contains(html, []byte("<script")) {
		t.Error("report.html lacks its TTFT CDF, holds the URL's password or a script")
	}

	// Two runs: report-A-vs-B.html in the current directory.
	cwd := t.TempDir()
	res = testbin.Run(t, 60*time.Second, nil, "report", a, b, "--runs-dir", dir, "--output", filepath.Join(cwd, "ab.html"))
	if res.Code != 0 || strings.TrimSpace(res.Stdout) != filepath.Join(cwd, "ab.html") {
		t.Fatalf("comparison: exit %d, %q %q", res.Code, res.Stdout, res.Stderr)
	}

	// One chart as SVG to stdout: well-formed, rooted at <svg>.
	res = testbin.Run(t, 60*time.Second, nil, "report", a, "--format", "svg", "--chart", "ttft-cdf", "--output", "-")
	if res.Code != 0 {
		t.Fatalf("svg: exit %d: %s", res.Code, res.Stderr)
	}
	dec := xml.NewDecoder(strings.NewReader(res.Stdout))
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("root element %q", root)
	}
	// Default SVG path: <chart>.svg in the run's folder; --chart implies
	// --format svg.
	res = testbin.Run(t, 60*time.Second, nil, "report", a, "--chart", "ttft-time")
	if res.Code != 0 || strings.TrimSpace(res.Stdout) != filepath.Join(a, "ttft-time.svg") {
		t.Errorf("svg default path: exit %d, %q %q", res.Code, res.Stdout, res.Stderr)
	}
}

func TestReportUnknownRunChartFormatExit2(t *testing.T) {
	dir := t.TempDir()
	a := runstest.Write(t, dir, runstest.Spec{Name: "a", Started: resT0, Requests: 5, Summary: true})
	for _, tc := range []struct {
		args []string
		name string
	}{
		{[]string{"report", "20990101-000000-nothing", "--runs-dir", dir}, "20990101-000000-nothing"},
		{[]string{"report", a, "--format", "svg", "--chart", "pie"}, "pie"},
		{[]string{"report", a, "--format", "pdf"}, "pdf"},
		{[]string{"report", a, "--format", "svg", "--chart", "sweep-curve"}, "sweep-curve"},
		{[]string{"report", a, "--chart", "pie"}, "pie"},
		{[]string{"report", a, "--format", "html", "--chart", "ttft-cdf"}, "ttft-cdf"},
	} {
		res := testbin.Run(t, 60*time.Second, nil, tc.args...)
		lines := strings.Split(strings.TrimSpace(res.Stderr), "\n")
		if res.Code != 2 || len(lines) != 1 || !strings.Contains(lines[0], tc.name) || res.Stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q", tc.args[1:], res.Code, res.Stderr, res.Stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(a, "report.html")); err == nil {
		t.Error("a failed report left a file")
	}
}
