//go:build e2e

package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
)

// SignalsSpecInput is the input of SignalsSpec.
type SignalsSpecInput struct{ framework.SpecInput }

// SignalsSpec proves the signals operators watch move with what the suite's
// pass makes happen: the suite's own Prometheus (built from source, with
// the shipped rules of config/prometheus/) scrapes every apiserver, the
// scheduler, every kubelet and ndfq's exporter; around the pass, the
// upstream series rose by every refusal, rejection and kubelet rejection
// the pass saw in the component's own words, and each shipped alert was
// silent at its start and fired while its refused pods still waited.
func SignalsSpec(_ context.Context, inputGetter func() SignalsSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("SignalsSpec"); e = in.Env })

	for _, cell := range claims.Matrix(t) {
		if cell.Kind != claims.Signals {
			continue
		}
		text, around := signalsCell(cell)
		if cell.Applies() {
			framework.PlanAround(cell, text, around)
		}
		cellIt(cell, text, func(ctx SpecContext) {
			o, ok := e.Shared.Observations[cell.Key()]
			Expect(ok).To(BeTrue(), "the suite's pass read no signal for %s: it runs around the pass (a focused run must select this spec with the cells it counts)", cell.Key())
			Expect(o.Err).To(BeEmpty(), "reading %s", cell.Key())
			s := o.Signal
			By(fmt.Sprintf("%s: %g at the pass's start, %g after it, %d expected (%s)", s.Query, s.From, s.To, s.Want, s.Detail))
			framework.RecordCell(cell, "", s.Seen, fmt.Sprintf("%s: %g -> %g, %d expected; %s", s.Query, s.From, s.To, s.Want, s.Detail))
			Expect(s.Seen).To(Equal(cell.Expect), "%s (%s)", s.Query, s.Detail)
		})
	}
}

// signalsCell is a signals cell's spec text and observation.
func signalsCell(c claims.Cell) (string, framework.AroundFunc) {
	switch c.Feature {
	case fixtures.SignalSchedulerRefusals.Name:
		return "the scheduler's " + c.Feature + "{plugin=NodeDeclaredFeatures} counted every pod the pass saw it refuse", framework.ObserveSchedulerRefusals()
	case fixtures.SignalValidatorRejections.Name:
		return "the apiservers' " + c.Feature + "{name=NodeDeclaredFeatureValidator,rejected=true} counted every update the pass saw it reject", framework.ObserveValidatorRejections()
	case fixtures.SignalKubeletRejections.Name:
		return "the kubelets of " + c.Pool + " counted every pod the pass saw them reject in " + c.Feature + "{reason=PodFeatureUnsupported}", framework.ObserveKubeletRejections(c.Pool)
	}
	for a, events := range map[string]func(*framework.PassSpan) int{
		claims.AlertSchedulerRefusals:  func(s *framework.PassSpan) int { n, _ := s.Refused(); return n },
		claims.AlertValidatorRejection: (*framework.PassSpan).Rejected,
		claims.AlertKubeletRejections: func(s *framework.PassSpan) int {
			n := 0
			for _, c := range s.KubeletRejected("") {
				n += c
			}
			return n
		},
	} {
		if c.Feature == claims.AlertFeature(a) {
			return "the shipped alert " + a + " was silent before the pass and fired during it", framework.ObserveAlert(a, events)
		}
	}
	return "", func(context.Context, *framework.PassSpan) framework.Observation {
		return framework.Observation{Err: "no observation for signals cell " + c.Key()}
	}
}
