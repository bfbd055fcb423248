// Package report turns suite results into what people read: the closing
// count of a JUnit file and, from later issues, the per-pool report.
package report

import (
	"encoding/xml"
	"fmt"
	"os"
	"strings"
)

type junitCase struct {
	Name    string    `xml:"name,attr"`
	Status  string    `xml:"status,attr"`
	Failure *struct{} `xml:"failure"`
	Error   *struct{} `xml:"error"`
	Skipped *struct{} `xml:"skipped"`
}

type junitSuites struct {
	Suites []struct {
		Cases []junitCase `xml:"testcase"`
	} `xml:"testsuite"`
}

// failedStatus are Ginkgo's spec states that are not a pass.
var failedStatus = map[string]bool{"failed": true, "panicked": true, "interrupted": true, "aborted": true, "timedout": true}

// Counts are a run's results; suite setup nodes count only when they fail.
type Counts struct{ Passed, Failed, Skipped int }

// String is the closing line CI reads: "N passed, N failed, N skipped".
func (c Counts) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", c.Passed, c.Failed, c.Skipped)
}

// CountJUnit reads a Ginkgo JUnit report.
func CountJUnit(path string) (Counts, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Counts{}, err
	}
	var s junitSuites
	if err := xml.Unmarshal(data, &s); err != nil {
		return Counts{}, fmt.Errorf("%s: %w", path, err)
	}
	var c Counts
	for _, suite := range s.Suites {
		for _, tc := range suite.Cases {
			setup := strings.HasPrefix(tc.Name, "[") && !strings.HasPrefix(tc.Name, "[It]") // [SynchronizedBeforeSuite], [ReportAfterSuite] ...
			switch {
			case tc.Failure != nil || tc.Error != nil || failedStatus[tc.Status]:
				c.Failed++
			case setup:
			case tc.Skipped != nil || tc.Status == "skipped" || tc.Status == "pending":
				c.Skipped++
			default:
				c.Passed++
			}
		}
	}
	return c, nil
}
