package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kvbench/kvbench/app"
	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/sweep"
	"github.com/kvbench/kvbench/config"
)

func init() { extraCommands = append(extraCommands, NewSweepCommand) }

// SweepFlags are the sweep's own flags.
type SweepFlags struct {
	Rate, Concurrency string
	// WorkingSet is --sweep-working-set's LIST (tokens; k, M, GB).
	WorkingSet string
	// HitTarget is --hit-target; MaxCellsSet and PrecisionSet say
	// --search-max-cells and --search-precision were given (a
	// working-set search has defaults of its own).
	HitTarget                 float64
	MaxCellsSet, PrecisionSet bool
	Search                    bool
	GoodputTarget             float64
	Precision                 float64
	MaxCells                  int
}

// NewSweepCommand is `kvbench sweep`.
func NewSweepCommand() *cobra.Command {
	var sf SweepFlags
	var configFile string
	cmd := &cobra.Command{
		Use:   "sweep [run flags] (--sweep-rate LIST | --sweep-concurrency LIST | --sweep-working-set LIST) [--search --slo ... --goodput-target F | --search --hit-target F]",
		Short: "Run one workload at several loads and report the curve, or search for its capacity",
		Long: `Run one workload at several loads, each cell an ordinary run folder under
the sweep folder (<output-dir>/<stamp>-sweep-<workload>[-<name>]/cells/),
with its own prompt salt so cells never warm each other, and --reset-cache
before each cell when given. sweep.json and sweep.csv hold the curve.

LIST is 1,2,4,8 or 1:64:x2 (geometric) or 10:100:+10 (linear).
--search finds the highest value whose good fraction under --slo reaches
--goodput-target: it starts at the first value, doubles while cells pass,
then bisects between the last pass and the first fail.

A cell counts only when its load was delivered and sustained: a cell whose
load was not delivered neither passes nor fails (the result lists it as not
delivered), and one whose engine fell behind (completions under 95% of the
rate, or TTFT p50 of its last third 1.5x that of its first) is "not
sustained", a fail. A cell whose run record could not be written (a full
disk) is "cut": the sweep stops there and exits 4.

--sweep-working-set LIST varies how much distinct prompt the workload keeps
hot instead of the load (long-doc-qa documents, multi-round-chat sessions,
kv-tier-pressure pool, prefix-suffix-tuner thrash), in tokens: 20000,40000
or 10k:1M:x2, a GB suffix multiplying by tokens per GB. With --search it
finds the largest working set whose hit ratio stays at --hit-target of the
ideal (every tier together: capacity) and the largest whose reused TTFT p50
stays under 2x the smallest cell's (the fast tier), beside what the engine
declares (docs/cliff.md).`,
		Example: `  kvbench sweep --engine-url builtin --workload random-prefill --rp-num-requests 200 \
      --rp-request-length 100 --sweep-rate 10,20,40
  kvbench sweep --engine-url http://gpu:8000 --workload random-prefill --tokens-per-gb-kvcache 6000 \
      --sweep-rate 4 --search --slo ttft=500ms --goodput-target 0.9
  kvbench sweep --engine-url http://127.0.0.1:8000 --workload long-doc-qa --tokens-per-gb-kvcache 10000 \
      --ldqa-document-length 1000 --sweep-working-set 10k --search`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSweep(cmd, configFile, sf) },
	}
	fs := cmd.Flags()
	config.RegisterFlags(fs)
	fs.StringVar(&configFile, "config", "", "load an exported config JSON; flags that are set win")
	fs.StringVar(&sf.Rate, "sweep-rate", "", "request rates of the cells: `LIST` (1,2,4 or 1:64:x2 or 10:100:+10)")
	fs.StringVar(&sf.Concurrency, "sweep-concurrency", "", "concurrency caps of the cells (closed loop): `LIST`")
	fs.BoolVar(&sf.Search, "search", false, "search for the highest value meeting --goodput-target under --slo")
	fs.Float64Var(&sf.GoodputTarget, "goodput-target", 0.9, "good fraction a cell must reach to pass")
	fs.Float64Var(&sf.Precision, "search-precision", 0.05, "stop bisecting when pass and fail are this close (relative; a working-set search: 0.02)")
	fs.IntVar(&sf.MaxCells, "search-max-cells", 12, "most cells a search runs (a working-set search: 24)")
	fs.StringVar(&sf.WorkingSet, "sweep-working-set", "", "working-set sizes of the cells in tokens: `LIST` (20000,40000 or 10k:1M:x2; 2GB = 2 x tokens per GB)")
	fs.Float64Var(&sf.HitTarget, "hit-target", sweep.DefaultHitTarget, "a working-set cell passes when its hit ratio is at least this share of its ideal")
	return cmd
}

