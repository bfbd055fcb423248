//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Each apiserver's own signals", ndf, Label("signals", "ha"), func() {
	APIServerSignalsSpec(context.TODO(), func() APIServerSignalsSpecInput { return APIServerSignalsSpecInput{input()} })
})
