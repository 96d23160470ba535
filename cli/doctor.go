package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/kvbench/kvbench/internal/errs"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/doctor"
	"github.com/kvbench/kvbench/bench/metrics"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/theme"
)

func init() { extraCommands = append(extraCommands, NewDoctorCommand) }

const doctorExample = `  # Before a long run: does vLLM report what a cache benchmark needs?
  kvbench doctor --engine-url http://localhost:8000

  # With LMCache beside it, and the answer as JSON for a script
  kvbench doctor --engine-url http://gpu-box:8000 --lmcache-url http://gpu-box:7001 --format json`

// doctorFlags are the command's flag values.
type doctorFlags struct {
	engineURL, model, servedModel, apiKeyEnv string
	lmcacheURL, metricsURL, format           string
}

// NewDoctorCommand is `kvbench doctor`: what an engine reports, checked
// before a run (spec/cli.md). Exit 0 when nothing failed, 1 otherwise, 2
// for a bad flag.
func NewDoctorCommand() *cobra.Command {
	var f doctorFlags
	cmd := &cobra.Command{
		Use:   "doctor --engine-url URL [flags]",
		Short: "Check what an engine reports before a benchmark",
		Long: `Check, in a few seconds, what an engine reports that a cache benchmark needs:
its model list, streams that end with [DONE], usage with integer counts, an
explicit cached_tokens 0 on a unique prompt, cache hits on an identical repeat,
token-id prompts on /v1/completions, reasoning fields, /tokenize, Prometheus
cache counters and, with --lmcache-url, the tokens-per-GB lookup.

Every check that is not a pass says what to change on the engine or in the
flags. Exit status 0 when no check failed, 1 otherwise.`,
		Example: doctorExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd, f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.engineURL, "engine-url", "", "engine base `URL` (/v1 is added); builtin checks the built-in simulated engine")
	fs.StringVar(&f.model, "model", "", "`NAME` of the model to check (default: the first id of GET /v1/models)")
	fs.StringVar(&f.servedModel, "served-model-name", "", "`NAME` sent as the model field, when the engine serves an alias")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", "", "environment variable (`NAME`) holding the bearer key")
	fs.StringVar(&f.lmcacheURL, "lmcache-url", "", "LMCache server (`URL`) to check the tokens-per-GB lookup against")
	fs.StringVar(&f.metricsURL, "metrics-url", "", "Prometheus endpoint `URL` (default: {engine}/metrics)")
	fs.StringVar(&f.format, "format", "text", "output `FORMAT`: text or json")
	return cmd
}

func runDoctor(cmd *cobra.Command, f doctorFlags) error {
	o, err := f.options()
	if err != nil {
		return &UsageError{Err: err}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	display := ""
	if f.engineURL == bench.BuiltinURL {
		run, err := bench.StartBuiltin(f.model, 0)
		if err != nil {
			return err
		}
		defer run.Close()
		o.EngineURL = run.URL()
		if o.LMCacheURL == "" {
			o.LMCacheURL = run.URL() // its /status answers like LMCache's, as for run
		}
		display = "builtin"
	}

	rep := doctor.Run(ctx, o)
	if display != "" {
		rep.EngineURL = display
	}
	if ctx.Err() != nil && cmd.Context().Err() == nil {
		return ExitCode(errs.ExitInterrupted)
	}
	out := cmd.OutOrStdout()
	switch {
	case f.format == "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	case styledOutput(out):
		width, _, _ := term.GetSize(int(out.(*os.File).Fd()))
		writeDoctorStyled(out, rep, theme.New(theme.Default), width)
	default:
		writeDoctorPlain(out, rep)
	}
	if rep.Failed() {
		return ExitCode(errs.ExitFailed)
	}
	return nil
}

// options checks the flag values (a bad one is exit 2, naming the flag).
func (f doctorFlags) options() (doctor.Options, error) {
	var o doctor.Options
	if f.format != "text" && f.format != "json" {
		return o, fmt.Errorf("--format: must be text or json, got %q", f.format)
	}
	if strings.TrimSpace(f.engineURL) == "" {
		return o, errors.New("missing required arguments: --engine-url")
	}
	if f.engineURL != "builtin" {
		if _, err := sender.NormalizeURL(f.engineURL); err != nil {
			return o, err
		}
	}
	if f.metricsURL != "" {
		if _, err := metrics.NormalizeURL(f.metricsURL); err != nil {
			return o, err
		}
	}
	if f.lmcacheURL != "" {
		s := f.lmcacheURL
		if !strings.Contains(s, "://") {
			s = "http://" + s
		}
		if u, err := url.Parse(s); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return o, fmt.Errorf("--lmcache-url %q: want http://host:port", f.lmcacheURL)
		}
	}
	if f.apiKeyEnv != "" {
		key, ok := os.LookupEnv(f.apiKeyEnv)
		if !ok || key == "" {
			return o, fmt.Errorf("--api-key-env: environment variable %s is not set", f.apiKeyEnv)
		}
		o.APIKey = key
	}
	o.EngineURL, o.Model, o.ServedModelName = f.engineURL, f.model, f.servedModel
	o.LMCacheURL, o.MetricsURL = f.lmcacheURL, f.metricsURL
	return o, nil
}

