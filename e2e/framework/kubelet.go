package framework

import (
	"context"
	"fmt"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
)

// RestoreKubelet puts a node's kubelet back as the topology has it
// (swapped: the image's own binary too), uncordons it, and checks it
// declares the intended set again. Specs register it with DeferCleanup.
func (e *Env) RestoreKubelet(ctx context.Context, pool topology.Pool, name string, node nodes.Node, swapped bool) {
	GinkgoHelper()
	e.StartRestore(ctx, pool, name, node, swapped)
	e.FinishRestore(ctx, pool, name)
}

// StartRestore is RestoreKubelet's first half: the kubelet restarted as
// the topology has it and the node uncordoned, without waiting; a wave
// starts every node's restore before it waits for any.
func (e *Env) StartRestore(ctx context.Context, pool topology.Pool, name string, node nodes.Node, swapped bool) {
	GinkgoHelper()
	if swapped {
		_, err := surgery.WriteKubeletGates(node, pool.Kubelet.FeatureGates)
		Expect(err).NotTo(HaveOccurred())
		Expect(surgery.SwapKubelet(node, "")).To(Succeed())
	} else {
		_, err := surgery.SetKubeletGates(node, pool.Kubelet.FeatureGates)
		Expect(err).NotTo(HaveOccurred())
	}
	Expect(surgery.Cordon(ctx, e.Clientset, name, false)).To(Succeed())
}

// FinishRestore waits until the restarted kubelet runs as the topology
// has it and the node declares the intended set again.
func (e *Env) FinishRestore(ctx context.Context, pool topology.Pool, name string) {
	GinkgoHelper()
	e.WaitKubelet(ctx, name, pool.PoolVersion().String(), pool.Kubelet.FeatureGates)
	if !pool.Intent().Publishes() {
		// A kubelet that publishes nothing never clears what another wrote.
		Expect(e.PatchDeclared(ctx, name, nil)).To(Succeed())
	}
	e.WaitDeclared(ctx, name, pool.Intent().MustDeclare())
}

// DropInput is the safe procedure for the suite's probe pods on a node of
// pool whose kubelet is to become after: bare pods are recreated as
// "<name>-moved" on another pool that must declare what they need, and is
// none of avoid (a wave's other subjects, about to lose it too).
func (e *Env) DropInput(pool topology.Pool, name string, node nodes.Node, after fixtures.Kubelet, avoid ...string) surgery.DropInput {
	t := e.Topology
	return surgery.DropInput{
		Clientset: e.Clientset, Node: node, NodeName: name, Gates: after.Gates,
		Losing:              lostFeatures(after),
		ControlPlaneVersion: t.ControlPlaneVersion().String(),
		Log:                 e.Log,
		Replace: func(ctx context.Context, old *corev1.Pod) (*corev1.Pod, error) {
			needs, err := fixtures.PodNeeds(old, t.ControlPlaneVersion().String())
			if err != nil {
				return nil, err
			}
			target, ok := PoolWhere(t.Pools(), func(p topology.Pool) bool {
				for _, f := range needs {
					if !p.Intent().Declares(f) {
						return false
					}
				}
				return p.Name != pool.Name && !slices.Contains(avoid, p.Name)
			})
			if !ok {
				return nil, fmt.Errorf("no other pool declares %v", needs)
			}
			repl := fixtures.BasePod(old.Name+"-moved", topology.PoolLabel, target.Name)
			repl.Spec.Containers = withoutServiceAccountMounts(old.Spec.Containers)
			return e.Clientset.CoreV1().Pods(old.Namespace).Create(ctx, repl, metav1.CreateOptions{})
		},
	}
}

// lostFeatures is every registry feature the kubelet after will not
// declare: pods that need one must leave first, whatever the node
// declares now (it may hold stale declarations).
func lostFeatures(after fixtures.Kubelet) []string {
	var out []string
	for _, f := range fixtures.Registry {
		if !after.Declares(f.Name) {
			out = append(out, f.Name)
		}
	}
	return out
}

// withoutServiceAccountMounts copies containers without the token volume
// the apiserver injected into the original; the replacement gets its own.
func withoutServiceAccountMounts(cs []corev1.Container) []corev1.Container {
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		c = *c.DeepCopy()
		var mounts []corev1.VolumeMount
		for _, m := range c.VolumeMounts {
			if !strings.HasPrefix(m.Name, "kube-api-access-") {
				mounts = append(mounts, m)
			}
		}
		c.VolumeMounts = mounts
		out[i] = c
	}
	return out
}

// SetPoolKubelets restarts every node of a pool as kubelet and waits until
// each reports its gates and declares what the oracle says for them;
// clear first removes what an earlier kubelet left.
func (e *Env) SetPoolKubelets(ctx context.Context, pool topology.Pool, kubelet fixtures.Kubelet, clear bool) {
	GinkgoHelper()
	for _, d := range e.PoolDeclarations(ctx, pool) {
		node, err := e.Cluster.KindNode(d.Node)
		Expect(err).NotTo(HaveOccurred())
		e.evidence.node(d.Node)
		_, err = surgery.SetKubeletGates(node, kubelet.Gates)
		Expect(err).NotTo(HaveOccurred())
		e.WaitKubelet(ctx, d.Node, "", kubelet.Gates)
		if clear {
			Expect(e.PatchDeclared(ctx, d.Node, nil)).To(Succeed())
		}
		if want := kubelet.MustDeclare(); want != nil {
			e.WaitDeclared(ctx, d.Node, want)
		}
	}
}
