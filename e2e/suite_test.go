//go:build e2e

package e2e

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/internal/progress"
)

// env is this Ginkgo process's handle on the cluster under test.
var env *framework.Env

var settings = framework.SettingsFromEnv()

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "ndfq e2e")
}

var shared []byte

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	data, err := framework.BringUp(ctx, settings, progress.New(GinkgoWriter))
	Expect(err).NotTo(HaveOccurred(), "bring up topology %s", settings.Topology)
	return data
}, func(ctx SpecContext, data []byte) {
	shared = data
	var err error
	env, err = framework.Attach(settings, data, progress.New(GinkgoWriter))
	Expect(err).NotTo(HaveOccurred())
}, NodeTimeout(framework.BringUpTimeout))

var _ = AfterEach(func(ctx SpecContext) {
	if !CurrentSpecReport().Failed() || env == nil {
		return
	}
	framework.MarkFailed(settings.Artifacts)
	dir, err := env.DumpState(ctx, CurrentSpecReport().FullText(), "")
	if err != nil {
		GinkgoWriter.Printf("dumping state: %v\n", err)
	}
	GinkgoWriter.Printf("state dumped to %s\n", dir)
})

var _ = SynchronizedAfterSuite(func() {}, func(ctx context.Context) {
	Expect(framework.TearDown(settings, shared, progress.New(GinkgoWriter))).To(Succeed())
}, NodeTimeout(framework.TearDownTimeout))
