//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/report"
	"github.com/ndfq/ndfq/verdict"
)

// ProbeBenchSpecInput is the input of ProbeBenchSpec.
type ProbeBenchSpecInput struct {
	framework.SpecInput
	Runs int
}

// ProbeBenchSpec times the whole-fleet probe on the live topology as an
// operator runs it (`ndfq probe`, the cluster's admin, no flag): Runs runs,
// each after the previous one's pods are gone (--wait-cleanup, its cleanup
// not timed), and their median. A measurement: issue 37's target is 30 s
// on skew-1.37.
func ProbeBenchSpec(_ context.Context, inputGetter func() ProbeBenchSpecInput) {
	var e *framework.Env
	var runs int
	BeforeEach(func() { in := inputGetter(); in.Check("ProbeBenchSpec"); e, runs = in.Env, in.Runs })

	It("times the whole-fleet probe on the live topology (median of runs)", Label("Performance"), func(ctx SpecContext) {
		var rows []probeBenchRow
		for i := range runs {
			By(fmt.Sprintf("whole-fleet probe %d of %d", i+1, runs))
			start := time.Now()
			code, out := framework.RunNDFQ(ctx, "probe", "--kubeconfig", e.Shared.Kubeconfig, "--wait-cleanup", "-o", "json")
			wall := time.Since(start)
			g := framework.ParseVerdict(code, out)
			Expect(g.Outcome).To(Equal(verdict.GO), "the sound topology: %v %v", g.Reasons, g.Unchecked)
			rows = append(rows, probeBenchRow{Run: i + 1, ProbeSeconds: g.TookSeconds, WallSeconds: wall.Seconds(), APIRequests: g.APIRequests, PeakRSSMiB: g.PeakRSSBytes >> 20})
		}
		probeTimes := make([]float64, len(rows))
		for i, r := range rows {
			probeTimes[i] = r.ProbeSeconds
		}
		slices.Sort(probeTimes)
		median := probeTimes[len(probeTimes)/2]
		e.WriteBenchTable("bench-probe-fleet", rows)
		framework.Record(report.Observation{Kind: report.KindMeasure, Text: fmt.Sprintf("whole-fleet ndfq probe: median %.1fs of %d runs (each %v s probing)", median, runs, probeTimes)})
	})
}

// probeBenchRow is one run's cost, as docs/performance.md reports it.
type probeBenchRow struct {
	Run          int     `json:"run"`
	ProbeSeconds float64 `json:"probeSeconds"` // the verdict's own time: probing, not cleanup
	WallSeconds  float64 `json:"wallSeconds"`  // the command's, its pods gone
	APIRequests  int64   `json:"apiRequests"`
	PeakRSSMiB   int64   `json:"peakRSSMiB"`
}
