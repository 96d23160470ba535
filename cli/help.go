package cli

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kvbench/kvbench/config"
)

// Help that teaches: examples for every command, run's flags grouped as
// a person reads them, and a nearest-flag suggestion on a typo.

func init() { decorators = append(decorators, decorateHelp) }

// helpExamples are the examples of commands that bring none of their
// own, by command path below the root.
var helpExamples = map[string]string{
	"sim": `  # The simulated engine on vLLM's port; benchmark it from another shell
  kvbench sim --listen 127.0.0.1:8000
  kvbench run --engine-url http://127.0.0.1:8000 --workload long-doc-qa --tokens-per-gb-kvcache 10000

  # A small GPU tier spilling into a CPU tier, with 1% of requests failing
  kvbench sim --gpu-kv-gb 2 --cpu-kv-gb 8 --fault-http-500 0.01

  # No modelled delays: measure the client itself
  kvbench sim --zero-latency --listen 127.0.0.1:0`,
	"version": `  # What this binary is (paste it into bug reports)
  kvbench version

  # A downloaded release, before installing it
  tar xzf kvbench_*_linux_amd64.tar.gz kvbench && ./kvbench version`,
	"results": `  # Browse every recorded run on a terminal
  kvbench results

  # A table of runs for a script, or the same as JSON
  kvbench results --no-interactive
  kvbench results --no-interactive --format json > runs.json`,
	"compare": `  # Two runs side by side, by id (folder name in the runs directory)
  kvbench compare 20260101-120000-long-doc-qa 20260101-130000-long-doc-qa

  # Plain text, with runs kept elsewhere
  kvbench compare --runs-dir ./runs --no-interactive RUN_A RUN_B`,
	"doctor": `  # What an engine reports before a run
  kvbench doctor --engine-url http://localhost:8000

  # With an API key and LMCache, as JSON for a script
  kvbench doctor --engine-url http://gpu-box:8000 --api-key-env OPENAI_API_KEY \
      --lmcache-url http://gpu-box:9000 --format json`,
	"completion": `  # Bash, for this shell
  source <(kvbench completion bash)

  # Zsh and fish, for every new shell
  kvbench completion zsh > "${fpath[1]}/_kvbench"
  kvbench completion fish > ~/.config/fish/completions/kvbench.fish`,
	"completion bash": `  # This shell only
  source <(kvbench completion bash)

  # Every new shell (Linux)
  kvbench completion bash > /etc/bash_completion.d/kvbench`,
	"completion zsh": `  # This shell only
  source <(kvbench completion zsh)

  # Every new shell
  kvbench completion zsh > "${fpath[1]}/_kvbench"`,
	"completion fish": `  # This shell only
  kvbench completion fish | source

  # Every new shell
  kvbench completion fish > ~/.config/fish/completions/kvbench.fish`,
	"completion powershell": `  # This shell only
  kvbench completion powershell | Out-String | Invoke-Expression

  # Every new shell: add the line above to your PowerShell profile
  kvbench completion powershell >> $PROFILE`,
	"help": `  # Every command
  kvbench help

  # One command's flags and examples
  kvbench help run`,
}

// decorateHelp adds the examples, run's grouped usage and the flag
// suggestions.
func decorateHelp(root *cobra.Command) {
	// cobra adds help and completion only when it executes; add them now
	// so they get examples too (each is added once).
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.SetFlagErrorFunc(suggestFlagError)
	walkCommands(root, func(c *cobra.Command) {
		if c.Example != "" {
			return
		}
		if ex, ok := helpExamples[strings.TrimPrefix(c.CommandPath(), root.Name()+" ")]; ok {
			c.Example = ex
		}
	})
	if run := findSubcommand(root, "run"); run != nil {
		run.SetUsageFunc(runUsage)
	}
}

// suggestFlagError adds the nearest valid flag to an unknown-flag error.
// The message still starts with "unknown flag" (a usage error, exit 2).
func suggestFlagError(c *cobra.Command, err error) error {
	return &UsageError{Err: suggestFlag(c, err)}
}

// suggestFlag adds the nearest flags to an unknown flag's error.
func suggestFlag(c *cobra.Command, err error) error {
	msg := err.Error()
	var typed string
	switch {
	case strings.HasPrefix(msg, "unknown flag: --"):
		typed = strings.TrimPrefix(msg, "unknown flag: --")
	case strings.HasPrefix(msg, "unknown shorthand flag: "):
		// -workload: a long flag with one dash.
		if m := singleDash.FindStringSubmatch(msg); m != nil && len(m[1]) > 1 {
			typed = m[1]
		}
	}
	if typed == "" {
		return err
	}
	if s := nearestFlags(c.Flags(), typed); len(s) > 0 {
		return fmt.Errorf("%w (did you mean --%s?)", err, strings.Join(s, " or --"))
	}
	for _, sub := range c.Commands() {
		if fl := sub.Flags().Lookup(typed); fl != nil && !fl.Hidden && sub.IsAvailableCommand() {
			return fmt.Errorf("%w (did you mean \"%s --%s\"?)", err, sub.CommandPath(), typed)
		}
	}
	return err
}

