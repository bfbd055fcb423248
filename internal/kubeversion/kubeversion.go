// Package kubeversion is ndfq's one Kubernetes version type: parsing, the
// minor, the minor before it, and the distance in minors that the version
// skew policy counts. Topologies, node images and the oracle all use it.
package kubeversion

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/semver"
)

// Version is a Kubernetes release in "v1.37.2" form (pre-releases too).
type Version string

// Parse accepts "1.37.2", "v1.37.2" and pre-releases such as "1.38.0-beta.0".
func Parse(s string) (Version, error) {
	if s == "" {
		return "", fmt.Errorf("missing (want 1.MINOR.PATCH, e.g. 1.37.2)")
	}
	v := "v" + strings.TrimPrefix(s, "v")
	if !semver.IsValid(v) || semver.Major(v) != "v1" || strings.Count(strings.SplitN(v, "-", 2)[0], ".") != 2 {
		return "", fmt.Errorf("%q is not a Kubernetes release version (want 1.MINOR.PATCH, e.g. 1.37.2)", s)
	}
	return Version(v), nil
}

// MustParse is Parse for versions already validated (topology fields).
func MustParse(s string) Version {
	v, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

func (v Version) String() string { return string(v) }

// Minor is "1.37".
func (v Version) Minor() string { return strings.TrimPrefix(semver.MajorMinor(string(v)), "v") }

// Compare orders versions as semver does: -1, 0 or 1.
func Compare(a, b Version) int { return semver.Compare(string(a), string(b)) }

// MinorOf turns "1.37.2", "v1.37.2" or "1.37" into "1.37"; "" if it is none of those.
func MinorOf(s string) string {
	return strings.TrimPrefix(semver.MajorMinor("v"+strings.TrimPrefix(s, "v")), "v")
}

// minorNumber is 37 for "1.37"; ok is false for anything else.
func minorNumber(minor string) (int, bool) {
	major, n, found := strings.Cut(minor, ".")
	if !found || major != "1" {
		return 0, false
	}
	i, err := strconv.Atoi(n)
	return i, err == nil && i >= 0
}

// PreviousMinor is the minor before: "1.38" -> "1.37" (a binary's default
// compatibility version, and the one --emulated-version may go back to).
func PreviousMinor(minor string) string {
	n, ok := minorNumber(minor)
	if !ok || n == 0 {
		return minor
	}
	return fmt.Sprintf("1.%d", n-1)
}

// MinorsBehind is how many minors older is than newer: 2 for ("1.35", "1.37"),
// negative when older is in fact newer. ok is false if either is no minor.
func MinorsBehind(older, newer string) (int, bool) {
	o, ok1 := minorNumber(MinorOf(older))
	n, ok2 := minorNumber(MinorOf(newer))
	return n - o, ok1 && ok2
}

// MinorLess is whether minor a comes before minor b.
func MinorLess(a, b string) bool { d, ok := MinorsBehind(a, b); return ok && d > 0 }
