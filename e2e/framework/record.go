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

// Record keeps one observation for report.md.
func Record(o report.Observation) { AddReportEntry(report.EntryName, o) }

// RecordPlacement records a scheduling decision against its cell ("bound" or "refused").
func RecordPlacement(c claims.Cell, res probes.Placement) {
	seen := claims.Refused
	if res.Node != "" {
		seen = claims.Bound
	}
	Record(report.Observation{Kind: string(c.Kind), Pool: c.Pool, Feature: c.Feature, Node: res.Node, Expected: c.Expect, Seen: seen, OK: seen == c.Expect,
		Text: fmt.Sprintf("decided in %s", res.Decision.Round(time.Millisecond))})
}

// RecordUpdate records an update's HTTP answer against its cell.
func RecordUpdate(c claims.Cell, res probes.UpdateResult) {
	Record(report.Observation{Kind: string(c.Kind), Pool: c.Pool, Feature: c.Feature, Node: res.Node,
		Expected: c.Expect, Seen: fmt.Sprint(res.Code), OK: fmt.Sprint(res.Code) == c.Expect})
}

// RecordKubelet records what a kubelet did with a pod bound to it against its cell.
func RecordKubelet(c claims.Cell, node, seen string) {
	Record(report.Observation{Kind: string(c.Kind), Pool: c.Pool, Feature: c.Feature, Node: node, Expected: c.Expect, Seen: seen, OK: seen == c.Expect})
}

// RecordStale records declarations that outlived the kubelet that made them.
func RecordStale(pool, node, cause string, set []string) {
	Record(report.Observation{Kind: report.KindFinding, Pool: pool, Node: node, Set: set, Digest: fixtures.Digest(set), OK: true,
		Text: cause + ": declarations stayed after two lease renewals (never cleared by a kubelet that publishes nothing)"})
}
