package sweep

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the cells as a plain table, then the search result.
func WriteTable(w io.Writer, f *File) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	dim := strings.ToUpper(f.Sweep.Dimension)
	fmt.Fprintf(tw, "%s\tTARGET REQ/S\tACHIEVED REQ/S\tMEAN CONC\tOK/FAIL\tP50 TTFT MS\tP99 TTFT MS\tMEAN TPOT MS\tOUT TOK/S\tHIT %%\tGOOD %%\tGOODPUT REQ/S\tDELIVERED\t\n", dim)
	for _, c := range f.Cells {
		delivered := "-"
		if c.Delivered != nil {
			delivered = map[bool]string{true: "yes", false: "NO"}[*c.Delivered]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t\n",
			Format(c.Value), num(c.TargetRate), num(c.AchievedRate), num(c.MeanConcurrency),
			c.TotalRequests-c.FailedRequests, c.FailedRequests, num(c.P50TTFTms), num(c.P99TTFTms), num(c.MeanTPOTms),
			c.OutputThroughput, pct(c.HitRatio), pct(c.GoodFraction), num(c.GoodputRPS), delivered)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case f.Sweep.Interrupted:
		fmt.Fprintln(w, "interrupted: the cells above ran")
	}
	if f.Sweep.GoodputTarget != nil {
		if f.Result != nil {
			_, err := fmt.Fprintf(w, "highest %s with good fraction >= %.0f%%: %s (%s good)\n",
				f.Sweep.Dimension, *f.Sweep.GoodputTarget*100, Format(f.Result.MaxValue), pct(f.Result.GoodFractionAtMax)+"%")
			return err
		}
		_, err := fmt.Fprintf(w, "no %s reached a good fraction of %.0f%%\n", f.Sweep.Dimension, *f.Sweep.GoodputTarget*100)
		return err
	}
	return nil
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
