package claims

import "github.com/ndfq/ndfq/fixtures"

// Streaming: exec, attach, port-forward and logs reach a pod on the
// pool, and the apiserver routes the WebSocket streams to its kubelet
// as the node's ExtendWebSocketsToKubelet says.
const Streaming Kind = "streaming"

// streamingRow: each streaming operation is served on the pool, and where
// the control plane routes streams, the route follows the node's
// ExtendWebSocketsToKubelet.
var streamingRow = Row{
	Kind: Streaming, Observed: InSharedPass,
	Claim: "exec, attach, port-forward and logs are served on the pool, routed to the kubelet only where its node declares ExtendWebSocketsToKubelet",
	Pool: func(p PoolContext) []Cell {
		var out []Cell
		for _, op := range fixtures.StreamOps {
			c := p.Cell(Streaming, ControlFeature(string(op)))
			c.Expect = Served
			out = append(out, c)
		}
		if fixtures.RoutesStreams(p.CP) {
			c := p.Cell(Streaming, fixtures.ExtendWebSocketsToKubelet)
			c.Expect = fixtures.ExpectedRoutes(p.API, p.K.Declares(fixtures.ExtendWebSocketsToKubelet))
			out = append(out, c)
		}
		return out
	},
}
