// Package visual renders run folders into what people look at outside a
// terminal (spec/report.md): one self-contained HTML file per report (one
// run, a comparison of several, a sweep, a merged run) with inline SVG
// charts and CSS, and single charts as SVG files.
//
// Everything comes from the run folders alone (bench_summary.json,
// requests.jsonl, metrics.jsonl, sweep.json), read as spec/record.md's
// "Reading the record safely" asks: regular files only, lines capped. The
// charts are drawn with gonum's plot through its SVG canvas; this package
// only chooses what to plot and how it reads without colour (every cache
// state and every run has its own marker and dash pattern).
//
// It imports no UI package.
package visual
