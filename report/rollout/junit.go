package rollout

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

// covers says which conditions a check that could not be made leaves
// unasked, so those test cases are skipped rather than passed.
var covers = map[string][]Condition{
	"scheduler-gates":       {RolloutOrder, GateFingerprint},
	"apiserver-gates":       {GateFingerprint},
	"kubelet-gates":         {KubeletUnreachable, MissingReport, DeclaredButNotEnabled, MissingReportRate, RolloutOrder},
	"placement-and-updates": {UnexpectedRefusal, UnexpectedAdmission, SchedulerLatency, UnexpectedUpdateRejection, UnexpectedUpdateAdmission, SchedulerIgnoresDecl},
}

// WriteJUnit is the verdict as JUnit: one test case per pool × stop
// condition (and the cluster-wide ones), failed where the condition
// fired, skipped with the reason where it could not be checked.
func (g Gate) WriteJUnit(w io.Writer) error {
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
			{Name: "verdict", Value: g.Verdict}, {Name: "serverVersion", Value: g.Server}, {Name: "ndfqVersion", Value: g.NDFQVersion},
		}}}
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
func (g Gate) notAsked(pool string, c Condition) string {
	switch {
	case c == IntentMismatch && !g.intentChecked:
		return "no --intent: nodes were not held to a plan"
	case c == SchedulerIgnoresDecl && len(g.Schedulers) == 0:
		return "no --scheduler-name: no second scheduler was probed"
	}
	for _, u := range g.Unchecked {
		if slices.Contains(covers[u.Check], c) && (u.Pool == "" || u.Pool == pool || (u.Pool == "control-plane" && pool == ClusterWide)) {
			return u.String()
		}
	}
	return ""
}
