//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/report"
)

// DeclarationsSpecInput is the input of DeclarationsSpec.
type DeclarationsSpecInput struct{ framework.SpecInput }

// DeclarationsSpec proves each node declares exactly what the oracle says
// for its kubelet's minor and the gates that kubelet reports.
func DeclarationsSpec(_ context.Context, inputGetter func() DeclarationsSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("DeclarationsSpec"); e = in.Env })

	for _, pool := range t.Pools() {
		want := pool.Intent().MustDeclare()
		claim := fmt.Sprintf("every node of %s declares exactly %s, what its kubelet minor and its reported gates require", framework.PoolDesc(pool), framework.DescribeSet(want))
		if !pool.Intent().Publishes() {
			claim = fmt.Sprintf("no node of %s publishes declaredFeatures (its kubelet has NodeDeclaredFeatures off or does not know it)", framework.PoolDesc(pool))
		}
		It(claim, func(ctx SpecContext) {
			for _, d := range e.PoolDeclarations(ctx, pool) {
				framework.Record(report.Observation{Kind: report.KindDeclaredSet, Pool: pool.Name, Kubelet: d.KubeletVersion, Runtime: d.Runtime, Node: d.Node, Digest: d.Digest, Set: d.Declared, OK: d.Matches()})
				Expect(d.Missing).To(BeEmpty(), "node %s (%s, kubelet %s) misses %v: declared %v, oracle %v for gates it reports", d.Node, pool.Name, d.KubeletVersion, d.Missing, d.Declared, d.Expected)
				Expect(d.Extra).To(BeEmpty(), "node %s (%s, kubelet %s) declares %v beyond the oracle: declared %v, oracle %v", d.Node, pool.Name, d.KubeletVersion, d.Extra, d.Declared, d.Expected)
				Expect(d.Published).To(Equal(len(d.Expected) > 0),
					"node %s (%s): published=%v with NodeDeclaredFeatures %s", d.Node, pool.Name, d.Published, d.Gates.Describe("NodeDeclaredFeatures"))
				Expect(framework.SortedCopy(d.Expected)).To(Equal(framework.SortedCopy(want)), "the topology's intent for %s and the gates its kubelet on %s reports disagree", pool.Name, d.Node)
			}
		})
	}

	// A cell per registry feature per pool: the pool's nodes declare it or
	// not, as the oracle says for the pool's kubelet (each cell one list of
	// the pool's nodes); and, for a feature no pod spec or update needs,
	// the path that needs it, listed as not covered until a claim kind asks it.
	for _, c := range claims.Matrix(t) {
		if c.Kind != claims.Declares && c.Kind != claims.Path {
			continue
		}
		cell, pool := c, c.Pool
		text := fmt.Sprintf("the nodes of pool %s (%s) declare %s", pool, cell.Kubelet, cell.Feature)
		switch {
		case cell.Kind == claims.Path:
			text = fmt.Sprintf("what needs %s on pool %s (%s)", cell.Feature, pool, cell.Kubelet)
		case cell.Expect == claims.Absent:
			text = fmt.Sprintf("the nodes of pool %s (%s) do not declare %s", pool, cell.Kubelet, cell.Feature)
		}
		cellIt(cell, text, func(ctx SpecContext) {
			nodes := e.NodesOfPool(ctx, pool)
			Expect(nodes).NotTo(BeEmpty(), "pool %s has no nodes", pool)
			for _, n := range nodes {
				seen := claims.Absent
				if slices.Contains(n.Status.DeclaredFeatures, cell.Feature) {
					seen = claims.Declared
				}
				framework.RecordCell(cell, n.Name, seen, "kubelet "+n.Status.NodeInfo.KubeletVersion)
				Expect(seen).To(Equal(cell.Expect), "node %s (pool %s, kubelet %s) declares %v", n.Name, pool, n.Status.NodeInfo.KubeletVersion, n.Status.DeclaredFeatures)
			}
		})
	}

	It("every pool's nodes share one declared set (one digest per pool)", func(ctx SpecContext) {
		for _, pool := range t.Pools() {
			digests := map[string][]string{}
			for _, d := range e.PoolDeclarations(ctx, pool) {
				digests[d.Digest] = append(digests[d.Digest], d.Node)
			}
			Expect(digests).To(HaveLen(1), "pool %s has %d different declared sets: %v", pool.Name, len(digests), digests)
		}
	})
}
