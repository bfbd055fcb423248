package claims

import (
	"fmt"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
)

// Update: the apiserver admits (200) or rejects (403) an update of a pod on the pool.
const Update Kind = "update"

// updateRow: control updates are admitted (or refused by validation); an
// update that needs a feature is admitted where the pool declares it and
// rejected by NodeDeclaredFeatureValidator elsewhere; and the validator's
// edges, once per control plane.
var updateRow = Row{
	Kind: Update, Observed: InPass,
	Claim: "an update of a pod on the pool that needs a feature is admitted (200) where its node declares it and rejected (403) in NodeDeclaredFeatureValidator's words elsewhere",
	Pool: func(p PoolContext) []Cell {
		var out []Cell
		for _, ctl := range fixtures.ControlUpdates() {
			c := p.Cell(Update, ControlFeature(ctl.Name))
			c.Expect = Admitted
			if ctl.Invalid != nil && ctl.Invalid(p.API) != "" {
				c.Expect = Invalid
			}
			out = append(out, c)
		}
		for _, f := range updateFeatures(p.CP) {
			c := p.Cell(Update, f.name)
			switch {
			case f.updateForbidden != "":
				c.NotApplicable = f.updateForbidden
			case !f.probed:
				c.Uncovered = "fixtures have no update probe for it yet (" + f.inference + ")"
			case !p.API.Enables(fixtures.NodeDeclaredFeatures):
				c.NotApplicable = "kube-apiserver has NodeDeclaredFeatures off in this topology: NodeDeclaredFeatureValidator admits every update"
			case !p.API.Enables(f.apiGate):
				c.NotApplicable = fmt.Sprintf("kube-apiserver has %s off in this topology: no update can need %s", f.apiGate, f.name)
			case p.K.Declares(f.name) || !p.K.Requires(f.name):
				// Past the feature's MaxVersion the validator asks nothing of the node.
				c.Expect = Admitted
			default:
				c.Expect, c.UpstreamBug = Rejected, f.upstreamBug
			}
			out = append(out, c)
		}
		return out
	},
	Edges: func(t *topology.Topology) []Cell { return append(validatorEdges(t), subresourceEdges(t)...) },
}

// The validator's edge cases are update cells of no pool: a pod bound to
// a node that does not exist, and a pod bound to none.
const (
	AbsentNode = "(a node that does not exist)"
	NoNode     = "(no node)"
)

// validatorEdges are NodeDeclaredFeatureValidator's edge cases, once per
// control plane, with the first update fixtures have that this apiserver
// lets need a feature: a pod bound to a node that does not exist is
// refused (403 "node not found"); a pod bound to none is not its to judge
// (admitted).
func validatorEdges(t *topology.Topology) []Cell {
	cp, api := t.ControlPlaneVersion().Minor(), t.APIServer()
	var feature string
	for _, f := range updateFeatures(cp) {
		if f.probed && f.updateForbidden == "" && api.Enables(f.apiGate) {
			feature = f.name
			break
		}
	}
	var out []Cell
	for _, e := range [][2]string{{AbsentNode, Rejected}, {NoNode, Admitted}} {
		c := Cell{Kind: Update, Pool: e[0], Feature: feature, Expect: e[1]}
		switch {
		case !api.Enables(fixtures.NodeDeclaredFeatures):
			c.Expect, c.NotApplicable = "", "kube-apiserver has NodeDeclaredFeatures off in this topology: NodeDeclaredFeatureValidator admits every update"
		case feature == "":
			c.Expect, c.Feature, c.NotApplicable = "", NoFeature, "no update fixtures have can need a feature on this control plane"
		}
		out = append(out, c)
	}
	return out
}

// The validator judges updates of a pod's spec and its resize subresource
// only (plugin/pkg/admission/nodedeclaredfeatures: subresource "" or
// "resize"). Its skips are update cells of no pool, once per control plane.
const (
	StatusSubresource    = "(the status subresource)"
	EphemeralSubresource = "(the ephemeralcontainers subresource)"
	// StatusChange and AnEphemeralContainer are their cells' features
	// where no feature is asked.
	StatusChange         = "(a status change)"
	AnEphemeralContainer = "(an ephemeral container)"
)

// EphemeralFeature is what an ephemeral container may carry that a pod
// placed on the node would need: bindMountOptions (VolumeBindMountOptions).
// Its InferForUpdate is false, so nothing asks the node when an ephemeral
// container brings it (F25).
const EphemeralFeature = fixtures.VolumeBindMountOptions

// subresourceEdges: a status update is not the validator's (and needs no
// feature, so nothing can show it); an ephemeral container with
// bindMountOptions is admitted for a pod on a node that lacks the feature.
func subresourceEdges(t *topology.Topology) []Cell {
	cp, api := t.ControlPlaneVersion().Minor(), t.APIServer()
	status := Cell{Kind: Update, Pool: StatusSubresource, Feature: StatusChange,
		NotApplicable: "a status update changes no spec, so no feature's InferForUpdate can need anything of the node: the validator's skip of the status subresource cannot be seen"}
	eph := Cell{Kind: Update, Pool: EphemeralSubresource, Feature: EphemeralFeature, Expect: Admitted}
	switch {
	case !api.Enables(fixtures.NodeDeclaredFeatures):
		const off = "kube-apiserver has NodeDeclaredFeatures off in this topology: NodeDeclaredFeatureValidator admits every update"
		status.NotApplicable = off
		eph.Feature, eph.Expect, eph.NotApplicable = AnEphemeralContainer, "", off
	case !fixtures.Registers(cp, EphemeralFeature):
		eph.Feature, eph.Expect, eph.NotApplicable = AnEphemeralContainer, "", "no feature of "+cp+" has a field an ephemeral container may carry"
	case !api.Enables(EphemeralFeature):
		eph.Expect, eph.NotApplicable = "", "kube-apiserver has "+EphemeralFeature+" off in this topology: it drops bindMountOptions, so no ephemeral container can carry them"
	}
	out := []Cell{status, eph}
	if fixtures.Registers(cp, fixtures.SecurityProfileOCI) {
		out = append(out, Cell{Kind: Update, Pool: EphemeralSubresource, Feature: fixtures.SecurityProfileOCI,
			Uncovered: "an ephemeral container that adds the pod's first OCI seccomp profile needs it (InferForUpdate), the validator skips the subresource and the kubelet's FailedNodeDeclaredFeaturesCheck event is what remains; ndfq's k8s.io/api (v0.37) has no OCI seccomp profile and no 1.38 kubelet builds here (F5)"})
	}
	return out
}
