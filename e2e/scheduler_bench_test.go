//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Scheduler cost of the plugin on simulated fleets", ndf, bench, Serial, func() {
	SchedulerBenchSpec(context.TODO(), func() SchedulerBenchSpecInput {
		return SchedulerBenchSpecInput{SpecInput: input(), Sizes: benchSizes(), Pods: benchPods()}
	})
})
