package cli

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/textclean"
)

// Shell completion: cobra's `completion bash|zsh|fish|powershell` command
// writes scripts that call the hidden `__complete` command, so every value
// below is computed when the user presses Tab.

func init() { decorators = append(decorators, decorateCompletion) }

// completionChoiceInfo describes the fixed choices of flags, shown beside
// them by shells that show descriptions (zsh, fish).
var completionChoiceInfo = map[string]map[string]string{
	"format": {
		"text": "the 56-column text summary",
		"json": "the summary as JSON",
	},
	"endpoint": {
		"chat":        "/v1/chat/completions with messages",
		"completions": "/v1/completions with a prompt",
	},
	"ldqa-shuffle-policy": {
		"random": "the question schedule shuffled with --seed",
		"tile":   "query-major: every document once, then again",
	},
	"mrc-arrival": {
		"fixed":   "evenly spaced at --mrc-qps",
		"poisson": "seeded Poisson arrivals at --mrc-qps",
	},
}

// completionEngineURLs are the usual places an engine listens on this
// machine.
var completionEngineURLs = []cobra.Completion{
	cobra.CompletionWithDesc("builtin", "the simulated engine, in-process"),
	cobra.CompletionWithDesc("http://localhost:8000", "vLLM's default port"),
	cobra.CompletionWithDesc("http://localhost:30000", "SGLang's default port"),
	cobra.CompletionWithDesc("http://localhost:8080", "llama.cpp server's default port"),
}

// completionJSONFlags take a JSON file.
var completionJSONFlags = map[string]bool{
	"config": true, "export-config": true, "cp-prompt-file": true, "ce-prompts": true,
}

// completionDirFlags take a directory.
var completionDirFlags = map[string]bool{"runs-dir": true, "output-dir": true}

// decorateCompletion makes sure the completion command exists and gives
// every known flag of every command its value completion, without
// replacing one a command registered itself.
func decorateCompletion(root *cobra.Command) {
	root.CompletionOptions.DisableDefaultCmd = false
	root.InitDefaultCompletionCmd()
	fields := map[string]config.Field{}
	for _, f := range config.Fields {
		fields[f.Flag] = f
	}
	walkCommands(root, func(c *cobra.Command) {
		visit := func(fl *pflag.Flag) {
			if _, ok := c.GetFlagCompletionFunc(fl.Name); ok {
				return
			}
			if fn := flagCompletion(c, fl, fields); fn != nil {
				_ = c.RegisterFlagCompletionFunc(fl.Name, fn)
			}
		}
		c.Flags().VisitAll(visit)
		c.PersistentFlags().VisitAll(visit)
	})
	for name, limit := range map[string]int{"compare": 2, "results": 0} {
		if c := findSubcommand(root, name); c != nil && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = runIDCompletion(limit)
		}
	}
}

// flagCompletion is the completion of one flag; nil leaves cobra's
// default (file names).
func flagCompletion(c *cobra.Command, fl *pflag.Flag, fields map[string]config.Field) cobra.CompletionFunc {
	name := fl.Name
	f, isField := fields[name]
	switch {
	case name == "workload":
		return fixedCompletion(workloadCompletions())
	case isField && len(f.Choices) > 0:
		return fixedCompletion(choiceCompletions(name, f.Choices))
	case name == "format":
		return fixedCompletion(choiceCompletions(name, []string{"text", "json"}))
	case name == "engine-url":
		if c.Name() == "run" {
			return fixedCompletion(completionEngineURLs)
		}
		return fixedCompletion(completionEngineURLs[1:])
	case name == "api-key-env":
		return envNameCompletion
	case completionJSONFlags[name]:
		return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return []cobra.Completion{"json"}, cobra.ShellCompDirectiveFilterFileExt
		}
	case completionDirFlags[name]:
		return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs
		}
	case isField:
		// Numbers, durations, URLs, names: file names would only mislead.
		return cobra.NoFileCompletions
	}
	return nil
}

func fixedCompletion(list []cobra.Completion) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return list, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

func workloadCompletions() []cobra.Completion {
	out := make([]cobra.Completion, 0, len(config.Workloads))
	for _, w := range config.Workloads {
		out = append(out, cobra.CompletionWithDesc(w, config.WorkloadInfo[w]))
	}
	return out
}

func choiceCompletions(flag string, choices []string) []cobra.Completion {
	out := make([]cobra.Completion, 0, len(choices))
	for _, ch := range choices {
		if d := completionChoiceInfo[flag][ch]; d != "" {
			out = append(out, cobra.CompletionWithDesc(ch, d))
		} else {
			out = append(out, ch)
		}
	}
	return out
}

// envNameCompletion offers the names (never the values) of environment
// variables that look like they hold a key.
func envNameCompletion(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		up := strings.ToUpper(name)
		if !strings.HasPrefix(name, toComplete) {
			continue
		}
		if toComplete != "" || strings.Contains(up, "KEY") || strings.Contains(up, "TOKEN") {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// runIDCompletion completes run ids (folder names of the runs directory,
// newest first), at most limit of them (0: any number). An argument that
// looks like a path completes as a directory.
func runIDCompletion(limit int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if limit > 0 && len(args) >= limit {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if strings.ContainsAny(toComplete, `/\`) || strings.HasPrefix(toComplete, ".") || strings.HasPrefix(toComplete, "~") {
			return nil, cobra.ShellCompDirectiveFilterDirs
		}
		taken := map[string]bool{}
		for _, a := range args {
			taken[a] = true
		}
		var out []cobra.Completion
		for _, id := range completionRunIDs(runsDirOf(cmd)) {
			if strings.HasPrefix(id, toComplete) && !taken[id] {
				out = append(out, id)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// runsDirOf is the --runs-dir the user already typed, else the default
// runs directory. A leading ~ is expanded: during completion the shell
// has not done it.
func runsDirOf(cmd *cobra.Command) string {
	if fl := cmd.Flags().Lookup("runs-dir"); fl != nil && fl.Value.String() != "" {
		d := fl.Value.String()
		if d == "~" || strings.HasPrefix(d, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				d = filepath.Join(home, strings.TrimPrefix(d, "~"))
			}
		}
		return d
	}
	return record.RunsDir()
}

// completionRunIDs lists the run folders of dir (those holding any file
// of a run record) by id (runs.FolderID), newest first; a missing or
// unreadable dir has none.
func completionRunIDs(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var ids []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			continue
		}
		for _, f := range []string{record.SummaryFile, record.RequestsFile, record.ConfigFile} {
			if _, err := os.Stat(filepath.Join(p, f)); err == nil {
				// The shell shows the candidates: cleaned, as the
				// explorer shows ids (Resolve takes them back).
				ids = append(ids, textclean.Line(e.Name()))
				break
			}
		}
	}
	// Folder names start with the start time, so reverse order is newest
	// first.
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	return ids
}

// walkCommands calls fn on c and every command below it.
func walkCommands(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walkCommands(sub, fn)
	}
}

// findSubcommand finds a direct subcommand of root by name or alias; nil
// when there is none.
func findSubcommand(root *cobra.Command, name string) *cobra.Command {
	c, _, err := root.Find([]string{name})
	if err != nil || c == nil || c == root {
		return nil
	}
	if c.Name() != name && !c.HasAlias(name) {
		return nil
	}
	return c
}
