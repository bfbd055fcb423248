package surgery

import (
	"fmt"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
)

// StopKubelet stops the node's kubelet; its pods keep running.
func StopKubelet(node nodes.Node) error {
	if err := node.Command("systemctl", "stop", "kubelet").Run(); err != nil {
		return fmt.Errorf("stop kubelet on %s: %w", node, err)
	}
	return nil
}

// StartKubelet starts the node's kubelet again.
func StartKubelet(node nodes.Node) error {
	if err := node.Command("systemctl", "start", "kubelet").Run(); err != nil {
		return fmt.Errorf("start kubelet on %s: %w", node, err)
	}
	return nil
}
