package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/testbin"
	"github.com/kvbench/kvbench/internal/textclean/cleantest"
)

// completionRoot is a command tree like main's (run, version and every
// registered command, decorated).
func completionRoot() *cobra.Command {
	root := &cobra.Command{Use: "kvbench", Args: cobra.NoArgs, SilenceUsage: true, SilenceErrors: true,
		RunE: func(*cobra.Command, []string) error { return nil }}
	root.AddCommand(NewRunCommand(), NewVersionCommand())
	AddCommands(root)
	return root
}

// completeIn runs cobra's hidden __complete command on root and returns
// the candidates (without descriptions) and the directive line.
func completeIn(t *testing.T, root *cobra.Command, args ...string) (names []string, out string) {
	t.Helper()
	var buf bytes.Buffer
	root.SetOut(&buf)
	root.SetErr(&bytes.Buffer{})
	root.SetArgs(append([]string{cobra.ShellCompRequestCmd}, args...))
	if err := root.Execute(); err != nil {
		t.Fatalf("__complete %v: %v", args, err)
	}
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l == "" || strings.HasPrefix(l, ":") {
			continue
		}
		name, _, _ := strings.Cut(l, "\t")
		names = append(names, name)
	}
	return names, buf.String()
}

func TestCompletionScriptsThroughBinary(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		r := testbin.Run(t, 30*time.Second, nil, "completion", shell)
		if r.Code != 0 {
			t.Fatalf("completion %s: exit %d\n%s", shell, r.Code, r.Stderr)
		}
		if !strings.Contains(r.Stdout, "kvbench") || !strings.Contains(r.Stdout, "__complete") {
			t.Errorf("completion %s: not a dynamic completion script for kvbench:\n%.400s", shell, r.Stdout)
		}
	}
}

func TestCompleteWorkloadThroughBinary(t *testing.T) {
	for _, cmd := range []string{"run", "engine"} {
		r := testbin.Run(t, 30*time.Second, nil, "__complete", cmd, "--workload", "")
		if r.Code != 0 {
			t.Fatalf("__complete %s --workload: exit %d\n%s", cmd, r.Code, r.Stderr)
		}
		for _, w := range config.Workloads {
			if want := w + "\t" + config.WorkloadInfo[w] + "\n"; !strings.Contains(r.Stdout, want) {
				t.Errorf("__complete %s --workload lacks %q:\n%s", cmd, want, r.Stdout)
			}
		}
		if !strings.HasSuffix(r.Stdout, ":36\n") { // no files, keep order
			t.Errorf("__complete %s --workload: directive line:\n%s", cmd, r.Stdout)
		}
	}
}

// TestBashCompletionEndToEnd sources `kvbench completion bash` in bash
// and presses Tab after --workload, as a user would.
func TestBashCompletionEndToEnd(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := testbin.Path(t)
	script := `
source <("$BIN" completion bash) || exit 3
if ! declare -F _init_completion >/dev/null && ! declare -F _get_comp_words_by_ref >/dev/null; then
  # What the bash-completion package provides, reduced to this test.
  _get_comp_words_by_ref() {
    cur="${COMP_WORDS[COMP_CWORD]}"; prev="${COMP_WORDS[COMP_CWORD-1]}"
    words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
  }
fi
compopt() { :; } # only valid inside a real completion
COMP_WORDS=("$BIN" run --workload "$PREFIX")
COMP_CWORD=3
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
COMP_TYPE=9
__start_kvbench
printf '%s\n' "${COMPREPLY[@]}"
`
	run := func(prefix string) []string {
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", script)
		cmd.Env = append(os.Environ(), "BIN="+bin, "PREFIX="+prefix)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("bash: %v\n%s%s", err, out, stderr.String())
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				got = append(got, l)
			}
		}
		return got
	}
	got := run("")
	for _, w := range config.Workloads {
		found := false
		for _, g := range got {
			found = found || strings.HasPrefix(g, w)
		}
		if !found {
			t.Errorf("Tab after --workload: %q missing from %q", w, got)
		}
	}
	if got := run("multi"); !reflect.DeepEqual(got, []string{"multi-round-chat"}) {
		t.Errorf("Tab after --workload multi: %q, want [multi-round-chat]", got)
	}
}

