package framework

import "testing"

func TestMarkdownTableColumnsAreJSONNames(t *testing.T) {
	type row struct {
		Nodes int      `json:"nodes"`
		Rate  float64  `json:"podsPerSecond"`
		P99   *float64 `json:"p99,omitempty"`
	}
	p := 1.5
	got := markdownTable([]row{{100, 12.345, nil}, {1000, 3, &p}})
	want := "| nodes | podsPerSecond | p99 |\n|---|---|---|\n| 100 | 12.3 |  |\n| 1000 | 3 | 1.5 |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if markdownTable([]row{}) != "(no rows)\n" {
		t.Error("an empty slice should say so")
	}
}
