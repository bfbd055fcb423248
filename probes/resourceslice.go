package probes

import (
	"context"
	"fmt"

	authzv1 "k8s.io/api/authorization/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ndfq/ndfq/fixtures"
)

// CreateSliceDryRun creates the ResourceSlice as a server-side dry run
// (admission runs, nothing is stored) and returns the apiserver's answer:
// 201, or the code and message of its refusal. Node is the slice's node.
func CreateSliceDryRun(ctx context.Context, cs kubernetes.Interface, slice *resourcev1.ResourceSlice) (UpdateResult, error) {
	res := UpdateResult{}
	if slice.Spec.NodeName != nil {
		res.Node = *slice.Spec.NodeName
	}
	created, err := cs.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil {
		res.Code = 201
		if fixtures.MapsNodeAllocatable(slice) && !fixtures.MapsNodeAllocatable(created) {
			res.Dropped = "nodeAllocatableResources"
		}
		return res, nil
	}
	if answered(err, &res) {
		return res, nil
	}
	return res, fmt.Errorf("create ResourceSlice %s: %w", slice.Name, err)
}

// SliceKind marks a PoolUpdate that is a ResourceSlice write, not a pod update.
const SliceKind = "resourceslice"

// sliceAccess lets the probe ask for ResourceSlice writes as dry runs.
var sliceAccess = authzv1.ResourceAttributes{Verb: "create", Group: "resource.k8s.io", Resource: "resourceslices"}

// probesSlices is whether the run asks the validator's ResourceSlice half
// (DRANodeAllocatableResources, 1.37+, its gate on in the apiserver), and
// why not where it would but may not.
func (p *prober) probesSlices(ctx context.Context) (bool, string, error) {
	if !fixtures.Registers(p.minor, fixtures.DRANodeAllocatableResources) || !p.api.Enabled(fixtures.DRANodeAllocatableResources) ||
		!p.api.Enabled(fixtures.NodeDeclaredFeatures) {
		return false, "", nil
	}
	attr := sliceAccess
	ok, err := allowed(ctx, p.cs, authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attr})
	if err != nil || ok {
		return ok, "", err
	}
	return false, "the identity may not create resourceslices (config/rbac/probe.yaml grants it, for dry runs): whether NodeDeclaredFeatureValidator refuses a ResourceSlice that maps node allocatable resources to a node that does not declare DRANodeAllocatableResources is unchecked", nil
}

// sliceWrites asks, as dry runs through every apiserver, for a
// ResourceSlice that maps node allocatable resources to node and for the
// same slice without them (the control).
func (p *prober) sliceWrites(ctx context.Context, pool, node string) ([]PoolUpdate, error) {
	var out []PoolUpdate
	for i, allocatable := range []bool{false, true} {
		name := p.podName("rs", pool, i)
		slice := fixtures.ResourceSliceFor(name, node, allocatable)
		slice.Labels[RunLabel] = p.id
		feature := ""
		if allocatable {
			feature = fixtures.DRANodeAllocatableResources
		}
		ask := func(cs kubernetes.Interface) func(context.Context) (UpdateResult, error) {
			return func(ctx context.Context) (UpdateResult, error) { return CreateSliceDryRun(ctx, cs, slice) }
		}
		synthetic := pool == SyntheticPool
		by := map[string]Answer{}
		for ep, c := range p.apiservers {
			res, err := p.ask(ctx, synthetic, ask(c))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", ep, err)
			}
			by[ep] = Answer{Code: res.Code, Message: res.Message}
		}
		res, err := p.ask(ctx, synthetic, ask(p.cs))
		if err != nil {
			return nil, err
		}
		u := PoolUpdate{Pool: pool, Kind: SliceKind, Pod: name, Node: node, Feature: feature, Declares: p.declares(feature, node), Code: res.Code, Message: res.Message, Dropped: res.Dropped}
		if len(by) > 0 {
			u.ByAPIServer = by
		}
		out = append(out, u)
	}
	return out, nil
}
