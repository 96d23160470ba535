package visual

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The browser tests drive headless Chromium with chromedp. The browser
// starts with every route to the network closed (an unusable proxy and a
// resolver that finds no host), so a page that tries to fetch something
// fails loudly instead of reaching out, and the attempt is still seen as
// a request.

// findBrowser returns the path of a Chromium or Chrome binary:
// $KVBENCH_CHROMIUM, else the first of chromium, chromium-browser,
// google-chrome on PATH.
func findBrowser() (string, error) {
	if p := os.Getenv("KVBENCH_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium on PATH (Debian: apt-get install chromium)")
}

// startBrowser starts headless Chromium for the test and returns its
// context (pages open in new tabs of it), or skips when there is none,
// except under CI where a missing browser fails. The browser ends with
// ctx or the test.
func startBrowser(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	path, err := findBrowser()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI needs a browser for this test (.ci/run installs Debian's chromium): %v", err)
		}
		t.Skip(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("hide-scrollbars", true), chromedp.Flag("mute-audio", true),
		chromedp.Flag("allow-file-access-from-files", true),
		chromedp.Flag("disable-component-update", true),
		// No way out.
		chromedp.ProxyServer("http://127.0.0.1:9"), chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		chromedp.Env("DBUS_SESSION_BUS_ADDRESS=disabled:"),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	browser, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return browser
}

// pageOptions say how one page is loaded.
type pageOptions struct {
	width int  // viewport width in CSS pixels (default 1200)
	dark  bool // emulate prefers-color-scheme: dark
	// eval is a JavaScript expression evaluated after the load; its value
	// (JSON-encoded) is loaded.value.
	eval string
	// screenshot captures the whole page as PNG.
	screenshot bool
}

// loaded is what the browser made of a page.
type loaded struct {
	// errors are console errors, uncaught exceptions and browser log
	// entries of level error (failed loads, CSP violations, invalid SVG
	// attributes), one line each.
	errors []string
	// requests are the URLs of every request the page made, its own
	// included.
	requests []string
	value    []byte
	png      []byte
}

// load opens url in a new tab of browser, waits for its load event, and
// reports; the tab is closed after.
func load(browser context.Context, url string, o pageOptions) (*loaded, error) {
	if o.width == 0 {
		o.width = 1200
	}
	var mu sync.Mutex
	res := &loaded{}
	tab, cancel := chromedp.NewContext(browser, chromedp.WithListener(func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			res.requests = append(res.requests, ev.Request.URL)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var parts []string
				for _, a := range ev.Args {
					if a.Description != "" {
						parts = append(parts, a.Description)
					} else {
						parts = append(parts, string(a.Value))
					}
				}
				res.errors = append(res.errors, "console."+string(ev.Type)+": "+strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			line := "exception: " + d.Text
			if d.Exception != nil {
				line += " " + d.Exception.Description
			}
			res.errors = append(res.errors, line)
		case *cdplog.EventEntryAdded:
			if e := ev.Entry; e.Level == cdplog.EntryLevelError {
				res.errors = append(res.errors, fmt.Sprintf("%s: %s %s", e.Source, e.Text, e.URL))
			}
		}
	}))
	defer cancel()
	scheme := "light"
	if o.dark {
		scheme = "dark"
	}
	if err := chromedp.Do(tab,
		chromedp.EmulateViewport(int64(o.width), 900),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
			})
			return err
		}),
		chromedp.Navigate(url),
	); err != nil {
		return nil, fmt.Errorf("load %s: %w", url, err)
	}
	if o.eval != "" {
		v, err := chromedp.Run(tab, chromedp.Evaluate[[]byte](o.eval))
		if err != nil {
			return nil, fmt.Errorf("evaluate: %w", err)
		}
		res.value = v
	}
	if o.screenshot {
		png, err := chromedp.Run(tab, wholePage(o.width))
		if err != nil {
			return nil, fmt.Errorf("screenshot: %w", err)
		}
		res.png = png
	}
	mu.Lock()
	defer mu.Unlock()
	return &loaded{errors: slices.Clone(res.errors), requests: slices.Clone(res.requests), value: res.value, png: res.png}, nil
}

// wholePage captures the page at its laid-out height (at most 16000
// pixels), width wide, as PNG.
func wholePage(width int) chromedp.Action[[]byte] {
	return func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		lm, err := cdp.Call(ctx, t, cdppage.GetLayoutMetrics, cdp.Empty{})
		if err != nil {
			return nil, err
		}
		h := 100.0
		if lm.CSSContentSize != nil {
			h = min(max(lm.CSSContentSize.Height, 100), 16000)
		}
		shot, err := cdp.Call(ctx, t, cdppage.CaptureScreenshot, cdppage.CaptureScreenshotParams{
			Format: cdppage.CaptureScreenshotFormatPng, CaptureBeyondViewport: ptrTo(true),
			Clip: &cdppage.Viewport{X: 0, Y: 0, Width: float64(width), Height: h, Scale: 1},
		})
		return shot.Data, err
	}
}

func ptrTo[T any](v T) *T { return &v }

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
func check(t *testing.T, browser context.Context, file string, want []string, dark bool) {
	t.Helper()
	u := (&url.URL{Scheme: "file", Path: file}).String()
	res, err := load(browser, u, pageOptions{eval: chartsInDOM, screenshot: true, dark: dark})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.errors {
		t.Errorf("%s: console error: %s", filepath.Base(file), e)
	}
	if len(res.requests) == 0 {
		t.Error("the browser reported no request at all: the network log is not working")
	}
	for _, r := range res.requests {
		if r != u && !strings.HasPrefix(r, "data:") {
			t.Errorf("%s: network request for %s", filepath.Base(file), r)
		}
	}
	var raw string
	if err := json.Unmarshal(res.value, &raw); err != nil {
		t.Fatalf("DOM probe: %v (%s)", err, res.value)
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
	if err := os.WriteFile(shot, res.png, 0o644); err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("KVBENCH_SCREENSHOT_DIR"); d != "" {
		os.WriteFile(filepath.Join(d, filepath.Base(shot)), res.png, 0o644)
	}
	img, err := png.Decode(bytes.NewReader(res.png))
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
	browser := startBrowser(t, ctx)
	dir := t.TempDir()

	// The detectors first: a page that fetches and has a broken SVG must
	// show both, or a clean result below would prove nothing.
	bad := filepath.Join(dir, "bad.html")
	os.WriteFile(bad, []byte(`<!DOCTYPE html><html><body><img src="http://198.51.100.7/x.png"><svg><path d="M 0 0 L NaN 1"/></svg></body></html>`), 0o644)
	res, err := load(browser, (&url.URL{Scheme: "file", Path: bad}).String(), pageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fetched := false
	for _, r := range res.requests {
		fetched = fetched || strings.Contains(r, "198.51.100.7")
	}
	if !fetched || len(res.errors) == 0 {
		t.Fatalf("detectors blind: requests %v, errors %v", res.requests, res.errors)
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
		check(t, browser, file, tc.want, tc.dark)
	}
}
