package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func writeTrace(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readEach reads a whole trace, keeping the valid lines and each invalid
// line's error.
func readEach(t *testing.T, path string, f Format, block int) ([]Request, []error) {
	t.Helper()
	r, err := Open(path, f, block)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var reqs []Request
	var errs []error
	for {
		q, err := r.Next()
		if err == io.EOF {
			return reqs, errs
		}
		var le *LineError
		if err != nil && !errors.As(err, &le) {
			t.Fatal(err)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		reqs = append(reqs, q)
	}
}

// ids writes n hash ids as a JSON array.
func ids(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, i)
	}
	b.WriteByte(']')
	return b.String()
}

// Every number is checked against its bound, with arithmetic that cannot
// overflow: a line beyond one is invalid, named, and reading goes on.
func TestNumbersBeyondTheirBoundsAreInvalidLines(t *testing.T) {
	line := func(ts, in, out, hashes string) string {
		return fmt.Sprintf(`{"timestamp": %s, "input_length": %s, "output_length": %s, "hash_ids": %s}`, ts, in, out, hashes)
	}
	cases := []struct{ line, want string }{
		{line("1", "9223372036854775807", "1", "[1]"), "input_length 9223372036854775807 is above the limit of 10000000 tokens in one prompt"},
		{line("1", "9223372036854775808", "1", "[1]"), "input_length 9223372036854775808 is above the limit of 10000000 tokens"},
		{line("1", "2000000000", "1", "[1]"), "input_length 2000000000 is above the limit of 10000000 tokens"},
		{line("1", "10000001", "1", ids(19532)), "input_length 10000001 is above the limit of 10000000 tokens"},
		{line("1", "50000000", "1", ids(97657)), "input_length 50000000 is above the limit of 10000000 tokens"},
		{line("1", "-9223372036854775809", "1", "[1]"), "input_length must be an integer >= 1 (got -9223372036854775809)"},
		{line("1", "-0", "1", "[1]"), "input_length must be an integer >= 1 (got -0)"},
		{line("1", "1e400", "1", "[1]"), "input_length must be an integer >= 1 (got 1e400)"},
		{line("1", strings.Repeat("9", 1000), "1", "[1]"), "input_length 999999999999999999999999... (1000 characters) is above the limit"},
		{line("1", `"20"`, "1", "[1]"), `not a valid mooncake line: field "input_length" has a JSON string where a number is expected`},
		{line("1", "null", "1", "[1]"), `missing field "input_length"`},
		{line("1", "5", "9223372036854775807", "[1]"), "output_length 9223372036854775807 is above the limit of 1073741824 tokens in one reply"},
		{line("1", "5", "1073741825", "[1]"), "output_length 1073741825 is above the limit of 1073741824 tokens"},
		{line("1e300", "5", "1", "[1]"), "timestamp 1e300 is above the limit of 10000000 s from the trace's start"},
		{line("1e400", "5", "1", "[1]"), "timestamp 1e400 is above the limit"},
		{line("10000000001", "5", "1", "[1]"), "timestamp 10000000001 is above the limit"}, // ms
		{line("1", "16", "1", "[1, 2]"), "hash_ids has more than the 1 ids that input_length 16 needs in 512-token blocks"},
		{line("1", "600", "1", "[1, 2, 3]"), "hash_ids has more than the 2 ids that input_length 600 needs"},
		{line("1", "5", "1", "[9223372036854775808]"), "hash_ids[0] must be an integer of at most 64 bits (got 9223372036854775808)"},
		{line("1", "5", "1", `{"a": 1}`), `not a valid mooncake line: field "hash_ids" has a JSON object where a list of integers is expected`},
	}
	good := func(ts int) string { return line(fmt.Sprint(ts), "5", "1", "[7]") }
	for _, c := range cases {
		path := writeTrace(t, good(0), c.line, good(2))
		reqs, errs := readEach(t, path, Mooncake, 512)
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "line 2: "+c.want) {
			t.Errorf("%.80s: errors %v, want one naming line 2: %q", c.line, errs, c.want)
			continue
		}
		if len(errs[0].Error()) > 300 {
			t.Errorf("%.80s: a %d-byte message", c.line, len(errs[0].Error()))
		}
		if len(reqs) != 2 || reqs[1].Line != 2 {
			t.Errorf("%.80s: reading did not go on after the bad line: %+v", c.line, reqs)
		}
	}

	// The bounds themselves are valid.
	path := writeTrace(t, line("0", "10000000", "1073741824", ids(19532)), line("10000000000", "1", "0", "[-9223372036854775807]"))
	reqs, errs := readEach(t, path, Mooncake, 512)
	if len(errs) != 0 || len(reqs) != 2 || reqs[0].InputLength != MaxInputLength || reqs[0].OutputLength != MaxOutputLength ||
		len(reqs[0].HashIDs) != 19532 || reqs[1].Timestamp != MaxTimestamp || reqs[1].HashIDs[0] != -9223372036854775807 {
		t.Errorf("at the bounds: %v, %d requests", errs, len(reqs))
	}
}

