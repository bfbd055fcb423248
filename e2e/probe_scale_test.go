//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

// Serial only where its figures are the bench's: in make e2e its own kind
// cluster runs beside the parallel specs (Serial, it waited ~90 s alone).
var _ = Describe("The ndfq probe CLI on simulated fleets", ndf, Label("cli"), benchSerial(), func() {
	ProbeScaleSpec(context.TODO(), func() ProbeScaleSpecInput { return ProbeScaleSpecInput{SpecInput: input(), Sizes: scaleSizes()} })
})
