//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Rollout and rollback on a running fleet: kubelet downgrade in place", ndf, disruptive, Serial, func() {
	KubeletDowngradeSpec(context.TODO(), func() KubeletDowngradeSpecInput { return KubeletDowngradeSpecInput{input()} })
})
