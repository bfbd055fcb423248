package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/ndfq/ndfq/internal/wait"
)

// cniConfigPath is where each node's pod network configuration goes.
const cniConfigPath = "/etc/cni/net.d/10-ndfq.conflist"

// nodeNet is what the pod network needs to know of one node.
type nodeNet struct {
	Name, IP, PodCIDR string
}

// conflist renders a ptp + host-local network for one node's pod CIDR;
// kind's own kindnetd cannot be had without a registry.
func conflist(podCIDR string) ([]byte, error) {
	doc := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "ndfq",
		"plugins": []any{
			map[string]any{
				"type": "ptp", "ipMasq": false, "mtu": 1500,
				"ipam": map[string]any{
					"type":   "host-local",
					"ranges": []any{[]any{map[string]any{"subnet": podCIDR}}},
					"routes": []any{map[string]any{"dst": "0.0.0.0/0"}},
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]any{"portMappings": true}},
		},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// routeCommands are the routes one node needs to reach every peer's pods.
func routeCommands(self nodeNet, all []nodeNet) [][]string {
	var cmds [][]string
	for _, peer := range all {
		if peer.Name == self.Name {
			continue
		}
		cmds = append(cmds, []string{"ip", "route", "replace", peer.PodCIDR, "via", peer.IP})
	}
	return cmds
}

// setupNetwork waits for every node's pod CIDR, then writes each node's
// CNI configuration and its routes to the peers.
func (c *Cluster) setupNetwork(ctx context.Context) error {
	var nets []nodeNet
	want := c.NodeCount()
	err := wait.Until(ctx, wait.PodCIDRs, "a pod CIDR on every node", func(ctx context.Context) (bool, string, error) {
		list, err := c.Nodes(ctx)
		if err != nil {
			return false, err.Error(), nil
		}
		nets = nets[:0]
		var missing []string
		for _, n := range list {
			ip := internalIP(n)
			if n.Spec.PodCIDR == "" || ip == "" {
				missing = append(missing, n.Name)
				continue
			}
			nets = append(nets, nodeNet{Name: n.Name, IP: ip, PodCIDR: n.Spec.PodCIDR})
		}
		if len(list) == want && len(missing) == 0 {
			return true, "", nil
		}
		return false, fmt.Sprintf("%d/%d nodes registered, without pod CIDR: %s", len(list), want, strings.Join(missing, ",")), nil
	})
	if err != nil {
		return err
	}
	kindNodes, err := c.Provider.ListInternalNodes(c.Name)
	if err != nil {
		return err
	}
	byName := map[string]nodes.Node{}
	for _, n := range kindNodes {
		byName[n.String()] = n
	}
	// Nodes at once, one exec each: a docker exec costs a fraction of a
	// second, and a node needs one route per peer.
	var g errgroup.Group
	for _, self := range nets {
		node, ok := byName[self.Name]
		if !ok {
			return fmt.Errorf("node %s is registered but kind has no such container", self.Name)
		}
		g.Go(func() error {
			if err := configureNode(node, self, nets); err != nil {
				return fmt.Errorf("pod network on %s: %w", self.Name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// configureNode writes the node's CNI configuration (from stdin) and its
// routes to every peer in one shell.
func configureNode(node nodes.Node, self nodeNet, all []nodeNet) error {
	conf, err := conflist(self.PodCIDR)
	if err != nil {
		return err
	}
	script := []string{"set -e", "cat > " + cniConfigPath}
	for _, cmd := range routeCommands(self, all) {
		script = append(script, strings.Join(cmd, " "))
	}
	var out bytes.Buffer
	if err := node.Command("sh", "-c", strings.Join(script, "\n")).SetStdin(bytes.NewReader(conf)).SetStdout(&out).SetStderr(&out).Run(); err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

func internalIP(n corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && !strings.Contains(a.Address, ":") {
			return a.Address
		}
	}
	return ""
}
