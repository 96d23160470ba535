// Package sweep runs one workload at several loads, each cell an
// ordinary run folder under the sweep's folder, and reports the curve
// (spec/load.md, "kvbench sweep"): a list of rates or concurrencies, or
// a capacity search for the highest value whose good fraction meets a
// target under an SLO.
package sweep

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// maxListValues bounds a list so a typo cannot plan a million cells.
const maxListValues = 1000

// ParseList reads a sweep list: `1,2,4,8`; `1:64:x2` (geometric, both
// ends included when reached); `10:100:+10` (linear). flag names the flag
// in errors.
func ParseList(flag, s string) ([]float64, error) {
	s = strings.TrimSpace(s)
	bad := func(why string) error {
		return fmt.Errorf("--%s %q: %s (e.g. 1,2,4 or 1:64:x2 or 10:100:+10)", flag, s, why)
	}
	num := func(t string) (float64, error) {
		x, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
			return 0, bad(fmt.Sprintf("%q is not a number > 0", strings.TrimSpace(t)))
		}
		return x, nil
	}
	if s == "" {
		return nil, bad("empty list")
	}
	if strings.Contains(s, ":") {
		parts := strings.Split(s, ":")
		if len(parts) != 3 {
			return nil, bad("a range is START:END:xFACTOR or START:END:+STEP")
		}
		lo, err := num(parts[0])
		if err != nil {
			return nil, err
		}
		hi, err := num(parts[1])
		if err != nil {
			return nil, err
		}
		if hi < lo {
			return nil, bad("the end is below the start")
		}
		step := strings.TrimSpace(parts[2])
		if len(step) < 2 || (step[0] != 'x' && step[0] != '*' && step[0] != '+') {
			return nil, bad("the step is xFACTOR or +STEP")
		}
		k, err := num(step[1:])
		if err != nil {
			return nil, err
		}
		geometric := step[0] != '+'
		if geometric && k <= 1 {
			return nil, bad("a geometric factor must be > 1")
		}
		var out []float64
		for i := 0; ; i++ {
			var v float64
			if geometric {
				v = lo * math.Pow(k, float64(i))
			} else {
				v = lo + float64(i)*k
			}
			if v > hi*(1+1e-9) {
				break
			}
			if len(out) == maxListValues {
				return nil, bad(fmt.Sprintf("more than %d values", maxListValues))
			}
			out = append(out, round(v))
		}
		return out, nil
	}
	var out []float64
	for _, p := range strings.Split(s, ",") {
		if strings.TrimSpace(p) == "" {
			continue
		}
		v, err := num(p)
		if err != nil {
			return nil, err
		}
		if len(out) == maxListValues {
			return nil, bad(fmt.Sprintf("more than %d values", maxListValues))
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, bad("empty list")
	}
	return out, nil
}

// round drops float noise from computed list values (0.1*3).
func round(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return r
}

// Format renders a value as the folder names and the table show it.
func Format(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
