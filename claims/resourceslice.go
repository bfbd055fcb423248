package claims

import (
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
)

// ResourceSlice: NodeDeclaredFeatureValidator admits a ResourceSlice
// that maps node allocatable resources to a node of the pool (201)
// only where the node declares DRANodeAllocatableResources (else 403).
const ResourceSlice Kind = "resourceslice"

// resourceSliceRow: NodeDeclaredFeatureValidator on ResourceSlices that
// map node allocatable resources, per pool and at its edges.
var resourceSliceRow = Row{
	Kind: ResourceSlice, Observed: BySpec,
	Claim: "a ResourceSlice mapping node allocatable resources to the pool's node is created (201) only where the node declares DRANodeAllocatableResources (else 403)",
	Pool:  sliceCells, Edges: sliceEdges,
}

// SliceControl is the control cell of the resourceslice kind: a slice of
// the same node without node allocatable resources needs nothing.
var SliceControl = ControlFeature("a slice without node allocatable resources")

// sliceCells are a pool's resourceslice cells where the control plane's
// registry has DRANodeAllocatableResources (1.37+): the control, and a
// slice that maps node allocatable resources to the pool's node.
func sliceCells(p PoolContext) []Cell {
	if !fixtures.Registers(p.CP, fixtures.DRANodeAllocatableResources) {
		return nil
	}
	ctl := p.Cell(ResourceSlice, SliceControl)
	ctl.Expect = Created
	c := p.Cell(ResourceSlice, fixtures.DRANodeAllocatableResources)
	if c.NotApplicable = whyNoSliceNeeds(p.API); c.NotApplicable == "" {
		c.Expect = Rejected
		if p.K.Declares(fixtures.DRANodeAllocatableResources) {
			c.Expect = Created
		}
	}
	return []Cell{ctl, c}
}

// whyNoSliceNeeds says why no slice can need DRANodeAllocatableResources
// of this apiserver's validator; "" where one can.
func whyNoSliceNeeds(api fixtures.Component) string {
	switch {
	case !api.Enables(fixtures.NodeDeclaredFeatures):
		return "kube-apiserver has NodeDeclaredFeatures off in this topology: NodeDeclaredFeatureValidator admits every slice"
	case !api.Enables(fixtures.DRANodeAllocatableResources):
		return "kube-apiserver has DRANodeAllocatableResources off in this topology: it drops nodeAllocatableResources, so no slice can need the feature"
	}
	return ""
}

// sliceEdges are the resourceslice edge cases, once per 1.37+ control
// plane: a device mapped to a node that does not exist (the validator's
// 403) and to no node at all (validation's 422, before the validator).
func sliceEdges(t *topology.Topology) []Cell {
	if !fixtures.Registers(t.ControlPlaneVersion().Minor(), fixtures.DRANodeAllocatableResources) {
		return nil
	}
	var out []Cell
	for _, e := range [][2]string{{AbsentNode, Rejected}, {NoNode, Invalid}} {
		c := Cell{Kind: ResourceSlice, Pool: e[0], Feature: fixtures.DRANodeAllocatableResources}
		if c.NotApplicable = whyNoSliceNeeds(t.APIServer()); c.NotApplicable == "" {
			c.Expect = e[1]
		}
		out = append(out, c)
	}
	return out
}
