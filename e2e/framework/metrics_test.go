package framework

import (
	"math"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestHistogramQuantile(t *testing.T) {
	const text = `# TYPE attempt histogram
attempt_bucket{profile="a",result="scheduled",le="0.001"} 0
attempt_bucket{profile="a",result="scheduled",le="0.002"} 50
attempt_bucket{profile="a",result="scheduled",le="0.004"} 100
attempt_bucket{profile="a",result="scheduled",le="+Inf"} 100
attempt_sum{profile="a",result="scheduled"} 0.2
attempt_count{profile="a",result="scheduled"} 100
attempt_bucket{profile="b",result="scheduled",le="0.001"} 10
attempt_bucket{profile="b",result="scheduled",le="0.002"} 10
attempt_bucket{profile="b",result="scheduled",le="0.004"} 10
attempt_bucket{profile="b",result="scheduled",le="+Inf"} 10
attempt_sum{profile="b",result="scheduled"} 0.01
attempt_count{profile="b",result="scheduled"} 10
`
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	fam := fams["attempt"]
	a := map[string]string{"profile": "a", "result": "scheduled"}
	for q, want := range map[float64]float64{0.5: 0.002, 0.25: 0.0015, 0.99: 0.00396} {
		if got := HistogramQuantile(fam, a, q); math.Abs(got-want) > 1e-9 {
			t.Errorf("q%.2f = %v, want %v", q, got, want)
		}
	}
	if got := HistogramCount(fam, a); got != 100 {
		t.Errorf("count %d", got)
	}
	if got := HistogramQuantile(fam, map[string]string{"profile": "c"}, 0.5); !math.IsNaN(got) {
		t.Errorf("no series: %v", got)
	}
}
