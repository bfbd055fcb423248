package framework

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
)

// Record keeps one observation for report.md (findings and measures;
// a cell's observation is RecordCell's).
func Record(o report.Observation) { AddReportEntry(report.EntryName, o) }

// AsksCell names the cell the running spec is about (report.md names it
// if the spec fails before it records what it saw).
func AsksCell(c claims.Cell) {
	AddReportEntry(report.CellEntryName, c.Key(), ReportEntryVisibilityNever)
}

// RecordCell records what was seen of a cell on node, judged as the
// claims table judges the cell's kind.
func RecordCell(c claims.Cell, node, seen, text string) {
	Record(report.Observation{Kind: string(c.Kind), Pool: c.Pool, Feature: c.Feature, Node: node,
		Expected: c.Expect, Seen: seen, OK: c.Holds(seen), Text: text})
}

// RecordPlacement records a scheduling decision against its cell ("bound" or "refused").
func RecordPlacement(c claims.Cell, res probes.Placement) {
	seen := claims.Refused
	if res.Node != "" {
		seen = claims.Bound
	}
	RecordCell(c, res.Node, seen, fmt.Sprintf("decided in %s", res.Decision.Round(time.Millisecond)))
}

// RecordUpdate records an update's HTTP answer against its cell.
func RecordUpdate(c claims.Cell, res probes.UpdateResult) {
	RecordCell(c, res.Node, res.Answer(), "")
}

// RecordStale records declarations that outlived the kubelet that made them.
func RecordStale(pool, node, cause string, set []string) {
	Record(report.Observation{Kind: report.KindFinding, Pool: pool, Node: node, Set: set, Digest: fixtures.Digest(set), OK: true,
		Text: cause + ": declarations stayed after two lease renewals (never cleared by a kubelet that publishes nothing)"})
}
