package visual

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/kvbench/kvbench/bench/record"
	"github.com/kvbench/kvbench/bench/report"
	"github.com/kvbench/kvbench/bench/stats"
)

// The report of one run reads as a document (spec/report.md): the
// headline first (did the cache help, by how much, can the figures be
// trusted), then the charts, then the full summary labelled as the text
// summary labels it, and the summary as written, raw keys and all, in a
// closed <details> at the end.

// headline is the header's answer, from the summary's headline block;
// nil for a summary written before headlines (nothing is shown rather
// than zeros).
type headline struct {
	Line string // report.HeadlineLine, the same words as the terminal

	Verdict, VerdictClass string // "met", "NOT MET", "unknown"; "" without an expectation
	Expected, Observed    string

	Hit, HitNote         string
	Cold, Reused         string // TTFT p50, "n/a" when unknown
	ColdNote, ReusedNote string
	Speedup, CI          string
	SpeedupNote          string
}

// trust says what makes the figures less than they seem, or that
// nothing did.
type trust struct {
	Limits []string
	Clean  string
}

// section is one table of the labelled summary.
type section struct {
	Title string
	Rows  []report.Row
}

type runDoc struct {
	*page
	ID, Heading, Sub string
	Headline         *headline
	Trust            trust
	Summary          []section
	RawSource        string
	Raw              []table
}

// singlePage fills the page of one run.
func (r *Report) singlePage(pg *page) *runDoc {
	x := r.Runs[0]
	// The facts table, the warnings and the raw tables are the
	// comparison page's, for one run.
	r.runPage(pg)
	doc := &runDoc{page: pg, ID: x.ID, Heading: orDash(x.Workload)}
	if x.Model != "" {
		doc.Heading += " on " + x.Model
	}
	if x.Name != "" {
		doc.Heading += " (" + x.Name + ")"
	}
	sub := []string{"run " + x.ID}
	if x.EngineURL != "" {
		sub = append(sub, "engine "+x.EngineURL)
	}
	if x.StartedAt != "" {
		sub = append(sub, "started "+readableTime(x.StartedAt))
	}
	s := x.detail.Summary
	if s != nil {
		sub = append(sub, fmt.Sprintf("%s measured", requests(s.Results.TotalRequests)))
	}
	if x.ToolVersion != "" {
		sub = append(sub, "kvbench "+x.ToolVersion)
	}
	doc.Sub = strings.Join(sub, " · ")
	if len(pg.Runs) > 0 {
		doc.RawSource, doc.Raw = pg.Runs[0].Source, pg.Runs[0].Tables
	}
	pg.Runs = nil
	if s == nil {
		return doc
	}
	doc.Headline = headlineOf(x, s)
	doc.Trust = trustOf(x, s, pg.Warnings)
	if s.Headline != nil {
		// The limits say it in the headline's words; the warnings would
		// say it again.
		pg.Warnings = nil
	}
	for _, sec := range report.Shown(s, x.Complete) {
		if sec.Title == "KV cache" {
			continue // the header
		}
		doc.Summary = append(doc.Summary, section{sec.Title, sec.Rows})
	}
	if rows := report.ShownPairs(s.Workload, "expectation"); len(rows) > 0 {
		doc.Summary = append(doc.Summary, section{"Workload figures", rows})
	}
	if rows := report.ConfigShown(s.Config); len(rows) > 0 {
		reset := "not asked"
		if s.CacheReset != nil {
			reset = *s.CacheReset
		}
		rows = append(rows, report.Row{Label: "Cache reset before the run", Value: reset})
		doc.Summary = append(doc.Summary, section{"Settings", rows})
	}
	return doc
}

