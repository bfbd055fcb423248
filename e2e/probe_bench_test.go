//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("The ndfq probe CLI's time on the live topology", ndf, bench, Serial, func() {
	ProbeBenchSpec(context.TODO(), func() ProbeBenchSpecInput { return ProbeBenchSpecInput{SpecInput: input(), Runs: 5} })
})