func TestBailianChatIDsAreBounded(t *testing.T) {
	line := func(chat, parent string) string {
		return fmt.Sprintf(`{"chat_id": %s, "parent_chat_id": %s, "timestamp": 0, "input_length": 5, "output_length": 1, "type": "text", "turn": 1, "hash_ids": [1]}`, chat, parent)
	}
	long := `"` + strings.Repeat("x", MaxChatIDBytes) + `"`
	path := writeTrace(t, line(long, "-1"), line("1", "[1]"), line("2", "null"), line(`"ok"`, `"-1"`))
	reqs, errs := readEach(t, path, Bailian, 16)
	if len(errs) != 3 || !strings.Contains(errs[0].Error(), "line 1: chat_id is 258 bytes long, over the limit of 256") ||
		!strings.Contains(errs[1].Error(), "line 2: parent_chat_id must be a number or a string (got a JSON array)") ||
		!strings.Contains(errs[2].Error(), `line 3: missing field "parent_chat_id"`) {
		t.Errorf("errors: %v", errs)
	}
	if len(reqs) != 1 || reqs[0].ChatID != `"ok"` || reqs[0].ParentChatID != `"-1"` {
		t.Errorf("valid: %+v", reqs)
	}
}

// A timestamp before its predecessor's is an invalid line: the replay
// never releases the trace's own disorder as lag. The next line is
// compared with the last valid one.
func TestTimestampsThatGoBackAreInvalid(t *testing.T) {
	m := func(ts string) string {
		return `{"timestamp": ` + ts + `, "input_length": 5, "output_length": 1, "hash_ids": [1]}`
	}
	reqs, errs := readEach(t, writeTrace(t, m("0"), m("5"), m("3"), m("5"), m("4.5"), m("7")), Mooncake, 512)
	if len(reqs) != 4 || len(errs) != 2 || reqs[2].Line != 3 || reqs[3].Line != 5 ||
		!strings.Contains(errs[0].Error(), "line 3: timestamp 3 goes back before the previous request's 5") ||
		!strings.Contains(errs[1].Error(), "line 5: timestamp 4.5 goes back") {
		t.Errorf("requests %+v, errors %v", reqs, errs)
	}
	b := func(ts string) string {
		return `{"chat_id": 1, "parent_chat_id": -1, "timestamp": ` + ts + `, "input_length": 5, "output_length": 1, "type": "text", "turn": 1, "hash_ids": [1]}`
	}
	_, errs = readEach(t, writeTrace(t, b("1.5"), b("1.25")), Bailian, 16)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "line 2: timestamp 1.25 goes back before the previous request's 1.5") {
		t.Errorf("bailian: %v", errs)
	}
}

