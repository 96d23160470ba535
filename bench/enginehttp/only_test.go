package enginehttp

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// elsewhere are the files that may build HTTP requests or set the
// Authorization header themselves, and why.
var elsewhere = map[string]string{
	"bench/sender/client.go":                  "the measured stream: its own allocation-light requests; the header value comes from Auth",
	"bench/workload/ragdata.go":               "a data set download, not a request to the engine",
	"internal/hostileengine/hostileengine.go": "a test engine, reading the header it was sent",
}

var ownRequest = regexp.MustCompile(`http\.NewRequest|SetBasicAuth|"Authorization"|"Bearer `)

// Every other request to an engine is built here: a file that builds
// one by hand (or sets its credentials) fails this test.
func TestRequestsAreBuiltHere(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal("not at the module root: ", err)
	}
	read := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" || rel == "bench/enginehttp" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		read++
		if loc := ownRequest.FindIndex(b); loc != nil && elsewhere[rel] == "" {
			line := 1 + strings.Count(string(b[:loc[0]]), "\n")
			t.Errorf("%s:%d builds an engine request by hand (%q): use enginehttp", rel, line, b[loc[0]:loc[1]])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if read < 100 {
		t.Fatalf("read %d source files: the walk missed the module", read)
	}
}
