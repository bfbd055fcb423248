//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/probes"
)

// APIServerSignalsSpecInput is the input of APIServerSignalsSpec.
type APIServerSignalsSpecInput struct{ framework.SpecInput }

// APIServerSignalsSpec proves each apiserver of an HA control plane counts
// the rejections it answered: past the load balancer, the i-th apiserver
// is sent i+1 updates the validator rejects (a number of its own, so a
// swapped attribution shows), and the suite's Prometheus must see each
// one's series rise by exactly its number. Serial: no other spec sends
// updates meanwhile.
func APIServerSignalsSpec(_ context.Context, inputGetter func() APIServerSignalsSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("APIServerSignalsSpec"); e = in.Env })

	for _, cell := range claims.Matrix(t) {
		if cell.Kind != claims.APIServerSignals {
			continue
		}
		text := fmt.Sprintf("each apiserver (%d here) counts in its own %s{name=%s,rejected=true} exactly the rejections it answered, sent to it past the load balancer", t.ControlPlaneCount(), cell.Feature, fixtures.ValidatorPlugin)
		pool, probe, okProbe := rejectedUpdate(t)
		if okProbe {
			text += fmt.Sprintf(" (an update needing %s of a pod on %s)", probe.Feature, framework.PoolDesc(pool))
		}
		cellIt(cell, text, func(ctx SpecContext) {
			Expect(okProbe).To(BeTrue(), "an update cell expects the validator's rejection, but the oracle has no update probe for it")
			apiservers := e.APIServers(ctx)
			ns := e.Namespace(ctx, "apiserver-signals")
			pod := e.StartedPod(ctx, ns, "resize", pool, probe.Apply, probe.Started)

			prom, err := e.PrometheusUp(ctx)
			Expect(err).NotTo(HaveOccurred(), "the suite's Prometheus")
			series := fixtures.SignalValidatorRejections.Series()
			query := "sum by (instance) (" + series + ")"
			read := func() map[string]float64 {
				GinkgoHelper()
				Expect(prom.WaitScrapedAfter(ctx, time.Now())).To(Succeed())
				byInstance, err := prom.SumByInstance(ctx, series, time.Now())
				Expect(err).NotTo(HaveOccurred())
				return byInstance
			}
			before := read()

			sent := map[string]int{}
			for i, a := range apiservers {
				n := i + 1
				By(fmt.Sprintf("%d updates to the apiserver on %s at %s alone, each rejected in the validator's words", n, a.Node, a.Endpoint))
				cs := a.Clientset(e)
				for j := range n {
					patch := probe.Patch
					if probe.Repeat != nil {
						patch = probe.Repeat(j)
					}
					res, err := probes.Update(ctx, cs, ns, pod.Name, probe.Subresource, patch)
					Expect(err).NotTo(HaveOccurred())
					Expect(res.Code).To(BeEquivalentTo(http.StatusForbidden), "apiserver on %s answered %d %s", a.Node, res.Code, res.Message)
					Expect(res.Message).To(Equal(fixtures.UpdateRejection(pod.Name, probe.Feature, pod.Spec.NodeName)), "apiserver on %s", a.Node)
				}
				sent[a.Instance()] = n
			}

			after := read()
			rose := map[string]float64{}
			for instance, v := range after {
				rose[instance] = v - before[instance]
			}
			seen := claims.CountedWhereAnsweredSeen(sent, rose)
			framework.RecordCell(cell, "", seen, fmt.Sprintf("%s: sent %v, rose %v", query, sent, rose))
			Expect(seen).To(Equal(cell.Expect), "%s: sent %v, rose %v", query, sent, rose)
		}, Serial)
	}
}

// rejectedUpdate is the first update cell's pool and probe where the
// validator must reject it.
func rejectedUpdate(t *topology.Topology) (topology.Pool, fixtures.FeatureUpdate, bool) {
	for _, c := range claims.RejectingUpdates(t) {
		probe, okProbe := fixtures.FeatureUpdateFor(framework.CPMinor(t), c.Feature)
		pool, okPool := framework.PoolWhere(t.Pools(), func(p topology.Pool) bool { return p.Name == c.Pool })
		if okProbe && okPool {
			return pool, probe, true
		}
	}
	return topology.Pool{}, fixtures.FeatureUpdate{}, false
}
