// Package headless drives a headless Chromium through the DevTools
// protocol on a pipe (--remote-debugging-pipe), for tests that check what
// a real browser makes of a page: the console errors it logs, every
// network request it makes, values read from the rendered DOM, and a
// full-page screenshot. One browser serves many pages.
//
// The browser is started with every route to the network closed (an
// unusable proxy and a resolver that finds no host), so a page that tries
// to fetch something fails loudly instead of reaching out, and the
// attempt is still seen as a request.
package headless

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// Find returns the path of a Chromium or Chrome binary: $KVBENCH_CHROMIUM,
// else the first of chromium, chromium-browser, google-chrome on PATH.
func Find() (string, error) {
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

// Browser is a running headless browser.
type Browser struct {
	cmd    *exec.Cmd
	in     *os.File // commands to the browser (its fd 3)
	stderr *capped

	mu       sync.Mutex
	next     int
	pending  map[int]chan message
	handlers map[string]func(message) // by session id
	dead     error
	done     chan struct{}
}

type message struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *protoError     `json:"error,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

type protoError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// capped keeps the first 64 KiB written to it (the browser's stderr, for
// error messages).
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := 64<<10 - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// Start launches the browser at path with a fresh profile in profileDir.
// The browser lives until Close (or ctx ends).
func Start(ctx context.Context, path, profileDir string) (*Browser, error) {
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		cmdR.Close()
		cmdW.Close()
		return nil, err
	}
	args := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--remote-debugging-pipe", "--user-data-dir=" + profileDir,
		"--no-first-run", "--no-default-browser-check", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--disable-extensions",
		"--disable-default-apps", "--disable-features=Translate,MediaRouter,OptimizationHints",
		"--mute-audio", "--hide-scrollbars", "--allow-file-access-from-files",
		// No way out: an unusable proxy for every scheme and a resolver
		// that finds no host.
		"--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
		"--host-resolver-rules=MAP * ~NOTFOUND",
		"about:blank",
	}
	b := &Browser{
		cmd: exec.CommandContext(ctx, path, args...), in: cmdW, stderr: &capped{},
		pending: map[int]chan message{}, handlers: map[string]func(message){}, done: make(chan struct{}),
	}
	b.cmd.ExtraFiles = []*os.File{cmdR, outW} // fd 3 and fd 4 in the browser
	b.cmd.Stderr = b.stderr
	b.cmd.Stdout = b.stderr
	b.cmd.Env = append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS=disabled:")
	if err := b.cmd.Start(); err != nil {
		cmdR.Close()
		cmdW.Close()
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	cmdR.Close()
	outW.Close()
	go b.read(outR)
	return b, nil
}

func (b *Browser) read(r io.ReadCloser) {
	defer close(b.done)
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			b.fail(fmt.Errorf("browser closed the DevTools pipe: %w; stderr: %s", err, lastLines(b.stderr.String(), 5)))
			return
		}
		var m message
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch, ok := b.pending[m.ID]; ok {
				delete(b.pending, m.ID)
				ch <- m
			}
			b.mu.Unlock()
			continue
		}
		h := b.handlers[m.SessionID]
		b.mu.Unlock()
		if h != nil {
			h(m)
		}
	}
}

func (b *Browser) fail(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dead == nil {
		b.dead = err
	}
	for id, ch := range b.pending {
		delete(b.pending, id)
		close(ch)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// call sends one command and waits for its answer.
func (b *Browser) call(ctx context.Context, session, method string, params any, out any) error {
	if params == nil {
		params = struct{}{}
	}
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	ch := make(chan message, 1)
	b.mu.Lock()
	if b.dead != nil {
		b.mu.Unlock()
		return b.dead
	}
	b.next++
	id := b.next
	b.pending[id] = ch
	b.mu.Unlock()
	msg, err := json.Marshal(message{ID: id, Method: method, Params: p, SessionID: session})
	if err != nil {
		return err
	}
	if _, err := b.in.Write(append(msg, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			b.mu.Lock()
			defer b.mu.Unlock()
			return fmt.Errorf("%s: %w", method, b.dead)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		if out != nil {
			return json.Unmarshal(m.Result, out)
		}
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Close ends the browser and waits for it.
func (b *Browser) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_ = b.call(ctx, "", "Browser.close", nil, nil)
	b.in.Close()
	err := b.cmd.Wait()
	<-b.done
	return err
}

// Options of one page load.
type Options struct {
	Width int  // viewport width in CSS pixels (default 1200)
	Dark  bool // emulate prefers-color-scheme: dark
	// Eval is a JavaScript expression evaluated after the load; its value
	// (JSON-encoded) is Result.Value.
	Eval string
	// Screenshot captures the whole page as PNG.
	Screenshot bool
}

// Result is what the browser made of a page.
type Result struct {
	// Errors are console errors, uncaught exceptions and browser log
	// entries of level error (failed loads, CSP violations, invalid SVG
	// attributes), one line each.
	Errors []string
	// Requests are the URLs of every request the page made, its own
	// included.
	Requests []string
	Value    json.RawMessage
	PNG      []byte
}

// Load opens url in a new tab, waits for its load event, and reports.
func (b *Browser) Load(ctx context.Context, url string, o Options) (*Result, error) {
	if o.Width == 0 {
		o.Width = 1200
	}
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return nil, err
	}
	defer b.call(context.Background(), "", "Target.closeTarget", map[string]any{"targetId": target.TargetID}, nil)
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		return nil, err
	}
	s := att.SessionID
	res := &Result{}
	var mu sync.Mutex
	loaded := make(chan struct{})
	var once sync.Once
	b.mu.Lock()
	b.handlers[s] = func(m message) {
		mu.Lock()
		defer mu.Unlock()
		switch m.Method {
		case "Page.loadEventFired":
			once.Do(func() { close(loaded) })
		case "Network.requestWillBeSent":
			var p struct {
				Request struct {
					URL string `json:"url"`
				} `json:"request"`
			}
			if json.Unmarshal(m.Params, &p) == nil {
				res.Requests = append(res.Requests, p.Request.URL)
			}
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string `json:"type"`
				Args []struct {
					Value       any    `json:"value"`
					Description string `json:"description"`
				} `json:"args"`
			}
			if json.Unmarshal(m.Params, &p) == nil && (p.Type == "error" || p.Type == "assert") {
				var parts []string
				for _, a := range p.Args {
					if a.Description != "" {
						parts = append(parts, a.Description)
					} else {
						parts = append(parts, fmt.Sprint(a.Value))
					}
				}
				res.Errors = append(res.Errors, "console."+p.Type+": "+strings.Join(parts, " "))
			}
		case "Runtime.exceptionThrown":
			var p struct {
				Details struct {
					Text      string `json:"text"`
					Exception struct {
						Description string `json:"description"`
					} `json:"exception"`
				} `json:"exceptionDetails"`
			}
			if json.Unmarshal(m.Params, &p) == nil {
				res.Errors = append(res.Errors, "exception: "+p.Details.Text+" "+p.Details.Exception.Description)
			}
		case "Log.entryAdded":
			var p struct {
				Entry struct {
					Level  string `json:"level"`
					Source string `json:"source"`
					Text   string `json:"text"`
					URL    string `json:"url"`
				} `json:"entry"`
			}
			if json.Unmarshal(m.Params, &p) == nil && p.Entry.Level == "error" {
				res.Errors = append(res.Errors, fmt.Sprintf("%s: %s %s", p.Entry.Source, p.Entry.Text, p.Entry.URL))
			}
		}
	}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.handlers, s)
		b.mu.Unlock()
	}()
	for _, d := range []string{"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"} {
		if err := b.call(ctx, s, d, nil, nil); err != nil {
			return nil, err
		}
	}
	if err := b.call(ctx, s, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": o.Width, "height": 900, "deviceScaleFactor": 1, "mobile": false,
	}, nil); err != nil {
		return nil, err
	}
	scheme := "light"
	if o.Dark {
		scheme = "dark"
	}
	if err := b.call(ctx, s, "Emulation.setEmulatedMedia", map[string]any{
		"features": []map[string]string{{"name": "prefers-color-scheme", "value": scheme}},
	}, nil); err != nil {
		return nil, err
	}
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := b.call(ctx, s, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return nil, err
	}
	if nav.ErrorText != "" {
		return nil, fmt.Errorf("navigate %s: %s", url, nav.ErrorText)
	}
	select {
	case <-loaded:
	case <-ctx.Done():
		return nil, fmt.Errorf("load %s: %w", url, ctx.Err())
	}
	if o.Eval != "" {
		var ev struct {
			Result struct {
				Value json.RawMessage `json:"value"`
			} `json:"result"`
			ExceptionDetails *struct {
				Text string `json:"text"`
			} `json:"exceptionDetails"`
		}
		if err := b.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": o.Eval, "returnByValue": true}, &ev); err != nil {
			return nil, err
		}
		if ev.ExceptionDetails != nil {
			return nil, fmt.Errorf("evaluate: %s", ev.ExceptionDetails.Text)
		}
		res.Value = ev.Result.Value
	}
	if o.Screenshot {
		var lm struct {
			Content struct {
				Width  float64 `json:"width"`
				Height float64 `json:"height"`
			} `json:"cssContentSize"`
		}
		if err := b.call(ctx, s, "Page.getLayoutMetrics", nil, &lm); err != nil {
			return nil, err
		}
		h := min(max(lm.Content.Height, 100), 16000)
		var shot struct {
			Data string `json:"data"`
		}
		if err := b.call(ctx, s, "Page.captureScreenshot", map[string]any{
			"format": "png", "captureBeyondViewport": true,
			"clip": map[string]any{"x": 0, "y": 0, "width": o.Width, "height": h, "scale": 1},
		}, &shot); err != nil {
			return nil, err
		}
		png, err := base64.StdEncoding.DecodeString(shot.Data)
		if err != nil {
			return nil, fmt.Errorf("screenshot: %w", err)
		}
		res.PNG = png
	}
	mu.Lock()
	defer mu.Unlock()
	out := &Result{Errors: append([]string(nil), res.Errors...), Requests: append([]string(nil), res.Requests...), Value: res.Value, PNG: res.PNG}
	return out, nil
}
