package report

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
)

// A JUnit file written by Ginkgo's own reporter: what the spec wrote
// before its failure is kept, its cleanup after the failure is not.
func TestReadJUnitExplainsFailures(t *testing.T) {
	before := "restarting its kubelet\nrestart kubelet on n-1: exit status 1\n"
	spec := types.SpecReport{
		LeafNodeType: types.NodeTypeIt, LeafNodeText: "rolls back", State: types.SpecStateFailed,
		CapturedGinkgoWriterOutput: before + "cleanup: restoring the kubelet\n",
		Failure: types.Failure{
			Message:          "Unexpected error:\n    restart kubelet on n-1: exit status 1",
			Location:         types.CodeLocation{FileName: "gate_rollback.go", LineNumber: 50},
			FailureNodeType:  types.NodeTypeIt,
			TimelineLocation: types.TimelineLocation{Offset: len(before)},
		},
	}
	passed := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "holds", State: types.SpecStatePassed}
	skipped := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "n/a", State: types.SpecStateSkipped}
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := reporters.GenerateJUnitReport(types.Report{SuiteDescription: "s", SpecReports: types.SpecReports{passed, spec, skipped}}, path); err != nil {
		t.Fatal(err)
	}
	j, err := ReadJUnit(path, 5)
	if err != nil {
		t.Fatal(err)
	}
	if j.Counts != (Counts{Passed: 1, Failed: 1, Skipped: 1}) {
		t.Fatalf("counts %v", j.Counts)
	}
	f := j.Failures[0]
	if f.Spec != "[It] rolls back" || !strings.Contains(f.Message, "restart kubelet on n-1: exit status 1") {
		t.Errorf("failure %+v", f.Failure)
	}
	if !slices.Contains(f.LogTail, "restart kubelet on n-1: exit status 1") || slices.ContainsFunc(f.LogTail, func(l string) bool { return strings.Contains(l, "cleanup") }) {
		t.Errorf("log tail %q: want the lines before the failure, not the cleanup", f.LogTail)
	}
}

func TestLinesBeforeFailure(t *testing.T) {
	for name, c := range map[string]struct {
		timeline string
		want     []string
	}{
		"before the failure": {"a\n\n  b\n  [FAILED] x\n  c\n", []string{"a", "b"}},
		"last n":             {"a\nb\nc\nd\n", []string{"c", "d"}},
		"none":               {"", nil},
	} {
		if got := linesBeforeFailure(c.timeline, 2); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
}
