package report

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/verdict"
)

// Kinds of observation a spec records.
const (
	KindDeclaredSet = "declared-set"
	KindPlacement   = string(claims.Placement)
	KindUpdate      = string(claims.Update)
	KindKubelet     = string(claims.KubeletAdmission)
	KindFinding     = "finding"
	KindMeasure     = "measure"
)

// Observation is one thing a spec saw, with what the oracle expected.
// Specs record them as Ginkgo report entries named EntryName.
type Observation struct {
	Kind     string   `json:"kind"`
	Pool     string   `json:"pool,omitempty"`
	Kubelet  string   `json:"kubelet,omitempty"`
	Runtime  string   `json:"runtime,omitempty"` // the node's containerRuntimeVersion
	Node     string   `json:"node,omitempty"`
	Feature  string   `json:"feature,omitempty"`
	Expected string   `json:"expected,omitempty"`
	Seen     string   `json:"seen,omitempty"`
	Set      []string `json:"set,omitempty"`
	Digest   string   `json:"digest,omitempty"`
	OK       bool     `json:"ok"`
	Text     string   `json:"text,omitempty"`
}

// EntryName is the report entry name of observations.
const EntryName = "ndfq"

// The headings of report.md's reasons, which ReadVerdict reads back.
const (
	whyHoldHeading    = "## Why HOLD"
	incompleteHeading = "## Not every claim was asked"
)

// CellEntryName is the report entry a cell's spec adds when it starts,
// naming the cell (claims.Key): a spec that fails before it records an
// observation still says which claim it was about.
const CellEntryName = "ndfq-cell"

// Failure is a failed spec, for the verdict, with the cells (claims.Key)
// it was about.
type Failure struct {
	Spec, Message string
	Cells         []string
}

// Summary is everything report.md says.
type Summary struct {
	// RunID and Started name the run the report is of (the suite's
	// random seed and start), so a report left by another run is told apart.
	RunID        string
	Started      time.Time
	Topology     string
	ControlPlane string
	Pools        []string // in topology order
	Observations []Observation
	Failures     []Failure
	// Skipped are the specs that did not apply here, with the reason each gave.
	Skipped []Failure
	Counts  Counts
	// Incomplete says why the run did not ask every claim it has: a dry
	// run, a label filter or focus that left specs out.
	Incomplete []string
	// Cells is the topology's claim matrix: a cell that applies and has no
	// observation makes the run INCOMPLETE; the others are listed with why.
	Cells []claims.Cell
	// Overrides are the NDFQ_INTERVAL_* variables the run was made with.
	Overrides []string
	// Oracle says which release each component's expectations were held
	// to (topology.OracleNotes); Unchecked the releases held to none,
	// which make the run INCOMPLETE.
	Oracle, Unchecked []string
}

// A suite run's outcome is the probe's word (verdict.Outcome): INCOMPLETE
// is never GO, something that applies was not seen.
const (
	GO         = verdict.GO
	HOLD       = verdict.HOLD
	INCOMPLETE = verdict.INCOMPLETE
)

// claims are the observations that state a claim: every kind of the
// claims table, the per-node declaration and any kind report.md does not
// know (fail closed); a finding or a measure records what was seen and
// holds nothing.
func claim(o Observation) bool { return o.Kind != KindFinding && o.Kind != KindMeasure }

// broken are the claim observations that did not hold.
func (s Summary) broken() []Observation {
	var out []Observation
	for _, o := range s.Observations {
		if claim(o) && !o.OK {
			out = append(out, o)
		}
	}
	return out
}

type poolRow struct {
	kubelet, runtime, digest, set string
	refExp, refSeen               int
	rejExp, rejSeen               int
	placeOK, updOK                int
	placeAll, updAll              int
}

// Verdict is HOLD when a spec failed or a claim's observation did not
// hold; INCOMPLETE when nothing passed, the run left specs out or a cell
// of the matrix that applies has no observation; GO only when specs ran,
// none failed, every cell that applies was observed and every observation
// held.
func (s Summary) Verdict() verdict.Outcome {
	switch {
	case len(s.Failures) > 0 || len(s.broken()) > 0:
		return HOLD
	case len(s.incompleteReasons()) > 0:
		return INCOMPLETE
	}
	return GO
}

// unobserved are the cells that apply and no observation answers.
func (s Summary) unobserved() []claims.Cell {
	seen := map[string]bool{}
	for _, o := range s.Observations {
		seen[claims.Key(o.Kind, o.Pool, o.Feature)] = true
	}
	var out []claims.Cell
	for _, c := range s.Cells {
		if c.Applies() && !seen[c.Key()] {
			out = append(out, c)
		}
	}
	return out
}

