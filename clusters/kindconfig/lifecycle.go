package kindconfig

import (
	"fmt"
	"time"
)

// The node lifecycle periods of ndfq's clusters, from a measurement: in a
// full warm suite on skew-1.37 on this 2-core machine (2026-12-06), the
// worst node Lease renewal outside the Disruptive specs came 14.7 s after
// the one before, 4.7 s later than the 10 s the default 40 s Lease plans
// (671 renewals on 10 nodes). So the kubelet renews a 20 s Lease every
// 5 s (worst gap expected 5 + 4.7 = 9.7 s) and reports status as often, so
// that "two renewals" still spans a status update; the grace period, 35 s,
// keeps 3.6x that gap. docs/performance.md has the measurement, and
// report.md states the values each run used and the margin it saw.
const (
	NodeLeaseDurationSeconds  = 20               // renewed every quarter: 5 s
	NodeStatusUpdateFrequency = 5 * time.Second  // the kubelet's status sync
	NodeMonitorGracePeriod    = 35 * time.Second // kube-controller-manager
)

// lifecycleKubeletConfig is the kubelet's part of those periods.
func lifecycleKubeletConfig(doc map[string]any) map[string]any {
	doc["nodeLeaseDurationSeconds"] = NodeLeaseDurationSeconds
	doc["nodeStatusUpdateFrequency"] = NodeStatusUpdateFrequency.String()
	return doc
}

func gracePeriodArg() string { return fmt.Sprintf("%ds", int(NodeMonitorGracePeriod.Seconds())) }
