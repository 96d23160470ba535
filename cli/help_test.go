package cli

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/testbin"
	"github.com/kvbench/kvbench/sim"
)

const readmeFirstCommand = "kvbench run --engine-url builtin --workload long-doc-qa --kv-cache-volume 1 --ldqa-document-length 2000"

// helpSections splits a help text into its "Title:" sections.
func helpSections(text string) (order []string, body map[string]string) {
	body = map[string]string{}
	cur := ""
	for _, l := range strings.Split(text, "\n") {
		if l != "" && !strings.HasPrefix(l, " ") && strings.HasSuffix(l, ":") {
			cur = strings.TrimSuffix(l, ":")
			order = append(order, cur)
			continue
		}
		if cur != "" {
			body[cur] += l + "\n"
		}
	}
	return order, body
}

func TestRunHelpThroughBinary(t *testing.T) {
	r := testbin.Run(t, 30*time.Second, nil, "run", "--help")
	if r.Code != 0 {
		t.Fatalf("run --help: exit %d\n%s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "  "+readmeFirstCommand+"\n") {
		t.Errorf("run --help lacks the README's first command:\n%s", r.Stdout)
	}
	order, body := helpSections(r.Stdout)
	want := []string{"Engine", "General", "Load shaping and SLOs (spec/load.md)", "Output"}
	for _, w := range config.Workloads {
		want = append(want, fmt.Sprintf("%s (--%s-*)", w, config.Prefix[w]))
	}
	var got []string
	for _, s := range order {
		for _, w := range want {
			if s == w {
				got = append(got, s)
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("flag sections %q, want %q (all sections: %q)", got, want, order)
	}
	title := map[string]string{"engine": "Engine", "general": "General", "load": "Load shaping and SLOs (spec/load.md)", "output": "Output"}
	for i, w := range config.Workloads {
		title[w] = want[4+i]
	}
	for _, f := range config.Fields {
		flag := "--" + f.Flag + " "
		in := ""
		for _, s := range order {
			if strings.Contains(body[s], flag) {
				in = s
			}
		}
		switch {
		case f.Hidden && in != "":
			t.Errorf("hidden --%s shown in %q", f.Flag, in)
		case !f.Hidden && in != title[f.Group]:
			t.Errorf("--%s in section %q, want %q", f.Flag, in, title[f.Group])
		}
	}
	for _, w := range config.Workloads {
		if !strings.Contains(body["Workloads (--workload NAME)"], w+" ") {
			t.Errorf("workload %s not described", w)
		}
	}
	// The alias shows the same help.
	if e := testbin.Run(t, 30*time.Second, nil, "engine", "--help"); e.Stdout != r.Stdout {
		t.Errorf("engine --help differs from run --help")
	}
}

func TestRootHelpThroughBinary(t *testing.T) {
	r := testbin.Run(t, 30*time.Second, nil, "--help")
	if r.Code != 0 || !strings.Contains(r.Stdout, readmeFirstCommand) || !strings.Contains(r.Stdout, "completion") {
		t.Errorf("kvbench --help: exit %d\n%s", r.Code, r.Stdout)
	}
}

// helpRoot is main's command tree.
func helpRoot() *cobra.Command {
	root := &cobra.Command{Use: "kvbench", Short: "root", Example: RunExample, Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return nil }}
	root.AddCommand(NewRunCommand(), sim.NewCommand(), NewVersionCommand())
	AddCommands(root)
	return root
}

// exampleCommands counts the command lines of an Example (comments and
// continuation lines aside).
func exampleCommands(ex string) int {
	n := 0
	prev := ""
	for _, l := range strings.Split(ex, "\n") {
		l = strings.TrimSpace(l)
		if strings.Contains(l, "kvbench") && !strings.HasPrefix(l, "#") && !strings.HasSuffix(prev, `\`) {
			n++
		}
		prev = l
	}
	return n
}

func TestEveryCommandTeaches(t *testing.T) {
	root := helpRoot()
	seen := map[string]bool{}
	walkCommands(root, func(c *cobra.Command) {
		if c.Hidden || c.Name() == cobra.ShellCompRequestCmd || c.Name() == cobra.ShellCompNoDescRequestCmd {
			return
		}
		seen[c.Name()] = true
		path := c.CommandPath()
		if c.Short == "" || strings.Contains(c.Short, "\n") {
			t.Errorf("%s: Short %q is not a one-line purpose", path, c.Short)
		}
		if n := exampleCommands(c.Example); n < 2 {
			t.Errorf("%s: %d example commands, want 2 or 3:\n%s", path, n, c.Example)
		}
		help := c.UsageString()
		if !strings.Contains(help, "Examples:\n") {
			t.Errorf("%s: usage has no examples", path)
		}
	})
	for _, name := range []string{"run", "sim", "version", "completion", "bash", "zsh", "fish", "help"} {
		if !seen[name] {
			t.Errorf("command %s not found", name)
		}
	}
	if !strings.Contains(findSubcommand(root, "run").Example, readmeFirstCommand) {
		t.Error("run's examples lack the README's first command")
	}
}

func TestLevenshtein(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"kitten", "sitting", 3},
		{"ldqa-doc-length", "ldqa-document-length", 5}, {"seed", "seed", 0}, {"sede", "seed", 2},
	} {
		if got := levenshtein(c.a, c.b); got != c.d {
			t.Errorf("levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

func TestNearestFlags(t *testing.T) {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	config.RegisterFlags(fs)
	for typed, want := range map[string][]string{
		"ldqa-doc-length":   {"ldqa-document-length"},
		"workloads":         {"workload"},
		"engine-ulr":        {"engine-url"},
		"document-length":   {"ldqa-document-length"},
		"ldqa-doc":          {"ldqa-document-length"},
		"max-output-length": {"ktp-max-output-length", "ldp-max-output-length", "ldqa-max-output-length"},
		"builtin-sped":      nil, // hidden
		"zzzzzzzz":          nil,
		"x":                 nil,
	} {
		if got := nearestFlags(fs, typed); !reflect.DeepEqual(got, want) {
			t.Errorf("nearestFlags(%q) = %q, want %q", typed, got, want)
		}
	}
}

func TestSuggestFlagErrorKeepsUsageError(t *testing.T) {
	root := helpRoot()
	run := findSubcommand(root, "run")
	for _, c := range []struct {
		cmd  *cobra.Command
		err  error
		want string
	}{
		{run, errors.New("unknown flag: --ldqa-doc-length"), "unknown flag: --ldqa-doc-length (did you mean --ldqa-document-length?)"},
		{run, errors.New("unknown shorthand flag: 'w' in -workload"), "unknown shorthand flag: 'w' in -workload (did you mean --workload?)"},
		{root, errors.New("unknown flag: --workload"), `unknown flag: --workload (did you mean "kvbench run --workload"?)`},
		{run, errors.New("unknown flag: --qqqqqqqq"), "unknown flag: --qqqqqqqq"},
		{run, errors.New(`invalid argument "x" for "--seed" flag`), `invalid argument "x" for "--seed" flag`},
	} {
		got := suggestFlagError(c.cmd, c.err)
		if got.Error() != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%q does not wrap the original error", got)
		}
		if code, _ := Code(got); code != 2 {
			t.Errorf("%q: exit code %d, want 2", got, code)
		}
	}
}

func TestUnknownFlagThroughBinary(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--ldqa-doc-length", "5000"}, "kvbench: unknown flag: --ldqa-doc-length (did you mean --ldqa-document-length?)\n"},
		{[]string{"run", "--engine-url", "builtin", "--wrkload=long-doc-qa"}, "kvbench: unknown flag: --wrkload (did you mean --workload?)\n"},
		{[]string{"sim", "--gpu-kv", "2"}, "kvbench: unknown flag: --gpu-kv (did you mean --gpu-kv-gb?)\n"},
		{[]string{"--workload", "long-doc-qa"}, "kvbench: unknown flag: --workload (did you mean \"kvbench run --workload\"?)\n"},
	} {
		r := testbin.Run(t, 30*time.Second, nil, c.args...)
		if r.Code != 2 || r.Stderr != c.want || r.Stdout != "" {
			t.Errorf("kvbench %q: exit %d, stderr %q, stdout %q; want exit 2 and stderr %q",
				c.args, r.Code, r.Stderr, r.Stdout, c.want)
		}
	}
}

// cobra's own errors carry exit code 2 on the error (UsageErrors), not by
// their words: an unknown command, a wrong number of arguments, a value
// a flag refuses.
func TestCobraErrorsCarryUsage(t *testing.T) {
	for _, args := range [][]string{
		{"nosuchcommand"},
		{"compare", "only-one"},
		{"run", "--seed", "x"},
		{"run", "--idle-timeout"},
	} {
		r := testbin.Run(t, 30*time.Second, nil, args...)
		if r.Code != 2 || !strings.HasPrefix(r.Stderr, "kvbench: ") || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("kvbench %q: exit %d, stderr %q; want exit 2 and one line", args, r.Code, r.Stderr)
		}
	}
}
