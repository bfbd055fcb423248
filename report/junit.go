// Package report turns suite results into what people read: the closing
// count of a JUnit file, why its specs failed, and the per-pool report.
package report

import (
	"encoding/xml"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/reporters"
)

// failedStatus are Ginkgo's spec states that are not a pass.
var failedStatus = map[string]bool{"failed": true, "panicked": true, "interrupted": true, "aborted": true, "timedout": true}

// Counts are a run's results; suite setup nodes count only when they fail.
type Counts struct{ Passed, Failed, Skipped int }

// String is the closing line CI reads: "N passed, N failed, N skipped".
func (c Counts) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", c.Passed, c.Failed, c.Skipped)
}

// JUnit is what a Ginkgo JUnit report says: the counts and, for each spec
// that did not pass, its failure message and the end of its timeline.
type JUnit struct {
	Counts
	Failures []FailedCase
}

// FailedCase is one spec that did not pass. LogTail is the end of what
// the spec wrote (GinkgoWriter): the steps that led to the failure.
type FailedCase struct {
	Failure
	LogTail []string
}

// ReadJUnit reads a Ginkgo JUnit report with Ginkgo's own types.
func ReadJUnit(path string, logLines int) (JUnit, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return JUnit{}, err
	}
	var s reporters.JUnitTestSuites
	if err := xml.Unmarshal(data, &s); err != nil {
		return JUnit{}, fmt.Errorf("%s: %w", path, err)
	}
	var j JUnit
	for _, suite := range s.TestSuites {
		for _, tc := range suite.TestCases {
			setup := strings.HasPrefix(tc.Name, "[") && !strings.HasPrefix(tc.Name, "[It]") // [SynchronizedBeforeSuite], [ReportAfterSuite] ...
			switch {
			case tc.Failure != nil || tc.Error != nil || failedStatus[tc.Status]:
				j.Failed++
				j.Failures = append(j.Failures, failedCase(tc, logLines))
			case setup:
			case tc.Skipped != nil || tc.Status == "skipped" || tc.Status == "pending":
				j.Skipped++
			default:
				j.Passed++
			}
		}
	}
	return j, nil
}

// CountJUnit is ReadJUnit's counts alone.
func CountJUnit(path string) (Counts, error) {
	j, err := ReadJUnit(path, 0)
	return j.Counts, err
}

func failedCase(tc reporters.JUnitTestCase, logLines int) FailedCase {
	f := FailedCase{Failure: Failure{Spec: tc.Name, Message: tc.Status}}
	switch {
	case tc.Failure != nil:
		f.Message = tc.Failure.Message
	case tc.Error != nil:
		f.Message = tc.Error.Message
	}
	if logLines > 0 {
		f.LogTail = linesBeforeFailure(tc.SystemErr, logLines)
	}
	return f
}

// failureMarks begin the timeline entry of a spec's first failure.
var failureMarks = []string{"[FAILED]", "[PANICKED]", "[TIMEDOUT]", "[INTERRUPTED]", "[ABORTED]"}

// linesBeforeFailure is up to n non-empty timeline lines just before the
// first failure (what the spec was doing then), or the last n when the
// timeline has no failure entry; cleanup output comes after the failure.
func linesBeforeFailure(timeline string, n int) []string {
	var kept []string
	for _, l := range strings.Split(timeline, "\n") {
		l = strings.TrimSpace(l)
		if slices.ContainsFunc(failureMarks, func(m string) bool { return strings.HasPrefix(l, m) }) {
			break
		}
		if l != "" {
			kept = append(kept, l)
		}
	}
	return kept[max(0, len(kept)-n):]
}