// styledOutput is true on a terminal without NO_COLOR.
func styledOutput(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && !theme.NoColor()
}

func doctorTally(r doctor.Report) string { return r.Tally() }

func idWidth(r doctor.Report) int {
	n := 0
	for _, c := range r.Checks {
		n = max(n, len(c.ID))
	}
	return n
}

// writeDoctorPlain is the report without a terminal: no escapes, one
// line per check, its hint on the next line.
func writeDoctorPlain(w io.Writer, r doctor.Report) {
	fmt.Fprintf(w, "kvbench doctor: %s, model %s\n", r.EngineURL, orNone(r.Model))
	iw := idWidth(r)
	for _, c := range r.Checks {
		if c.Skipped() {
			// Not run: one line, the reason; the hint is the failed check's.
			fmt.Fprintf(w, "%-4s  %-*s  %s\n", "SKIP", iw, c.ID, c.Why())
			continue
		}
		fmt.Fprintf(w, "%-4s  %-*s  %s\n", strings.ToUpper(c.Status), iw, c.ID, c.Message)
		if c.Hint != "" {
			fmt.Fprintf(w, "%-4s  %-*s  hint: %s\n", "", iw, "", c.Hint)
		}
	}
	fmt.Fprintf(w, "%s\n", doctorTally(r))
}

// writeDoctorStyled is the checklist on a terminal: a coloured mark per
// check, messages wrapped to the width, hints beneath in muted colour.
func writeDoctorStyled(w io.Writer, r doctor.Report, st *theme.Styles, width int) {
	if width <= 0 {
		width = 100
	}
	marks := map[string]lipgloss.Style{doctor.Pass: st.OK, doctor.Warn: st.Warn, doctor.Fail: st.Error, doctor.Info: st.Muted}
	glyph := map[string]string{doctor.Pass: "✓", doctor.Warn: "!", doctor.Fail: "✗", doctor.Info: "i"}
	iw := idWidth(r)
	indent := 2 + 1 + 1 + iw + 2
	pad := strings.Repeat(" ", indent)
	limit := max(20, width-indent-1)
	// Style line by line: lipgloss pads a multi-line block to its widest line.
	wrap := func(s string, style *lipgloss.Style) string {
		lines := wrapWords(s, limit)
		for i, l := range lines {
			if style != nil {
				l = style.Render(l)
			}
			if i > 0 {
				l = pad + l
			}
			lines[i] = l
		}
		return strings.Join(lines, "\n")
	}

	fmt.Fprintf(w, "%s %s %s\n\n", st.Title.Render("kvbench doctor"), r.EngineURL, st.Muted.Render("model "+orNone(r.Model)))
	for _, c := range r.Checks {
		if c.Skipped() {
			fmt.Fprintf(w, "  %s %s  %s\n", st.Muted.Render("-"), st.Muted.Render(fmt.Sprintf("%-*s", iw, c.ID)), st.Muted.Render(wrap("skipped: "+c.Why(), nil)))
			continue
		}
		fmt.Fprintf(w, "  %s %s  %s\n", marks[c.Status].Render(glyph[c.Status]), st.Bold.Render(fmt.Sprintf("%-*s", iw, c.ID)), wrap(c.Message, nil))
		if c.Hint != "" {
			fmt.Fprintf(w, "%s%s\n", pad, wrap("→ "+c.Hint, &st.Muted))
		}
	}
	tally := doctorTally(r)
	switch {
	case r.Failed():
		tally = st.Error.Render(tally)
	case r.Count(doctor.Warn) > 0:
		tally = st.Warn.Render(tally)
	default:
		tally = st.OK.Render(tally)
	}
	fmt.Fprintf(w, "\n  %s\n", tally)
}

// wrapWords wraps at spaces only, so flags and URLs stay whole (a word
// wider than the limit gets a line of its own).
func wrapWords(s string, limit int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case ansi.StringWidth(line)+1+ansi.StringWidth(w) <= limit:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
