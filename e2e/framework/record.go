package framework

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
)

// Record keeps one observation for report.md.
func Record(o report.Observation) { AddReportEntry(report.EntryName, o) }

// RecordPlacement records a scheduling decision against what was expected ("bound" or "refused").
func RecordPlacement(pool, feature, expected string, res probes.Placement) {
	seen := "refused"
	if res.Node != "" {
		seen = "bound"
	}
	Record(report.Observation{Kind: report.KindPlacement, Pool: pool, Feature: feature, Node: res.Node, Expected: expected, Seen: seen, OK: seen == expected,
		Text: fmt.Sprintf("decided in %s", res.Decision.Round(time.Millisecond))})
}

// RecordUpdate records an update's HTTP answer against the expected one.
func RecordUpdate(pool, feature string, expected int32, res probes.UpdateResult) {
	Record(report.Observation{Kind: report.KindUpdate, Pool: pool, Feature: feature, Node: res.Node,
		Expected: fmt.Sprint(expected), Seen: fmt.Sprint(res.Code), OK: res.Code == expected})
}

// RecordStale records declarations that outlived the kubelet that made them.
func RecordStale(pool, node, cause string, set []string) {
	Record(report.Observation{Kind: report.KindFinding, Pool: pool, Node: node, Set: set, Digest: fixtures.Digest(set), OK: true,
		Text: cause + ": declarations stayed after two lease renewals (never cleared by a kubelet that publishes nothing)"})
}
