package lifecycle

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/ndfq/ndfq/clusters/kindconfig"
	"github.com/ndfq/ndfq/clusters/nodeimage"
	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/clusters/topology"
)

// Conforms checks that the running cluster is the topology: node count,
// each node's pool, kubelet version and runtime, and the gates every kubelet and
// the control-plane components were started with.
func (c *Cluster) Conforms(ctx context.Context) error {
	t := c.Topology
	list, err := c.Nodes(ctx)
	if err != nil {
		return err
	}
	var problems []string
	if len(list) != t.NodeCount() {
		problems = append(problems, fmt.Sprintf("%d nodes, topology has %d", len(list), t.NodeCount()))
	}
	pools := map[string]topology.Pool{}
	for _, p := range t.Pools() {
		pools[p.Name] = p
	}
	kindNodes, err := c.Provider.ListInternalNodes(c.Name)
	if err != nil {
		return err
	}
	for _, n := range list {
		poolName := n.Labels[topology.PoolLabel]
		pool, ok := pools[poolName]
		if !ok {
			problems = append(problems, fmt.Sprintf("node %s: pool label %q is not a pool of the topology", n.Name, poolName))
			continue
		}
		if got := n.Status.NodeInfo.KubeletVersion; got != pool.PoolVersion().String() {
			problems = append(problems, fmt.Sprintf("node %s (pool %s): kubelet %s, topology wants %s", n.Name, poolName, got, pool.PoolVersion()))
		}
		if got, want := n.Status.NodeInfo.ContainerRuntimeVersion, pool.RuntimeRelease().Version; got != want {
			problems = append(problems, fmt.Sprintf("node %s (pool %s): runtime %s, topology wants %s", n.Name, poolName, got, want))
		}
		for _, kn := range kindNodes {
			if kn.String() != n.Name {
				continue
			}
			gates, err := surgery.KubeletGates(kn)
			if err != nil {
				problems = append(problems, err.Error())
			} else if !sameGates(gates, pool.Kubelet.FeatureGates) {
				problems = append(problems, fmt.Sprintf("node %s (pool %s): kubelet gates {%s}, topology wants {%s}", n.Name, poolName, topology.FormatGates(gates), topology.FormatGates(pool.Kubelet.FeatureGates)))
			}
			if poolName != topology.ControlPlanePool {
				continue
			}
			cpIndex := 0 // kind's order: the node's own apiserver settings
			for i := range t.ControlPlaneCount() {
				if n.Name == kindconfig.NodeName(c.Name, "control-plane", i) {
					cpIndex = i
				}
			}
			components := map[string]map[string]bool{
				"kube-apiserver": t.NodeAPIServer(cpIndex).FeatureGates,
				"kube-scheduler": t.ControlPlane.Scheduler.FeatureGates,
			}
			if own, ok := t.OwnAPIServerSettings()[cpIndex]; ok {
				if args, err := surgery.StaticPodArgs(kn, nodeimage.KubeAPIServer); err != nil {
					problems = append(problems, err.Error())
				} else {
					problems = append(problems, flagProblems(n.Name, args, own.ExtraArgs, cpIndex)...)
				}
			}
			// Extra schedulers run on the first control-plane node only.
			extra := t.ControlPlane.ExtraSchedulers
			if n.Name != kindconfig.NodeName(c.Name, "control-plane", 0) {
				extra = nil
			}
			for _, s := range extra {
				components[s.Name] = s.FeatureGates
				switch ok, err := surgery.ExtraSchedulerConfigured(kn, s); {
				case err != nil:
					problems = append(problems, fmt.Sprintf("extra scheduler %s: %v", s.Name, err))
				case !ok:
					problems = append(problems, fmt.Sprintf("extra scheduler %s: its profile is not the topology's (ignoresDeclarations %t)", s.Name, s.IgnoresDeclarations))
				}
			}
			for comp, want := range components {
				got, err := surgery.StaticPodGates(kn, comp)
				if err != nil {
					problems = append(problems, err.Error())
				} else if !sameGates(got, want) {
					problems = append(problems, fmt.Sprintf("%s gates {%s}, topology wants {%s}", comp, topology.FormatGates(got), topology.FormatGates(want)))
				}
			}
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("%w:\n  - %s", ErrNotConform, strings.Join(problems, "\n  - "))
	}
	return nil
}

func sameGates(a, b map[string]bool) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}