func TestCompleteChoicesOfEveryField(t *testing.T) {
	n := 0
	for _, f := range config.Fields {
		if len(f.Choices) == 0 || f.Hidden {
			continue
		}
		n++
		got, out := completeIn(t, completionRoot(), "run", "--"+f.Flag, "")
		if !reflect.DeepEqual(got, f.Choices) {
			t.Errorf("--%s completes %q, want %q", f.Flag, got, f.Choices)
		}
		if !strings.Contains(out, ":36\n") {
			t.Errorf("--%s: directive: %s", f.Flag, out)
		}
	}
	if n < 4 { // endpoint, format, ldqa-shuffle-policy, mrc-arrival
		t.Fatalf("only %d fields with choices", n)
	}
}

func TestCompleteFormatOnEveryCommand(t *testing.T) {
	root := completionRoot()
	var paths [][]string
	walkCommands(root, func(c *cobra.Command) {
		if c != root && c.Flags().Lookup("format") != nil {
			paths = append(paths, strings.Fields(strings.TrimPrefix(c.CommandPath(), "kvbench ")))
		}
	})
	if len(paths) == 0 {
		t.Fatal("no command has --format")
	}
	// report's --format chooses a file format, not a summary format.
	own := map[string][]string{"report": {"html", "svg"}}
	for _, p := range paths {
		got, _ := completeIn(t, completionRoot(), append(p, "--format", "")...)
		want, ok := own[strings.Join(p, " ")]
		if !ok {
			want = []string{"text", "json"}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v --format completes %q, want %q", p, got, want)
		}
	}
}

func TestCompleteEngineURLAndFiles(t *testing.T) {
	got, _ := completeIn(t, completionRoot(), "run", "--engine-url", "")
	if len(got) == 0 || got[0] != "builtin" {
		t.Errorf("--engine-url completes %q, want builtin first", got)
	}
	_, out := completeIn(t, completionRoot(), "run", "--config", "")
	if !strings.Contains(out, "json\n:8\n") { // FilterFileExt json
		t.Errorf("--config: %q", out)
	}
	_, out = completeIn(t, completionRoot(), "run", "--output-dir", "")
	if !strings.HasSuffix(out, ":16\n") { // FilterDirs
		t.Errorf("--output-dir: %q", out)
	}
	_, out = completeIn(t, completionRoot(), "run", "--ldqa-document-length", "")
	if !strings.HasSuffix(out, ":4\n") { // no file names for a number
		t.Errorf("--ldqa-document-length: %q", out)
	}
}

func TestCompleteAPIKeyEnvShowsNamesOnly(t *testing.T) {
	t.Setenv("KVBENCH_TEST_API_KEY", "sk-secret-value")
	_, out := completeIn(t, completionRoot(), "run", "--api-key-env", "")
	if !strings.Contains(out, "KVBENCH_TEST_API_KEY\n") {
		t.Errorf("--api-key-env lacks the variable:\n%s", out)
	}
	if strings.Contains(out, "sk-secret-value") {
		t.Errorf("--api-key-env completion shows a value:\n%s", out)
	}
}

