//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Rolling the control plane back", ndf, disruptive, Serial, func() {
	ControlPlaneRollbackSpec(context.TODO(), func() ControlPlaneRollbackSpecInput { return ControlPlaneRollbackSpecInput{input()} })
})
