package sweep

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kvbench/kvbench/bench/record"
)

// WriteTable prints the cells as a plain table, why each cell that did
// not pass did not, then what the sweep established.
func WriteTable(w io.Writer, f *File) error {
	if f.Sweep.Dimension == WorkingSet {
		return writeWorkingSetTable(w, f)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	dim := strings.ToUpper(f.Sweep.Dimension)
	fmt.Fprintf(tw, "%s\tTARGET REQ/S\tACHIEVED REQ/S\tMEAN CONC\tOK/FAIL\tP50 TTFT MS\tP99 TTFT MS\tMEAN TPOT MS\tOUT TOK/S\tHIT %%\tGOOD %%\tGOODPUT REQ/S\tDELIVERED\tSTATUS\t\n", dim)
	target := f.Sweep.GoodputTarget
	for _, c := range f.Cells {
		delivered := "-"
		if c.Delivered != nil {
			delivered = map[bool]string{true: "yes", false: "NO"}[*c.Delivered]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%s\t\n",
			Format(c.Value), num(c.TargetRate), num(c.AchievedRate), num(c.MeanConcurrency),
			c.TotalRequests-c.FailedRequests, c.FailedRequests, num(c.P50TTFTms), num(c.P99TTFTms), num(c.MeanTPOTms),
			c.OutputThroughput, pct(c.HitRatio), pct(c.GoodFraction), num(c.GoodputRPS), delivered, c.Verdict(target))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range f.Cells {
		if st := c.Verdict(target); len(c.Reasons) > 0 && st != record.CellPass && st != record.CellDone {
			fmt.Fprintf(w, "%s %s %s: %s\n", f.Sweep.Dimension, Format(c.Value), st, strings.Join(c.Reasons, "; "))
		}
	}
	if f.Sweep.Interrupted {
		fmt.Fprintln(w, "interrupted: the cells above ran")
	}
	if c := Cut(f); c != nil {
		fmt.Fprintf(w, "stopped at %s %s: its run record could not be written completely, so no further cell ran\n",
			f.Sweep.Dimension, Format(c.Value))
	}
	if f.Sweep.GoodputTarget == nil {
		return nil
	}
	_, err := fmt.Fprintln(w, ResultLine(f))
	return err
}

// Cut is the cell at which the sweep stopped because its run record
// could not be written (the last), nil when none was cut.
func Cut(f *File) *Cell {
	if f == nil || len(f.Cells) == 0 || f.Cells[len(f.Cells)-1].Status != record.CellCut {
		return nil
	}
	return &f.Cells[len(f.Cells)-1]
}

// CutMessage is the one line that says why a sweep stopped with exit
// code 4 at a cut cell: what its record lacks and that no further cell
// ran ("" when none was cut).
func CutMessage(f *File) string {
	c := Cut(f)
	if c == nil {
		return ""
	}
	return fmt.Sprintf("%s; the sweep stopped at %s %s, no further cell ran", strings.Join(c.Reasons, "; "), f.Sweep.Dimension, Format(c.Value))
}

// ResultLine says what a sweep with an SLO established, in one line:
// the highest delivered passing value, and the values above it that were
// not delivered, so a load the client could not send is never read as a
// capacity.
func ResultLine(f *File) string {
	dim, t := f.Sweep.Dimension, 0.0
	if f.Sweep.GoodputTarget != nil {
		t = *f.Sweep.GoodputTarget * 100
	}
	r := f.Result
	var b strings.Builder
	switch {
	case r != nil && r.MaxValue != nil && len(r.UndeliveredAbove) > 0:
		fmt.Fprintf(&b, "highest %s with good fraction >= %.0f%%: at least %s (%s good)", dim, t, Format(*r.MaxValue), pct(r.GoodFractionAtMax)+"%")
	case r != nil && r.MaxValue != nil:
		fmt.Fprintf(&b, "highest %s with good fraction >= %.0f%%: %s (%s good)", dim, t, Format(*r.MaxValue), pct(r.GoodFractionAtMax)+"%")
	case r != nil && len(r.UndeliveredAbove) > 0:
		fmt.Fprintf(&b, "no delivered %s reached a good fraction of %.0f%%", dim, t)
	default:
		fmt.Fprintf(&b, "no %s reached a good fraction of %.0f%%", dim, t)
	}
	if r != nil && len(r.UndeliveredAbove) > 0 {
		var parts []string
		for _, u := range r.UndeliveredAbove {
			parts = append(parts, Format(u.Value)+" ("+u.Reason+")")
		}
		b.WriteString("; not delivered, so not judged: " + strings.Join(parts, ", "))
	}
	return b.String()
}

func num(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", *p)
}

func pct(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", *p*100)
}