func headlineOf(x *Run, s *record.Summary) *headline {
	h := s.Headline
	if h == nil {
		return nil
	}
	v := &headline{Line: report.HeadlineLine(h)}
	if e := record.WorkloadExpectation(s); e != nil {
		v.Expected, v.Observed = e.Expected, e.Reason
	}
	if h.Verdict != nil {
		v.Verdict = record.VerdictText(*h.Verdict)
		v.VerdictClass = map[string]string{record.VerdictMet: "met", record.VerdictNotMet: "notmet"}[*h.Verdict]
		if v.VerdictClass == "" {
			v.VerdictClass = "unknown"
		}
	}
	v.Hit = report.Pct1(h.HitRatio)
	if h.HitRatio != nil {
		v.HitNote = fmt.Sprintf("%s of %s prompt tokens came from the cache", report.Thousands(float64(s.Cache.CachedTokens), 0),
			report.Thousands(float64(s.Cache.PromptTokens), 0))
	}
	v.Cold, v.Reused = report.Ms(h.ColdTTFTP50ms), report.Ms(h.ReusedTTFTP50ms)
	cold, reused := 0, 0
	if b := s.ByCacheState; b != nil {
		cold, reused = b.Cold.Requests, b.Reused.Requests
	}
	switch {
	case h.ColdTTFTP50ms == nil:
		v.ColdNote = "none: fewer than 3 requests found nothing cached"
	case h.Baseline != nil && *h.Baseline == stats.BaselineWarmupCold:
		v.ColdNote = fmt.Sprintf("the warmup's %s that found nothing cached", requests(len(x.warmCold)))
		if len(x.warmCold) == 0 {
			v.ColdNote = "the warmup's requests that found nothing cached"
		}
	default:
		v.ColdNote = fmt.Sprintf("%s that found nothing cached", requests(cold))
	}
	if h.ReusedTTFTP50ms == nil {
		v.ReusedNote = "none: no request reused a cached prefix"
	} else {
		v.ReusedNote = fmt.Sprintf("%s served from the cache", requests(reused))
	}
	if sp := report.SpeedupWords(h); sp != "" {
		v.Speedup, v.CI, _ = strings.Cut(sp, " (")
		v.CI = strings.TrimSuffix(v.CI, ")")
		v.SpeedupNote = "cold p50 ÷ reused p50"
		if v.CI != "" {
			v.SpeedupNote += "; the interval from a bootstrap of both medians (10,000 resamples)"
		} else {
			v.SpeedupNote += "; no interval: fewer than 3 requests on a side"
		}
	} else {
		v.Speedup = report.NA
		v.SpeedupNote = "needs both a cold baseline and reused requests"
	}
	return v
}

// readableTime is an RFC 3339 time as "2026-12-01 19:37:36 UTC"; other
// text as it is.
func readableTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// trustOf lists what limited the run (the headline's words, then what
// only the report knows: an unfinished record, unreadable lines), or
// says in words what was checked when nothing did.
func trustOf(x *Run, s *record.Summary, warnings []string) trust {
	var t trust
	if s.Headline == nil {
		return t
	}
	t.Limits = append(t.Limits, s.Headline.LimitedBy...)
	// What the workload's plan check found before the first request.
	t.Limits = append(t.Limits, s.Warnings...)
	for _, w := range warnings {
		if strings.Contains(w, "did not finish") || strings.Contains(w, "could not be read") {
			t.Limits = append(t.Limits, w)
		}
	}
	if len(t.Limits) > 0 {
		return t
	}
	var checked []string
	if s.Load != nil {
		checked = append(checked, "the load was delivered")
	}
	checked = append(checked, "the client kept up")
	if s.Results.FailedRequests == 0 {
		checked = append(checked, "no request failed")
	}
	if s.Cache.Unverified == 0 {
		checked = append(checked, "every request has a verified cache receipt")
	}
	t.Clean = "Nothing limited the run: " + strings.Join(checked, ", ") + "."
	return t
}

// docCSS is the document's own layout, after the shared page CSS.
const docCSS = `
.doc-sub{color:var(--muted);margin:2px 0 14px}
.lede{font-size:17px;font-weight:600;margin:10px 0 14px;padding:10px 14px;border-left:4px solid var(--fg);background:var(--zebra)}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(165px,1fr));gap:12px;margin:8px 0 6px}
@media (max-width:960px){.cards{grid-template-columns:repeat(2,1fr)}}
.card{border:1px solid var(--rule);border-radius:6px;padding:10px 14px}
.card .k{color:var(--muted);font-size:12.5px;text-transform:uppercase;letter-spacing:.05em}
.card .v{font-size:clamp(18px,1.8vw,24px);font-weight:700;line-height:1.25;margin:2px 0;font-variant-numeric:tabular-nums}
.card .v span{white-space:nowrap}
.card .s{color:var(--muted);font-size:12.5px}
.card.met{border-color:var(--better)}.card.met .v{color:var(--better)}
.card.notmet{border-color:var(--worse)}.card.notmet .v{color:var(--worse)}
.trust ul{margin:6px 0;padding-left:0;list-style:none}
.trust li{background:var(--warn-bg);color:var(--warn-fg);border-left:4px solid currentColor;padding:6px 12px;margin:6px 0}
.trust li strong{margin-right:6px}
.trust p.clean{border-left:4px solid var(--better);padding:6px 12px;margin:6px 0}
.facts table{width:100%}.facts td{padding:2px 10px}
.sections{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));gap:4px 28px;align-items:start}
.sections section{min-width:0}.sections h3{margin-top:14px}
.sections table{width:100%;table-layout:fixed}
.sections td.label{width:55%}.sections td.sub{padding-left:26px}.sections td.num{text-align:right}
.sections td.text{text-align:right;overflow-wrap:anywhere}
.sections td.note{color:var(--muted);font-size:12.5px}
`

