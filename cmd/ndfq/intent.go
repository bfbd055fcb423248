package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/verdict"
)

// intentCommand writes and checks fleet intents (verdict/intent.schema.json).
func intentCommand() *cobra.Command {
	var k8sVersion string
	fromTopology := &cobra.Command{
		Use:   "from-topology NAME|FILE",
		Short: "Print the fleet intent a kind topology implies (what `ndfq probe --intent NAME` holds a cluster to)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := topology.LoadWith(args[0], k8sVersion)
			if err != nil {
				return err
			}
			return writeIntent(cmd, fleetIntentOf(t))
		},
	}
	fromTopology.Flags().StringVar(&k8sVersion, "kubernetes-version", "", "replace the topology's control-plane version")
	validate := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a fleet intent file against its schema and the oracle (minors, gates, runtimes, selectors); exit 0 when valid, 2 naming every problem",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := loadIntent(args[0], "")
			if err != nil {
				return err
			}
			nodes := 0
			for _, p := range in.Pools {
				nodes += p.Min
			}
			fmt.Fprintf(cmd.OutOrStdout(), "intent %s is valid: %d pools, at least %d nodes\n", args[0], len(in.Pools), nodes)
			return nil
		},
	}
	return group("intent", "Write and check fleet intents: the plan `ndfq probe --intent` holds a fleet to",
		fromTopology, captureCommand(), validate)
}

// captureCommand writes today's fleet as a fleet intent.
func captureCommand() *cobra.Command {
	var kube kubeFlags
	var poolLabel string
	cmd := &cobra.Command{
		Use:   "capture",
		Short: "Print today's fleet as a fleet intent to start from: pools by their pool label with their node count and kubelet versions, each pool's kubelet gates that differ from their minor's defaults (read from one kubelet of the pool where nodes/proxy is granted), the apiserver's version and gates",
		Args:  noArgs,
		PreRunE: func(*cobra.Command, []string) error {
			return kube.check()
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cs, err := kube.clientset()
			if err != nil {
				return err
			}
			f, err := capture(cmd.Context(), cs, poolLabel)
			if err != nil {
				return err
			}
			return writeIntent(cmd, f)
		},
	}
	kube.bind(cmd.Flags(), "unused")
	cmd.Flags().StringVar(&poolLabel, "pool-label", "", "node label that names pools (default: the first of "+strings.Join(probes.WellKnownPoolLabels, ", ")+" that a node carries)")
	return cmd
}

func writeIntent(cmd *cobra.Command, f verdict.FleetIntent) error {
	out, err := yaml.Marshal(f)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "# ndfq fleet intent (verdict/intent.schema.json): ndfq probe --intent FILE\n%s", out)
	return err
}

// loadIntent reads --intent: a fleet intent file, or a kind topology
// (shipped name or file), whose control-plane version may be replaced.
func loadIntent(nameOrPath, controlPlaneVersion string) (*verdict.Intent, error) {
	if data, err := os.ReadFile(nameOrPath); err == nil && verdict.IsFleetIntent(data) {
		if controlPlaneVersion != "" {
			return nil, fmt.Errorf("%s is a fleet intent: give its controlPlane.version in the file, not --intent-control-plane-version", nameOrPath)
		}
		return verdict.ParseFleetIntent(nameOrPath, data)
	}
	t, err := topology.LoadWith(nameOrPath, controlPlaneVersion)
	if err != nil {
		return nil, err
	}
	return fleetIntentOf(t).Intent()
}