// allocated is the bytes fn allocates.
func allocated(fn func()) uint64 {
	runtime.GC()
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A 60 MB line of 30M hash ids is refused as the first id past what
// input_length needs is reached, not after decoding them all: reading it
// allocates what the line's own bytes take (twice, while the buffer
// doubles), never per id. (It took 2 GB.)
func TestHugeHashIDListIsRefusedWithinTheLineLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	good := `{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": [7]}` + "\n"
	w.WriteString(good)
	for _, in := range []int{16, 10_000_000} { // block 16: 1 id needed, and 625,000
		fmt.Fprintf(w, `{"timestamp": 1, "input_length": %d, "output_length": 1, "hash_ids": [1`, in)
		for range 30_000_000 - 1 {
			w.WriteString(",1")
		}
		w.WriteString("]}\n")
	}
	w.WriteString(strings.Replace(good, `"timestamp": 0`, `"timestamp": 2`, 1))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, _ := os.Stat(path)
	if fi.Size() < 100<<20 {
		t.Fatalf("the trace is %d bytes", fi.Size())
	}

	var reqs []Request
	var errs []error
	n := allocated(func() { reqs, errs = readEach(t, path, Mooncake, 16) })
	if len(reqs) != 2 || len(errs) != 2 || !strings.Contains(errs[0].Error(), "line 2: hash_ids has more than the 1 ids") ||
		!strings.Contains(errs[1].Error(), "line 3: hash_ids has more than the 625000 ids that input_length 10000000 needs in 16-token blocks") {
		t.Fatalf("requests %d, errors %v", len(reqs), errs)
	}
	// The line buffer, doubled up to maxLine, and at most one line's
	// worth of needed ids (625,000 x 8 bytes).
	if limit := uint64(2*maxLine + 8<<20); n > limit {
		t.Errorf("reading allocated %d MB, over %d MB", n>>20, limit>>20)
	}
	t.Logf("reading two 60 MB lines allocated %d MB", n>>20)
}

// A short line that claims a huge prompt allocates by its own size.
func TestAShortLineAllocatesByItsSize(t *testing.T) {
	line := `{"timestamp": 0, "input_length": 10000000, "output_length": 1, "hash_ids": [1, 2]}`
	path := writeTrace(t, line)
	var errs []error
	n := allocated(func() { _, errs = readEach(t, path, Mooncake, 1) })
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "hash_ids has 2 ids, fewer than the 10000000") {
		t.Fatalf("errors %v", errs)
	}
	if n > 1<<20 { // the 256 KB read buffer and small change; not 80 MB of ids
		t.Errorf("reading a %d-byte line allocated %d KB", len(line), n>>10)
	}
}

// A line over the line limit is invalid and passed over without being
// kept; the next line is read whole, also when the long line's end came
// in the read that crossed the limit.
func TestOverLongLinesArePassedOver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	good := func(ts int) string {
		return fmt.Sprintf(`{"timestamp": %d, "input_length": 5, "output_length": 1, "hash_ids": [7]}`+"\n", ts)
	}
	w.WriteString(good(0))
	for _, n := range []int{maxLine + 10, maxLine + 3<<20} {
		w.WriteString(strings.Repeat(" ", n-2) + "{}\n")
	}
	w.WriteString(good(3))
	w.Flush()
	f.Close()
	var reqs []Request
	var errs []error
	alloc := allocated(func() { reqs, errs = readEach(t, path, Mooncake, 512) })
	if len(reqs) != 2 || reqs[1].Line != 3 || len(errs) != 2 ||
		!strings.Contains(errs[0].Error(), "line 2: line longer than 67108864 bytes") || !strings.Contains(errs[1].Error(), "line 3: line longer") {
		t.Errorf("requests %+v, errors %v", reqs, errs)
	}
	if limit := uint64(2*maxLine + 1<<20); alloc > limit {
		t.Errorf("reading allocated %d MB, over %d MB", alloc>>20, limit>>20)
	}
}

// A second pass passes over the lines the first found invalid, unparsed,
// and counts them as lines.
func TestPassOverKnownInvalidLines(t *testing.T) {
	m := func(ts int) string {
		return fmt.Sprintf(`{"timestamp": %d, "input_length": 5, "output_length": 1, "hash_ids": [%d]}`, ts, ts)
	}
	path := writeTrace(t, m(0), m(1), "", m(3), m(4))
	r, err := Open(path, Mooncake, 512)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.PassOver(func(line int) bool { return line == 1 || line == 4 })
	var got []string
	for {
		q, err := r.Next()
		if err == io.EOF {
			break
		}
		var le *LineError
		switch {
		case errors.As(err, &le):
			got = append(got, fmt.Sprintf("invalid %d", le.Line))
		case err != nil:
			t.Fatal(err)
		default:
			got = append(got, fmt.Sprintf("line %d hash %d", q.Line, q.HashIDs[0]))
		}
	}
	if want := "line 0 hash 0, invalid 1, line 3 hash 3, invalid 4"; strings.Join(got, ", ") != want {
		t.Errorf("got %s, want %s", strings.Join(got, ", "), want)
	}
}
