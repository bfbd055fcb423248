//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/internal/progress"
	"github.com/ndfq/ndfq/internal/wait"
)

var (
	settings = framework.SettingsFromEnv()
	// suiteTopology is read when the tree is built, so that each pool gets
	// its own specs; an invalid topology or interval override stops the
	// run here, before anything is provisioned.
	suiteTopology = func() *topology.Topology {
		if err := wait.CheckOverrides(); err != nil {
			panic(err)
		}
		t, err := settings.LoadTopology()
		if err == nil {
			err = t.ForSuites()
		}
		if err != nil {
			panic(err)
		}
		return t
	}()
	// env is this Ginkgo process's handle on the cluster under test.
	env    *framework.Env
	shared []byte
	// leases records node Lease renewals on the first process for the
	// whole run; report.md states the worst and the grace period's margin.
	leases      *framework.LeaseRecorder
	grace       time.Duration
	graceSource string
)

// suiteDescription is what Ginkgo's focus matches spec texts after.
const suiteDescription = "ndfq e2e"

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, suiteDescription)
}

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	data, err := framework.BringUp(ctx, settings, progress.New(GinkgoWriter))
	Expect(err).NotTo(HaveOccurred(), "bring up topology %s", settings.Topology)
	// The pass: every selected non-disruptive cell observed at once; its
	// specs assert what it saw, on any process.
	data, err = framework.WithPass(ctx, settings, data, suiteDescription, progress.New(GinkgoWriter))
	Expect(err).NotTo(HaveOccurred())
	return data
}, func(ctx SpecContext, data []byte) {
	shared = data
	var err error
	env, err = framework.Attach(settings, data, progress.New(GinkgoWriter))
	Expect(err).NotTo(HaveOccurred())
	if GinkgoParallelProcess() == 1 {
		grace, graceSource = framework.NodeMonitorGracePeriod(ctx, env.Clientset)
		leases, err = framework.RecordLeaseRenewals(env.Clientset)
		Expect(err).NotTo(HaveOccurred())
	}
}, NodeTimeout(framework.BringUpTimeout))

// Failure evidence is taken before any repair: this AfterEach runs after
// the spec body and before the DeferCleanups that restore nodes; the
// cleanup registered here runs last, for failures in the cleanups.
var _ = BeforeEach(func() {
	env.StartSpec()
	DeferCleanup(func(ctx SpecContext) { env.DumpIfFailed(ctx, framework.AfterCleanup) })
})

var _ = AfterEach(func(ctx SpecContext) { env.DumpIfFailed(ctx, framework.AtFailure) })

var _ = SynchronizedAfterSuite(func(ctx context.Context) {
	leases.Stop()
	if env != nil {
		Expect(env.WaitNamespacesGone(ctx)).To(Succeed())
	}
}, func(ctx context.Context) {
	Expect(framework.TearDown(settings, shared, progress.New(GinkgoWriter))).To(Succeed())
}, NodeTimeout(framework.TearDownTimeout))

// input is what every scenario is given: the topology (read when the tree
// is built) and this process's env (set once the cluster is up).
func input() framework.SpecInput { return framework.SpecInput{Topology: suiteTopology, Env: env} }
