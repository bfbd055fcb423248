package probes

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/ndfq/ndfq/clusters/topology"
)

// WellKnownPoolLabels name a node's pool on the providers ndfq knows, in
// the order the probe looks for them when --pool-label is not given.
var WellKnownPoolLabels = []string{
	topology.PoolLabel,               // ndfq's own clusters
	"cloud.google.com/gke-nodepool",  // GKE
	"eks.amazonaws.com/nodegroup",    // EKS managed node groups
	"alpha.eksctl.io/nodegroup-name", // eksctl self-managed groups
	"kubernetes.azure.com/agentpool", // AKS
	"agentpool",                      // AKS, older clusters
	"karpenter.sh/nodepool",          // Karpenter v1
	"karpenter.sh/provisioner-name",  // Karpenter before v1
}

// Unlabelled is the pool of nodes that lack the pool label.
const Unlabelled = "(unlabelled)"

// PoolLabelChoice is the label pools were made from and why it was chosen.
type PoolLabelChoice struct {
	Label  string `json:"label"`  // "" when no node carries any well-known label
	Source string `json:"source"` // "flag", "well-known" or "none"
}

// ChoosePoolLabel is the flag's label when given, otherwise the first
// well-known pool label any node carries.
func ChoosePoolLabel(nodes []corev1.Node, flag string) PoolLabelChoice {
	if flag != "" {
		return PoolLabelChoice{Label: flag, Source: "flag"}
	}
	for _, l := range WellKnownPoolLabels {
		for _, n := range nodes {
			if _, ok := n.Labels[l]; ok {
				return PoolLabelChoice{Label: l, Source: "well-known"}
			}
		}
	}
	return PoolLabelChoice{Source: "none"}
}

// SlicePools names each node's pool: its label value (Unlabelled without
// one), sliced by kubelet version: a label value whose nodes run more than
// one kubelet version becomes one pool per version, "VALUE@vX.Y.Z", so a
// pool is always one kind of kubelet.
func SlicePools(nodes []corev1.Node, label string) (pools map[string]string, sliced map[string]bool) {
	value := func(n corev1.Node) string {
		if v, ok := n.Labels[label]; ok && label != "" && v != "" {
			return v
		}
		return Unlabelled
	}
	versions := map[string]sets.Set[string]{}
	for _, n := range nodes {
		v := value(n)
		if versions[v] == nil {
			versions[v] = sets.New[string]()
		}
		versions[v].Insert(n.Status.NodeInfo.KubeletVersion)
	}
	pools, sliced = map[string]string{}, map[string]bool{}
	for _, n := range nodes {
		v := value(n)
		if versions[v].Len() > 1 {
			v = fmt.Sprintf("%s@%s", v, n.Status.NodeInfo.KubeletVersion)
			sliced[v] = true
		}
		pools[n.Name] = v
	}
	return pools, sliced
}

// describePools is the progress line naming each pool's nodes.
func describePools(pools map[string][]string) string {
	var parts []string
	for _, p := range sortedPools(pools) {
		parts = append(parts, fmt.Sprintf("%s (%s)", p, NameNodes(pools[p])))
	}
	return strings.Join(parts, "; ")
}

// NameNodes names nodes in a line: sorted, the first three, and how many more.
func NameNodes(nodes []string) string { return NameNodesUpTo(nodes, 3) }

// NameNodesUpTo names at most n of the nodes, sorted, and how many more.
func NameNodesUpTo(nodes []string, n int) string {
	nodes = append([]string(nil), nodes...)
	sort.Strings(nodes)
	if len(nodes) > n {
		nodes = append(nodes[:n], fmt.Sprintf("and %d more", len(nodes)-n))
	}
	return strings.Join(nodes, ", ")
}
