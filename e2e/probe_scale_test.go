//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("The ndfq probe CLI on simulated fleets", ndf, Label("cli"), Serial, func() {
	ProbeScaleSpec(context.TODO(), func() ProbeScaleSpecInput { return ProbeScaleSpecInput{SpecInput: input(), Sizes: scaleSizes()} })
})
