//go:build e2e

package e2e

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/report"
)

var _ = Describe("Node declarations", ndf, Label("declaration"), func() {
	for _, pool := range poolsOf(suiteTopology) {
		pool := pool
		want := intendedSet(pool)
		claim := fmt.Sprintf("every node of %s declares exactly %s, what its kubelet minor and its reported gates require", poolDesc(pool), describeSet(want))
		if !kubeletPublishes(pool) {
			claim = fmt.Sprintf("no node of %s publishes declaredFeatures (its kubelet has NodeDeclaredFeatures off or does not know it)", poolDesc(pool))
		}
		It(claim, func(ctx SpecContext) {
			for _, d := range declarationsOfPool(ctx, pool) {
				record(report.Observation{Kind: report.KindDeclaration, Pool: pool.Name, Kubelet: d.KubeletVersion, Node: d.Node, Digest: d.Digest, Set: d.Declared, OK: d.Matches()})
				Expect(d.Missing).To(BeEmpty(), "node %s (%s, kubelet %s) misses %v: declared %v, oracle %v for gates it reports", d.Node, pool.Name, d.KubeletVersion, d.Missing, d.Declared, d.Expected)
				Expect(d.Extra).To(BeEmpty(), "node %s (%s, kubelet %s) declares %v beyond the oracle: declared %v, oracle %v", d.Node, pool.Name, d.KubeletVersion, d.Extra, d.Declared, d.Expected)
				Expect(d.Published).To(Equal(len(d.Expected) > 0),
					"node %s (%s): published=%v with NodeDeclaredFeatures %s", d.Node, pool.Name, d.Published, d.Gates.Describe("NodeDeclaredFeatures"))
				Expect(d.Expected).To(ConsistOf(toAny(want)...), "the topology's intent for %s and the gates its kubelet on %s reports disagree", pool.Name, d.Node)
			}
		})
	}

	It("every pool's nodes share one declared set (one digest per pool)", func(ctx SpecContext) {
		for _, pool := range poolsOf(suiteTopology) {
			digests := map[string][]string{}
			for _, d := range declarationsOfPool(ctx, pool) {
				digests[d.Digest] = append(digests[d.Digest], d.Node)
			}
			Expect(digests).To(HaveLen(1), "pool %s has %d different declared sets: %v", pool.Name, len(digests), digests)
		}
	})
})

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
