package app

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// No screen imports another screen (docs/tui.md): a screen asks for
// another by intent, and hears of others' results through
// screens/common's messages. The shared building blocks are the
// exception: common (the context, intents, messages), dialog (the
// dialogs a screen pushes over itself) and curve (the one sweep drawing).
func TestNoScreenImportsAnother(t *testing.T) {
	const screens = "github.com/kvbench/kvbench/screens/"
	shared := map[string]bool{"common": true, "dialog": true, "curve": true}
	dirs, err := filepath.Glob("../screens/*")
	if err != nil || len(dirs) < 5 {
		t.Fatalf("screen packages: %v %v", dirs, err)
	}
	checked := 0
	for _, dir := range dirs {
		pkg := filepath.Base(dir)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || shared[pkg] {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, imp := range parsed.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				other, ok := strings.CutPrefix(path, screens)
				if ok && !shared[other] && other != pkg {
					t.Errorf("%s imports screens/%s", f, other)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no screen source read")
	}
}
