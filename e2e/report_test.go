//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/report"
)

// cellsOf are the cells a spec said it was about (framework.AsksCell).
func cellsOf(sr types.SpecReport) []string {
	var out []string
	for _, e := range sr.ReportEntries {
		var key string
		// This process's entries hold the value, others' its JSON.
		if raw, err := json.Marshal(e.GetRawValue()); e.Name == report.CellEntryName && err == nil && json.Unmarshal(raw, &key) == nil {
			out = append(out, key)
		}
	}
	return out
}

// The report is written from every process's entries once the suite ends.
var _ = ReportAfterSuite("ndfq report.md", func(r Report) {
	s := report.Summary{RunID: fmt.Sprintf("%s-seed%d", r.SuiteDescription, r.SuiteConfig.RandomSeed), Started: r.StartTime,
		Topology: suiteTopology.Name, ControlPlane: suiteTopology.ControlPlaneVersion().String(), Cells: claims.Matrix(suiteTopology),
		Overrides: wait.Overrides()}
	s.Oracle, s.Unchecked = suiteTopology.OracleNotes(settings.CacheDir)
	var extra []string
	for _, x := range suiteTopology.ControlPlane.ExtraSchedulers {
		if x.IgnoresDeclarations {
			x.Name += " (NodeDeclaredFeatures plugin disabled)"
		}
		extra = append(extra, x.Name)
	}
	if len(extra) > 0 {
		s.ControlPlane += " with extra schedulers " + strings.Join(extra, ", ")
	}
	if notes := suiteTopology.ControlPlaneNotes(); len(notes) > 0 {
		s.ControlPlane += "; " + strings.Join(notes, "; ")
	}
	for _, p := range suiteTopology.Pools() {
		s.Pools = append(s.Pools, p.Name)
	}
	if r.SuiteConfig.DryRun {
		s.Incomplete = append(s.Incomplete, fmt.Sprintf("dry run: %d specs listed, none touched a cluster", r.PreRunStats.SpecsThatWillRun))
	}
	// The Bench specs are make bench's: out of make e2e by design, listed
	// as skipped with that reason, not an incomplete run.
	benchOut := 0
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType == types.NodeTypeIt && sr.State == types.SpecStateSkipped && sr.Failure.Message == "" && slices.Contains(sr.Labels(), bench[0]) {
			benchOut++
			s.Skipped = append(s.Skipped, report.Failure{Spec: sr.FullText(), Message: "a measurement, not a claim: make bench runs it"})
		}
	}
	if left := r.PreRunStats.TotalSpecs - r.PreRunStats.SpecsThatWillRun - benchOut; left > 0 {
		s.Incomplete = append(s.Incomplete, fmt.Sprintf("the run's filters (label filter %q, focus %q, skip %q) left %d of %d specs out",
			r.SuiteConfig.LabelFilter, r.SuiteConfig.FocusStrings, r.SuiteConfig.SkipStrings, left, r.PreRunStats.TotalSpecs))
	}
	for _, sr := range r.SpecReports {
		isSpec := sr.LeafNodeType == types.NodeTypeIt
		switch {
		case sr.State.Is(types.SpecStateFailureStates):
			name := sr.FullText()
			if name == "" {
				name = sr.LeafNodeType.String()
			}
			s.Failures = append(s.Failures, report.Failure{Spec: name, Message: sr.Failure.Message, Cells: cellsOf(sr)})
			s.Counts.Failed++
		case !isSpec:
		case sr.State == types.SpecStatePassed:
			s.Counts.Passed++
		default:
			s.Counts.Skipped++
			// A Skip() says why the claim does not apply; a filtered-out spec says nothing.
			if sr.State == types.SpecStateSkipped && sr.Failure.Message != "" {
				s.Skipped = append(s.Skipped, report.Failure{Spec: sr.FullText(), Message: sr.Failure.Message})
			}
		}
		for _, e := range sr.ReportEntries {
			if e.Name != report.EntryName {
				continue
			}
			// Entries of this process hold the value itself, other processes'
			// entries a decoded JSON map: a JSON round trip reads both.
			var o report.Observation
			raw, err := json.Marshal(e.GetRawValue())
			if err == nil && json.Unmarshal(raw, &o) == nil {
				s.Observations = append(s.Observations, o)
			}
		}
	}
	if r.SuiteConfig.DryRun {
		s.Counts = report.Counts{} // Ginkgo marks listed specs passed; none ran
	}
	if leases != nil {
		var windows [][2]time.Time
		for _, sr := range r.SpecReports {
			if sr.LeafNodeType == types.NodeTypeIt && !sr.StartTime.IsZero() && slices.Contains(sr.Labels(), disruptive[0]) {
				windows = append(windows, [2]time.Time{sr.StartTime, sr.EndTime})
			}
		}
		sum := leases.Summarize(windows)
		s.Observations = append(s.Observations, report.Observation{Kind: report.KindMeasure, Text: sum.Text(grace, graceSource)})
		if data, err := json.MarshalIndent(map[string]any{"summary": sum, "nodeMonitorGracePeriodSeconds": grace.Seconds(), "source": graceSource}, "", "  "); err == nil {
			_ = os.WriteFile(filepath.Join(settings.Artifacts, "lease-renewals.json"), data, 0o644)
		}
	}
	if err := os.MkdirAll(settings.Artifacts, 0o755); err != nil {
		return
	}
	f, err := os.Create(filepath.Join(settings.Artifacts, "report.md"))
	if err != nil {
		GinkgoWriter.Printf("report.md: %v\n", err)
		return
	}
	defer f.Close()
	_ = s.Markdown(f)
	GinkgoWriter.Printf("report: %s (%s) written to %s\n", s.Verdict(), s.Counts, f.Name())
})
