//go:build e2e

package e2e

import (
	"fmt"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/probes"
)

// ndf labels every spec of the feature, as upstream e2e does.
var ndf = Label("Feature:NodeDeclaredFeatures")

// cpMinor is the control plane's minor: it decides what the scheduler and
// the admission plugin infer.
var cpMinor = fixtures.MinorOf(suiteTopology.ControlPlane.Version)

// specNamespace makes a namespace for this spec; it is dumped when the spec
// fails and removed afterwards.
func specNamespace(ctx SpecContext, prefix string) string {
	ns, cleanup, err := env.NewNamespace(ctx, prefix)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			if dir, err := env.DumpState(ctx, CurrentSpecReport().FullText(), ns); err == nil {
				GinkgoWriter.Printf("namespace %s dumped to %s\n", ns, dir)
			}
		}
		Expect(cleanup(ctx)).To(Succeed())
	}, NodeTimeout(2*time.Minute))
	return ns
}

// intendedSet is what the oracle says a pool must declare, from the
// topology's intended gates. Specs name their claim with it; at run time
// they check it against the gates the kubelets report.
func intendedSet(p topology.Pool) []string {
	minor := fixtures.MinorOf(p.Version)
	policy, _ := p.Kubelet.Config["cpuManagerPolicy"].(string)
	return fixtures.Expected(minor, fixtures.EffectiveGates(minor, p.Kubelet.FeatureGates), fixtures.Runtime{CPUManagerPolicy: policy})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// kubeletPublishes is whether the pool's kubelets have NDF on by intent.
func kubeletPublishes(p topology.Pool) bool {
	on, known := fixtures.ExpectedGate(fixtures.MinorOf(p.Version), p.Kubelet.FeatureGates, fixtures.NodeDeclaredFeatures)
	return on && known
}

// declarationsOfPool reads the pool's declarations and checks they are
// what the oracle says for the gates the kubelets report: every placement
// and update claim stands on that.
func declarationsOfPool(ctx SpecContext, pool topology.Pool) []probes.Declaration {
	all, err := probes.Declarations(ctx, probes.DeclarationsInput{Clientset: env.Clientset, PoolLabel: topology.PoolLabel})
	Expect(err).NotTo(HaveOccurred())
	var out []probes.Declaration
	for _, d := range all {
		if d.Pool == pool.Name {
			out = append(out, d)
		}
	}
	Expect(out).To(HaveLen(pool.Count), "nodes of pool %s", pool.Name)
	for _, d := range out {
		Expect(d.Unreachable).To(BeEmpty(), "kubelet on %s (pool %s)", d.Node, pool.Name)
	}
	return out
}

func describeSet(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	return "[" + strings.Join(s, " ") + "]"
}

func poolDesc(p topology.Pool) string { return fmt.Sprintf("pool %s (%s)", p.Name, p.PoolVersion()) }

// apiServerIntends is whether the topology's apiserver has the gate on.
func apiServerIntends(gate string) bool {
	minor := topology.GateMinor(cpMinor, suiteTopology.ControlPlane.APIServer.ExtraArgs)
	on, known := fixtures.ExpectedGate(minor, suiteTopology.ControlPlane.APIServer.FeatureGates, gate)
	return on && known
}

func sortStrings(s []string) { sort.Strings(s) }
