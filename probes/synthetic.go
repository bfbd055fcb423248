package probes

import (
	"context"
	"fmt"
	"slices"
	"strings"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
)

// A fully rolled-out fleet declares every feature: no probe pod can be
// refused and no update rejected there, so the plugin and the validator
// are never seen. The probe then adds, for the seconds it needs, a Node
// object that declares nothing: no kubelet runs it, a taint only the
// probe's pods tolerate keeps every other pod off, and it is deleted
// with the run (also after Ctrl-C; `ndfq probe cleanup` removes one an
// earlier run left).

// SyntheticPool is the pseudo-pool of the synthetic node's probes.
const SyntheticPool = "synthetic-node"

// SyntheticTaint is the taint key that keeps every pod but the probe's
// off the synthetic node (NoSchedule and NoExecute, the run id as value).
const SyntheticTaint = "ndfq.io/probe-synthetic"

// syntheticGrant names the role that lets the probe add the node.
const syntheticGrant = "config/rbac/synthetic-node.yaml grants it"

// Synthetic is what the run did with a synthetic node.
type Synthetic struct {
	Node string `json:"node,omitempty"`
	// Unchecked says why a node that was needed was not added.
	Unchecked string `json:"unchecked,omitempty"`
	// Needed says what no real pool could show: "scheduling", "update" or both.
	Needed []string `json:"needed,omitempty"`
	// Evicted are pods of others found bound to it (DaemonSets that
	// tolerate every taint), removed with it.
	Evicted []string `json:"evicted,omitempty"`
}

// syntheticAccess is what adding and removing the node takes.
var syntheticAccess = []authzv1.ResourceAttributes{
	{Verb: "create", Resource: "nodes"},
	{Verb: "delete", Resource: "nodes"},
}

// syntheticNeeds are the probes no real pool can show refused: where every
// fresh pool declares every feature a probe of that kind needs. None where
// the apiserver has NodeDeclaredFeatures off: nothing is to refuse then.
func (p *prober) syntheticNeeds(pools map[string][]string, fresh map[string]bool) []string {
	if !p.api.Enabled(fixtures.NodeDeclaredFeatures) {
		return nil
	}
	lacks := func(features []string) bool {
		for pool, nodes := range pools {
			if !fresh[pool] {
				continue
			}
			for _, f := range features {
				if !p.declares(f, nodes...) {
					return true
				}
			}
		}
		return false
	}
	var sched, upd []string
	for _, sp := range p.schedulingProbes() {
		sched = append(sched, sp.Feature)
	}
	for _, u := range p.updateProbes() {
		upd = append(upd, u.Feature)
	}
	if p.slices {
		upd = append(upd, fixtures.DRANodeAllocatableResources)
	}
	var out []string
	if len(sched) > 0 && !lacks(sched) {
		out = append(out, "scheduling")
	}
	if len(upd) > 0 && !lacks(upd) {
		out = append(out, "update")
	}
	return out
}

// addSyntheticNode creates the node, or says why not (no grant).
func (p *prober) addSyntheticNode(ctx context.Context, needed []string) (Synthetic, error) {
	s := Synthetic{Needed: needed}
	for _, attr := range syntheticAccess {
		ok, err := allowed(ctx, p.cs, authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attr})
		if err != nil {
			return s, err
		}
		if !ok {
			s.Unchecked = fmt.Sprintf("every probed pool declares every feature probed at %s, and the identity may not %s nodes (%s) to add a node that declares nothing for the run",
				strings.Join(needed, " and "), attr.Verb, syntheticGrant)
			return s, nil
		}
	}
	node := SyntheticNode("ndfq-synthetic-"+p.id, p.id)
	if _, err := p.cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return s, fmt.Errorf("create synthetic node %s: %w", node.Name, err)
	}
	s.Node = node.Name
	return s, nil
}

