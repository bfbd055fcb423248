package report

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// SpecTime is one spec's run time from a Ginkgo JSON report.
type SpecTime struct {
	Name   string
	State  string
	Serial bool
	Took   time.Duration
}

// Timing is where a suite's time went: every spec that ran, slowest
// first, and the sums that say what parallel procs can and cannot save.
type Timing struct {
	Specs                []SpecTime
	Wall                 time.Duration // the suite's own run time
	SerialSum, ParallSum time.Duration
}

// ReadTiming reads a Ginkgo --json-report file.
func ReadTiming(path string) (Timing, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Timing{}, err
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil {
		return Timing{}, fmt.Errorf("%s: not a Ginkgo JSON report: %w", path, err)
	}
	var t Timing
	for _, r := range reports {
		t.Wall += r.RunTime
		for _, s := range r.SpecReports {
			if s.LeafNodeType != types.NodeTypeIt || s.State.Is(types.SpecStateSkipped|types.SpecStatePending) {
				continue
			}
			st := SpecTime{Name: strings.TrimSpace(s.FullText()), State: s.State.String(), Serial: s.IsSerial, Took: s.RunTime}
			t.Specs = append(t.Specs, st)
			if s.IsSerial {
				t.SerialSum += s.RunTime
			} else {
				t.ParallSum += s.RunTime
			}
		}
	}
	slices.SortStableFunc(t.Specs, func(a, b SpecTime) int { return int(b.Took - a.Took) })
	return t, nil
}
