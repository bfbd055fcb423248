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
	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/internal/wait"
)

const kubeAPIServer = "kube-apiserver"

// setOwnAPIServers lays each control-plane node's own apiserver settings
// (topology controlPlane.nodes) over the ones kubeadm joined it with, one
// node at a time, and waits (wait-pod-running) until each restarted
// apiserver is Ready. kubeadm join takes the cluster's ClusterConfiguration
// for every control-plane node, so a per-node flag can only come after it.
func (c *Cluster) setOwnAPIServers(ctx context.Context) error {
	own := c.Topology.OwnAPIServerSettings()
	cs, err := kubernetes.NewForConfig(c.Client.RESTConfig())
	if err != nil {
		return err
	}
	for _, i := range slices.Sorted(maps.Keys(own)) {
		name := kindconfig.NodeName(c.Name, "control-plane", i)
		node, err := c.KindNode(name)
		if err != nil {
			return err
		}
		mirror := kubeAPIServer + "-" + name
		before, err := wait.ForPodStarted(ctx, cs, metav1.NamespaceSystem, mirror, nil)
		if err != nil {
			return fmt.Errorf("%s before its own settings: %w", mirror, err)
		}
		if _, err := surgery.SetStaticPodFlags(node, kubeAPIServer, own[i].FeatureGates, own[i].ExtraArgs); err != nil {
			return err
		}
		restarted := func(p *corev1.Pod) bool {
			return configHash(p) != configHash(before) && p.Status.Phase == corev1.PodRunning && wait.PodReady(p)
		}
		if _, err := wait.ForPodStarted(ctx, cs, metav1.NamespaceSystem, mirror, restarted); err != nil {
			return fmt.Errorf("%s with its own settings: %w", mirror, err)
		}
	}
	return nil
}

// configHash is the kubelet's hash of a static pod's manifest, on its mirror pod.
func configHash(p *corev1.Pod) string { return p.Annotations["kubernetes.io/config.hash"] }

// ownAPIServerProblems compares control-plane node i's apiserver
// arguments with the flags its own settings set or remove.
func (c *Cluster) ownAPIServerProblems(node string, args []string, i int) []string {
	var p []string
	for k, v := range c.Topology.OwnAPIServerSettings()[i].ExtraArgs {
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
