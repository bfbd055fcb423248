//go:build e2e

// Package e2e holds ndfq's scenarios, laid out as Cluster API's test/e2e:
// each is XxxSpec(ctx, func() XxxSpecInput) in its own file, wired into
// the suite by a thin Describe in xxx_test.go; asserting helpers live in
// e2e/framework. Specs choose pools by what fixtures says of them.
package e2e

import (
	. "github.com/onsi/ginkgo/v2"

	"github.com/ndfq/ndfq/fixtures"
)

var (
	// ndf labels every spec of the feature, as upstream e2e does.
	ndf = Label("Feature:NodeDeclaredFeatures")
	// disruptive labels every spec that changes a node or a control-plane
	// component; each puts back what it changed and checks it did.
	disruptive = Label("Disruptive")
)

// restartAll is the feature the placement scenarios place pods with.
const restartAll = fixtures.RestartAllContainersOnContainerExits
