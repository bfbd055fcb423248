package verdict

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/reporters"
)

// ClusterWide is the JUnit "pool" of reasons and checks not about one pool.
const ClusterWide = "cluster"

// WriteJUnit is the verdict as JUnit: one test case per pool × stop
// condition (and the cluster-wide ones), failed where the condition
// fired, skipped with the reason where it could not be checked.
func (g Verdict) WriteJUnit(w io.Writer) error {
	pools := []string{ClusterWide}
	for _, p := range g.Pools {
		pools = append(pools, p.Pool)
	}
	poolOf := func(p string) string {
		if slices.Contains(pools, p) {
			return p
		}
		return ClusterWide // "" and control-plane pseudo-pools
	}
	suite := reporters.JUnitTestSuite{Name: "ndfq probe", Package: g.Context, Time: g.TookSeconds, Timestamp: strings.TrimSuffix(g.Time, "Z"),
		Properties: reporters.JUnitProperties{Properties: []reporters.JUnitProperty{
			{Name: "verdict", Value: string(g.Outcome)}, {Name: "serverVersion", Value: g.Server}, {Name: "ndfqVersion", Value: g.NDFQVersion},
		}}}
	// Items that leave no condition unasked are cases of their own.
	for _, it := range Items {
		if len(it.Leaves) > 0 {
			continue
		}
		tc := reporters.JUnitTestCase{Name: fmt.Sprintf("%s [%s]", it.Name, ClusterWide), Classname: "ndfq.probe." + ClusterWide, Status: "passed"}
		if why := g.itemNotMade(it.Name); why != "" {
			tc.Status, tc.Skipped = "skipped", &reporters.JUnitSkipped{Message: "skipped - " + why}
			suite.Skipped++
		}
		suite.Tests++
		suite.TestCases = append(suite.TestCases, tc)
	}
	for _, pool := range pools {
		for _, c := range Conditions {
			tc := reporters.JUnitTestCase{Name: fmt.Sprintf("%s [%s]", c, pool), Classname: "ndfq.probe." + pool, Status: "passed"}
			var failed []string
			for _, r := range g.Reasons {
				if r.Condition == c && poolOf(r.Pool) == pool {
					failed = append(failed, r.String())
				}
			}
			switch why := g.notAsked(pool, c); {
			case len(failed) > 0:
				tc.Status, tc.Failure = "failed", &reporters.JUnitFailure{Type: "failed", Message: failed[0], Description: strings.Join(failed, "\n")}
				suite.Failures++
			case why != "":
				tc.Status, tc.Skipped = "skipped", &reporters.JUnitSkipped{Message: "skipped - " + why}
				suite.Skipped++
			}
			suite.Tests++
			suite.TestCases = append(suite.TestCases, tc)
		}
	}
	doc := reporters.JUnitTestSuites{Tests: suite.Tests, Failures: suite.Failures, Disabled: suite.Skipped, Time: suite.Time, TestSuites: []reporters.JUnitTestSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// notAsked is why condition c was not checked for pool, "" when it was.
func (g Verdict) notAsked(pool string, c Condition) string {
	switch {
	case c == IntentMismatch && !g.IntentChecked:
		return "no --intent: nodes were not held to a plan"
	case c == SchedulerIgnoresDecl && len(g.Schedulers) == 0:
		return "no --scheduler-name: no second scheduler was probed"
	case c == CheckNotMade && !slices.ContainsFunc(g.Reasons, func(r Reason) bool { return r.Condition == CheckNotMade }) && len(g.Unchecked) > 0:
		return "no --hold-unchecked: checks not made leave the verdict INCOMPLETE instead"
	}
	for _, u := range slices.Concat(g.Unchecked, g.Accepted, g.notApplicableWrites()) {
		if slices.Contains(itemLeaves(u.Check), c) && (u.Pool == "" || u.Pool == pool || (u.Pool == ControlPlane && pool == ClusterWide)) {
			return g.mark(u)
		}
	}
	return ""
}

// notApplicableWrites is the node-write check where it does not apply
// (one node): its condition is skipped, not passed.
func (g Verdict) notApplicableWrites() []Unchecked {
	var out []Unchecked
	for _, u := range g.NotApplicable {
		if u.Check == ItemNodeWrites {
			u.Pool = ""
			out = append(out, u)
		}
	}
	return out
}

// itemNotMade is why an item with no conditions of its own was not made.
func (g Verdict) itemNotMade(item string) string {
	var why []string
	for _, u := range slices.Concat(g.Unchecked, g.Accepted) {
		if u.Check == item {
			why = append(why, g.mark(u))
		}
	}
	return strings.Join(why, "; ")
}

// mark is an item as the JUnit skip says it: accepted ones say so.
func (g Verdict) mark(u Unchecked) string {
	if slices.ContainsFunc(g.Accepted, func(a Unchecked) bool { return a.Check == u.Check && a.Pool == u.Pool && a.Reason == u.Reason }) {
		return "accepted (--accept-partial): " + u.String()
	}
	return u.String()
}

// itemLeaves are the conditions an unchecked item leaves unasked.
func itemLeaves(item string) []Condition {
	for _, it := range Items {
		if it.Name == item {
			return it.Leaves
		}
	}
	return nil
}
