//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("The ndfq probe CLI as a rollout gate", ndf, Label("cli"), func() {
	ProbeCLISpec(context.TODO(), func() ProbeCLISpecInput { return ProbeCLISpecInput{input()} })
})
