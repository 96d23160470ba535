package visual

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/headless"
)

// startBrowser starts headless Chromium for the test, or skips when there
// is none, except under CI where a missing browser fails.
func startBrowser(t *testing.T, ctx context.Context) *headless.Browser {
	t.Helper()
	path, err := headless.Find()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI needs a browser for this test (.ci/run installs Debian's chromium): %v", err)
		}
		t.Skip(err)
	}
	b, err := headless.Start(ctx, path, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// chartsInDOM reads, from the rendered page, every chart figure with the
// size its SVG was laid out at.
const chartsInDOM = `JSON.stringify({
  svgs: document.querySelectorAll("svg").length,
  charts: [...document.querySelectorAll("figure.chart")].map(f => {
    const s = f.querySelector("svg"); const r = s ? s.getBoundingClientRect() : {width: 0, height: 0};
    return {name: f.dataset.chart, w: Math.round(r.width), h: Math.round(r.height), paths: s ? s.querySelectorAll("path").length : 0};
  })
})`

type domCharts struct {
	SVGs   int `json:"svgs"`
	Charts []struct {
		Name  string `json:"name"`
		W     int    `json:"w"`
		H     int    `json:"h"`
		Paths int    `json:"paths"`
	} `json:"charts"`
}

// check loads file in the browser and fails on a console error, a request
// for anything but the page itself, a missing or empty chart, or a blank
// screenshot. The screenshot is written beside the report (the test's
// temporary folder) and, when $KVBENCH_SCREENSHOT_DIR is set, there too.
func check(t *testing.T, ctx context.Context, b *headless.Browser, file string, want []string, dark bool) {
	t.Helper()
	u := (&url.URL{Scheme: "file", Path: file}).String()
	res, err := b.Load(ctx, u, headless.Options{Eval: chartsInDOM, Screenshot: true, Dark: dark})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Errors {
		t.Errorf("%s: console error: %s", filepath.Base(file), e)
	}
	if len(res.Requests) == 0 {
		t.Error("the browser reported no request at all: the network log is not working")
	}
	for _, r := range res.Requests {
		if r != u && !strings.HasPrefix(r, "data:") {
			t.Errorf("%s: network request for %s", filepath.Base(file), r)
		}
	}
	var raw string
	if err := json.Unmarshal(res.Value, &raw); err != nil {
		t.Fatalf("DOM probe: %v (%s)", err, res.Value)
	}
	var dom domCharts
	if err := json.Unmarshal([]byte(raw), &dom); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range dom.Charts {
		names = append(names, c.Name)
		if c.W < 300 || c.H < 150 || c.Paths < 10 {
			t.Errorf("chart %s laid out at %dx%d with %d paths", c.Name, c.W, c.H, c.Paths)
		}
	}
	if strings.Join(names, ",") != strings.Join(want, ",") || dom.SVGs != len(want) {
		t.Errorf("charts in the DOM %v (%d svg elements), want %v", names, dom.SVGs, want)
	}
	suffix := ".png"
	if dark {
		suffix = "-dark.png"
	}
	shot := strings.TrimSuffix(file, filepath.Ext(file)) + suffix
	if err := os.WriteFile(shot, res.PNG, 0o644); err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("KVBENCH_SCREENSHOT_DIR"); d != "" {
		os.WriteFile(filepath.Join(d, filepath.Base(shot)), res.PNG, 0o644)
	}
	img, err := png.Decode(bytes.NewReader(res.PNG))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if n := colours(img, 64); n < 8 {
		t.Errorf("%s: the screenshot has %d colours: blank", filepath.Base(shot), n)
	}
	if img.Bounds().Dy() < 1500 {
		t.Errorf("screenshot %dpx tall: the page did not lay out its charts", img.Bounds().Dy())
	}
}

// colours counts distinct colours in img, stopping at limit.
func colours(img image.Image, limit int) int {
	seen := map[[4]uint32]bool{}
	bb := img.Bounds()
	for y := bb.Min.Y; y < bb.Max.Y; y += 2 {
		for x := bb.Min.X; x < bb.Max.X; x += 2 {
			r, g, b, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, b, a}] = true
			if len(seen) >= limit {
				return len(seen)
			}
		}
	}
	return len(seen)
}

func TestReportsInARealBrowser(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := startBrowser(t, ctx)
	dir := t.TempDir()

	// The detectors first: a page that fetches and has a broken SVG must
	// show both, or a clean result below would prove nothing.
	bad := filepath.Join(dir, "bad.html")
	os.WriteFile(bad, []byte(`<!DOCTYPE html><html><body><img src="http://198.51.100.7/x.png"><svg><path d="M 0 0 L NaN 1"/></svg></body></html>`), 0o644)
	res, err := b.Load(ctx, (&url.URL{Scheme: "file", Path: bad}).String(), headless.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fetched := false
	for _, r := range res.Requests {
		fetched = fetched || strings.Contains(r, "198.51.100.7")
	}
	if !fetched || len(res.Errors) == 0 {
		t.Fatalf("detectors blind: requests %v, errors %v", res.Requests, res.Errors)
	}

	one := writeRun(t, dir, fixture{name: "one", n: 200, coldTTFT: 450, reusedEvery: 3, itlMs: 14, metrics: true, overloaded: true, seed: 4})
	two := writeRun(t, dir, fixture{name: "two", n: 200, coldTTFT: 220, reusedEvery: 3, itlMs: 9, seed: 5,
		started: time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)})
	sweep := writeSweep(t, dir, "cap", []float64{1, 2, 4, 8}, true)
	perRun := []string{ChartTTFTCDF, ChartTTFTTime, ChartThroughputTime, ChartITLHist}
	for _, tc := range []struct {
		name string
		args []string
		want []string
		dark bool
	}{
		{"one-run", []string{one}, append(append([]string{}, perRun...), ChartHitTime), false},
		{"one-run", []string{one}, append(append([]string{}, perRun...), ChartHitTime), true},
		{"comparison", []string{one, two}, append(append([]string{}, perRun...), ChartHitTime), false},
		{"sweep", []string{sweep}, append([]string{ChartSweepCurve}, perRun...), false},
	} {
		rep, err := Open(dir, tc.args)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, tc.name+".html")
		if err := rep.WriteFile(file, "html", ""); err != nil {
			t.Fatal(err)
		}
		check(t, ctx, b, file, tc.want, tc.dark)
	}
}
