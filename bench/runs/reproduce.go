package runs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/bench/load"
	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/secret"
)

// Command is the `kvbench run` command line that reproduces the run in
// dir, as arguments (the first two are "kvbench" and "run"):
//
//   - the engine URL the summary records, without user-info, query or
//     fragment (never a credential; no API key either: give --api-key-env
//     again if the engine needs one); a run without a summary has no
//     engine URL on record, and the command has none;
//   - every setting of config.json that differs from its default (the
//     workload always);
//   - the load settings: from config.json when it holds them (sharded
//     and merged runs), else from the summary's load block (rate,
//     arrival, burstiness, concurrency cap) and goodput block (the SLO);
//   - --prompt-salt as the summary records it (auto, none or the text),
//     --reset-cache when the engine's cache was reset, and the run's
//     recorded name.
//
// What the record does not hold is not in the command: --ramp-up (unless
// config.json has it), the engine settings (--endpoint, --extra-body,
// timeouts) and a shard's --shard (the command runs the whole run).
func Command(dir string) ([]string, error) {
	cfg, sum, err := recordedConfig(dir)
	if err != nil {
		return nil, err
	}
	args := []string{"kvbench", "run"}
	if sum != nil {
		if v, ok := record.Field(sum.Config, "engine_url"); ok {
			if u, _ := v.(string); u != "" {
				args = append(args, "--engine-url", cleanURL(u))
			}
		}
	}
	args = append(args, "--workload", cfg.Workload())
	loadArgs := loadFlags(cfg, sum)
	for _, f := range config.Fields {
		if !f.Exported || f.Key == "workload" {
			continue
		}
		if f.Workload != "" && f.Workload != cfg.Workload() {
			continue
		}
		args = append(args, flagArgs(cfg, f)...)
	}
	args = append(args, loadArgs...)
	if sum != nil {
		if v, ok := record.Field(sum.Config, "prompt_salt"); ok {
			if s, _ := v.(string); s != "" {
				args = append(args, "--prompt-salt", s)
			}
		}
		if sum.CacheReset != nil {
			args = append(args, "--reset-cache")
		}
		if sum.Run.Name != "" {
			args = append(args, "--name", sum.Run.Name)
		}
	}
	return args, nil
}

// recordedConfig reads config.json over the defaults, and the summary
// when there is one.
func recordedConfig(dir string) (*config.Config, *record.Summary, error) {
	path := filepath.Join(dir, record.ConfigFile)
	b, err := record.ReadRegular(path, 64<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%s has no %s: the command cannot be built", FolderID(dir), record.ConfigFile)
	}
	if err != nil {
		return nil, nil, err
	}
	_ = b // read through the safe opener first: a FIFO never blocks LoadJSON
	cfg := config.Default()
	if err := cfg.LoadJSON(path); err != nil {
		return nil, nil, err
	}
	sum, err := record.ReadSummary(dir)
	if err != nil {
		sum = nil
	}
	return cfg, sum, nil
}

// loadFlags are the load-shaping flags of the run; for a workload with
// its own rate setting (multi-round-chat's --mrc-qps) the rate is set on
// cfg, so the workload flags carry it.
func loadFlags(cfg *config.Config, sum *record.Summary) []string {
	var args []string
	recorded := false
	for _, f := range config.Fields {
		if f.Group == "load" && cfg.IsSet(f.Key) {
			recorded = true
			args = append(args, flagArgs(cfg, f)...)
		}
	}
	if recorded || sum == nil {
		return args
	}
	own := config.RateOf(cfg.Workload()) // the workload's own rate setting
	selfRate := own != nil
	if l := sum.Load; l != nil {
		rate := false
		if l.TargetRate != nil {
			if selfRate {
				_ = cfg.Set(own.Key, *l.TargetRate)
			} else {
				args = append(args, "--request-rate", formatValue(*l.TargetRate))
				rate = true
			}
		}
		arrival := load.Poisson
		if selfRate {
			arrival = own.Arrival(cfg)
		}
		if (rate || selfRate) && l.Arrival != "" && l.Arrival != arrival {
			args = append(args, "--arrival", l.Arrival)
		}
		if (rate || selfRate) && l.Arrival == load.Gamma && l.Burstiness != nil && *l.Burstiness != 1 {
			args = append(args, "--burstiness", strconv.FormatFloat(*l.Burstiness, 'f', -1, 64))
		}
		if l.MaxConcurrency != nil && *l.MaxConcurrency > 0 {
			args = append(args, "--max-concurrency", strconv.Itoa(*l.MaxConcurrency))
		}
	}
	if g := sum.Goodput; g != nil {
		var parts []string
		for _, p := range []struct {
			name string
			ms   *float64
		}{{"ttft", g.SLO.TTFTms}, {"tpot", g.SLO.TPOTms}, {"e2e", g.SLO.E2Ems}} {
			if p.ms != nil && *p.ms > 0 {
				parts = append(parts, p.name+"="+time.Duration(*p.ms*float64(time.Millisecond)).String())
			}
		}
		if len(parts) > 0 {
			args = append(args, "--slo", strings.Join(parts, ","))
		}
	}
	return args
}

