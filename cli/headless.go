package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/internal/textclean"
)

// Headless runs r with no tea.Program: progress lines on stderr (a line
// per second on a terminal, otherwise at most one per 10% or 10 s), the
// summary on stdout. It returns the run's exit code.
func Headless(ctx context.Context, r *bench.Runner, o HeadlessOptions) int {
	done := make(chan struct{})
	go func() {
		defer close(done)
		p := progress{o: o, r: r}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		events := r.Events()
		for events != nil {
			select {
			case e, ok := <-events:
				if !ok {
					events = nil
					continue
				}
				p.event(e)
			case <-tick.C:
				p.tick()
			}
		}
	}()
	fin := r.Run(ctx)
	<-done
	if fin.Summary != nil {
		if err := WriteSummary(o.Stdout, fin.Summary, fin.Sections, fin.Reasons, o.JSON); err != nil {
			fmt.Fprintf(o.Stderr, "kvbench: write summary: %v\n", err)
		}
	}
	if fin.RecordError != "" {
		// Said even with -q: the exit code alone does not say what is missing.
		fmt.Fprintf(o.Stderr, "kvbench: %s\n", textclean.Line(fin.RecordError))
	}
	if !o.Quiet {
		fmt.Fprintf(o.Stderr, "kvbench: run record in %s\n", textclean.Line(r.Dir()))
	}
	return fin.ExitCode
}

type progress struct {
	o         HeadlessOptions
	r         *bench.Runner
	lastAt    time.Time
	lastShare int // last printed tenth of the phase
	errors    int
}

// printf prints one progress line, cleaned (textclean.Line): the lines
// quote the runner's log and engines' errors.
func (p *progress) printf(format string, args ...any) {
	if p.o.Quiet {
		return
	}
	fmt.Fprintln(p.o.Stderr, textclean.Line(fmt.Sprintf(format, args...)))
}

func (p *progress) event(e bench.Event) {
	switch e.Kind {
	case bench.PhaseChanged:
		switch {
		case e.Total >= 0:
			p.printf("phase %s: %d requests", e.Phase, e.Total)
		case e.Duration > 0:
			p.printf("phase %s: %s", e.Phase, e.Duration)
		default:
			p.printf("phase %s", e.Phase)
		}
		p.lastShare = 0
		p.lastAt = time.Now()
	case bench.LogLine:
		if e.Warn {
			p.printf("warning: %s", e.Text)
		} else {
			p.printf("%s", e.Text)
		}
	case bench.RequestFinished:
		res := e.Result
		if res != nil && res.Error != nil && p.errors < 5 {
			p.errors++
			detail := ""
			if res.ErrorDetail != nil {
				detail = ": " + *res.ErrorDetail
			}
			p.printf("request %s failed: %s%s", res.RequestID, *res.Error, detail)
			if p.errors == 5 {
				p.printf("(further request errors are in requests.jsonl)")
			}
		}
	}
}

func (p *progress) tick() {
	if p.o.Quiet {
		return
	}
	s := p.r.Snapshot()
	if s.Phase == "" {
		return
	}
	share := -1
	if s.PhaseTotal > 0 {
		share = s.PhaseDone * 10 / s.PhaseTotal
	} else if s.PhaseLength > 0 {
		share = int(10 * time.Since(s.PhaseStart) / s.PhaseLength)
	}
	if !p.o.StderrTTY {
		due := time.Since(p.lastAt) >= 10*time.Second || (share >= 0 && share > p.lastShare)
		if !due {
			return
		}
	}
	p.lastAt = time.Now()
	if share > p.lastShare {
		p.lastShare = share
	}
	p.printf("%s", progressLine(s))
}

func progressLine(s bench.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%6.1fs] %s", s.Elapsed.Seconds(), s.Phase)
	if s.PhaseTotal > 0 {
		fmt.Fprintf(&b, " %d/%d (%d%%)", s.PhaseDone, s.PhaseTotal, 100*s.PhaseDone/s.PhaseTotal)
	} else {
		fmt.Fprintf(&b, " %d done", s.PhaseDone)
	}
	fmt.Fprintf(&b, " | in flight %d | failed %d", s.InFlight, s.Failed)
	if s.Done > 0 {
		if s.Done > s.Failed {
			fmt.Fprintf(&b, " | TTFT mean %.1f ms p99 %.1f ms | out %.1f tok/s", s.MeanTTFTms, s.P99TTFTms, s.OutputTPS)
		} else {
			fmt.Fprintf(&b, " | TTFT n/a | out %.1f tok/s", s.OutputTPS)
		}
	}
	if s.HitRatio != nil {
		fmt.Fprintf(&b, " | hit %.1f%%", 100**s.HitRatio)
	}
	if s.ExpectedHitRatio != nil {
		fmt.Fprintf(&b, " (expected %.1f%%", 100**s.ExpectedHitRatio)
		if s.ExpectedHitRatioLRU != nil {
			fmt.Fprintf(&b, ", LRU %.1f%%", 100**s.ExpectedHitRatioLRU)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, " | %s %d %s %d %s %d", sender.StateCold, s.Cold, sender.StateReused, s.Reused, sender.StateUnverified, s.Unverified)
	return b.String()
}
