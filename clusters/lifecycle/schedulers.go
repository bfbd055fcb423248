package lifecycle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ndfq/ndfq/clusters/kindconfig"
	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/internal/wait"
)

// startExtraSchedulers runs the topology's extra kube-schedulers as static
// pods on the control-plane node and waits (wait-pod-running) until each
// mirror pod runs.
func (c *Cluster) startExtraSchedulers(ctx context.Context) error {
	cpName := kindconfig.NodeName(c.Name, "control-plane", 0)
	cp, err := c.KindNode(cpName)
	if err != nil {
		return err
	}
	extra := c.Topology.ControlPlane.ExtraSchedulers
	for i, s := range extra {
		if err := surgery.StartExtraScheduler(cp, s, surgery.ExtraSchedulerPortBase+i); err != nil {
			return fmt.Errorf("extra scheduler %s: %w", s.Name, err)
		}
	}
	cs, err := kubernetes.NewForConfig(c.Client.RESTConfig())
	if err != nil {
		return err
	}
	// Running is enough: the extra schedulers have no readiness probe.
	running := func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning }
	for _, s := range extra {
		if _, err := wait.ForPodStarted(ctx, cs, "kube-system", s.Name+"-"+cpName, running); err != nil {
			return fmt.Errorf("extra scheduler %s: %w", s.Name, err)
		}
	}
	return nil
}
