package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ndfq/ndfq/claims"
)

// matrix writes the claim matrix: one row per claim and feature, one
// column per pool; each cell held (✓), broken (✗), unobserved (missing),
// not applicable or not covered, with the reasons listed under the table.
func (s Summary) matrix(w io.Writer) {
	if len(s.Cells) == 0 {
		return
	}
	obs := map[string]Observation{}
	for _, o := range s.Observations {
		k := claims.Key(o.Kind, o.Pool, o.Feature)
		if prev, ok := obs[k]; !ok || prev.OK {
			obs[k] = o // a broken observation outranks one that held
		}
	}
	fmt.Fprintf(w, "\n## Claim matrix\n\n")
	WriteMatrix(w, s.Cells, func(c claims.Cell) string {
		o, ok := obs[c.Key()]
		switch {
		case !ok:
			return "missing"
		case o.OK:
			return "✓ " + o.Seen
		}
		return fmt.Sprintf("✗ %s (want %s)", o.Seen, o.Expected)
	})
	applies, na, uncovered := claims.Count(s.Cells)
	fmt.Fprintf(w, "\n%d cells apply, %d are not applicable here, %d are not covered by a probe yet.\n", applies, na, uncovered)
}

// WriteMatrix writes cells as a markdown table, with seen filling the
// cells that apply, and lists the reasons of the others as notes.
func WriteMatrix(w io.Writer, cells []claims.Cell, seen func(claims.Cell) string) {
	var pools, rows []string
	byKey := map[string]claims.Cell{}
	for _, c := range cells {
		row := string(c.Kind) + " · " + c.Feature
		if !slices.Contains(pools, c.Pool) {
			pools = append(pools, c.Pool)
		}
		if !slices.Contains(rows, row) {
			rows = append(rows, row)
		}
		byKey[row+"|"+c.Pool] = c
	}
	var notes []string
	note := func(text string) int {
		for i, n := range notes {
			if n == text {
				return i + 1
			}
		}
		notes = append(notes, text)
		return len(notes)
	}
	fmt.Fprintf(w, "| claim · feature | %s |\n|---|%s\n", strings.Join(pools, " | "), strings.Repeat("---|", len(pools)))
	for _, row := range rows {
		var out []string
		for _, p := range pools {
			c, ok := byKey[row+"|"+p]
			switch {
			case !ok:
				out = append(out, "")
			case c.NotApplicable != "":
				out = append(out, fmt.Sprintf("n/a [%d]", note("not applicable: "+c.NotApplicable)))
			case c.Uncovered != "" && c.Accepted != "":
				out = append(out, fmt.Sprintf("not covered, accepted [%d]", note("not covered, accepted by the topology ("+c.Accepted+"): "+c.Uncovered)))
			case c.Uncovered != "":
				out = append(out, fmt.Sprintf("not covered [%d]", note("not covered: "+c.Uncovered)))
			default:
				out = append(out, seen(c))
			}
		}
		fmt.Fprintf(w, "| %s | %s |\n", row, strings.Join(out, " | "))
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for i, n := range notes {
			fmt.Fprintf(w, "[%d] %s  \n", i+1, n)
		}
	}
}