// valueClass keeps a figure on one line and lets longer text (a
// reason, a URL, a run id) wrap.
func valueClass(v string) string {
	if len(v) > 20 || strings.Count(v, " ") > 3 {
		return "text"
	}
	return "num"
}

// sub reports whether a row belongs to the one above it (the text
// summary indents it: a state's figures, an unverified reason).
func sub(label string) bool { return strings.HasPrefix(label, "  ") }

// chartTitle is a chart's title, for the list of charts not drawn.
func chartTitle(name string) string {
	if t, ok := chartTitles[name]; ok {
		return t
	}
	return name
}

var chartTitles = map[string]string{
	ChartTTFTCDF: "TTFT distribution", ChartTTFTTime: "TTFT over the run", ChartThroughputTime: "Output throughput and requests in flight",
	ChartITLHist: "Inter-token latency", ChartHitTime: "Prefix-cache hit rate over the run", ChartTraceCached: "Trace replay: expected vs observed cached tokens",
}

var runTmpl = template.Must(template.Must(pageTmpl.Clone()).New("run").Funcs(template.FuncMap{"valueClass": valueClass, "chartTitle": chartTitle, "sub": sub}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="generator" content="kvbench {{.Version}}">
<title>{{.Title}}</title>
<style>` + pageCSS + docCSS + `</style>
</head>
<body>
<header>
<div class="kind">kvbench report · one run</div>
<h1>{{.Heading}}</h1>
<p class="doc-sub">{{.Sub}}</p>
{{with .Headline}}<p class="lede" id="headline">{{.Line}}</p>
<div class="cards">
{{if .Verdict}}<div class="card {{.VerdictClass}}"><div class="k">Expectation</div><div class="v">{{.Verdict}}</div><div class="s">{{if .Observed}}{{.Observed}}{{end}}</div></div>
{{end}}<div class="card"><div class="k">Cache hit ratio</div><div class="v">{{.Hit}}</div><div class="s">{{.HitNote}}</div></div>
<div class="card"><div class="k">Time to first token, p50</div><div class="v"><span>{{.Cold}}</span> → <span>{{.Reused}}</span></div><div class="s">cold: {{.ColdNote}}; reused: {{.ReusedNote}}</div></div>
<div class="card"><div class="k">Speedup from the cache</div><div class="v">{{.Speedup}}</div><div class="s">{{if .CI}}<strong>{{.CI}}</strong> · {{end}}{{.SpeedupNote}}</div></div>
</div>
{{end}}{{if or .Trust.Limits .Trust.Clean}}<section class="trust" id="trust"><h2>Can the figures be trusted?</h2>
{{if .Trust.Limits}}<ul>{{range .Trust.Limits}}<li role="alert"><strong>Limited by:</strong>{{.}}</li>{{end}}</ul>
{{else}}<p class="clean">{{.Trust.Clean}}</p>
{{end}}</section>
{{end}}{{range .Warnings}}<div class="warn" role="alert"><strong>Warning:</strong>{{.}}</div>
{{end}}<details class="facts" id="about"><summary>About this run</summary>
{{template "table" .Header}}
</details>
</header>
<main>
<h2 id="charts">Charts</h2>
{{range .Figures}}<figure class="chart" data-chart="{{.Name}}" id="chart-{{.Name}}">
{{.SVG}}
{{range .Notes}}<p class="note">{{.}}</p>
{{end}}</figure>
{{end}}{{if .Missing}}<ul class="missing">{{range .Missing}}<li>{{chartTitle .Name}}: not drawn, {{.Why}}.</li>{{end}}</ul>
{{end}}{{if .Summary}}<h2 id="summary">Summary</h2>
<div class="sections">
{{range .Summary}}<section><h3>{{.Title}}</h3>
<table><tbody>{{range .Rows}}<tr>{{if .Label}}<td class="label{{if sub .Label}} sub{{end}}">{{.Label}}</td><td class="{{valueClass .Value}}">{{.Value}}</td>{{else}}<td class="note" colspan="2">{{.Value}}</td>{{end}}</tr>
{{end}}</tbody></table></section>
{{end}}</div>
{{end}}{{if .Raw}}<details id="summary-of-{{.ID}}"><summary>The summary as written ({{.RawSource}}, its keys as they are)</summary>
{{range .Raw}}<h3>{{.Title}}</h3>
{{template "table" .}}
{{end}}</details>
{{end}}</main>
<footer>Generated by kvbench {{.Version}} from the run folder alone; self-contained: no script, no font or style from the network.</footer>
</body>
</html>`))