// fleetIntentOf is a topology as the plan the probe holds a fleet to: its
// pools (the control plane's nodes too: kind shows them), their exact
// counts, kubelets and runtimes, and its control plane.
func fleetIntentOf(t *topology.Topology) verdict.FleetIntent {
	f := verdict.FleetIntent{APIVersion: verdict.APIVersion, Kind: verdict.FleetIntentKind}
	api, sched := t.APIServer(), t.Scheduler()
	cp := &verdict.FleetControlPlane{Version: t.ControlPlaneVersion().String(),
		APIServer: verdict.FleetComponent{FeatureGates: api.Gates, EmulatedVersion: api.EmulatedVersion},
		Scheduler: verdict.FleetComponent{FeatureGates: sched.Gates, EmulatedVersion: sched.EmulatedVersion}}
	for _, s := range t.ControlPlane.ExtraSchedulers {
		cp.ExtraSchedulers = append(cp.ExtraSchedulers, verdict.FleetScheduler{Name: s.Name, IgnoresDeclarations: s.IgnoresDeclarations})
	}
	f.ControlPlane = cp
	for _, p := range t.Pools() {
		count := p.Count
		k := p.Intent()
		f.Pools = append(f.Pools, verdict.FleetPool{Name: p.Name, Nodes: verdict.FleetCount{Count: &count},
			Kubelet: verdict.FleetKubelet{Versions: []string{kubeversion.MustParse(p.Version).String()}, FeatureGates: p.Kubelet.FeatureGates,
				Runtime: p.RuntimeRelease().Name, CPUManagerPolicy: k.Runtime.CPUManagerPolicy}})
	}
	return f
}

// capture reads the fleet as it is into a fleet intent.
func capture(ctx context.Context, cs kubernetes.Interface, poolLabel string) (verdict.FleetIntent, error) {
	f := verdict.FleetIntent{APIVersion: verdict.APIVersion, Kind: verdict.FleetIntentKind}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return f, fmt.Errorf("list nodes: %w", err)
	}
	choice := probes.ChoosePoolLabel(nodes.Items, poolLabel)
	byPool := map[string][]corev1.Node{}
	for _, n := range nodes.Items {
		byPool[n.Labels[choice.Label]] = append(byPool[n.Labels[choice.Label]], n)
	}
	for _, name := range slices.Sorted(maps.Keys(byPool)) {
		members := byPool[name]
		versions, runtimes := map[string]bool{}, map[string]bool{}
		for _, n := range members {
			versions[n.Status.NodeInfo.KubeletVersion] = true
			runtimes[n.Status.NodeInfo.ContainerRuntimeVersion] = true
		}
		count := len(members)
		pool := verdict.FleetPool{Name: name, Nodes: verdict.FleetCount{Count: &count}, Kubelet: verdict.FleetKubelet{Versions: slices.Sorted(maps.Keys(versions))}}
		switch {
		case choice.Label == "":
			pool.Name, pool.Selector = "every-node", ""
		case name == "":
			pool.Name, pool.Selector = "unlabelled", "!"+choice.Label
		default:
			pool.Selector = choice.Label + "=" + name
		}
		if len(runtimes) == 1 {
			if rel, ok := fixtures.RuntimeByVersion(members[0].Status.NodeInfo.ContainerRuntimeVersion); ok {
				pool.Kubelet.Runtime = rel.Name
			}
		}
		// One kubelet's gates stand for the pool's (a starting point to edit).
		if g, err := probes.KubeletGates(ctx, cs, members[0].Name); err == nil {
			pool.Kubelet.FeatureGates = nonDefault(kubeversion.MinorOf(members[0].Status.NodeInfo.KubeletVersion), g)
		}
		f.Pools = append(f.Pools, pool)
	}
	if v, err := cs.Discovery().ServerVersion(); err == nil {
		cp := &verdict.FleetControlPlane{Version: v.GitVersion}
		if g, err := probes.APIServerGates(ctx, cs); err == nil {
			cp.APIServer.FeatureGates = nonDefault(kubeversion.MinorOf(v.GitVersion), g)
		}
		f.ControlPlane = cp
	}
	return f, nil
}

// nonDefault are the family gates a component runs otherwise than its
// minor's defaults: what its --feature-gates must have said.
func nonDefault(minor string, g probes.Gates) map[string]bool {
	out := map[string]bool{}
	for name, on := range fixtures.EffectiveGates(minor, nil) {
		if g.Known(name) && g.Enabled(name) != on {
			out[name] = g.Enabled(name)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
