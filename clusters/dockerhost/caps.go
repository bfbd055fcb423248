package dockerhost

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/moby/sys/capability"
)

// MissingBoundingCaps lists the capabilities the kernel knows but this
// process's bounding set lacks, in OCI spelling ("CAP_SYS_RESOURCE").
// A --privileged container asks for every known capability and runc fails
// with "unable to apply caps" when one of them is outside the bounding set.
func MissingBoundingCaps() ([]string, error) {
	caps, err := capability.NewPid2(0)
	if err != nil {
		return nil, err
	}
	if err := caps.Load(); err != nil {
		return nil, err
	}
	var missing []string
	for _, c := range capability.ListKnown() {
		if ok, err := capability.GetBound(c); err != nil || ok {
			continue // the running kernel does not know c, or has it
		}
		if !caps.Get(capability.BOUNDING, c) {
			missing = append(missing, "CAP_"+strings.ToUpper(c.String()))
		}
	}
	sort.Strings(missing)
	return missing, nil
}

// capSets are the capability lists of an OCI process.
var capSets = []string{"bounding", "effective", "inheritable", "permitted", "ambient"}

// DropCaps removes the named capabilities from an OCI process object
// (config.json's "process", or an exec --process file). Every other field
// is kept as it was, whatever version of the runtime spec wrote it.
func DropCaps(process map[string]any, drop []string) (changed bool) {
	caps, ok := process["capabilities"].(map[string]any)
	if !ok {
		return false
	}
	gone := map[string]bool{}
	for _, d := range drop {
		gone[d] = true
	}
	for _, set := range capSets {
		list, ok := caps[set].([]any)
		if !ok {
			continue
		}
		kept := list[:0:0]
		for _, c := range list {
			if s, _ := c.(string); gone[s] {
				changed = true
				continue
			}
			kept = append(kept, c)
		}
		caps[set] = kept
	}
	return changed
}

// RewriteSpec applies DropCaps to a whole config.json (isBundle) or to a
// process file, returning the new bytes and whether anything changed.
func RewriteSpec(data []byte, isBundle bool, drop []string) ([]byte, bool, error) {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, false, fmt.Errorf("parse OCI spec: %w", err)
	}
	process := doc
	if isBundle {
		p, ok := doc["process"].(map[string]any)
		if !ok {
			return data, false, nil
		}
		process = p
	}
	if !DropCaps(process, drop) {
		return data, false, nil
	}
	out, err := json.Marshal(doc)
	return out, true, err
}
