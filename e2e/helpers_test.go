//go:build e2e

package e2e

import (
	"fmt"
	"slices"
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

// componentIntends is whether the topology starts a control-plane component with the gate on.
func componentIntends(c topology.Component, gate string) bool {
	minor := topology.GateMinor(cpMinor, c.ExtraArgs)
	on, known := fixtures.ExpectedGate(minor, c.FeatureGates, gate)
	return on && known
}

// apiServerIntends is whether the topology's apiserver has the gate on.
func apiServerIntends(gate string) bool {
	return componentIntends(suiteTopology.ControlPlane.APIServer, gate)
}

// schedulerIntends is whether the topology's scheduler runs the plugin.
func schedulerIntends() bool {
	return componentIntends(suiteTopology.ControlPlane.Scheduler, fixtures.NodeDeclaredFeatures)
}

// expectPoolDeclares is the precondition of placement and update claims:
// the pool's nodes declare the feature exactly when the oracle says so.
func expectPoolDeclares(ctx SpecContext, pool topology.Pool, feature string, declares bool) []probes.Declaration {
	decls := declarationsOfPool(ctx, pool)
	for _, d := range decls {
		Expect(slices.Contains(d.Declared, feature)).To(Equal(declares), "precondition: node %s of %s declares %v", d.Node, pool.Name, d.Declared)
	}
	return decls
}

func sortStrings(s []string) { sort.Strings(s) }