// SyntheticNode is a Node object no kubelet runs: it declares nothing,
// has room for a few pods (the scheduler's resource filter needs some),
// and is tainted for the run's pods alone. It carries no
// kubernetes.io/os or arch label, so DaemonSets that select Linux nodes
// (most do, kube-proxy's among them) do not target it either.
func SyntheticNode(name, runID string) *corev1.Node {
	room := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("32")}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{RunLabel: runID, ManagedByLabel: ManagedBy, corev1.LabelHostname: name}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{
			{Key: SyntheticTaint, Value: runID, Effect: corev1.TaintEffectNoSchedule},
			{Key: SyntheticTaint, Value: runID, Effect: corev1.TaintEffectNoExecute},
		}},
		Status: corev1.NodeStatus{Capacity: room, Allocatable: room},
	}
}

// syntheticTolerations let the run's pods onto the synthetic node: its
// own taint, and the ones the node lifecycle controller adds to a node
// whose kubelet never reports.
func syntheticTolerations(runID string) []corev1.Toleration {
	var out []corev1.Toleration
	for _, e := range []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute} {
		out = append(out,
			corev1.Toleration{Key: SyntheticTaint, Operator: corev1.TolerationOpEqual, Value: runID, Effect: e},
			corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: e},
			corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: e})
	}
	return out
}

// removeSyntheticNode deletes the run's pods on the node at once (no
// kubelet will confirm a graceful deletion), then the node, then any
// other pod bound to it, which is an orphan from then on.
func removeSyntheticNode(ctx context.Context, cs kubernetes.Interface, node string) (evicted []string, err error) {
	onNode := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()}
	if err := cs.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("delete synthetic node %s: %w", node, err)
	}
	pods, err := cs.CoreV1().Pods("").List(ctx, onNode)
	if err != nil {
		return nil, fmt.Errorf("pods on synthetic node %s: %w", node, err)
	}
	for _, pod := range pods.Items {
		if pod.Spec.NodeName != node {
			continue // a field selector some servers (and fakes) do not apply
		}
		if pod.Labels[RunLabel] == "" {
			evicted = append(evicted, pod.Namespace+"/"+pod.Name)
		}
		if err := cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil && !apierrors.IsNotFound(err) {
			return evicted, fmt.Errorf("delete pod %s/%s from synthetic node %s: %w", pod.Namespace, pod.Name, node, err)
		}
	}
	slices.Sort(evicted)
	return evicted, nil
}

// validatorKnowsNode waits (wait-api) until the validator has the new node in
// its informer: right after a node appears it answers "node not found".
func validatorKnowsNode(ctx context.Context, node string, ask func(context.Context) (UpdateResult, error)) (UpdateResult, error) {
	var res UpdateResult
	err := wait.Until(ctx, wait.API, "the validator to know node "+node, func(ctx context.Context) (bool, string, error) {
		var err error
		if res, err = ask(ctx); err != nil {
			return false, "", err
		}
		return !strings.Contains(res.Message, fmt.Sprintf("node %q not found", node)), res.Message, nil
	})
	return res, err
}

// probeSynthetic sends the probes no real pool could show refused to the
// synthetic node: each scheduling probe's pod (with the control) through
// the default scheduler, and each update probe's update (with the
// controls) to a pod bound there directly.
func (p *prober) probeSynthetic(ctx context.Context, needed []string) ([]PoolProbe, []PoolUpdate, error) {
	steer := steering("", SyntheticPool, []string{p.synthetic}, true)
	var placements []PoolProbe
	var updates []PoolUpdate
	var err error
	if slices.Contains(needed, "scheduling") {
		if placements, err = p.placeAll(ctx, SyntheticPool, steer, []string{p.synthetic}, ""); err != nil {
			return nil, nil, err
		}
	}
	if slices.Contains(needed, "update") {
		if updates, err = p.updateAll(ctx, SyntheticPool, steer); err != nil {
			return nil, nil, err
		}
		if p.slices {
			writes, err := p.sliceWrites(ctx, SyntheticPool, p.synthetic)
			if err != nil {
				return nil, nil, err
			}
			updates = append(updates, writes...)
		}
	}
	return placements, updates, nil
}
