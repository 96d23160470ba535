package workload

import (
	"slices"
	"strings"
	"testing"
)

func TestLongDocQADocuments(t *testing.T) {
	cases := []struct {
		vol      float64
		tpg, len int
		want     int
	}{
		{100, 50000, 10000, 500},
		{1, 10000, 3000, 3},
		{0.0001, 10, 10000, 1}, // floor of 1
		{1, 10000, 2000, 5},
		{1, 9999, 2000, 4}, // truncation, not rounding
	}
	for _, c := range cases {
		if got := LongDocQADocuments(c.vol, c.tpg, c.len); got != c.want {
			t.Errorf("docs(%v, %d, %d) = %d, want %d", c.vol, c.tpg, c.len, got, c.want)
		}
	}
}

func TestLongDocQADocumentText(t *testing.T) {
	doc := LongDocQADocument(3, 100)
	if !strings.HasPrefix(doc, "Document 3: hi hi") {
		t.Fatalf("prefix: %q", doc[:20])
	}
	if n := strings.Count(doc, "hi"); n != 90 {
		t.Fatalf("length 100 gives %d words hi, want 90", n)
	}
	if n := strings.Count(LongDocQADocument(0, 5), "hi"); n != 1 {
		t.Fatalf("length 5 gives %d words, want the floor of 1", n)
	}
	msg := LongDocQAQuestion("D", 5)
	if msg != "D\n\nQuestion 5: Summarize the key points." {
		t.Fatalf("question message %q", msg)
	}
}

func TestLongDocQAScheduleTile(t *testing.T) {
	got := LongDocQASchedule(2, 2, "tile", 42)
	want := []ldqaItem{{0, 0}, {1, 0}, {0, 1}, {1, 1}}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("tile order = %v, want %v", got, want)
		}
	}
}

func TestLongDocQAScheduleRandomIsSeeded(t *testing.T) {
	a := LongDocQASchedule(10, 3, "random", 7)
	b := LongDocQASchedule(10, 3, "random", 7)
	c := LongDocQASchedule(10, 3, "random", 8)
	same, differs := true, false
	seen := map[ldqaItem]bool{}
	for i := range a {
		same = same && a[i] == b[i]
		differs = differs || a[i] != c[i]
		seen[a[i]] = true
	}
	if !same || !differs {
		t.Fatalf("random order must depend on the seed only (same=%v differs=%v)", same, differs)
	}
	if len(seen) != 30 {
		t.Fatalf("shuffle lost items: %d distinct", len(seen))
	}
	// LMCache's order: random.Random(42).shuffle of the query-major list.
	got := LongDocQASchedule(3, 2, "random", 42)
	want := []ldqaItem{{0, 1}, {1, 0}, {2, 0}, {1, 1}, {0, 0}, {2, 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("3 documents x 2 questions, seed 42: %v, want %v", got, want)
	}
}

func TestRandomPrefillPrompt(t *testing.T) {
	p := RandomPrefillPrompt(7, 100)
	if !strings.HasPrefix(p, "Request 7: hi") || strings.Count(p, "hi") != 90 {
		t.Fatalf("prompt %q...", p[:20])
	}
}
