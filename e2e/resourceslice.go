//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/probes"
)

// ResourceSliceSpecInput is the input of ResourceSliceSpec.
type ResourceSliceSpecInput struct{ framework.SpecInput }

// ResourceSliceSpec proves NodeDeclaredFeatureValidator's other half
// (1.37+): a ResourceSlice whose device maps node allocatable resources to
// a node is admitted only where that node declares
// DRANodeAllocatableResources, and refused in the validator's words
// elsewhere; the same slice without them is admitted everywhere. Each
// write is a server-side dry run of every node of the pool: admission
// runs, nothing is stored, so no cell needs a pod or a namespace.
func ResourceSliceSpec(_ context.Context, inputGetter func() ResourceSliceSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("ResourceSliceSpec"); e = in.Env })

	cells := claims.Matrix(t)
	for _, pool := range t.Pools() {
		for _, cell := range claims.OfPool(cells, claims.ResourceSlice, pool.Name) {
			allocatable := cell.Feature == fixtures.DRANodeAllocatableResources
			text := fmt.Sprintf("a ResourceSlice without node allocatable resources for a node of %s is admitted", framework.PoolDesc(pool))
			switch {
			case !allocatable:
			case cell.Expect == claims.Created:
				text = fmt.Sprintf("a ResourceSlice that maps node allocatable resources to a node of %s, which declares %s, is admitted", framework.PoolDesc(pool), cell.Feature)
			default:
				text = fmt.Sprintf("a ResourceSlice that maps node allocatable resources to a node of %s, which does not declare %s, is rejected with 403 and the validator's message", framework.PoolDesc(pool), cell.Feature)
			}
			cellIt(cell, text, func(ctx SpecContext) {
				nodes := e.NodesOfPool(ctx, pool.Name)
				Expect(nodes).NotTo(BeEmpty(), "pool %s has no nodes", pool.Name)
				var seen []string
				for _, n := range nodes {
					name := "ndfq-" + n.Name
					By(fmt.Sprintf("a dry-run create of ResourceSlice %s for node %s", name, n.Name))
					res, err := probes.CreateSliceDryRun(ctx, e.Clientset, fixtures.ResourceSliceFor(name, n.Name, allocatable))
					Expect(err).NotTo(HaveOccurred())
					seen = append(seen, res.Answer())
					framework.RecordCell(cell, n.Name, res.Answer(), res.Message)
					Expect(res.Answer()).To(Equal(cell.Expect), "ResourceSlice %s for node %s (%s): %s", name, n.Name, pool.Name, res.Message)
					if cell.Expect == claims.Rejected {
						Expect(res.Message).To(Equal(fixtures.SliceRejection(name, n.Name)))
					}
				}
				By("every node of the pool answered " + strings.Join(seen, ", "))
			})
		}
	}
	sliceEdges(cells, func() *framework.Env { return e })
}

// sliceEdges are the slice's edge cases, once per control plane: a device
// mapped to a node that does not exist is refused by the validator in its
// words; one mapped to no node never reaches it (validation's 422).
func sliceEdges(cells []claims.Cell, env func() *framework.Env) {
	const absent = "ndfq-no-such-node"
	for _, cell := range append(claims.OfPool(cells, claims.ResourceSlice, claims.AbsentNode), claims.OfPool(cells, claims.ResourceSlice, claims.NoNode)...) {
		node, name := absent, "ndfq-absent-node"
		text := "a ResourceSlice that maps node allocatable resources to a node that does not exist is rejected with 403 and the validator's message"
		if cell.Pool == claims.NoNode {
			node, name = "", "ndfq-no-node"
			text = "a ResourceSlice whose device maps node allocatable resources to no node is refused by validation (422), before the validator"
		}
		cellIt(cell, text, func(ctx SpecContext) {
			res, err := probes.CreateSliceDryRun(ctx, env().Clientset, fixtures.ResourceSliceFor(name, node, true))
			Expect(err).NotTo(HaveOccurred())
			framework.RecordCell(cell, node, res.Answer(), res.Message)
			Expect(res.Answer()).To(Equal(cell.Expect), "ResourceSlice %s: %s", name, res.Message)
			if node != "" {
				Expect(res.Message).To(Equal(fixtures.SliceNodeNotFound(name, node)))
				return
			}
			Expect(res.Message).To(ContainSubstring(fixtures.SliceUnmapped))
		})
	}
}
