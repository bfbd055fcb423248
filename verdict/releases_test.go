package verdict

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
)

// A kubelet release that is not its minor's source is named unchecked
// (INCOMPLETE, never GO) until ndfq oracle check held the tables to it;
// one whose sources disagree stays unchecked, naming the difference.
func TestOracleRelease(t *testing.T) {
	r := soundRun()
	r.Declarations[0].KubeletVersion = "v1.37.1"
	g := Evaluate(r, policy)
	i := slices.IndexFunc(g.Unchecked, func(u Unchecked) bool { return u.Check == ItemOracleRelease })
	if g.Outcome != INCOMPLETE || i < 0 || g.Unchecked[i].Pool != "a" || !strings.Contains(g.Unchecked[i].Reason, "ndfq oracle check v1.37.1") {
		t.Fatalf("an unchecked release: %s %+v", g.Outcome, g.Unchecked)
	}
	if !slices.Contains(g.OracleHeldTo, "v1.34.4 (the source of ndfq's 1.34 tables)") {
		t.Errorf("held to: %q", g.OracleHeldTo)
	}

	checked := fixtures.ReleaseCheck{Release: "v1.37.1", Checked: time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)}
	p := policy
	checks := map[kubeversion.Version]fixtures.ReleaseCheck{"v1.37.1": checked}
	p.ReleaseCheck = func(v kubeversion.Version) (fixtures.ReleaseCheck, bool) { c, ok := checks[v]; return c, ok }
	if g := Evaluate(r, p); g.Outcome != GO || !slices.Contains(g.OracleHeldTo, "v1.37.1 (checked against its own sources on 2026-12-07: equal)") {
		t.Errorf("a checked release: %s %q %+v", g.Outcome, g.OracleHeldTo, g.Unchecked)
	}

	checked.Differences = []string{"registry: X's MaxVersion is \"\" in ndfq, \"v1.37.0\" in component-helpers v0.37.1"}
	checks["v1.37.1"] = checked
	g = Evaluate(r, p)
	if i := slices.IndexFunc(g.Unchecked, func(u Unchecked) bool { return u.Check == ItemOracleRelease }); g.Outcome == GO || i < 0 || !strings.Contains(g.Unchecked[i].Reason, checked.Differences[0]) {
		t.Errorf("a release that differs: %s %+v", g.Outcome, g.Unchecked)
	}
}
