package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/config"
	"github.com/kvbench/kvbench/internal/secret"
	"github.com/kvbench/kvbench/internal/textclean"
)

// The blocks whose keys the table of labels cannot know (a workload's
// own figures, the config) are shown through KeyFigure and ConfigShown:
// a label in words built from the key, never the key itself.

// words spells out the parts of a key that are abbreviations.
var words = map[string]string{
	"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2el": "E2EL", "e2e": "E2E", "ttfo": "TTFO",
	"kv": "KV", "id": "ID", "ids": "IDs", "lru": "LRU", "slo": "SLO", "url": "URL", "eos": "EOS",
	"qa": "QA", "rag": "RAG", "f1": "F1", "gpu": "GPU", "cpu": "CPU", "json": "JSON", "csv": "CSV",
	"num": "number of", "p50": "p50", "p90": "p90", "p95": "p95", "p99": "p99",
}

// units are the unit a key's last word names.
var units = map[string]string{"ms": "ms", "s": "s", "gb": "GB", "tps": "tok/s", "rps": "req/s"}

// KeyFigure is the figure of a key no table names (workload.first_question.requests
// is "First question: requests"): its words, its unit from a last word
// such as _ms or _tps, a ratio from hit_ratio, fraction or rate; isInt
// says the value is a whole number (a count).
func KeyFigure(key string, isInt bool) Figure {
	parts := strings.Split(key, ".")
	var out []string
	f := Figure{Kind: KindReal}
	for i, p := range parts {
		ws := strings.Split(p, "_")
		if i == len(parts)-1 && len(ws) > 1 {
			if u, ok := units[ws[len(ws)-1]]; ok {
				f.Unit = u
				ws = ws[:len(ws)-1]
			}
		}
		last := ws[len(ws)-1]
		if i == len(parts)-1 && f.Unit == "" && (last == "ratio" || last == "fraction") {
			f.Kind, f.Unit = KindRatio, "%"
		}
		for k, w := range ws {
			if s, ok := words[w]; ok {
				ws[k] = s
			}
		}
		out = append(out, strings.Join(ws, " "))
	}
	if isInt && f.Unit == "" && f.Kind == KindReal {
		f.Kind = KindCount
	}
	label := strings.Join(out, ": ")
	if label != "" && label[0] >= 'a' && label[0] <= 'z' {
		label = strings.ToUpper(label[:1]) + label[1:]
	}
	f.Label = label
	return f
}

// ShownPairs flattens a JSON object (a summary block as written or as
// read back) into display rows, in its key order: nested objects as
// "Outer: inner", every label from KeyFigure, numbers written as their
// figure's kind, a list joined with commas, text on one line without
// control characters (textclean.Line: a file may hold anything). skip
// drops top-level keys shown elsewhere.
func ShownPairs(v any, skip ...string) []Row {
	var out []Row
	walkJSON(rawOf(v), "", func(key string, raw json.RawMessage) {
		top, _, _ := strings.Cut(key, ".")
		for _, s := range skip {
			if top == s {
				return
			}
		}
		out = append(out, shownValue(key, raw, KeyFigure, false))
	})
	return out
}

// ConfigShown is a run's config block as display rows: each setting by
// its flag (--ldqa-document-length) where it has one, else in words.
func ConfigShown(v any) []Row {
	var out []Row
	walkJSON(rawOf(v), "", func(key string, raw json.RawMessage) {
		out = append(out, shownValue(key, raw, func(k string, isInt bool) Figure {
			if f, ok := config.Lookup(k); ok && f.Flag != "" {
				return Figure{Label: "--" + f.Flag, Kind: KindCount}
			}
			return KeyFigure(k, isInt)
		}, true))
	})
	return out
}

func rawOf(v any) json.RawMessage {
	switch t := v.(type) {
	case nil:
		return nil
	case json.RawMessage:
		return t
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// walkJSON calls fn for every value of an object that is not an object
// itself, in key order, with its dotted key.
func walkJSON(raw json.RawMessage, prefix string, fn func(key string, raw json.RawMessage)) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		if prefix != "" && len(bytes.TrimSpace(raw)) > 0 {
			fn(prefix, raw)
		}
		return
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		k, _ := tok.(string)
		var val json.RawMessage
		if dec.Decode(&val) != nil {
			return
		}
		if prefix != "" {
			k = prefix + "." + k
		}
		walkJSON(val, k, fn)
	}
}

// shownValue writes one value with the figure figOf gives its key;
// literal keeps a number as written (a setting, not a measurement).
func shownValue(key string, raw json.RawMessage, figOf func(key string, isInt bool) Figure, literal bool) Row {
	raw = bytes.TrimSpace(raw)
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return Row{Label: figOf(key, false).Label, Value: string(raw)}
	}
	switch t := v.(type) {
	case json.Number:
		n = t
		x, err := n.Float64()
		isInt := err == nil && !strings.ContainsAny(n.String(), ".eE") && math.Abs(x) < 1<<53
		f := figOf(key, isInt)
		if err != nil || literal {
			v := n.String()
			if f.Unit != "" && err == nil {
				v += " " + f.Unit
			}
			return Row{Label: f.Label, Value: v}
		}
		if f.Kind == KindCount && !isInt {
			f.Kind = KindReal
		}
		if f.Kind == KindReal && f.Unit == "" {
			// A figure without a unit (a factor, a mean count) reads
			// best in four significant digits.
			return Row{Label: f.Label, Value: roundFigure(x)}
		}
		return Row{Label: f.Label, Value: f.Show(&x)}
	case nil:
		return Row{Label: figOf(key, false).Label, Value: NA}
	case bool:
		return Row{Label: figOf(key, false).Label, Value: yesNo(t)}
	case string:
		return Row{Label: figOf(key, false).Label, Value: textclean.Line(cleanURL(t))}
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			b, _ := json.Marshal(e)
			if s, ok := e.(string); ok {
				parts[i] = textclean.Line(cleanURL(s))
			} else {
				parts[i] = string(b)
			}
		}
		return Row{Label: figOf(key, false).Label, Value: strings.Join(parts, ", ")}
	}
	return Row{Label: figOf(key, false).Label, Value: string(raw)}
}

// cleanURL is text that holds a URL without its credentials, query or
// fragment (a record written before credentials were split off, a key
// in a query string); other text as it is.
func cleanURL(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	s = secret.Strip(s)
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	return s
}

// roundFigure writes v with four significant digits, at least one
// decimal and never an exponent; a whole number as it is.
func roundFigure(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return Thousands(v, 0)
	}
	prec := 4
	if a := math.Abs(v); a > 0 {
		prec = min(max(3-int(math.Floor(math.Log10(a))), 1), 4)
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}
