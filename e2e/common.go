//go:build e2e

// Package e2e holds ndfq's scenarios, laid out as Cluster API's test/e2e:
// each is XxxSpec(ctx, func() XxxSpecInput) in its own file, wired into
// the suite by a thin Describe in xxx_test.go; asserting helpers live in
// e2e/framework. Specs choose pools by what fixtures says of them.
package e2e

import (
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
)

var (
	// ndf labels every spec of the feature, as upstream e2e does.
	ndf = Label("Feature:NodeDeclaredFeatures")
	// disruptive labels every spec that changes a node or a control-plane
	// component; each puts back what it changed and checks it did.
	disruptive = Label("Disruptive")
	// bench labels a measurement that is not a claim: `make bench` runs
	// it, `make e2e` leaves it out (hack/ci/e2e.sh).
	bench = Label("Bench")
)

// restartAll is the feature the placement scenarios place pods with.
const restartAll = fixtures.RestartAllContainersOnContainerExits

// cellIt makes a cell of the claim matrix a spec: body where the cell
// applies; where it does not, a spec that skips with the reason, so JUnit
// and report.md count and list it instead of it vanishing.
func cellIt(c claims.Cell, text string, body func(SpecContext), args ...any) {
	if c.Applies() {
		It(text, append(args, func(ctx SpecContext) { framework.AsksCell(c); body(ctx) })...)
		return
	}
	if c.Uncovered != "" {
		It(text+": not covered", append(args, func() { Skip("not covered: " + c.Uncovered) })...)
		return
	}
	notApplicable(text, c.NotApplicable, args...)
}

// timeoutIfApplies is a cell spec's SpecTimeout, none where the cell does
// not apply (its spec only skips, and takes no context to time out).
func timeoutIfApplies(c claims.Cell, d time.Duration) []any {
	if !c.Applies() {
		return nil
	}
	return []any{SpecTimeout(d)}
}

// Orders of a pass: slower observations start first.
const (
	placementOrder = iota
	updateOrder
	kubeletOrder
	// streamingOrder is early: its streams wait their turn (one pod's at
	// a time), so they are best begun while the other cells' pods start.
	streamingOrder
	// refusalOrder is first: a refused pod is decided in a second, and the
	// shipped refusal alert's `for: 1m` then runs while the slower cells
	// do (the pass waits for it to fire once its cells are in; last, the
	// refusals left it ~50 s to wait).
	refusalOrder
)

// placementOrderOf is a placement cell's order: its plugin's refusals first.
func placementOrderOf(c claims.Cell) int {
	if c.Expect == claims.Refused {
		return refusalOrder
	}
	return placementOrder
}

// passCellIt is cellIt for a cell the suite's pass observes (framework.Plan):
// its spec asserts the pass's observation, or makes it with observe where
// the pass did not.
// env is the scenario's, set by its BeforeEach.
func passCellIt(c claims.Cell, text string, order int, env func() *framework.Env, observe framework.ObserveFunc, assert func(SpecContext, framework.Observation)) {
	sharedPassCellIt("", c, text, order, env, observe, assert)
}

// sharedPassCellIt is passCellIt for a cell that one observation answers together
// with the other cells of group (framework.PlanShared).
func sharedPassCellIt(group string, c claims.Cell, text string, order int, env func() *framework.Env, observe framework.ObserveFunc, assert func(SpecContext, framework.Observation)) {
	if c.Applies() {
		framework.PlanShared(group, c, text, order, observe)
	}
	cellIt(c, text, func(ctx SpecContext) { assert(ctx, env().Observed(ctx, c, observe)) })
}

// waveStart makes a wave's change once, in whichever of its specs runs
// first, and tells every spec of the wave how that went: a failure there
// fails them all (a BeforeAll's would leave the others skipped, unreported).
type waveStart struct {
	tried bool
	err   error
}

func (w *waveStart) once(change func(), what string, args ...any) {
	GinkgoHelper()
	if !w.tried {
		w.tried = true
		w.err = InterceptGomegaFailure(change)
	}
	Expect(w.err).NotTo(HaveOccurred(), append([]any{what}, args...)...)
}

// joinPools names pools in a container's or a failure's text.
func joinPools(pools []topology.Pool) string {
	names := make([]string, len(pools))
	for i, p := range pools {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// subjectsOf are the pairs' subject pools.
func subjectsOf(pairs []dropPair) []topology.Pool {
	out := make([]topology.Pool, len(pairs))
	for i, p := range pairs {
		out[i] = p.subject
	}
	return out
}

// notApplicable is a claim this topology cannot ask: a spec that skips
// with the reason, counted as skipped in JUnit and listed in report.md.
func notApplicable(text, reason string, args ...any) {
	It(text+": not applicable", append(args, func() { Skip("not applicable: " + reason) })...)
}

// refusedPools are the pools where the default scheduler must refuse a
// pod that needs feature; whyNot says why there are none (a pool that
// lacks it but whose cell does not apply, or none lacking it at all).
// placementApplies is whether a pod can ask for feature here at all (a
// placement cell of it applies on some pool).
func placementApplies(cells []claims.Cell, feature string) bool {
	return slices.ContainsFunc(cells, func(c claims.Cell) bool { return c.Kind == claims.Placement && c.Feature == feature && c.Applies() })
}

func refusedPools(cells []claims.Cell, feature string) (pools []string, whyNot string) {
	whyNot = "no pool lacks " + feature + " in this topology"
	for _, c := range cells {
		if c.Kind != claims.Placement || c.Feature != feature {
			continue
		}
		if c.Expect == claims.Refused {
			pools = append(pools, c.Pool)
		} else if !c.Applies() {
			whyNot = c.NotApplicable
		}
	}
	return pools, whyNot
}
