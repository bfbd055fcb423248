package framework

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/clusters/topology"
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
		sched, err := e.schedulerGates(ctx, node, &restartedScheduler)
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

// schedulerGates reads the gates of the kube-scheduler whose /metrics the
// suites read (on node, the first control-plane node). Finding F6: a
// scheduler that restarted while the apiserver beside it was down serves
// without authentication (403 system:anonymous); the first time it does,
// it is restarted (restarted records that) and the finding recorded.
func (e *Env) schedulerGates(ctx context.Context, node nodes.Node, restarted *bool) (probes.Gates, error) {
	sched, err := SchedulerGates(ctx, e.Cluster.Client.RESTConfig(), e.Shared.SchedulerMetricURL)
	if err != nil && strings.Contains(err.Error(), "system:anonymous") && !*restarted {
		*restarted = true
		Record(report.Observation{Kind: report.KindFinding, Pool: topology.ControlPlanePool, Node: node.String(), OK: true,
			Text: "F6: after a kube-apiserver restart the kube-scheduler, restarted while the apiserver was down, answered 403 system:anonymous on /metrics; restarting it again fixed it"})
		if rerr := surgery.RestartStaticPodContainer(node, KubeScheduler); rerr != nil {
			return nil, rerr
		}
	}
	return sched, err
}

// WaitSchedulerMetrics waits (wait-metrics) until the kube-scheduler whose
// /metrics the suites read answers again after an apiserver on its node
// restarted: while that apiserver is down its delegated authorization
// fails (500), and a scheduler that lost its lease meanwhile restarts
// into F6.
func (e *Env) WaitSchedulerMetrics(ctx context.Context, node nodes.Node) {
	GinkgoHelper()
	restarted := false
	Expect(wait.Until(ctx, wait.Metrics, "kube-scheduler "+e.Shared.SchedulerMetricURL+" to answer /metrics", func(ctx context.Context) (bool, string, error) {
		if _, err := e.schedulerGates(ctx, node, &restarted); err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})).To(Succeed())
}

// WithGates is the topology's component with other explicit gates.
func WithGates(c fixtures.Component, gates map[string]bool) fixtures.Component {
	c.Gates = gates
	return c
}

// SchedulerGates reads kube-scheduler's /metrics at url (its secure port,
// e.g. https://127.0.0.1:PORT/metrics) with the kubeconfig's credentials.
func SchedulerGates(ctx context.Context, cfg *rest.Config, url string) (probes.Gates, error) {
	families, err := probes.SecurePortFamilies(ctx, cfg, "kube-scheduler", url)
	if err != nil {
		return nil, err
	}
	return probes.GatesOf(families)
}
