package claims

import "github.com/ndfq/ndfq/fixtures"

// NodeOperations: a pod whose ResourceClaim can only get a device that
// skips the kubelet's node operations is bound on the pool only where
// its nodes declare DRAOptionalNodeOperations (the scheduler's
// DynamicResources plugin, not NodeDeclaredFeatures, checks it).
const NodeOperations Kind = "dra-node-operations"

var nodeOperationsRow = Row{
	Kind: NodeOperations, Observed: InPass,
	Claim: "a pod whose claim can only get a device that skips node operations is bound on the pool only where its nodes declare DRAOptionalNodeOperations",
	Pool:  nodeOperationsCell,
}

// nodeOperationsCell is a pool's dra-node-operations cell: a pod whose
// claim can only get a device that skips node operations binds where the
// pool declares DRAOptionalNodeOperations. The apiserver must keep the
// slice's skipNodeOperations and the scheduler's allocator must know them.
func nodeOperationsCell(p PoolContext) []Cell {
	if !fixtures.Registers(p.CP, fixtures.DRAOptionalNodeOperations) {
		return nil
	}
	c := p.Cell(NodeOperations, fixtures.DRAOptionalNodeOperations)
	api, sched, k := p.API, p.Sched, p.K
	switch {
	case !api.Enables(fixtures.DRAOptionalNodeOperations):
		c.NotApplicable = "kube-apiserver has DRAOptionalNodeOperations off in this topology: it drops a slice's skipNodeOperations, so no device needs the feature"
	case !sched.Enables(fixtures.DRAOptionalNodeOperations):
		c.NotApplicable = "kube-scheduler has DRAOptionalNodeOperations off in this topology: its allocator gives no node a device that skips node operations"
	case k.Declares(fixtures.DRAOptionalNodeOperations):
		c.Expect = Bound
	default:
		c.Expect = Refused
	}
	return []Cell{c}
}
