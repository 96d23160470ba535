package doctor

import (
	"fmt"
	"strings"
)

// skippedPrefix starts the message of a check that did not run because
// another one failed first (the engine is unreachable, the stream broke).
const skippedPrefix = "skipped:"

// Skipped reports whether the check did not run. Its status stays what
// the contract says (fail, or info for an option not given), but it is
// shown and counted apart: against a dead engine one failure and eight
// skipped checks, not nine failures.
func (c Check) Skipped() bool { return strings.HasPrefix(c.Message, skippedPrefix) }

// Why is the reason a skipped check did not run ("engine unreachable").
func (c Check) Why() string {
	return strings.TrimSpace(strings.TrimPrefix(c.Message, skippedPrefix))
}

// Tally counts the checks by what happened: "1 pass, 0 warn, 1 fail,
// 1 info", with ", 8 skipped" when some did not run.
func (r Report) Tally() string {
	n := map[string]int{}
	skipped := 0
	for _, c := range r.Checks {
		if c.Skipped() {
			skipped++
			continue
		}
		n[c.Status]++
	}
	s := fmt.Sprintf("%d pass, %d warn, %d fail, %d info", n[Pass], n[Warn], n[Fail], n[Info])
	if skipped > 0 {
		s += fmt.Sprintf(", %d skipped", skipped)
	}
	return s
}
