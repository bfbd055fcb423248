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

// StreamingSpecInput is the input of StreamingSpec.
type StreamingSpecInput struct{ framework.SpecInput }

// StreamingSpec proves every kind of kubelet still serves exec, attach,
// port-forward and logs as kubectl sends them (WebSockets, no SPDY
// fallback), and that the apiserver hands a stream to the kubelet only
// where the node declares ExtendWebSocketsToKubelet, as its
// apiserver_websocket_streaming_requests_total records. One pod per pool
// answers all its cells, in the suite's pass.
func StreamingSpec(_ context.Context, inputGetter func() StreamingSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("StreamingSpec"); e = in.Env })
	env := func() *framework.Env { return e }

	cells := claims.Matrix(t)
	routes := fixtures.RoutesStreams(framework.CPMinor(t))
	claimOf := map[fixtures.StreamOp]string{
		fixtures.StreamExec:        "exec in a pod on %s over WebSocket runs its command and returns its output",
		fixtures.StreamAttach:      "attach to a pod on %s over WebSocket carries its stdin and stdout",
		fixtures.StreamPortForward: "port-forward to a pod on %s over WebSocket reaches its port",
		fixtures.StreamLogs:        "logs of a pod on %s are served",
	}
	for _, pool := range t.Pools() {
		group := "streaming/" + pool.Name
		observe := framework.ObserveStreaming(pool, routes)
		for _, op := range fixtures.StreamOps {
			cell := claims.Find(cells, claims.Streaming, pool.Name, claims.ControlFeature(string(op)))
			sharedPassCellIt(group, cell, fmt.Sprintf(claimOf[op], framework.PoolDesc(pool)), streamingOrder, env, observe, func(ctx SpecContext, o framework.Observation) {
				s := streamOutcome(o, op)
				seen := claims.Served
				if !s.Served {
					seen = "not served"
				}
				framework.RecordCell(cell, o.Node, seen, s.Detail)
				Expect(s.Served).To(BeTrue(), "%s on node %s (%s): %s", op, o.Node, pool.Name, s.Detail)
			})
		}
		if !routes {
			continue
		}
		cell := claims.Find(cells, claims.Streaming, pool.Name, fixtures.ExtendWebSocketsToKubelet)
		which := "which does not declare it"
		if cell.Expect == fixtures.ProxiedToKubelet {
			which = "which declares it"
		}
		text := fmt.Sprintf("the apiserver routes WebSocket streams to a pod on %s, %s, as %s (ExtendWebSocketsToKubelet)", framework.PoolDesc(pool), which, cell.Expect)
		sharedPassCellIt(group, cell, text, streamingOrder, env, observe, func(ctx SpecContext, o framework.Observation) {
			got := map[fixtures.StreamOp]string{}
			for _, s := range o.Streams {
				got[s.Op] = s.Route
			}
			seen := fixtures.RoutesText(got)
			framework.RecordCell(cell, o.Node, seen, "apiserver_websocket_streaming_requests_total, counted before and after the pod's streams")
			Expect(seen).To(Equal(cell.Expect), "how the apiservers recorded routing exec, attach and port-forward to node %s (%s)", o.Node, pool.Name)
		})
	}
}

// streamOutcome is op's outcome in the observation; an observation
// without it is a failure to observe, said as one.
func streamOutcome(o framework.Observation, op fixtures.StreamOp) framework.StreamOutcome {
	GinkgoHelper()
	for _, s := range o.Streams {
		if s.Op == op {
			return s
		}
	}
	Fail(fmt.Sprintf("the observation of cell %s has no %s outcome", o.Cell, op))
	return framework.StreamOutcome{}
}
