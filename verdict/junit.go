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
// fired. A check that applies and was not made is failed too (type
// "unchecked"): a pipeline that gates on JUnit must not read INCOMPLETE as
// GO. Only what does not apply, or what the operator accepted with a flag
// the verdict names (--accept-partial), is skipped with the reason.
func (v Verdict) WriteJUnit(w io.Writer) error {
	pools := []string{ClusterWide}
	for _, p := range v.Pools {
		pools = append(pools, p.Pool)
	}
	poolOf := func(p string) string {
		if slices.Contains(pools, p) {
			return p
		}
		return ClusterWide // "" and control-plane pseudo-pools
	}
	suite := reporters.JUnitTestSuite{Name: "ndfq probe", Package: v.Context, Time: v.TookSeconds, Timestamp: strings.TrimSuffix(v.Time, "Z"),
		Properties: reporters.JUnitProperties{Properties: []reporters.JUnitProperty{
			{Name: "verdict", Value: string(v.Outcome)}, {Name: "serverVersion", Value: v.Server}, {Name: "ndfqVersion", Value: v.NDFQVersion},
		}}}
	// Items that leave no condition unasked are cases of their own.
	for _, it := range Items {
		if len(it.Leaves) > 0 {
			continue
		}
		tc := reporters.JUnitTestCase{Name: fmt.Sprintf("%s [%s]", it.Name, ClusterWide), Classname: "ndfq.probe." + ClusterWide, Status: "passed"}
		v.itemNotMade(it.Name).mark(&tc, &suite)
		suite.Tests++
		suite.TestCases = append(suite.TestCases, tc)
	}
	for _, pool := range pools {
		for _, c := range Conditions {
			tc := reporters.JUnitTestCase{Name: fmt.Sprintf("%s [%s]", c, pool), Classname: "ndfq.probe." + pool, Status: "passed"}
			var failed []string
			for _, r := range v.Reasons {
				if r.Condition == c && poolOf(r.Pool) == pool {
					failed = append(failed, r.String())
				}
			}
			if len(failed) > 0 {
				tc.Status, tc.Failure = "failed", &reporters.JUnitFailure{Type: "failed", Message: failed[0], Description: strings.Join(failed, "\n")}
				suite.Failures++
			} else {
				v.notAsked(pool, c).mark(&tc, &suite)
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

// gap is why a case was not asked: unchecked (a check that applies and
// was not made, a failure) or skipped (not applicable, or accepted).
type gap struct {
	why       string
	unchecked bool
}

// mark writes the gap into the case and the suite's counts.
func (p gap) mark(tc *reporters.JUnitTestCase, suite *reporters.JUnitTestSuite) {
	switch {
	case p.why == "":
	case p.unchecked:
		tc.Status, tc.Failure = "failed", &reporters.JUnitFailure{Type: "unchecked", Message: "not checked - " + p.why}
		suite.Failures++
	default:
		tc.Status, tc.Skipped = "skipped", &reporters.JUnitSkipped{Message: "skipped - " + p.why}
		suite.Skipped++
	}
}

// notAsked is why condition c was not checked for pool (zero when it was).
func (v Verdict) notAsked(pool string, c Condition) gap {
	switch {
	case c == IntentMismatch && !v.IntentChecked:
		return gap{why: "no --intent: nodes were not held to a plan"}
	case c == SchedulerIgnoresDecl && len(v.Schedulers) == 0:
		return gap{why: "no --scheduler-name: no second scheduler was probed"}
	case c == CheckNotMade && !slices.ContainsFunc(v.Reasons, func(r Reason) bool { return r.Condition == CheckNotMade }) && len(v.Unchecked) > 0:
		return gap{why: "no --hold-unchecked: checks not made leave the verdict INCOMPLETE instead (their own cases fail)"}
	}
	covers := func(u Unchecked) bool {
		return slices.Contains(itemLeaves(u.Check), c) && (u.Pool == "" || u.Pool == pool || (u.Pool == ControlPlane && pool == ClusterWide))
	}
	for _, u := range v.Unchecked {
		if covers(u) {
			return gap{why: u.String(), unchecked: true}
		}
	}
	for _, u := range v.Accepted {
		if covers(u) {
			return gap{why: acceptedMark + u.String()}
		}
	}
	for _, u := range v.notApplicableWrites() {
		if covers(u) {
			return gap{why: u.String()}
		}
	}
	return gap{}
}

// acceptedMark begins the skip of an item the operator accepted.
const acceptedMark = "accepted (--accept-partial): "

// notApplicableWrites is the node-write check where it does not apply
// (one node): its condition is skipped, not passed.
func (v Verdict) notApplicableWrites() []Unchecked {
	var out []Unchecked
	for _, u := range v.NotApplicable {
		if u.Check == ItemNodeWrites {
			u.Pool = ""
			out = append(out, u)
		}
	}
	return out
}

// itemNotMade is why an item with no conditions of its own was not made:
// unchecked when any of it was, else accepted.
func (v Verdict) itemNotMade(item string) gap {
	var unchecked, accepted []string
	for _, u := range v.Unchecked {
		if u.Check == item {
			unchecked = append(unchecked, u.String())
		}
	}
	for _, u := range v.Accepted {
		if u.Check == item {
			accepted = append(accepted, acceptedMark+u.String())
		}
	}
	if len(unchecked) > 0 {
		return gap{why: strings.Join(slices.Concat(unchecked, accepted), "; "), unchecked: true}
	}
	return gap{why: strings.Join(accepted, "; ")}
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
