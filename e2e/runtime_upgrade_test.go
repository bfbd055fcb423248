//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Rollout and rollback on a running fleet: a runtime upgraded under a running kubelet", ndf, disruptive, Serial, Label("runtime-upgrade"), func() {
	RuntimeUpgradeSpec(context.TODO(), func() RuntimeUpgradeSpecInput { return RuntimeUpgradeSpecInput{input()} })
})
