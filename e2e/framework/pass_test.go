package framework

import (
	"slices"
	"testing"
)

// Cells of one group are one observation, in the run of the group's first
// cell; ungrouped cells are a run each, in the order given.
func TestPassRunsGroupSharedCells(t *testing.T) {
	cells := []plannedCell{{key: "a"}, {key: "s1", group: "g"}, {key: "b"}, {key: "s2", group: "g"}, {key: "t1", group: "h"}}
	var got [][]string
	for _, run := range passRuns(cells) {
		var keys []string
		for _, c := range run {
			keys = append(keys, c.key)
		}
		got = append(got, keys)
	}
	want := [][]string{{"a"}, {"s1", "s2"}, {"b"}, {"t1"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("runs %v, want %v", got, want)
	}
}
