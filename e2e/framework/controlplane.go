package framework

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
)

// Control-plane components ndfq restarts with other flags.
const (
	KubeAPIServer = "kube-apiserver"
	KubeScheduler = "kube-scheduler"
)

// SetComponent restarts a control-plane component as want (its gates and
// --emulated-version) and waits until its metrics report the gates. Both
// components must answer again: a restarted apiserver can make the
// scheduler restart or refuse its metrics for a while, and the next step
// reads both.
func (e *Env) SetComponent(ctx context.Context, component string, want fixtures.Component) {
	GinkgoHelper()
	cp, _ := PoolWhere(e.Topology.Pools(), ControlPlane)
	_, node := e.PoolNode(ctx, cp)
	// "" removes the flag: the component emulates nothing then.
	_, err := surgery.SetStaticPodFlags(node, component, want.Gates, map[string]string{"emulated-version": want.EmulatedVersion})
	Expect(err).NotTo(HaveOccurred())
	restartedScheduler := false
	Expect(wait.Until(ctx, wait.Metrics, fmt.Sprintf("%s to report %s", component, surgery.FormatGatesOrNone(want.Gates)), func(ctx context.Context) (bool, string, error) {
		api, err := probes.APIServerGates(ctx, e.Clientset)
		if err != nil {
			return false, err.Error(), nil
		}
		sched, err := probes.SchedulerGates(ctx, e.Cluster.Client.RESTConfig(), e.Shared.SchedulerMetricURL)
		if err != nil && strings.Contains(err.Error(), "system:anonymous") && !restartedScheduler {
			// Finding F6: a scheduler that restarted while the apiserver was
			// down serves without authentication until it is restarted.
			restartedScheduler = true
			Record(report.Observation{Kind: report.KindFinding, Pool: cp.Name, OK: true,
				Text: "F6: after a kube-apiserver restart the kube-scheduler, restarted while the apiserver was down, answered 403 system:anonymous on /metrics; restarting it again fixed it"})
			if err := surgery.RestartStaticPodContainer(node, KubeScheduler); err != nil {
				return false, "", err
			}
		}
		if err != nil {
			return false, err.Error(), nil
		}
		g := sched
		if component == KubeAPIServer {
			g = api
		}
		for name, v := range want.Gates {
			if g.Known(name) && g.Enabled(name) != v {
				return false, g.Describe(name), nil
			}
		}
		return g.Enabled(fixtures.NodeDeclaredFeatures) == want.Enables(fixtures.NodeDeclaredFeatures), g.Describe(fixtures.NodeDeclaredFeatures), nil
	})).To(Succeed())
}

// WithGates is the topology's component with other explicit gates.
func WithGates(c fixtures.Component, gates map[string]bool) fixtures.Component {
	c.Gates = gates
	return c
}