var singleDash = regexp.MustCompile(`in -([A-Za-z0-9][A-Za-z0-9-]*)`)

// nearestFlags are the visible flags of fs closest to typed: by edit
// distance, or because typed is the start of one or its name without the
// workload prefix. Ties are all returned (at most three).
func nearestFlags(fs *pflag.FlagSet, typed string) []string {
	best, limit := -1, max(2, len(typed)/3)
	var out []string
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Hidden {
			return
		}
		d := levenshtein(typed, fl.Name)
		if len(typed) >= 3 && (strings.HasPrefix(fl.Name, typed) || strings.HasSuffix(fl.Name, "-"+typed)) {
			d = min(d, 1)
		}
		switch {
		case d > limit:
		case best < 0 || d < best:
			best, out = d, []string{fl.Name}
		case d == best && len(out) < 3:
			out = append(out, fl.Name)
		}
	})
	return out
}

// levenshtein is the edit distance between a and b.
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// runFlagGroups are the sections of run's flags in order: Engine,
// General, Output, then one per workload named with its prefix.
func runFlagGroups() (order []string, title map[string]string) {
	order = []string{"engine", "general", "load", "output"}
	title = map[string]string{"engine": "Engine", "general": "General", "load": "Load shaping and SLOs (spec/load.md)", "output": "Output"}
	for _, w := range config.Workloads {
		order = append(order, w)
		title[w] = fmt.Sprintf("%s (--%s-*)", w, config.Prefix[w])
	}
	return order, title
}

// runUsage is run's usage: the flags grouped, aligned as one table.
func runUsage(c *cobra.Command) error {
	w := c.OutOrStderr()
	fmt.Fprintf(w, "Usage:\n  %s\n", c.UseLine())
	if len(c.Aliases) > 0 {
		fmt.Fprintf(w, "\nAliases:\n  %s\n", c.NameAndAliases())
	}
	if c.HasExample() {
		fmt.Fprintf(w, "\nExamples:\n%s\n", c.Example)
	}

	fmt.Fprintf(w, "\nWorkloads (--workload NAME):\n")
	width := 0
	for _, wl := range config.Workloads {
		width = max(width, len(wl))
	}
	for _, wl := range config.Workloads {
		fmt.Fprintf(w, "  %-*s  %s\n", width, wl, config.WorkloadInfo[wl])
	}
	fmt.Fprintf(w, "\n%s", config.RequiredText())

	// Sections keep the order of config.Fields (the important flag first),
	// then the flags run adds itself.
	group := map[string]string{}
	var names []string
	for _, f := range config.Fields {
		group[f.Flag] = f.Group
		names = append(names, f.Flag)
	}
	for _, n := range []string{"config", "export-config", "help"} {
		group[n] = "general"
		names = append(names, n)
	}
	c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
		if _, ok := group[fl.Name]; !ok {
			names = append(names, fl.Name)
		}
	})
	order, title := runFlagGroups()
	lines := flagLines(c.LocalFlags())
	sections := map[string][]string{}
	for _, n := range names {
		l, ok := lines[n]
		if !ok {
			continue // hidden, or not a flag of this command
		}
		g := group[n]
		if _, known := title[g]; !known {
			g = "other"
		}
		sections[g] = append(sections[g], l)
	}
	title["other"] = "Other"
	for _, g := range append(order, "other") {
		writeSection(w, title[g], sections[g])
	}
	if c.HasAvailableInheritedFlags() {
		fmt.Fprintf(w, "\nGlobal Flags:\n%s", c.InheritedFlags().FlagUsages())
	}
	fmt.Fprintf(w, "\nSettings can also come from the environment (KVBENCH_ENGINE_URL,\n"+
		"KVBENCH_LDQA_DOCUMENT_LENGTH, ...) and from config.yaml in $KVBENCH_CONFIG_DIR\n"+
		"(default ~/.config/kvbench) under the same names in lower case\n"+
		"(engine_url: builtin); flags on the command line win.\n")
	return nil
}

func writeSection(w io.Writer, title string, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n%s", title, strings.Join(lines, ""))
}

// flagLines splits pflag's usage table (aligned over all of fs) into the
// lines of each flag, keyed by flag name.
func flagLines(fs *pflag.FlagSet) map[string]string {
	out := map[string]string{}
	name := ""
	for _, l := range strings.SplitAfter(fs.FlagUsages(), "\n") {
		if l == "" {
			continue
		}
		if m := flagLineName.FindStringSubmatch(l); m != nil {
			name = m[1]
		}
		if name != "" {
			out[name] += l
		}
	}
	return out
}

var flagLineName = regexp.MustCompile(`^\s+(?:-[^-], )?--([A-Za-z0-9][A-Za-z0-9-]*)`)
