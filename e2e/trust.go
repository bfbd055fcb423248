//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/probes"
)

// TrustSpecInput is the input of TrustSpec.
type TrustSpecInput struct{ framework.SpecInput }

// TrustSpec proves the write path's trust boundary: with one node's own
// kubelet credentials, read from that node, a write of its own node's
// declaredFeatures is admitted and one of another node's is refused by
// NodeRestriction, in its words. Every write is a server-side dry run.
func TrustSpec(_ context.Context, inputGetter func() TrustSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("TrustSpec"); e = in.Env })

	for _, c := range claims.Matrix(t) {
		if c.Kind != claims.Trust {
			continue
		}
		cell := c
		text := fmt.Sprintf("the kubelet credentials of a node of pool %s (%s) may write %s", cell.Pool, cell.Kubelet, cell.Feature)
		if cell.Expect == claims.Rejected {
			text = fmt.Sprintf("the kubelet credentials of a node of pool %s (%s) may not write %s: NodeRestriction refuses it with 403", cell.Pool, cell.Kubelet, cell.Feature)
		}
		cellIt(cell, text, func(ctx SpecContext) {
			own := e.NodesOfPool(ctx, cell.Pool)
			Expect(own).NotTo(BeEmpty(), "pool %s has no nodes", cell.Pool)
			node := own[0]
			target := node.Name
			if cell.Feature == claims.AnotherNode {
				target = e.NodeOutsidePool(ctx, cell.Pool)
			}
			By(fmt.Sprintf("as system:node:%s, a dry-run patch of %s's status.declaredFeatures", node.Name, target))
			cs := e.KubeletClient(ctx, node.Name)
			res, err := probes.WriteDeclaredDryRun(ctx, cs, target, []string{fixtures.RestartAllContainersOnContainerExits})
			Expect(err).NotTo(HaveOccurred())
			seen := fmt.Sprint(res.Code)
			framework.RecordCell(cell, node.Name, seen, res.Message)
			if cell.Expect == claims.Admitted {
				Expect(res.Code).To(BeEquivalentTo(http.StatusOK), "node %s writing its own status: %d %s", node.Name, res.Code, res.Message)
				return
			}
			Expect(res.Code).To(BeEquivalentTo(http.StatusForbidden), "node %s writing node %s's declaredFeatures was answered %d %s", node.Name, target, res.Code, res.Message)
			Expect(res.Message).To(Equal(fixtures.NodeRestrictionRefusal(node.Name, target)), "the refusal must be NodeRestriction's")
		})
	}
}
