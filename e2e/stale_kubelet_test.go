//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("Rollout and rollback on a running fleet: a stopped kubelet", ndf, disruptive, Serial, func() {
	StaleKubeletSpec(context.TODO(), func() StaleKubeletSpecInput { return StaleKubeletSpecInput{input()} })
})
