package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

func TestTimingListsSpecsThatRanSlowestFirst(t *testing.T) {
	spec := func(text string, serial bool, took time.Duration, state types.SpecState) types.SpecReport {
		return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text, IsSerial: serial, RunTime: took, State: state}
	}
	r := types.Report{RunTime: 90 * time.Second, SpecReports: types.SpecReports{
		spec("fast", false, 2*time.Second, types.SpecStatePassed),
		spec("slow serial", true, 60*time.Second, types.SpecStateFailed),
		spec("middle", false, 20*time.Second, types.SpecStatePassed),
		spec("not applicable", false, time.Millisecond, types.SpecStateSkipped),
		{LeafNodeType: types.NodeTypeBeforeSuite, RunTime: 80 * time.Second, State: types.SpecStatePassed},
	}}
	data, _ := json.Marshal([]types.Report{r})
	path := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTiming(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got.Specs {
		names = append(names, s.Name)
	}
	if len(names) != 3 || names[0] != "slow serial" || names[2] != "fast" {
		t.Errorf("specs %v: want the three that ran, slowest first (no skipped spec, no suite node)", names)
	}
	if got.SerialSum != 60*time.Second || got.ParallSum != 22*time.Second || got.Wall != 90*time.Second {
		t.Errorf("sums %v serial, %v parallel, %v wall", got.SerialSum, got.ParallSum, got.Wall)
	}
}
