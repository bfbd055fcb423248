package framework

import (
	"math"
	"sort"

	dto "github.com/prometheus/client_model/go"
)

// HistogramQuantile is the q-quantile of the histogram series of fam whose
// labels include every one given, as Prometheus' histogram_quantile
// estimates it (linear within the bucket); NaN where there is no sample.
func HistogramQuantile(fam *dto.MetricFamily, labels map[string]string, q float64) float64 {
	counts := map[float64]float64{}
	var total float64
	for _, m := range fam.GetMetric() {
		if !hasLabels(m, labels) || m.GetHistogram() == nil {
			continue
		}
		for _, b := range m.GetHistogram().GetBucket() {
			counts[b.GetUpperBound()] += float64(b.GetCumulativeCount())
		}
		total += float64(m.GetHistogram().GetSampleCount())
	}
	if total == 0 {
		return math.NaN()
	}
	bounds := make([]float64, 0, len(counts))
	for b := range counts {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	rank := q * total
	lower, below := 0.0, 0.0
	for _, upper := range bounds {
		if c := counts[upper]; c >= rank {
			if math.IsInf(upper, 1) {
				return lower
			}
			return lower + (upper-lower)*(rank-below)/(c-below)
		}
		lower, below = upper, counts[upper]
	}
	return lower
}

// HistogramCount is the number of samples in the matching series.
func HistogramCount(fam *dto.MetricFamily, labels map[string]string) uint64 {
	var n uint64
	for _, m := range fam.GetMetric() {
		if hasLabels(m, labels) && m.GetHistogram() != nil {
			n += m.GetHistogram().GetSampleCount()
		}
	}
	return n
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	found := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			found++
		}
	}
	return found == len(want)
}
