package lifecycle

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ndfq/ndfq/clusters/kindconfig"
	"github.com/ndfq/ndfq/clusters/nodeimage"
	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/internal/wait"
)

// setOwnAPIServers lays each control-plane node's own apiserver settings
// (topology controlPlane.nodes) over the ones kubeadm joined it with, one
// node at a time. kubeadm join takes the cluster's ClusterConfiguration
// for every control-plane node, so a per-node flag can only come after it.
func (c *Cluster) setOwnAPIServers(ctx context.Context) error {
	own := c.Topology.OwnAPIServerSettings()
	for _, i := range slices.Sorted(maps.Keys(own)) {
		name := kindconfig.NodeName(c.Name, "control-plane", i)
		if err := c.RestartStaticPod(ctx, name, nodeimage.KubeAPIServer, own[i].FeatureGates, own[i].ExtraArgs); err != nil {
			return err
		}
	}
	return nil
}

// RestartStaticPod rewrites a control-plane component's flags on one node
// (surgery.SetStaticPodFlags: exactly these gates, args set or removed;
// the change must alter the manifest, or nothing restarts) and waits
// (wait-pod-running) until its mirror pod runs the new manifest and is
// Ready.
func (c *Cluster) RestartStaticPod(ctx context.Context, nodeName, component string, gates map[string]bool, args map[string]string) error {
	node, err := c.KindNode(nodeName)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(c.Client.RESTConfig())
	if err != nil {
		return err
	}
	mirror := component + "-" + nodeName
	before, err := wait.ForPodStarted(ctx, cs, metav1.NamespaceSystem, mirror, nil)
	if err != nil {
		return fmt.Errorf("%s before the restart: %w", mirror, err)
	}
	if _, err := surgery.SetStaticPodFlags(node, component, gates, args); err != nil {
		return err
	}
	restarted := func(p *corev1.Pod) bool {
		return configHash(p) != configHash(before) && p.Status.Phase == corev1.PodRunning && wait.PodReady(p)
	}
	if _, err := wait.ForPodStarted(ctx, cs, metav1.NamespaceSystem, mirror, restarted); err != nil {
		return fmt.Errorf("%s restarted with %s %v: %w", mirror, surgery.FormatGatesOrNone(gates), args, err)
	}
	return nil
}

// configHash is the kubelet's hash of a static pod's manifest, on its mirror pod.
func configHash(p *corev1.Pod) string { return p.Annotations["kubernetes.io/config.hash"] }

// flagProblems compares control-plane node i's apiserver arguments with
// the flags its own settings (want) set or remove.
func flagProblems(node string, args []string, want map[string]string, i int) []string {
	var p []string
	for k, v := range want {
		prefix := "--" + k + "="
		at := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, prefix) })
		switch {
		case v != "" && (at < 0 || args[at] != prefix+v):
			p = append(p, fmt.Sprintf("node %s: kube-apiserver lacks %s%s (controlPlane.nodes[%d])", node, prefix, v, i))
		case v == "" && at >= 0:
			p = append(p, fmt.Sprintf("node %s: kube-apiserver has %s, which controlPlane.nodes[%d] removes", node, args[at], i))
		}
	}
	slices.Sort(p)
	return p
}