// flagArgs are the arguments that give f its value in cfg; none when the
// value is the default.
func flagArgs(cfg *config.Config, f config.Field) []string {
	name := "--" + f.Flag
	v := cfg.Value(f.Key)
	if same(v, f.Default) {
		return nil
	}
	switch t := v.(type) {
	case int:
		return []string{name, strconv.Itoa(t)}
	case float64:
		return []string{name, strconv.FormatFloat(t, 'f', -1, 64)}
	case string:
		return []string{name, t}
	case bool:
		if t {
			return []string{name}
		}
		return []string{name + "=false"}
	case time.Duration:
		return []string{name, t.String()}
	case []int:
		parts := make([]string, len(t))
		for i, n := range t {
			parts[i] = strconv.Itoa(n)
		}
		return []string{name, strings.Join(parts, ",")}
	case []string:
		var out []string
		for _, s := range t {
			out = append(out, name, s)
		}
		return out
	}
	return nil
}

func same(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// cleanURL is u without user-info, query or fragment.
func cleanURL(u string) string {
	u = secret.Strip(u)
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	return u
}

// SweepCommand is the `kvbench sweep` command line that reproduces the
// sweep in dir: its first cell's run command (Command) without the
// cell's own rate or concurrency cap, salt suffix and name, then the
// sweep's list (or the search's start, --search and --goodput-target)
// and the sweep's name. --search-precision and --search-max-cells are
// not recorded and keep their defaults.
func SweepCommand(dir string) ([]string, error) {
	f, err := readSweepRecord(dir)
	if err != nil {
		return nil, err
	}
	if len(f.Cells) == 0 {
		return nil, fmt.Errorf("%s has no cell yet: the command cannot be built", FolderID(dir))
	}
	cell, err := Command(record.SweepCellDir(dir, f.Cells[0].RunID))
	if err != nil {
		return nil, err
	}
	s := f.Sweep
	drop := map[string]bool{"--name": true}
	if s.Dimension == rateDim {
		drop["--request-rate"], drop["--mrc-qps"] = true, true
	} else {
		drop["--max-concurrency"] = true
	}
	args := []string{"kvbench", "sweep"}
	for i := 2; i < len(cell); i++ {
		a := cell[i]
		switch {
		case drop[a]:
			i++ // and its value
			continue
		case a == "--prompt-salt" && i+1 < len(cell):
			args = append(args, a, cellSaltBase(cell[i+1]))
			i++
			continue
		}
		args = append(args, a)
	}
	values := s.Values
	if s.Search && len(values) > 0 {
		values = values[:1]
	}
	list := make([]string, len(values))
	for i, v := range values {
		list[i] = formatValue(v)
	}
	args = append(args, "--sweep-"+s.Dimension, strings.Join(list, ","))
	if s.Search {
		args = append(args, "--search")
	}
	if s.GoodputTarget != nil && *s.GoodputTarget != 0.9 {
		args = append(args, "--goodput-target", strconv.FormatFloat(*s.GoodputTarget, 'f', -1, 64))
	}
	if s.Name != "" {
		args = append(args, "--name", s.Name)
	}
	return args, nil
}

// cellSaltBase is the sweep's fixed salt from a cell's ("TEXT cell 01").
func cellSaltBase(salt string) string {
	if i := strings.LastIndex(salt, " cell "); i >= 0 {
		if _, err := strconv.Atoi(salt[i+len(" cell "):]); err == nil {
			return salt[:i]
		}
	}
	return salt
}

// ShellJoin renders arguments as one POSIX shell command line: an
// argument with anything but letters, digits and -_./:=,@%+ is single
// quoted.
func ShellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = shellQuote(a)
	}
	return strings.Join(out, " ")
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	plain := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@%+", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