// makeRuns creates run folders (and things that are not runs) in dir.
func makeRuns(t *testing.T, dir string, ids ...string) {
	t.Helper()
	for i, id := range ids {
		if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
			t.Fatal(err)
		}
		file := []string{record.SummaryFile, record.RequestsFile, record.ConfigFile}[i%3]
		if err := os.WriteFile(filepath.Join(dir, id, file), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCompletionRunIDs(t *testing.T) {
	dir := t.TempDir()
	makeRuns(t, dir, "20260101-120000-long-doc-qa", "20260301-090000-random-prefill", "20260201-080000-cache-probe-a")
	os.MkdirAll(filepath.Join(dir, "not-a-run"), 0o755)
	os.MkdirAll(filepath.Join(dir, ".hidden"), 0o755)
	os.WriteFile(filepath.Join(dir, ".hidden", record.SummaryFile), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "20260401-000000-file"), nil, 0o644)
	want := []string{"20260301-090000-random-prefill", "20260201-080000-cache-probe-a", "20260101-120000-long-doc-qa"}
	if got := completionRunIDs(dir); !reflect.DeepEqual(got, want) {
		t.Errorf("completionRunIDs = %q, want %q", got, want)
	}
	if got := completionRunIDs(filepath.Join(dir, "absent")); got != nil {
		t.Errorf("absent dir: %q", got)
	}
}

// fakeRunsRoot has compare and results commands as the spec describes
// them, without completion of their own.
func fakeRunsRoot(preset cobra.CompletionFunc) *cobra.Command {
	root := &cobra.Command{Use: "kvbench", Args: cobra.NoArgs, SilenceUsage: true, SilenceErrors: true,
		RunE: func(*cobra.Command, []string) error { return nil }}
	noop := func(*cobra.Command, []string) error { return nil }
	compare := &cobra.Command{Use: "compare RUN_A RUN_B", Args: cobra.ExactArgs(2), RunE: noop, ValidArgsFunction: preset}
	compare.Flags().String("runs-dir", "", "runs directory")
	results := &cobra.Command{Use: "results [RUN_ID...]", RunE: noop}
	results.Flags().String("runs-dir", "", "runs directory")
	results.Flags().String("format", "text", "text or json")
	root.AddCommand(compare, results)
	decorateCompletion(root)
	decorateHelp(root)
	return root
}

func TestCompleteCompareRunIDs(t *testing.T) {
	dir := t.TempDir()
	a, b, c := "20260101-120000-long-doc-qa", "20260102-120000-long-doc-qa", "20260103-120000-random-prefill"
	makeRuns(t, dir, a, b, c)

	got, out := completeIn(t, fakeRunsRoot(nil), "compare", "--runs-dir", dir, "")
	if want := []string{c, b, a}; !reflect.DeepEqual(got, want) {
		t.Errorf("compare <Tab> = %q, want %q", got, want)
	}
	if !strings.HasSuffix(out, ":36\n") {
		t.Errorf("directive: %q", out)
	}
	if got, _ := completeIn(t, fakeRunsRoot(nil), "compare", "--runs-dir", dir, c, ""); !reflect.DeepEqual(got, []string{b, a}) {
		t.Errorf("second id: %q, want the others", got)
	}
	if got, _ := completeIn(t, fakeRunsRoot(nil), "compare", "--runs-dir", dir, "20260102"); !reflect.DeepEqual(got, []string{b}) {
		t.Errorf("prefix: %q", got)
	}
	if got, _ := completeIn(t, fakeRunsRoot(nil), "compare", "--runs-dir", dir, a, b, ""); len(got) != 0 {
		t.Errorf("third id offered: %q", got)
	}
	if _, out := completeIn(t, fakeRunsRoot(nil), "compare", "--runs-dir", dir, "./"); !strings.HasSuffix(out, ":16\n") {
		t.Errorf("a path completes as a directory: %q", out)
	}
	// Without --runs-dir: the default runs directory.
	t.Setenv("KVBENCH_RUNS_DIR", dir)
	if got, _ := completeIn(t, fakeRunsRoot(nil), "compare", ""); len(got) != 3 {
		t.Errorf("KVBENCH_RUNS_DIR: %q", got)
	}
	if got, _ := completeIn(t, fakeRunsRoot(nil), "results", a, ""); !reflect.DeepEqual(got, []string{c, b}) {
		t.Errorf("results: %q", got)
	}
	if got, _ := completeIn(t, fakeRunsRoot(nil), "results", "--format", ""); !reflect.DeepEqual(got, []string{"text", "json"}) {
		t.Errorf("results --format: %q", got)
	}
	// A command's own completion is kept.
	own := func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return []cobra.Completion{"mine"}, cobra.ShellCompDirectiveNoFileComp
	}
	if got, _ := completeIn(t, fakeRunsRoot(own), "compare", ""); !reflect.DeepEqual(got, []string{"mine"}) {
		t.Errorf("own completion replaced: %q", got)
	}
}

func TestDecoratorsWithoutRunsCommands(t *testing.T) {
	root := &cobra.Command{Use: "kvbench", Args: cobra.NoArgs}
	root.AddCommand(&cobra.Command{Use: "other", Run: func(*cobra.Command, []string) {}})
	decorateCompletion(root)
	decorateHelp(root)
	if findSubcommand(root, "compare") != nil || findSubcommand(root, "completion") == nil {
		t.Fatal("compare found, or completion missing")
	}
}

// A folder name holding terminal controls is offered cleaned, as the
// explorer shows it, and names the run again.
func TestCompletionRunIDsCleaned(t *testing.T) {
	dir := t.TempDir()
	id := "20260101-120000-long-doc-qa-" + cleantest.Folder
	if err := os.Mkdir(filepath.Join(dir, id), 0o755); err != nil {
		// A file system that takes only UTF-8 names (macOS).
		id = strings.ToValidUTF8(id, "")
	}
	makeRuns(t, dir, id)
	got := completionRunIDs(dir)
	if len(got) != 1 {
		t.Fatalf("completionRunIDs = %q, want the one run", got)
	}
	cleantest.Check(t, "completion", got[0])
	if p, err := runs.Resolve(dir, got[0]); err != nil || p != filepath.Join(dir, id) {
		t.Errorf("Resolve(%q) = %q, %v", got[0], p, err)
	}
}