// Markdown writes report.md.
func (s Summary) Markdown(w io.Writer) error {
	rows := map[string]*poolRow{}
	row := func(p string) *poolRow {
		if rows[p] == nil {
			rows[p] = &poolRow{}
		}
		return rows[p]
	}
	var findings, measures []string
	for _, o := range s.Observations {
		switch o.Kind {
		case KindDeclaredSet:
			r := row(o.Pool)
			r.kubelet, r.runtime, r.digest = o.Kubelet, o.Runtime, o.Digest
			r.set = strings.Join(o.Set, " ")
			if r.set == "" {
				r.set = "(none)"
			}
		case KindPlacement:
			r := row(o.Pool)
			r.placeAll++
			if o.OK {
				r.placeOK++
			}
			if o.Expected == "refused" {
				r.refExp++
				if o.Seen == "refused" {
					r.refSeen++
				}
			}
		case KindUpdate:
			r := row(o.Pool)
			r.updAll++
			if o.OK {
				r.updOK++
			}
			if o.Expected == "403" {
				r.rejExp++
				if o.Seen == "403" {
					r.rejSeen++
				}
			}
		case KindFinding:
			findings = append(findings, located(o))
		case KindMeasure:
			measures = append(measures, located(o))
		}
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# ndfq report: %s — %s\n\n", s.Topology, s.Verdict())
	p("Run %s, started %s.\n\n", nonEmpty(s.RunID, "unnamed"), s.Started.UTC().Format(time.RFC3339))
	p("Control plane %s. Specs: %s.\n\n", s.ControlPlane, s.Counts)
	if len(s.Oracle) > 0 {
		p("Oracle held to: %s.\n\n", strings.Join(s.Oracle, ", "))
	}
	if len(s.Overrides) > 0 {
		p("Waits and windows overridden (internal/wait/intervals.yaml's otherwise): %s.\n\n", strings.Join(s.Overrides, ", "))
	} else {
		p("Waits and windows: intervals.yaml's, none overridden.\n\n")
	}
	if s.Verdict() == HOLD {
		p("%s\n\n", whyHoldHeading)
		for _, f := range s.Failures {
			cells := ""
			if len(f.Cells) > 0 {
				cells = " (cell " + strings.Join(f.Cells, ", ") + ")"
			}
			p("- **%s**%s: %s\n", f.Spec, cells, oneLine(f.Message))
		}
		for _, o := range s.broken() {
			p("- %s observation on %s did not hold: expected %s, seen %s\n", o.Kind, located(Observation{Pool: o.Pool, Node: o.Node, Text: nonEmpty(o.Feature, "no feature")}), o.Expected, o.Seen)
		}
		p("\n")
	}
	if reasons := s.incompleteReasons(); len(reasons) > 0 {
		p("%s\n\n", incompleteHeading)
		for _, r := range reasons {
			p("- %s\n", r)
		}
		p("\n")
	}
	p("## Pools\n\n| pool | kubelet | runtime | declared digest | declared set | refusals expected/seen | rejections expected/seen | placements as expected | updates as expected |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, pool := range s.Pools {
		r := row(pool)
		p("| %s | %s | %s | `%s` | %s | %d/%d | %d/%d | %d/%d | %d/%d |\n", pool, r.kubelet, r.runtime, r.digest, r.set, r.refExp, r.refSeen, r.rejExp, r.rejSeen, r.placeOK, r.placeAll, r.updOK, r.updAll)
	}
	s.matrix(w)
	if len(s.Skipped) > 0 {
		p("\n## Specs that do not apply here or have no probe yet (%d, counted as skipped)\n\n", len(s.Skipped))
		for _, sk := range s.Skipped {
			spec := strings.TrimSuffix(strings.TrimSuffix(sk.Spec, ": not applicable"), ": not covered")
			p("- %s — %s\n", spec, oneLine(sk.Message))
		}
	}
	if len(findings) > 0 {
		sort.Strings(findings)
		p("\n## Flagged behaviour (see docs/findings.md)\n\n")
		for _, f := range dedupe(findings) {
			p("- %s\n", f)
		}
	}
	if len(measures) > 0 {
		sort.Strings(measures)
		p("\n## Measured\n\n")
		for _, m := range measures {
			p("- %s\n", m)
		}
	}
	return nil
}

func (s Summary) incompleteReasons() []string {
	out := slices.Clone(s.Incomplete)
	out = append(out, s.Unchecked...)
	if s.Counts.Passed == 0 {
		out = append([]string{"no spec passed"}, out...)
	}
	for _, c := range s.Cells {
		if c.Uncovered != "" && c.Accepted == "" {
			out = append(out, fmt.Sprintf("the %s claim on pool %s for %s is not covered (%s), and the topology does not accept that (its acceptUncovered, with a reason)", c.Kind, c.Pool, c.Feature, c.Uncovered))
		}
	}
	missing := s.unobserved()
	switch {
	case len(missing) == 0:
	case len(out) > 0:
		// Left out on purpose: the count is enough.
		out = append(out, fmt.Sprintf("%d cell(s) of the claim matrix that apply have no observation", len(missing)))
	default:
		for _, c := range missing {
			out = append(out, fmt.Sprintf("no observation of the %s claim on pool %s for %s (expected %s)", c.Kind, c.Pool, c.Feature, c.Expect))
		}
	}
	return out
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// located is an observation's text behind the pool and node it was seen on,
// so a reader knows where to look.
func located(o Observation) string {
	switch {
	case o.Pool == "":
		return o.Text
	case o.Node == "":
		return "[" + o.Pool + "] " + o.Text
	default:
		return "[" + o.Pool + "/" + o.Node + "] " + o.Text
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func dedupe(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || s[i-1] != x {
			out = append(out, x)
		}
	}
	return out
}
