//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Rollout and rollback on a running fleet: kubelet gate rollback", ndf, disruptive, Serial, func() {
	GateRollbackSpec(context.TODO(), func() GateRollbackSpecInput { return GateRollbackSpecInput{input()} })
})