// SweepOptions builds the sweep's options from its flags and a resolved
// run config (the TUI form builds the same).
func SweepOptions(cfg *config.Config, sf SweepFlags) (sweep.Options, error) {
	o := sweep.Options{Config: cfg, Search: sf.Search, GoodputTarget: sf.GoodputTarget, Precision: sf.Precision, MaxCells: sf.MaxCells, HitTarget: sf.HitTarget}
	given := 0
	for _, l := range []string{sf.Rate, sf.Concurrency, sf.WorkingSet} {
		if l != "" {
			given++
		}
	}
	switch {
	case given > 1:
		return o, fmt.Errorf("give one of --sweep-rate, --sweep-concurrency and --sweep-working-set")
	case sf.WorkingSet != "":
		o.Dimension = sweep.WorkingSet
		if !sf.MaxCellsSet {
			o.MaxCells = sweep.DefaultWorkingSetCells
		}
		if !sf.PrecisionSet {
			o.Precision = sweep.DefaultWorkingSetPrecision
		}
		if o.HitTarget == 0 {
			o.HitTarget = sweep.DefaultHitTarget
		}
		set := cfg.Settings()
		tpg := set.TokensPerGB
		if tpg == 0 && set.EngineURL == bench.BuiltinURL {
			tpg = bench.BuiltinTokensPerGB()
		}
		v, err := sweep.ParseSizes("sweep-working-set", sf.WorkingSet, tpg)
		o.Values = v
		if err != nil {
			return o, err
		}
	case sf.Rate != "":
		o.Dimension = sweep.Rate
		v, err := sweep.ParseList("sweep-rate", sf.Rate)
		o.Values = v
		if err != nil {
			return o, err
		}
	case sf.Concurrency != "":
		o.Dimension = sweep.Concurrency
		v, err := sweep.ParseList("sweep-concurrency", sf.Concurrency)
		o.Values = v
		if err != nil {
			return o, err
		}
	default:
		return o, fmt.Errorf("give --sweep-rate LIST, --sweep-concurrency LIST or --sweep-working-set LIST")
	}
	return o, o.Validate()
}

func runSweep(cmd *cobra.Command, configFile string, sf SweepFlags) error {
	sf.MaxCellsSet = cmd.Flags().Changed("search-max-cells")
	sf.PrecisionSet = cmd.Flags().Changed("search-precision")
	cfg, err := config.Resolve(cmd.Flags(), config.Layers{JSON: configFile})
	if err != nil {
		return &UsageError{Err: err}
	}
	if err := cfg.Validate(); err != nil {
		return &UsageError{Err: err}
	}
	if missing := cfg.Missing(); len(missing) > 0 {
		return &UsageError{Err: config.MissingError(missing, "the sweep command (it has no guided form)")}
	}
	o, err := SweepOptions(cfg, sf)
	if err != nil {
		return &UsageError{Err: err}
	}
	set := cfg.Settings()
	if IsTTY() && !set.NoInteractive && !set.Quiet {
		return exitCode(app.RunSweep(cmd.Context(), o))
	}
	stderr, stdout := cmd.ErrOrStderr(), cmd.OutOrStdout()
	quiet := set.Quiet
	progress := func(format string, args ...any) {
		if !quiet {
			fmt.Fprintf(stderr, format+"\n", args...)
		}
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	var current *bench.Runner
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	aborted := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case <-sigs:
			case <-aborted:
				return
			}
			n++
			if n == 1 {
				progress("\ninterrupted: no new cells or requests; waiting for those in flight. Press Ctrl-C again to stop now.")
				cancel()
			} else if r := current; r != nil {
				r.Abort()
			}
		}
	}()
	defer close(aborted)

	total := len(o.Values)
	if o.Search {
		total = o.MaxCells
	}
	o.Started = func(dir string) {}
	o.CellStarted = func(i int, v float64, r *bench.Runner) {
		current = r
		progress("cell %d: %s %s (run %s)", i+1, o.Dimension, sweep.Format(v), r.ID())
	}
	o.Cell = func(i int, c sweep.Cell) {
		of := fmt.Sprintf("/%d", total)
		if o.Search {
			of = fmt.Sprintf(" (at most %d)", total)
		}
		line := fmt.Sprintf("cell %d%s: %s %s %s: %d requests, %d failed, achieved %s req/s, p99 TTFT %s ms",
			i+1, of, o.Dimension, sweep.Format(c.Value), c.Status, c.TotalRequests, c.FailedRequests, optNum(c.AchievedRate), optNum(c.P99TTFTms))
		if w := c.WorkingSetCell; w != nil {
			line = fmt.Sprintf("cell %d%s: working set %s tokens (%d %s) %s: %d requests, %d failed, hit %s%% of ideal %s%%, reused p50 TTFT %s ms",
				i+1, of, sweep.Format(w.WorkingSetTokens), w.Units, w.Unit, c.Status, c.TotalRequests, c.FailedRequests, pctNumber(c.HitRatio), pctNumber(w.IdealHitRatio), optNum(w.ReusedTTFTP50ms))
		}
		if c.GoodFraction != nil {
			line += fmt.Sprintf(", good %.1f%%", *c.GoodFraction*100)
		}
		if c.Status != record.CellPass && c.Status != record.CellDone && len(c.Reasons) > 0 {
			line += " (" + c.Reasons[0] + ")"
		}
		progress("%s", line)
	}
	f, dir, code, err := sweep.Run(ctx, o)
	if dir != "" {
		if f != nil {
			if set.Format == "json" {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				enc.Encode(f)
			} else {
				sweep.WriteTable(stdout, f)
			}
		}
		progress("kvbench: sweep in %s", dir)
	}
	if msg := sweep.CutMessage(f); msg != "" {
		// Said even with -q: it is why the exit code is 4.
		fmt.Fprintf(stderr, "kvbench: %s\n", msg)
	}
	if err != nil {
		if bench.IsUsage(err) {
			return &UsageError{Err: err}
		}
		if code == 4 {
			// sweep.json or sweep.csv could not be written: the record's
			// exit code, not a generic failure.
			fmt.Fprintf(stderr, "kvbench: %v\n", err)
			return exitCode(4)
		}
		return err
	}
	return exitCode(code)
}

func optNum(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", *p)
}

// pctNumber is a ratio as a percentage without its sign (a column
// headed with %), "n/a" when unknown.
func pctNumber(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", *p*100)
}
