//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("An HA control plane during a rolling change", ndf, disruptive, Serial, Label("ha"), func() {
	HAWindowSpec(context.TODO(), func() HAWindowSpecInput { return HAWindowSpecInput{input()} })
})

var _ = Describe("ndfq probe on an HA control plane during a rolling change", ndf, disruptive, Serial, Label("ha", "cli"), func() {
	HAProbeSpec(context.TODO(), func() HAProbeSpecInput { return HAProbeSpecInput{input()} })
})
