package lifecycle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/ndfq/ndfq/clusters/kindconfig"
	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/internal/wait"
)

// startExtraSchedulers runs the topology's extra kube-schedulers as static
// pods on the control-plane node and waits (wait-pod-running) until each
// mirror pod runs.
func (c *Cluster) startExtraSchedulers(ctx context.Context) error {
	extra := c.Topology.ControlPlane.ExtraSchedulers
	if len(extra) == 0 {
		return nil
	}
	cpName := kindconfig.NodeName(c.Name, "control-plane", 0)
	cp, err := c.KindNode(cpName)
	if err != nil {
		return err
	}
	for _, s := range extra {
		if err := surgery.StartExtraScheduler(cp, s); err != nil {
			return fmt.Errorf("extra scheduler %s: %w", s.Name, err)
		}
	}
	for _, s := range extra {
		mirror := s.Name + "-" + cpName
		err := wait.Until(ctx, wait.PodRunning, "extra scheduler "+mirror+" running", func(ctx context.Context) (bool, string, error) {
			var pod corev1.Pod
			if err := c.Client.Resources("kube-system").Get(ctx, mirror, "kube-system", &pod); err != nil {
				return false, err.Error(), nil
			}
			return pod.Status.Phase == corev1.PodRunning, string(pod.Status.Phase), nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
